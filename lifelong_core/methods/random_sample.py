"""The random-sampling baseline: a uniform sample of items and its exact interval.

The reference design of survey sampling, stated as a method: evaluate the new model on
``n'`` items drawn uniformly at random *without replacement* from the ``n`` items of the
benchmark, and report the share it gets right. Every other method here should beat it;
if one does not on a user's cache, that is the first thing a backtest should show. (It is
not what ``lm_eval --limit N`` runs: the harness evaluates the *first* ``N`` documents of
each task, the ``first-n`` baseline of :mod:`.first_n`.)

Statistics (Cochran, *Sampling Techniques*, 3rd ed., Wiley, 1977, ch. 3, "Sampling
proportions and percentages"): the sample proportion ``p = a / n'`` is unbiased for the
accuracy ``P = A / n`` over all ``n`` items, with estimated variance
``v(p) = (1 - f) p q / (n' - 1)``, ``f = n' / n`` the sampling fraction (the
finite-population correction: at ``n' = n`` the accuracy is known exactly). The count
``a`` of correct items in the sample is hypergeometric given ``A``, which gives exact
confidence limits: the smallest and largest ``A`` not rejected by the two one-sided tests
at ``(1 - level) / 2`` each (Cochran's "exact" limits for a proportion from the
hypergeometric distribution, in the same chapter). ``interval="exact"`` (the default) is
this; ``interval="normal"`` is ``p +/- z sqrt(v(p))``, the textbook normal interval,
which collapses to zero width when ``p`` is 0 or 1.

The same distribution gives the random sample's *expected* error exactly:
:func:`expected_abs_error` is ``E |a / n' - A / n|`` under the hypergeometric law (the
finite-population correction included, so it is 0 at ``n' = n``), and
:func:`equivalent_random_budget` inverts it: how many uniformly drawn items give a
stated mean absolute error over a set of models. That is the yardstick an estimator's
saving is measured against (a saving against running every item, ``n / n'``, is not one a
user could otherwise have had).

The method predicts no unevaluated item: its ``Estimate.per_sample`` (the observed results
on the evaluated items, and ``p >= 0.5`` for every other item, the constant a sample
mean implies) exists only because the contract asks for a full row. Its capabilities say
``per_sample=False``, and every score built on per-sample predictions (sample-level MAE,
kappa) is left undefined (NaN) for it rather than computed from that constant.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lifelong_core.errors import InputError
from lifelong_core.methods.base import (
    BaseMethod,
    Estimate,
    check_fitted,
    check_observations,
    check_width,
)
from lifelong_core.sortsearch.search import check_budget

INTERVALS = ("exact", "normal")


def _largest(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest integer ``k`` in ``[lo, hi]`` with ``pred(k)``, given ``pred`` is true at
    ``lo`` and turns false once (monotone)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _hypergeom_tails() -> tuple[Callable[..., float], Callable[..., float]]:
    """``hypergeom.sf`` and ``hypergeom.cdf`` of ``scipy.stats`` as ``(x, M, n, N)`` functions,
    called through the special functions they wrap: the same numbers without the
    distribution's per-call argument handling (most of the time of a bisection's ~40
    scalar calls)."""
    try:
        from scipy.special import _ufuncs

        sf, cdf = _ufuncs._hypergeom_sf, _ufuncs._hypergeom_cdf
    except (ImportError, AttributeError):  # another scipy: the distribution's own methods
        from scipy.stats import hypergeom

        return hypergeom.sf, hypergeom.cdf

    def tail(f: Callable[..., Any], below: float) -> Callable[[int, int, int, int], float]:
        def at(x: int, M: int, n: int, N: int) -> float:
            # Outside the support the special function is undefined; the distribution's
            # value there is 0 or 1.
            if x < max(0, N - (M - n)):
                return below
            if x >= min(n, N):
                return 1.0 - below
            return float(f(x, n, N, M))

        return at

    return tail(sf, 1.0), tail(cdf, 0.0)


@lru_cache(maxsize=4096)
def hypergeometric_limits(
    a: int, sample: int, population: int, level: float = 0.95
) -> tuple[int, int]:
    """Exact confidence limits ``(A_lo, A_hi)`` for the number ``A`` of correct items among
    ``population``, from ``a`` correct in a sample of ``sample`` drawn without replacement.

    ``A_lo`` is the smallest ``A`` with ``P(X >= a | A) > alpha / 2`` and ``A_hi`` the
    largest with ``P(X <= a | A) > alpha / 2``, ``X`` hypergeometric and
    ``alpha = 1 - level`` (Cochran, 1977, ch. 3). Found by bisection: both tail
    probabilities are monotone in ``A``. Remembered per arguments: a sweep or a backtest
    asks for the same few counts again and again.

    Parameters
    ----------
    a : int
        Correct items in the sample.
    sample : int
        The sample's size, ``n'``.
    population : int
        The number of items, ``n``.
    level : float
        The confidence level.

    Returns
    -------
    tuple of int
        ``(A_lo, A_hi)``, counts of correct items among ``population``.

    Examples
    --------
    >>> hypergeometric_limits(5, 10, 10)
    (5, 5)
    """
    sf, cdf = _hypergeom_tails()
    half = (1.0 - level) / 2.0
    b = sample - a
    # A is at least the a correct items seen and leaves room for the b wrong ones.
    a_min, a_max = a, population - b
    if a == 0:
        lo = a_min
    else:
        # P(X >= a | A) rises with A; A_lo = one past the largest A where it is <= half.
        def tail_high_small(k: int) -> bool:
            return sf(a - 1, population, k, sample) <= half

        lo = a_min if not tail_high_small(a_min) else _largest(tail_high_small, a_min, a_max) + 1
    if b == 0:
        hi = a_max
    else:
        # P(X <= a | A) falls as A rises; A_hi = the largest A where it is > half.
        def tail_low_large(k: int) -> bool:
            return cdf(a, population, k, sample) > half

        hi = _largest(tail_low_large, a_min, a_max)
    return int(min(lo, a_max)), int(max(hi, a_min))


def _check_counts(correct: ArrayLike, population: int) -> np.ndarray:
    counts = np.asarray(correct)
    if isinstance(population, bool) or not isinstance(population, (int, np.integer)):
        raise InputError(f"the number of items must be a whole number, got {population!r}.")
    if population < 1:
        raise InputError(f"the number of items must be at least 1, got {population}.")
    if counts.ndim != 1 or counts.size == 0:
        raise InputError("give the correct-item count of at least one model.")
    if not np.issubdtype(counts.dtype, np.integer) or counts.min() < 0 or counts.max() > population:
        raise InputError(f"correct-item counts must be whole numbers in [0, {population}].")
    return counts.astype(np.int64)


def expected_abs_error(correct: ArrayLike, population: int, sample: int) -> np.ndarray:
    """The exact expected absolute error of a uniform random sample's accuracy.

    For a model with ``A`` of ``N`` items right, a sample of ``n'`` items drawn without
    replacement holds ``X ~ Hypergeometric(N, A, n')`` correct ones (Cochran, *Sampling
    Techniques*, 3rd ed., 1977, ch. 3: the sample proportion's exact distribution, the
    finite-population correction included, so the error is 0 at ``n' = N``), and the
    random sample's estimate ``X / n'`` errs by ``E |X / n' - A / N|``. The mean absolute
    deviation of the hypergeometric has De Moivre's kind of closed form (Diaconis &
    Zabell, 1991, "Closed form summation for classical distributions: variations on a
    theme of De Moivre", *Statistical Science* 6(3)):

        E |X - mu| = 2 nu (N - A - n' + nu) / N * P(X = nu),   mu = n' A / N,
        nu = floor(mu) + 1,

    so the error costs one probability per model whatever the sizes (checked against the
    sum over the whole support in the tests).

    Parameters
    ----------
    correct : array_like of int
        Each model's number of correct items, ``A``, in ``[0, population]``.
    population : int
        The number of items, ``N``.
    sample : int
        The random sample's size, ``n'``, in ``[1, N]``.

    Returns
    -------
    numpy.ndarray
        float64, one expected absolute error per model (a fraction of accuracy).

    Raises
    ------
    InputError
        On counts outside ``[0, population]`` or a sample size outside ``[1, population]``.

    Examples
    --------
    >>> float(expected_abs_error([5], 10, 10)[0])
    0.0
    >>> round(float(expected_abs_error([1], 2, 1)[0]), 3)  # one of two items right, one drawn
    0.5
    """
    counts = _check_counts(correct, population)
    check_budget(population, sample)
    return _mean_abs_errors(counts, int(population), np.array([int(sample)]))[0]


def expected_abs_errors(correct: ArrayLike, population: int, samples: ArrayLike) -> np.ndarray:
    """:func:`expected_abs_error` at many sample sizes at once.

    Parameters
    ----------
    correct : array_like of int
        Each model's number of correct items, in ``[0, population]``.
    population : int
        The number of items.
    samples : array_like of int
        Sample sizes, each in ``[1, population]``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(len(samples), len(correct))``: row ``i`` is
        ``expected_abs_error(correct, population, samples[i])``.

    Raises
    ------
    InputError
        On counts or sample sizes out of range.
    """
    counts = _check_counts(correct, population)
    sizes = np.asarray(samples, dtype=np.int64).reshape(-1)
    for b in (sizes.min(), sizes.max()) if len(sizes) else ():
        check_budget(population, int(b))
    return _mean_abs_errors(counts, int(population), sizes)


def _mean_abs_errors(counts: np.ndarray, N: int, sizes: np.ndarray) -> np.ndarray:
    """Diaconis & Zabell's closed form for every (sample size, model): rows are sizes."""
    from scipy.special import gammaln

    b = sizes.astype(np.int64)[:, None]
    c = counts.astype(np.int64)[None, :]
    A = c.astype(np.float64)
    bf = b.astype(np.float64)
    # nu = floor(n' A / N) + 1 in whole numbers: a float quotient can fall just short.
    nu = (b * c) // N + 1
    inside = (nu <= np.minimum(b, c)) & (b - nu <= N - c)
    k = np.where(inside, nu, 0).astype(np.float64)
    top, rest = np.where(inside, A, 0.0), np.where(inside, N - A, bf)

    def log_choose(a: np.ndarray | float, r: np.ndarray | float) -> np.ndarray:
        return gammaln(a + 1.0) - gammaln(r + 1.0) - gammaln(a - r + 1.0)

    log_p = log_choose(top, k) + log_choose(rest, bf - k) - log_choose(float(N), bf)
    mad = np.where(inside, 2.0 * k * (N - A - bf + k) / N * np.exp(log_p), 0.0)
    return mad / bf


def equivalent_random_budget(
    target: float,
    correct: ArrayLike,
    population: int,
    error: Callable[[int], float] | None = None,
) -> int:
    """How many uniformly drawn items give a mean absolute error of at most ``target``.

    The smallest ``n'`` in ``[1, N]`` at which a uniform random sample's exact expected
    absolute error (:func:`expected_abs_error`), averaged over the models whose counts
    are ``correct``, is at most ``target``: the *equivalent random budget* of an
    estimator whose mean absolute error over the same models is ``target``. The
    expected error falls as ``n'`` grows (checked against every ``n'`` in the tests),
    so it is found by bisection. ``N`` when only every item reaches ``target`` (e.g. an
    exact estimator, ``target = 0``); 1 when one random item already does as well.

    Parameters
    ----------
    target : float
        The mean absolute error to match (a fraction of accuracy), at least 0.
    correct : array_like of int
        The models' numbers of correct items.
    population : int
        The number of items, ``N``.
    error : callable, optional
        ``error(n')``, the mean expected error at ``n'`` over the models, when the caller
        keeps it (e.g. memoised across bootstrap replicates); by default computed from
        ``correct``.

    Returns
    -------
    int

    Raises
    ------
    InputError
        On a negative or non-finite ``target``, or counts outside ``[0, population]``.

    Examples
    --------
    >>> equivalent_random_budget(0.0, [3, 7], 10)
    10
    """
    if not np.isfinite(target) or target < 0:
        raise InputError(f"the error to match must be a number at least 0, got {target!r}.")
    if error is None:
        counts = _check_counts(correct, population)

        def error(b: int) -> float:
            return float(expected_abs_error(counts, population, b).mean())

    lo, hi = 1, int(population)  # error(hi) == 0 <= target
    while lo < hi:
        mid = (lo + hi) // 2
        if error(mid) <= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


class RandomSample(BaseMethod):
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
        self.interval = interval
        self.level = level

    def _validate_params(self) -> None:
        if self.interval not in INTERVALS:
            raise InputError(
                f"unknown interval {self.interval!r}; use one of {', '.join(INTERVALS)}.",
                param="interval",
            )
        if not 0 < self.level < 1:
            raise InputError(f"level must be in (0, 1), got {self.level}.", param="level")

    def fit(
        self,
        A_sort: np.ndarray | None = None,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> RandomSample:
        """Remember the number of items; the cache itself plays no part in a random sample.

        ``A_sort`` may be None when ``order`` (one entry per item) is given, as a large
        store passes its kept Sort order without reading the cache."""
        self._validate_params()
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

    def fit_packed(self, P: np.ndarray, n: int, order: np.ndarray, **_: object) -> RandomSample:
        """:meth:`fit` for packed rows: only ``n`` is used, nothing is unpacked."""
        self._validate_params()
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
        check_width(n, self.n_)
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
            acc=float(acc),
            lo=float(lo),
            hi=float(hi),
            per_sample=per_sample,
            prob=prob,
            level=self.level,
        )
