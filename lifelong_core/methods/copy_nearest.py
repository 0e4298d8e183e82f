"""The CopyNearest&Expand baseline of Prabhu et al. (2024) (§4.2 Key Result 3) as a search method."""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, check_fitted, check_observations
from lifelong_core.sortsearch.search import check_budget


class CopyNearestExpand:
    """CopyNearest&Expand baseline (Prabhu et al., 2024, §4.2 Key Result 3; after Vivek et al.).

    ``n'`` samples drawn uniformly at random *without* the Sort order; the Sort model
    whose row agrees most with the new model on those samples (smallest Hamming
    distance, lowest row on ties) lends its row for the other ``n - n'`` samples; the
    evaluated samples keep their observed values. ``acc`` is the mean of that vector.
    """

    name = "copy-nearest"

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> CopyNearestExpand:
        self.A_ = np.asarray(A_sort).astype(np.uint8, copy=False)
        self.n_ = self.A_.shape[1]
        return self

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        check_fitted(self, "A_")
        if n != self.n_:
            raise InputError(f"the method was fitted on {self.n_} samples, not {n}.")
        check_budget(n, budget)
        if rng is None:
            raise InputError(
                "copy-nearest samples at random and needs a random generator (pass a seed)."
            )
        return np.sort(rng.choice(n, size=budget, replace=False)).astype(np.int64)

    def nearest(self, columns: np.ndarray, observed: np.ndarray) -> int:
        check_fitted(self, "A_")
        columns, observed = check_observations(columns, observed, self.n_)
        dist = (self.A_[:, columns] != observed).sum(axis=1)
        return int(np.argmin(dist))

    def estimate(self, columns: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "A_")
        columns, observed = check_observations(columns, observed, self.n_)
        y = self.A_[self.nearest(columns, observed)].copy()
        y[columns] = observed
        return Estimate(float(y.mean()), None, None, y)
