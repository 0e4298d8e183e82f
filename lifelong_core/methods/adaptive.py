"""Adaptive evaluation: choose each round's samples where the prediction is least sure,
and stop when the 95% interval is narrow enough.

Design. Evaluations happen in rounds. Before round ``r`` the new model's ability is refitted
on every result so far and gives a prediction ``p_j`` for every sample not yet evaluated
(the set ``R``). The round's samples are then drawn one after another *without replacement*
with probability proportional to ``w_j = s_j + floor * mean(s)``, where ``s_j =
sqrt(p~_j (1 - p~_j))`` is the predicted standard deviation of the sample's result (``p~``
is ``p`` clipped to ``[clip, 1 - clip]``). Sampling proportional to the standard deviation
of what is still unknown is Neyman's optimal allocation (Neyman, 1934, "On the two different
aspects of the representative method"; Cochran, *Sampling Techniques*, 3rd ed., 1977,
§5.5 and §9A.6) taken to strata of one sample, the allocation that Zrnic & Candès
("Active Statistical Inference", ICML 2024, §3) derive for prediction-assisted estimation
of a mean; the additive floor is a *defensive mixture* (Hesterberg, 1995, "Weighted
average importance sampling and defensive mixture distributions", Technometrics 37),
which caps every inverse-probability weight at ``1 / floor`` times the average, so a
prediction that is confidently wrong (a new model better than every cached model: Zhang,
Dorner & Hardt, 2025, "How Benchmark Prediction from Fewer Data Misses the Mark") costs
width, never validity. Sequential draws with renormalised probabilities are drawn in one
go with exponential keys ``E_j / w_j`` (Efraimidis & Spirakis, 2006, "Weighted random
sampling with a reservoir", IPL 97).

Estimator. Draw ``t`` picks sample ``J`` with probability ``q_J`` from the set ``R_t``
still unevaluated at that moment; with ``K_t`` the samples already evaluated,

    z_t = ( sum_{K_t} a_j + sum_{R_t} p_j + (a_J - p_J) / q_J ) / n .

This is Des Raj's ordered estimator for sampling with varying probabilities without
replacement (Des Raj, 1956, "Some estimators in sampling with varying probabilities without
replacement", JASA 51), with the model prediction as its difference term (Särndal, Swensson
& Wretman, *Model Assisted Survey Sampling*, 1992, §6.3). Because ``p`` and ``q`` are
fixed before ``a_J`` is seen (they are *predictable*), ``E[z_t | past] = mu`` exactly for
the true accuracy ``mu`` whatever the new model does, so ``z_t - mu`` is a martingale
difference sequence. The estimate is a weighted mean of the ``z_t`` with weights fixed
before each draw: equal, or (``weighting="inverse-variance"``) the inverse of the variance
predicted *before* the draw, ``lambda_t = 1 / v_t`` with ``v_t = sum_{R_t} p~_j (1 - p~_j)
(1/q_j - 1) / n^2`` (the conditional variance of ``z_t`` if the model were right), since
later draws, made with better predictions, should be less variable:

    mu_hat = sum_t lambda_t z_t / sum_t lambda_t .

``sum_t lambda_t (z_t - mu)`` is a martingale with mean exactly zero; with equal weights
(``weighting="equal"``, the default) ``mu_hat`` itself is exactly unbiased (Des Raj's
result), with predictable weights it is unbiased up to the randomness of the normaliser.
Equal weights are the default because inverse-variance weights measured no better on the
demo digits data (E_agg within 0.1 point at n' = 64 and 256, both splits of
``benchmarks/bench_adaptive.py``'s protocol), and exact unbiasedness is worth keeping.
The defensive floor 0.2 and clip 0.02 were chosen there too (floor 0.05 measured the same,
0.5 worse); nothing was tuned on the leaderboard data the benchmark reports. The interval is
the self-normalised martingale central limit theorem (Hall & Heyde, *Martingale Limit
Theory and Its Application*, 1980, Cor. 3.1) with the observed quadratic variation
``sum_t lambda_t^2 (z_t - mu_hat)^2`` as the variance, the adaptive-weighting construction
of Luedtke & van der Laan (2016, "Statistical inference for the mean outcome under a
possibly non-unique optimal treatment strategy", Ann. Stat. 44) and Hadad, Hirshberg,
Zhan, Wager & Athey (2021, "Confidence intervals for policy evaluation in adaptive
experiments", PNAS 118): the *observed* spread of the ``z_t`` sets the width, so a wrong
model widens the interval instead of hiding its error. Student-t with Kish's effective
number of draws minus one as degrees of freedom is a small-sample guard. The observed spread
misses rare results that have not turned up yet (a model that fails all but a handful of
samples: on MATH-hard, 95% intervals from the spread alone covered 77-93% of held-out
models); the variance is therefore at least the one predicted with every unevaluated
sample's P(correct) kept in ``[0.005, 0.995]`` (``FLOOR_CLIP``; ``variance_floor=False``
drops it). With every sample evaluated the accuracy is exact.

What this is not: a confidence *sequence*. Stopping as soon as the half-width reaches a
target looks at the interval many times; the per-look 95% does not guarantee 95% at the
stopping time (Waudby-Smith & Ramdas, 2024, "Estimating means of bounded random variables
by betting", JRSS B, give intervals that do). The benchmark (``benchmarks/bench_adaptive.py``)
measures the coverage at the stopping time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate
from lifelong_core.methods.irt import ItemModel, map_ability
from lifelong_core.sortsearch.search import rule_thresholds

WEIGHTINGS = ("equal", "inverse-variance")
FLOOR_CLIP = 0.005


class IRTPredictor:
    """P(correct) of a new model from the item model of the cache (MAP ability, :mod:`.irt`)."""

    kind = "irt"

    def __init__(self, item: ItemModel) -> None:
        self.item = item
        self.n = len(item.d)

    def predict(self, cols: np.ndarray, obs: np.ndarray) -> np.ndarray:
        if len(cols) == 0:
            theta = self.item.prior_mean
        else:
            theta, _ = map_ability(self.item, cols, obs)
        return expit(self.item.d + self.item.w @ theta)


class ThresholdPredictor:
    """Sort & Search's prediction (Prabhu et al., 2024, "Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress", §3.2): the
    first ``t`` samples of the easy -> hard order correct, the rest wrong, ``t`` from the
    threshold rule. With no result yet, the cache's typical model (its mean accuracy)."""

    kind = "threshold"

    def __init__(self, order: np.ndarray, start_acc: float, rule: str = "midpoint") -> None:
        self.order = np.asarray(order, dtype=np.int64)
        self.rank = np.empty_like(self.order)
        self.rank[self.order] = np.arange(len(self.order))
        self.n = len(self.order)
        self.start = round(start_acc * self.n)
        self.rule = rule

    def predict(self, cols: np.ndarray, obs: np.ndarray) -> np.ndarray:
        if len(cols) == 0:
            t = self.start
        else:
            pos = self.rank[np.asarray(cols, dtype=np.int64)]
            by = np.argsort(pos, kind="stable")
            t = int(rule_thresholds(self.rule, pos[by], np.asarray(obs)[by][None, :], self.n)[0])
        p = np.zeros(self.n)
        p[self.order[:t]] = 1.0
        return p


@dataclass
class _Pending:
    cols: np.ndarray
    q: np.ndarray  # probability of each draw at its moment
    p: np.ndarray  # predicted P(correct) of the drawn sample
    rest: np.ndarray  # sum of p over the samples still unevaluated at the draw (incl. it)
    v: np.ndarray  # predicted conditional variance of z_t
    vf: np.ndarray  # the same with every P(correct) kept in [FLOOR_CLIP, 1 - FLOOR_CLIP]


@dataclass(frozen=True)
class AdaptiveEstimate:
    acc: float
    lo: float | None
    hi: float | None
    half: float | None  # t * se, before clipping to [0, 1]
    evaluated: int


class AdaptiveSampler:
    """The design and estimator of the module docstring, one new model at a time.

    ``propose(size, rng)`` returns the next round's columns (in draw order);
    ``record(cols, observed)`` takes their results; ``estimate()`` gives the accuracy and
    its interval from everything recorded. Deterministic given the random generators, so
    a round trip through files can be replayed (:func:`replay`).
    """

    def __init__(
        self,
        predictor: IRTPredictor | ThresholdPredictor,
        n: int,
        level: float = 0.95,
        floor: float = 0.2,
        clip: float = 0.02,
        weighting: str = "equal",
        variance_floor: bool = True,
    ) -> None:
        if not 0 < level < 1:
            raise InputError(f"level must be in (0, 1), got {level}.")
        if not floor > 0 or not 0 < clip < 0.5:
            raise InputError(f"floor must be > 0 and clip in (0, 0.5), got {floor} and {clip}.")
        if weighting not in WEIGHTINGS:
            raise InputError(
                f"unknown weighting {weighting!r}; use one of {', '.join(WEIGHTINGS)}."
            )
        self.predictor = predictor
        self.n = int(n)
        self.level, self.floor, self.clip, self.weighting = level, floor, clip, weighting
        self.variance_floor = variance_floor
        self.cols: list[int] = []
        self.obs: list[int] = []
        self.z: list[float] = []
        self.v: list[float] = []
        self.vf: list[float] = []
        self._known = np.zeros(self.n, dtype=bool)
        self._p = predictor.predict(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint8))
        self._pending: _Pending | None = None

    @property
    def remaining(self) -> int:
        return self.n - len(self.cols)

    def prediction(self) -> np.ndarray:
        """Current P(correct) for every sample (observed results where evaluated)."""
        p = self._p.copy()
        p[np.asarray(self.cols, dtype=np.int64)] = self.obs
        return p

    def propose(self, size: int, rng: np.random.Generator) -> np.ndarray:
        if self._pending is not None:
            raise InputError("the previous round's results have not been recorded yet.")
        if not 1 <= size <= self.remaining:
            raise InputError(
                f"a round must evaluate between 1 and {self.remaining} samples, got {size}."
            )
        rest = np.flatnonzero(~self._known)
        p = self._p[rest]
        pc = np.clip(p, self.clip, 1.0 - self.clip)
        c = pc * (1.0 - pc)
        s = np.sqrt(c)
        w = s + self.floor * s.mean()
        pick = np.argsort(rng.exponential(size=len(rest)) / w, kind="stable")[:size]

        # Totals over R_t: everything still unevaluated minus the round's earlier draws.
        def before(x_all: np.ndarray) -> np.ndarray:
            return x_all.sum() - np.concatenate(([0.0], np.cumsum(x_all[pick])[:-1]))

        W = before(w)
        q = w[pick] / W
        v = (W * before(c / w) - before(c)) / self.n**2
        cf = np.maximum(p * (1.0 - p), FLOOR_CLIP * (1.0 - FLOOR_CLIP))
        vf = (W * before(cf / w) - before(cf)) / self.n**2
        self._pending = _Pending(
            cols=rest[pick],
            q=q,
            p=p[pick],
            rest=before(p),
            v=np.maximum(v, 0.0),
            vf=np.maximum(vf, 0.0),
        )
        return rest[pick].copy()

    def record(self, cols: np.ndarray, observed: np.ndarray) -> None:
        pend = self._pending
        cols = np.asarray(cols, dtype=np.int64)
        obs = np.asarray(observed)
        if pend is None or cols.shape != pend.cols.shape or not np.array_equal(cols, pend.cols):
            raise InputError(
                "the results must be for the samples of the round just proposed, in its order."
            )
        if obs.shape != cols.shape or not np.isin(obs, (0, 1)).all():
            raise InputError("observed results must be 0/1, one per proposed sample.")
        a = obs.astype(np.float64)
        known_sum = float(np.sum(self.obs)) + np.concatenate(([0.0], np.cumsum(a)[:-1]))
        z = (known_sum + pend.rest + (a - pend.p) / pend.q) / self.n
        self.z += z.tolist()
        self.v += pend.v.tolist()
        self.vf += pend.vf.tolist()
        self.cols += cols.tolist()
        self.obs += obs.astype(int).tolist()
        self._known[cols] = True
        self._pending = None
        self._p = self.predictor.predict(
            np.asarray(self.cols, dtype=np.int64), np.asarray(self.obs, dtype=np.uint8)
        )

    def estimate(self) -> AdaptiveEstimate:
        t = len(self.z)
        if t == 0:
            raise InputError("at least one evaluated sample is needed for an estimate.")
        if t == self.n:
            acc = float(np.mean(self.obs))
            return AdaptiveEstimate(acc, acc, acc, 0.0, t)
        z = np.asarray(self.z)
        if self.weighting == "equal":
            lam = np.ones(t)
        else:
            v = np.asarray(self.v)
            # A draw from a one-sample remainder is exact (v = 0); only the last draw of a
            # full evaluation can be, and that case returned above.
            lam = 1.0 / np.maximum(v, 1e-12)
        lam = lam / lam.sum()
        acc = float(lam @ z)
        if t < 2:
            return AdaptiveEstimate(float(np.clip(acc, 0, 1)), None, None, None, t)
        n_eff = 1.0 / float((lam**2).sum())
        var = float((lam**2 * (z - acc) ** 2).sum()) * n_eff / max(n_eff - 1.0, 1e-9)
        if self.variance_floor:
            # The variance the draws would have if every unevaluated sample kept at least a
            # FLOOR_CLIP chance of either result: the observed spread misses rare results that
            # have not turned up yet (a model that fails almost everything), this does not.
            var = max(var, float((lam**2 * np.asarray(self.vf)).sum()))
        half = float(stats.t.ppf(0.5 + self.level / 2.0, max(n_eff - 1.0, 1.0))) * np.sqrt(var)
        return AdaptiveEstimate(
            float(np.clip(acc, 0, 1)), max(acc - half, 0.0), min(acc + half, 1.0), half, t
        )

    def to_estimate(self) -> Estimate:
        """The engine's :class:`Estimate`: accuracy, interval, per-sample prediction."""
        e = self.estimate()
        prob = self.prediction()
        return Estimate(
            acc=e.acc,
            lo=e.lo,
            hi=e.hi,
            per_sample=(prob >= 0.5).astype(np.uint8),
            prob=prob,
            level=self.level,
        )


def round_size(
    evaluated: int, min_round: int = 8, growth: float = 0.25, max_round: int = 64
) -> int:
    """Rounds grow with what is known (a quarter of it by default): small rounds adapt often
    while the prediction is poor, large ones save refits once it is good."""
    return int(min(max(min_round, np.ceil(growth * evaluated)), max_round))


@dataclass(frozen=True)
class RoundRecord:
    """The estimate after one round of an adaptive evaluation.

    Attributes
    ----------
    round : int
        The round's number, from 0.
    evaluated : int
        Samples evaluated so far, this round's included.
    acc : float
        The estimated accuracy from every result so far, in ``[0, 1]``.
    lo, hi : float or None
        Its interval (clipped to ``[0, 1]``); None while fewer than two samples are in.
    half : float or None
        The interval's half-width before clipping (what the stopping rule compares with
        the target); None with the interval.
    """

    round: int
    evaluated: int
    acc: float
    lo: float | None
    hi: float | None
    half: float | None


@dataclass(frozen=True)
class AdaptiveRun:
    """Result of :func:`run_adaptive`: one record per round, the evaluated columns in draw
    order with their results, the final estimate and why the run stopped.

    Attributes
    ----------
    rounds : list of RoundRecord
        One record per round, in order.
    columns : numpy.ndarray
        int64 evaluated sample columns, in draw order.
    observed : numpy.ndarray
        uint8 0/1 results of ``columns``, in the same order.
    estimate : Estimate
        The final estimate: accuracy, interval, and the per-sample prediction (P(correct)
        >= 0.5, the observed result where evaluated) with its probabilities.
    stopped : {"target", "budget", "exhausted"}
        Why the run stopped: the half-width reached the target, the maximum budget was
        spent, or every sample was evaluated.
    checkpoints : dict of int to AdaptiveEstimate
        The estimate at each requested checkpoint budget the run reached.
    """

    rounds: list[RoundRecord]
    columns: np.ndarray
    observed: np.ndarray
    estimate: Estimate
    stopped: str
    checkpoints: dict[int, AdaptiveEstimate] = field(default_factory=dict)


def _check_run(
    n: int,
    until_halfwidth: float | None,
    max_budget: int | None,
    min_round: int,
    max_round: int,
) -> int:
    budget = n if max_budget is None else int(max_budget)
    if not 1 <= budget <= n:
        raise InputError(
            f"the maximum budget must be between 1 and the number of samples ({n}), got {max_budget}."
        )
    if until_halfwidth is not None and not 0 < until_halfwidth < 1:
        raise InputError(
            f"the target half-width must be in (0, 1) (a fraction, 0.01 = 1 point), got {until_halfwidth}."
        )
    if min_round < 1 or max_round < min_round:
        raise InputError(
            f"round sizes must satisfy 1 <= min_round <= max_round, got {min_round} and {max_round}."
        )
    return budget


def _next_size(
    done: int, budget: int, marks: Sequence[int], min_round: int, growth: float, max_round: int
) -> int:
    size = min(round_size(done, min_round, growth, max_round), budget - done)
    nxt = [c for c in marks if c > done]
    return min(size, nxt[0] - done) if nxt else size


def _stop_reason(
    e: AdaptiveEstimate, n: int, budget: int, until_halfwidth: float | None, min_evaluated: int
) -> str | None:
    """The stopping rule, checked after every round: one implementation for the engine's
    loop and for the round trip through files."""
    if (
        until_halfwidth is not None
        and e.half is not None
        and e.evaluated >= min_evaluated
        and e.half <= until_halfwidth
    ):
        return "target"
    if e.evaluated == n:
        return "exhausted"
    if e.evaluated >= budget:
        return "budget"
    return None


def run_adaptive(
    sampler: AdaptiveSampler,
    oracle: Callable[[np.ndarray], np.ndarray],
    seed: int,
    *,
    until_halfwidth: float | None = None,
    max_budget: int | None = None,
    checkpoints: Sequence[int] = (),
    min_round: int = 8,
    growth: float = 0.25,
    max_round: int = 64,
    min_evaluated: int = 16,
    on_round: Callable[[RoundRecord], None] | None = None,
) -> AdaptiveRun:
    """Evaluate in rounds until the half-width is at most ``until_halfwidth`` (checked after
    each round, once at least ``min_evaluated`` samples are in) or ``max_budget`` samples are
    spent. ``oracle(cols)`` returns the new model's 0/1 results on ``cols``: a stored row in
    simulation, a real evaluation otherwise. Rounds are cut so that every ``checkpoint``
    budget is hit exactly (the benchmark reads estimates there). Round ``r`` draws with
    ``numpy.random.default_rng([seed, r])``, so :func:`replay` can rebuild the state."""
    n = sampler.n
    budget = _check_run(n, until_halfwidth, max_budget, min_round, max_round)
    marks = sorted({int(c) for c in checkpoints if 0 < int(c) <= budget})
    rounds: list[RoundRecord] = []
    at: dict[int, AdaptiveEstimate] = {}
    stopped = "budget"
    r = 0
    while len(sampler.cols) < budget:
        done = len(sampler.cols)
        size = _next_size(done, budget, marks, min_round, growth, max_round)
        cols = sampler.propose(size, np.random.default_rng([seed, r]))
        obs = np.asarray(oracle(cols)).astype(np.uint8).ravel()
        sampler.record(cols, obs)
        e = sampler.estimate()
        rec = RoundRecord(r, e.evaluated, e.acc, e.lo, e.hi, e.half)
        rounds.append(rec)
        if on_round is not None:
            on_round(rec)
        if e.evaluated in marks:
            at[e.evaluated] = e
        r += 1
        why = _stop_reason(e, n, budget, until_halfwidth, min_evaluated)
        if why is not None:
            stopped = why
            break
    return AdaptiveRun(
        rounds=rounds,
        columns=np.asarray(sampler.cols, dtype=np.int64),
        observed=np.asarray(sampler.obs, dtype=np.uint8),
        estimate=sampler.to_estimate(),
        stopped=stopped,
        checkpoints=at,
    )


@dataclass(frozen=True)
class Progress:
    """Where a round trip through files stands (:func:`advance`).

    Attributes
    ----------
    rounds : list of RoundRecord
        One record per round whose results were all given, in order.
    next_columns : numpy.ndarray or None
        int64 sample columns of the round to evaluate next, in draw order; None once
        stopped.
    stopped : {"target", "budget", "exhausted"} or None
        Why the evaluation stopped (as :attr:`AdaptiveRun.stopped`); None while it goes
        on.
    unused : int
        Results given for samples outside every round so far (ignored).
    sampler : AdaptiveSampler
        The sampler with every complete round recorded (its ``estimate()`` is the
        current estimate).
    """

    rounds: list[RoundRecord]
    next_columns: np.ndarray | None
    stopped: str | None
    unused: int
    sampler: AdaptiveSampler


def advance(
    sampler: AdaptiveSampler,
    results: dict[int, int],
    seed: int,
    *,
    until_halfwidth: float | None = None,
    max_budget: int | None = None,
    min_round: int = 8,
    growth: float = 0.25,
    max_round: int = 64,
    min_evaluated: int = 16,
) -> Progress:
    """Replay the rounds whose results are in ``results`` (column -> 0/1, everything evaluated
    so far, in any order) and return the next round to evaluate, or why to stop.

    The same rounds, draws and stopping rule as :func:`run_adaptive` with the same seed, so a
    model evaluated round by round through files (download the list, run the harness, upload
    all results so far) gets exactly the estimate a simulation with its results would.
    The design and estimator are those of the module docstring (Neyman allocation with a
    defensive floor; Des Raj's ordered difference estimator, Des Raj, 1956, "Some
    estimators in sampling with varying probabilities without replacement", JASA 51).

    Parameters
    ----------
    sampler : AdaptiveSampler
        A fresh sampler (nothing recorded), e.g. ``AdaptiveMethod.sampler()``.
    results : dict of int to int
        Every result so far: sample column -> 0/1, in any order.
    seed : int
        The design's seed: round ``r`` draws with ``numpy.random.default_rng([seed, r])``.
    until_halfwidth : float, optional
        Stop once the interval's half-width is at most this (a fraction in ``(0, 1)``,
        0.01 = 1 point); None runs to the budget.
    max_budget : int, optional
        At most this many samples, in ``[1, n]``; None is all ``n``.
    min_round : int
        The smallest round, at least 1.
    growth : float
        A round's size as a fraction of the samples already evaluated (between
        ``min_round`` and ``max_round``).
    max_round : int
        The largest round, at least ``min_round``.
    min_evaluated : int
        The half-width target is checked only once this many samples are in.

    Returns
    -------
    Progress
        The complete rounds replayed, and the next round's columns or why to stop.

    Raises
    ------
    InputError
        If the sampler already holds results, a setting is out of range, a round has
        results for only some of its samples, or a result is not 0 or 1.
    """
    n = sampler.n
    budget = _check_run(n, until_halfwidth, max_budget, min_round, max_round)
    if len(sampler.cols):
        raise InputError("advance starts from a fresh sampler.")
    rounds: list[RoundRecord] = []
    used = 0
    r = 0
    while True:
        if rounds:
            last = rounds[-1]
            why = _stop_reason(
                AdaptiveEstimate(last.acc, last.lo, last.hi, last.half, last.evaluated),
                n,
                budget,
                until_halfwidth,
                min_evaluated,
            )
            if why is not None:
                return Progress(rounds, None, why, len(results) - used, sampler)
        size = _next_size(len(sampler.cols), budget, (), min_round, growth, max_round)
        cols = sampler.propose(size, np.random.default_rng([seed, r]))
        have = [int(c) in results for c in cols]
        if not any(have):
            return Progress(rounds, cols, None, len(results) - used, sampler)
        if not all(have):
            raise InputError(
                f"round {r + 1} is incomplete: {have.count(False)} of its {size} samples have no result "
                "yet; evaluate the whole list of that round."
            )
        sampler.record(cols, np.array([results[int(c)] for c in cols], dtype=np.uint8))
        used += size
        e = sampler.estimate()
        rounds.append(RoundRecord(r, e.evaluated, e.acc, e.lo, e.hi, e.half))
        r += 1


def simulate(sampler: AdaptiveSampler, row: np.ndarray, seed: int, **kwargs: Any) -> AdaptiveRun:
    """:func:`run_adaptive` against a known row of results (a stored model)."""
    row = np.asarray(row)
    if row.shape != (sampler.n,) or not np.isin(row, (0, 1)).all():
        raise InputError(
            f"the model's row must hold {sampler.n} 0/1 results, got shape {row.shape}."
        )
    return run_adaptive(sampler, lambda cols: row[cols], seed, **kwargs)


def replay(
    sampler: AdaptiveSampler, rounds: Sequence[tuple[np.ndarray, np.ndarray]], seed: int
) -> AdaptiveSampler:
    """Rebuild a sampler's state from earlier rounds' (columns, results), checking that each
    round is the one the design would have drawn (round ``r`` uses ``default_rng([seed, r])``).

    This is what makes a round trip through files stateless: the next round's selection
    needs only the seed and the results so far."""
    for r, (cols, obs) in enumerate(rounds):
        cols = np.asarray(cols, dtype=np.int64)
        want = sampler.propose(len(cols), np.random.default_rng([seed, r]))
        if not np.array_equal(np.sort(want), np.sort(cols)):
            raise InputError(
                f"round {r + 1}'s samples are not the ones this design drew with seed {seed}; "
                "were they produced with another cache, seed or method?"
            )
        by = {int(c): int(o) for c, o in zip(cols, np.asarray(obs).ravel())}
        sampler.record(want, np.array([by[int(c)] for c in want], dtype=np.uint8))
    return sampler
