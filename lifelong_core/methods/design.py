"""The sampling design and the accuracy estimator that every method here shares.

Sort & Search (Prabhu et al., 2024, §3.2) evaluates a new model on ``n'`` samples spread uniformly
along the easy -> hard order and reports a threshold position as its accuracy. The order
is kept here, but the ``n'`` points are drawn as a *stratified random sample*: the order
is cut into ``n' // 2`` contiguous strata of (almost) equal size and two samples are drawn
at random without replacement inside each stratum. This keeps the "diversity-seeking"
coverage of every difficulty range that §4.4 credits uniform sampling with, and adds the
randomisation that design-based inference needs: the estimator below is unbiased for the
accuracy over all ``n`` samples whatever the new model does, and two draws per stratum give
an unbiased variance estimate (Cochran, *Sampling Techniques*, 3rd ed., 1977, §5.3 and
§5A.12; with one draw per stratum, as systematic sampling has, no unbiased variance
estimator exists).

The accuracy estimate is the *model-assisted difference estimator* (Särndal, Swensson &
Wretman, *Model Assisted Survey Sampling*, 1992, §6.3-6.5): a prediction ``p_j`` of the
new model's correctness on every sample (from whichever sample-level model the method
fits) is summed over all ``n`` samples, and the design-weighted mean residual
``a_j - p_j`` on the evaluated samples corrects it. Good predictions shrink the residual
variance and so the interval; bad predictions cost width, never validity. The interval is
Student-t with Satterthwaite's effective degrees of freedom (Cochran §5.4).

Where the sample cannot estimate the variance, the t-interval is guarded
(:func:`difference_estimate_at`, ``guard=True``; ``guard=False`` gives the textbook
interval alone). Two cases, both fixed by the statistics, not tuned on any data:

- *No estimated variance*: every residual in every stratum the same (a 0/1 prediction such
  as a threshold that reproduces every evaluated result, the usual case on a cache of two
  models), or a single evaluated item. Nothing in the sample says how wrong the
  predictions are elsewhere, and the t-interval would have zero width. The interval is
  then the simple random sample's exact interval of the evaluated items' share right
  (:func:`~lifelong_core.methods.random_sample.hypergeometric_limits`, Cochran 1977,
  ch. 3), widened to hold the estimate.
- *An outcome never seen*: no evaluated item right (or none wrong), as happens to models
  near 0% (100%) accuracy. The residual variance is then estimated without the rare
  outcome that dominates it, and a normal interval undercovers near the bounds (Brown,
  Cai & DasGupta, 2001, "Interval estimation for a binomial proportion", *Statistical
  Science* 16, for the simple random sample's case). The interval is then the hull of
  the t-interval and the simple random sample's exact interval for no success (no
  failure), ``[0, upper]`` (``[lower, 1]``): the truth may lie anywhere the sample's own
  share allows, whatever the predictions say.

Both fall-backs are valid for the self-weighting designs here (every item's chance of
selection is ``n' / n`` up to rounding of the strata), whose sample mean varies no more
than a simple random sample's of the same size: proportional stratification (Cochran
§5.6) and systematic sampling along a trend (Cochran §8.6). They cost width only where the
t-interval had no basis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import stdtrit

from lifelong_core.errors import InputError
from lifelong_core.methods.base import BaseMethod, check_fitted, check_width
from lifelong_core.sortsearch.search import check_budget

__all__ = [
    "CV_MODELS",
    "CV_SAMPLES",
    "AccuracyInterval",
    "StratifiedAlongOrder",
    "cv_block",
    "cv_budgets",
    "difference_estimate",
    "difference_estimate_at",
    "difference_estimates_at",
    "guard_interval",
    "regular_positions",
    "strata_bounds",
    "stratified_positions",
]


def strata_bounds(n: int, budget: int) -> np.ndarray:
    """Edges of the ``H = budget // 2`` strata along the sorted order.

    Strata are contiguous runs of sorted positions of sizes differing by at most one, so
    every stratum holds at least two samples whenever ``budget <= n``.

    Parameters
    ----------
    n : int
        The number of samples in the order.
    budget : int
        The number of samples to evaluate, ``n'``; fewer than 2 still gives one stratum.

    Returns
    -------
    numpy.ndarray
        int64 edges, length ``H + 1``, from 0 to ``n``: stratum ``h`` is the sorted
        positions ``edges[h] .. edges[h + 1] - 1``.
    """
    h = max(budget // 2, 1)
    return np.linspace(0, n, h + 1).round().astype(np.int64)


def stratified_positions(n: int, budget: int, rng: np.random.Generator) -> np.ndarray:
    """A stratified random sample of sorted positions: two per stratum.

    The design of the module docstring (Cochran, *Sampling Techniques*, 3rd ed., 1977,
    §5.3): two draws without replacement in each stratum of :func:`strata_bounds`; when
    ``budget`` is odd the largest stratum (which holds at least three samples, since
    ``n >= budget``) gets a third draw.

    Parameters
    ----------
    n : int
        The number of samples in the order.
    budget : int
        How many positions to draw, in ``[1, n]``.
    rng : numpy.random.Generator
        The random draw.

    Returns
    -------
    numpy.ndarray
        Exactly ``budget`` distinct int64 positions in sorted order (not column
        numbers), ascending.

    Raises
    ------
    InputError
        If ``budget`` is not a whole number in ``[1, n]``, or ``rng`` is not a
        ``numpy.random.Generator``.
    """
    check_budget(n, budget)
    if not isinstance(rng, np.random.Generator):
        raise InputError(
            "stratified sampling draws at random and needs a random generator (pass a seed)."
        )
    edges = strata_bounds(n, budget)
    sizes = np.diff(edges)
    take = np.full(len(sizes), min(2, budget), dtype=np.int64)
    take[int(np.argmax(sizes))] += budget - take.sum()
    # One vectorised draw: random keys per position, keep the `take` smallest per stratum
    # (the lowest position first among equal keys).
    return np.sort(_smallest_keys(rng.random(n), edges, take))


def _smallest_keys(keys: np.ndarray, edges: np.ndarray, take: np.ndarray) -> np.ndarray:
    """The ``take[h]`` positions of smallest key in each stratum ``h`` (contiguous, between
    ``edges``), equal keys taken lowest position first: the first ``take[h]`` of the
    stratum sorted by (key, position), in no particular order.

    The keys are laid out as one (strata x largest size) array, the shorter strata (one
    sample shorter, from :func:`strata_bounds`) padded with infinity, and the smallest
    taken one at a time along each row (``argmin`` returns the first, lowest position, of
    equal keys): a few passes over the keys, where sorting every stratum is not."""
    sizes = np.diff(edges)
    starts = edges[:-1]
    width = int(sizes.max())
    at = starts[:, None] + np.arange(width)
    if int(sizes.min()) >= width - 1:  # strata_bounds': only the last place may be padding
        short = np.flatnonzero(sizes < width)
        at[short, width - 1] = starts[short]  # in range; its key is padded below
        K = keys[at]
        K[short, width - 1] = np.inf
    else:
        pad = np.arange(width)[None, :] >= sizes[:, None]
        at[pad] = np.broadcast_to(starts[:, None], at.shape)[pad]
        K = keys[at]
        K[pad] = np.inf
    t = int(take.max())
    picks = np.empty((len(sizes), t), dtype=np.int64)
    strata = np.arange(len(sizes))
    for r in range(t):
        picks[:, r] = np.argmin(K, axis=1)
        if r < t - 1:
            K[strata, picks[:, r]] = np.inf
    chosen = starts[:, None] + picks
    if (take == t).all():
        return chosen.ravel()
    return chosen[np.arange(t)[None, :] < take[:, None]]


def regular_positions(n: int, budget: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted positions: one in each of ``budget`` equal strata of the order, all at the same
    random relative offset (``lo + floor(U * size)`` with one ``U ~ Uniform[0, 1)``).

    Systematic sampling with a random start (Cochran, *Sampling Techniques*, 3rd ed., 1977,
    ch. 8) laid on the strata of :func:`strata_bounds`'s finer grid: the positions are
    evenly spaced like Sort & Search's uniform grid (Prabhu et al., 2024, "Efficient
    Lifelong Model Evaluation in an Era of Rapid Progress", §3.2: what places a threshold
    best), yet every sample has a known, non-zero chance of being chosen (one over its
    stratum's size), so the difference estimator stays unbiased. Two consecutive strata
    nest in one stratum of :func:`strata_bounds` (for an even budget), which then holds two
    positions, and its variance is the collapsed-strata estimate (Cochran §5A.12), the
    usual, conservative one for a systematic sample along a trend.

    Parameters
    ----------
    n : int
        The number of samples in the order.
    budget : int
        How many positions to take (one per stratum), in ``[1, n]``.
    rng : numpy.random.Generator
        Draws the one common offset ``U``.

    Returns
    -------
    numpy.ndarray
        Exactly ``budget`` distinct int64 positions in sorted order, ascending.

    Raises
    ------
    InputError
        If ``budget`` is not a whole number in ``[1, n]``, or ``rng`` is not a
        ``numpy.random.Generator``.
    """
    check_budget(n, budget)
    if not isinstance(rng, np.random.Generator):
        raise InputError(
            "systematic sampling draws its start at random and needs a random generator (pass a seed)."
        )
    edges = np.linspace(0, n, budget + 1).round().astype(np.int64)
    sizes = np.diff(edges)
    return edges[:-1] + np.floor(rng.random() * sizes).astype(np.int64)


class StratifiedAlongOrder(BaseMethod):
    """The fitted order and ``select`` of the estimators that sample with
    :func:`stratified_positions` along the cache's easy -> hard order (``mirt``,
    ``mirt-cv``, ``neighbours``); their ``fit`` calls :meth:`_set_order`.

    A base without a constructor of its own.

    Attributes
    ----------
    order_ : numpy.ndarray
        After the fit: the int64 easy -> hard order of the samples.
    rank_ : numpy.ndarray
        After the fit: each sample's position in ``order_``.
    """

    def _set_order(self, order: np.ndarray) -> None:
        self.order_ = np.asarray(order, dtype=np.int64)
        # rank_[j]: sample j's position in the order, which the strata of the estimator cut.
        self.rank_ = np.empty_like(self.order_)
        self.rank_[self.order_] = np.arange(len(self.order_))

    def select(self, n: int, budget: int, rng: np.random.Generator) -> np.ndarray:
        """The column numbers to evaluate: a stratified random sample along the order.

        Parameters
        ----------
        n : int
            The number of samples; must be the fitted one.
        budget : int
            How many samples to evaluate, in ``[1, n]``.
        rng : numpy.random.Generator
            The random draw.

        Returns
        -------
        numpy.ndarray
            ``budget`` distinct int64 column numbers, ascending.

        Raises
        ------
        NotFittedError
            Before the estimator's ``fit``.
        InputError
            If ``n`` is not the fitted number of samples, or as
            :func:`stratified_positions`.
        """
        check_fitted(self, "order_")
        check_width(n, len(self.order_), "estimator")
        return np.sort(self.order_[stratified_positions(n, budget, rng)])


def _strata_of(ranks: np.ndarray, n: int, budget: int) -> tuple[np.ndarray, np.ndarray]:
    """Stratum label per evaluated sample and the population size of every stratum.

    Labels follow the design of :func:`stratified_positions`. Positions chosen any other
    way (e.g. S&S's uniform grid) are post-stratified: neighbouring strata are merged until
    each holds at least two evaluated samples ("collapsed strata", Cochran §5A.12), which
    keeps the variance estimate defined, and conservative rather than optimistic.
    """
    edges = strata_bounds(n, budget)
    label = _stratum_of(edges, np.asarray(ranks, dtype=np.int64), n)
    counts = np.bincount(label, minlength=len(edges) - 1)
    if counts.min() >= 2 or len(ranks) < 2:
        return label, np.diff(edges)
    keep = [0]
    running = 0
    for h, c in enumerate(counts):
        running += c
        if running >= 2 and h < len(counts) - 1:
            keep.append(h + 1)
            running = 0
    if running < 2 and len(keep) > 1:
        keep.pop()
    merged = np.append(edges[keep], n)
    label = np.searchsorted(merged, ranks, side="right") - 1
    return label, np.diff(merged)


def _stratum_of(edges: np.ndarray, ranks: np.ndarray, n: int) -> np.ndarray:
    """``searchsorted(edges, ranks, side="right") - 1`` for the near-even edges of
    :func:`strata_bounds`: each rank's stratum from its proportional place, corrected to
    the edges it lies between (linear, where a search per rank is not)."""
    h = len(edges) - 1
    if n == 0 or len(ranks) == 0:
        return np.searchsorted(edges, ranks, side="right") - 1
    label = np.minimum(ranks * h // n, h - 1)
    for _ in range(2):  # each edge is within one stratum of its proportional place
        label += edges[np.minimum(label + 1, h)] <= ranks
        label -= edges[label] > ranks
    label = np.minimum(label, h - 1)
    if not (edges[label] <= ranks).all() or not (ranks < edges[label + 1]).all():
        return np.searchsorted(edges, ranks, side="right") - 1
    return label


@dataclass(frozen=True)
class AccuracyInterval:
    """An accuracy estimate with its design-based interval (:func:`difference_estimate`).

    Attributes
    ----------
    acc : float
        The estimated accuracy, clipped to ``[0, 1]``.
    lo, hi : float or None
        The interval of ``acc`` at the requested level, clipped to ``[0, 1]``: the
        Student-t interval, guarded where the sample cannot estimate the variance (module
        docstring); None without the guard and with fewer than two evaluated samples.
    se : float or None
        The estimated standard error of ``acc``; None when the sample gives none.
    half : float or None
        The half-width before clipping the interval to ``[0, 1]``: ``t * se``, or, where
        the guard widened the interval, its largest distance from ``acc``; None when
        there is no interval.
    guarded : bool
        Whether the guard replaced or widened the t-interval.
    """

    acc: float
    lo: float | None
    hi: float | None
    se: float | None
    half: float | None  # t * se before clipping the interval to [0, 1]
    guarded: bool = False


def difference_estimate(
    ranks: np.ndarray,
    observed: np.ndarray,
    prob_sorted: np.ndarray,
    resid: np.ndarray | None = None,
    level: float = 0.95,
    inflate: float = 1.0,
    guard: bool = True,
) -> AccuracyInterval:
    """Model-assisted difference estimator of the accuracy with a stratified t-interval.

    ``ranks`` are the evaluated samples' positions in sorted order, ``observed`` their 0/1
    results and ``prob_sorted`` the predicted P(correct) of every sample in sorted order.
    Written as "evaluated results + predictions for the rest + the stratum's mean residual
    for each sample not evaluated", which is algebraically the textbook difference
    estimator when ``resid = observed - prob`` and stays exact at ``n' = n`` (every stratum
    fully evaluated, finite-population correction zero, zero-width interval).

    ``resid`` lets a method pass *out-of-sample* residuals (e.g. leave-one-out) when its
    predictions were fitted on the evaluated samples themselves: in-sample residuals are
    shrunk by the fit and would make the interval too narrow (the GREG small-sample
    problem, Särndal et al. §6.6-6.7).

    Parameters
    ----------
    ranks : numpy.ndarray
        (n',) int64 positions of the evaluated samples in sorted order, distinct.
    observed : numpy.ndarray
        (n',) their 0/1 results, in the order of ``ranks``.
    prob_sorted : numpy.ndarray
        (n,) the predicted P(correct) of every sample, in sorted order.
    resid : numpy.ndarray, optional
        (n',) residuals to use instead of ``observed - prob`` at the evaluated samples
        (out-of-sample ones, for predictions fitted on those samples).
    level : float
        The interval's coverage, in ``(0, 1)``.
    inflate : float
        Factor on the estimated variance (e.g. ``n' / (n' - df)`` for a fit with ``df``
        effective parameters, Särndal et al. §6.6); 1 leaves it as is.
    guard : bool
        Guard the interval where the sample cannot estimate the variance (module
        docstring); False gives the textbook t-interval alone (none with one evaluated
        sample, zero width with no residual variance).

    Returns
    -------
    AccuracyInterval
        The accuracy and its interval (zero width only when every sample was evaluated).
    """
    return difference_estimate_at(
        ranks,
        observed,
        prob_sorted[ranks],
        prob_sorted.sum(),
        len(prob_sorted),
        resid=resid,
        level=level,
        inflate=inflate,
        guard=guard,
    )


def difference_estimate_at(
    ranks: np.ndarray,
    observed: np.ndarray,
    prob_at: np.ndarray,
    prob_total: float,
    n: int,
    resid: np.ndarray | None = None,
    level: float = 0.95,
    inflate: float = 1.0,
    guard: bool = True,
) -> AccuracyInterval:
    """:func:`difference_estimate` from what it reads of the predictions.

    Only the predictions at the evaluated samples and their total over all ``n``
    samples enter the estimator; at ``n`` = 1.7M this spares a caller with predictions
    in column order the permutation into sorted order.

    Parameters
    ----------
    ranks : numpy.ndarray
        (n',) int64 positions of the evaluated samples in sorted order, distinct.
    observed : numpy.ndarray
        (n',) their 0/1 results, in the order of ``ranks``.
    prob_at : numpy.ndarray
        (n',) the predicted P(correct) at the evaluated samples, in the order of
        ``ranks``.
    prob_total : float
        The sum of the predicted P(correct) over all ``n`` samples.
    n : int
        The number of samples.
    resid : numpy.ndarray, optional
        (n',) residuals to use instead of ``observed - prob_at``.
    level : float
        The interval's coverage, in ``(0, 1)``.
    inflate : float
        Factor on the estimated variance; 1 leaves it as is.
    guard : bool
        As for :func:`difference_estimate`.

    Returns
    -------
    AccuracyInterval
        As :func:`difference_estimate`.
    """
    budget = len(ranks)
    obs = observed.astype(np.float64)
    prob_at = np.asarray(prob_at, dtype=np.float64)
    if resid is None:
        resid = obs - prob_at
    label, sizes = _strata_of(ranks, n, budget)
    h = len(sizes)
    n_h = np.bincount(label, minlength=h).astype(np.float64)
    mean_h = np.bincount(label, weights=resid, minlength=h) / np.maximum(n_h, 1)
    unsampled = prob_total - prob_at.sum()
    acc = (obs.sum() + unsampled + ((sizes - n_h) * mean_h).sum()) / n
    acc = float(np.clip(acc, 0.0, 1.0))
    if budget >= n:  # every item evaluated: exact, whatever the predictions
        return AccuracyInterval(acc, acc, acc, 0.0, 0.0)
    seen = int(obs.sum())
    if budget < 2:
        return guard_interval(acc, None, seen, budget, n, level) if guard else _no_interval(acc)
    ss_h = np.bincount(label, weights=(resid - mean_h[label]) ** 2, minlength=h)
    s2_h = ss_h / np.maximum(n_h - 1, 1)
    fpc = 1.0 - n_h / sizes
    g = (sizes / n) ** 2 * fpc / n_h
    var = float((g * s2_h).sum()) * inflate
    if var <= 0.0:
        if guard:
            return guard_interval(acc, None, seen, budget, n, level)
        return AccuracyInterval(acc, acc, acc, 0.0, 0.0)
    se = float(np.sqrt(var))
    # Satterthwaite: variance of a weighted sum of independent s^2_h with n_h - 1 df each.
    df = var**2 / float(((g * s2_h) ** 2 / np.maximum(n_h - 1, 1)).sum())
    # Student-t quantile (scipy.stats.t.ppf's own special function, without importing
    # scipy.stats: a command line's start-up pays for that import).
    half = float(stdtrit(df, 0.5 + level / 2.0)) * se
    if guard:
        return guard_interval(acc, (se, half), seen, budget, n, level)
    return AccuracyInterval(acc, max(acc - half, 0.0), min(acc + half, 1.0), se, half)


# Working memory of one group of models in :func:`difference_estimates_at`: a (models x n')
# float64 array of at most this many bytes, whatever the number of models and the budget.
ESTIMATES_BYTES = 16 << 20


def difference_estimates_at(
    ranks: np.ndarray,
    observed: np.ndarray,
    prob_at: np.ndarray,
    prob_total: np.ndarray,
    n: int,
    level: float = 0.95,
    inflate: np.ndarray | float = 1.0,
    guard: bool = True,
) -> list[AccuracyInterval]:
    """:func:`difference_estimate_at` of many models evaluated on the same samples.

    The models share the evaluated samples, hence the strata, their sizes and the
    weights of the variance (made once); each model's residuals, stratum means and
    variances are rows of one array, and Student's t quantile is taken for every model at
    once. The same numbers as :func:`difference_estimate_at` model by model, up to the
    order of floating-point sums (``tests/engine/test_methods_design.py``).

    Parameters
    ----------
    ranks : numpy.ndarray
        (n',) int64 positions of the evaluated samples in sorted order, distinct.
    observed : numpy.ndarray
        (models, n') each model's 0/1 results, in the order of ``ranks``.
    prob_at : numpy.ndarray
        (models, n') each model's predicted P(correct) at the evaluated samples.
    prob_total : numpy.ndarray
        (models,) the sum of each model's predicted P(correct) over all ``n`` samples.
    n : int
        The number of samples.
    level : float
        The intervals' coverage, in ``(0, 1)``.
    inflate : numpy.ndarray or float
        (models,) or one factor on each model's estimated variance.
    guard : bool
        As for :func:`difference_estimate`.

    Returns
    -------
    list of AccuracyInterval
        One per model, as :func:`difference_estimate_at` gives it.
    """
    ranks = np.asarray(ranks, dtype=np.int64)
    obs = np.atleast_2d(np.asarray(observed))
    models, budget = obs.shape
    total = np.broadcast_to(np.asarray(prob_total, dtype=np.float64), (models,))
    factor = np.broadcast_to(np.asarray(inflate, dtype=np.float64), (models,))
    label, sizes = _strata_of(ranks, n, budget)
    h = len(sizes)
    n_h = np.bincount(label, minlength=h).astype(np.float64)
    # Stratum sums of every model at once: a (strata x n') indicator matrix times the
    # (n' x models) values, which adds each stratum's samples in sample order, as bincount.
    from scipy.sparse import csr_matrix

    by = np.argsort(label, kind="stable")
    strata = csr_matrix(
        (np.ones(budget), by, np.concatenate([[0], np.cumsum(n_h)]).astype(np.int64)),
        shape=(h, budget),
    )
    fpc = 1.0 - n_h / sizes
    with np.errstate(divide="ignore", invalid="ignore"):  # empty strata: none when n' >= 2
        g = ((sizes / n) ** 2 * fpc / n_h)[:, None]
    dof = np.maximum(n_h - 1, 1)[:, None]
    out: list[AccuracyInterval] = []
    group = max(1, ESTIMATES_BYTES // (8 * max(budget, 1)))
    for a in range(0, models, group):
        rows_o = np.asarray(obs[a : a + group])
        rows_p = np.asarray(prob_at[a : a + group])
        # Sums of 0/1 results (and of 0/1 predictions) are whole numbers, exact in any
        # order: taken along each model's own row, not down the columns.
        o_sum = rows_o.sum(axis=1, dtype=np.float64)
        if rows_p.dtype == bool and rows_o.dtype.kind in "biu":
            # 0/1 predictions (a threshold's): the residuals are whole numbers, formed
            # in int8 and made floats once, (n', models).
            resid = np.ascontiguousarray((rows_o.astype(np.int8) - rows_p).T, dtype=np.float64)
            p_sum = np.count_nonzero(rows_p, axis=1).astype(np.float64)
        else:
            o = np.ascontiguousarray(rows_o.T, dtype=np.float64)  # (n', models)
            p = np.ascontiguousarray(rows_p.T, dtype=np.float64)
            resid = o - p
            p_sum = p.sum(axis=0)
        mean_h = (strata @ resid) / np.maximum(n_h, 1)[:, None]
        unsampled = total[a : a + group] - p_sum
        acc = (o_sum + unsampled + ((sizes - n_h)[:, None] * mean_h).sum(axis=0)) / n
        acc = np.clip(acc, 0.0, 1.0)
        seen = o_sum.astype(np.int64)
        if budget >= n or budget < 2:
            var = np.zeros(len(acc))
        else:
            resid -= np.take(mean_h, label, axis=0)
            resid *= resid
            s2_h = (strata @ resid) / dof
            var = (g * s2_h).sum(axis=0) * factor[a : a + group]
            with np.errstate(divide="ignore", invalid="ignore"):
                df = var**2 / ((g * s2_h) ** 2 / dof).sum(axis=0)
                se = np.sqrt(var)
            live = ~(var <= 0.0)
            half = np.zeros(len(acc))
            if live.any():
                half[live] = stdtrit(df[live], 0.5 + level / 2.0) * se[live]
        for r in range(len(acc)):
            x = float(acc[r])
            if budget >= n:  # every item evaluated: exact, whatever the predictions
                out.append(AccuracyInterval(x, x, x, 0.0, 0.0))
            elif budget < 2:
                out.append(
                    guard_interval(x, None, int(seen[r]), budget, n, level)
                    if guard
                    else _no_interval(x)
                )
            elif var[r] <= 0.0:
                out.append(
                    guard_interval(x, None, int(seen[r]), budget, n, level)
                    if guard
                    else AccuracyInterval(x, x, x, 0.0, 0.0)
                )
            elif guard:
                out.append(
                    guard_interval(
                        x, (float(se[r]), float(half[r])), int(seen[r]), budget, n, level
                    )
                )
            else:
                hw = float(half[r])
                out.append(
                    AccuracyInterval(x, max(x - hw, 0.0), min(x + hw, 1.0), float(se[r]), hw)
                )
    return out


def guard_interval(
    acc: float,
    t_interval: tuple[float, float] | None,
    correct: int,
    budget: int,
    n: int,
    level: float = 0.95,
) -> AccuracyInterval:
    """The guarded interval of the module docstring, from the t-interval's parts.

    The one rule, for :func:`difference_estimate_at` and for any path that computes the
    difference estimator's t-interval by other means (e.g. many models at once): with no
    estimated variance, a simple random sample's exact interval of the evaluated share
    widened to hold ``acc``; with no evaluated item right (or none wrong), the hull of the
    t-interval and that exact interval; else the t-interval as it is.

    Parameters
    ----------
    acc : float
        The difference estimator's accuracy, in ``[0, 1]``.
    t_interval : tuple of (float, float) or None
        ``(se, half)``: the estimated standard error and the t-interval's half-width
        ``t * se``; None when the sample gives no variance (zero, or one evaluated item).
    correct : int
        Evaluated items right.
    budget : int
        Evaluated items, ``n'`` (below ``n``).
    n : int
        The number of items.
    level : float
        The interval's coverage.

    Returns
    -------
    AccuracyInterval
        ``guarded`` says whether the t-interval was replaced or widened.
    """
    if t_interval is None:
        lo_srs, hi_srs = _srs_limits(correct, budget, n, level)
        lo, hi = min(lo_srs, acc), max(hi_srs, acc)
        return AccuracyInterval(acc, lo, hi, None, max(acc - lo, hi - acc), True)
    se, half = t_interval
    lo, hi = acc - half, acc + half
    if correct in (0, budget):
        # An outcome never seen: the hull with the exact interval, which reaches 0 (1).
        lo_srs, hi_srs = _srs_limits(correct, budget, n, level)
        if lo_srs < lo or hi_srs > hi:
            lo, hi = min(lo, lo_srs), max(hi, hi_srs)
            return AccuracyInterval(
                acc, max(lo, 0.0), min(hi, 1.0), se, max(acc - lo, hi - acc), True
            )
    return AccuracyInterval(acc, max(lo, 0.0), min(hi, 1.0), se, half)


def _no_interval(acc: float) -> AccuracyInterval:
    return AccuracyInterval(acc, None, None, None, None)


def _srs_limits(correct: int, budget: int, n: int, level: float) -> tuple[float, float]:
    from lifelong_core.methods.random_sample import hypergeometric_limits

    lo, hi = hypergeometric_limits(int(correct), int(budget), int(n), float(level))
    return lo / n, hi / n


# The self-tuning estimators (``mirt-cv``, ``auto``) cross-validate on at most this many
# models and samples of the cache: bounded, deterministic work whatever its size.
CV_MODELS = 150
CV_SAMPLES = 1500


def cv_block(m: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of the cache that the self-tuning estimators cross-validate on.

    All of them up to :data:`CV_MODELS` rows and :data:`CV_SAMPLES` columns, else a
    uniform draw without replacement from ``rng`` (the rows first, then the columns).

    Parameters
    ----------
    m : int
        The cache's number of models (rows).
    n : int
        The cache's number of samples (columns).
    rng : numpy.random.Generator
        The draw of the rows and columns when there are more than the caps; not used
        otherwise.

    Returns
    -------
    rows : numpy.ndarray
        int64 row numbers, ascending, at most :data:`CV_MODELS`.
    cols : numpy.ndarray
        int64 column numbers, ascending, at most :data:`CV_SAMPLES`.
    """
    rows = np.sort(rng.choice(m, CV_MODELS, replace=False)) if m > CV_MODELS else np.arange(m)
    cols = np.sort(rng.choice(n, CV_SAMPLES, replace=False)) if n > CV_SAMPLES else np.arange(n)
    return rows, cols


def cv_budgets(n: int, budgets: tuple[int, ...]) -> list[int]:
    """The budgets scored when cross-validating on a block of ``n`` columns.

    Parameters
    ----------
    n : int
        The block's number of columns.
    budgets : tuple of int
        The budgets asked for.

    Returns
    -------
    list of int
        Each budget capped at half of the columns (at least 2), without repeats,
        ascending.
    """
    return sorted({min(b, max(n // 2, 2)) for b in budgets})
