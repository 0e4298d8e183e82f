"""The item model of :mod:`.irt` fitted from packed rows in bounded memory.

:func:`lifelong_core.methods.irt.fit_item_model` holds a few float64 arrays of the
cache's shape (m_sort x n). At the paper's shape (6,000 Sort models x 1,697,682 samples,
Prabhu et al. 2024, §4) that is about 80 GB each. This module fits the same model,

    P(model i correct on sample j) = sigmoid(d_j + w_j . theta_i),

by the same alternating penalised Newton steps (same start, same penalties, same damping)
with the cache kept as packed bits (8 samples per byte) and every pass over it made in
column chunks of at most ``block_bytes`` per working array:

- the item step (one ridge logistic regression per sample ``j`` on ``[theta, 1]``) is
  independent per column, so each chunk is updated on its own;
- the ability step (one regression per model on ``w`` with offsets ``d``) needs sums over
  all columns: each chunk adds its gradient and the upper triangle of its Hessian, using
  the item parameters just updated, and ``theta`` moves once per pass.

That is exactly the in-memory order of updates (items from the previous ``theta``,
``theta`` from the new items), so the two fits differ only by float32 rounding in the
chunk arithmetic (Hessians and gradients are accumulated, and the small systems solved,
in float64). ``tests/engine/test_methods_irt_fit.py`` states the tolerance.

Cost per pass: about 140 multiply-adds per cache entry (the symmetric halves of the two
Hessians) plus two sigmoids; memory: the packed cache (m x n / 8 bytes) plus a few
chunk arrays. At the paper's shape the fit is made on a seeded subset of the Sort models
(``max_models`` in :func:`fit_packed_item_model`'s callers, see
``lifelong_core.methods.irt.MIRTEstimator.fit_packed``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.parallel import ordered_map

# A column chunk's working arrays stay in the processor's cache: the Newton steps make a
# dozen passes over them.
DEFAULT_BLOCK_BYTES = 1 << 20
# Rows unpacked at a time when the two-stage fit gathers its columns.
ROW_BLOCK_BYTES = 64 << 20
# Columns the two-stage fit alternates on when the cache is wider (see fit_packed_item_model).
DEFAULT_MAX_COLUMNS = 65_536

# Column spans (start, stop) of packed rows, as column_chunks makes them.
Spans = list[tuple[int, int]]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """In-place logistic function (0.5 tanh(x / 2) + 0.5: one vectorised transcendental)."""
    x *= 0.5
    np.tanh(x, out=x)
    x *= 0.5
    x += 0.5
    return x


def product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a @ b`` for 2-d arrays; with an inner dimension of one (an item model of one
    direction) the broadcast product ``a * b``, which is the same number (a sum of one
    term) where numpy's matrix product, which leaves such shapes to its own loop, is
    several times slower.

    Parameters
    ----------
    a, b : numpy.ndarray
        (r, k) and (k, c).
    out : numpy.ndarray, optional
        (r, c), written in place.

    Returns
    -------
    numpy.ndarray
        (r, c).
    """
    if a.shape[1] == 1:
        return np.multiply(a, b, out=out)
    return np.matmul(a, b, out=out)


@functools.cache
def _triu(p: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(p)


def _outer_sym(X: np.ndarray, iu: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Upper-triangle products ``x_a x_b`` (a <= b) of every row of X, one row per product:
    (p(p+1)/2, rows), contiguous (what the Hessians' matrix products read)."""
    return np.ascontiguousarray((X[:, iu[0]] * X[:, iu[1]]).T)


def _from_sym(h: np.ndarray, p: int, iu: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """(r, p(p+1)/2) upper triangles -> (r, p, p) symmetric matrices (float64)."""
    out = np.zeros((len(h), p, p))
    out[:, iu[0], iu[1]] = h
    out[:, iu[1], iu[0]] = h
    return out


# Systems solved at once by spd_solve: its (p, p, systems) float64 factor stays in cache.
SOLVE_SYSTEMS = 4096


def spd_solve(H: np.ndarray, g: np.ndarray, p: int) -> np.ndarray:
    """Solve many symmetric positive definite ``p x p`` systems ``A x = g`` at once.

    ``A`` is given by its upper triangle, row by row (the order of ``np.triu_indices(p)``),
    one column of ``H`` per system; ``g`` holds one right-hand side per column. A Cholesky
    factorisation ``A = U^T U`` and two triangular solves, each step a vector operation
    over the systems: the penalised Newton steps of the item model solve hundreds of
    thousands of small systems, which one LAPACK call per system spends most of its time
    dispatching. The Hessians here are positive definite (every system carries a ridge);
    a system that is not (a non-finite factor) is solved by LAPACK instead.

    Parameters
    ----------
    H : numpy.ndarray
        (p (p + 1) / 2, systems) upper triangles, float64.
    g : numpy.ndarray
        (p, systems) right-hand sides.
    p : int
        The size of each system.

    Returns
    -------
    numpy.ndarray
        (p, systems) float64 solutions.
    """
    H = np.asarray(H, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    out = np.empty(g.shape)
    start = np.concatenate([[0], np.cumsum(np.arange(p, 0, -1))])  # row i of the triangle
    with np.errstate(invalid="ignore", divide="ignore"):  # a failed factor falls back below
        for a in range(0, H.shape[1], SOLVE_SYSTEMS):
            _spd_block(H, g, out, a, p, start)
    return out


def _spd_block(
    H: np.ndarray, g: np.ndarray, out: np.ndarray, a: int, p: int, start: np.ndarray
) -> None:
    """:func:`spd_solve` of the systems ``a .. a + SOLVE_SYSTEMS`` into ``out``."""
    h, rhs = H[:, a : a + SOLVE_SYSTEMS], g[:, a : a + SOLVE_SYSTEMS]
    U = np.zeros((p, p, h.shape[1]))
    for i in range(p):
        row = h[start[i] : start[i + 1]]
        if i:
            row = row - np.einsum("kc,kjc->jc", U[:i, i], U[:i, i:])
        d = np.sqrt(row[0])
        U[i, i] = d
        U[i, i + 1 :] = row[1:] / d
    z = np.empty(rhs.shape)
    for i in range(p):
        z[i] = (rhs[i] - np.einsum("kc,kc->c", U[:i, i], z[:i])) / U[i, i]
    x = out[:, a : a + SOLVE_SYSTEMS]
    for i in reversed(range(p)):
        x[i] = (z[i] - np.einsum("jc,jc->c", U[i, i + 1 :], x[i + 1 :])) / U[i, i]
    bad = ~np.isfinite(x).all(axis=0)
    if bad.any():
        full = np.zeros((int(bad.sum()), p, p))
        iu = np.triu_indices(p)
        full[:, iu[0], iu[1]] = h[:, bad].T
        full[:, iu[1], iu[0]] = h[:, bad].T
        x[:, bad] = np.linalg.solve(full, rhs[:, bad].T[:, :, None])[:, :, 0].T


def column_chunks(n: int, m: int, block_bytes: int = DEFAULT_BLOCK_BYTES) -> list[tuple[int, int]]:
    """Column spans (multiples of 8 samples, so byte-aligned in packed rows) whose float32
    (m x span) working arrays each fit in ``block_bytes``."""
    width = max(64, (block_bytes // (4 * max(m, 1))) // 64 * 64)
    return [(s, min(s + width, n)) for s in range(0, n, width)]


def _unpack(P: np.ndarray, c0: int, c1: int) -> np.ndarray:
    """Float32 0/1 values of columns [c0, c1) of packed rows (c0 a multiple of 8)."""
    bits = np.unpackbits(P[:, c0 // 8 : (c1 + 7) // 8], axis=1, count=c1 - c0, bitorder="little")
    return bits.astype(np.float32)


def _item_newton(
    X: np.ndarray,
    outer_x: np.ndarray,
    Y: np.ndarray,
    beta: np.ndarray,
    item_pen: np.ndarray,
    iu: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """One damped Newton step of the item regressions of a column chunk (``beta``: (c, p)).

    Same step as ``irt._newton_rows`` on the design ``X = [theta, 1]``: float32 chunk
    arithmetic, float64 gradient, Hessian and solve (:func:`spd_solve`).
    """
    p = X.shape[1]
    mu = _sigmoid(X @ beta.T.astype(np.float32))
    r = np.subtract(Y, mu)
    grad = (X.T @ r).astype(np.float64) - item_pen[:, None] * beta.T
    np.multiply(mu, mu, out=r)
    mu -= r
    hess = (outer_x @ mu).astype(np.float64)  # (p(p+1)/2, c): one upper triangle per column
    hess[_diagonal(p)] += item_pen[:, None]
    step = spd_solve(hess, grad, p).T
    # Damping keeps the alternating fit monotone on separable columns.
    return beta + np.clip(step, -2.0, 2.0)


@functools.cache
def _diagonal(p: int) -> np.ndarray:
    """Where the diagonal lies in an upper triangle stored row by row."""
    return np.concatenate([[0], np.cumsum(np.arange(p, 1, -1))])


def _start(
    P: np.ndarray, n: int, k: int, spans: Spans, tick: Callable[[], None]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Logistic PCA's usual start, as in the in-memory fit: column means, the leading
    eigenvectors ``u`` of the centred Gram matrix (accumulated over chunks, float64),
    ``theta = u sqrt(m)``; ``d`` = smoothed logits of the column means."""
    m = P.shape[0]
    col = np.empty(n, dtype=np.float64)
    gram = np.zeros((m, m))

    def chunk(span: tuple[int, int]) -> np.ndarray:
        c0, c1 = span
        Y = _unpack(P, c0, c1)
        col[c0:c1] = Y.sum(axis=0, dtype=np.float64) / m
        Y -= col[c0:c1].astype(np.float32)
        return (Y @ Y.T).astype(np.float64)

    def add(part: np.ndarray) -> None:
        nonlocal gram
        gram += part
        tick()

    ordered_map(chunk, spans, add)
    evals, evecs = np.linalg.eigh(gram)
    u = evecs[:, np.argsort(evals)[::-1][:k]]
    d = np.log((col * m + 0.5) / ((1 - col) * m + 0.5)).astype(np.float32)
    return u, u * np.sqrt(m), d, col


def _alternate(
    P: np.ndarray,
    n: int,
    k: int,
    iters: int,
    item_ridge: float,
    spans: Spans,
    tick: Callable[[], None],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The alternating fit of ``irt.fit_item_model``, pass by pass over column chunks."""
    m = P.shape[0]
    p = k + 1
    u, theta, d, col = _start(P, n, k, spans, tick)
    u32 = (u * (4.0 / np.sqrt(m))).astype(np.float32)
    w = np.empty((n, k), dtype=np.float32)

    def start_w(span: tuple[int, int]) -> None:
        c0, c1 = span
        Y = _unpack(P, c0, c1)
        Y -= col[c0:c1].astype(np.float32)
        w[c0:c1] = Y.T @ u32

    ordered_map(start_w, spans)
    item_pen = np.append(np.full(k, item_ridge), 0.01)
    iu_p, iu_k = _triu(p), _triu(k)
    for _ in range(iters):
        X = np.hstack([theta, np.ones((m, 1))]).astype(np.float32)
        parts = _pass(P, X, _outer_sym(X, iu_p), theta.astype(np.float32), w, d, item_pen, spans)
        g_theta = np.zeros((m, k))
        h_theta = np.zeros((m, len(iu_k[0])))

        def add(
            part: tuple[np.ndarray, np.ndarray], g: np.ndarray = g_theta, h: np.ndarray = h_theta
        ) -> None:
            g += part[0]  # in chunk order, as a serial pass adds them
            h += part[1]
            tick()

        ordered_map(parts, spans, add)
        g_theta -= theta  # standard-normal prior on theta (ridge 1)
        hess = _from_sym(h_theta, k, iu_k) + np.eye(k)[None]
        step = np.linalg.solve(hess, g_theta[:, :, None])[:, :, 0]
        theta = theta + np.clip(step, -2.0, 2.0)
    return theta, d, w, u


def _pass(
    P: np.ndarray,
    X: np.ndarray,
    outer_x: np.ndarray,
    theta32: np.ndarray,
    w: np.ndarray,
    d: np.ndarray,
    item_pen: np.ndarray,
    spans: Spans,
) -> Callable[[tuple[int, int]], tuple[np.ndarray, np.ndarray]]:
    """One pass's work on a column chunk: the item step (``w`` and ``d`` updated in place),
    then the chunk's share of the ability step's gradient and Hessian, with the items just
    updated."""
    k = w.shape[1]
    iu_p, iu_k = _triu(k + 1), _triu(k)

    def chunk(span: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        c0, c1 = span
        Y = _unpack(P, c0, c1)
        beta = _item_newton(
            X,
            outer_x,
            Y,
            np.hstack([w[c0:c1], d[c0:c1, None]]).astype(np.float64),
            item_pen,
            iu_p,
        )
        w[c0:c1] = beta[:, :k]
        d[c0:c1] = beta[:, k]
        wc = w[c0:c1]
        mu = product(theta32, wc.T)
        mu += d[c0:c1]
        _sigmoid(mu)
        g = ((Y - mu) @ wc).astype(np.float64)
        mu *= 1.0 - mu
        return g, (mu @ _outer_sym(wc, iu_k).T).astype(np.float64)

    return chunk


def _columns(P: np.ndarray, n: int, cols: np.ndarray) -> np.ndarray:
    """Packed rows of the chosen columns only (row chunks of at most ``ROW_BLOCK_BYTES``)."""
    out = np.empty((P.shape[0], (len(cols) + 7) // 8), dtype=np.uint8)
    step = max(1, ROW_BLOCK_BYTES // max(n, 1))
    for a in range(0, P.shape[0], step):
        dense = np.unpackbits(P[a : a + step], axis=1, count=n, bitorder="little")
        out[a : a + step] = np.packbits(dense[:, cols], axis=1, bitorder="little")
    return out


def fit_packed_item_model(
    P: np.ndarray,
    n: int,
    k: int = 10,
    iters: int = 25,
    item_ridge: float = 8.0,
    *,
    max_columns: int | None = None,
    item_iters: int = 6,
    seed: int = 0,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    progress: Callable[[float], object] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit the item model of :mod:`.irt` to packed rows ``P`` ((m, ceil(n/8)) uint8).

    With ``n <= max_columns`` (or ``max_columns=None``) this is the in-memory fit made in
    column chunks. Otherwise, a two-stage fit for caches too large to alternate over:
    (1) the alternating fit on ``max_columns`` columns drawn at random (``seed``) gives
    the models' abilities ``theta``; (2) with ``theta`` fixed, every column's item
    parameters are fitted in one pass over the cache by ``item_iters`` Newton steps
    (columns are independent given ``theta``) from a least-squares start consistent with
    ``theta``; on the demo data 6 steps agree with 25 to 1e-6 in mean probability and
    change no prediction. Returns an
    ``(d, w, theta)`` with float32 ``d`` and ``w`` (``irt.item_model`` adds the prior).
    ``progress(f)`` gets the fraction done after every chunk.
    """
    P = np.asarray(P)
    if P.dtype != np.uint8 or P.ndim != 2 or P.shape[1] != (n + 7) // 8:
        raise InputError(
            f"the packed Sort cache must be (models, {(n + 7) // 8}) uint8 rows for {n} samples."
        )
    m = P.shape[0]
    if m < 2 or n < 2:
        raise InputError(
            f"the Sort cache must have at least 2 models and 2 samples, got {m} x {n}."
        )
    if max_columns is not None and max_columns < 2:
        raise InputError(f"max_columns must be at least 2, got {max_columns}.")
    k = int(max(1, min(k, m - 1)))
    # The alternating fit's columns: all of them, or a random max_columns of a wider cache.
    fit_n = n if max_columns is None else min(n, max_columns)
    two_stage = fit_n < n
    spans = column_chunks(fit_n, m, block_bytes)
    all_spans = column_chunks(n, m, block_bytes) if two_stage else []
    steps = (iters + 1) * len(spans) + len(all_spans)
    done = 0

    said = 0.0

    def tick() -> None:
        nonlocal done, said
        done += 1
        # Every hundredth of the way, not every chunk: a progress bar redraws on each call.
        if progress is not None and (done / steps - said >= 0.01 or done >= steps):
            said = min(done / steps, 1.0)
            progress(said)

    if not two_stage:
        theta, d, w, _ = _alternate(P, n, k, iters, item_ridge, spans, tick)
    else:
        cols = np.sort(np.random.default_rng(seed).choice(n, fit_n, replace=False))
        theta, _, _, _ = _alternate(_columns(P, n, cols), fit_n, k, iters, item_ridge, spans, tick)
        # Stage 2: items of every column given theta. Start: d = smoothed logit of the
        # column mean, w = the ridge least-squares slope of the centred column on theta,
        # times 4 (the logistic's slope at 1/2), i.e. the start consistent with the
        # fitted theta (the PCA start would belong to the initial one).
        lsq = (np.linalg.solve(theta.T @ theta + item_ridge * np.eye(k), theta.T) * 4.0).astype(
            np.float32
        )
        iu_p = _triu(k + 1)
        item_pen = np.append(np.full(k, item_ridge), 0.01)
        X = np.hstack([theta, np.ones((m, 1))]).astype(np.float32)
        outer_x = _outer_sym(X, iu_p)
        d = np.empty(n, dtype=np.float32)
        w = np.empty((n, k), dtype=np.float32)

        def items(span: tuple[int, int]) -> None:  # columns are independent given theta
            c0, c1 = span
            Y = _unpack(P, c0, c1)
            col = Y.mean(axis=0, dtype=np.float64)
            d0 = np.log((col * m + 0.5) / ((1 - col) * m + 0.5))
            beta = np.hstack([((Y - col.astype(np.float32)).T @ lsq.T), d0[:, None]]).astype(
                np.float64
            )
            for _ in range(item_iters):
                beta = _item_newton(X, outer_x, Y, beta, item_pen, iu_p)
            w[c0:c1] = beta[:, :k]
            d[c0:c1] = beta[:, k]

        ordered_map(items, all_spans, lambda _: tick())
    return d, w, theta
