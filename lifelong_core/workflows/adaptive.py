"""The adaptive new-model flow: evaluate in rounds until the interval is narrow.

Two ways in, one rule each: a *simulation* on a stored model (fitted on the other models,
results read from its stored row) and a *round trip* for a real model (download a round's
list, run it, upload every result so far; :func:`~lifelong_core.methods.adaptive.advance`
replays the rounds from the seed, so nothing is kept between visits or commands).
Design, estimator and stopping rule: :mod:`lifelong_core.methods.adaptive`.
"""

from __future__ import annotations

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
    """The adaptive method fitted on every row of ``sel`` but ``leave_out`` (the simulated
    model must not be in its own cache); ``tuning`` reuses settings chosen before."""
    A = sel.dense() if leave_out is None else np.delete(sel.dense(), leave_out, axis=0)
    return AdaptiveMethod(tuning=tuning).fit(A)


def rounds_table(rounds: list[RoundRecord]) -> pd.DataFrame:
    return pd.DataFrame(
        [[getattr(r, c) for c in ROUND_COLUMNS] for r in rounds], columns=list(ROUND_COLUMNS)
    )


def results_by_column(sel: Selection, results: pd.DataFrame, source: str) -> dict[int, int]:
    """Uploaded ``sample_id, correct`` rows as column index -> 0/1; unknown ids are an error."""
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
    """Rounds on a stored model: its stored results stand in for real evaluations."""
    return method.simulate(sel.A[row], seed, until_halfwidth=until_halfwidth, max_budget=max_budget)


def next_round(
    method: AdaptiveMethod,
    results: dict[int, int],
    seed: int,
    until_halfwidth: float | None,
    max_budget: int | None,
) -> Progress:
    """Where a real model's round trip stands: its rounds so far and the next list (or the stop)."""
    return advance(
        method.sampler(), results, seed, until_halfwidth=until_halfwidth, max_budget=max_budget
    )


# ------------------------------------------------------------------ lm-evaluation-harness rounds
def lm_eval_results(
    cache: Selection, paths, task_names=None, metric: str | None = None, filter: str | None = None
) -> dict[int, int]:
    """Every round's ``lm_eval --log_samples`` run read back (:mod:`workflows.harness`) and
    merged as column -> 0/1; an item two runs disagree on is an error."""
    from lifelong_core.workflows import harness

    merged: dict[str, int] = {}
    for path in paths or []:
        obs = harness.observations_from_lm_eval(
            path, cache, task_names, metric=metric, filter=filter
        )
        for sid, v in obs.values.items():
            if merged.get(sid, v) != v:
                raise InputError(
                    f"the lm-eval run at {path} gives item {sid!r} a different result than an earlier run."
                )
            merged[sid] = v
    df = pd.DataFrame({"sample_id": list(merged), "correct": list(merged.values())})
    return results_by_column(cache, df, "the lm-eval runs") if len(df) else {}


def write_round(
    cache: Selection, cols: np.ndarray, path, fmt: str, seed: int, task_names=None
) -> None:
    """The next round's items in lm-eval's ``--samples`` JSON (or a CSV of sample ids)."""
    from lifelong_core.workflows import harness

    cols = np.sort(np.asarray(cols, dtype=np.int64))
    items = cache.samples.iloc[cols][["sample_id", "domain"]].reset_index(drop=True)
    choice = harness.ItemChoice(
        str(cache.samples["dataset"].iloc[0]),
        "adaptive",
        len(cols),
        seed,
        cols,
        items,
        cache.A.shape[1],
        cache.A.shape[0],
    )
    harness.write_choice(choice, path, fmt, task_names)
