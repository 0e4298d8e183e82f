"""Agreement-weighted neighbours in model space: a Bayesian CopyNearest&Expand.

Prabhu et al.'s (2024) CopyNearest&Expand baseline (§4.2, after Vivek et al.) copies the unevaluated
predictions of the one cache model that agrees most with the new model on the evaluated
samples. Here every cache model ``i`` is a hypothesis "the new model is model ``i`` with
each answer flipped independently with probability ``eps_i``"; the evaluated samples give
each hypothesis a likelihood, ``eps_i`` is set to its posterior mean under a uniform prior
(``(disagreements + 1) / (n' + 2)``, Laplace's rule), and the prediction is the posterior
mixture ``P(correct_j) = sum_i w_i [A_ij (1 - eps_i) + (1 - A_ij) eps_i]``. It departs from
the paper by averaging instead of copying one row, by keeping the evaluated samples'
observed results, and by sampling along the cache order (``base``) instead of at random;
the nearest-neighbour rule is its limit as the posterior concentrates. No single sample
order is assumed: a model is predicted from whichever cache models it resembles.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, check_fitted, check_observations
from lifelong_core.methods.design import StratifiedAlongOrder
from lifelong_core.methods.irt import check_cache, finish


def _loglik(agree: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Log-likelihood of each hypothesis and its flip rate, from agreement counts."""
    dis = total - agree
    eps = (dis + 1.0) / (total + 2.0)
    return agree * np.log1p(-eps) + dis * np.log(eps), eps


class NeighboursEstimator(StratifiedAlongOrder):
    """Posterior-weighted mixture of cache models (see module docstring).

    Accuracy: the model-assisted difference estimator; its interval width comes from exact
    leave-one-out residuals (each evaluated sample predicted from the weights the other
    ``n' - 1`` give), because the weights were fitted on the evaluated samples.
    """

    name = "neighbours"

    def __init__(self, level: float = 0.95) -> None:
        self.level = level

    def _validate_params(self) -> None:
        if not 0 < self.level < 1:
            raise InputError(f"level must be in (0, 1), got {self.level}.", param="level")

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> NeighboursEstimator:
        self._validate_params()
        order = self._order_of(A_sort, order)
        A = check_cache(A_sort, order)
        self.A_ = A.astype(np.uint8)
        # A float copy of the cache is fitted state, so that each estimate's weighted
        # average of rows is one matrix-vector product with O(n + m) working memory.
        self.A_float_ = A.astype(np.float32)
        self._set_order(order)
        return self

    def estimate(self, positions: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "order_")
        n = len(self.order_)
        pos, obs = check_observations(positions, observed, n)
        match = self.A_[:, pos] == obs  # (m, n') bool, the only m x n' array
        agree = match.sum(axis=1)
        ll, eps = _loglik(agree, len(pos))
        w = np.exp(ll - logsumexp(ll))
        prob = (w * (1.0 - 2.0 * eps)).astype(np.float32) @ self.A_float_ + np.float32(
            (w * eps).sum()
        )
        prob = prob.astype(np.float64)
        loo = self._leave_one_out(match, agree, obs) if len(pos) > 1 else None
        return finish(prob, pos, obs, self.rank_, self.level, width_resid=loo)

    @staticmethod
    def _leave_one_out(match: np.ndarray, agree: np.ndarray, obs: np.ndarray) -> np.ndarray:
        """Residual of each evaluated sample predicted from the other ``n' - 1``.

        Without sample ``j`` a model's agreement drops by one if it matched ``j`` and is
        unchanged otherwise, so every leave-one-out posterior mixes two fixed weight
        vectors, and all ``n'`` predictions are a few matrix-vector products.
        """
        total = len(obs) - 1
        # Clipping only touches cases that never occur (a model that agreed with no sample
        # "agreeing" with j, or one that agreed with all "disagreeing"); their terms cancel.
        ll1, eps1 = _loglik(np.clip(agree - 1, 0, total), total)  # the model agreed with j
        ll0, eps0 = _loglik(np.clip(agree, 0, total), total)  # it disagreed
        top = max(ll1.max(), ll0.max())
        e1, e0 = np.exp(ll1 - top), np.exp(ll0 - top)
        mf = match.astype(np.float64)
        z = mf.T @ (e1 - e0) + e0.sum()
        # A model that agreed with j says "correct" iff j was correct; one that disagreed
        # says the opposite; each is right with probability 1 - its flip rate.
        num_if_correct = mf.T @ (e1 * (1 - eps1) - e0 * eps0) + (e0 * eps0).sum()
        num_if_wrong = mf.T @ (e1 * eps1 - e0 * (1 - eps0)) + (e0 * (1 - eps0)).sum()
        p_correct = np.where(obs == 1, num_if_correct, num_if_wrong) / z
        return obs - p_correct
