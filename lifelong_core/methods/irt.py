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

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lifelong_core.bits import SortOrder, bits_at, mask_tail, word_prefix
from lifelong_core.errors import InputError
from lifelong_core.methods.base import (
    Estimate,
    ItemModel,
    RowScores,
    check_fitted,
    check_observations,
    check_width,
)
from lifelong_core.methods.design import (
    AccuracyInterval,
    StratifiedAlongOrder,
    difference_estimate_at,
    difference_estimates_at,
)
from lifelong_core.methods.irt_fit import _diagonal, _sigmoid, _triu, product, spd_solve
from lifelong_core.methods.parallel import ordered_map

# Columns of the in-memory fit taken at a time: a Newton step's arrays stay in cache.
FIT_CHUNK_BYTES = 1 << 20
# Working memory of a group of models in the batched ability fits, and of a chunk of
# items in all_item_probs: bounded whatever the number of items, models and budgets.
PASS_BYTES = 32 << 20
# The float64 logits of one chunk of items for every scored column in item_pass: small
# enough that the chunk's few passes (logistic, sums, comparison) stay in the cache.
CHUNK_BYTES = 4 << 20


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


def _logistic(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` in place, float64: faster than ``scipy.special.expit`` and
    equal to it within a unit in the last place (an overflow of ``exp`` gives 0, the right
    limit)."""
    with np.errstate(over="ignore"):
        np.negative(x, out=x)
        np.exp(x, out=x)
    x += 1.0
    return np.reciprocal(x, out=x)


def _newton_rows(X: np.ndarray, Y: np.ndarray, beta: np.ndarray, ridge: np.ndarray) -> np.ndarray:
    """One damped Newton step for many independent ridge logistic regressions at once.

    Regression r has design ``X`` (shared, (s, p)), responses ``Y[:, r]`` and
    coefficients ``beta[r]``; ``ridge`` is the (p,) penalty.
    """
    mu = _logistic(X @ beta.T)
    grad = X.T @ (Y - mu) - (ridge[:, None] * beta.T)  # (p, r)
    mu -= mu * mu
    p = X.shape[1]
    iu = _triu(p)
    # One upper triangle of the Hessian per regression, solved by a vectorised Cholesky.
    hess = np.ascontiguousarray((X[:, iu[0]] * X[:, iu[1]]).T) @ mu
    hess[_diagonal(p)] += ridge[:, None]
    step = spd_solve(hess, grad, p).T
    # Damping keeps the alternating fit monotone on separable columns (always-correct samples).
    return beta + np.clip(step, -2.0, 2.0)


def fit_item_model(
    A: np.ndarray, k: int = 10, iters: int = 25, item_ridge: float = 8.0
) -> ItemModel:
    """Fit ``sigmoid(d_j + w_j . theta_i)`` to the cache by alternating Newton steps.

    Initialised from the leading principal components of the centred cache (logistic
    PCA's usual start); ``theta`` carries a standard-normal prior (fixes the scale), ``w``
    a ridge of ``item_ridge`` and ``d`` a weak ridge of 0.01 so that samples every cache
    model gets right stay finite. Working memory is the cache as float64 and a few arrays of
    a column chunk.
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
    # Columns in chunks of about FIT_CHUNK_BYTES: each Newton step's arrays stay in cache,
    # and the chunks run on a few threads (methods.parallel), the same bits on any number.
    width = max(64, FIT_CHUNK_BYTES // (8 * m))
    spans = [slice(s, min(s + width, n)) for s in range(0, n, width)]
    iu = _triu(k)
    for _ in range(iters):
        X = np.hstack([theta, np.ones((m, 1))])

        # Items: one regression per column, independent.
        def items(sl: slice, X: np.ndarray = X, w: np.ndarray = w, d: np.ndarray = d) -> np.ndarray:
            return _newton_rows(X, Y[:, sl], np.hstack([w[sl], d[sl, None]]), item_pen)

        beta = np.vstack(ordered_map(items, spans))
        w, d = beta[:, :k], beta[:, k]
        # Abilities: one regression per model on every item, with the items just fitted;
        # the step of _newton_rows, its sums over the items added chunk by chunk in order.
        grad, hess = np.zeros((k, m)), np.zeros((len(iu[0]), m))

        def sums(
            sl: slice, theta: np.ndarray = theta, w: np.ndarray = w, d: np.ndarray = d
        ) -> tuple[np.ndarray, np.ndarray]:
            eta = product(w[sl], theta.T)
            eta += d[sl, None]
            mu = _logistic(eta)
            g = w[sl].T @ (Y[:, sl].T - mu)
            mu -= mu * mu
            return g, np.ascontiguousarray((w[sl, iu[0]] * w[sl, iu[1]]).T) @ mu

        def add(
            part: tuple[np.ndarray, np.ndarray], grad: np.ndarray = grad, hess: np.ndarray = hess
        ) -> None:
            grad += part[0]
            hess += part[1]

        ordered_map(sums, spans, add)
        grad -= model_pen[:, None] * theta.T
        hess[_diagonal(k)] += model_pen[:, None]
        theta = theta + np.clip(spd_solve(hess, grad, k).T, -2.0, 2.0)
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
    :func:`map_abilities` for one model.
    """
    theta, df = map_abilities(item, cols, np.asarray(obs)[:, None], iters)
    return theta[0], float(df[0])


def map_abilities(
    item: ItemModel, cols: np.ndarray, obs: np.ndarray, iters: int = 30
) -> tuple[np.ndarray, np.ndarray]:
    """MAP abilities of several new models evaluated on the same sample columns.

    Each model's ``theta`` is the penalised Newton iteration of :func:`map_ability` (start
    at the prior mean, damped steps, stop once its largest step is below 1e-6), run for
    every model at once: the models share the design ``w[cols]``, so their gradients and
    Fisher information are matrix products over the ``len(cols)`` evaluated samples and
    never touch the others. Arithmetic in float64.

    Parameters
    ----------
    item : ItemModel
        The fitted item model.
    cols : numpy.ndarray
        (n',) the evaluated sample columns.
    obs : numpy.ndarray
        (n', models) their 0/1 results, one column per model.
    iters : int
        The most Newton steps per model.

    Returns
    -------
    theta : numpy.ndarray
        (models, k) the MAP abilities.
    df : numpy.ndarray
        (models,) the effective number of parameters of each fit.
    """
    return map_abilities_many(item, [(cols, obs)], iters)[0]


def map_abilities_many(
    item: ItemModel, fits: Sequence[tuple[np.ndarray, np.ndarray]], iters: int = 30
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`map_abilities` of several sets of models, each set on its own columns (a
    sweep's budgets): their groups of models as one set of pieces on the threads, the
    largest first.

    Parameters
    ----------
    item : ItemModel
        The fitted item model.
    fits : sequence of (numpy.ndarray, numpy.ndarray)
        ``(cols, obs)`` as :func:`map_abilities` takes them.
    iters : int
        The most Newton steps per model.

    Returns
    -------
    list of (numpy.ndarray, numpy.ndarray)
        ``(theta, df)`` of each set, as :func:`map_abilities` returns them.
    """
    out = []
    pieces = []
    for i, (cols, obs) in enumerate(fits):
        models = np.shape(obs)[1]
        out.append((np.empty((models, item.w.shape[1])), np.empty(models)))
        # Models in groups whose (models x n') results stay within PASS_BYTES; each
        # model's fit is its own, so the grouping changes no number.
        group = max(1, PASS_BYTES // (8 * max(len(cols), 1)))
        pieces += [(i, g, min(g + group, models)) for g in range(0, models, group)]
    pieces.sort(key=lambda p: -len(fits[p[0]][0]) * (p[2] - p[1]))

    def fit(piece: tuple[int, int, int]) -> None:
        i, a, b = piece
        cols, obs = fits[i]
        theta, df = out[i]
        theta[a:b], df[a:b] = _map_group(
            item,
            np.asarray(item.w[cols], dtype=np.float64),
            np.asarray(item.d[cols], dtype=np.float64),
            np.asarray(obs)[:, a:b].T,
            iters,
        )

    ordered_map(fit, pieces)
    return out


def map_abilities_each(
    item: ItemModel, cols: np.ndarray, obs: np.ndarray, iters: int = 30
) -> tuple[np.ndarray, np.ndarray]:
    """MAP abilities of several new models, each evaluated on its own sample columns.

    :func:`map_abilities` when the models do not share their evaluated samples (each has
    its own draw, as the cross-validation's held-out models do), with the same number of
    them: the same Newton iteration, its sums formed per model.

    Parameters
    ----------
    item : ItemModel
        The fitted item model.
    cols : numpy.ndarray
        (models, n') each model's evaluated sample columns.
    obs : numpy.ndarray
        (models, n') their 0/1 results.
    iters : int
        The most Newton steps per model.

    Returns
    -------
    theta : numpy.ndarray
        (models, k) the MAP abilities.
    df : numpy.ndarray
        (models,) the effective number of parameters of each fit.
    """
    cols = np.asarray(cols, dtype=np.int64)
    theta = np.empty((len(cols), item.w.shape[1]))
    df = np.empty(len(cols))
    group = max(1, PASS_BYTES // (8 * max(cols.shape[1], 1) * item.w.shape[1]))
    for g in range(0, len(cols), group):
        c = cols[g : g + group]
        theta[g : g + group], df[g : g + group] = _map_group(
            item,
            np.asarray(item.w[c], dtype=np.float64),
            np.asarray(item.d[c], dtype=np.float64),
            obs[g : g + group],
            iters,
        )
    return theta, df


# Items of one step of the shared design's MAP sums taken at a time: the (models x items)
# logits of a group of models stay in the cache whatever the budget.
MAP_CHUNK_BYTES = 1 << 20


def _map_shared(
    item: ItemModel, X: np.ndarray, off: np.ndarray, obs: np.ndarray, iters: int
) -> tuple[np.ndarray, np.ndarray]:
    """The MAP Newton iteration of :func:`_map_group` for models sharing the design ``X``
    (``(n', k)``, offsets ``off``): each step's gradient and Fisher information summed over
    chunks of the items, in order."""
    k = X.shape[1]
    prec, mean = item.prior_prec, item.prior_mean
    iu = _triu(k)
    XT = np.ascontiguousarray(X.T)
    # Each row's upper-triangle products, for the Fisher sums as one matrix product.
    XX = X[:, iu[0]] * X[:, iu[1]]
    y = np.ascontiguousarray(obs)
    width = max(256, MAP_CHUNK_BYTES // (8 * max(len(y), 1)))
    spans = [slice(a, a + width) for a in range(0, len(X), width)]

    def sums(t: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        info = np.zeros((len(t), len(iu[0])))
        score = np.zeros((len(t), k))
        for sl in spans:
            mu = product(t, XT[:, sl])
            mu += off[sl]
            _logistic(mu)
            wts = mu * mu
            np.subtract(mu, wts, out=wts)
            info += wts @ XX[sl]
            np.subtract(y[rows, sl], mu, out=mu)
            score += mu @ X[sl]
        full = np.zeros((len(t), k, k))
        full[:, iu[0], iu[1]] = info
        full[:, iu[1], iu[0]] = info
        return full, score

    theta = np.tile(mean, (len(y), 1))
    live = np.arange(len(y))
    for _ in range(iters):
        t = theta[live]
        info, score = sums(t, live)
        grad = score - (t - mean) @ prec
        step = np.linalg.solve(info + prec, grad[:, :, None])[:, :, 0]
        theta[live] = t + np.clip(step, -2.0, 2.0)
        going = np.abs(step).max(axis=1) >= 1e-6
        if not going.any():
            break
        live = live[going]
    info, _ = sums(theta, np.arange(len(theta)))
    return theta, np.einsum("mii->m", np.linalg.solve(info + prec, info))


def _map_group(
    item: ItemModel, X: np.ndarray, off: np.ndarray, obs: np.ndarray, iters: int
) -> tuple[np.ndarray, np.ndarray]:
    """The MAP Newton iteration of one group of models (``obs``: one row per model).

    ``X`` and ``off`` are the evaluated samples' item parameters: ``(n', k)`` and
    ``(n',)`` shared by every model (:func:`_map_shared`), or ``(models, n', k)`` and
    ``(models, n')``, one set per model (``X_m' W X_m`` as a stack of matrix products)."""
    if X.ndim == 2:
        return _map_shared(item, X, off, obs, iters)
    prec, mean = item.prior_prec, item.prior_mean
    y = np.asarray(obs, dtype=np.float64)
    # Work arrays made once: a fresh (models x n') temporary per step costs more in page
    # faults than the arithmetic on it.
    eta_buf = np.empty(y.shape)
    wts_buf = np.empty(y.shape)

    def probs(t: np.ndarray, rows: np.ndarray) -> np.ndarray:
        eta = eta_buf[: len(t)]
        np.einsum("mbk,mk->mb", X[rows], t, out=eta)
        eta += off[rows]
        return _logistic(eta)

    def fisher(mu: np.ndarray, rows: np.ndarray) -> np.ndarray:
        wts = wts_buf[: len(mu)]
        np.multiply(mu, mu, out=wts)
        np.subtract(mu, wts, out=wts)
        Xr = X[rows]
        return np.matmul((Xr * wts[:, :, None]).transpose(0, 2, 1), Xr)

    theta = np.tile(mean, (len(y), 1))
    live = np.arange(len(y))
    for _ in range(iters):
        t = theta[live]
        mu = probs(t, live)
        info = fisher(mu, live)
        np.subtract(y, mu, out=mu)
        score = np.einsum("mb,mbk->mk", mu, X[live])
        grad = score - (t - mean) @ prec
        step = np.linalg.solve(info + prec, grad[:, :, None])[:, :, 0]
        theta[live] = t + np.clip(step, -2.0, 2.0)
        going = np.abs(step).max(axis=1) >= 1e-6
        if not going.any():
            break
        if not going.all():
            live, y = live[going], y[going]
    every = np.arange(len(theta))
    info = fisher(probs(theta, every), every)
    return theta, np.einsum("mii->m", np.linalg.solve(info + prec, info))


def item_probs(
    item: ItemModel, theta: np.ndarray, start: int = 0, stop: int | None = None
) -> np.ndarray:
    """P(correct) of items ``start:stop`` under abilities ``theta`` ((models, k)).

    :func:`model_probs`, one column per model.

    Parameters
    ----------
    item : ItemModel
        The fitted item model.
    theta : numpy.ndarray
        (models, k) abilities.
    start, stop : int
        The items, ``stop=None`` for all of them.

    Returns
    -------
    numpy.ndarray
        (stop - start, models) in the dtype of ``item.w``.
    """
    return model_probs(item, theta, start, stop).T


def model_probs(
    item: ItemModel,
    theta: np.ndarray,
    start: int = 0,
    stop: int | None = None,
    items: np.ndarray | None = None,
) -> np.ndarray:
    """P(correct) of items ``start:stop`` (or of ``items``) under abilities ``theta``, one
    row per model.

    The logits are formed in float64 and rounded to the items' own precision before the
    logistic (a float32 fit stays float32 over the n items): every caller, one model or a
    batch of them, gets the same probabilities whatever the batch's shape.

    Parameters
    ----------
    item : ItemModel
        The fitted item model.
    theta : numpy.ndarray
        (models, k) abilities.
    start, stop : int
        The items, ``stop=None`` for all of them.
    items : numpy.ndarray, optional
        The items by number instead (``start`` and ``stop`` are then not read).

    Returns
    -------
    numpy.ndarray
        (models, items) in the dtype of ``item.w``.
    """
    return _sigmoid(_logits(item, theta, start, stop, items).astype(item.w.dtype, copy=False))


def _logits(
    item: ItemModel,
    theta: np.ndarray,
    start: int = 0,
    stop: int | None = None,
    items: np.ndarray | None = None,
) -> np.ndarray:
    """float64 ``d_j + w_j . theta`` of the items, one row per model (:func:`model_probs`)."""
    where = slice(start, stop) if items is None else items
    eta = product(np.asarray(theta, dtype=np.float64), item.w[where].astype(np.float64).T)
    eta += np.asarray(item.d[where], dtype=np.float64)
    return eta


# Beyond this distance from zero a logit's sign is its prediction's (P >= 0.5), whatever the
# rounding of the logit to the items' precision and of the logistic; nearer, the prediction
# is computed as model_probs computes it.
_SURE_LOGIT = 1e-3


def _predicted(eta: np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """``model_probs(...) >= 0.5`` from the float64 logits ``eta``, without the logistic:
    the sign of each logit, and the logistic itself for the few within
    :data:`_SURE_LOGIT` of zero (exactly the same predictions)."""
    pred = eta >= 0.0
    near = np.flatnonzero(np.abs(eta.ravel()) < _SURE_LOGIT)
    if len(near):
        pred.ravel()[near] = _sigmoid(eta.ravel()[near].astype(dtype)) >= 0.5
    return pred


def all_item_probs(item: ItemModel, theta: np.ndarray) -> np.ndarray:
    """:func:`item_probs` of every item, computed in chunks of at most :data:`PASS_BYTES`
    (a float32 fit is never copied to float64 whole).

    Parameters
    ----------
    item : ItemModel
        The fitted item model.
    theta : numpy.ndarray
        (models, k) abilities.

    Returns
    -------
    numpy.ndarray
        (items, models) in the dtype of ``item.w``.
    """
    n, k = item.w.shape
    out = np.empty((n, len(theta)), dtype=item.w.dtype)
    width = max(64, PASS_BYTES // (8 * max(k, len(theta))))
    for c0 in range(0, n, width):
        out[c0 : c0 + width] = item_probs(item, theta, c0, c0 + width)
    return out


@dataclass
class ItemPass:
    """What one pass over every item gives a batch of scored columns (one model at one
    budget each).

    Attributes
    ----------
    total : numpy.ndarray
        (columns,) float64 sum of the predicted P(correct) over every item; NaN for a
        column whose group asked for no total.
    at : list of numpy.ndarray or None
        Per group of columns, (n', group columns) P(correct) at the group's evaluated
        items; None for a group that asked for no total.
    wrong : numpy.ndarray
        (columns,) int64 items not evaluated whose prediction (``P >= 0.5``) differs from
        the model's true result.
    ones : numpy.ndarray
        (columns,) int64 items not evaluated predicted correct.
    """

    total: np.ndarray
    at: list
    wrong: np.ndarray
    ones: np.ndarray


def item_pass(
    item: ItemModel,
    theta: np.ndarray,
    rows: np.ndarray,
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    truth: np.ndarray | None,
    n: int,
    totals: Sequence[bool] | None = None,
) -> ItemPass:
    """Score many columns (a model's ability at a budget) in one pass over the items.

    Column ``c`` is the model ``rows[c]`` (a row of the packed ``truth``) at ability
    ``theta[c]``. ``groups`` pairs each evaluated selection with the columns evaluated on
    it (a budget's models share one). The items are taken in chunks of at most
    :data:`CHUNK_BYTES` of working memory, each chunk's logits computed for every column at
    once (:func:`model_probs`'s): no (models x items) array is ever held, and each column
    gets exactly the probabilities and predictions a model estimated on its own gets. The
    predictions are compared with the true rows as packed bits (an exclusive or and a
    count of the ones), so the true rows are never unpacked. A group whose accuracy
    estimate does not read the item model (``totals`` False) gets its predictions from the
    logits' signs (:func:`_predicted`: the same predictions), without the logistic or the
    sum. The pieces run on the threads with a few array operations each (the
    probabilities at the evaluated items are computed apart, per group), so that they
    seldom wait for one another.

    Parameters
    ----------
    item : ItemModel
        The fitted item model.
    theta : numpy.ndarray
        (columns, k) abilities.
    rows : numpy.ndarray
        (columns,) the row of ``truth`` each column is scored against.
    groups : sequence of (numpy.ndarray, numpy.ndarray)
        ``(selection, columns)``: evaluated items (sorted, distinct) and the columns
        evaluated on them; every column in exactly one group.
    truth : numpy.ndarray or None
        Packed true rows ((rows, ceil(n / 8)) uint8, :mod:`lifelong_core.bits`); None
        counts no errors.
    n : int
        The number of items.
    totals : sequence of bool, optional
        Per group, whether its columns' totals and probabilities at the evaluated items
        are wanted (default: every group's).

    Returns
    -------
    ItemPass
    """
    theta = np.asarray(theta, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.int64)
    K = len(theta)
    want = [True] * len(groups) if totals is None else [bool(t) for t in totals]
    # The columns whose totals are wanted first, so that each chunk's are one slice.
    order = np.concatenate(
        [np.asarray(cols, dtype=np.int64) for (_, cols), t in zip(groups, want) if t]
        + [np.asarray(cols, dtype=np.int64) for (_, cols), t in zip(groups, want) if not t]
        + [np.zeros(0, dtype=np.int64)]
    )
    F = sum(len(cols) for (_, cols), t in zip(groups, want) if t)
    th, by_row = theta[order], rows[order]
    if truth is not None:
        truth = mask_tail(truth, n)
    # One direction: every column's predictions are a threshold on one order of the items,
    # counted without a pass over them (_threshold_counts); the pass then only sums the
    # probabilities of the columns with totals. Where every column wants its total, the
    # pass counts as it goes.
    by_order = None
    if truth is not None and F < K and _one_direction(item, th):
        by_order = _threshold_counts(item, th, by_row, truth, n)
    passed = F if by_order is not None else K
    counting = by_order is None  # the pass counts every column's errors (given true rows)
    # A multiple of 8 items, so that a chunk starts on a byte of the packed rows.
    width = max(64, CHUNK_BYTES // max(1, 8 * passed) // 64 * 64)

    def chunk(c0: int) -> tuple[np.ndarray, np.ndarray | int, np.ndarray | int]:
        c1 = min(c0 + width, n)
        eta = _logits(item, th[:passed], c0, c1)  # (columns, items)
        # In place where the logits are already in the items' precision: only the
        # predicting columns' logits (eta[F:]) are read after this.
        p = _sigmoid(eta[:F].astype(item.w.dtype, copy=False))
        total = p.sum(axis=1, dtype=np.float64)
        if not counting or truth is None:
            return total, 0, 0
        pred = np.empty(eta.shape, dtype=bool)
        np.greater_equal(p, 0.5, out=pred[:F])
        pred[F:] = _predicted(eta[F:], item.w.dtype)
        # Packed like the true rows (padding bits zero on both sides).
        bits = np.packbits(pred, axis=1, bitorder="little")
        true = truth[:, c0 // 8 : (c1 + 7) // 8]
        return (
            total,
            np.bitwise_count(bits ^ true[by_row[:passed]]).sum(axis=1, dtype=np.int64),
            np.bitwise_count(bits).sum(axis=1, dtype=np.int64),
        )

    total = np.zeros(F)
    wrong, ones = np.zeros(K, dtype=np.int64), np.zeros(K, dtype=np.int64)

    def add(part: tuple[np.ndarray, np.ndarray | int, np.ndarray | int]) -> None:  # item order
        nonlocal total, wrong, ones
        total += part[0]
        wrong += part[1]
        ones += part[2]

    ordered_map(chunk, range(0, n, width), add)
    if by_order is not None:
        wrong, ones = by_order
    out_total = np.full(K, np.nan)
    out_total[order[:F]] = total
    out_wrong, out_ones = np.empty(K, dtype=np.int64), np.empty(K, dtype=np.int64)
    out_wrong[order], out_ones[order] = wrong, ones
    # The probabilities at each group's evaluated items, which carry their observed
    # results: their predictions are taken back out of the counts. In pieces of at most
    # CHUNK_BYTES of logits, written into one (columns, n') array per group; a group that
    # asked for no total gets its predictions alone (_predicted: no logistic), and nothing
    # without true rows to count against.
    at_rows = [
        np.empty((len(cols), len(sel)), dtype=item.w.dtype if t else bool)
        for (sel, cols), t in zip(groups, want)
    ]
    pieces = []
    for g, (sel, cols) in enumerate(groups):
        if not want[g] and truth is None:
            continue
        step = max(64, CHUNK_BYTES // max(1, 8 * len(cols)))
        pieces += [(g, a, min(a + step, len(sel))) for a in range(0, len(sel), step)]

    def probs_at(piece: tuple[int, int, int]) -> None:
        g, a, b = piece
        sel, cols = groups[g]
        if want[g]:
            at_rows[g][:, a:b] = model_probs(item, theta[cols], items=sel[a:b])
        else:
            eta = _logits(item, theta[cols], items=sel[a:b])
            at_rows[g][:, a:b] = _predicted(eta, item.w.dtype)

    ordered_map(probs_at, pieces)
    at = [x.T for x in at_rows]
    if truth is not None:
        for (sel, cols), got in zip(groups, at):
            pred = got if got.dtype == bool else got >= 0.5
            obs = bits_at(truth[rows[cols]], sel).T.astype(bool)
            out_wrong[cols] -= np.count_nonzero(pred != obs, axis=0)
            out_ones[cols] -= np.count_nonzero(pred, axis=0)
    return ItemPass(
        out_total, [got if t else None for got, t in zip(at, want)], out_wrong, out_ones
    )


def _one_direction(item: ItemModel, theta: np.ndarray) -> bool:
    """Whether :func:`_threshold_counts` applies: one direction, and logits small enough
    that their rounding stays far below :data:`_SURE_LOGIT`."""
    if item.w.shape[1] != 1 or not len(theta) or not len(item.d):
        return False
    reach = float(np.abs(theta).max()) * float(np.abs(item.w).max()) + float(np.abs(item.d).max())
    return reach < 1e9


@dataclass(frozen=True)
class _ThresholdLayout:
    """The items of a one-direction item model in the order :func:`_threshold_counts`
    counts along: segments of one sign and one power of two of ``|w_j|``, each sorted by
    threshold ``-d_j / w_j`` (equal thresholds in item order), then the flat items."""

    segments: list  # (start, size, up, band) of each segment in ``order``
    taus: list  # each segment's thresholds, ascending
    order: np.ndarray  # int64 (n,) the items in that order
    flat_at: int  # where the flat items (w_j = 0) start
    sort: SortOrder  # ``order`` applied to packed rows


# Runs of equal keys beyond which _stable_argsort sorts stably from the start.
_TIED_RUNS = 256


def _stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of float keys: NumPy's quicksort (several times
    faster than its merge sort on float64), then each run of equal keys put back in
    ascending position; the merge sort itself when the keys hold a NaN or many ties."""
    by = np.argsort(keys)
    ranked = keys[by]
    tied = np.flatnonzero(ranked[1:] == ranked[:-1])
    if not len(tied):
        return by if not np.isnan(ranked[-1:]).any() else np.argsort(keys, kind="stable")
    # Starts and ends of the runs of equal keys.
    starts = tied[np.r_[True, np.diff(tied) > 1]]
    ends = tied[np.r_[np.diff(tied) > 1, True]] + 2
    if len(starts) > _TIED_RUNS or np.isnan(ranked[-1]):
        return np.argsort(keys, kind="stable")
    for a, b in zip(starts, ends):
        by[a:b] = np.sort(by[a:b])
    return by


# One layout per fitted item model (the same order on every call; a sort of every item):
# keyed by the model's identity, dropped with it.
_LAYOUTS: dict[int, _ThresholdLayout] = {}


def _threshold_layout(item: ItemModel) -> _ThresholdLayout:
    """The item order of :func:`_threshold_counts` for ``item``, made once per item model."""
    got = _LAYOUTS.get(id(item))
    if got is not None:
        return got
    w = item.w[:, 0].astype(np.float64)
    d = np.asarray(item.d, dtype=np.float64)
    n = len(d)
    flat = np.flatnonzero(w == 0)
    live = np.flatnonzero(w != 0)
    tau = -d[live] / w[live]
    power = np.frexp(np.abs(w[live]))[1]  # |w| in [2^(power - 1), 2^power)
    # Segments by sign, then power; each sorted by threshold, equal ones in item order (a
    # stable sort by segment of the items sorted by threshold): the items of a segment,
    # in item order, sorted by threshold on their own, on the threads.
    # (Segment numbers are below 2 * 2100, the span of float64 exponents: as uint16 the
    # stable sort is a radix sort.)
    segment = ((power - power.min()) * 2 + (w[live] > 0)).astype(np.uint16)
    by_segment = np.argsort(segment, kind="stable")
    cuts = np.flatnonzero(np.diff(segment[by_segment])) + 1
    parts = [p for p in np.split(by_segment, cuts) if len(p)]
    largest = sorted(range(len(parts)), key=lambda i: -len(parts[i]))  # first, on the threads
    done = ordered_map(lambda i: parts[i][_stable_argsort(tau[parts[i]])], largest)
    parts = [p for _, p in sorted(zip(largest, done), key=lambda x: x[0])]
    segs, order, taus = [], [], []
    start = 0
    for part in parts:
        up = bool(w[live[part[0]]] > 0)
        band = 2 * _SURE_LOGIT / 2.0 ** (int(power[part[0]]) - 1)
        segs.append((start, len(part), up, band))
        order.append(live[part])
        taus.append(tau[part])
        start += len(part)
    order.append(flat)
    whole = np.concatenate(order)
    layout = _ThresholdLayout(segs, taus, whole, start, SortOrder(whole, n, checked=True))
    _LAYOUTS[id(item)] = layout
    weakref.finalize(item, _LAYOUTS.pop, id(item), None)
    return layout


def _threshold_counts(
    item: ItemModel, theta: np.ndarray, rows: np.ndarray, truth: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every item's prediction counted for columns of a one-direction item model (``k =
    1``) without a pass over the items: the items predicted correct are those whose
    threshold ``-d_j / w_j`` on the ability lies below ``theta`` (``w_j > 0``) or above it
    (``w_j < 0``), so along the items sorted by threshold they are a prefix or a suffix,
    and a row's errors there are prefix counts of its true row in that order (as the Sort
    order's threshold rules count theirs). The items are taken in segments of one sign
    and one power of two of ``|w_j|``: an item farther from ``theta`` than ``2 *
    _SURE_LOGIT / |w_j|`` has a logit farther than ``2 * _SURE_LOGIT`` from zero, so its
    prediction is the side it is on; the items nearer, and those with ``w_j = 0``, are
    predicted exactly as :func:`_predicted` does. The same counts as the pass over every
    item.

    Returns
    -------
    tuple of numpy.ndarray
        (columns,) int64: items whose prediction differs from the row's true result, and
        items predicted correct (over all ``n`` items).
    """
    layout = _threshold_layout(item)
    segs, taus, whole, flat_at = layout.segments, layout.taus, layout.order, layout.flat_at
    used = np.unique(rows)
    S = layout.sort.sorted_rows(truth[used])
    cum = word_prefix(S)
    r = np.searchsorted(used, rows)

    def ones_upto(t: np.ndarray) -> np.ndarray:  # each column's row, first t of the order
        word = t >> 6
        part = S[r, np.minimum(word, S.shape[1] - 1)] & (
            (np.uint64(1) << (t & 63).astype(np.uint64)) - np.uint64(1)
        )
        return cum[r, word].astype(np.int64) + np.bitwise_count(part)

    x = theta[:, 0]
    wrong = np.zeros(len(x), dtype=np.int64)
    ones = np.zeros(len(x), dtype=np.int64)
    windows = []
    for (o, size, up, band), t in zip(segs, taus):
        a = np.searchsorted(t, x - band, side="left")  # below the window
        b = np.searchsorted(t, x + band, side="right")  # above it
        below = ones_upto(o + a) - ones_upto(np.full(len(x), o))
        above = ones_upto(np.full(len(x), o + size)) - ones_upto(o + b)
        if up:  # predicted correct below the window
            wrong += (a - below) + above
            ones += a
        else:  # predicted correct above it
            wrong += below + (size - b) - above
            ones += size - b
        windows.append((o, a, b))

    def near(c: int) -> tuple[int, int]:
        items = np.concatenate(
            [whole[o + a[c] : o + b[c]] for o, a, b in windows] + [whole[flat_at:]]
        )
        if not len(items):
            return 0, 0
        pred = _predicted(_logits(item, theta[c : c + 1], items=items), item.w.dtype)[0]
        true = bits_at(truth[rows[c] : rows[c] + 1], items)[0].astype(bool)
        return int(np.count_nonzero(pred != true)), int(np.count_nonzero(pred))

    exact = np.array(ordered_map(near, range(len(x))), dtype=np.int64).reshape(len(x), 2)
    return wrong + exact[:, 0], ones + exact[:, 1]


class MIRTEstimator(StratifiedAlongOrder):
    """Sample-level prediction from a multidimensional IRT model of the cache.

    Selection: stratified random along the cache order (``design``). Per-sample prediction:
    the evaluated samples carry their observed result; every other sample is predicted
    correct when ``P(correct) >= 0.5`` under the new model's MAP ability. Accuracy: the
    model-assisted difference estimator with a 95% stratified interval (``design``).
    """

    name = "mirt"

    def __init__(
        self, k: int = 10, iters: int = 25, item_ridge: float = 8.0, level: float = 0.95
    ) -> None:
        self.k = k
        self.iters = iters
        self.item_ridge = item_ridge
        self.level = level

    def _validate_params(self) -> None:
        k, iters = self.k, self.iters
        if int(k) != k or k < 1 or int(iters) != iters or iters < 1:
            raise InputError(f"k and iters must be positive integers, got k={k}, iters={iters}.")
        if not self.item_ridge > 0 or not 0 < self.level < 1:
            raise InputError(
                f"item_ridge must be > 0 and level in (0, 1), got {self.item_ridge} and {self.level}."
            )

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> MIRTEstimator:
        self._validate_params()
        order = self._order_of(A_sort, order)
        A = check_cache(A_sort, order)
        self._set_order(order)
        self.item_ = fit_item_model(A, k=self.k, iters=self.iters, item_ridge=self.item_ridge)
        return self

    def fit_packed(
        self,
        P: np.ndarray,
        n: int,
        order: np.ndarray,
        progress: Callable[[float], object] | None = None,
        block_bytes: int | None = None,
        max_columns: int | None = None,
        seed: int = 0,
    ) -> MIRTEstimator:
        """:meth:`fit` from packed rows ``P`` ((m, ceil(n/8)) uint8, the store's layout) in
        bounded memory: the same fit made in column chunks; with ``n > max_columns`` the
        two-stage fit of :func:`.irt_fit.fit_packed_item_model`."""
        from lifelong_core.methods.irt_fit import DEFAULT_BLOCK_BYTES, fit_packed_item_model

        self._validate_params()
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

    @property
    def has_items(self) -> bool:
        """Whether an item model was fitted (always, once fitted)."""
        return hasattr(self, "item_")

    def with_items(
        self,
        item: ItemModel,
        order: np.ndarray,
        params: dict | None = None,
        rows: np.ndarray | None = None,
    ) -> MIRTEstimator:
        """This estimator with already fitted item parameters (e.g. persisted in the store);
        ``params`` (:meth:`kept_params`) restores the settings they were fitted with
        (``rows`` is not read: the estimate needs only the items)."""
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
        return self.probs_of(theta), df

    def probs_of(self, theta: np.ndarray) -> np.ndarray:
        """P(correct) for every sample of a model of ability ``theta``.

        Parameters
        ----------
        theta : numpy.ndarray
            (k,) the model's ability.

        Returns
        -------
        numpy.ndarray
            (n,) one probability per sample, in the item model's dtype.
        """
        return all_item_probs(self.item_, np.asarray(theta)[None, :])[:, 0]

    def score_rows(
        self, selections: Sequence[np.ndarray], truth: np.ndarray, n: int
    ) -> list[RowScores]:
        """:meth:`estimate` of every row of ``truth`` at every selection, scored against
        the row, without building any row (:class:`~lifelong_core.methods.base.SweepScoring`):
        the abilities of a budget's models in one batched MAP fit over the evaluated
        samples (:func:`map_abilities`), then one pass over the items for every model
        and budget at once (:func:`item_pass`). The same numbers as :meth:`estimate`,
        model by model, up to the order of floating-point sums."""
        check_fitted(self, "order_")
        check_width(n, len(self.order_), "estimator")
        m = truth.shape[0]
        obs = [bits_at(truth, sel) for sel in selections]
        fits = map_abilities_many(self.item_, [(sel, o.T) for sel, o in zip(selections, obs)])
        groups = [(sel, np.arange(i * m, (i + 1) * m)) for i, sel in enumerate(selections)]
        ip = item_pass(
            self.item_,
            np.vstack([theta for theta, _ in fits]),
            np.tile(np.arange(m), len(selections)),
            groups,
            truth,
            n,
        )

        def budget(i: int) -> RowScores:
            sel, o, df = selections[i], obs[i], fits[i][1]
            b = len(sel)
            cols = groups[i][1]
            ivs = difference_estimates_at(
                self.rank_[sel],
                o,
                ip.at[i].T,
                ip.total[cols],
                n,
                level=self.level,
                # GREG variance with fitted predictions, as in estimate().
                inflate=b / np.maximum(b - df, 1.0),
            )
            return RowScores.from_intervals(
                ivs, ip.wrong[cols], ip.ones[cols] + o.sum(axis=1, dtype=np.int64)
            )

        # Each budget's estimates on the threads, the largest budgets first.
        by_size = sorted(range(len(selections)), key=lambda i: -len(selections[i]))
        done = dict(zip(by_size, ordered_map(budget, by_size)))
        return [done[i] for i in range(len(selections))]

    def estimate(self, positions: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "order_")
        n = len(self.order_)
        pos, obs = check_observations(positions, observed, n)
        prob, df = self.predict_proba(pos, obs)
        # GREG variance with fitted predictions: residual variance times n' / (n' - df)
        # (Särndal et al. 1992, §6.6), since the fit pulled its own residuals towards 0.
        inflate = len(pos) / max(len(pos) - df, 1.0)
        return finish(prob, pos, obs, self.rank_, self.level, inflate=inflate)


def finish_interval(
    at: np.ndarray,
    total: float,
    pos: np.ndarray,
    obs: np.ndarray,
    rank: np.ndarray,
    n: int,
    level: float,
    inflate: float = 1.0,
    width_resid: np.ndarray | None = None,
) -> AccuracyInterval:
    """The accuracy and its interval from what the estimator reads of the predictions:
    P(correct) ``at`` the evaluated samples ``pos`` and its ``total`` over all ``n``
    (:func:`finish`'s interval, shared with the sweep's batched scoring).

    The point estimate always uses in-sample residuals (the difference estimator proper);
    ``width_resid``, when given, are out-of-sample residuals that set the interval's width.

    Returns
    -------
    AccuracyInterval
    """
    iv = difference_estimate_at(rank[pos], obs, at, total, n, level=level, inflate=inflate)
    if width_resid is not None and iv.lo is not None:
        w = difference_estimate_at(rank[pos], obs, at, total, n, resid=width_resid, level=level)
        half = w.half or 0.0
        iv = type(iv)(iv.acc, max(iv.acc - half, 0.0), min(iv.acc + half, 1.0), w.se, half)
    return iv


def finish(
    prob: np.ndarray,
    pos: np.ndarray,
    obs: np.ndarray,
    rank: np.ndarray,
    level: float,
    inflate: float = 1.0,
    width_resid: np.ndarray | None = None,
) -> Estimate:
    """Turn P(correct) per sample into an :class:`Estimate` (shared by every method here):
    the interval of :func:`finish_interval`, and the per-sample row ``P >= 0.5`` with the
    observed results at the evaluated samples."""
    # The estimator reads the predictions only at the evaluated samples and in total, so
    # they are never permuted into sorted order (a 1.7M-element gather per estimate).
    n = len(prob)
    at, total = prob[pos], float(prob.sum(dtype=np.float64))
    iv = finish_interval(at, total, pos, obs, rank, n, level, inflate, width_resid)
    per_sample = (prob >= 0.5).astype(np.uint8)
    per_sample[pos] = obs
    prob = prob.copy()
    prob[pos] = obs
    return Estimate(
        acc=iv.acc,
        lo=iv.lo,
        hi=iv.hi,
        per_sample=per_sample,
        prob=prob,
        level=None if iv.lo is None else level,
    )
