"""The adaptive method as one object: fit on the cache once, then evaluate new models in
rounds until the interval is narrow enough (design and estimator: :mod:`.adaptive`).

The predictions that steer the selection come from the cross-validated item model of
:mod:`.tuning` (or Sort & Search's threshold prediction where that predicts better, on very
small caches); ``tune=False`` uses ``mirt``'s fixed ``k = 10`` instead. Unlike the one-shot
methods of the sweep, the selection of round ``r`` depends on the results of rounds before
it, so the method is driven by an *oracle* (a stored row in simulation, a real evaluation
otherwise) or by replaying earlier rounds' results (a round trip through files).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.adaptive import (
    AdaptiveRun,
    AdaptiveSampler,
    IRTPredictor,
    replay,
    run_adaptive,
    simulate,
)
from lifelong_core.methods.irt import MIRTEstimator, check_cache
from lifelong_core.methods.tuning import TunedEstimator, TuneResult
from lifelong_core.sortsearch.sort import order_from_sums


class AdaptiveMethod:
    name = "adaptive"

    def __init__(
        self,
        level: float = 0.95,
        seed: int = 0,
        floor: float = 0.2,
        clip: float = 0.02,
        tune: bool = True,
        tuning: TuneResult | None = None,
    ):
        self.level, self.seed, self.tuning = level, seed, tuning
        self.floor, self.clip, self.tune = floor, clip, tune

    def fit(self, A_sort: np.ndarray, order: np.ndarray | None = None) -> AdaptiveMethod:
        A = np.asarray(A_sort)
        if order is None:
            order = order_from_sums(A.sum(axis=0))
        A = check_cache(A, order)
        self.n_ = A.shape[1]
        self.tuning_: TuneResult | None
        if self.tune:
            est = TunedEstimator(level=self.level, seed=self.seed, tuning=self.tuning).fit(A, order)
            self.predictor_ = est.predictor_
            self.tuning_ = est.tuning_
        else:
            self.predictor_ = IRTPredictor(MIRTEstimator(level=self.level).fit(A, order).item_)
            self.tuning_ = None
        return self

    def sampler(self) -> AdaptiveSampler:
        if not hasattr(self, "predictor_"):
            raise InputError("fit the adaptive method on a cache before evaluating a model.")
        return AdaptiveSampler(
            self.predictor_, self.n_, level=self.level, floor=self.floor, clip=self.clip
        )

    def simulate(self, row: np.ndarray, seed: int, **kwargs) -> AdaptiveRun:
        """Evaluate a model whose results are known (a stored row), round by round."""
        return simulate(self.sampler(), row, seed, **kwargs)

    def run(self, oracle: Callable[[np.ndarray], np.ndarray], seed: int, **kwargs) -> AdaptiveRun:
        """Evaluate a model for real: ``oracle(columns)`` returns its 0/1 results."""
        return run_adaptive(self.sampler(), oracle, seed, **kwargs)

    def resume(self, rounds: Sequence[tuple[np.ndarray, np.ndarray]], seed: int) -> AdaptiveSampler:
        """The state after earlier rounds' results (checked against the design's draws)."""
        return replay(self.sampler(), rounds, seed)
