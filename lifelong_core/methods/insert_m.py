"""insert_M (Prabhu et al., 2024, §3.2): the Sort & Search estimate of a new model.

The threshold rules ``midpoint`` and ``reference`` (:func:`lifelong_core.sortsearch.rule_thresholds`)
as a search method (:mod:`lifelong_core.methods.base`). The sweep serves the same rules on
its prefix-count fast path; this class gives the same numbers one model at a time.
"""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, check_fitted
from lifelong_core.sortsearch.search import (
    DEFAULT_RULE,
    RULES,
    positions_for,
    resolve_sampling,
    rule_thresholds,
)
from lifelong_core.sortsearch.sort import compute_order


def columns_to_sorted(
    rank: np.ndarray, columns: np.ndarray, observed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Evaluated columns and their observations -> sorted positions (ascending) and the
    observations in that order; InputError on mismatched, repeated or out-of-range input."""
    columns = np.asarray(columns, dtype=np.int64)
    observed = np.asarray(observed).astype(np.uint8).ravel()
    if columns.ndim != 1 or len(columns) != len(observed) or len(columns) == 0:
        raise InputError(
            f"need as many observations as evaluated samples ({len(observed)} vs {columns.size})."
        )
    if columns.min() < 0 or columns.max() >= len(rank):
        raise InputError(f"evaluated sample indices must lie in [0, {len(rank) - 1}].")
    if (observed > 1).any():
        raise InputError("observations must be 0 or 1.")
    pos = rank[columns]
    by = np.argsort(pos, kind="stable")
    pos = pos[by]
    if len(np.unique(pos)) != len(pos):
        raise InputError("evaluated sample indices must be distinct.")
    return pos, observed[by]


class InsertM:
    """insert_M (Prabhu et al., 2024, §3.2): evaluate a new model on ``n'`` samples, predict the rest.

    Configure in ``__init__``; ``fit(A_sort)`` learns the easy -> hard order from the
    cache (or takes ``order``); ``select(n, budget, rng)`` returns the column numbers to
    evaluate; ``estimate(columns, observed)`` returns an :class:`Estimate` whose
    ``per_sample`` is the threshold prediction ``[1_t, 0_{n-t}]`` mapped back to column
    order and ``acc = t / n``; ``predict`` returns just the vector.
    """

    def __init__(
        self,
        rule: str = DEFAULT_RULE,
        sampling: str | None = None,
        sort: str = "sum",
        ties: str | None = None,
        depth: int = 2,
    ) -> None:
        if rule not in RULES:
            raise InputError(f"unknown threshold rule {rule!r}; use one of {', '.join(RULES)}.")
        self.rule = rule
        self.name = rule
        self.sampling = resolve_sampling(sampling, rule)
        self.sort = sort
        self.ties = ties
        self.depth = depth

    def fit(
        self,
        A_sort: np.ndarray | None,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> InsertM:
        ties = self.ties or ("reference" if self.rule == "reference" else "stable")
        if order is not None:
            self.order_ = np.asarray(order, dtype=np.int64)
        elif A_sort is None:
            raise InputError("insert_M needs the cache's rows or a sample order to fit.")
        else:
            self.order_ = compute_order(A_sort, self.sort, confidence, ties, self.depth)
        self.n_ = len(self.order_)
        self.rank_ = np.empty(self.n_, dtype=np.int64)
        self.rank_[self.order_] = np.arange(self.n_)
        return self

    def select_positions(self, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """Sorted positions (not column numbers) to evaluate."""
        check_fitted(self, "order_")
        return positions_for(self.sampling, self.n_, budget, rng)

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        check_fitted(self, "order_")
        if n != self.n_:
            raise InputError(f"the method was fitted on {self.n_} samples, not {n}.")
        return np.sort(self.order_[self.select_positions(budget, rng)])

    def threshold(self, columns: np.ndarray, observed: np.ndarray) -> int:
        check_fitted(self, "order_")
        pos, obs = columns_to_sorted(self.rank_, columns, observed)
        return int(rule_thresholds(self.rule, pos, obs, self.n_)[0])

    def predict(self, columns: np.ndarray, observed: np.ndarray) -> np.ndarray:
        t = self.threshold(columns, observed)
        y = np.zeros(self.n_, dtype=np.uint8)
        y[self.order_[:t]] = 1
        return y

    def estimate(self, columns: np.ndarray, observed: np.ndarray) -> Estimate:
        y = self.predict(columns, observed)
        return Estimate(float(y.sum()) / self.n_, None, None, y)
