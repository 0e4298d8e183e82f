"""The one sweep front door: budget sweep of insert_M (Prabhu et al., 2024, §4.2).

Sort once on some models, then for every budget ``n'`` estimate every other model from
``n'`` evaluations and score it against its full row. How the work is done is a pair of
parameters, the way scikit-learn's ``NearestNeighbors(algorithm=...)`` hides its
backends; the numbers do not depend on them (tested):

- ``kernel``: ``"dense"`` (uint8 chunks, prefix counts; the only one with the error
  decomposition) or ``"packed"`` (packed bits from the source to the counts; paper
  scale). Both serve Sorting by Sum and the threshold rules; the packed kernel nothing
  else.
- ``executor``: ``"serial"``, ``"threads"`` or ``"dask"`` (:mod:`.executors`).

Threshold rules take the prefix-count fast path; any other search method (the
``SearchMethod`` protocol of :mod:`lifelong_core.methods`) is fitted on the Sort rows
and run model by model on dense rows in the calling thread, scored the same way.

For every budget all evaluated models are evaluated on the same samples (one draw per
budget, in budget order, from ``default_rng(seed)`` when sampling is random), as a
benchmark maintainer would pick one subset and run every new model on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.methods.registry import (
    capabilities,
    get_method,
    is_threshold_rule,
    method_spec,
    predicts_samples,
)
from lifelong_core.rows import DenseRows, RowSource
from lifelong_core.sortsearch.metrics import kappa_from
from lifelong_core.sortsearch.search import DEFAULT_RULE, SAMPLING, positions_for, resolve_sampling
from lifelong_core.sortsearch.sort import column_sums, compute_order, order_from_sums
from lifelong_core.sweep.dense import DenseKernel
from lifelong_core.sweep.executors import make_executor
from lifelong_core.sweep.packed import PackedKernel
from lifelong_core.sweep.result import (
    SweepResult,
    assemble,
    check_budgets,
    power_budgets,
    summarise,
)

KERNELS = {"dense": DenseKernel, "packed": PackedKernel}


def _sort_task(source: RowSource, start: int, stop: int, kernel) -> np.ndarray:
    return kernel.sort_sums(kernel.read(source, start, stop), source.n)


def _eval_task(source: RowSource, start: int, stop: int, kernel, spec) -> dict[str, np.ndarray]:
    return kernel.evaluate(kernel.read(source, start, stop), source.row_ids[start:stop], spec)


def _as_rows(A, what: str, row_ids: np.ndarray | None, check: bool) -> RowSource:
    """A row source as is; an array is served in place (checked 0/1 when ``check``)."""
    if isinstance(A, RowSource):
        return A
    A = np.asarray(A)
    if A.ndim != 2:
        raise InputError(f"the {what} matrix must be 2-dimensional, got {A.ndim} dimensions.")
    if check:
        if A.shape[0] == 0 or A.shape[1] == 0:
            raise InputError(f"the {what} matrix must be 2-dimensional and non-empty.")
        if A.dtype != bool and ((A != 0) & (A != 1)).any():
            raise InputError(f"the {what} matrix must hold only 0 and 1.")
    return DenseRows(A, row_ids)


def _check_config(
    kernel: str, executor: str, sort: str, sampling: str, search: str, decompose: bool
) -> None:
    if kernel not in KERNELS:
        raise InputError(
            f"unknown kernel {kernel!r}; use one of {', '.join(KERNELS)}.", param="kernel"
        )
    if sampling not in SAMPLING:
        raise InputError(
            f"unknown sampling {sampling!r}; use one of {', '.join(SAMPLING)}.", param="sampling"
        )
    caps = capabilities(search)
    threshold = caps.threshold_rule
    if kernel == "packed":
        if sort != "sum":
            raise InputError(
                f"the packed kernel sorts by sum only; sort {sort!r} needs the dense kernel.",
                param="sort",
            )
        if not threshold:
            raise InputError(
                f"the packed kernel runs the threshold rules only; search {search!r} needs the dense "
                "kernel.",
                param="search",
            )
    if executor == "dask" and not caps.dask:
        raise InputError(
            f"the dask executor runs the threshold rules only; search {search!r} runs in the calling "
            "thread (serial or threads executor).",
            param="search",
        )
    if decompose and not threshold:
        raise InputError(
            "the error decomposition applies to threshold rules only.", param="decompose"
        )
    if decompose and not KERNELS[kernel].decomposes:
        raise InputError(
            f"the {kernel} kernel cannot compute the error decomposition; use the dense kernel.",
            param="decompose",
        )


def check_bounds(
    *, seed: int = 0, depth: int = 2, threads: int | None = None, chunk_rows: int | None = None
) -> None:
    """Refuse a seed or a work size outside :mod:`lifelong_core.limits` (one sentence each).

    :func:`run_sweep` calls it first; the command line calls it before reading any file.
    """
    limits.check_seed(seed)
    limits.check_count(depth, "the recursion depth of Sort", 1, limits.MAX_SORT_DEPTH, "depth")
    if threads is not None:
        limits.check_count(threads, "the number of threads", 1, limits.MAX_THREADS, "threads")
    if chunk_rows is not None:
        limits.check_count(chunk_rows, "the rows per task", 1, limits.MAX_CHUNK_ROWS, "chunk_rows")


def run_sweep(
    A_sort,
    A_eval,
    budgets: Sequence[int] | None = None,
    *,
    sort: str = "sum",
    sampling: str | None = None,
    search: str = DEFAULT_RULE,
    confidence: np.ndarray | None = None,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
    ties: str | None = None,
    depth: int = 2,
    decompose: bool = False,
    kernel: str = "dense",
    executor: str | None = None,
    threads: int | None = None,
    chunk_rows: int | None = None,
    eval_row_ids: np.ndarray | None = None,
    client=None,
    n_workers: int = 1,
) -> SweepResult:
    """Run Sort once and Search at every budget; score against the evaluated rows.

    Sort & Search's budget sweep (Prabhu et al., 2024, *Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress*, §3-4; exact against a transcription of its
    Listing 1 with ``search="reference"``), and the same sweep for every registered method.

    Parameters
    ----------
    A_sort, A_eval : array or RowSource
        0/1 rows (models x samples) of the Sort set and of the models to estimate: uint8
        arrays (served in place) or :class:`~lifelong_core.rows.RowSource` objects (a
        ``.npy`` file, the store, packed rows).
    budgets : sequence of int, optional
        Evaluations per model, n′; default :func:`power_budgets`.
    sort : {"sum", "confidence", "recursive"}
        How the samples are ordered from easy to hard.
    sampling : str, optional
        The threshold rules' grid: ``"uniform"`` (stratum centres), ``"random"``, the
        published code's grid ``"reference"`` (the default with ``search="reference"``)
        or the listing's own grid; other methods bring their own design.
    search : str
        A registered method (:func:`lifelong_core.methods.available_methods`).
    confidence : array, optional
        True-class confidences of the Sort rows, for ``sort="confidence"``.
    seed : int
        Seeds the random draws (one draw per budget, shared by every evaluated model).
    progress : callable, optional
        ``progress(fraction)``, called from the calling thread as chunks finish.
    ties : {"stable", "reference"}, optional
        Order of tied columns; ``"reference"`` (Listing 1's unstable argsort) is the
        default with ``search="reference"``.
    depth : int
        Recursion depth of ``sort="recursive"``.
    decompose : bool
        Add the aleatoric/epistemic error split (§4.5; threshold rules only).
    kernel : {"dense", "packed"}
        uint8 chunks with prefix counts, or packed bits from source to counts.
    executor : {"serial", "threads", "dask"}, optional
        Default ``"threads"`` when ``threads > 1``, else ``"serial"``.
    threads, chunk_rows : int, optional
        Pool size (or threads per dask worker) and rows per task.
    eval_row_ids : array, optional
        Labels of the evaluated rows in ``per_model`` (default 0..m-1, or a source's own
        ``row_ids``).
    client, n_workers
        The dask cluster, for ``executor="dask"``.

    Returns
    -------
    SweepResult
        ``table`` (one row per budget: mae, eagg, kappa, pearson, spearman),
        ``per_model`` and ``order`` (the Sort order).

    Raises
    ------
    InputError
        On an unknown method, sort, sampling, kernel or executor, a combination the kernel
        or executor cannot run, shapes that do not match, or budgets outside ``[1, n]``.
    """
    executor = executor or ("threads" if (threads or 1) > 1 else "serial")
    sampling = resolve_sampling(sampling, search)
    _check_config(kernel, executor, sort, sampling, search, decompose)
    check_bounds(seed=seed, depth=depth, threads=threads, chunk_rows=chunk_rows)
    threshold = is_threshold_rule(search)
    packed = kernel == "packed"
    rows_sort = _as_rows(A_sort, "Sort", None, packed)
    rows_eval = _as_rows(A_eval, "evaluated", eval_row_ids, packed)
    if rows_sort.n_rows == 0:
        raise InputError("the Sort set is empty.")
    if rows_eval.n_rows == 0:
        raise InputError("there are no rows to evaluate: every row is in the Sort set.")
    n = rows_sort.n
    if rows_eval.n != n:
        raise InputError(
            f"the evaluated rows have {rows_eval.n} samples but the Sort rows have {n}."
        )
    if confidence is not None and np.shape(confidence) != (rows_sort.n_rows, n):
        raise InputError(
            f"the confidence matrix has shape {np.shape(confidence)}, the Sort rows "
            f"{(rows_sort.n_rows, n)}; they must match.",
            param="confidence",
        )
    budgets = check_budgets(power_budgets(n) if budgets is None else budgets, n)
    # The published rule keeps the published code's tie order (Listing 1), end to end.
    ties = ties or (
        "reference" if method_spec(search).defaults.get("rule") == "reference" else "stable"
    )
    kern = KERNELS[kernel]()
    step = chunk_rows or kern.default_chunk_rows(n)
    config = dict(
        sort=sort,
        sampling=sampling,
        search=search,
        seed=seed,
        ties=ties,
        n=n,
        kernel=kernel,
        executor=executor,
    )
    # Sorting by Sum streams the Sort rows through the kernel (and the executor); they are
    # read into memory only for another Sort or a method that fits on them, or used in
    # place when the dense kernel was handed an array.
    dense_sort = None
    if isinstance(rows_sort, DenseRows) and not packed:
        dense_sort = rows_sort.A
    elif sort != "sum" or not threshold:
        dense_sort = rows_sort.read_dense(0, rows_sort.n_rows)
    total = rows_eval.n_rows + (rows_sort.n_rows if dense_sort is None else 0)
    done = 0

    def advance(rows: int) -> None:
        nonlocal done
        done += rows
        if progress is not None:
            progress(min(done / total, 1.0))

    with make_executor(executor, threads=threads, client=client, n_workers=n_workers) as ex:
        if sort != "sum":
            order = compute_order(dense_sort, sort, confidence, ties, depth)
        elif dense_sort is not None:
            order = order_from_sums(column_sums(dense_sort), ties)
        else:
            order = order_from_sums(
                ex.total(_sort_task, rows_sort, rows_sort.spans(step), kern), ties
            )
            advance(rows_sort.n_rows)
        rng = np.random.default_rng(seed)
        if threshold:
            positions = tuple(positions_for(sampling, n, b, rng) for b in budgets)
            # The listing's printed grid evaluates its own number of samples per budget.
            config["evaluated"] = {int(b): len(p) for b, p in zip(budgets, positions)}
            spec = kern.spec(n, budgets, positions, search, order, decompose)
            spans = rows_eval.spans(step)
            parts = ex.map(
                _eval_task,
                rows_eval,
                spans,
                kern,
                spec,
                on_result=lambda i, _: advance(spans[i][1] - spans[i][0]),
            )
            per_model = assemble(parts)
        else:
            method = get_method(search)
            method.fit(dense_sort, order, confidence)
            per_model = _protocol_path(method, rows_eval, n, budgets, rng, step, advance)
    if executor != "serial":
        config["threads"] = ex.threads if executor == "threads" else threads
    return SweepResult(summarise(per_model), per_model, order, config)


def _protocol_path(
    method, rows: RowSource, n: int, budgets, rng, step: int, advance
) -> pd.DataFrame:
    """Fit once, then every evaluated model at every budget through ``select``/``estimate``."""
    selections = [np.asarray(method.select(n, b, rng), dtype=np.int64) for b in budgets]
    for b, sel in zip(budgets, selections):
        if len(sel) != b:
            raise InputError(
                f"search method {getattr(method, 'name', method)!r} selected {len(sel)} samples for budget {b}."
            )
    out: dict[str, list] = {
        k: []
        for k in (
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
    }
    # A method that predicts no unevaluated sample (the random baseline) has no
    # sample-level error: its row is a constant fill, not a prediction to score.
    scored = predicts_samples(method)
    for row_ids, dense in rows.dense_chunks(step):
        for b, sel in zip(budgets, selections):
            for rid, row in zip(row_ids, dense):
                est = method.estimate(sel, row[sel])
                y = np.asarray(est.per_sample)
                if y.shape != (n,):
                    raise InputError(
                        f"search method returned a per-sample vector of length {y.size}, expected {n}."
                    )
                true = float(row.sum(dtype=np.int64)) / n
                err = float(np.count_nonzero(y != row)) / n if scored else np.nan
                out["model_row"].append(int(rid))
                out["budget"].append(b)
                out["est_acc"].append(float(est.acc))
                out["true_acc"].append(true)
                out["mae"].append(err)
                out["eagg"].append(abs(float(est.acc) - true))
                out["kappa"].append(
                    float(kappa_from(err, true, float(y.mean()))) if scored else np.nan
                )
                out["est_lo"].append(np.nan if est.lo is None else float(est.lo))
                out["est_hi"].append(np.nan if est.hi is None else float(est.hi))
        advance(len(row_ids))
    if not out["model_row"]:
        raise InputError("the evaluated rows produced no blocks to score.")
    df = (
        pd.DataFrame(out).sort_values(["budget", "model_row"], kind="stable").reset_index(drop=True)
    )
    if df["est_lo"].isna().all() and df["est_hi"].isna().all():
        df = df.drop(columns=["est_lo", "est_hi"])
    return df
