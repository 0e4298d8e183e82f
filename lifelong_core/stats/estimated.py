"""Counts estimated by Sort & Search, so a ranking of new models can carry its uncertainty.

Prabhu et al.'s (2024) ``insert_M`` evaluates a new model on ``budget`` samples chosen from the
cache's easy-to-hard order and predicts 0/1 correctness for every sample. Summing the
predicted vector within each task gives estimated counts of the ``counts.csv`` shape,
which every method of the LA-UR-24-25289 report (2024) accepts. Next to them the true counts (the full rows of
the cache) are kept, so the page can show how far the estimated ranking is from the
real one.

What the intervals then mean: a bootstrap over estimated counts measures test-set
sampling only, as if the predicted vector had been observed. It does not include the
estimation error of Sort & Search, which at small budgets is usually larger; the page
says so and shows both rankings. (The LA-UR-24-25289 report (2024) has no notion of estimated counts; this
pairing is ours.)

Estimators that give their own 95% interval for a model's accuracy (``mirt``, ``irt``,
``neighbours``) cover the estimation error instead. Their interval is for the
accuracy pooled over all samples, so it is kept beside the counts (``acc``, ``lo``,
``hi``, with ``true_acc`` the pooled truth) rather than mixed into the task-mean
leaderboard.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.draws import PER_MODEL, check_draws, model_rng
from lifelong_core.methods.registry import get_method, predicts_samples
from lifelong_core.sortsearch.search import check_budget
from lifelong_core.sortsearch.sort import compute_order
from lifelong_core.stats.counts import CountTable


@dataclass(frozen=True, eq=False)
class EstimatedCounts:
    """Estimated and true counts of the same evaluated models on the same tasks."""

    estimated: CountTable
    true: CountTable
    budget: int
    method: str
    acc: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    true_acc: np.ndarray
    draws: str = PER_MODEL

    @property
    def has_intervals(self) -> bool:
        """Whether the method gave its own interval (NaN bounds otherwise)."""
        return bool(np.isfinite(self.lo).all() and np.isfinite(self.hi).all())


def _task_index(sample_task: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    tasks = tuple(dict.fromkeys(sample_task))
    lookup = {t: i for i, t in enumerate(tasks)}
    return tasks, np.array([lookup[t] for t in sample_task], dtype=np.int64)


def sortsearch_counts(
    A: np.ndarray,
    sample_task: Sequence[str],
    task_category: dict[str, str],
    model_names: Sequence[str],
    sort_rows: np.ndarray,
    eval_rows: np.ndarray,
    budget: int,
    *,
    method: str = "midpoint",
    seed: int = 0,
    draws: str = PER_MODEL,
) -> EstimatedCounts:
    """Estimate per-task counts of ``eval_rows`` from ``budget`` samples each (insert_M of
    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3).

    A method that predicts no unevaluated sample (the random baseline) counts each task at
    its share right among the task's evaluated samples (the overall share where none was
    evaluated).

    Parameters
    ----------
    A : numpy.ndarray
        The cache, (models, samples) 0/1.
    sample_task : sequence of str
        The task of each column.
    task_category : dict of str to str
        The category of each task.
    model_names : sequence of str
        The name of each row.
    sort_rows : numpy.ndarray
        Rows already in the cache (they fix the sample order).
    eval_rows : numpy.ndarray
        The "new" models estimated.
    budget : int
        Samples evaluated per new model.
    method : str
        Any name :func:`lifelong_core.methods.get_method` knows.
    seed : int
        Seed of the draws.
    draws : {"per-model", "common"}
        Each new model's own draw from its name and ``seed`` (independent errors), or the
        seed's common set (:mod:`lifelong_core.methods.draws`).

    Returns
    -------
    EstimatedCounts
        The estimated counts beside the true ones, and the method's own intervals when it
        gives them.

    Raises
    ------
    InputError
        For mismatched task labels, empty or overlapping row sets, a task without a
        category, an invalid budget, method or draw rule.
    TypeError
        If the registered method does not follow the method protocol.
    """
    A = np.asarray(A)
    sort_rows = np.asarray(sort_rows, dtype=np.int64)
    eval_rows = np.asarray(eval_rows, dtype=np.int64)
    if len(sample_task) != A.shape[1]:
        raise InputError(
            f"the cache has {A.shape[1]} samples but {len(sample_task)} task labels were given."
        )
    if len(sort_rows) == 0 or len(eval_rows) == 0:
        raise InputError("Sort & Search needs at least one cached model and one model to estimate.")
    if np.intersect1d(sort_rows, eval_rows).size:
        raise InputError(
            "a model cannot be both in the cache used for sorting and among the estimated models."
        )
    n = A.shape[1]
    check_budget(n, budget)
    tasks, col_task = _task_index(list(sample_task))
    missing = [t for t in tasks if t not in task_category]
    if missing:
        raise InputError(f"task '{missing[0]}' has no category.")
    check_draws(draws)
    A_sort = A[sort_rows]
    # get_method checks that the registered class follows the search-method protocol.
    est = get_method(method, groups=list(sample_task)).fit(A_sort, compute_order(A_sort, "sum"))
    predicts = predicts_samples(method)
    onehot = np.zeros((n, len(tasks)), dtype=np.int64)
    onehot[np.arange(n), col_task] = 1
    size = onehot.sum(axis=0)
    counts = np.empty((len(eval_rows), len(tasks)), dtype=np.int64)
    acc, lo, hi = (np.full(len(eval_rows), np.nan) for _ in range(3))
    for k, row in enumerate(eval_rows):
        cols = est.select(n, budget, model_rng(model_names[row], seed, draws))
        e = est.estimate(cols, A[row, cols])
        if predicts:
            counts[k] = np.asarray(e.per_sample, dtype=np.int64) @ onehot
        else:
            seen = np.bincount(col_task[cols], minlength=len(tasks))
            right = np.bincount(col_task[cols], weights=A[row, cols], minlength=len(tasks))
            share = np.where(seen > 0, right / np.maximum(seen, 1), e.acc)
            counts[k] = np.rint(share * size).astype(np.int64)
        acc[k] = e.acc
        if e.lo is not None and e.hi is not None:
            lo[k], hi[k] = e.lo, e.hi
    sizes = np.broadcast_to(size, (len(eval_rows), len(tasks))).copy()
    names = tuple(model_names[r] for r in eval_rows)
    cats = tuple(task_category[t] for t in tasks)

    def table(correct: np.ndarray) -> CountTable:
        return CountTable(
            models=names, tasks=tasks, task_category=cats, correct=correct, total=sizes
        )

    return EstimatedCounts(
        estimated=table(counts),
        true=table(A[eval_rows].astype(np.int64) @ onehot),
        budget=int(budget),
        method=method,
        acc=acc,
        lo=lo,
        hi=hi,
        true_acc=A[eval_rows].mean(axis=1),
        draws=draws,
    )
