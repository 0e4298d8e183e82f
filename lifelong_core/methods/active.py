"""Active item choice: a stratified pilot, then the items whose result is least sure.

Zrnic & Candès, 2024, "Active Statistical Inference" (ICML), §2-3, and Kossen, Farquhar,
Gal & Rainforth, 2021, "Active Testing: Sample-Efficient Model Evaluation" (ICML), §3-4:
evaluate where a prediction of the new model's result is least certain, and weight each
evaluated item by the inverse of its chance of being chosen, so the estimate stays unbiased
whatever the prediction gets wrong. The design here, over a cache's items in its easy ->
hard order (Prabhu et al., 2024, "Efficient Lifelong Model Evaluation in an Era of Rapid
Progress", §3.1), for a budget of ``n'`` items:

1. **Pilot.** About a quarter of ``n'`` (:data:`PILOT`, :func:`pilot_size`) is a stratified
   random sample along the order, two items per stratum
   (:func:`.design.stratified_positions`; Cochran, *Sampling Techniques*, 3rd ed., 1977,
   §5.3). Its results fix the new model's ability in the cache's item model.
2. **The rest.** Every item ``j`` not yet evaluated gets the predicted standard deviation
   ``s_j = sqrt(p_j (1 - p_j))`` of its result (Neyman's allocation taken to strata of one
   item: Neyman, 1934, "On the two different aspects of the representative method"; the
   allocation Zrnic & Candès derive for a mean, their §3), mixed with a uniform floor
   (:data:`FLOOR`, Zrnic & Candès' mixing with the uniform rule, and Hesterberg's defensive
   mixture, 1995, "Weighted average importance sampling and defensive mixture
   distributions", Technometrics 37), so no item's chance is tiny: ``w_j = (1 - FLOOR)
   s_j / mean(s) + FLOOR``. Items are taken with certainty where ``n_2 w_j / W >= 1``;
   the others, along the order, are cut into ``H`` *zones* of (about) equal total weight,
   and one item is drawn in each zone with chance ``q_j = w_j / W_zone`` (probability
   proportional to size with one draw per stratum; Cochran §9A.3, Hansen & Hurwitz, 1943,
   "On the theory of sampling from finite populations").
3. **The estimate.** Each round estimates the number right over every item with a
   difference estimator whose predictions are **cross-fitted** (Zrnic & Candès §4;
   Chernozhukov et al., 2018, "Double/debiased machine learning", Econometrics J. 21): the
   round's strata (the pilot) or zones (a later round) form two folds, alternate strata or
   alternate pairs of zones, and each fold's predictions come from the ability fitted on
   everything else evaluated, the other fold included, never on its own results. The pilot
   gives the stratified difference estimator (Särndal, Swensson & Wretman, *Model Assisted
   Survey Sampling*, 1992, §6.3); a zone round the Horvitz-Thompson difference estimator:
   the results of everything evaluated before it and of its certain items as they are, and
   for each zone its items' predicted total ``P_z`` plus the drawn item's residual over its
   chance, ``(y_J - p_J) / q_J``. Given the rounds before it, each round's estimate is
   unbiased whatever the predictions are. The stages are combined with weights fixed before
   each round is drawn, the inverse of the variance its design predicts (each item's result
   Bernoulli with the predicted chance, kept in ``[FLOOR_CLIP, 1 - FLOOR_CLIP]``), so the
   rounds' errors are martingale differences (Des Raj, 1956, "Some estimators in sampling
   with varying probabilities without replacement", JASA 51, round by round); the
   combination is unbiased up to the randomness of its normalising sum of weights.
4. **Its variance** is the weighted sum of the rounds': within each pilot stratum (two draws)
   and, one draw per zone giving no variance within a zone, from **pairs of zones**:
   neighbouring zones are collapsed in pairs (a triple when their number is odd) and the
   spread within each pair estimates the variance (collapsed strata: Cochran §5A.12;
   Hartley, Rao & Kiefer, 1969, "Variance estimation with one unit per stratum", JASA 64),
   which errs on the side of too wide. Each round's variance is at least the one it would
   have if every item it expands kept a :data:`FLOOR_CLIP` chance of either result: the
   observed spread misses rare results that have not turned up (a model that fails nearly
   every MATH item). The interval is Student-t with Satterthwaite's degrees of freedom over
   the strata and pairs (Cochran §5.4).

**Rounds.** The same holds round after round (the ``adaptive`` command): the first round is
the pilot, every later round a zone round over what is left, designed from every result so
far, and all rounds are combined as above. With the pilot alone, the estimate is the
one-round estimate of the method the design is built on (``mirt``'s stratified difference
estimator), as where results come back in one go.

Departures from the papers, all in the direction of a fixed budget and a valid interval:
Zrnic & Candès draw each item independently (Poisson sampling: the budget holds on average),
here the zones make the number exact; Kossen et al. draw one item at a time, here a round
draws many, so rounds can be run by a harness; and the pilot replaces their pre-trained
prediction. ``pilot=0`` and ``cross_fit=False`` give the simpler versions (one zone round
from the cache's typical model; the design's own predictions in the estimator).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import stdtrit

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, check_fitted
from lifelong_core.methods.design import StratifiedAlongOrder, stratified_positions

PILOT = 0.25  # the pilot's share of the budget
FLOOR = 0.1  # the uniform rule's share in the selection weights
FLOOR_CLIP = 0.005  # least chance of either result in the variance floor


# P(correct) of every item from a new model's results on some columns.
Predict = Callable[[np.ndarray, np.ndarray], np.ndarray]
# The one-round estimate of the method the design is built on (None: the pilot's own).
OneShot = Callable[[np.ndarray, np.ndarray], Estimate] | None


def pilot_size(budget: int, pilot: float = PILOT) -> int:
    """How many of ``budget`` items the stratified pilot takes.

    Parameters
    ----------
    budget : int
        The total number of items to evaluate.
    pilot : float
        The pilot's share, in ``[0, 1]``.

    Returns
    -------
    int
        ``round(pilot * budget)``, at least 2 and leaving at least 4 items (two pairs of
        zones) for the second stage; the whole budget when it is too small for both, and
        0 with ``pilot=0``.
    """
    if pilot <= 0:
        return 0
    if budget < 6:
        return int(budget)
    return int(min(max(2, round(pilot * budget)), budget - 4))


def selection_weights(p: np.ndarray, floor: float = FLOOR) -> np.ndarray:
    """The selection weight of each item: its predicted standard deviation, mixed with a
    uniform share ``floor`` (weights average 1).

    Parameters
    ----------
    p : numpy.ndarray
        Predicted P(correct) of each item.
    floor : float
        The uniform rule's share, in ``(0, 1]``.

    Returns
    -------
    numpy.ndarray
        ``(1 - floor) * s / mean(s) + floor`` with ``s = sqrt(p (1 - p))``; all 1 when no
        item is uncertain.
    """
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    s = np.sqrt(p * (1.0 - p))
    if not s.any():
        return np.ones(len(p))
    return (1.0 - floor) * s / s.mean() + floor


@dataclass(frozen=True)
class Zones:
    """One zone round's design over the items not yet evaluated (module docstring, 2).

    Attributes
    ----------
    rest : numpy.ndarray
        int64 columns not yet evaluated before the round, along the easy -> hard order.
    p : numpy.ndarray
        Their predicted P(correct) when the round was designed.
    label : numpy.ndarray
        The zone of each column of ``rest``; -1 for a column taken with certainty.
    q : numpy.ndarray
        Each column's chance of being its zone's draw (1 where taken with certainty).
    zones : int
        The number of zones (one draw each).
    """

    rest: np.ndarray
    p: np.ndarray
    label: np.ndarray
    q: np.ndarray
    zones: int

    @property
    def certain(self) -> np.ndarray:
        """Columns taken with certainty."""
        return self.rest[self.label < 0]

    @property
    def groups(self) -> np.ndarray:
        """The group (pair, or a last triple) of each zone: the variance's collapsed strata."""
        g = np.arange(self.zones) // 2
        if self.zones % 2 and self.zones > 1:
            g[-1] = g[-2]
        return g

    @property
    def folds(self) -> np.ndarray:
        """The cross-fitting fold (0 or 1) of each zone: alternate groups."""
        return self.groups % 2


def zone_design(rest: np.ndarray, p_rest: np.ndarray, size: int, floor: float = FLOOR) -> Zones:
    """The zones of a round of ``size`` items over ``rest`` (module docstring, 2).

    Parameters
    ----------
    rest : numpy.ndarray
        int64 columns not yet evaluated, along the easy -> hard order.
    p_rest : numpy.ndarray
        Their predicted P(correct), from the results so far.
    size : int
        How many to evaluate, in ``[1, len(rest)]``.
    floor : float
        The uniform rule's share in the weights.

    Returns
    -------
    Zones
    """
    rest = np.asarray(rest, dtype=np.int64)
    n = len(rest)
    w = selection_weights(p_rest, floor)
    label = np.zeros(n, dtype=np.int64)
    certain = np.zeros(n, dtype=bool)
    # Certainty: an item whose share of the round's expected draws reaches 1 is taken.
    while True:
        k = size - int(certain.sum())
        if k <= 0:
            break
        free = ~certain
        pi = k * w * free / w[free].sum()
        new = pi >= 1.0
        if not new.any():
            break
        certain |= new
    h = size - int(certain.sum())
    free = np.flatnonzero(~certain)
    q = np.ones(n)
    label[certain] = -1
    if h > 0:
        wf = w[free]
        mid = np.cumsum(wf) - wf / 2.0
        lab = np.minimum((h * mid / wf.sum()).astype(np.int64), h - 1)
        if len(np.unique(lab)) < h:
            # A zone left empty (items of about a zone's weight side by side): cut by count
            # instead; any cut along the order is a valid design, this one is balanced.
            lab = np.repeat(
                np.arange(h), np.diff(np.linspace(0, len(free), h + 1).round().astype(int))
            )
        label[free] = lab
        zone_w = np.bincount(lab, weights=wf, minlength=h)
        q[free] = wf / zone_w[lab]
    return Zones(rest, np.asarray(p_rest, dtype=np.float64), label, q, h)


def draw_zones(z: Zones, rng: np.random.Generator) -> np.ndarray:
    """The round's columns: every certain one and one drawn in each zone with chance ``q``.

    Parameters
    ----------
    z : Zones
        The round's design.
    rng : numpy.random.Generator
        The random draw.

    Returns
    -------
    numpy.ndarray
        int64 columns, ascending.
    """
    picks = [z.certain]
    if z.zones:
        # Zones are runs along the order: each zone's items are consecutive in ``rest``.
        free = np.flatnonzero(z.label >= 0)
        sizes = np.bincount(z.label[free], minlength=z.zones)
        start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        u = rng.random(z.zones)
        pick = np.empty(z.zones, dtype=np.int64)
        for zone in range(z.zones):
            run = np.cumsum(z.q[free[start[zone] : start[zone] + sizes[zone]]])
            # The first item whose running chance passes the zone's uniform draw.
            pick[zone] = start[zone] + min(
                int(np.searchsorted(run, u[zone], side="right")), sizes[zone] - 1
            )
        picks.append(z.rest[free[pick]])
    return np.sort(np.concatenate(picks))


@dataclass(frozen=True)
class RoundEstimate:
    """One zone round's estimate of the total number right (module docstring, 3-4).

    Attributes
    ----------
    total : float
        The Horvitz-Thompson difference estimate of the number right over every item.
    var : float
        Its estimated variance (pairs of zones), at least ``var_pred``.
    var_pred : float
        The variance the design predicted before the round, with every unevaluated item's
        P(correct) kept in ``[FLOOR_CLIP, 1 - FLOOR_CLIP]``: the variance's floor, and the
        round's weight in a combination.
    pairs : numpy.ndarray
        Each group's share of the pairs' variance and its degrees of freedom, (groups, 2).
    """

    total: float
    var: float
    var_pred: float
    pairs: np.ndarray


def predicted_variance(
    z: Zones, p: np.ndarray, clip: float = 0.0, mask: np.ndarray | None = None
) -> float:
    """The variance of a zone round's estimate if each item's result were Bernoulli(``p``):
    ``sum_j p_j (1 - p_j) (1 / q_j - 1)`` over the zones' items.

    Parameters
    ----------
    z : Zones
        The round's design.
    p : numpy.ndarray
        P(correct) of each column of ``z.rest``.
    clip : float
        Keep every P(correct) in ``[clip, 1 - clip]``.
    mask : numpy.ndarray, optional
        1 for each column of ``z.rest`` counted, 0 for the others (a task's items).

    Returns
    -------
    float
    """
    pc = np.clip(p, clip, 1.0 - clip)
    free = z.label >= 0
    m = np.ones(len(z.rest)) if mask is None else mask
    return float(np.sum((m * pc * (1.0 - pc))[free] * (1.0 / z.q[free] - 1.0)))


def round_estimate(
    z: Zones,
    known: tuple[np.ndarray, np.ndarray],
    cols: np.ndarray,
    obs: np.ndarray,
    predict: Predict,
    cross_fit: bool = True,
    mask: np.ndarray | None = None,
) -> RoundEstimate:
    """The Horvitz-Thompson difference estimate of one zone round (module docstring, 3-4).

    Parameters
    ----------
    z : Zones
        The round's design.
    known : tuple of numpy.ndarray
        Columns and results evaluated before the round.
    cols, obs : numpy.ndarray
        The round's columns (the certain ones and one per zone) and their 0/1 results.
    predict : callable
        ``predict(columns, results)``: P(correct) of every item from those results.
    cross_fit : bool
        Predict each fold's zones from everything but that fold's draws; False uses the
        design's own predictions (made before the round).
    mask : numpy.ndarray, optional
        Estimate the number right over these items only (a task: domain estimation,
        Särndal et al. 1992, §10.3), a 0/1 value per item; default every item.

    Returns
    -------
    RoundEstimate

    Raises
    ------
    InputError
        If the round's columns are not the certain ones and one per zone.
    """
    kc, ko = (np.asarray(a) for a in known)
    cols = np.asarray(cols, dtype=np.int64)
    obs = np.asarray(obs, dtype=np.float64)
    sorter = np.argsort(z.rest)
    at = sorter[np.minimum(np.searchsorted(z.rest, cols, sorter=sorter), len(z.rest) - 1)]
    if len(cols) and (z.rest[at] != cols).any():
        raise InputError("a round's items must be items not evaluated before it.")
    lab = z.label[at]
    if not np.array_equal(np.sort(lab[lab >= 0]), np.arange(z.zones)) or np.sum(lab < 0) != len(
        z.certain
    ):
        raise InputError(
            "a round's items are not the ones its design draws (every certain item and one per "
            "zone); were they chosen with another cache, method or earlier results?"
        )
    n_all = int(max(z.rest.max(initial=-1), kc.max(initial=-1), cols.max(initial=-1))) + 1
    m_all = np.ones(n_all) if mask is None else np.asarray(mask, dtype=np.float64)
    m = m_all[z.rest]
    certain = lab < 0
    base = float((m_all[kc] * ko).sum()) + float((m_all[cols[certain]] * obs[certain]).sum())
    zone_of = lab[~certain]
    drawn = at[~certain]
    y = obs[~certain]
    order = np.argsort(zone_of)
    zone_of, drawn, y = zone_of[order], drawn[order], y[order]
    folds = z.folds
    free = z.label >= 0
    # Each zone's predictions: the design's, or (cross-fitted) from everything but its fold.
    p_use = dict.fromkeys((0, 1), z.p)
    if cross_fit:
        for f in (0, 1):
            other = folds[zone_of] != f
            c = np.concatenate([kc, cols[certain], z.rest[drawn[other]]]).astype(np.int64)
            o = np.concatenate([ko, obs[certain], y[other]])
            p_use[f] = np.asarray(predict(c, o), dtype=np.float64)[z.rest]
    # Each zone's estimate: its predicted total (fixed given the fold's predictions) plus
    # the drawn item's residual over its chance (the random part, ``r``).
    predicted = np.empty(z.zones)
    r = np.empty(z.zones)
    for f in (0, 1):
        p = p_use[f]
        sums = np.bincount(z.label[free], weights=(m * p)[free], minlength=z.zones)
        mine = folds[zone_of] == f
        d = drawn[mine]
        predicted[zone_of[mine]] = sums[zone_of[mine]]
        r[zone_of[mine]] = m[d] * (y[mine] - p[d]) / z.q[d]
    total = base + float(predicted.sum() + r.sum())
    sizes = np.bincount(z.label[free], weights=m[free], minlength=z.zones)
    groups = z.groups
    pairs = []
    var = 0.0
    for g in np.unique(groups):
        h = groups == g
        if h.sum() < 2:
            continue
        # Collapsed strata on the random part only: the zones' predicted totals differ by
        # design (fixed, no variance) and would only widen the estimate.
        rg, ng = r[h].sum(), sizes[h].sum()
        fit = sizes[h] / ng * rg if ng > 0 else np.full(h.sum(), rg / h.sum())
        share = h.sum() / (h.sum() - 1.0) * float(np.sum((r[h] - fit) ** 2))
        pairs.append((share, h.sum() - 1.0))
        var += share
    var_floor = predicted_variance(z, np.full(len(z.rest), FLOOR_CLIP), mask=m)
    return RoundEstimate(
        total,
        max(var, var_floor),
        predicted_variance(z, z.p, FLOOR_CLIP, mask=m),
        np.asarray(pairs if pairs else np.zeros((0, 2))),
    )


def pilot_estimate(
    rank: np.ndarray,
    cols: np.ndarray,
    obs: np.ndarray,
    predict: Predict,
    cross_fit: bool = True,
    mask: np.ndarray | None = None,
) -> RoundEstimate:
    """The pilot's own estimate of the total: the stratified difference estimator over its
    strata along the order (Cochran 1977, §5.3; Särndal et al. 1992, §6.3), each stratum's
    predictions cross-fitted from the other strata's results (alternate strata).

    Parameters
    ----------
    rank : numpy.ndarray
        Each item's position in the easy -> hard order.
    cols, obs : numpy.ndarray
        The pilot's columns and 0/1 results.
    predict : callable
        ``predict(columns, results)``: P(correct) of every item.
    cross_fit : bool
        Predict each stratum from the other fold's results; False uses the cache's typical
        model (no result), fixed before the pilot.
    mask : numpy.ndarray, optional
        Estimate the number right over these items only (a task: domain estimation,
        Särndal et al. 1992, §10.3); default every item.

    Returns
    -------
    RoundEstimate
    """
    from lifelong_core.methods.design import _strata_of

    n = len(rank)
    m = np.ones(n) if mask is None else np.asarray(mask, dtype=np.float64)
    cols = np.asarray(cols, dtype=np.int64)
    obs = np.asarray(obs, dtype=np.float64)
    label, sizes = _strata_of(rank[cols], n, len(cols))
    edges = np.concatenate(([0], np.cumsum(sizes)))
    item_label = np.searchsorted(edges, rank, side="right") - 1
    strata = len(sizes)
    fold = np.arange(strata) % 2
    prior = np.asarray(predict(cols[:0], obs[:0]), dtype=np.float64)
    p_use = dict.fromkeys((0, 1), prior)
    if cross_fit:
        for f in (0, 1):
            other = fold[label] != f
            p_use[f] = np.asarray(predict(cols[other], obs[other]), dtype=np.float64)
    p_item = np.where(fold[item_label] == 0, p_use[0], p_use[1])
    resid = m[cols] * (obs - p_item[cols])
    n_h = np.bincount(label, minlength=strata).astype(np.float64)
    mean_h = np.bincount(label, weights=resid, minlength=strata) / np.maximum(n_h, 1)
    total = float((m * p_item).sum() + (sizes * mean_h).sum())
    ss = np.bincount(label, weights=(resid - mean_h[label]) ** 2, minlength=strata)
    g = sizes.astype(np.float64) ** 2 * (1.0 - n_h / sizes) / np.maximum(n_h, 1)
    share = g * ss / np.maximum(n_h - 1, 1)
    pc = np.clip(prior, FLOOR_CLIP, 1.0 - FLOOR_CLIP)
    sigma2 = np.bincount(item_label, weights=m * pc * (1.0 - pc), minlength=strata) / sizes
    var_pred = float((g * sigma2).sum())
    inside = np.bincount(item_label, weights=m, minlength=strata) / sizes
    var_floor = float((g * inside).sum()) * FLOOR_CLIP * (1.0 - FLOOR_CLIP)
    pairs = np.column_stack([share, n_h - 1])[n_h >= 2]
    return RoundEstimate(total, max(float(share.sum()), var_floor), var_pred, pairs)


def combine_rounds(
    rounds: Sequence[RoundEstimate], n: int, level: float
) -> tuple[float, float | None, float | None, float | None]:
    """The zone rounds' estimates combined with weights fixed before each round (module
    docstring, Rounds): accuracy, interval and half-width.

    Parameters
    ----------
    rounds : sequence of RoundEstimate
        Every zone round, in order (at least one).
    n : int
        The number of items.
    level : float
        The interval's coverage.

    Returns
    -------
    tuple
        ``(acc, lo, hi, half)``: the accuracy in ``[0, 1]``, its interval (clipped) and the
        half-width before clipping.
    """
    lam = np.array([1.0 / max(r.var_pred, 1e-12) for r in rounds])
    lam = lam / lam.sum()
    total = float(sum(w * r.total for w, r in zip(lam, rounds)))
    var = float(sum(w * w * r.var for w, r in zip(lam, rounds)))
    acc = total / n
    if var <= 0:
        return float(np.clip(acc, 0, 1)), None, None, None
    # Satterthwaite over every pair of zones of every round (each pair 1 df, a triple 2).
    shares = [(w * w * s, df) for w, r in zip(lam, rounds) for s, df in r.pairs]
    parts = sum(s for s, _ in shares)
    if parts > 0:
        df = parts**2 / sum(s * s / d for s, d in shares if d > 0)
    else:
        df = float(max(1, sum(len(r.pairs) for r in rounds)))
    half = float(stdtrit(max(df, 1.0), 0.5 + level / 2.0)) * np.sqrt(var) / n
    return float(np.clip(acc, 0, 1)), max(acc - half, 0.0), min(acc + half, 1.0), half


class RoundsDesign:
    """The active design over one cache, for any predictor (module docstring).

    Parameters
    ----------
    order : numpy.ndarray
        The easy -> hard order of the items.
    predict : callable
        ``predict(columns, results)``: P(correct) of every item of a new model from its
        results on some columns (the method's ability fit).
    one_shot : callable or None
        ``one_shot(columns, results)``: the method's own estimate from one stratified round
        (the pilot alone); None gives the pilot's cross-fitted stratified estimate.
    level : float
        The interval's coverage.
    floor : float
        The uniform rule's share in the selection weights.
    cross_fit : bool
        Cross-fit the predictions of each zone round's estimate.
    """

    def __init__(
        self,
        order: np.ndarray,
        predict: Predict,
        one_shot: OneShot,
        level: float = 0.95,
        floor: float = FLOOR,
        cross_fit: bool = True,
    ):
        self.order = np.asarray(order, dtype=np.int64)
        self.n = len(self.order)
        self.rank = np.empty_like(self.order)
        self.rank[self.order] = np.arange(self.n)
        self.predict, self.one_shot = predict, one_shot
        self.level, self.floor, self.cross_fit = level, floor, cross_fit

    def _known(self, columns: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cols = np.asarray(columns, dtype=np.int64)
        obs = np.asarray(observed)
        if cols.shape != obs.shape or len(np.unique(cols)) != len(cols):
            raise InputError("the results so far must be one 0/1 result per distinct column.")
        if len(cols) and (cols.min() < 0 or cols.max() >= self.n):
            raise InputError(f"a column of the results so far is outside [0, {self.n}).")
        if not np.isin(obs, (0, 1)).all():
            raise InputError("the results so far must be 0 or 1.")
        return cols, obs.astype(np.uint8)

    def zones(self, columns: np.ndarray, observed: np.ndarray, size: int) -> Zones:
        """The design of a zone round of ``size`` items after the results so far.

        Parameters
        ----------
        columns, observed : array_like
            Every column evaluated so far and its 0/1 result.
        size : int
            The round's number of items, in ``[1, n - evaluated]``.

        Returns
        -------
        Zones

        Raises
        ------
        InputError
            On results that do not match, or a size out of range.
        """
        cols, obs = self._known(columns, observed)
        left = np.ones(self.n, dtype=bool)
        left[cols] = False
        rest = self.order[left[self.order]]
        if not 1 <= size <= len(rest):
            raise InputError(f"a round must evaluate between 1 and {len(rest)} items, got {size}.")
        p = np.asarray(self.predict(cols, obs), dtype=np.float64)[rest]
        return zone_design(rest, p, int(size), self.floor)

    def select_next(
        self,
        n: int,
        budget: int,
        rng: np.random.Generator,
        columns: np.ndarray,
        observed: np.ndarray,
    ) -> np.ndarray:
        """The next round's items: the pilot (stratified along the order) when nothing is
        evaluated yet, else a zone round over what is left.

        Parameters
        ----------
        n : int
            The number of items (the fitted one).
        budget : int
            The round's number of items.
        rng : numpy.random.Generator
            The random draw.
        columns, observed : array_like
            Every column evaluated so far and its 0/1 result.

        Returns
        -------
        numpy.ndarray
            int64 columns, ascending.

        Raises
        ------
        InputError
            If ``n`` is not the fitted number of items, or as :meth:`zones`.
        """
        if n != self.n:
            raise InputError(f"the design was fitted on {self.n} items, not {n}.")
        cols, obs = self._known(columns, observed)
        if len(cols) == 0:
            return np.sort(self.order[stratified_positions(n, budget, rng)])
        return draw_zones(self.zones(cols, obs, budget), rng)

    def estimate_rounds(
        self, rounds: Sequence[tuple[np.ndarray, np.ndarray]], domain: np.ndarray | None = None
    ) -> Estimate:
        """The estimate after the rounds (module docstring): the pilot's one-round estimate
        alone, else every round's combined.

        Parameters
        ----------
        rounds : sequence of (numpy.ndarray, numpy.ndarray)
            Each round's columns and 0/1 results, in the order the rounds were drawn; the
            first is the pilot.
        domain : numpy.ndarray, optional
            Boolean per item: estimate the accuracy over these items only (a task), from
            the same rounds (domain estimation, Särndal et al. 1992, §10.3); needs two
            rounds or more.

        Returns
        -------
        Estimate
            The accuracy and its interval, and the prediction of every item from every
            result (the observed result where evaluated).

        Raises
        ------
        InputError
            If there is no round, a round repeats an item, or a later round is not one its
            design draws.
        """
        if len(rounds) == 1 and self.one_shot is not None and domain is None:
            c, o = self._known(*rounds[0])
            if len(c) < self.n:
                return self.one_shot(c, o)
        acc, lo, hi, _, kc, ko = self.interval(rounds, domain)
        if len(kc) == self.n:
            per = np.empty(self.n, dtype=np.uint8)
            per[kc] = ko
            return Estimate(acc, lo, hi, per, per.astype(np.float64))
        prob = np.asarray(self.predict(kc, ko), dtype=np.float64).copy()
        per = (prob >= 0.5).astype(np.uint8)
        per[kc] = ko
        prob[kc] = ko
        return Estimate(acc, lo, hi, per, prob)

    def interval(
        self, rounds: Sequence[tuple[np.ndarray, np.ndarray]], domain: np.ndarray | None = None
    ) -> tuple:
        """The accuracy, its interval and half-width after the rounds, every round's
        estimate combined (module docstring); a single round is the pilot's own
        stratified estimate.

        Parameters
        ----------
        rounds : sequence of (numpy.ndarray, numpy.ndarray)
            Each round's columns and 0/1 results, in order.
        domain : numpy.ndarray, optional
            Boolean per item: over these items only.

        Returns
        -------
        tuple
            ``(acc, lo, hi, half, columns, results)``: ``lo``, ``hi`` and ``half`` are None
            when no variance can be estimated (a round of fewer than two items); the
            columns and results of every round put together.

        Raises
        ------
        InputError
            If there is no round, a round repeats an item, or a later round is not one its
            design draws.
        """
        if not rounds:
            raise InputError("no round to estimate from.")
        mask = None
        if domain is not None:
            mask = np.asarray(domain, dtype=bool)
            if mask.shape != (self.n,) or not mask.any() or len(rounds) < 2:
                raise InputError("a task's estimate from rounds needs its items and two rounds.")
        kc = np.zeros(0, dtype=np.int64)
        ko = np.zeros(0, dtype=np.uint8)
        est = []
        for r, (c, o) in enumerate(rounds):
            c, o = self._known(c, o)
            if np.isin(c, kc).any():
                raise InputError(f"round {r + 1} repeats an item of an earlier round.")
            if r == 0 and len(c) >= 2 and len(c) < self.n:
                est.append(pilot_estimate(self.rank, c, o, self.predict, self.cross_fit, mask))
            if r > 0 and len(kc) + len(c) < self.n:
                z = self.zones(kc, ko, len(c))
                est.append(round_estimate(z, (kc, ko), c, o, self.predict, self.cross_fit, mask))
            kc, ko = np.concatenate([kc, c]), np.concatenate([ko, o])
        inside = np.ones(self.n, dtype=bool) if mask is None else mask
        if len(kc) == self.n:
            per = np.empty(self.n, dtype=np.uint8)
            per[kc] = ko
            acc = float(per[inside].mean())
            return acc, acc, acc, 0.0, kc, ko
        if not est:
            return float(ko.mean()), None, None, None, kc, ko
        acc, lo, hi, half = combine_rounds(est, int(inside.sum()), self.level)
        return acc, lo, hi, half, kc, ko

    def rounds(self, budget: int, pilot: float = PILOT) -> list[int]:
        """The rounds of a budget: the pilot, then one zone round with the rest.

        Parameters
        ----------
        budget : int
            The total number of items.
        pilot : float
            The pilot's share.

        Returns
        -------
        list of int
            Round sizes adding up to ``budget`` (one round when the budget is too small
            for two).
        """
        first = pilot_size(budget, pilot)
        return (
            [budget]
            if first in (0, budget) and pilot > 0
            else [x for x in (first, budget - first) if x]
        )


def play_rounds(
    method: Any,
    n: int,
    budget: int,
    rng: np.random.Generator,
    oracle: Callable[[np.ndarray], np.ndarray],
) -> tuple[list[tuple[np.ndarray, np.ndarray]], Estimate]:
    """Evaluate a new model in the rounds a method plans for ``budget``, its results read
    from ``oracle`` (a stored row in a sweep or backtest), and estimate.

    Parameters
    ----------
    method : object
        Fitted, with ``rounds(n, budget)``, ``select_next`` and ``estimate_rounds``
        (:attr:`~lifelong_core.methods.registry.Capabilities.rounds`).
    n : int
        The number of items.
    budget : int
        The total number of items to evaluate.
    rng : numpy.random.Generator
        The random draws, round after round.
    oracle : callable
        ``oracle(columns)``: the 0/1 results of those columns.

    Returns
    -------
    rounds : list of (numpy.ndarray, numpy.ndarray)
        Each round's columns and results.
    estimate : Estimate
    """
    rounds: list[tuple[np.ndarray, np.ndarray]] = []
    cols = np.zeros(0, dtype=np.int64)
    obs = np.zeros(0, dtype=np.uint8)
    for size in method.rounds(n, budget):
        new = np.asarray(method.select_next(n, size, rng, cols, obs), dtype=np.int64)
        got = np.asarray(oracle(new), dtype=np.uint8)
        rounds.append((new, got))
        cols, obs = np.concatenate([cols, new]), np.concatenate([obs, got])
    return rounds, method.estimate_rounds(rounds)


class ActiveEstimator(StratifiedAlongOrder):
    """The active design (module docstring) on ``mirt``'s item model: a stratified pilot of
    about a quarter of the budget, then one item per zone where the prediction is least
    sure, and the Horvitz-Thompson difference estimator with cross-fitted abilities.

    Where results cannot come back between the rounds (``select`` then ``estimate`` in
    one go), the method is the pilot's design over the whole budget: ``mirt``'s stratified
    sample and difference estimator.

    Parameters
    ----------
    level : float
        Interval level, in ``(0, 1)``.
    pilot : float
        The pilot's share of the budget, in ``[0, 1)``; 0 draws every item by zones from
        the cache's typical model.
    floor : float
        The uniform rule's share in the selection weights, in ``(0, 1]``.
    cross_fit : bool
        Cross-fit the abilities of the zone rounds' estimates.
    k, iters, item_ridge : int, int, float
        The item model's settings (as ``mirt``).

    Examples
    --------
    >>> import numpy as np
    >>> from lifelong_core.methods import get_method
    >>> rng = np.random.default_rng(0)
    >>> A = (rng.random((30, 300)) < np.linspace(0.9, 0.1, 300)).astype(np.uint8)
    >>> m = get_method("active").fit(A[1:])
    >>> rounds, est = play_rounds(m, 300, 60, rng, lambda c: A[0, c])
    >>> [len(c) for c, _ in rounds], bool(est.lo <= est.acc <= est.hi)
    ([15, 45], True)
    """

    name = "active"

    def __init__(
        self,
        level: float = 0.95,
        pilot: float = PILOT,
        floor: float = FLOOR,
        cross_fit: bool = True,
        k: int = 10,
        iters: int = 25,
        item_ridge: float = 8.0,
    ):
        self.level, self.pilot, self.floor, self.cross_fit = level, pilot, floor, cross_fit
        self.k, self.iters, self.item_ridge = k, iters, item_ridge

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> ActiveEstimator:
        """Fit ``mirt``'s item model on the cache.

        Parameters
        ----------
        A_sort : numpy.ndarray
            The cache, models x items, 0/1.
        order : numpy.ndarray, optional
            The easy -> hard order of the items (default: by column sums, ties stable).
        confidence : numpy.ndarray, optional
            Not used.

        Returns
        -------
        ActiveEstimator
            Fitted.

        Raises
        ------
        InputError
            On a setting out of range, or a cache ``mirt`` cannot fit.
        """
        from lifelong_core.methods.irt import MIRTEstimator
        from lifelong_core.sortsearch.sort import order_from_sums

        if not 0 < self.level < 1 or not 0 <= self.pilot < 1 or not 0 < self.floor <= 1:
            raise InputError(
                f"level must be in (0, 1), pilot in [0, 1) and floor in (0, 1], got {self.level}, "
                f"{self.pilot} and {self.floor}."
            )
        A = np.asarray(A_sort)
        if order is None:
            order = order_from_sums(A.sum(axis=0))
        self.mirt_ = MIRTEstimator(self.k, self.iters, self.item_ridge, self.level).fit(A, order)
        self._set_order(order)
        self.design_ = design_on(self.mirt_, self.order_, self.level, self.floor, self.cross_fit)
        return self

    def estimate(self, positions: np.ndarray, observed: np.ndarray) -> Estimate:
        """One round's estimate: ``mirt``'s stratified difference estimator.

        Parameters
        ----------
        positions : numpy.ndarray
            The evaluated columns.
        observed : numpy.ndarray
            Their 0/1 results.

        Returns
        -------
        Estimate
        """
        check_fitted(self, "mirt_")
        return self.mirt_.estimate(positions, observed)

    def rounds(self, n: int, budget: int) -> list[int]:
        """The round sizes of ``budget`` items: the pilot, then the rest.

        Parameters
        ----------
        n : int
            The number of items (the fitted one).
        budget : int
            The total number of items.

        Returns
        -------
        list of int
        """
        check_fitted(self, "design_")
        return self.design_.rounds(budget, self.pilot)

    def select_next(
        self,
        n: int,
        budget: int,
        rng: np.random.Generator,
        columns: np.ndarray,
        observed: np.ndarray,
    ) -> np.ndarray:
        """The next round's items (:meth:`RoundsDesign.select_next`).

        Parameters
        ----------
        n : int
            The number of items.
        budget : int
            The round's number of items.
        rng : numpy.random.Generator
            The random draw.
        columns, observed : array_like
            Every column evaluated so far and its result.

        Returns
        -------
        numpy.ndarray
        """
        check_fitted(self, "design_")
        return self.design_.select_next(n, budget, rng, columns, observed)

    def estimate_rounds(
        self, rounds: Sequence[tuple[np.ndarray, np.ndarray]], domain: np.ndarray | None = None
    ) -> Estimate:
        """The estimate after the rounds (:meth:`RoundsDesign.estimate_rounds`).

        Parameters
        ----------
        rounds : sequence of (numpy.ndarray, numpy.ndarray)
            Each round's columns and results, in order.
        domain : numpy.ndarray, optional
            Boolean per item: the accuracy over these items only (a task).

        Returns
        -------
        Estimate
        """
        check_fitted(self, "design_")
        return self.design_.estimate_rounds(rounds, domain)


def design_on(
    mirt: Any, order: np.ndarray, level: float, floor: float = FLOOR, cross_fit: bool = True
) -> RoundsDesign:
    """The active design on a fitted item-model estimator (``mirt``, or the default's).

    Parameters
    ----------
    mirt : MIRTEstimator
        Fitted; its ``predict_proba`` gives the predictions, its ``estimate`` the pilot's.
    order : numpy.ndarray
        The easy -> hard order of the items.
    level : float
        The interval's coverage.
    floor : float
        The uniform rule's share in the selection weights.
    cross_fit : bool
        Cross-fit the zone rounds' predictions.

    Returns
    -------
    RoundsDesign
    """

    def predict(cols: np.ndarray, obs: np.ndarray) -> np.ndarray:
        if len(cols) == 0:
            from lifelong_core.methods.irt import all_item_probs

            item = mirt.item_
            return all_item_probs(item, item.prior_mean[None, :])[:, 0]
        return mirt.predict_proba(cols, obs)[0]

    return RoundsDesign(order, predict, mirt.estimate, level, floor, cross_fit)
