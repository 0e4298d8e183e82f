"""The one sweep front door: budget sweep of insert_M (Prabhu et al., 2024, §4.2).

Sort once on some models, then for every budget ``n'`` estimate every other model from
``n'`` evaluations and score it against its full row. :func:`run_sweep` plans once
(:func:`lifelong_core.sweeping.plan.plan_sweep`: the rows' form, what the method declares in
the registry, the caller's kernel, executor and memory bound) and follows the plan down
one path; how the work is done never changes the numbers (tested):

- ``kernel``: ``"dense"`` (uint8 chunks, prefix counts; the only one with the error
  decomposition) or ``"packed"`` (packed bits from the source to the counts; the
  default where it runs, at every scale). Both serve Sorting by Sum and the threshold
  rules; the packed kernel nothing else.
- ``executor``: ``"serial"``, ``"threads"`` or ``"dask"`` (:mod:`.executors`).
- ``bounded``: no step holds a whole selection dense (the app on a large store).

Threshold rules take the prefix-count path; any other search method (the
``SearchMethod`` protocol of :mod:`lifelong_core.methods`) is fitted on the Sort rows
and run model by model in the calling thread (:mod:`.protocol`), scored the same way; a
method that declares a whole-sweep implementation on packed rows (``packed_sweep``) runs
it when memory is bounded.

For every budget all evaluated models are evaluated on the same samples (one draw per
budget, in budget order, from ``default_rng(seed)`` when sampling is random), as a
benchmark maintainer would pick one subset and run every new model on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.methods.memory import FitMemory
from lifelong_core.methods.registry import is_threshold_rule, method_spec
from lifelong_core.rows import DEFAULT_CHUNK_ROWS, DenseRows, PackedArray, RowSource
from lifelong_core.sortsearch.search import DEFAULT_RULE, positions_for, resolve_sampling
from lifelong_core.sortsearch.sort import column_sums, compute_order, order_from_sums
from lifelong_core.sweeping.executors import make_executor
from lifelong_core.sweeping.plan import KERNELS, SweepPlan, dense_sort_rows, plan_sweep
from lifelong_core.sweeping.protocol import fitted_method, score_method
from lifelong_core.sweeping.result import (
    SweepResult,
    assemble,
    check_budgets,
    power_budgets,
    summarise,
)


def _sort_task(source: RowSource, start: int, stop: int, kernel: Any) -> np.ndarray:
    return kernel.sort_sums(kernel.read(source, start, stop), source.n)


def _eval_task(
    source: RowSource, start: int, stop: int, kernel: Any, spec: Any
) -> dict[str, np.ndarray]:
    return kernel.evaluate(kernel.read(source, start, stop), source.row_ids[start:stop], spec)


def _as_rows(A: np.ndarray | RowSource, what: str, row_ids: np.ndarray | None) -> RowSource:
    """A row source as is; an array is served in place."""
    if isinstance(A, RowSource):
        return A
    A = np.asarray(A)
    if A.ndim != 2:
        raise InputError(f"the {what} matrix must be 2-dimensional, got {A.ndim} dimensions.")
    return DenseRows(A, row_ids)


def _check_binary(rows: RowSource, what: str) -> None:
    """An array is read as it is by every kernel: check it holds a 0/1 matrix (a 2, a 7 or
    a NaN in it once gave a negative MAE). Row sources of the store and of files are
    checked where they are read."""
    if not isinstance(rows, DenseRows):
        return
    A = rows.A
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise InputError(f"the {what} matrix must be 2-dimensional and non-empty.")
    if A.dtype == bool:
        return
    if A.dtype.kind in "iu":
        bad = A.size and (int(A.max()) > 1 or int(A.min()) < 0)
    elif A.dtype.kind == "f":
        bad = not bool(np.all((A == 0) | (A == 1)))  # a NaN is neither
    else:
        bad = True
    if bad:
        raise InputError(f"the {what} matrix must hold only 0 and 1.")


def check_bounds(
    *, seed: int = 0, depth: int = 2, threads: int | None = None, chunk_rows: int | None = None
) -> None:
    """Refuse a seed or a work size outside :mod:`lifelong_core.limits` (one sentence each).

    :func:`run_sweep` calls it before reading any row; the command line calls it before
    reading any file.

    Parameters
    ----------
    seed : int, default 0
        The seed of the random draws; a whole number in [0, 2**32 - 1]
        (:data:`lifelong_core.limits.MAX_SEED`).
    depth : int, default 2
        The recursion depth of ``sort="recursive"``; 1 to
        :data:`lifelong_core.limits.MAX_SORT_DEPTH`.
    threads : int, optional
        The pool size; 1 to :data:`lifelong_core.limits.MAX_THREADS`. None: not checked
        (the executor's default).
    chunk_rows : int, optional
        Rows per task; 1 to :data:`lifelong_core.limits.MAX_CHUNK_ROWS`. None: not
        checked (the plan's default).

    Raises
    ------
    InputError
        If a value is not a whole number in its range; the error names the parameter
        (``seed``, ``depth``, ``threads`` or ``chunk_rows``).
    """
    limits.check_seed(seed)
    limits.check_count(depth, "the recursion depth of Sort", 1, limits.MAX_SORT_DEPTH, "depth")
    if threads is not None:
        limits.check_count(threads, "the number of threads", 1, limits.MAX_THREADS, "threads")
    if chunk_rows is not None:
        limits.check_count(chunk_rows, "the rows per task", 1, limits.MAX_CHUNK_ROWS, "chunk_rows")


def run_sweep(
    A_sort: np.ndarray | RowSource,
    A_eval: np.ndarray | RowSource,
    budgets: Sequence[int] | None = None,
    *,
    sort: str = "sum",
    sampling: str | None = None,
    search: str = DEFAULT_RULE,
    confidence: np.ndarray | None = None,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
    ties: str | None = None,
    depth: int = 2,
    decompose: bool = False,
    kernel: str | None = None,
    executor: str | None = None,
    threads: int | None = None,
    chunk_rows: int | None = None,
    eval_row_ids: np.ndarray | None = None,
    client: Any | None = None,
    n_workers: int = 1,
    bounded: bool = False,
    groups: Sequence[object] | np.ndarray | None = None,
    memory: FitMemory | None = None,
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
    kernel : {"dense", "packed"}, optional
        uint8 chunks with prefix counts, or packed bits from source to counts. Default
        ``"packed"`` where it can run (a threshold rule, Sorting by Sum, no
        decomposition), else ``"dense"``.
    executor : {"serial", "threads", "dask"}, optional
        Default ``"threads"`` when ``threads > 1``, else ``"serial"``.
    threads, chunk_rows : int, optional
        Pool size (or threads per dask worker) and rows per task.
    eval_row_ids : array, optional
        Labels of the evaluated rows in ``per_model`` (default 0..m-1, or a source's own
        ``row_ids``).
    client, n_workers
        The dask cluster, for ``executor="dask"``.
    bounded : bool
        Keep every read bounded, for row sources too large to hold dense (the app on a
        large store): rows in blocks within the dense-read limit
        (:mod:`lifelong_core.limits`), a method with the ``packed`` capability fitted from
        packed rows, one with a ``packed_sweep`` run by it (Sorting by Sum), and any whole
        dense read of the Sort rows checked against the limit first
        (:class:`~lifelong_core.limits.DenseReadError`).
    groups : array_like, optional
        Each sample's task, in column order, for a method that uses them (the ``groups``
        capability, e.g. ``first-n``); ignored by the others.
    memory : FitMemory, optional
        Keeps the method's fit for later sweeps on the same Sort rows (another budget of
        the same page), and reuses one kept there; None fits afresh
        (:mod:`lifelong_core.methods.memory`).

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
    return _sweep(
        A_sort,
        A_eval,
        budgets,
        (sampling,),
        sort=sort,
        search=search,
        confidence=confidence,
        seed=seed,
        progress=progress,
        ties=ties,
        depth=depth,
        decompose=decompose,
        kernel=kernel,
        executor=executor,
        threads=threads,
        chunk_rows=chunk_rows,
        eval_row_ids=eval_row_ids,
        client=client,
        n_workers=n_workers,
        bounded=bounded,
        groups=groups,
        memory=memory,
    )[0]


def sweep_samplings(
    A_sort: np.ndarray | RowSource,
    A_eval: np.ndarray | RowSource,
    budgets: Sequence[int] | None,
    samplings: Sequence[str | None],
    **options: Any,
) -> list[SweepResult]:
    """:func:`run_sweep` once per sampling, sharing the work the samplings have in common.

    A threshold rule's sweeps on the same rows differ only in the sorted positions each
    sampling evaluates (Prabhu et al., 2024, *Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress*, §3.2): the Sort order and every evaluated row's prefix counts
    are the same. Here Sort runs once and each chunk of evaluated rows is counted once,
    at the cuts of every sampling together; each result is the one
    ``run_sweep(..., sampling=s, **options)`` gives (its own draws from
    ``default_rng(seed)``), number for number. Other methods bring their own design and
    run once per sampling, as separate sweeps.

    Parameters
    ----------
    A_sort, A_eval : array or RowSource
        As for :func:`run_sweep`.
    budgets : sequence of int or None
        As for :func:`run_sweep`.
    samplings : sequence of str or None
        The samplings, each as :func:`run_sweep`'s ``sampling``.
    **options
        Any other keyword of :func:`run_sweep` (``search``, ``seed``, ``kernel``, ...).

    Returns
    -------
    list of SweepResult
        One per sampling, in the order given.

    Raises
    ------
    InputError
        As :func:`run_sweep`, or if no sampling is given.
    """
    samplings = tuple(samplings)
    if not samplings:
        raise InputError("no sampling given.", param="samplings")
    if "sampling" in options:
        raise TypeError("sweep_samplings takes its samplings as a list, not sampling=.")
    if len(samplings) == 1 or not is_threshold_rule(options.get("search", DEFAULT_RULE)):
        return [run_sweep(A_sort, A_eval, budgets, sampling=s, **options) for s in samplings]
    return _sweep(A_sort, A_eval, budgets, samplings, **options)


def _sweep(
    A_sort: np.ndarray | RowSource,
    A_eval: np.ndarray | RowSource,
    budgets: Sequence[int] | None,
    samplings: tuple[str | None, ...],
    *,
    sort: str = "sum",
    search: str = DEFAULT_RULE,
    confidence: np.ndarray | None = None,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
    ties: str | None = None,
    depth: int = 2,
    decompose: bool = False,
    kernel: str | None = None,
    executor: str | None = None,
    threads: int | None = None,
    chunk_rows: int | None = None,
    eval_row_ids: np.ndarray | None = None,
    client: Any | None = None,
    n_workers: int = 1,
    bounded: bool = False,
    groups: Sequence[object] | np.ndarray | None = None,
    memory: FitMemory | None = None,
) -> list[SweepResult]:
    """:func:`run_sweep` for one or more samplings; several only for a threshold rule."""
    resolved = [resolve_sampling(s, search) for s in samplings]
    # How a sweep runs does not depend on its sampling; each sampling is checked.
    plans = [
        plan_sweep(
            A_sort,
            search=search,
            sort=sort,
            sampling=s,
            decompose=decompose,
            kernel=kernel,
            executor=executor,
            threads=threads,
            bounded=bounded,
        )
        for s in resolved
    ]
    plan = plans[0]
    check_bounds(seed=seed, depth=depth, threads=threads, chunk_rows=chunk_rows)
    rows_sort = _as_rows(A_sort, "Sort", None)
    rows_eval = _as_rows(A_eval, "evaluated", eval_row_ids)
    if rows_sort.n_rows == 0:
        raise InputError("the Sort set is empty.")
    if rows_eval.n_rows == 0:
        raise InputError("there are no rows to evaluate: every row is in the Sort set.")
    _check_binary(rows_sort, "Sort")
    _check_binary(rows_eval, "evaluated")
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
    if plan.path == "packed-sweep":
        whole_sweep = method_spec(search).load_packed_sweep()
        return [whole_sweep(rows_sort, rows_eval, budgets, seed=seed, progress=progress)]
    # The published rule keeps the published code's tie order (Listing 1), end to end.
    ties = ties or (
        "reference" if method_spec(search).defaults.get("rule") == "reference" else "stable"
    )
    step = plan.chunk_rows(n, chunk_rows)
    config = dict(
        sort=sort,
        sampling=resolved[0],
        search=search,
        seed=seed,
        ties=ties,
        n=n,
        kernel=plan.kernel,
        executor=plan.executor,
    )
    dense_sort = None
    if (
        plan.fit == "packed"
        and plan.sort_step == "streamed"
        and not isinstance(rows_sort, PackedArray)
    ):
        # The packed fit reads every Sort row whole: read them once, for the order too.
        rows_sort = PackedArray(rows_sort.read(0, rows_sort.n_rows), n)
    if plan.sort_step != "streamed":
        what = (
            f"Sort method {sort!r} on the Sort set"
            if sort != "sum"
            else f"fitting {search!r} on the Sort set"
        )
        dense_sort = dense_sort_rows(plan, rows_sort, what)
    # A packed fit reports its own progress: the first half of the bar, scoring the second.
    share = 0.5 if plan.fit == "packed" else 0.0
    total = rows_eval.n_rows + (
        rows_sort.n_rows if plan.path == "threshold" and dense_sort is None else 0
    )
    done = 0

    def advance(rows: int) -> None:
        nonlocal done
        done += rows
        if progress is not None:
            progress(share + (1.0 - share) * min(done / total, 1.0))

    with make_executor(plan.executor, threads=threads, client=client, n_workers=n_workers) as ex:
        # Column sums are exact: any chunking of the Sort rows gives the same order.
        sort_rows = step if plan.path == "threshold" else DEFAULT_CHUNK_ROWS
        order = _order(
            plan, ex, rows_sort, sort_rows, dense_sort, sort, confidence, ties, depth, advance
        )
        if plan.path == "threshold":
            kern = KERNELS[plan.kernel]()
            # Each sampling draws from its own generator in budget order, as its own sweep
            # would; the kernel counts every sampling's positions in one pass over a chunk.
            positions = []
            for s in resolved:
                rng = np.random.default_rng(seed)
                positions.append(tuple(positions_for(s, n, b, rng) for b in budgets))
            spec = kern.spec(
                n, budgets * len(resolved), sum(positions, ()), search, order, decompose
            )
            spans = rows_eval.spans(step)
            parts = ex.map(
                _eval_task,
                rows_eval,
                spans,
                kern,
                spec,
                on_result=lambda i, _: advance(spans[i][1] - spans[i][0]),
            )
            per_models = [
                assemble([_entries_of(p, k, len(resolved)) for p in parts])
                for k in range(len(resolved))
            ]
            # The listing's printed grid evaluates its own number of samples per budget.
            extras: list[dict[str, Any]] = [
                {"evaluated": {int(b): len(p) for b, p in zip(budgets, pos)}} for pos in positions
            ]
        else:
            method = fitted_method(
                search,
                "packed" if plan.fit == "packed" else "dense",
                rows_sort,
                dense_sort,
                order,
                confidence,
                seed=seed,
                progress=None if progress is None else (lambda f: progress(share * f)),
                groups=groups,
                memory=memory,
            )
            rng = np.random.default_rng(seed)
            per_models = [score_method(method, rows_eval, budgets, rng, step, advance)]
            extras = [{}]
    if plan.executor != "serial":
        extras = [
            dict(e, threads=ex.threads if plan.executor == "threads" else threads) for e in extras
        ]
    return [
        SweepResult(summarise(pm), pm, order, dict(config, sampling=s, **extra))
        for s, pm, extra in zip(resolved, per_models, extras)
    ]


def _entries_of(part: dict[str, np.ndarray], k: int, count: int) -> dict[str, np.ndarray]:
    """The ``k``-th of ``count`` samplings' records in one chunk's records.

    A kernel returns its records budget entry by budget entry, in the spec's order (each
    entry's rows together); the samplings' entries were given one sampling after another."""
    size = len(part["model_row"]) // count
    return {key: v[k * size : (k + 1) * size] for key, v in part.items()}


def _order(
    plan: SweepPlan,
    ex: Any,
    rows: RowSource,
    step: int,
    dense: np.ndarray | None,
    sort: str,
    confidence: np.ndarray | None,
    ties: str,
    depth: int,
    advance: Callable[[int], None],
) -> np.ndarray:
    """The Sort order: from the dense Sort rows, or from column sums streamed through the
    plan's Sort kernel and executor."""
    if dense is not None:
        if sort != "sum":
            return compute_order(dense, sort, confidence, ties, depth)
        return order_from_sums(column_sums(dense), ties)
    kern = KERNELS[plan.sort_kernel]()
    sums = ex.total(_sort_task, rows, rows.spans(step), kern)
    if plan.path == "threshold":
        advance(rows.n_rows)
    return order_from_sums(sums, ties)
