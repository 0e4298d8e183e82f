"""The sweep's method path: any search method, fitted once, run model by model.

Every registered method follows the ``SearchMethod`` protocol
(:mod:`lifelong_core.methods.base`): ``fit`` on the Sort rows, ``select`` the samples a
new model is evaluated on at a budget, ``estimate`` its row from them. The sweep of
Prabhu et al. (2024, *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
§4.2) scores each estimate against the evaluated model's full row as the threshold rules'
prefix-count path does: MAE over samples, E_agg = |estimated - true accuracy| and Cohen's
kappa (Eq. 6).

A method that scores many rows at once (``SweepScoring``: ``mirt``, ``irt``, the default
``auto``, ``first-n``, ``copy-nearest``) is handed blocks of packed rows and every budget's selection together and
returns, per row, the estimate and its counts of wrong and predicted-correct samples:
the same numbers, without a per-sample row per model and budget. The selections and the
rows are checked once per sweep, not once per estimate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lifelong_core.bits import row_totals
from lifelong_core.errors import InputError
from lifelong_core.methods.base import (
    PackedFitMethod,
    SearchMethod,
    SweepScoring,
    check_observations,
)
from lifelong_core.methods.irt_fit import DEFAULT_MAX_COLUMNS
from lifelong_core.methods.memory import FitMemory
from lifelong_core.methods.registry import get_method, method_spec, predicts_samples
from lifelong_core.rows import DEFAULT_CHUNK_ROWS, DenseRows, RowSource
from lifelong_core.sortsearch.metrics import kappa_from

if TYPE_CHECKING:
    from lifelong_core.store.kept_fits import KeptFits

OUT_KEYS = (
    "model_row",
    "budget",
    "est_acc",
    "true_acc",
    "mae",
    "eagg",
    "kappa",
    "est_lo",
    "est_hi",
)


def fit_packed(
    method: SearchMethod,
    rows: RowSource,
    order: np.ndarray,
    *,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
    packed: np.ndarray | None = None,
) -> PackedFitMethod:
    """Fit ``method`` from the packed Sort rows in bounded memory (its ``fit_packed``: the
    item model's fit in column chunks, at most ``DEFAULT_MAX_COLUMNS`` columns at once).

    Parameters
    ----------
    method : SearchMethod
        A method whose capabilities declare ``packed``.
    rows : RowSource
        The Sort rows.
    order : numpy.ndarray
        The easy -> hard order of the samples.
    seed : int
        The seed of the column subset of a wide cache.
    progress : callable, optional
        ``progress(fraction)`` as the fit advances.
    packed : numpy.ndarray, optional
        The Sort rows already read packed (else they are read from ``rows``).

    Returns
    -------
    PackedFitMethod
        ``method``, fitted.

    Raises
    ------
    TypeError
        If ``method`` has no ``fit_packed`` (its registration declares a capability its
        class does not have).
    """
    if not isinstance(method, PackedFitMethod):
        raise TypeError(
            f"method {method.name!r} is registered as running on packed rows but its class has "
            "no fit_packed (lifelong_core.methods.base.PackedFitMethod)."
        )
    return method.fit_packed(
        rows.read(0, rows.n_rows) if packed is None else packed,
        rows.n,
        order,
        progress=progress,
        max_columns=DEFAULT_MAX_COLUMNS,
        seed=seed,
    )


# Fitted methods kept in a caller's FitMemory, keyed by what they were fitted on: two sweeps on the
# same Sort rows (the Budget explorer and Estimated vs true ask for other budgets), and a
# backtest whose cache is a sweep's Sort set (the Budget explorer's comparison with
# random), share one fit. A fit depends only on its inputs, so a kept one is the fit itself.
FITS_MAX_BYTES = 256 << 20  # Sort rows larger than this are fitted without being kept


def _digest(a: np.ndarray | None) -> tuple | None:
    if a is None:
        return None
    a = np.ascontiguousarray(a)
    return (a.dtype.str, a.shape, hashlib.blake2b(a.view(np.uint8).data, digest_size=16).digest())


def fitted_method(
    search: str,
    how: str,
    rows: RowSource,
    dense: np.ndarray | None,
    order: np.ndarray,
    confidence: np.ndarray | None = None,
    *,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
    groups: Sequence[object] | np.ndarray | None = None,
    memory: FitMemory | None = None,
) -> SearchMethod:
    """``search`` fitted on the Sort rows, or the same fit kept in ``memory``.

    Parameters
    ----------
    search : str
        A registered method.
    how : {"packed", "dense"}
        Fitted from packed rows in bounded memory (:func:`fit_packed`) or on ``dense``.
    rows : RowSource
        The Sort rows.
    dense : numpy.ndarray or None
        The Sort rows as a dense array, for ``how="dense"``.
    order : numpy.ndarray
        The easy -> hard order of the samples.
    confidence : numpy.ndarray, optional
        The Sort rows' confidences, for a method that sorts by them.
    seed : int
        The seed of a packed fit's column subset.
    progress : callable, optional
        ``progress(fraction)`` as a new fit advances.
    groups : array_like, optional
        Each sample's task, for a method that uses them
        (:func:`~lifelong_core.methods.registry.get_method`).
    memory : FitMemory, optional
        Where fits are kept for the sweeps that ask for the same one (methods do not
        change once fitted), keyed by the method's registration and digests of the rows,
        order, confidences and seed; None fits afresh.

    Returns
    -------
    SearchMethod
        Fitted.
    """
    spec = method_spec(search)
    data = rows.read(0, rows.n_rows) if how == "packed" else dense
    if data is None:
        raise RuntimeError("the sweep plan fits on dense Sort rows it did not read.")

    def fit() -> SearchMethod:
        return _fit(search, how, rows, data, order, confidence, seed, progress, groups)

    # A cheap method's fit costs less than its key, and would only push the dear fits out.
    if memory is None or spec.capabilities.cheap:
        return fit()
    key = (
        search,
        spec.target,
        repr(sorted(spec.defaults.items())),
        how,
        rows.n,
        _digest(data),
        _digest(np.asarray(order)),
        _digest(confidence),
        seed if how == "packed" else None,  # only a packed fit draws (its column subset)
        # Only a method that reads the tasks is fitted on them (get_method).
        None
        if groups is None or not spec.capabilities.groups
        else _digest(np.asarray(groups).astype(str)),
    )
    store_fits = memory.store_fits
    if store_fits is not None and spec.capabilities.kept_state and confidence is None:
        inner = fit

        def fit() -> SearchMethod:
            return _kept_or_fit(
                store_fits, stored_key(key), search, inner, order, data, how, groups
            )

    if data.nbytes > FITS_MAX_BYTES:  # too large to hold in memory
        return fit()
    return memory.get(key, fit)


def stored_key(key: tuple) -> str:
    """The digest a fit is kept in the store under: its memory key and the estimators' code.

    Parameters
    ----------
    key : tuple
        The fit's memory key (:func:`fitted_method`: the method's registration and digests
        of the Sort rows, order, confidences, seed and tasks).

    Returns
    -------
    str
        Hexadecimal; a new version of the estimators' code gives new digests.
    """
    from lifelong_core.methods.tuning_memory import code_digest

    h = hashlib.blake2b(digest_size=20)
    h.update(repr(key).encode())
    h.update(code_digest().encode())
    return h.hexdigest()


def _kept_or_fit(
    store_fits: KeptFits,
    name: str,
    search: str,
    fit: Callable[[], SearchMethod],
    order: np.ndarray,
    data: np.ndarray,
    how: str,
    groups: Sequence[object] | np.ndarray | None,
) -> SearchMethod:
    """The fit the store keeps under ``name``, rebuilt; else ``fit()``, kept when the store
    is written to."""
    import time

    from lifelong_core.methods.base import is_kept_state_method
    from lifelong_core.methods.irt import item_model
    from lifelong_core.store.kept_fits import KeptFit

    kept = store_fits.load(name)
    if kept is not None:
        method = get_method(search, groups=groups)
        if is_kept_state_method(method):
            return method.with_items(
                item_model(kept.d, kept.w, kept.theta),
                np.asarray(order, dtype=np.int64),
                params=kept.params,
                rows=data if how == "dense" else None,
            )
    t0 = time.perf_counter()
    method = fit()
    if store_fits.writes and is_kept_state_method(method) and method.has_items:
        item = method.item_
        store_fits.save(
            KeptFit(
                name,
                str(store_fits.dataset),
                search,
                method.kept_params(),
                item.d,
                item.w,
                item.theta,
                time.perf_counter() - t0,
            )
        )
    return method


def _fit(
    search: str,
    how: str,
    rows: RowSource,
    data: np.ndarray,
    order: np.ndarray,
    confidence: np.ndarray | None,
    seed: int,
    progress: Callable[[float], object] | None,
    groups: Sequence[object] | np.ndarray | None,
) -> SearchMethod:
    method = get_method(search, groups=groups)
    if how == "packed":
        fit_packed(method, rows, order, seed=seed, progress=progress, packed=data)
    else:
        method.fit(data, order, confidence)
    return method


def score_method(
    method: SearchMethod,
    rows: RowSource,
    budgets: Sequence[int],
    rng: np.random.Generator,
    step: int,
    advance: Callable[[int], None],
) -> pd.DataFrame:
    """Every evaluated row of ``rows`` at every budget, through ``select``/``estimate``.

    Parameters
    ----------
    method : SearchMethod
        Fitted.
    rows : RowSource
        The evaluated models, read ``step`` dense rows at a time.
    budgets : sequence of int
        Checked budgets, ascending.
    rng : numpy.random.Generator
        One ``select`` draw per budget, in budget order, shared by every evaluated model.
    step : int
        Rows per block.
    advance : callable
        ``advance(rows)`` after each block (progress).

    Returns
    -------
    pandas.DataFrame
        ``per_model``: model_row, budget, est_acc, true_acc, mae, eagg, kappa, and
        est_lo, est_hi when the method gives an interval; ordered by (budget, model_row).

    Raises
    ------
    InputError
        When the method selects another number of samples than the budget, or returns a
        per-sample vector of the wrong length.
    """
    n = rows.n
    selections = [np.asarray(method.select(n, b, rng), dtype=np.int64) for b in budgets]
    for b, sel in zip(budgets, selections):
        if len(sel) != b:
            raise InputError(
                f"search method {getattr(method, 'name', method)!r} selected {len(sel)} samples for budget {b}."
            )
        check_observations(sel, np.zeros(len(sel), dtype=np.uint8), n)
    if isinstance(rows, DenseRows):
        _check_binary(rows.A)
    out: dict[str, list] = {k: [] for k in OUT_KEYS}
    # A method that predicts no unevaluated sample (the random baseline) has no
    # sample-level error: its row is a constant fill, not a prediction to score.
    scored = predicts_samples(method)
    if isinstance(method, SweepScoring):
        _score_rows(method, rows, budgets, selections, scored, advance, out)
        return _per_model(out)
    for row_ids, dense in rows.dense_chunks(step):
        trues = dense.sum(axis=1, dtype=np.int64) / n
        for b, sel in zip(budgets, selections):
            for rid, row, true in zip(row_ids, dense, trues.tolist()):
                est = method.estimate(sel, row[sel])
                y = np.asarray(est.per_sample)
                if y.shape != (n,):
                    raise InputError(
                        f"search method returned a per-sample vector of length {y.size}, expected {n}."
                    )
                err = float(np.count_nonzero(y != row)) / n if scored else np.nan
                out["model_row"].append(int(rid))
                out["budget"].append(b)
                out["est_acc"].append(float(est.acc))
                out["true_acc"].append(true)
                out["mae"].append(err)
                out["eagg"].append(abs(float(est.acc) - true))
                out["kappa"].append(
                    float(kappa_from(np.asarray(err), np.asarray(true), np.asarray(y.mean())))
                    if scored
                    else np.nan
                )
                out["est_lo"].append(np.nan if est.lo is None else float(est.lo))
                out["est_hi"].append(np.nan if est.hi is None else float(est.hi))
        advance(len(row_ids))
    return _per_model(out)


def _check_binary(A: np.ndarray) -> None:
    """The evaluated rows of an array hold only 0 and 1 (checked once per sweep)."""
    if A.dtype != bool and not ((A == 0) | (A == 1)).all():
        raise InputError("observed results must be 0/1 correctness values.")


def _score_rows(
    method: SweepScoring,
    rows: RowSource,
    budgets: Sequence[int],
    selections: list[np.ndarray],
    scored: bool,
    advance: Callable[[int], None],
    out: dict[str, list],
) -> None:
    """The batched path: blocks of packed rows through ``method.score_rows``.

    Blocks are a fixed number of rows (not the caller's ``step``), so how the sweep was
    asked to chunk its work does not change a number."""
    n = rows.n
    for start, stop in rows.spans(DEFAULT_CHUNK_ROWS):
        P = rows.read(start, stop)
        ids = rows.row_ids[start:stop]
        true = row_totals(P, n) / n
        for b, sc in zip(budgets, method.score_rows(selections, P, n)):
            err = sc.wrong / n if scored else np.full(len(ids), np.nan)
            kappa = kappa_from(err, true, sc.ones / n) if scored else np.full(len(ids), np.nan)
            lo = np.full(len(ids), np.nan) if sc.lo is None else sc.lo
            hi = np.full(len(ids), np.nan) if sc.hi is None else sc.hi
            out["model_row"].extend(int(r) for r in ids)
            out["budget"].extend([b] * len(ids))
            out["est_acc"].extend(sc.acc.tolist())
            out["true_acc"].extend(true.tolist())
            out["mae"].extend(np.asarray(err, dtype=np.float64).tolist())
            out["eagg"].extend(np.abs(sc.acc - true).tolist())
            out["kappa"].extend(np.asarray(kappa, dtype=np.float64).tolist())
            out["est_lo"].extend(lo.tolist())
            out["est_hi"].extend(hi.tolist())
        advance(stop - start)


def _per_model(out: dict[str, list]) -> pd.DataFrame:
    if not out["model_row"]:
        raise InputError("the evaluated rows produced no blocks to score.")
    df = (
        pd.DataFrame(out).sort_values(["budget", "model_row"], kind="stable").reset_index(drop=True)
    )
    if df["est_lo"].isna().all() and df["est_hi"].isna().all():
        df = df.drop(columns=["est_lo", "est_hi"])
    return df
