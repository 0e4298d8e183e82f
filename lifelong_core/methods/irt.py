"""Multidimensional item-response model of the cache, and the estimator built on it.

Prabhu et al. (2024) forces one global easy -> hard order on every new model, and its error
decomposition (§4.5, Appendix E) shows that this order, not the number of evaluations, is
what limits sample-level accuracy; Appendix L(1) asks for "sample ordering structures"
beyond a single one. A compensatory multidimensional 2PL model (Reckase, *Multidimensional
Item Response Theory*, 2009, ch. 4), fitted to the cache as a logistic factor model
(Collins, Dasgupta & Schapire, NIPS 2001), is such a structure:

    P(model i correct on sample j) = sigmoid(d_j + w_j . theta_i),   theta_i in R^k.

``d_j`` is the sample's easiness, ``w_j`` its discriminations along ``k`` directions of
model space. With ``k = 1`` the predicted-correct set of every model is a threshold on one
order, ``-d_j / w_j`` (for the usual positive discriminations: what S&S assumes, with a
better order and calibrated probabilities); with ``k > 1`` each direction of ``theta`` reorders the samples,
so families of models that fail on their own samples get their own orders, as smoothly as
the data allow. Departures from the papers: the item parameters are fitted by
alternating penalised Newton steps (a Gaussian prior on ``theta`` and a ridge on ``w``),
and a new model's ``theta`` is the MAP estimate under the empirical distribution of the
cache models' ``theta`` (empirical Bayes), so a handful of evaluations already gives a
sensible prediction and ``n'`` large enough lets the data override the prior.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, ItemModel, check_fitted, check_observations
from lifelong_core.methods.design import StratifiedAlongOrder, difference_estimate_at


def check_cache(A_sort: np.ndarray, order: np.ndarray, least: int = 2) -> np.ndarray:
    """The cache as an array, checked: 0/1, at least ``least`` models and samples, and
    ``order`` a permutation of its columns."""
    A = np.asarray(A_sort)
    if A.ndim != 2 or A.shape[0] < least or A.shape[1] < least:
        raise InputError(
            f"the Sort cache must be a matrix with at least {least} models and {least} samples, "
            f"got shape {A.shape}."
        )
    if not np.isin(A, (0, 1)).all():
        raise InputError("the Sort cache must hold only 0/1 correctness values.")
    order = np.asarray(order)
    if order.shape != (A.shape[1],) or not np.array_equal(np.sort(order), np.arange(A.shape[1])):
        raise InputError(
            f"the sample order must be a permutation of the {A.shape[1]} sample columns."
        )
    return A


def _newton_rows(
    X: np.ndarray, Y: np.ndarray, offset: np.ndarray, beta: np.ndarray, ridge: np.ndarray
) -> np.ndarray:
    """One damped Newton step for many independent ridge logistic regressions at once.

    Regression r has design ``X`` (shared, (s, p)), responses ``Y[:, r]``, offsets
    ``offset[:, r]`` and coefficients ``beta[r]``; ``ridge`` is the (p,) penalty.
    """
    eta = offset + X @ beta.T
    mu = expit(eta)
    grad = X.T @ (Y - mu) - (ridge[:, None] * beta.T)  # (p, r)
    wts = mu * (1.0 - mu)
    p = X.shape[1]
    outer = (X[:, :, None] * X[:, None, :]).reshape(len(X), p * p)
    hess = (wts.T @ outer).reshape(-1, p, p) + np.diag(ridge)[None]
    step = np.linalg.solve(hess, grad.T[:, :, None])[:, :, 0]
    # Damping keeps the alternating fit monotone on separable columns (always-correct samples).
    return beta + np.clip(step, -2.0, 2.0)


def fit_item_model(
    A: np.ndarray, k: int = 10, iters: int = 25, item_ridge: float = 8.0
) -> ItemModel:
    """Fit ``sigmoid(d_j + w_j . theta_i)`` to the cache by alternating Newton steps.

    Initialised from the leading principal components of the centred cache (logistic
    PCA's usual start); ``theta`` carries a standard-normal prior (fixes the scale), ``w``
    a ridge of ``item_ridge`` and ``d`` a weak ridge of 0.01 so that samples every cache
    model gets right stay finite. Working memory is a few float64 arrays of the cache's
    shape.
    """
    Y = np.asarray(A, dtype=np.float64)
    m, n = Y.shape
    k = int(max(1, min(k, m - 1)))
    col = Y.mean(axis=0)
    d = np.log((col * m + 0.5) / ((1 - col) * m + 0.5))
    # Leading singular vectors from the m x m Gram matrix: far cheaper than an SVD of the
    # m x n cache when n >> m, and all the start needs.
    Z = Y - col
    evals, evecs = np.linalg.eigh(Z @ Z.T)
    top = np.argsort(evals)[::-1][:k]
    u = evecs[:, top]
    theta = u * np.sqrt(m)
    w = (Z.T @ u) * (4.0 / np.sqrt(m))
    item_pen = np.append(np.full(k, item_ridge), 0.01)
    model_pen = np.ones(k)
    for _ in range(iters):
        X = np.hstack([theta, np.ones((m, 1))])
        beta = _newton_rows(X, Y, np.zeros((1, 1)), np.hstack([w, d[:, None]]), item_pen)
        w, d = beta[:, :k], beta[:, k]
        theta = _newton_rows(w, Y.T, np.broadcast_to(d[:, None], (n, m)), theta, model_pen)
    return item_model(d, w, theta)


def item_model(d: np.ndarray, w: np.ndarray, theta: np.ndarray) -> ItemModel:
    """Item parameters with the empirical prior of the cache models' abilities.

    The prior of a new model's ``theta`` (empirical Bayes, module docstring) is the
    Gaussian with the cache models' mean and covariance, plus 1e-3 on the diagonal so
    that it stays invertible.

    Parameters
    ----------
    d : numpy.ndarray
        (n,) easiness of each sample.
    w : numpy.ndarray
        (n, k) discriminations of each sample along the ``k`` ability directions.
    theta : numpy.ndarray
        (m, k) the fitted abilities of the ``m`` cache models.

    Returns
    -------
    ItemModel
        ``d``, ``w`` and ``theta`` as given, with ``prior_mean`` (k,) and
        ``prior_prec`` (k, k), the inverse of the regularised covariance.
    """
    k = theta.shape[1]
    cov = np.cov(theta, rowvar=False).reshape(k, k) + 1e-3 * np.eye(k)
    return ItemModel(
        d=d, w=w, prior_mean=theta.mean(axis=0), prior_prec=np.linalg.inv(cov), theta=theta
    )


def map_ability(
    item: ItemModel, cols: np.ndarray, obs: np.ndarray, iters: int = 30
) -> tuple[np.ndarray, float]:
    """MAP ``theta`` of a new model from its results ``obs`` on sample columns ``cols``.

    Also returns the effective number of parameters of the penalised fit (trace of its
    hat matrix), which the interval uses to undo the shrinkage of in-sample residuals.
    """
    X = item.w[cols]
    off = item.d[cols]
    y = obs.astype(np.float64)
    theta = item.prior_mean.copy()
    for _ in range(iters):
        mu = expit(off + X @ theta)
        grad = X.T @ (y - mu) - item.prior_prec @ (theta - item.prior_mean)
        fisher = (X * (mu * (1 - mu))[:, None]).T @ X
        step = np.linalg.solve(fisher + item.prior_prec, grad)
        theta = theta + np.clip(step, -2.0, 2.0)
        if np.abs(step).max() < 1e-6:
            break
    mu = expit(off + X @ theta)
    fisher = (X * (mu * (1 - mu))[:, None]).T @ X
    df = float(np.trace(np.linalg.solve(fisher + item.prior_prec, fisher)))
    return theta, df


class MIRTEstimator(StratifiedAlongOrder):
    """Sample-level prediction from a multidimensional IRT model of the cache.

    Selection: stratified random along the cache order (``design``). Per-sample prediction:
    the evaluated samples carry their observed result; every other sample is predicted
    correct when ``P(correct) >= 0.5`` under the new model's MAP ability. Accuracy: the
    model-assisted difference estimator with a 95% stratified interval (``design``).
    """

    name = "mirt"

    def __init__(self, k: int = 10, iters: int = 25, item_ridge: float = 8.0, level: float = 0.95):
        if int(k) != k or k < 1 or int(iters) != iters or iters < 1:
            raise InputError(f"k and iters must be positive integers, got k={k}, iters={iters}.")
        if not item_ridge > 0 or not 0 < level < 1:
            raise InputError(
                f"item_ridge must be > 0 and level in (0, 1), got {item_ridge} and {level}."
            )
        self.k = k
        self.iters = iters
        self.item_ridge = item_ridge
        self.level = level

    def fit(
        self, A_sort: np.ndarray, order: np.ndarray, confidence: np.ndarray | None = None
    ) -> MIRTEstimator:
        A = check_cache(A_sort, order)
        self._set_order(order)
        self.item_ = fit_item_model(A, k=self.k, iters=self.iters, item_ridge=self.item_ridge)
        return self

    def fit_packed(
        self,
        P: np.ndarray,
        n: int,
        order: np.ndarray,
        progress=None,
        block_bytes: int | None = None,
        max_columns: int | None = None,
        seed: int = 0,
    ) -> MIRTEstimator:
        """:meth:`fit` from packed rows ``P`` ((m, ceil(n/8)) uint8, the store's layout) in
        bounded memory: the same fit made in column chunks; with ``n > max_columns`` the
        two-stage fit of :func:`.irt_fit.fit_packed_item_model`."""
        from lifelong_core.methods.irt_fit import DEFAULT_BLOCK_BYTES, fit_packed_item_model

        d, w, theta = fit_packed_item_model(
            P,
            n,
            k=self.k,
            iters=self.iters,
            item_ridge=self.item_ridge,
            max_columns=max_columns,
            seed=seed,
            block_bytes=block_bytes or DEFAULT_BLOCK_BYTES,
            progress=progress,
        )
        return self.with_items(item_model(d, w, theta), order)

    def kept_params(self) -> dict:
        """The settings the store keeps beside the item parameters (``workflows.lifelong_state``)."""
        return {"k": int(self.k), "iters": int(self.iters), "item_ridge": float(self.item_ridge)}

    def with_items(
        self, item: ItemModel, order: np.ndarray, params: dict | None = None
    ) -> MIRTEstimator:
        """This estimator with already fitted item parameters (e.g. persisted in the store);
        ``params`` (:meth:`kept_params`) restores the settings they were fitted with."""
        if params is not None:
            self.k = int(item.w.shape[1])
            self.iters = int(params.get("iters", self.iters))
            self.item_ridge = float(params.get("item_ridge", self.item_ridge))
        order = np.asarray(order, dtype=np.int64)
        n = len(item.d)
        if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
            raise InputError(f"the sample order must be a permutation of the {n} sample columns.")
        self._set_order(order)
        self.item_ = item
        return self

    def predict_proba(
        self, positions: np.ndarray, observed: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """P(correct) for every sample, and the effective parameter count of the fit."""
        theta, df = map_ability(self.item_, positions, observed)
        # In the items' own precision: a float32 fit (n x k) is not copied to float64 here.
        eta = self.item_.w @ theta.astype(self.item_.w.dtype)
        eta += self.item_.d
        return expit(eta, out=eta), df

    def estimate(self, positions: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "order_")
        n = len(self.order_)
        pos, obs = check_observations(positions, observed, n)
        prob, df = self.predict_proba(pos, obs)
        # GREG variance with fitted predictions: residual variance times n' / (n' - df)
        # (Särndal et al. 1992, §6.6), since the fit pulled its own residuals towards 0.
        inflate = len(pos) / max(len(pos) - df, 1.0)
        return finish(prob, pos, obs, self.rank_, self.level, inflate=inflate)


def finish(
    prob: np.ndarray,
    pos: np.ndarray,
    obs: np.ndarray,
    rank: np.ndarray,
    level: float,
    inflate: float = 1.0,
    width_resid: np.ndarray | None = None,
) -> Estimate:
    """Turn P(correct) per sample into an :class:`Estimate` (shared by every method here).

    The point estimate always uses in-sample residuals (the difference estimator proper);
    ``width_resid``, when given, are out-of-sample residuals that set the interval's width.
    """
    # The estimator reads the predictions only at the evaluated samples and in total, so
    # they are never permuted into sorted order (a 1.7M-element gather per estimate).
    n = len(prob)
    at, total = prob[pos], float(prob.sum(dtype=np.float64))
    iv = difference_estimate_at(rank[pos], obs, at, total, n, level=level, inflate=inflate)
    if width_resid is not None and iv.lo is not None:
        w = difference_estimate_at(rank[pos], obs, at, total, n, resid=width_resid, level=level)
        half = w.half or 0.0
        iv = type(iv)(iv.acc, max(iv.acc - half, 0.0), min(iv.acc + half, 1.0), w.se, half)
    per_sample = (prob >= 0.5).astype(np.uint8)
    per_sample[pos] = obs
    prob = prob.copy()
    prob[pos] = obs
    return Estimate(acc=iv.acc, lo=iv.lo, hi=iv.hi, per_sample=per_sample, prob=prob)
