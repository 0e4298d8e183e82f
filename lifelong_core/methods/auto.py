"""The product's default estimator: the best of three predictors on the user's own cache.

Which prediction of a new model's unevaluated samples is best depends on the cache. With
hundreds of models an item-response model (``mirt``, :mod:`.irt`) predicts far better than
one global order; with a dozen models its abilities are poorly pinned down and Sort &
Search's threshold (Prabhu et al., 2024, "Efficient Lifelong Model Evaluation in an Era of
Rapid Progress", §3.2, the ``midpoint`` rule) or CopyNearest&Expand (the same paper, §4.2
Key Result 3) can do better; and which one wins may change with the budget ``n'``. So
:func:`tune_auto` measures them on the cache itself, by K-fold cross-validation over the
cache's models (Stone, 1974, "Cross-validatory choice and assessment of statistical
predictions", JRSS B 36; Hastie, Tibshirani & Friedman, *The Elements of Statistical
Learning*, 2nd ed., 2009, §7.10): each held-out model is "evaluated" on the design's own
random sample of ``n'`` samples (:func:`.design.stratified_positions` along the training
models' order) at every budget of :data:`CV_BUDGETS`, and each candidate predicts the
rest:

- ``threshold``: the first ``t`` samples of the easy -> hard order correct (midpoint rule);
- ``copy-nearest``: the row of the training model that agrees most with the evaluated
  samples (lowest row on ties);
- ``mirt``: the item model's P(correct) under the new model's MAP ability. Its size ``k``
  and ridge are searched coordinate-wise first (``k`` over :data:`K_GRID` at the default
  ridge, then the ridge over :data:`RIDGE_GRID` at the best ``k``) by the mean
  sample-level error over every budget, and ``mirt``'s fixed settings (k = 10, ridge 8;
  fewer directions on a cache too small for ten) are kept unless the best beats them by
  more than one standard error and by more than :data:`MARGIN` (:func:`_keep_or_move`):
  on a large cache the default is ``mirt`` itself unless the cache clearly says otherwise.

Per budget, two choices are recorded (:class:`Choice`): the candidate with the lowest
sample-level error on the unevaluated samples makes the per-sample prediction, and the one
whose accuracy interval would be narrowest feeds the accuracy estimate; each time the
simplest candidate (threshold, then CopyNearest&Expand, then the item model) within one
standard error of the best wins (the one-standard-error rule, Hastie et al. §7.10), so a
dozen models' noise does not pick the most flexible one. Where the threshold makes the
per-sample prediction the samples are evenly spaced along the order at a random offset
(:func:`.design.regular_positions`: Sort & Search's uniform grid, made a probability
sample), and it is scored on such draws; elsewhere two samples are drawn at random in each
stratum (:func:`.design.stratified_positions`). The accuracy predictor is scored
exactly: the held-out model's whole row is known, so the design variance of the
difference estimator with that candidate's predictions (the within-stratum variance of
its residuals, Cochran, *Sampling Techniques*, 3rd ed., 1977, §5.3; Särndal, Swensson &
Wretman, *Model Assisted Survey Sampling*, 1992, §6.3), times the interval's correction
for parameters fitted on the sample (below), is computed for every draw. At estimation the
choice of the nearest cross-validated budget (on a log scale) is used.

Where the results come back between two rounds (``select --rounds``, the Python API's
``rounds=True``), a fourth design is compared: the active item choice of
:mod:`.active` on the chosen item model (a stratified pilot, then one item per zone where
the prediction is least sure; Zrnic & Candès, 2024, "Active Statistical Inference";
Kossen et al., 2021, "Active Testing"). Its standard error is computed exactly from each
held-out row as the others' are (:func:`_score_active`), and it is taken at a budget
(:attr:`Choice.active`) only where it beats the chosen accuracy estimate by more than one
standard error of their paired difference; a caller that reads every result at once (one
``select`` then ``estimate``, sweeps, backtests) plays the budget in one round whatever the
choice.

The interval stays the design's: stratified random sampling along the order and the
difference estimator with a stratified t-interval (:mod:`.design`) are valid for any
predictions fixed before the results are seen; these predictions use the results, so the
interval corrects for it as for ``mirt``: residual variance times ``n' / (n' - df)``
(Särndal et al. §6.6) with ``df`` the ability fit's effective parameters (``mirt``) or 1
(the threshold); CopyNearest&Expand's residuals are taken leave-one-out (the nearest row
chosen without the sample), since choosing among the rows by their agreement fits more
than one parameter.

Bounded work, deterministic: at most :data:`~lifelong_core.methods.design.CV_MODELS` models and :data:`~lifelong_core.methods.design.CV_SAMPLES`
columns (seeded random subsets), leave-one-out below 10 models and 5 folds above,
:data:`CV_ITERS` alternating steps per candidate fit, and enough draws per budget that
every budget is scored on at least :data:`MIN_DRAWS` held-out evaluations (several draws
per held-out model on a small cache). Budgets above half the cross-validated columns use
the largest budget's choice. With fewer than 3 models there is nothing to cross-validate
on and the threshold is used (it has no fitted parameters); fitted from packed rows (a
store beyond the dense-read limit) CopyNearest&Expand is not a candidate, since it would
hold the whole cache. The choice is remembered per cache (:mod:`.tuning_memory`): a fit on
a cache already cross-validated, in this process or another, reuses it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit

from lifelong_core.bits import (
    SortOrder,
    bits_at,
    ones_before,
    packed_bits_at,
    row_totals,
    unpack_rows,
    word_prefix,
)
from lifelong_core.errors import InputError
from lifelong_core.methods.base import (
    Estimate,
    ItemModel,
    RowScores,
    check_fitted,
    check_observations,
    check_width,
)
from lifelong_core.methods.design import (
    StratifiedAlongOrder,
    cv_block,
    cv_budgets,
    difference_estimates_at,
    regular_positions,
    strata_bounds,
    stratified_positions,
)
from lifelong_core.methods.irt import (
    MIRTEstimator,
    check_cache,
    finish,
    finish_interval,
    fit_item_model,
    item_pass,
    map_abilities_each,
    map_abilities_many,
)
from lifelong_core.methods.irt_fit import product
from lifelong_core.methods.parallel import ordered_map
from lifelong_core.sortsearch.search import rule_thresholds, rule_thresholds_packed
from lifelong_core.sortsearch.sort import order_from_sums

CANDIDATES = ("threshold", "copy-nearest", "mirt")
# Compared with the chosen one-shot estimate where rounds can be played (needs mirt).
ROUNDS_CANDIDATE = "active"
# What a fit cross-validates (tune_auto's default leaves the rounds out for callers that
# only estimate in one shot).
FIT_CANDIDATES = (*CANDIDATES, ROUNDS_CANDIDATE)
CV_BUDGETS = (16, 32, 64, 128, 256, 512, 1024)
CV_ITERS = 15  # fewer alternating steps than the final fit: enough to rank configurations
MIN_DRAWS = 60
MARGIN = 0.01  # relative gain below which mirt's fixed settings are kept
K_GRID = (1, 2, 4, 10, 16)
RIDGE_GRID = (2.0, 8.0, 32.0)
DEFAULT_K = 10
DEFAULT_RIDGE = 8.0


@dataclass(frozen=True)
class Choice:
    """What the estimator uses at ``budget``: ``predict`` makes the per-sample prediction
    (lowest cross-validated sample-level error), ``estimate`` feeds the accuracy estimate
    (narrowest cross-validated interval), and ``active``: where the results can come back
    between two rounds, the active design (:mod:`.active`) clearly narrower than that."""

    budget: int
    predict: str
    estimate: str
    active: bool = False


@dataclass(frozen=True)
class AutoTuning:
    """The outcome of :func:`tune_auto`: the item model's ``k`` and ridge, the choice per
    cross-validated budget, and the table behind them (one row per candidate and budget:
    candidate, k, ridge, budget, mae, se, draws)."""

    k: int
    ridge: float
    choices: tuple[Choice, ...]
    table: list[dict] = field(default_factory=list)
    seconds: float = field(default=0.0, compare=False)  # how long, not what was chosen
    folds: int = 0

    def choice_at(self, budget: int) -> Choice:
        """The choice of the cross-validated budget nearest ``budget`` on a log scale."""
        budgets = np.array([c.budget for c in self.choices], dtype=float)
        i = int(np.argmin(np.abs(np.log(budgets) - np.log(max(int(budget), 1)))))
        return self.choices[i]

    def uses(self, candidate: str) -> bool:
        """Whether any budget's choice uses ``candidate`` (the active design uses the item
        model, ``mirt``)."""
        return any(
            candidate in (c.predict, c.estimate) or (c.active and candidate == "mirt")
            for c in self.choices
        )

    def to_params(self) -> dict:
        """A JSON-able record (kept in the store with the item parameters)."""
        return {
            "auto_k": int(self.k),
            "auto_ridge": float(self.ridge),
            "auto_choices": [[c.budget, c.predict, c.estimate, c.active] for c in self.choices],
        }

    @classmethod
    def from_params(cls, params: dict) -> AutoTuning | None:
        """The inverse of :meth:`to_params`; None if ``params`` holds no choices."""
        if "auto_choices" not in params:
            return None
        # Choices kept before the active candidate existed have three fields.
        choices = tuple(
            Choice(int(c[0]), str(c[1]), str(c[2]), bool(c[3]) if len(c) > 3 else False)
            for c in params["auto_choices"]
        )
        return cls(int(params["auto_k"]), float(params["auto_ridge"]), choices)

    def to_record(self) -> dict:
        """Everything, JSON-able (what :mod:`.tuning_memory` keeps on disk)."""
        return {
            **self.to_params(),
            "table": self.table,
            "seconds": float(self.seconds),
            "folds": int(self.folds),
        }

    @classmethod
    def from_record(cls, record: dict) -> AutoTuning:
        """The inverse of :meth:`to_record`.

        Raises
        ------
        KeyError, TypeError, ValueError
            If ``record`` is not such a record.
        """
        tuning = cls.from_params(record)
        if tuning is None:
            raise KeyError("auto_choices")
        table = [dict(row) for row in record["table"]]
        return cls(
            tuning.k,
            tuning.ridge,
            tuning.choices,
            table,
            float(record["seconds"]),
            int(record["folds"]),
        )


def _threshold_inflate(b: int) -> float:
    """The interval's correction for the threshold's one parameter fitted on ``b`` samples."""
    return b / max(b - 1.0, 1.0)


def _mirt_inflate(b: int, df: float | np.ndarray) -> float | np.ndarray:
    """The interval's correction for an ability fit with ``df`` effective parameters on
    ``b`` samples (residual variance times ``n' / (n' - df)``, Särndal et al. 1992, §6.6);
    ``df`` one number or an array of them."""
    return b / np.maximum(b - df, 1.0)


def _ones_in_first(packed: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The set bits among the first ``q[r]`` bits of each packed row ``r`` (little bit
    order)."""
    rows = np.arange(len(packed))
    before = np.bitwise_count(packed).cumsum(axis=1, dtype=np.int64)
    full, rem = q // 8, q % 8
    out = np.where(full > 0, before[rows, np.maximum(full - 1, 0)], 0)
    last = packed[rows, np.minimum(full, packed.shape[1] - 1)]
    part = np.bitwise_count(last & ((1 << rem) - 1).astype(np.uint8))
    return out + np.where(rem > 0, part, 0)


def _folds(m: int, rng: np.random.Generator) -> list[np.ndarray]:
    perm = rng.permutation(m)
    f = m if m < 10 else 5
    return [np.sort(perm[i::f]) for i in range(f)]


def _threshold_fallback(budgets: Sequence[int] = CV_BUDGETS) -> AutoTuning:
    return AutoTuning(
        DEFAULT_K, DEFAULT_RIDGE, tuple(Choice(b, "threshold", "threshold") for b in budgets)
    )


@dataclass
class _Draws:
    """The cross-validation's draws: per draw its fold, held-out row, budget and columns,
    and the design's strata of that fold and budget (:class:`_Strata`)."""

    fold: list
    row: list
    budget: list
    cols: list  # the stratified design's columns (copy-nearest, mirt)
    regular: list  # the regular design's columns, drawn with the same generator (threshold)
    strata: list


@dataclass(frozen=True)
class _Strata:
    """The design's strata of one fold's order at one budget: each column's stratum and
    the weight ``(N_h / N)^2 (1 - n_h / N_h) / n_h`` of the stratum's residual variance in
    the variance of the difference estimator (Cochran 1977, §5.3)."""

    label: np.ndarray
    weight: np.ndarray


def _strata(order: np.ndarray, budget: int) -> _Strata:
    n = len(order)
    edges = strata_bounds(n, budget)
    sizes = np.diff(edges)
    take = np.full(len(sizes), min(2, budget), dtype=np.int64)
    take[int(np.argmax(sizes))] += budget - take.sum()  # as stratified_positions draws
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    label = np.searchsorted(edges, rank, side="right") - 1
    weight = (sizes / n) ** 2 * (1.0 - take / sizes) / take
    return _Strata(label, weight)


def _make_draws(
    B: np.ndarray, folds: list[np.ndarray], budgets: Sequence[int], rng: np.random.Generator
) -> tuple[_Draws, list[np.ndarray]]:
    mb, nb = B.shape
    per = max(1, -(-MIN_DRAWS // mb))  # draws per held-out model and budget
    draws = _Draws([], [], [], [], [], [])
    orders = []
    for f, test in enumerate(folds):
        train = np.setdiff1d(np.arange(mb), test)
        order = order_from_sums(B[train].sum(axis=0))
        orders.append(order)
        strata = {b: _strata(order, b) for b in budgets}
        for i in test:
            for b in budgets:
                for _ in range(per):
                    draws.fold.append(f)
                    draws.row.append(int(i))
                    draws.budget.append(b)
                    draws.cols.append(np.sort(order[stratified_positions(nb, b, rng)]))
                    draws.regular.append(np.sort(order[regular_positions(nb, b, rng)]))
                    draws.strata.append(strata[b])
    return draws, orders


def _errors(
    pred: np.ndarray,
    prob: np.ndarray,
    truth: np.ndarray,
    cols: np.ndarray,
    strata: _Strata,
    df: float = 0.0,
) -> tuple[float, float]:
    """The sample-level error of ``pred`` on the unevaluated columns, and the standard
    error the difference estimator's interval would have with the predictions ``prob``:
    the design's variance with the held-out model's residuals ``truth - prob`` on every
    column as the population (known here, since the held-out row is), times the
    interval's correction ``n' / (n' - df)`` for ``df`` parameters fitted on the sample."""
    rest = np.ones(len(truth), dtype=bool)
    rest[cols] = False
    resid = truth - prob
    h = len(strata.weight)
    count = np.bincount(strata.label, minlength=h)
    total = np.bincount(strata.label, weights=resid, minlength=h)
    square = np.bincount(strata.label, weights=resid * resid, minlength=h)
    s2 = (square - total**2 / count) / np.maximum(count - 1, 1)
    var = max(float((strata.weight * s2).sum()), 0.0) * len(cols) / max(len(cols) - df, 1.0)
    return float(np.mean(pred[rest] != truth[rest])), float(np.sqrt(var))


def _score_threshold(
    B: np.ndarray, folds: list[np.ndarray], orders: list[np.ndarray], draws: _Draws
) -> np.ndarray:
    n = B.shape[1]
    out = np.empty((len(draws.row), 2))
    ranks = []
    for order in orders:
        r = np.empty(n, dtype=np.int64)
        r[order] = np.arange(n)
        ranks.append(r)
    for d, (f, i, cols) in enumerate(zip(draws.fold, draws.row, draws.regular)):
        pos = np.sort(ranks[f][cols])
        t = int(rule_thresholds("midpoint", pos, B[i, orders[f][pos]][None, :], n)[0])
        pred = np.zeros(n, dtype=np.uint8)
        pred[orders[f][:t]] = 1
        out[d] = _errors(pred, pred.astype(np.float64), B[i], cols, draws.strata[d], df=1.0)
    return out


def _score_copy_nearest(B: np.ndarray, folds: list[np.ndarray], draws: _Draws) -> np.ndarray:
    out = np.empty((len(draws.row), 2))
    trains = [np.setdiff1d(np.arange(B.shape[0]), t) for t in folds]
    for d, (f, i, cols) in enumerate(zip(draws.fold, draws.row, draws.cols)):
        T = B[trains[f]]
        near = T[int(np.argmin((T[:, cols] != B[i, cols]).sum(axis=1)))]
        out[d] = _errors(near, near.astype(np.float64), B[i], cols, draws.strata[d])
    return out


def _score_mirt(
    B: np.ndarray,
    folds: list[np.ndarray],
    draws: _Draws,
    configs: list[tuple[int, float]],
    iters: int,
    keep: dict[tuple[int, float], list[ItemModel]] | None = None,
) -> dict[tuple[int, float], np.ndarray]:
    """The item model's scores at each ``(k, ridge)`` of ``configs``: every configuration's
    fold fits, then every configuration's groups of draws, each as one set of independent
    pieces on the threads (the largest ``k`` first, so that no thread is left with a long
    fit at the end). Each piece is what one configuration alone would compute; ``keep``
    receives each configuration's fold fits in fold order."""
    trains = [np.setdiff1d(np.arange(B.shape[0]), test) for test in folds]
    fits = sorted(((c, f) for c in configs for f in range(len(folds))), key=lambda cf: -cf[0][0])
    fitted = ordered_map(
        lambda cf: fit_item_model(B[trains[cf[1]]], k=cf[0][0], iters=iters, item_ridge=cf[0][1]),
        fits,
    )
    items = dict(zip(fits, fitted))
    if keep is not None:
        for c in configs:
            keep[c] = [items[(c, f)] for f in range(len(folds))]
    out = {c: np.empty((len(draws.row), 2)) for c in configs}
    # The draws of one fold and budget are fitted together (each on its own columns).
    groups: dict[tuple[int, int], list[int]] = {}
    for d, (f, b) in enumerate(zip(draws.fold, draws.budget)):
        groups.setdefault((f, b), []).append(d)
    pieces = [(c, key, ds) for c in configs for key, ds in groups.items()]
    ordered_map(lambda p: _score_group(B, items[(p[0], p[1][0])], draws, out[p[0]], p[2]), pieces)
    return out


def _score_group(
    B: np.ndarray, item: ItemModel, draws: _Draws, out: np.ndarray, ds: list[int]
) -> None:
    """Scores of the draws ``ds`` of one fold and budget (``item``: that fold's fit), into
    their rows of ``out``."""
    cols = np.stack([draws.cols[d] for d in ds])
    rows = np.array([draws.row[d] for d in ds])
    theta, df = map_abilities_each(item, cols, B[rows[:, None], cols])
    probs = expit(item.d[:, None] + product(item.w, theta.T))
    for j, d in enumerate(ds):
        prob = probs[:, j]
        pred = (prob >= 0.5).astype(np.uint8)
        out[d] = _errors(pred, prob, B[rows[j]], cols[j], draws.strata[d], df[j])


def _score_active(
    B: np.ndarray, orders: list[np.ndarray], draws: _Draws, items: Any, seed: int
) -> np.ndarray:
    """The standard error of the active design's accuracy estimate at every draw's budget
    (:mod:`.active`), exact given the held-out row, as the other candidates' widths are:
    a stratified pilot of :func:`.active.pilot_size` items along the fold's order (drawn
    from a stream of its own, so the other candidates' draws are unchanged), the ability
    fitted on it, and the zone round's design over the rest; the pilot's stratified
    difference estimator (the cache's typical model's predictions) and the zone round's
    Horvitz-Thompson difference estimator (the pilot's predictions) are combined with
    inverse-variance weights. Infinite where the budget is played in one round."""
    from lifelong_core.methods.active import FLOOR, pilot_size, zone_design

    nb = B.shape[1]
    rng = np.random.default_rng([seed, 7])
    out = np.full(len(draws.row), np.inf)
    groups: dict[tuple[int, int], list[int]] = {}
    for d, (f, b) in enumerate(zip(draws.fold, draws.budget)):
        groups.setdefault((f, b), []).append(d)
    for (f, b), ds in groups.items():
        n1 = pilot_size(b)
        if n1 in (0, b):
            continue
        order, item = orders[f], items[f]
        strata = _strata(order, n1)
        pilots = np.stack([np.sort(order[stratified_positions(nb, n1, rng)]) for _ in ds])
        rows = np.array([draws.row[d] for d in ds])
        theta, _ = map_abilities_each(item, pilots, B[rows[:, None], pilots])
        probs = expit(item.d[:, None] + item.w @ theta.T)
        prior = expit(item.d + item.w @ item.prior_mean)
        for j, d in enumerate(ds):
            y = B[rows[j]].astype(np.float64)
            se1 = _errors(prior >= 0.5, prior, y, pilots[j], strata)[1]
            left = np.ones(nb, dtype=bool)
            left[pilots[j]] = False
            rest = order[left[order]]
            z = zone_design(rest, probs[rest, j], b - n1, FLOOR)
            free = z.label >= 0
            e = (y[rest] - probs[rest, j])[free]
            lab, q = z.label[free], z.q[free]
            v2 = float(
                (
                    np.bincount(lab, weights=e * e / q, minlength=z.zones)
                    - np.bincount(lab, weights=e, minlength=z.zones) ** 2
                ).sum()
            )
            se2 = np.sqrt(max(v2, 0.0)) / nb
            out[d] = 1.0 / np.sqrt(1.0 / max(se1, 1e-12) ** 2 + 1.0 / max(se2, 1e-12) ** 2)
    return out


def _clearly_narrower(active: np.ndarray, chosen: np.ndarray, groups: np.ndarray) -> bool:
    """Whether the active design's cross-validated standard error beats the chosen one-shot
    estimate's by more than one standard error of their paired difference (the
    one-standard-error rule, Hastie, Tibshirani & Friedman 2009, §7.10, with the one-shot
    estimate in the place of the simpler model: two rounds are the dearer choice)."""
    if not np.isfinite(active).all():
        return False
    gap, se = _paired_gap(active, chosen, groups)
    return gap < 0 and -gap > se


def _clusters(draws: _Draws, at: np.ndarray) -> np.ndarray:
    """Cluster label of each selected draw: its held-out model (draws of one model share
    its row, so standard errors are taken over models)."""
    key = np.array(draws.fold)[at] * (1 + max(draws.row)) + np.array(draws.row)[at]
    return np.unique(key, return_inverse=True)[1]


def _paired_gap(a: np.ndarray, b: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """Mean of ``a - b`` and its standard error, over clusters."""
    per = np.bincount(groups, weights=a - b) / np.bincount(groups)
    se = per.std(ddof=1) / np.sqrt(len(per)) if len(per) > 1 else np.inf
    return float(per.mean()), float(se)


def _simplest_within_se(scores: dict[str, np.ndarray], col: int, groups: np.ndarray) -> str:
    """The simplest candidate (in the order of :data:`CANDIDATES`: the threshold has one
    fitted number, CopyNearest&Expand picks one row, the item model fits ``k`` directions)
    whose cross-validated error ``col`` exceeds the best's by at most one standard error of
    their paired difference: the one-standard-error rule (Hastie, Tibshirani & Friedman
    2009, §7.10), so that a dozen models' noise does not pick the most flexible candidate."""
    best = min(scores, key=lambda c: scores[c][:, col].mean())
    for c in CANDIDATES:
        if c not in scores:
            continue
        if c == best:
            return c
        gap, se = _paired_gap(scores[c][:, col], scores[best][:, col], groups)
        if gap <= se:
            return c
    return best


def _keep_or_move(
    scores: dict[tuple[int, float], np.ndarray], incumbent: tuple[int, float], draws: _Draws
) -> tuple[int, float]:
    """The item-model size with the lowest cross-validated sample-level error, unless it
    beats ``incumbent`` (``mirt``'s fixed settings, validated on other data) by less than
    one standard error of their paired difference or by less than :data:`MARGIN` of the
    incumbent's error: the one-standard-error rule (Hastie, Tibshirani & Friedman 2009,
    §7.10) with the incumbent in the place of the simplest model, so that noise in the
    cross-validation, or a difference too small to matter, does not move the estimator off
    settings that are known to work. Draws of one held-out model are averaged first (they
    share its row), so the standard error is over held-out models."""
    best = min(scores, key=lambda c: scores[c][:, 0].mean())
    if best == incumbent or incumbent not in scores:
        return best
    groups = _clusters(draws, np.ones(len(draws.row), dtype=bool))
    gap, se = _paired_gap(scores[best][:, 0], scores[incumbent][:, 0], groups)
    gain = -gap
    return best if gain > se and gain > MARGIN * scores[incumbent][:, 0].mean() else incumbent


def tune_auto(
    A_sort: np.ndarray,
    seed: int = 0,
    iters: int = CV_ITERS,
    candidates: tuple[str, ...] = CANDIDATES,
) -> AutoTuning:
    """Cross-validate the candidates on the cache and choose per budget (module docstring).

    Parameters
    ----------
    A_sort : ndarray
        The cache, models x samples, 0/1.
    seed : int
        Seed of the subsets, folds and draws (same cache and seed, same choice).
    iters : int
        Alternating steps of each candidate item-model fit.
    candidates : tuple of str
        Which of :data:`CANDIDATES` may be chosen.

    Returns
    -------
    AutoTuning

    Raises
    ------
    InputError
        If a candidate is unknown.
    """
    bad = [c for c in candidates if c not in FIT_CANDIDATES]
    if bad or "threshold" not in candidates:
        raise InputError(
            f"auto candidates must include 'threshold' and come from {', '.join(FIT_CANDIDATES)}."
        )
    A = np.asarray(A_sort)
    m, n = A.shape
    if m < 3 or n < 4:
        return _threshold_fallback()
    # The cross-validation's matrices are small (at most CV_MODELS x CV_SAMPLES, k x k
    # solves): BLAS threads cost more than they give there (measured 1 s on one thread,
    # 12-16 s on two busy cores for a 12-model cache) and would contend with other work.
    from lifelong_core.methods.parallel import one_blas_thread

    with one_blas_thread():
        return _tune(A, seed, iters, candidates)


def _tune(A: np.ndarray, seed: int, iters: int, candidates: tuple[str, ...]) -> AutoTuning:
    m, n = A.shape
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    rows, cols = cv_block(m, n, rng)
    B = A[np.ix_(rows, cols)].astype(np.uint8)
    mb, nb = B.shape
    budgets = cv_budgets(nb, CV_BUDGETS)
    folds = _folds(mb, rng)
    draws, orders = _make_draws(B, folds, budgets, rng)
    budget_of = np.array(draws.budget)
    scores = {"threshold": _score_threshold(B, folds, orders, draws)}
    if "copy-nearest" in candidates:
        scores["copy-nearest"] = _score_copy_nearest(B, folds, draws)
    k, ridge = DEFAULT_K, DEFAULT_RIDGE
    mirt_scores: dict[tuple[int, float], np.ndarray] = {}
    fold_items: dict[tuple[int, float], list[ItemModel]] = {}
    active = None
    if "mirt" in candidates:
        kmax = max(1, mb - len(max(folds, key=len)) - 1)

        def score(configs: list[tuple[int, float]]) -> None:
            new = [c for c in configs if c not in mirt_scores]
            if new:
                mirt_scores.update(_score_mirt(B, folds, draws, new, iters, fold_items))

        score([(kk, DEFAULT_RIDGE) for kk in sorted({min(kk, kmax) for kk in K_GRID})])
        k = min(mirt_scores, key=lambda c: mirt_scores[c][:, 0].mean())[0]
        score([(k, rr) for rr in RIDGE_GRID])
        incumbent = (min(DEFAULT_K, kmax), DEFAULT_RIDGE)
        k, ridge = _keep_or_move(mirt_scores, incumbent, draws)
        scores["mirt"] = mirt_scores[(k, ridge)]
        if ROUNDS_CANDIDATE in candidates:
            active = _score_active(B, orders, draws, fold_items[(k, ridge)], seed)
    table, choices = [], []
    for b in budgets:
        at = budget_of == b
        mean = {c: s[at].mean(axis=0) for c, s in scores.items()}
        for c, (mae, se) in mean.items():
            table.append(
                dict(
                    candidate=c,
                    k=k if c == "mirt" else None,
                    ridge=ridge if c == "mirt" else None,
                    budget=b,
                    mae=float(mae),
                    se=float(se),
                    draws=int(at.sum()),
                )
            )
        by = {c: sc[at] for c, sc in scores.items()}
        groups = _clusters(draws, at)
        estimate = _simplest_within_se(by, 1, groups)
        rounds = False
        if active is not None and np.isfinite(active[at]).all():
            table.append(
                dict(
                    candidate=ROUNDS_CANDIDATE,
                    k=k,
                    ridge=ridge,
                    budget=b,
                    mae=None,  # the rounds' error is not cross-validated, only their width
                    se=float(active[at].mean()),
                    draws=int(at.sum()),
                )
            )
            rounds = _clearly_narrower(active[at], by[estimate][:, 1], groups)
        choices.append(Choice(b, _simplest_within_se(by, 0, groups), estimate, rounds))
    for (kk, rr), s in mirt_scores.items():
        table.append(
            dict(
                candidate="mirt (search)",
                k=kk,
                ridge=rr,
                budget=None,
                mae=float(s[:, 0].mean()),
                se=float(s[:, 1].mean()),
                draws=len(s),
            )
        )
    return AutoTuning(k, ridge, tuple(choices), table, time.perf_counter() - t0, len(folds))


def _tuned(
    A: np.ndarray, seed: int, candidates: tuple[str, ...], memory: object = None
) -> AutoTuning:
    """:func:`tune_auto`'s choice, remembered per cache in ``memory`` when one is given
    (:mod:`.tuning_memory`)."""
    from lifelong_core.methods import tuning_memory

    where = tuning_memory.resolve(memory)
    if where is None:
        return tune_auto(A, seed=seed, candidates=candidates)
    return where.remembered(
        A,
        seed,
        [CV_ITERS, list(candidates)],
        lambda: tune_auto(A, seed=seed, candidates=candidates),
        AutoTuning.to_record,
        AutoTuning.from_record,
    )


class AutoEstimator(StratifiedAlongOrder):
    """The self-tuning default: per budget, the best of ``mirt``, Sort & Search's threshold
    and CopyNearest&Expand on the cache (module docstring), with the design's 95% interval.

    Parameters
    ----------
    level : float
        Interval level.
    seed : int
        Seed of the cross-validation.
    tuning : AutoTuning, optional
        A choice made earlier (e.g. on a whole store): skips the cross-validation.
    iters : int
        Alternating steps of the final item-model fit (as ``mirt``).
    memory : TuningMemory, "user" or None
        Where the cross-validated choice is remembered per cache
        (:mod:`.tuning_memory`): a memory, the user's cache folder (what the registered
        name ``auto`` stands for), or nowhere (the class's default: a fit then writes
        nothing).

    Examples
    --------
    >>> import numpy as np
    >>> from lifelong_core.methods import get_method
    >>> rng = np.random.default_rng(0)
    >>> A = (rng.random((12, 400)) < np.linspace(0.9, 0.1, 400)).astype(np.uint8)
    >>> est = get_method("auto").fit(A[1:], np.argsort(-A[1:].sum(0), kind="stable"))
    >>> cols = est.select(400, 64, rng)
    >>> e = est.estimate(cols, A[0, cols])
    >>> e.lo <= e.acc <= e.hi
    True
    """

    name = "auto"

    def __init__(
        self,
        level: float = 0.95,
        seed: int = 0,
        tuning: AutoTuning | None = None,
        iters: int = 25,
        memory: object = None,
    ) -> None:
        self.level = level
        self.seed = seed
        self.tuning = tuning
        self.iters = iters
        self.memory = memory

    def _validate_params(self) -> None:
        if not 0 < self.level < 1:
            raise InputError(f"level must be in (0, 1), got {self.level}.", param="level")
        if int(self.iters) != self.iters or self.iters < 1:
            raise InputError(f"iters must be a positive integer, got {self.iters}.", param="iters")
        from lifelong_core.methods.tuning_memory import resolve

        resolve(self.memory)

    @property
    def k(self) -> int:
        """The item model's number of directions (the cross-validated choice)."""
        return self.tuning_.k if hasattr(self, "tuning_") else DEFAULT_K

    @property
    def item_ridge(self) -> float:
        """The item model's ridge (the cross-validated choice)."""
        return self.tuning_.ridge if hasattr(self, "tuning_") else DEFAULT_RIDGE

    @property
    def item_(self) -> ItemModel:
        """The fitted item model (what the store keeps)."""
        check_fitted(self, "mirt_")
        if self.mirt_ is None:
            raise InputError("no item model was fitted: the cross-validation chose none.")
        return self.mirt_.item_

    def kept_params(self) -> dict:
        """What the store keeps beside the item parameters (``workflows.lifelong_state``):
        the item model's settings and the cross-validated choices."""
        check_fitted(self, "tuning_")
        return {
            "k": self.k,
            "iters": self.iters,
            "item_ridge": self.item_ridge,
            **self.tuning_.to_params(),
        }

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> AutoEstimator:
        self._validate_params()
        order = self._order_of(A_sort, order)
        # One model is enough for the threshold (with fewer than 3 it is the only candidate).
        A = check_cache(A_sort, order, least=1)
        self._set_order(order)
        self.tuning_ = (
            self.tuning
            if self.tuning is not None
            else _tuned(A, self.seed, FIT_CANDIDATES, self.memory)
        )
        self.mirt_ = None
        if self.tuning_.uses("mirt"):
            self.mirt_ = MIRTEstimator(
                k=self.tuning_.k, iters=self.iters, item_ridge=self.tuning_.ridge, level=self.level
            ).fit(A, self.order_)
        self.cache_ = A.astype(np.uint8, copy=False) if self.tuning_.uses("copy-nearest") else None
        return self

    def fit_packed(
        self,
        P: np.ndarray,
        n: int,
        order: np.ndarray,
        progress: Callable[[float], object] | None = None,
        block_bytes: int | None = None,
        max_columns: int | None = None,
        seed: int = 0,
    ) -> AutoEstimator:
        """:meth:`fit` from packed rows ``P`` ((m, ceil(n/8)) uint8) in bounded memory: the
        cross-validation on a dense random subset of :data:`~lifelong_core.methods.design.CV_MODELS` rows and
        :data:`~lifelong_core.methods.design.CV_SAMPLES` columns, CopyNearest&Expand left out (module docstring), then
        ``mirt``'s packed fit at the chosen size."""
        from lifelong_core.bits import unpack_rows

        self._validate_params()
        m = P.shape[0]
        rng = np.random.default_rng(self.seed)
        rows, cols = cv_block(m, n, rng)
        B = np.empty((len(rows), len(cols)), dtype=np.uint8)
        for a in range(0, len(rows), 64):
            B[a : a + 64] = unpack_rows(P[rows[a : a + 64]], n)[:, cols]
        self._set_order(order)
        if self.tuning is None:
            self.tuning_ = _tuned(B, self.seed, ("threshold", "mirt"), self.memory)
        else:
            self.tuning_ = self.tuning
        self.mirt_ = MIRTEstimator(
            k=self.tuning_.k, iters=self.iters, item_ridge=self.tuning_.ridge, level=self.level
        ).fit_packed(
            P,
            n,
            order,
            progress=progress,
            block_bytes=block_bytes,
            max_columns=max_columns,
            seed=seed,
        )
        self.cache_ = None
        return self

    @property
    def has_items(self) -> bool:
        """Whether the fit made an item model (the cross-validation may choose none)."""
        return getattr(self, "mirt_", None) is not None

    def with_items(
        self,
        item: ItemModel,
        order: np.ndarray,
        params: dict | None = None,
        rows: np.ndarray | None = None,
    ) -> AutoEstimator:
        """This estimator from kept item parameters and the choices kept with them
        (``params``, :meth:`kept_params`); without choices, ``mirt`` at every budget.
        CopyNearest&Expand copies from the dense Sort rows ``rows``: choices that use it
        need them."""
        tuning = AutoTuning.from_params(params or {})
        if tuning is None:
            k = int(item.w.shape[1])
            tuning = AutoTuning(
                k, DEFAULT_RIDGE, tuple(Choice(b, "mirt", "mirt") for b in CV_BUDGETS)
            )
        copies = tuning.uses("copy-nearest")
        if copies and rows is None:
            raise InputError("kept choices cannot use copy-nearest: the store keeps no cache rows.")
        self.tuning_ = tuning
        self.mirt_ = MIRTEstimator(
            k=int(item.w.shape[1]), iters=self.iters, item_ridge=tuning.ridge, level=self.level
        ).with_items(item, order)
        self._set_order(order)
        self.cache_ = np.asarray(rows).astype(np.uint8, copy=False) if copies else None
        return self

    def select(self, n: int, budget: int, rng: np.random.Generator) -> np.ndarray:
        """``budget`` columns to evaluate: evenly spaced along the order at a random offset
        (:func:`.design.regular_positions`) where the threshold makes the per-sample
        prediction, which places a threshold best, else two at random in each stratum
        (:func:`.design.stratified_positions`)."""
        check_fitted(self, "tuning_")
        check_width(n, len(self.order_), "estimator")
        if self.tuning_.choice_at(budget).predict == "threshold":
            return np.sort(self.order_[regular_positions(n, budget, rng)])
        return super().select(n, budget, rng)

    # -- the three candidates' predictions
    def _thresholds(self, pos: np.ndarray, obs: np.ndarray) -> np.ndarray:
        """The midpoint rule's threshold of each row of ``obs`` ((rows, n')) observed at
        the columns ``pos``: the first ``t`` samples of the order are predicted correct."""
        ranks = self.rank_[pos]
        by = np.argsort(ranks, kind="stable")
        return rule_thresholds("midpoint", ranks[by], np.atleast_2d(obs)[:, by], len(self.order_))

    def _threshold(self, pos: np.ndarray, obs: np.ndarray) -> tuple[np.ndarray, dict]:
        t = int(self._thresholds(pos, obs)[0])
        prob = np.zeros(len(self.order_))
        prob[self.order_[:t]] = 1.0
        return prob, {"inflate": _threshold_inflate(len(pos))}

    def _copy_nearest(self, pos: np.ndarray, obs: np.ndarray) -> tuple[np.ndarray, dict]:
        A = self.cache_
        if A is None:  # the tuning chose no copy-nearest candidate; the fit kept no rows
            raise RuntimeError("copy-nearest was not fitted")
        miss = A[:, pos] != obs  # (m, n')
        dist = miss.sum(axis=1)
        prob = A[int(np.argmin(dist))].astype(np.float64)
        # Leave-one-out: the row nearest on the other evaluated samples predicts each one.
        loo = np.argmin(dist[:, None] - miss, axis=0)
        return prob, {"width_resid": obs - A[loo, pos].astype(np.float64)}

    def _mirt(
        self, pos: np.ndarray, obs: np.ndarray, ability: tuple[np.ndarray, float] | None = None
    ) -> tuple[np.ndarray, dict]:
        if self.mirt_ is None:  # the tuning chose no MIRT candidate
            raise RuntimeError("the MIRT candidate was not fitted")
        if ability is None:
            prob, df = self.mirt_.predict_proba(pos, obs)
        else:
            prob, df = self.mirt_.probs_of(ability[0]), ability[1]
        return np.asarray(prob, dtype=np.float64), {"inflate": _mirt_inflate(len(pos), df)}

    def score_rows(
        self, selections: Sequence[np.ndarray], truth: np.ndarray, n: int
    ) -> list[RowScores]:
        """:meth:`estimate` of every row of ``truth`` at every selection, scored against
        the row, without building any row (:class:`~lifelong_core.methods.base.SweepScoring`).

        Per budget the chosen candidates are computed for all rows at once: the item
        model's abilities in one batched MAP fit over the evaluated samples and its
        predictions in one pass over the items for every row and budget together
        (:func:`.irt.item_pass`); the threshold's from each row's prefix counts along the
        order (:func:`lifelong_core.bits.ones_before`); CopyNearest&Expand (a dense fit
        only) row by row. Where the item model only predicts (the threshold makes the
        accuracy estimate), its pass counts its predictions without summing its
        probabilities. The same numbers as :meth:`estimate`, row by row, up to the order
        of floating-point sums.
        """
        check_fitted(self, "tuning_")
        check_width(n, len(self.order_), "estimator")
        m = truth.shape[0]
        obs = [bits_at(truth, sel) for sel in selections]
        choices = [self.tuning_.choice_at(len(sel)) for sel in selections]
        uses = [{c.predict, c.estimate} for c in choices]
        # The item model: one batched ability fit per budget, one pass over the items.
        need = [i for i, u in enumerate(uses) if "mirt" in u]
        mirt: dict[int, tuple] = {}
        if need:
            if self.mirt_ is None:
                raise RuntimeError("the MIRT candidate was not fitted")
            item = self.mirt_.item_
            fits = dict(
                zip(need, map_abilities_many(item, [(selections[i], obs[i].T) for i in need]))
            )
            groups = [(selections[i], np.arange(j * m, (j + 1) * m)) for j, i in enumerate(need)]
            ip = item_pass(
                item,
                np.vstack([fits[i][0] for i in need]),
                np.tile(np.arange(m), len(need)),
                groups,
                truth,
                n,
                # Where the threshold makes the accuracy estimate, the item model only
                # predicts: no sum of its probabilities is needed.
                totals=[choices[i].estimate == "mirt" for i in need],
            )
            for j, i in enumerate(need):
                cols = groups[j][1]
                mirt[i] = (ip.at[j], ip.total[cols], fits[i][1], ip.wrong[cols], ip.ones[cols])
        # The threshold: prefix counts of every true row along the order.
        sorted_rows = None
        if any("threshold" in u for u in uses):
            S = SortOrder(self.order_, n, checked=True).sorted_rows(truth)
            sorted_rows = (S, word_prefix(S), row_totals(truth, n))

        def budget(i: int) -> RowScores:
            sel, o, choice = selections[i], obs[i], choices[i]
            b = len(sel)
            made: dict[str, tuple] = {}
            for c in dict.fromkeys((choice.estimate, choice.predict)):
                if c == "mirt":
                    at, total, df, wrong, ones = mirt[i]
                    made[c] = (
                        None if at is None else at.T,
                        total,
                        _mirt_inflate(b, df),
                        wrong,
                        ones,
                    )
                elif c == "threshold":
                    assert sorted_rows is not None
                    made[c] = self._threshold_scores(sel, o, *sorted_rows)
                else:
                    made[c] = self._copy_nearest_scores(sel, o, truth, n)
            at, total, how = made[choice.estimate][:3]
            if isinstance(how, list):  # out-of-sample residuals set each row's width
                ivs = [
                    finish_interval(
                        at[r], float(total[r]), sel, o[r], self.rank_, n, self.level, **how[r]
                    )
                    for r in range(m)
                ]
            else:  # every row's interval at once, with its variance correction
                ivs = difference_estimates_at(
                    self.rank_[sel], o, at, total, n, level=self.level, inflate=how
                )
            wrong, ones = made[choice.predict][3:]
            return RowScores.from_intervals(ivs, wrong, ones + o.sum(axis=1, dtype=np.int64))

        # Each budget's estimates on the threads, the largest budgets first.
        by_size = sorted(range(len(selections)), key=lambda i: -len(selections[i]))
        done = dict(zip(by_size, ordered_map(budget, by_size)))
        return [done[i] for i in range(len(selections))]

    def _threshold_scores(
        self,
        sel: np.ndarray,
        obs: np.ndarray,
        S: np.ndarray,
        cum: np.ndarray,
        totals: np.ndarray,
    ) -> tuple:
        """The threshold candidate of every row at one selection: its predictions at the
        evaluated samples, their total (the threshold ``t``), the interval's correction,
        and the unevaluated samples it gets wrong and predicts correct.

        The observations are read in the order's sequence as packed bits from the sorted
        rows ``S`` (the midpoint rule's scan over bytes), and counted by prefix counts;
        nothing the size of the evaluated samples is unpacked but the predictions."""
        ranks = self.rank_[sel]
        pos = np.sort(ranks)
        seen = packed_bits_at(S, pos)  # each row's results in the order's sequence
        t = rule_thresholds_packed("midpoint", pos, seen, len(self.order_))
        at = ranks[None, :] < t[:, None]
        # The first t samples of the order are predicted correct: t - c of them are wrong
        # and the row's other totals - c ones are missed (c: its ones among those t); the
        # evaluated samples carry their results, so their mismatches are taken back out:
        # q of them are predicted correct, of which hit were right.
        c = ones_before(S, cum, t)
        q = np.searchsorted(pos, t)
        hit = _ones_in_first(seen, q)
        mismatched = q + obs.sum(axis=1, dtype=np.int64) - 2 * hit
        wrong = (t - c) + (totals - c) - mismatched
        return at, t.astype(np.float64), _threshold_inflate(len(sel)), wrong, t - q

    def _copy_nearest_scores(
        self, sel: np.ndarray, obs: np.ndarray, truth: np.ndarray, n: int
    ) -> tuple:
        """The CopyNearest&Expand candidate of every row at one selection, row by row (it
        is a candidate only where the fit kept the dense cache)."""
        at, total, kws, wrong, ones = [], [], [], [], []
        rest = np.ones(n, dtype=bool)
        rest[sel] = False
        for r in range(len(obs)):
            prob, kw = self._copy_nearest(sel, obs[r])
            pred = prob >= 0.5
            row = unpack_rows(truth[r : r + 1], n)[0].astype(bool)
            at.append(prob[sel])
            total.append(float(prob.sum(dtype=np.float64)))
            kws.append(kw)
            wrong.append(int(np.count_nonzero((pred != row) & rest)))
            ones.append(int(np.count_nonzero(pred & rest)))
        return at, np.asarray(total), kws, np.asarray(wrong), np.asarray(ones)

    # -- rounds: the active design where the cross-validation chose it
    def rounds(self, n: int, budget: int) -> list[int]:
        """The rounds of ``budget`` items: the active design's two (:mod:`.active`) where
        the cross-validation found it clearly narrower at that budget, else one.

        Parameters
        ----------
        n : int
            The number of items (the fitted one).
        budget : int
            The total number of items.

        Returns
        -------
        list of int
            Round sizes adding up to ``budget``.
        """
        check_fitted(self, "tuning_")
        if self.mirt_ is None or not self.tuning_.choice_at(budget).active:
            return [int(budget)]
        return self._design().rounds(budget)

    def _design(self) -> Any:
        from lifelong_core.methods.active import RoundsDesign

        mirt = self.mirt_
        if mirt is None:  # no item model: the cross-validation chose no active round
            raise InputError("this cache's choice plays every budget in one round.")

        def predict(cols: np.ndarray, obs: np.ndarray) -> np.ndarray:
            if len(cols) == 0:
                item = mirt.item_
                return expit(item.d + item.w @ item.prior_mean)
            return mirt.predict_proba(cols, obs)[0]

        return RoundsDesign(self.order_, predict, self.estimate, self.level)

    def select_next(
        self,
        n: int,
        budget: int,
        rng: np.random.Generator,
        columns: np.ndarray,
        observed: np.ndarray,
    ) -> np.ndarray:
        """The next round's items of the active design
        (:meth:`.active.RoundsDesign.select_next`).

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
        check_fitted(self, "tuning_")
        return self._design().select_next(n, budget, rng, columns, observed)

    def estimate_rounds(
        self, rounds: Sequence[tuple[np.ndarray, np.ndarray]], domain: np.ndarray | None = None
    ) -> Estimate:
        """The active design's estimate after its rounds
        (:meth:`.active.RoundsDesign.estimate_rounds`); one round is :meth:`estimate`.

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
        check_fitted(self, "tuning_")
        if len(rounds) == 1 and domain is None:
            return self.estimate(*rounds[0])
        return self._design().estimate_rounds(rounds, domain)

    def estimate(self, positions: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "tuning_")
        pos, obs = check_observations(positions, observed, len(self.order_))
        return self._estimate(pos, obs)

    def estimate_many(self, designs: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[Estimate]:
        """:meth:`estimate` of several new rows, each on its own evaluated samples.

        Rows evaluated on as many samples (a backtest's held-out models at one budget) whose
        chosen candidates include the item model get their abilities from one batched MAP
        fit (:func:`.irt.map_abilities_each`: each row's own Newton iteration, its sums
        formed per row) instead of one fit each. The same estimates as :meth:`estimate`,
        row by row, up to the order of floating-point sums.

        Parameters
        ----------
        designs : sequence of (numpy.ndarray, numpy.ndarray)
            ``(positions, observed)`` of each row, as :meth:`estimate` takes them.

        Returns
        -------
        list of Estimate
            One per design, in order.
        """
        check_fitted(self, "tuning_")
        n = len(self.order_)
        checked = [check_observations(p, o, n) for p, o in designs]
        by_size: dict[int, list[int]] = {}
        for i, (pos, _) in enumerate(checked):
            by_size.setdefault(len(pos), []).append(i)
        abilities: dict[int, tuple[np.ndarray, float]] = {}
        for size, rows in by_size.items():
            choice = self.tuning_.choice_at(size)
            if self.mirt_ is None or "mirt" not in (choice.estimate, choice.predict):
                continue
            theta, df = map_abilities_each(
                self.mirt_.item_,
                np.stack([checked[i][0] for i in rows]),
                np.stack([checked[i][1] for i in rows]),
            )
            abilities.update((i, (theta[j], float(df[j]))) for j, i in enumerate(rows))
        return [self._estimate(pos, obs, abilities.get(i)) for i, (pos, obs) in enumerate(checked)]

    def _estimate(
        self, pos: np.ndarray, obs: np.ndarray, ability: tuple[np.ndarray, float] | None = None
    ) -> Estimate:
        """:meth:`estimate` of checked observations; ``ability`` is the item model's MAP
        ``(theta, df)`` for them when already fitted."""
        choice = self.tuning_.choice_at(len(pos))
        candidates: dict[str, Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, dict]]] = {
            "threshold": self._threshold,
            "copy-nearest": self._copy_nearest,
            "mirt": functools.partial(self._mirt, ability=ability),
        }
        made = {
            c: candidates[c](pos, obs) for c in dict.fromkeys((choice.estimate, choice.predict))
        }
        prob, kw = made[choice.estimate]
        est = finish(prob, pos, obs, self.rank_, self.level, **kw)
        if choice.predict == choice.estimate:
            return est
        per_sample = (made[choice.predict][0] >= 0.5).astype(np.uint8)
        per_sample[pos] = obs
        return Estimate(est.acc, est.lo, est.hi, per_sample, est.prob, est.level)
