"""Serial additions of new models (Prabhu et al., 2024, Appendix G).

Each new model is estimated by Sort & Search and its *predicted* row (ones on the first
``t`` samples of the current order) is added to the Sort sums before the next model
arrives. Appendix G argues the order never changes: adding ``[1_t, 0_{n-t}]`` in sorted
order keeps the sums non-increasing along the order, so re-sorting with ties broken by
the old order returns the same permutation, and no error accumulates. This module
performs the re-sort after every addition so the claim is checked, not assumed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch.search import (
    DEFAULT_RULE,
    positions_for,
    resolve_sampling,
    rule_thresholds,
)
from lifelong_core.sortsearch.sort import column_sums, order_from_sums


def resort_keeping_ties(sums: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Easy -> hard order of ``sums`` with ties kept in the ``previous`` order."""
    return previous[order_from_sums(sums[previous], "stable")]


def serial_additions(
    A_sort: np.ndarray,
    A_new: np.ndarray,
    budget: int,
    *,
    sampling: str | None = None,
    rule: str = DEFAULT_RULE,
    seed: int = 0,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Add the rows of ``A_new`` one by one, in row order (Prabhu et al. (2024), *Efficient Lifelong
    Model Evaluation in an Era of Rapid Progress*, Appendix G).

    One set of sampled positions (drawn once from ``default_rng(seed)`` when random) is used
    for every step; after each addition the order is recomputed, so the appendix's claim that
    it never changes is checked, not assumed.

    Parameters
    ----------
    A_sort : numpy.ndarray
        (models, samples) 0/1 cache the first order is sorted on.
    A_new : numpy.ndarray
        (new models, samples) 0/1 rows, added in order.
    budget : int
        The budget n'.
    sampling : str, optional
        The sampling (see :func:`~lifelong_core.sortsearch.search.resolve_sampling`).
    rule : str
        The threshold rule.
    seed : int
        Seed of random sampling.

    Returns
    -------
    tuple
        A table with one row per step (``step``, ``model_row``, ``threshold``, ``est_acc``,
        ``true_acc``, ``mae``, ``order_unchanged``: whether the re-sort after adding the
        prediction returned the order used for it) and the final order.

    Raises
    ------
    InputError
        For mis-shaped matrices or an invalid budget, sampling, rule or seed.
    """
    A_sort = np.asarray(A_sort)
    A_new = np.atleast_2d(np.asarray(A_new))
    if A_new.shape[1] != A_sort.shape[1]:
        raise InputError(f"new models have {A_new.shape[1]} samples, the cache {A_sort.shape[1]}.")
    n = A_sort.shape[1]
    sums = column_sums(A_sort)
    order = order_from_sums(sums, "stable")
    pos = positions_for(resolve_sampling(sampling, rule), n, budget, np.random.default_rng(seed))
    rows = []
    for step, a in enumerate(A_new):
        observed = a[order[pos]].astype(np.uint8)
        t = int(rule_thresholds(rule, pos, observed[None, :], n)[0])
        y = np.zeros(n, dtype=np.int64)
        y[order[:t]] = 1
        sums = sums + y
        new_order = resort_keeping_ties(sums, order)
        rows.append(
            {
                "step": step,
                "model_row": step,
                "threshold": t,
                "est_acc": t / n,
                "true_acc": float(a.mean()),
                "mae": float(np.abs(a.astype(np.int64) - y).mean()),
                "order_unchanged": bool(np.array_equal(new_order, order)),
            }
        )
        order = new_order
    return pd.DataFrame(rows), order
