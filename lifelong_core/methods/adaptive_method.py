"""The adaptive method as one object: fit on the cache once, then evaluate new models in
rounds until the interval is narrow enough (the active design's rounds: :mod:`.adaptive`,
:mod:`.active`).

The predictions that steer the selection come from the cross-validated item model of
:mod:`.tuning` (or Sort & Search's threshold prediction where that predicts better, on very
small caches); ``tune=False`` uses ``mirt``'s fixed ``k = 10`` instead. Unlike the one-shot
methods of the sweep, the selection of round ``r`` depends on the results of rounds before
it, so the method is driven by an *oracle* (a stored row in simulation, a real evaluation
otherwise) or by replaying earlier rounds' results (a round trip through files).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.active import FLOOR
from lifelong_core.methods.adaptive import (
    AdaptiveRun,
    AdaptiveSampler,
    IRTPredictor,
    replay,
    run_adaptive,
    simulate,
)
from lifelong_core.methods.base import BaseMethod
from lifelong_core.methods.irt import MIRTEstimator, check_cache
from lifelong_core.methods.tuning import TunedEstimator, TuneResult
from lifelong_core.sortsearch.sort import order_from_sums


class AdaptiveMethod(BaseMethod):
    """Adaptive evaluation of new models: fit on the cache once, then rounds per model.

    Each round's items are the active design's (:mod:`lifelong_core.methods.active`: a
    stratified pilot first, then one item per zone where the prediction is least sure;
    Zrnic & Candès, 2024, "Active Statistical Inference", ICML; Kossen et al., 2021,
    "Active Testing", ICML), and the accuracy is estimated with an interval that stays
    valid whatever the new model does (Horvitz-Thompson difference estimators of each
    round, combined with weights fixed before each round; variance from the pilot's strata
    and pairs of zones). The predictions come from the cross-validated item model of
    :mod:`lifelong_core.methods.tuning`, or Sort & Search's threshold (Prabhu et al., 2024,
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.2) where that
    predicts better.

    Parameters
    ----------
    level : float
        The interval's coverage, in ``(0, 1)`` (checked when used).
    seed : int
        The seed of the cross-validation's subsets and folds (not of the rounds: those
        take the seed given to :meth:`simulate`, :meth:`run` or :meth:`resume`).
    floor : float
        The uniform rule's share in the selection weights, in ``(0, 1]``
        (:func:`lifelong_core.methods.active.selection_weights`).
    tune : bool
        Cross-validate the item model on the cache (``mirt-cv``); False uses ``mirt``
        with its fixed ``k = 10``.
    tuning : TuneResult, optional
        A choice already made (e.g. on a whole store), which skips the
        cross-validation; used only with ``tune``.

    Attributes
    ----------
    name : str
        ``adaptive``.
    n_ : int
        After :meth:`fit`: the number of samples.
    predictor_ : IRTPredictor or ThresholdPredictor
        After :meth:`fit`: what predicts a new model's P(correct) from its results.
    tuning_ : TuneResult or None
        After :meth:`fit`: what the cross-validation chose; None without ``tune``.
    """

    name = "adaptive"

    def __init__(
        self,
        level: float = 0.95,
        seed: int = 0,
        floor: float = FLOOR,
        tune: bool = True,
        tuning: TuneResult | None = None,
    ) -> None:
        self.level, self.seed, self.tuning = level, seed, tuning
        self.floor, self.tune = floor, tune

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> AdaptiveMethod:
        """Fit the predictor on the cache.

        Parameters
        ----------
        A_sort : numpy.ndarray
            (models, samples) 0/1 cache, at least 2 x 2.
        order : numpy.ndarray, optional
            The easy -> hard order of the samples (default: by column sums, ties
            stable).
        confidence : numpy.ndarray, optional
            Not used (the search-method contract's signature has it).

        Returns
        -------
        AdaptiveMethod
            The method itself, fitted.

        Raises
        ------
        InputError
            If the cache is not a 0/1 matrix of at least 2 models and 2 samples,
            ``order`` is not a permutation of its columns, or ``level`` is not in
            ``(0, 1)``.
        """
        A = np.asarray(A_sort)
        if order is None:
            order = order_from_sums(A.sum(axis=0))
        A = check_cache(A, order)
        self.n_ = A.shape[1]
        self.order_ = np.asarray(order, dtype=np.int64)
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
        """A fresh sampler for one new model.

        Returns
        -------
        AdaptiveSampler
            Nothing recorded yet; its first round is drawn from the prediction for a
            model with no result.

        Raises
        ------
        InputError
            Before :meth:`fit`, or if ``level`` or ``floor`` is out of range.
        """
        if not hasattr(self, "predictor_"):
            raise InputError("fit the adaptive method on a cache before evaluating a model.")
        return AdaptiveSampler(
            self.predictor_, self.n_, level=self.level, floor=self.floor, order=self.order_
        )

    def simulate(self, row: np.ndarray, seed: int, **kwargs: Any) -> AdaptiveRun:
        """Evaluate a model whose results are known (a stored row), round by round.

        Parameters
        ----------
        row : numpy.ndarray
            (n,) the model's 0/1 results on every sample; each round reads only its own
            columns.
        seed : int
            The design's seed: round ``r`` draws with
            ``numpy.random.default_rng([seed, r])``.
        **kwargs
            Stopping and round settings of
            :func:`~lifelong_core.methods.adaptive.run_adaptive`: ``until_halfwidth``,
            ``max_budget``, ``checkpoints``, ``min_round``, ``growth``, ``max_round``,
            ``min_evaluated``, ``on_round``.

        Returns
        -------
        AdaptiveRun

        Raises
        ------
        InputError
            Before :meth:`fit`, if ``row`` is not ``n`` 0/1 results, or a setting is out
            of range.
        """
        return simulate(self.sampler(), row, seed, **kwargs)

    def run(
        self, oracle: Callable[[np.ndarray], np.ndarray], seed: int, **kwargs: Any
    ) -> AdaptiveRun:
        """Evaluate a model for real, round by round.

        Parameters
        ----------
        oracle : callable
            ``oracle(columns)`` evaluates the new model on the int64 sample ``columns``
            and returns its 0/1 results, in the same order.
        seed : int
            The design's seed: round ``r`` draws with
            ``numpy.random.default_rng([seed, r])``.
        **kwargs
            Stopping and round settings of
            :func:`~lifelong_core.methods.adaptive.run_adaptive`: ``until_halfwidth``,
            ``max_budget``, ``checkpoints``, ``min_round``, ``growth``, ``max_round``,
            ``min_evaluated``, ``on_round``.

        Returns
        -------
        AdaptiveRun

        Raises
        ------
        InputError
            Before :meth:`fit`, if a setting is out of range, or the oracle returns
            results that are not 0/1, one per column.
        """
        return run_adaptive(self.sampler(), oracle, seed, **kwargs)

    def resume(self, rounds: Sequence[tuple[np.ndarray, np.ndarray]], seed: int) -> AdaptiveSampler:
        """The state after earlier rounds' results (checked against the design's draws).

        Parameters
        ----------
        rounds : sequence of (numpy.ndarray, numpy.ndarray)
            Each earlier round's sample columns and their 0/1 results, in round order
            (within a round, any order).
        seed : int
            The seed the rounds were drawn with.

        Returns
        -------
        AdaptiveSampler
            A sampler with every round recorded, ready to propose the next.

        Raises
        ------
        InputError
            Before :meth:`fit`, or if a round's samples are not the ones the design
            draws with ``seed`` (another cache, seed or method).
        """
        return replay(self.sampler(), rounds, seed)
