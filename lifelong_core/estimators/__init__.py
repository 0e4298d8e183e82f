"""Estimators that go beyond Sort & Search with the same budget ``n'`` and cache (issue 8).

Every entry of :data:`ESTIMATORS` is a factory returning a ``SearchMethod``
(docs/CONTRACTS.md): ``fit(A_sort, order)`` on the Sort models, ``select(n, budget, rng)``
for the samples to evaluate, ``estimate(positions, observed)`` for an :class:`Estimate`
with a 95% interval and a per-sample prediction. The engine's ``sweep --search NAME``
looks names up here lazily.

- ``mirt``: multidimensional 2PL item-response model of the cache (k = 6 directions);
  prediction beyond one order. See :mod:`.irt`.
- ``irt``: the same with k = 1 (a 2PL model: one order, plus per-sample discriminations).
- ``neighbours``: posterior-weighted mixture of cache models, a Bayesian
  CopyNearest&Expand. See :mod:`.neighbours`.

All three share the stratified-random selection along the Sort order and the
model-assisted difference estimator of accuracy (:mod:`.base`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from lifelong_core.estimators.base import Estimate
from lifelong_core.estimators.irt import MIRTEstimator
from lifelong_core.estimators.neighbours import NeighboursEstimator

ESTIMATORS: dict[str, Callable[..., object]] = {
    "mirt": MIRTEstimator,
    "irt": partial(MIRTEstimator, k=1),
    "neighbours": NeighboursEstimator,
}

__all__ = ["ESTIMATORS", "Estimate", "MIRTEstimator", "NeighboursEstimator"]
