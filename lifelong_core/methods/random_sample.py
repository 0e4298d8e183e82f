"""The random-sampling baseline: a uniform sample of items and its exact interval.

What users of ``lm_eval --limit`` do today, stated as a method: evaluate the new model on
``n'`` items drawn uniformly at random *without replacement* from the ``n`` items of the
benchmark, and report the share it gets right. Every other method here should beat it;
if one does not on a user's cache, that is the first thing a backtest should show.

Statistics (Cochran, *Sampling Techniques*, 3rd ed., Wiley, 1977, ch. 3, "Sampling
proportions and percentages"): the sample proportion ``p = a / n'`` is unbiased for the
accuracy ``P = A / n`` over all ``n`` items, with estimated variance
``v(p) = (1 - f) p q / (n' - 1)``, ``f = n' / n`` the sampling fraction (the
finite-population correction: at ``n' = n`` the accuracy is known exactly). The count
``a`` of correct items in the sample is hypergeometric given ``A``, which gives exact
confidence limits: the smallest and largest ``A`` not rejected by the two one-sided tests
at ``(1 - level) / 2`` each (Cochran's "exact" limits for a proportion from the
hypergeometric distribution, in the same chapter). ``interval="exact"`` (the default) is
this; ``interval="normal"`` is ``p +/- z sqrt(v(p))``, which is what a hand-written
``--limit`` analysis usually reports and which collapses to zero width when ``p`` is 0 or
1.

The method predicts no unevaluated item: its ``Estimate.per_sample`` (the observed results
on the evaluated items, and ``p >= 0.5`` for every other item, the constant a sample
mean implies) exists only because the contract asks for a full row. Its capabilities say
``per_sample=False``, and every score built on per-sample predictions (sample-level MAE,
kappa) is left undefined (NaN) for it rather than computed from that constant.
"""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, check_fitted, check_observations
from lifelong_core.sortsearch.search import check_budget

INTERVALS = ("exact", "normal")


def _largest(pred, lo: int, hi: int) -> int:
    """The largest integer ``k`` in ``[lo, hi]`` with ``pred(k)``, given ``pred`` is true at
    ``lo`` and turns false once (monotone)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def hypergeometric_limits(a: int, sample: int, population: int, level: float = 0.95):
    """Exact confidence limits ``(A_lo, A_hi)`` for the number ``A`` of correct items among
    ``population``, from ``a`` correct in a sample of ``sample`` drawn without replacement.

    ``A_lo`` is the smallest ``A`` with ``P(X >= a | A) > alpha / 2`` and ``A_hi`` the
    largest with ``P(X <= a | A) > alpha / 2``, ``X`` hypergeometric and
    ``alpha = 1 - level`` (Cochran, 1977, ch. 3). Found by bisection: both tail
    probabilities are monotone in ``A``.

    Examples
    --------
    >>> hypergeometric_limits(5, 10, 10)
    (5, 5)
    """
    from scipy.stats import hypergeom

    half = (1.0 - level) / 2.0
    b = sample - a
    # A is at least the a correct items seen and leaves room for the b wrong ones.
    a_min, a_max = a, population - b
    if a == 0:
        lo = a_min
    else:
        # P(X >= a | A) rises with A; A_lo = one past the largest A where it is <= half.
        def tail_high_small(k: int) -> bool:
            return hypergeom.sf(a - 1, population, k, sample) <= half

        lo = a_min if not tail_high_small(a_min) else _largest(tail_high_small, a_min, a_max) + 1
    if b == 0:
        hi = a_max
    else:
        # P(X <= a | A) falls as A rises; A_hi = the largest A where it is > half.
        def tail_low_large(k: int) -> bool:
            return hypergeom.cdf(a, population, k, sample) > half

        hi = _largest(tail_low_large, a_min, a_max)
    return int(min(lo, a_max)), int(max(hi, a_min))


class RandomSample:
    """Uniform random sample of items without replacement; the sample mean and its interval.

    Parameters
    ----------
    interval : {"exact", "normal"}
        ``"exact"``: hypergeometric limits; ``"normal"``: ``p +/- z sqrt((1 - f) p q / (n' - 1))``
        (both Cochran, 1977, ch. 3; see the module docstring).
    level : float
        Confidence level of the interval, in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.random.default_rng(0).integers(0, 2, (5, 40), dtype=np.uint8)
    >>> m = RandomSample().fit(A)
    >>> cols = m.select(40, 10, np.random.default_rng(1))
    >>> est = m.estimate(cols, A[0, cols])
    >>> est.lo <= est.acc <= est.hi
    True
    """

    name = "random"

    def __init__(self, interval: str = "exact", level: float = 0.95) -> None:
        if interval not in INTERVALS:
            raise InputError(
                f"unknown interval {interval!r}; use one of {', '.join(INTERVALS)}.",
                param="interval",
            )
        if not 0 < level < 1:
            raise InputError(f"level must be in (0, 1), got {level}.", param="level")
        self.interval = interval
        self.level = level

    def fit(
        self,
        A_sort: np.ndarray | None = None,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> RandomSample:
        """Remember the number of items; the cache itself plays no part in a random sample.

        ``A_sort`` may be None when ``order`` (one entry per item) is given, as a large
        store passes its kept Sort order without reading the cache."""
        if A_sort is not None:
            A = np.asarray(A_sort)
            if A.ndim != 2 or A.shape[1] < 1:
                raise InputError(
                    f"the Sort cache must be a matrix (models x samples), got shape {A.shape}."
                )
            self.n_ = int(A.shape[1])
        elif order is not None:
            self.n_ = len(np.asarray(order))
        else:
            raise InputError("fit needs the cache or its sample order to know the number of items.")
        self._keep_order(order)
        return self

    def fit_packed(self, P: np.ndarray, n: int, order: np.ndarray, **_) -> RandomSample:
        """:meth:`fit` for packed rows: only ``n`` is used, nothing is unpacked."""
        self.n_ = int(n)
        self._keep_order(order)
        return self

    def _keep_order(self, order: np.ndarray | None) -> None:
        # Not used to choose items; kept so a sweep reports the order it was given.
        self.order_ = (
            np.arange(self.n_, dtype=np.int64)
            if order is None
            else np.asarray(order, dtype=np.int64)
        )

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        check_fitted(self, "n_")
        if n != self.n_:
            raise InputError(f"the method was fitted on {self.n_} samples, not {n}.")
        check_budget(n, budget)
        if not isinstance(rng, np.random.Generator):
            raise InputError("random sampling needs a random generator (pass a seed).")
        return np.sort(rng.choice(n, size=budget, replace=False)).astype(np.int64)

    def interval_of(self, correct: int, budget: int) -> tuple[float, float]:
        """The ``level`` interval of the accuracy from ``correct`` right of ``budget`` items."""
        check_fitted(self, "n_")
        key = (int(correct), int(budget), self.n_)
        # A sweep scores hundreds of models at a few budgets: the same (correct, budget)
        # comes back often, and the exact limits cost two bisections each.
        memo = self.__dict__.setdefault("_limits", {})
        if key not in memo:
            memo[key] = self._interval(*key)
        return memo[key]

    def _interval(self, correct: int, budget: int, n: int) -> tuple[float, float]:
        p = correct / budget
        if self.interval == "exact" or budget < 2:
            # With one item there is no sample variance: only the exact limits say anything.
            lo, hi = hypergeometric_limits(correct, budget, n, self.level)
            return min(lo / n, p), max(hi / n, p)
        from scipy.stats import norm

        var = (1.0 - budget / n) * p * (1.0 - p) / (budget - 1)
        half = float(norm.ppf(0.5 + self.level / 2.0)) * float(np.sqrt(max(var, 0.0)))
        return max(p - half, 0.0), min(p + half, 1.0)

    def estimate(self, indices: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "n_")
        idx, obs = check_observations(indices, observed, self.n_)
        correct = int(obs.sum())
        acc = correct / len(obs)
        lo, hi = self.interval_of(correct, len(obs))
        prob = np.full(self.n_, acc)
        prob[idx] = obs
        per_sample = np.full(self.n_, int(acc >= 0.5), dtype=np.uint8)
        per_sample[idx] = obs
        return Estimate(
            acc=float(acc), lo=float(lo), hi=float(hi), per_sample=per_sample, prob=prob
        )
