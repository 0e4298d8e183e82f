"""Agreement-weighted neighbours in model space: a Bayesian CopyNearest&Expand.

Seed 001's CopyNearest&Expand baseline (§4.2, after Vivek et al.) copies the unevaluated
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

from lifelong_core.estimators.base import Estimate, stratified_positions
from lifelong_core.estimators.irt import check_cache, check_observations, finish
from lifelong_core.errors import InputError


def _weights(agree: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Posterior weights and flip rates from agreement counts (arrays broadcast)."""
    dis = total - agree
    eps = (dis + 1.0) / (total + 2.0)
    ll = agree * np.log1p(-eps) + dis * np.log(eps)
    w = np.exp(ll - logsumexp(ll, axis=0, keepdims=True))
    return w, eps


class NeighboursEstimator:
    """Posterior-weighted mixture of cache models (see module docstring).

    Accuracy: the model-assisted difference estimator; its interval width comes from exact
    leave-one-out residuals (each evaluated sample predicted from the weights the other
    ``n' - 1`` give), because the weights were fitted on the evaluated samples.
    """

    name = "neighbours"

    def __init__(self, level: float = 0.95):
        self.level = level

    def fit(self, A_sort: np.ndarray, order: np.ndarray, confidence: np.ndarray | None = None) -> "NeighboursEstimator":
        A = check_cache(A_sort, order)
        self.A_ = A.astype(np.uint8)
        # A float copy of the cache is fitted state, so that each estimate's weighted
        # average of rows is one matrix-vector product with O(n + m) working memory.
        self.A_float_ = A.astype(np.float32)
        self.order_ = np.asarray(order, dtype=np.int64)
        self.rank_ = np.empty_like(self.order_)
        self.rank_[self.order_] = np.arange(len(self.order_))
        return self

    def select(self, n: int, budget: int, rng: np.random.Generator) -> np.ndarray:
        if n != len(self.order_):
            raise InputError(f"the estimator was fitted on {len(self.order_)} samples, not {n}.")
        return np.sort(self.order_[stratified_positions(n, budget, rng)])

    def estimate(self, positions: np.ndarray, observed: np.ndarray) -> Estimate:
        n = len(self.order_)
        pos, obs = check_observations(positions, observed, n)
        match = self.A_[:, pos] == obs  # (m, n') bool
        agree = match.sum(axis=1)
        w, eps = _weights(agree, len(pos))
        a_w = w * (1.0 - 2.0 * eps)
        prob = a_w.astype(np.float32) @ self.A_float_ + np.float32((w * eps).sum())
        prob = prob.astype(np.float64)
        # Leave-one-out: drop sample j from every model's counts, re-weight, predict j.
        if len(pos) > 1:
            agree_loo = agree[:, None] - match
            w_loo, eps_loo = _weights(agree_loo, len(pos) - 1)
            cached = self.A_[:, pos]
            p_loo = (w_loo * np.where(cached == 1, 1.0 - eps_loo, eps_loo)).sum(axis=0)
            loo = obs - p_loo
        else:
            loo = None
        return finish(prob, pos, obs, self.order_, self.rank_, self.level, width_resid=loo)
