"""The contract every search method follows (docs/CONTRACTS.md), and nothing else.

A search method estimates a new row of the cache matrix (a new model's correctness on
every sample, insert_M of Prabhu et al. (2024) §3.2; or a new sample's correctness for every model,
insert_D, §3.3) from a budget of evaluations, in scikit-learn's shape:

- ``__init__(**settings)``: settings only, checked (``InputError`` on a bad one);
- ``fit(A_sort, order=None, confidence=None) -> self``: learn from the cache (rows =
  what is already known, columns = the axis to estimate along); fitted state ends in ``_``;
- ``select(n, budget, rng) -> int64 array``: exactly ``budget`` distinct, sorted indices
  in ``[0, n)`` to evaluate (``n`` is the length of the estimated row);
- ``estimate(indices, observed) -> Estimate``: the estimate from the observed 0/1
  results at those indices.

``select`` and ``estimate`` before ``fit`` raise :class:`~lifelong_core.errors.NotFittedError`.
This module imports no implementation; :mod:`lifelong_core.methods.registry` names them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from lifelong_core.errors import InputError, NotFittedError


@dataclass(frozen=True)
class Estimate:
    """One estimated row from ``n'`` evaluations (docs/CONTRACTS.md).

    ``acc``: estimated fraction of ones in the row (a model's accuracy; for insert_D the
    fraction of models that get the sample right); ``lo``/``hi``: a 95% interval, or None
    when the method gives none; ``per_sample``: the predicted 0/1 row (uint8, length
    ``n``); ``prob``: predicted P(1) per entry, when the method has one.
    """

    acc: float
    lo: float | None
    hi: float | None
    per_sample: np.ndarray
    prob: np.ndarray | None = None


@runtime_checkable
class SearchMethod(Protocol):
    """The protocol of the module docstring."""

    name: str

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> SearchMethod: ...

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray: ...

    def estimate(self, indices: np.ndarray, observed: np.ndarray) -> Estimate: ...


def check_fitted(method: object, attribute: str) -> None:
    """NotFittedError unless ``method`` has the fitted ``attribute`` (set by ``fit``)."""
    if not hasattr(method, attribute):
        raise NotFittedError(
            f"{type(method).__name__} is not fitted yet; call fit(A_sort, order) first."
        )


def check_observations(
    positions: np.ndarray, observed: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated indices (int64) and their 0/1 results (uint8), checked: same length,
    at least one, distinct, in ``[0, n)``."""
    pos = np.asarray(positions, dtype=np.int64)
    obs = np.asarray(observed)
    if pos.ndim != 1 or obs.shape != pos.shape:
        raise InputError("positions and observed results must be 1-D arrays of the same length.")
    if len(pos) == 0:
        raise InputError("at least one evaluated sample is needed for an estimate.")
    if pos.min() < 0 or pos.max() >= n or len(np.unique(pos)) != len(pos):
        raise InputError(f"evaluated sample indices must be distinct and in [0, {n}).")
    if not np.isin(obs, (0, 1)).all():
        raise InputError("observed results must be 0/1 correctness values.")
    return pos, obs.astype(np.uint8)
