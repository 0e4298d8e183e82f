"""Self-tuning on the user's cache: the item model's size chosen by cross-validation.

``mirt`` fixes ``k = 10`` directions and a ridge of 8 on the discriminations, values
measured on the demo digits data. A cache of a dozen models cannot support ten directions,
and one of thousands may want more; what predicts best is a property of the user's cache.
:func:`tune` chooses by K-fold cross-validation over the Sort models (Stone, 1974,
"Cross-validatory choice and assessment of statistical predictions", JRSS B 36; Hastie,
Tibshirani & Friedman, *The Elements of Statistical Learning*, 2nd ed., 2009, §7.10): the
item model is fitted on the other folds, each held-out model is "evaluated" on a
stratified random sample of ``n'`` samples (the selection every estimator here uses), and
the score is the sample-level MAE of the prediction on all samples, averaged over the
budgets ``n'`` in :data:`CV_BUDGETS` (capped at half the samples). Sort & Search's
threshold prediction (Prabhu et al., 2024, "Efficient Lifelong Model Evaluation in an Era of
Rapid Progress", §3.2, the ``midpoint`` rule) is scored on the same draws; when it predicts
better, as it does on very small caches, it is the prediction the estimator uses.

Bounded time, deterministic: at most :data:`~lifelong_core.methods.design.CV_MODELS` Sort models and :data:`~lifelong_core.methods.design.CV_SAMPLES`
sample columns enter the cross-validation (random subsets, seeded), leave-one-out below 10
models and 5 folds above, :data:`CV_ITERS` alternating steps per fit; the grid is searched
coordinate-wise (``k`` at the default ridge, then the ridge at the chosen ``k``): at most 7
configurations, 35 fits of at most 150 x 1,500. The work is bounded by sizes, not by a
clock, so the same cache and seed always give the same choice (a round trip through files
replays the design and needs exactly the same fit). The documentation's Benchmarks page
("Adaptive evaluation") records the measured time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.methods.adaptive import IRTPredictor, ThresholdPredictor
from lifelong_core.methods.base import Estimate, check_fitted, check_observations
from lifelong_core.methods.design import (
    StratifiedAlongOrder,
    cv_block,
    cv_budgets,
    stratified_positions,
)
from lifelong_core.methods.irt import (
    MIRTEstimator,
    check_cache,
    finish,
    fit_item_model,
    map_ability,
)
from lifelong_core.sortsearch.search import rule_thresholds
from lifelong_core.sortsearch.sort import order_from_sums

CV_BUDGETS = (64, 256, 1024)
CV_ITERS = 15  # fewer alternating steps than the final fit: enough to rank configurations
K_GRID = (1, 2, 4, 8, 16)
RIDGE_GRID = (2.0, 8.0, 32.0)
DEFAULT_RIDGE = 8.0


@dataclass(frozen=True)
class TuneResult:
    """What :func:`tune` chose, and the cross-validation it chose from.

    Attributes
    ----------
    kind : {"irt", "threshold"}
        The prediction that scored best: the item model, or Sort & Search's threshold
        (``midpoint`` rule).
    k : int or None
        The item model's number of directions; None for ``threshold``.
    ridge : float or None
        The ridge on the discriminations; None for ``threshold``.
    table : list of dict
        One row per configuration scored, with keys ``kind``, ``k``, ``ridge`` and
        ``mae`` (the cross-validated sample-level MAE, averaged over the budgets);
        empty when there was nothing to cross-validate on.
    seconds : float
        Wall-clock seconds the cross-validation took (0 when it did not run).
    folds : int
        The number of folds over the Sort models (0 when it did not run).
    """

    kind: str
    k: int | None
    ridge: float | None
    table: list[dict]
    seconds: float
    folds: int


def _folds(m: int, rng: np.random.Generator) -> list[np.ndarray]:
    perm = rng.permutation(m)
    f = m if m < 10 else 5
    return [perm[i::f] for i in range(f)]


def tune(A_sort: np.ndarray, seed: int = 0, iters: int = CV_ITERS) -> TuneResult:
    """Choose ``k`` and the ridge (or Sort & Search's threshold) by cross-validated MAE.

    With fewer than 3 Sort models there is nothing to cross-validate on, and the threshold
    prediction (no fitted parameters) is returned with an empty table."""
    A = np.asarray(A_sort)
    m, n = A.shape
    if m < 3:
        # Nothing to cross-validate on: Sort & Search's threshold needs no fitted parameters.
        return TuneResult("threshold", None, None, [], 0.0, 0)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    rows, cols = cv_block(m, n, rng)
    B = A[np.ix_(rows, cols)].astype(np.uint8)
    mb, nb = B.shape
    budgets = cv_budgets(nb, CV_BUDGETS)
    folds = _folds(mb, rng)
    # One set of draws per (fold, held-out model, budget), shared by every configuration, so
    # that differences between configurations are not noise of different draws.
    draws = []
    for f, test in enumerate(folds):
        train = np.setdiff1d(np.arange(mb), test)
        order = order_from_sums(B[train].sum(axis=0))
        for i in test:
            for b in budgets:
                draws.append((f, i, order[stratified_positions(nb, b, rng)]))
    mae_thr = _score_threshold(B, folds, draws)
    table = [dict(kind="threshold", k=None, ridge=None, mae=mae_thr)]
    kmax = max(1, min(max(K_GRID), mb - len(max(folds, key=len)) - 1))
    scored: dict[tuple[int, float], float] = {}

    def score(k: int, ridge: float) -> None:
        if (k, ridge) in scored:
            return
        scored[(k, ridge)] = _score_irt(B, folds, draws, k, ridge, iters)
        table.append(dict(kind="irt", k=k, ridge=ridge, mae=scored[(k, ridge)]))

    for k in sorted({min(k, kmax) for k in K_GRID}):
        score(k, DEFAULT_RIDGE)
    if scored:
        k_best = min(scored, key=scored.__getitem__)[0]
        for r in RIDGE_GRID:
            score(k_best, r)
    secs = time.perf_counter() - t0
    if not scored or min(scored.values()) >= mae_thr:
        return TuneResult("threshold", None, None, table, secs, len(folds))
    k, ridge = min(scored, key=scored.__getitem__)
    return TuneResult("irt", k, ridge, table, secs, len(folds))


def _score_threshold(B: np.ndarray, folds: list[np.ndarray], draws: list) -> float:
    n = B.shape[1]
    errs = []
    for f, i, sel in draws:
        train = np.setdiff1d(np.arange(B.shape[0]), folds[f])
        order = order_from_sums(B[train].sum(axis=0))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        pos = np.sort(rank[sel])
        t = int(rule_thresholds("midpoint", pos, B[i, order[pos]][None, :], n)[0])
        pred = np.zeros(n, dtype=np.uint8)
        pred[order[:t]] = 1
        pred[sel] = B[i, sel]
        errs.append(np.mean(pred != B[i]))
    return float(np.mean(errs))


def _score_irt(
    B: np.ndarray, folds: list[np.ndarray], draws: list, k: int, ridge: float, iters: int
) -> float:
    errs = []
    items = {}
    for f, test in enumerate(folds):
        train = np.setdiff1d(np.arange(B.shape[0]), test)
        items[f] = fit_item_model(B[train], k=k, iters=iters, item_ridge=ridge)
    for f, i, sel in draws:
        item = items[f]
        theta, _ = map_ability(item, sel, B[i, sel])
        pred = (expit(item.d + item.w @ theta) >= 0.5).astype(np.uint8)
        pred[sel] = B[i, sel]
        errs.append(np.mean(pred != B[i]))
    return float(np.mean(errs))


class TunedEstimator(StratifiedAlongOrder):
    """``mirt`` with ``k`` and the ridge cross-validated on the Sort models (:func:`tune`),
    or Sort & Search's threshold prediction where that predicts better (small caches).

    Same design and accuracy estimator as ``mirt`` (stratified random along the Sort order,
    model-assisted difference estimator with a 95% interval); with the threshold prediction
    the difference estimator's predictions are its 0/1 vector, so the interval stays valid.
    ``tuning_`` records what was chosen and the cross-validation table.
    """

    name = "mirt-cv"

    def __init__(
        self, level: float = 0.95, seed: int = 0, tuning: TuneResult | None = None
    ) -> None:
        self.level = level
        self.seed = seed
        self.tuning = tuning

    def _validate_params(self) -> None:
        if not 0 < self.level < 1:
            raise InputError(f"level must be in (0, 1), got {self.level}.", param="level")

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> TunedEstimator:
        self._validate_params()
        order = self._order_of(A_sort, order)
        A = check_cache(A_sort, order)
        self._set_order(order)
        # A given tuning (e.g. chosen on a whole store) skips the cross-validation.
        self.tuning_ = self.tuning if self.tuning is not None else tune(A, seed=self.seed)
        self.predictor_: IRTPredictor | ThresholdPredictor
        self.mirt_: MIRTEstimator | None
        k, ridge = self.tuning_.k, self.tuning_.ridge
        if self.tuning_.kind == "irt" and k is not None and ridge is not None:
            self.mirt_ = MIRTEstimator(k=k, item_ridge=ridge, level=self.level)
            self.mirt_.fit(A, self.order_)
            self.predictor_ = IRTPredictor(self.mirt_.item_)
        else:
            self.mirt_ = None
            self.predictor_ = ThresholdPredictor(self.order_, float(A.mean()))
        return self

    def estimate(self, positions: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "order_")
        if self.mirt_ is not None:
            return self.mirt_.estimate(positions, observed)
        pos, obs = check_observations(positions, observed, len(self.order_))
        prob = self.predictor_.predict(pos, obs)
        return finish(prob, pos, obs, self.rank_, self.level)
