"""A sweep from packed row sources in bounded memory, for every search method.

``run_sweep`` serves every method, but its protocol path fits a model-based method on
dense Sort rows and the dense kernel reads other Sorts whole; a page on a large store must
never unpack a whole selection. :func:`run_sweep_streamed` takes row sources
(:class:`~lifelong_core.rows.RowSource`, e.g. rows read from the store) and picks the
path:

- threshold rule, no error decomposition, Sorting by Sum: ``run_sweep``'s packed kernel;
- threshold rule with the decomposition (Prabhu et al. 2024, §4.5), or ``copy-nearest``/another
  protocol method: ``run_sweep``'s dense kernel on chunks of a bounded number of rows
  (``lifelong_core.limits.block_rows``); CopyNearest&Expand on packed rows;
- a method that can fit from packed rows (``mirt``/``irt``: ``fit_packed``) is fitted so;
  any other method needs its Sort rows dense, which the dense-read guard allows only
  within the limit.

Sort methods other than Sorting by Sum need the Sort rows dense as well (the same guard).
Results equal those of ``run_sweep`` on the same rows (tests/engine/test_sweep_streamed.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.bits import column_sums_packed
from lifelong_core.errors import InputError
from lifelong_core.methods.registry import get_method, is_threshold_rule, method_spec
from lifelong_core.rows import RowSource
from lifelong_core.sortsearch.metrics import kappa_from
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.sweep.engine import _protocol_path, run_sweep
from lifelong_core.sweep.result import SweepResult, check_budgets, summarise


class StoreSource(RowSource):
    """Rows ``model_idx`` of a store on samples ``sidx``, read chunk by chunk as packed bits
    (``store.dataset_rows.read_rows``). ``row_ids`` label the rows in results (default:
    positions). Holds an open store handle: for use within one process."""

    def __init__(self, st, model_idx, sidx, row_ids=None):
        self.st = st
        self.model_idx = np.asarray(model_idx, dtype=np.int64)
        self.sidx = np.asarray(sidx, dtype=np.int64)
        self.n = len(self.sidx)
        self.row_ids = (
            np.arange(len(self.model_idx), dtype=np.int64)
            if row_ids is None
            else np.asarray(row_ids, dtype=np.int64)
        )

    def read(self, start: int, stop: int) -> np.ndarray:
        from lifelong_core.store.dataset_rows import read_rows

        return read_rows(self.st, self.model_idx[start:stop], self.sidx)


def _dense_all(src: RowSource, what: str) -> np.ndarray:
    limits.check_dense(src.n_rows, src.n, 1, what)
    return src.read_dense(0, src.n_rows)


def _order_from_sums(src: RowSource) -> np.ndarray:
    sums = np.zeros(src.n, dtype=np.int64)
    for _, P in src.chunks():
        sums += column_sums_packed(P, src.n)
    return order_from_sums(sums, "stable")


def run_sweep_streamed(
    A_sort: RowSource,
    A_eval: RowSource,
    budgets: Sequence[int],
    *,
    sort: str = "sum",
    sampling: str | None = None,
    search: str = "midpoint",
    confidence: np.ndarray | None = None,
    seed: int = 0,
    decompose: bool = False,
    progress: Callable[[float], None] | None = None,
    method=None,
) -> SweepResult:
    """Sort on ``A_sort``, estimate every row of ``A_eval`` at every budget, score it.

    ``per_model.model_row`` holds ``A_eval.row_ids``. ``method``: an already fitted search
    method (e.g. item parameters read from the store) used instead of fitting one.
    """
    if A_sort.n != A_eval.n:
        raise InputError(
            f"the evaluated rows have {A_eval.n} samples but the Sort rows have {A_sort.n}."
        )
    threshold = is_threshold_rule(search)
    if threshold and not decompose and sort == "sum":
        return run_sweep(
            A_sort,
            A_eval,
            budgets,
            sort=sort,
            sampling=sampling,
            search=search,
            seed=seed,
            kernel="packed",
            progress=progress,
        )
    packed_sweep = method_spec(search).load_packed_sweep()
    if packed_sweep is not None and sort == "sum":
        return packed_sweep(A_sort, A_eval, budgets, seed=seed, progress=progress)
    step = limits.block_rows(A_eval.n, 1, cap=256)
    if threshold or packed_sweep is not None:
        # The dense kernel on bounded chunks; a Sort other than by Sum, or a method that
        # fits on the Sort rows, reads them whole.
        if sort != "sum" or packed_sweep is not None:
            _dense_all(A_sort, f"Sort method {sort!r} / {search!r} on the Sort set")
        return run_sweep(
            A_sort,
            A_eval,
            budgets,
            sort=sort,
            sampling=sampling,
            search=search,
            confidence=confidence,
            seed=seed,
            decompose=decompose,
            progress=progress,
            kernel="dense",
            chunk_rows=step,
        )
    if decompose:
        raise InputError("the error decomposition applies to threshold rules only.")
    if method is None:
        method = get_method(search)
        if sort != "sum":
            from lifelong_core.sortsearch import compute_order

            order = compute_order(
                _dense_all(A_sort, f"Sort method {sort!r} on the Sort set"), sort, confidence
            )
        else:
            order = _order_from_sums(A_sort)
        if hasattr(method, "fit_packed"):
            from lifelong_core.methods.irt_fit import DEFAULT_MAX_COLUMNS

            fit_progress = None if progress is None else (lambda f: progress(0.5 * f))
            method.fit_packed(
                A_sort.read(0, A_sort.n_rows),
                A_sort.n,
                order,
                progress=fit_progress,
                max_columns=DEFAULT_MAX_COLUMNS,
                seed=seed,
            )
        else:
            method.fit(_dense_all(A_sort, f"fitting {search!r} on the Sort set"), order, confidence)
    eval_progress = None if progress is None else (lambda f: progress(0.5 + 0.5 * f))
    return run_sweep_with_method(
        method, A_eval, budgets, seed=seed, progress=eval_progress, block_rows=min(step, 4)
    )


def run_sweep_with_method(
    method,
    A_eval: RowSource,
    budgets: Sequence[int],
    *,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
    block_rows: int = 4,
) -> SweepResult:
    """Score a fitted protocol method on evaluated rows read ``block_rows`` at a time."""
    n = A_eval.n
    budgets = check_budgets(budgets, n)
    done = 0

    def advance(rows: int) -> None:
        nonlocal done
        done += rows
        if progress is not None:
            progress(min(done / A_eval.n_rows, 1.0))

    per_model = _protocol_path(
        method, A_eval, n, budgets, np.random.default_rng(seed), block_rows, advance
    )
    config = dict(
        sort="sum", sampling="stratified", search=getattr(method, "name", "?"), seed=seed, n=n
    )
    return SweepResult(summarise(per_model), per_model, method.order_, config)


def _bits_at(P: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """0/1 values (rows, len(cols)) of packed rows at columns ``cols``."""
    return (P[:, cols >> 3] >> (cols & 7).astype(np.uint8)) & np.uint8(1)


def copy_nearest_packed(
    A_sort: RowSource,
    A_eval: RowSource,
    budgets: Sequence[int],
    *,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> SweepResult:
    """``run_sweep(..., search="copy-nearest")`` on packed rows, same numbers
    (``methods.copy_nearest``: the same random draws per budget, nearest Sort row by
    Hamming distance on the drawn samples, lowest row on ties). The Sort rows stay packed;
    distances are matrix products on the drawn samples only, and each copied row's errors
    are popcounts of XORs."""
    n = A_sort.n
    budgets = check_budgets(budgets, n)
    S = A_sort.read(0, A_sort.n_rows)
    s_tot = np.bitwise_count(S).sum(axis=1, dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = [np.sort(rng.choice(n, size=b, replace=False)).astype(np.int64) for b in budgets]
    s_at = [_bits_at(S, c).astype(np.float32) for c in draws]
    parts = []
    done = 0
    for row_ids, E in A_eval.chunks(max(1, limits.block_rows(max(budgets), 4, cap=256))):
        e_tot = np.bitwise_count(E).sum(axis=1, dtype=np.int64)
        for b, cols, sa in zip(budgets, draws, s_at):
            obs = _bits_at(E, cols).astype(np.float32)
            agree = obs @ sa.T + (1.0 - obs) @ (1.0 - sa).T
            near = np.argmax(agree, axis=1)  # fewest disagreements, lowest row on ties
            at = sa[near]
            errors = np.bitwise_count(S[near] ^ E).sum(axis=1, dtype=np.int64) - (at != obs).sum(
                axis=1
            )
            est = (s_tot[near] - at.sum(axis=1) + obs.sum(axis=1)) / n
            true = e_tot / n
            err = errors / n
            parts.append(
                pd.DataFrame(
                    {
                        "model_row": row_ids,
                        "budget": b,
                        "est_acc": est,
                        "true_acc": true,
                        "mae": err,
                        "eagg": np.abs(est - true),
                        "kappa": kappa_from(err, true, est),
                    }
                )
            )
        done += len(row_ids)
        if progress is not None:
            progress(done / A_eval.n_rows)
    per_model = (
        pd.concat(parts).sort_values(["budget", "model_row"], kind="stable").reset_index(drop=True)
    )
    config = dict(
        sort="sum", sampling="random", search="copy-nearest", seed=seed, n=n, kernel="packed"
    )
    return SweepResult(summarise(per_model), per_model, _order_from_sums(A_sort), config)
