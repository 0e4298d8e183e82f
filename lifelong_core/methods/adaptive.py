"""Adaptive evaluation: rounds of the active design until the interval is narrow enough.

Design and estimator. Evaluations happen in rounds, by the active item choice of
:mod:`.active` (Zrnic & Candès, 2024, "Active Statistical Inference", ICML; Kossen et al.,
2021, "Active Testing: Sample-Efficient Model Evaluation", ICML): the first round is a
stratified pilot along the cache's easy -> hard order (about a quarter of the budget,
within the round sizes); every later round is drawn from what is left, one item per zone
with chance proportional to the predicted standard deviation ``sqrt(p (1 - p))`` mixed with
a uniform floor, the predictions coming from every result so far. The estimate is every
round's difference estimator (cross-fitted predictions) combined with weights fixed before
each round, its variance from the pilot's strata and the zones' pairs, with a floor for
rare results not yet seen (:mod:`.active`'s docstring gives the papers and the details).
Each round is unbiased given the rounds before it, so the estimate stays valid however the
rounds adapted, also for a new model better than every cached one (Zhang, Dorner & Hardt,
2025, "How Benchmark Prediction from Fewer Data Misses the Mark").

Rounds, stop, replay. Round ``r`` draws with ``numpy.random.default_rng([seed, r])``; its
size grows with what is known (:func:`round_size`), and the stopping rule is checked after
each round: the half-width at or below the target (once ``min_evaluated`` items are in),
the maximum budget spent, or every item evaluated. A round trip through files (download a
round's list, run it, upload every result so far) replays the rounds from the seed and the
results (:func:`advance`), so nothing is kept between visits or commands.

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
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.methods.active import FLOOR, RoundsDesign, pilot_size
from lifelong_core.methods.base import Estimate
from lifelong_core.methods.irt import ItemModel, map_ability
from lifelong_core.sortsearch.search import rule_thresholds


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


@dataclass(frozen=True)
class AdaptiveEstimate:
    """The estimate after the rounds so far: accuracy, interval, the interval's half-width
    before clipping (what the stopping rule compares with the target), and the items
    evaluated."""

    acc: float
    lo: float | None
    hi: float | None
    half: float | None
    evaluated: int


class AdaptiveSampler:
    """The active design's rounds for one new model (module docstring).

    ``propose(size, rng)`` returns the next round's columns; ``record(cols, observed)``
    takes their results; ``estimate()`` gives the accuracy and its interval from every
    round. Deterministic given the random generators, so a round trip through files can be
    replayed (:func:`replay`).

    Parameters
    ----------
    predictor : object
        ``predict(columns, results)``: P(correct) of every item from a new model's results
        (:class:`IRTPredictor`, :class:`ThresholdPredictor`).
    n : int
        The number of items.
    level : float
        The interval's coverage, in ``(0, 1)``.
    floor : float
        The uniform rule's share in the selection weights, in ``(0, 1]``.
    order : numpy.ndarray, optional
        The easy -> hard order the pilot is stratified along (default the predictor's own
        order, else by the predictions for a model with no result, most likely right
        first).
    """

    def __init__(
        self,
        predictor: IRTPredictor | ThresholdPredictor,
        n: int,
        level: float = 0.95,
        floor: float = FLOOR,
        order: np.ndarray | None = None,
    ) -> None:
        if not 0 < level < 1:
            raise InputError(f"level must be in (0, 1), got {level}.")
        if not 0 < floor <= 1:
            raise InputError(f"floor must be in (0, 1], got {floor}.")
        self.predictor = predictor
        self.n = int(n)
        if order is None:
            order = getattr(predictor, "order", None)
        if order is None:
            empty = np.zeros(0, dtype=np.int64)
            order = np.argsort(-predictor.predict(empty, empty.astype(np.uint8)), kind="stable")
        self.design = RoundsDesign(order, predictor.predict, None, level, floor)
        self.rounds: list[tuple[np.ndarray, np.ndarray]] = []
        self.cols: list[int] = []
        self.obs: list[int] = []
        self._pending: np.ndarray | None = None

    @property
    def remaining(self) -> int:
        """Items not evaluated yet."""
        return self.n - len(self.cols)

    def propose(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """The next round's columns: the pilot first, then a zone round.

        Parameters
        ----------
        size : int
            The round's number of items, in ``[1, remaining]``.
        rng : numpy.random.Generator
            The round's random draw.

        Returns
        -------
        numpy.ndarray
            int64 columns, ascending.

        Raises
        ------
        InputError
            If the previous round's results are not recorded, or the size is out of range.
        """
        if self._pending is not None:
            raise InputError("the previous round's results have not been recorded yet.")
        if not 1 <= size <= self.remaining:
            raise InputError(
                f"a round must evaluate between 1 and {self.remaining} samples, got {size}."
            )
        cols = self.design.select_next(
            self.n,
            int(size),
            rng,
            np.asarray(self.cols, dtype=np.int64),
            np.asarray(self.obs, dtype=np.uint8),
        )
        self._pending = cols
        return cols.copy()

    def record(self, cols: np.ndarray, observed: np.ndarray) -> None:
        """Take the results of the round just proposed.

        Parameters
        ----------
        cols : numpy.ndarray
            The round's columns, as proposed.
        observed : numpy.ndarray
            Their 0/1 results, in the same order.

        Raises
        ------
        InputError
            If the columns are not the round just proposed, or a result is not 0 or 1.
        """
        pend = self._pending
        cols = np.asarray(cols, dtype=np.int64)
        obs = np.asarray(observed)
        if pend is None or cols.shape != pend.shape or not np.array_equal(cols, pend):
            raise InputError(
                "the results must be for the samples of the round just proposed, in its order."
            )
        if obs.shape != cols.shape or not np.isin(obs, (0, 1)).all():
            raise InputError("observed results must be 0/1, one per proposed sample.")
        self.rounds.append((cols, obs.astype(np.uint8)))
        self.cols += cols.tolist()
        self.obs += obs.astype(int).tolist()
        self._pending = None

    def estimate(self) -> AdaptiveEstimate:
        """The estimate from every round so far.

        Returns
        -------
        AdaptiveEstimate

        Raises
        ------
        InputError
            Before any round.
        """
        if not self.rounds:
            raise InputError("at least one evaluated sample is needed for an estimate.")
        acc, lo, hi, half, _, _ = self.design.interval(self.rounds)
        return AdaptiveEstimate(acc, lo, hi, half, len(self.cols))

    def to_estimate(self) -> Estimate:
        """The engine's :class:`Estimate`: accuracy, interval, per-item prediction.

        Returns
        -------
        Estimate
        """
        return self.design.estimate_rounds(self.rounds)


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
    if done == 0:
        # The pilot: about a quarter of the budget (the active design), within the rounds' sizes.
        first = max(min_round, min(max_round, pilot_size(budget) or min_round))
        size = min(first, budget)
    else:
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
