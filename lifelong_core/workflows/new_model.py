"""What a new model's results say: its accuracy per task and overall with intervals, its
rank among the stored models, and the row that may be stored for it.

The one estimate of a new model, for the command line (``estimate``), the Python API
(``estimate_new_model``) and every tab of the "Evaluate something new" page:

1. the results come as sample id -> 0/1, typed in, uploaded as a CSV, or read from an
   evaluation harness's output (:func:`results_from_run`: an lm-evaluation-harness
   ``--log_samples`` run, :func:`lifelong_core.io.lm_eval.read_run`, or an Inspect AI log,
   :func:`lifelong_core.io.inspect_log.read_inspect_log`; item ``<task>/<id>`` of the run
   is the sample of that id, :mod:`lifelong_core.io.harness_items`);
2. :func:`estimate_new_model` gives a :class:`NewModelEstimate`;
3. :func:`insert_estimated` stores the row, marked *estimated* (left out of every score,
   :mod:`~lifelong_core.workflows.selection`).

Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
§3.2 (insert_M), for the Sort & Search methods; the model-based estimators' difference
estimator: Särndal, Swensson & Wretman, *Model Assisted Survey Sampling*, 1992, §6.3.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.harness_items import item_ids
from lifelong_core.methods.base import Estimate
from lifelong_core.methods.registry import DEFAULT_METHOD, plays_rounds, predicts_samples
from lifelong_core.workflows.item_choice import dataset_of, fit, observed_columns
from lifelong_core.workflows.selection import Selection

if TYPE_CHECKING:
    from lifelong_core.store import Store

# A fitted method for the whole dataset (domain None) or one domain, given the method
# fitted on the whole dataset to start from (item_choice.fit).
Fitter = Callable[[str | None, Any], Any]


# ------------------------------------------------------------------ results from a harness
@dataclass(frozen=True)
class Observations:
    """A new model's results on some items of a dataset.

    Attributes
    ----------
    values : dict of str to int
        Sample id -> 0/1.
    source : str
        What they were read from (the store's log names it on insertion).
    metrics : dict
        Harness task -> (metric, filter) read, for an lm-eval run; the scorer for an
        Inspect log.
    """

    values: dict
    source: str
    metrics: dict = field(default_factory=dict)


def metric_and_filter(
    recorded: Mapping[str, tuple[str, str | None]],
    metric: str | None = None,
    filter: str | None = None,
) -> tuple[str | dict | None, str | dict | None]:
    """The metric and filter a new model's lm-eval run is read with: the ones asked for,
    else those each task was imported with (``Store.harness_metrics``), else each task's
    only one.

    Parameters
    ----------
    recorded : mapping of str to (str, str or None)
        Task -> (metric, filter) recorded at import.
    metric : str, optional
        A metric (or comma-separated preference list) asked for, for every task.
    filter : str, optional
        A filter asked for, for every task.

    Returns
    -------
    tuple
        ``(metric, filter)`` for :func:`lifelong_core.io.lm_eval.read_run`: text, a
        mapping per task, or None.
    """
    m = metric or {t: v for t, (v, _) in recorded.items()} or None
    f = filter or {t: v for t, (_, v) in recorded.items() if v is not None} or None
    return m, f


def results_from_run(
    table: pd.DataFrame,
    cache: Selection,
    task_names: Mapping[str, str] | None = None,
    harness: str = "lm-eval",
    shown: str = "the run",
) -> dict[str, int]:
    """A harness run's results as sample id -> 0/1 of the dataset.

    Parameters
    ----------
    table : pandas.DataFrame
        The run's items: ``sample`` (``<task>/<id>`` as the harness named them) and
        ``correct`` (0/1), as :func:`lifelong_core.io.lm_eval.read_run` or
        :func:`lifelong_core.io.inspect_log.read_inspect_log` read them.
    cache : Selection
        The dataset's cache.
    task_names : mapping of str to str, optional
        Task named in the dataset's sample ids -> the harness's task name
        (:func:`lifelong_core.io.harness_items.parse_task_names`).
    harness : {"lm-eval", "inspect"}
        Which harness wrote the run.
    shown : str
        How messages name the run.

    Returns
    -------
    dict of str to int
        Sample id -> 0/1 for every item of the run.

    Raises
    ------
    InputError
        If the dataset's ids are not that harness's items, or the run has a task or an
        item the dataset does not hold (the sentence names them).
    """
    ids = item_ids(cache.samples, task_names, harness)
    keys = zip(ids["task"], ids["item"].astype(str))
    sample_of = dict(zip(keys, ids["sample_id"]))
    tasks = set(ids["task"])
    out: dict[str, int] = {}
    for sid, v in zip(table["sample"].astype(str), table["correct"]):
        task, _, item = sid.partition("/")
        if harness == "lm-eval":
            item = str(int(item))
        if task not in tasks:
            raise InputError(
                f"{shown} has task {task!r}, which is no task of {dataset_of(cache)!r} "
                f"({', '.join(sorted(tasks)[:8])}); map a task of the dataset to it with a task name TASK={task}.",
                param="task_names",
            )
        key = (task, item)
        if key not in sample_of:
            raise InputError(
                f"{shown} has item {item} of task {task!r}, which {dataset_of(cache)!r} does not hold."
            )
        out[sample_of[key]] = int(v)
    return out


def inspect_observations(
    logs: Sequence[str | os.PathLike[str]],
    cache: Selection,
    task_names: Mapping[str, str] | None = None,
    scorer: str | None = None,
    epoch: int | None = None,
    shown: Sequence[str] | None = None,
) -> Observations:
    """A new model's Inspect AI logs (one per task) as its results on the dataset.

    Each log is read by :func:`lifelong_core.io.inspect_log.read_inspect_log` (scores
    ``C``/``I`` or 0/1 only) and mapped by :func:`results_from_run`.

    Parameters
    ----------
    logs : sequence of str or Path
        The log files (``.eval`` or ``.json``).
    cache : Selection
        The dataset's cache.
    task_names : mapping of str to str, optional
        Task of the sample ids -> Inspect task.
    scorer : str, optional
        The scorer to read, where a log has several.
    epoch : int, optional
        The epoch to read, where a log has several.
    shown : sequence of str, optional
        How messages and the source name each log (an upload's name), in ``logs``' order.

    Returns
    -------
    Observations
        Sample id -> 0/1 over every log, the source, and the scorer read per task.

    Raises
    ------
    InputError
        If no log is given, a log cannot be read, a score is not 0/1, an item is not in
        the dataset, or two logs hold the same item.
    """
    from lifelong_core.io.inspect_log import read_inspect_log

    if not logs:
        raise InputError("no Inspect log given.", param="inspect")
    names = [str(p) for p in logs] if shown is None else [str(x) for x in shown]
    values: dict[str, int] = {}
    scorers = {}
    for log, name in zip(logs, names):
        run = read_inspect_log(log, "new-model", scorer=scorer, epoch=epoch)
        part = results_from_run(run.table, cache, task_names, "inspect", f"Inspect log {name}")
        clash = sorted(set(part) & set(values))
        if clash:
            raise InputError(f"Inspect log {name} repeats item {clash[0]!r} of an earlier log.")
        values.update(part)
        scorers[run.task] = run.scorer
    return Observations(values, "inspect:" + ",".join(names), scorers)


# ------------------------------------------------------------------ the estimate
@dataclass(frozen=True)
class NewModelEstimate:
    """A new model's estimate: accuracy per task and overall with intervals, its rank among
    the stored models, and its predicted result on every item.

    ``print(est)`` shows a short summary; :meth:`summary` the whole table.

    Attributes
    ----------
    dataset : str
        The dataset of the cache.
    method : str
        The registered method that estimated.
    level : float
        The intervals' coverage (0.95 for a 95% interval).
    table : pandas.DataFrame
        One row per task (domain) when asked for, then ``overall``: scope, items,
        evaluated, observed (accuracy on the evaluated items), estimate, lo, hi (NaN when
        the method gives no interval, or for a task without results); fractions.
    estimate : Estimate
        The overall estimate as the method gave it (with its per-item prediction).
    cols : numpy.ndarray
        int64 evaluated columns of the cache, ascending.
    observed : numpy.ndarray
        uint8 results on ``cols``.
    accuracies : pandas.DataFrame
        ``name`` and ``accuracy`` of each stored model the new one is ranked among.
    rank : int
        The overall estimate's rank among them plus the new one (1 = best).
    rank_lo, rank_hi : int or None
        The best and worst ranks the overall interval allows; None without an interval.
    per_sample : pandas.DataFrame
        sample_id, domain, category, predicted_correct (and p_correct where the method
        gives one), evaluated.
    by_domain : pandas.DataFrame
        Predicted accuracy per (category, domain), from the per-item predictions.
    predicts_samples : bool
        Whether the method predicts the items it was not run on (else there is no row to
        store).
    """

    dataset: str
    method: str
    level: float
    table: pd.DataFrame
    estimate: Estimate
    cols: np.ndarray
    observed: np.ndarray
    accuracies: pd.DataFrame
    rank: int
    rank_lo: int | None
    rank_hi: int | None
    per_sample: pd.DataFrame
    by_domain: pd.DataFrame
    predicts_samples: bool = True

    @property
    def overall(self) -> pd.Series:
        """The ``overall`` row of :attr:`table` (items, evaluated, observed, estimate, lo,
        hi over every item of the dataset)."""
        return self.table.iloc[-1]

    @property
    def m(self) -> int:
        """How many stored models the new one is ranked among."""
        return len(self.accuracies)

    def interval_text(self) -> str:
        """The overall interval as text, e.g. ``95% interval 0.312 - 0.371``, or why there
        is none.

        Returns
        -------
        str
        """
        o = self.overall
        if np.isnan(o["lo"]):
            return f"method {self.method} gives no interval"
        return f"{self.level:.0%} interval {o['lo']:.3f} - {o['hi']:.3f}"

    def __str__(self) -> str:
        o = self.overall
        rank = f"rank {self.rank} of {self.m + 1}"
        if self.rank_lo is not None:
            rank += f" ({self.level:.0%}: {self.rank_lo} - {self.rank_hi})"
        return (
            f"accuracy {o['estimate']:.3f} ({self.interval_text()}) from {int(o['evaluated'])} of "
            f"{int(o['items'])} items of {self.dataset}; {rank}; method {self.method}"
        )

    def summary(self, name: str = "new model") -> str:
        """The per-task table, the overall estimate with its interval, and the rank, as
        ``lbe estimate`` prints them.

        Parameters
        ----------
        name : str
            What the text calls the new model.

        Returns
        -------
        str
            A heading line, a fixed-width table (task, items, evaluated, observed,
            estimate, interval; ``-`` where there is none) and a line with the rank.
        """
        t = self.table
        w = max(24, *(len(str(x)) for x in t["scope"]))
        pct = f"{self.level:.0%} interval"
        lines = [
            (
                f"model {name} on {self.dataset}: {int(t['evaluated'].iloc[-1])} of {int(t['items'].iloc[-1])} "
                f"items evaluated; method {self.method}"
            ),
            f"{'task':<{w}} {'items':>6} {'evaluated':>9} {'observed':>8} {'estimate':>8}  {pct}",
        ]
        r: Any  # a row of itertuples: its fields are typed as any pandas scalar
        for r in t.itertuples():
            iv = "-" if np.isnan(r.lo) else f"{r.lo:.3f} - {r.hi:.3f}"
            obs = "-" if np.isnan(r.observed) else f"{r.observed:.3f}"
            val = "-" if np.isnan(r.estimate) else f"{r.estimate:.3f}"
            lines.append(f"{r.scope:<{w}} {r.items:>6} {r.evaluated:>9} {obs:>8} {val:>8}  {iv}")
        rank = f"rank {self.rank} of {self.m + 1} (among the {self.m} stored models evaluated on every item)"
        if self.rank_lo is not None:
            rank += f"; {self.level:.0%} rank interval {self.rank_lo} - {self.rank_hi}"
        else:
            rank += f"; method {self.method} gives no interval"
        lines.append(rank)
        return "\n".join(lines)


def _row(scope: str, items: int, obs: np.ndarray, est: Estimate | None) -> dict:
    nan = float("nan")
    return {
        "scope": scope,
        "items": items,
        "evaluated": len(obs),
        "observed": float(obs.mean()) if len(obs) else nan,
        "estimate": float(est.acc) if est is not None else nan,
        "lo": float(est.lo) if est is not None and est.lo is not None else nan,
        "hi": float(est.hi) if est is not None and est.hi is not None else nan,
    }


def _per_sample(
    cache: Selection, cols: np.ndarray, observed: np.ndarray, est: Estimate, predicts: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    pred = cache.samples[["sample_id", "domain", "category"]].copy()
    pred["evaluated"] = False
    pred.loc[cols, "evaluated"] = True
    if predicts:
        pred["predicted_correct"] = np.asarray(est.per_sample, dtype=np.uint8)
        if est.prob is not None:
            pred["p_correct"] = np.asarray(est.prob, dtype=float)
    else:
        # No prediction for the items not run (the random baseline): a domain's figure is
        # the share right among its evaluated items, NaN where none was run.
        col = pd.Series(np.nan, index=pred.index)
        col.loc[cols] = np.asarray(observed, dtype=float)
        pred["predicted_correct"] = col
    pred = pred[
        ["sample_id", "domain", "category", "predicted_correct"]
        + (["p_correct"] if "p_correct" in pred else [])
        + ["evaluated"]
    ]
    # Datasets imported without categories (an lm-eval task outside any group) have none:
    # a group key of NaN would drop every row and leave the table empty.
    by_domain = pred.groupby(["category", "domain"], as_index=False, sort=False, dropna=False).agg(
        samples=("sample_id", "size"),
        predicted_accuracy=("predicted_correct", "mean"),
        evaluated=("evaluated", "sum"),
    )
    return pred, by_domain


def estimate_new_model(
    cache: Selection,
    results: Mapping[str, int] | Sequence[Mapping[str, int]],
    method: str = DEFAULT_METHOD,
    *,
    fitted: Any = None,
    fitter: Fitter | None = None,
    per_task: bool = True,
    accuracies: np.ndarray | None = None,
) -> NewModelEstimate:
    """A new model's accuracy per task (domain) and overall with intervals, and its rank.

    Overall: ``method`` fitted on every item of the dataset estimates from every result.
    Per task: the method for that task's items estimates from the results on them (a task
    without results gets NaN): the whole fit's item model restricted to the task where the
    method has one, else a fit on the task's items reusing a self-tuning method's choice
    (:func:`~lifelong_core.workflows.item_choice.fit`). The
    rank compares the overall estimate with the stored models' accuracies over the same
    items; its interval comes from the estimate's interval alone (the stored accuracies
    are exact, not estimated). For Sort & Search this is insert_M of Prabhu et al.
    (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.2.

    Results that came in rounds (one mapping per round, in order) are estimated by the
    method's rounds estimator where it has one (:mod:`lifelong_core.methods.active`; its
    tasks by domain estimation from the same rounds); any other method reads them as one.

    Parameters
    ----------
    cache : Selection
        The dataset's cache (:func:`lifelong_core.workflows.item_choice.cache_of`).
    results : mapping of str to int, or sequence of them
        Sample id -> 0/1 result of the new model; or one such mapping per round.
    method : str
        A registered method; default the product's ``DEFAULT_METHOD``.
    fitted : object, optional
        ``method`` already fitted on the whole cache (the store's kept state, a cached
        fit): not fitted again.
    fitter : callable, optional
        ``fitter(domain or None, whole)`` returns the fitted method, ``whole`` being the
        method fitted on every item (None for the whole dataset itself); default
        :func:`~lifelong_core.workflows.item_choice.fit` on ``cache``; ``fitted`` answers
        for the whole dataset.
    per_task : bool
        Add a row per task (each a fit on that task's items); False gives the overall row
        alone.
    accuracies : numpy.ndarray, optional
        (models,) each stored model's accuracy, in the cache's row order; default the row
        means of the cache (the app passes the store's kept row sums, so a large store is
        not read dense).

    Returns
    -------
    NewModelEstimate

    Raises
    ------
    InputError
        If there are no results, a result names a sample the dataset does not have, or a
        value is not 0 or 1.
    """
    base = fitter or (lambda d, whole: fit(cache, method, d, whole))

    def fitted_for(domain: str | None, whole: Any) -> Any:
        if domain is None and fitted is not None:
            return fitted
        return base(domain, whole)

    parts = [results] if isinstance(results, Mapping) else list(results)
    rounds = [observed_columns(cache, r) for r in parts]
    merged: dict[str, int] = {}
    for r in parts:
        clash = set(merged) & {str(k) for k in r}
        if clash:
            raise InputError(
                f"sample {sorted(clash)[0]!r} has results in two rounds.", param="results"
            )
        merged.update({str(k): v for k, v in r.items()})
    cols, obs = observed_columns(cache, merged)
    if len(cols) == 0:
        raise InputError("no results to estimate from.", param="results")
    overall = fitted_for(None, None)
    in_rounds = len(rounds) > 1 and plays_rounds(method)
    est = overall.estimate_rounds(rounds) if in_rounds else overall.estimate(cols, obs)
    rows = []
    if per_task and in_rounds:
        domains = cache.samples["domain"].astype(str).to_numpy()
        for d in pd.unique(domains):
            inside = domains == d
            mask = inside[cols]
            sub = overall.estimate_rounds(rounds, inside) if mask.any() else None
            rows.append(_row(d, int(inside.sum()), obs[mask], sub))
    elif per_task:
        domains = cache.samples["domain"].astype(str).to_numpy()
        for d in pd.unique(domains):
            in_d = np.flatnonzero(domains == d)
            mask = np.isin(cols, in_d)
            sub = None
            if mask.any():
                sub = fitted_for(d, overall).estimate(np.searchsorted(in_d, cols[mask]), obs[mask])
            rows.append(_row(d, len(in_d), obs[mask], sub))
    rows.append(_row("overall", cache.A.shape[1], obs, est))
    accs = pd.DataFrame(
        {
            "name": cache.names,
            "accuracy": cache.dense().mean(axis=1) if accuracies is None else accuracies,
        }
    )
    acc = accs["accuracy"].to_numpy()
    rank = int((acc > est.acc).sum()) + 1
    lo = hi = None
    if est.lo is not None and est.hi is not None:
        lo, hi = int((acc > est.hi).sum()) + 1, int((acc > est.lo).sum()) + 1
    predicts = predicts_samples(method)
    pred, by_domain = _per_sample(cache, cols, obs, est, predicts)
    return NewModelEstimate(
        dataset_of(cache),
        method,
        float(getattr(overall, "level", 0.95)),
        pd.DataFrame(rows),
        est,
        cols,
        obs,
        accs,
        rank,
        lo,
        hi,
        pred,
        by_domain,
        predicts,
    )


# ------------------------------------------------------------------ what may be stored
def estimated_model_rows(
    est: NewModelEstimate, name: str, provenance: dict
) -> tuple[np.ndarray, pd.DataFrame]:
    """The row to insert for a new model (observed results where evaluated, predictions
    elsewhere) and its model table, marked *estimated* with ``provenance`` as metadata.

    Parameters
    ----------
    est : NewModelEstimate
        The new model's estimate (:func:`estimate_new_model`).
    name : str
        The new model's id and name in the store.
    provenance : dict
        JSON-able metadata stored with the model (e.g. the method, budget, seed and
        source).

    Returns
    -------
    row : numpy.ndarray
        (1, n) uint8: the observed results where evaluated, predictions elsewhere.
    models : pandas.DataFrame
        One row: ``model_id``, ``name``, ``family`` (``estimated``), ``estimated``
        (True) and ``metadata`` (``provenance`` as JSON).

    Raises
    ------
    InputError
        For a method that predicts no unevaluated item (the ``random`` baseline): it has
        no row to insert.
    """
    if not est.predicts_samples:
        raise InputError(
            "this method predicts no item it was not run on, so there is no estimated row to "
            "insert; choose a method that predicts every item."
        )
    row = np.asarray(est.estimate.per_sample, dtype=np.uint8).copy()
    row[est.cols] = est.observed
    models = pd.DataFrame(
        {
            "model_id": [name],
            "name": [name],
            "family": ["estimated"],
            "estimated": [True],
            "metadata": [json.dumps(provenance)],
        }
    )
    return row[None, :], models


def insert_estimated(
    writer: Store,
    cache: Selection,
    name: str,
    est: NewModelEstimate,
    source: str,
    extra_meta: Mapping[str, object] | None = None,
) -> dict:
    """Store the new model's row (:func:`estimated_model_rows`) in one transaction; its
    metadata records the method, the estimate with its interval and level, which items are
    real evaluations, and ``extra_meta``.

    Parameters
    ----------
    writer : Store
        A store opened for writing.
    cache : Selection
        The cache the estimate was made on.
    name : str
        The new model's id and name.
    est : NewModelEstimate
        Its estimate (:func:`estimate_new_model`).
    source : str
        What the store's import log names as the origin.
    extra_meta : dict, optional
        More metadata to record beside the method's, e.g. the item draw.

    Returns
    -------
    dict
        The store's import summary (entries, new_models, new_samples, log_id).

    Raises
    ------
    InputError
        If ``name`` is empty, the method predicts no item it was not run on, or the store
        refuses the row (entries that conflict with what it holds; the store is then
        unchanged).
    """
    if not isinstance(name, str) or not name.strip():
        raise InputError("the new model needs a name.", param="model")
    o = est.overall
    meta = {
        "method": est.method,
        "source": source,
        "estimate": {
            "accuracy": round(float(o["estimate"]), 6),
            "lo": None if np.isnan(o["lo"]) else round(float(o["lo"]), 6),
            "hi": None if np.isnan(o["hi"]) else round(float(o["hi"]), 6),
            "level": est.level,
        },
        "evaluated": len(est.cols),
        "evaluated_samples": cache.samples["sample_id"].astype(str).to_numpy()[est.cols].tolist(),
        **(extra_meta or {}),
    }
    row, models = estimated_model_rows(est, name, meta)
    return writer.insert_matrix(row, models, cache.samples["sample_id"].tolist(), source=source)
