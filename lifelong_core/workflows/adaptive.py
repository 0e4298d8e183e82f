"""The adaptive new-model flow: evaluate in rounds until the interval is narrow.

Two ways in, one rule each: a *simulation* on a stored model (fitted on the other models,
results read from its stored row) and a *round trip* for a real model (download a round's
list, run it, upload every result so far; :func:`~lifelong_core.methods.adaptive.advance`
replays the rounds from the seed, so nothing is kept between visits or commands).
Design, estimator and stopping rule: :mod:`lifelong_core.methods.adaptive`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.methods.adaptive import AdaptiveRun, Progress, RoundRecord, advance
from lifelong_core.methods.adaptive_method import AdaptiveMethod
from lifelong_core.methods.tuning import TuneResult
from lifelong_core.workflows.selection import Selection

ROUND_COLUMNS = ("round", "evaluated", "acc", "lo", "hi", "half")


def fit_adaptive(
    sel: Selection, leave_out: int | None = None, tuning: TuneResult | None = None
) -> AdaptiveMethod:
    """The adaptive method fitted on the models of a selection.

    Parameters
    ----------
    sel : Selection
        The data choice; its rows are the cache.
    leave_out : int, optional
        A row of ``sel`` left out of the cache: the model a simulation evaluates (it
        must not be in its own cache). None fits on every row.
    tuning : TuneResult, optional
        Settings chosen before (e.g. on the whole selection), which skip the
        cross-validation; None cross-validates on this cache.

    Returns
    -------
    AdaptiveMethod
        Fitted, with the default level, floor and clip.

    Raises
    ------
    InputError
        If the cache left is not a 0/1 matrix of at least 2 models and 2 samples.
    lifelong_core.limits.DenseReadError
        If ``sel.A`` is a packed cache beyond the dense-read limit.
    """
    A = sel.dense() if leave_out is None else np.delete(sel.dense(), leave_out, axis=0)
    return AdaptiveMethod(tuning=tuning).fit(A)


def rounds_table(rounds: list[RoundRecord]) -> pd.DataFrame:
    """The rounds of an adaptive evaluation as a table, one row per round.

    Parameters
    ----------
    rounds : list of RoundRecord
        As :class:`~lifelong_core.methods.adaptive.AdaptiveRun` or
        :class:`~lifelong_core.methods.adaptive.Progress` hold them.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ROUND_COLUMNS`: ``round`` (from 0), ``evaluated`` (samples so far),
        ``acc``, ``lo``, ``hi`` (fractions; ``lo``/``hi`` None while there is no
        interval) and ``half`` (the unclipped half-width).
    """
    return pd.DataFrame(
        [[getattr(r, c) for c in ROUND_COLUMNS] for r in rounds], columns=list(ROUND_COLUMNS)
    )


def results_by_column(sel: Selection, results: pd.DataFrame, source: str) -> dict[int, int]:
    """Uploaded results as the selection's column index -> 0/1.

    Parameters
    ----------
    sel : Selection
        The data choice whose samples the results are on.
    results : pandas.DataFrame
        ``sample_id, correct`` rows (``correct`` 0/1); a later row for the same sample
        replaces an earlier one.
    source : str
        What the results came from, as the error message names it (e.g. a file name).

    Returns
    -------
    dict of int to int
        Column index of ``sel`` -> 0/1.

    Raises
    ------
    InputError
        If a ``sample_id`` is not a sample of ``sel`` (the first such is named).
    """
    index = {sid: j for j, sid in enumerate(sel.samples["sample_id"].astype(str))}
    unknown = [x for x in results["sample_id"] if x not in index]
    if unknown:
        raise InputError(f"{source} names sample {unknown[0]!r}, which this dataset does not hold.")
    return {index[x]: int(v) for x, v in zip(results["sample_id"], results["correct"])}


def simulate_stored(
    method: AdaptiveMethod,
    sel: Selection,
    row: int,
    seed: int,
    until_halfwidth: float | None,
    max_budget: int | None,
) -> AdaptiveRun:
    """Rounds on a stored model: its stored results stand in for real evaluations.

    Parameters
    ----------
    method : AdaptiveMethod
        Fitted without the model (:func:`fit_adaptive` with ``leave_out=row``).
    sel : Selection
        The data choice holding the model.
    row : int
        The model's row in ``sel``.
    seed : int
        The design's seed: round ``r`` draws with ``numpy.random.default_rng([seed, r])``.
    until_halfwidth : float or None
        Stop once the interval's half-width is at most this (a fraction in ``(0, 1)``,
        0.01 = 1 point); None runs to the budget.
    max_budget : int or None
        At most this many samples, in ``[1, n]``; None is every sample.

    Returns
    -------
    AdaptiveRun
        The rounds, the evaluated columns with their results, the final estimate and
        why the run stopped.

    Raises
    ------
    InputError
        If ``method`` is not fitted on ``sel``'s samples, or ``until_halfwidth`` or
        ``max_budget`` is out of range.
    """
    return method.simulate(sel.A[row], seed, until_halfwidth=until_halfwidth, max_budget=max_budget)


def next_round(
    method: AdaptiveMethod,
    results: dict[int, int],
    seed: int,
    until_halfwidth: float | None,
    max_budget: int | None,
) -> Progress:
    """Where a real model's round trip stands: its rounds so far and the next list (or the stop).

    Parameters
    ----------
    method : AdaptiveMethod
        Fitted on the cache (every model of the selection).
    results : dict of int to int
        Every result so far, column index -> 0/1 (:func:`results_by_column`); empty
        before the first round.
    seed : int
        The design's seed, the same on every visit: round ``r`` draws with
        ``numpy.random.default_rng([seed, r])``.
    until_halfwidth : float or None
        Stop once the interval's half-width is at most this (a fraction in ``(0, 1)``,
        0.01 = 1 point); None runs to the budget.
    max_budget : int or None
        At most this many samples, in ``[1, n]``; None is every sample.

    Returns
    -------
    Progress
        The complete rounds replayed from ``results``, and the next round's columns or
        why to stop.

    Raises
    ------
    InputError
        If ``method`` is not fitted, a setting is out of range, a round has results for
        only some of its samples, or a result is not 0 or 1.
    """
    return advance(
        method.sampler(), results, seed, until_halfwidth=until_halfwidth, max_budget=max_budget
    )


# ------------------------------------------------------------------ lm-evaluation-harness rounds
def lm_eval_results(
    cache: Selection,
    paths: Sequence[str | os.PathLike[str]],
    task_names: Mapping[str, str] | None = None,
    metric: str | Mapping[str, str | None] | None = None,
    filter: str | Mapping[str, str | None] | None = None,
) -> dict[int, int]:
    """Every round's ``lm_eval --log_samples`` run read back and merged as column -> 0/1.

    Each run is read as ``lbe estimate --lm-eval`` reads one
    (:func:`lifelong_core.io.lm_eval.read_run`, the store's importer's metric and filter
    rules; :func:`lifelong_core.workflows.new_model.results_from_run`).

    Parameters
    ----------
    cache : Selection
        The data choice the rounds were drawn from (sample ids ``<task>/<doc_id>``).
    paths : iterable of str or os.PathLike, or None
        One run per round (a run folder, its ``results_*.json`` or a
        ``samples_*.jsonl``); None or empty gives no results.
    task_names : mapping of str to str, optional
        Task of the sample ids -> lm-eval task, where a task is not named like it.
    metric : str or mapping, optional
        The 0/1 metric to read, a comma-separated preference list, or one per task.
    filter : str or mapping, optional
        The filter to read, when a task was logged under several.

    Returns
    -------
    dict of int to int
        Column index of ``cache`` -> 0/1, over all runs.

    Raises
    ------
    InputError
        If a run cannot be read, names a task or item the dataset does not have, or two
        runs give one item different results.
    """
    from lifelong_core.io.lm_eval import read_run
    from lifelong_core.workflows.new_model import results_from_run

    merged: dict[str, int] = {}
    for path in paths or []:
        run = read_run(path, metric, filter)
        got = results_from_run(
            run.table, cache, task_names, "lm-eval", f"the lm-eval run at {path}"
        )
        for sid, v in got.items():
            if merged.get(sid, v) != v:
                raise InputError(
                    f"the lm-eval run at {path} gives item {sid!r} a different result than an earlier run."
                )
            merged[sid] = v
    df = pd.DataFrame({"sample_id": list(merged), "correct": list(merged.values())})
    return results_by_column(cache, df, "the lm-eval runs") if len(df) else {}


def write_round(
    cache: Selection,
    cols: np.ndarray,
    path: str | os.PathLike[str],
    fmt: str,
    task_names: Mapping[str, str] | None = None,
) -> None:
    """Write the next round's items for the harness to run.

    Parameters
    ----------
    cache : Selection
        The data choice the round was drawn from.
    cols : numpy.ndarray
        The round's column indices (:attr:`Progress.next_columns`), in any order.
    path : str or os.PathLike
        The file to write (replaced if it exists).
    fmt : {"lm-eval", "inspect", "csv"}
        As :func:`lifelong_core.io.harness_items.write_items`.
    task_names : mapping of str to str, optional
        Task of the sample ids -> harness task, where a task is not named like it.

    Raises
    ------
    InputError
        For an unknown format, or with ``lm-eval``/``inspect`` a sample id that is not
        ``<task>/<id>`` or a task name for a task the ids do not have.
    """
    from lifelong_core.io.harness_items import write_items

    cols = np.sort(np.asarray(cols, dtype=np.int64))
    items = cache.samples.iloc[cols][["sample_id", "domain"]].reset_index(drop=True)
    write_items(items, path, fmt, task_names)
