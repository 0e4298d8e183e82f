"""Search methods by name, insert_M / insert_D estimators and the CopyNearest&Expand
baseline (seed 001 §3.2, §3.3, §4.2 Key Result 3).

Every method follows the ``SearchMethod`` protocol of docs/CONTRACTS.md: ``fit(A_sort,
order, confidence=None)``, ``select(n, budget, rng)`` (sorted column numbers, exactly
``budget``), ``estimate(positions, observed) -> Estimate``. The threshold rules
(``midpoint``, ``reference``) are also served by the sweep's prefix-count fast path; the
protocol objects here give the same numbers one model at a time. Names not built in are
looked up lazily in ``lifelong_core.estimators.ESTIMATORS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.sortsearch.search import (
    DEFAULT_RULE,
    RULES,
    check_budget,
    positions_for,
    resolve_sampling,
    rule_thresholds,
)
from lifelong_core.sortsearch.sort import order_from_sums, sort_by_confidence, sort_by_sum, sort_models, sort_recursive

SORTS = ("sum", "confidence", "recursive")


@dataclass(frozen=True)
class Estimate:
    """One model's estimate from its ``n'`` evaluations (docs/CONTRACTS.md)."""

    acc: float
    lo: float | None
    hi: float | None
    per_sample: np.ndarray
    prob: np.ndarray | None = None


def compute_order(A_sort: np.ndarray, sort: str = "sum", confidence: np.ndarray | None = None,
                  ties: str = "stable", depth: int = 2) -> np.ndarray:
    """The Sort step by name: ``sum``, ``confidence`` (needs ``confidence``) or ``recursive``."""
    if sort == "sum":
        return sort_by_sum(A_sort, ties)
    if sort == "confidence":
        if confidence is None:
            raise InputError("Sorting by confidence needs a confidence matrix.", param="confidence")
        return sort_by_confidence(confidence, ties)
    if sort == "recursive":
        return sort_recursive(A_sort, depth)
    raise InputError(f"unknown sort {sort!r}; use one of {', '.join(SORTS)}.")


def _columns_to_sorted(rank: np.ndarray, columns: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    columns = np.asarray(columns, dtype=np.int64)
    observed = np.asarray(observed).astype(np.uint8).ravel()
    if columns.ndim != 1 or len(columns) != len(observed) or len(columns) == 0:
        raise InputError(f"need as many observations as evaluated samples ({len(observed)} vs {columns.size}).")
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
    """insert_M (seed 001 §3.2): evaluate a new model on ``n'`` samples, predict the rest.

    Configure in ``__init__``; ``fit(A_sort)`` learns the easy -> hard order from the
    cache (or takes ``order``); ``select(n, budget, rng)`` returns the column numbers to
    evaluate; ``estimate(columns, observed)`` returns an :class:`Estimate` whose
    ``per_sample`` is the threshold prediction ``[1_t, 0_{n-t}]`` mapped back to column
    order and ``acc = t / n``; ``predict`` returns just the vector.
    """

    def __init__(self, rule: str = DEFAULT_RULE, sampling: str | None = None, sort: str = "sum",
                 ties: str | None = None, depth: int = 2) -> None:
        if rule not in RULES:
            raise InputError(f"unknown threshold rule {rule!r}; use one of {', '.join(RULES)}.")
        self.rule = rule
        self.name = rule
        self.sampling = resolve_sampling(sampling, rule)
        self.sort = sort
        self.ties = ties
        self.depth = depth

    def fit(self, A_sort: np.ndarray, order: np.ndarray | None = None,
            confidence: np.ndarray | None = None) -> "InsertM":
        ties = self.ties or ("reference" if self.rule == "reference" else "stable")
        self.order_ = (np.asarray(order, dtype=np.int64) if order is not None
                       else compute_order(A_sort, self.sort, confidence, ties, self.depth))
        self.n_ = len(self.order_)
        self.rank_ = np.empty(self.n_, dtype=np.int64)
        self.rank_[self.order_] = np.arange(self.n_)
        return self

    def select_positions(self, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """Sorted positions (not column numbers) to evaluate."""
        return positions_for(self.sampling, self.n_, budget, rng)

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        if n != self.n_:
            raise InputError(f"the method was fitted on {self.n_} samples, not {n}.")
        return np.sort(self.order_[self.select_positions(budget, rng)])

    def threshold(self, columns: np.ndarray, observed: np.ndarray) -> int:
        pos, obs = _columns_to_sorted(self.rank_, columns, observed)
        return int(rule_thresholds(self.rule, pos, obs, self.n_)[0])

    def predict(self, columns: np.ndarray, observed: np.ndarray) -> np.ndarray:
        t = self.threshold(columns, observed)
        y = np.zeros(self.n_, dtype=np.uint8)
        y[self.order_[:t]] = 1
        return y

    def estimate(self, columns: np.ndarray, observed: np.ndarray) -> Estimate:
        y = self.predict(columns, observed)
        return Estimate(float(y.sum()) / self.n_, None, None, y)


class InsertD:
    """insert_D (seed 001 §3.3): the same search on the transpose of the cache.

    ``fit(A)`` orders models best first (Sorting by Sum on ``A.T``) and keeps the
    per-sample sums; ``select(m, budget, rng)`` returns the model rows to run on a new
    sample; ``estimate(rows, observed)`` predicts its correctness for every model
    (``per_sample`` has length m, original model order; ``acc`` = predicted fraction of
    models that get it right); ``place(rows, observed)`` is its position in the fitted
    easy -> hard sample order.
    """

    def __init__(self, rule: str = DEFAULT_RULE, sampling: str | None = None) -> None:
        self._m = InsertM(rule=rule, sampling=sampling)
        self.rule = rule
        self.sampling = self._m.sampling

    def fit(self, A: np.ndarray) -> "InsertD":
        A = np.asarray(A)
        self.model_order_ = sort_models(A)
        self._m.fit(A.T, order=self.model_order_)
        self.sample_sums_ = A.sum(axis=0, dtype=np.int64)
        self.sample_order_ = order_from_sums(self.sample_sums_)
        return self

    def select(self, m: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        return self._m.select(m, budget, rng)

    def estimate(self, rows: np.ndarray, observed: np.ndarray) -> Estimate:
        return self._m.estimate(rows, observed)

    def place(self, rows: np.ndarray, observed: np.ndarray) -> int:
        """Insertion index into ``sample_order_``: after every sample at least as easy.

        The new sample's predicted column sum is the number of models predicted correct;
        ties go after existing samples, as the stable order of Appendix G requires.
        """
        s = int(self._m.predict(rows, observed).sum())
        return int((self.sample_sums_ >= s).sum())


class CopyNearestExpand:
    """CopyNearest&Expand baseline (seed 001 §4.2 Key Result 3; after Vivek et al.).

    ``n'`` samples drawn uniformly at random *without* the Sort order; the Sort model
    whose row agrees most with the new model on those samples (smallest Hamming
    distance, lowest row on ties) lends its row for the other ``n - n'`` samples; the
    evaluated samples keep their observed values. ``acc`` is the mean of that vector.
    """

    name = "copy-nearest"

    def fit(self, A_sort: np.ndarray, order: np.ndarray | None = None,
            confidence: np.ndarray | None = None) -> "CopyNearestExpand":
        self.A_ = np.asarray(A_sort).astype(np.uint8, copy=False)
        self.n_ = self.A_.shape[1]
        return self

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        if n != self.n_:
            raise InputError(f"the method was fitted on {self.n_} samples, not {n}.")
        check_budget(n, budget)
        if rng is None:
            raise InputError("copy-nearest samples at random and needs a random generator (pass a seed).")
        return np.sort(rng.choice(n, size=budget, replace=False)).astype(np.int64)

    def nearest(self, columns: np.ndarray, observed: np.ndarray) -> int:
        columns = np.asarray(columns, dtype=np.int64)
        observed = np.asarray(observed).astype(np.uint8).ravel()
        dist = (self.A_[:, columns] != observed).sum(axis=1)
        return int(np.argmin(dist))

    def estimate(self, columns: np.ndarray, observed: np.ndarray) -> Estimate:
        columns = np.asarray(columns, dtype=np.int64)
        y = self.A_[self.nearest(columns, observed)].copy()
        y[columns] = np.asarray(observed).astype(np.uint8).ravel()
        return Estimate(float(y.mean()), None, None, y)


THRESHOLD_RULES = RULES

SEARCH_METHODS: dict[str, Callable[..., object]] = {
    "midpoint": lambda **kw: InsertM(rule="midpoint", **kw),
    "reference": lambda **kw: InsertM(rule="reference", **kw),
    "copy-nearest": CopyNearestExpand,
}


def _external() -> dict[str, Callable[..., object]]:
    try:
        from lifelong_core.estimators import ESTIMATORS
    except ImportError:
        return {}
    return dict(ESTIMATORS)


def available_methods() -> list[str]:
    """Built-in names first (threshold rules, then baselines), then the estimators'."""
    names = list(SEARCH_METHODS)
    names += [k for k in _external() if k not in SEARCH_METHODS]
    return names


def is_threshold_rule(name: str) -> bool:
    return name in THRESHOLD_RULES


def get_method(name: str, **kwargs) -> object:
    """A fresh, unfitted method by name; ``InputError`` listing the names if unknown."""
    if name in SEARCH_METHODS:
        return SEARCH_METHODS[name](**kwargs)
    ext = _external()
    if name in ext:
        return ext[name](**kwargs)
    raise InputError(f"unknown search method {name!r}; available: {', '.join(available_methods())}.")
