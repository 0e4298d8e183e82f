"""Budget sweep of insert_M (seed 001 §4.2) on packed rows, using both cores.

Same contract and numbers as the engine's ``run_sweep`` for Sorting by Sum and the
threshold rules (``midpoint``, ``reference``); it departs only in how it gets there:
rows stay packed 8 per byte, are read a chunk at a time from any :class:`RowSource`
(memory, a packed ``.npy`` memmap, the DuckDB store), and chunks are processed by a
thread pool (numpy releases the GIL inside every kernel). At most ``threads + 1`` chunks
are in flight, so peak memory is a few chunks whatever the matrix size. The chunk
functions are those of :mod:`lifelong_core.packed.chunks`, shared with the dask engine.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.packed.chunks import EvalSpec, eval_chunk, finish, sort_sums_chunk
from lifelong_core.rows import DEFAULT_CHUNK_ROWS, RowSource, as_source
from lifelong_core.sortsearch.methods import is_threshold_rule
from lifelong_core.sortsearch.search import DEFAULT_RULE, SAMPLING, resolve_sampling
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.sortsearch.sweep import SweepResult, check_budgets, power_budgets


def default_threads() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def check_config(sort: str, sampling: str, search: str) -> None:
    """The packed engines serve Sorting by Sum and the threshold rules only."""
    if sort != "sum":
        raise InputError(f"the packed engine sorts by sum only; sort {sort!r} needs the default dense engine.",
                         param="sort")
    if sampling not in SAMPLING:
        raise InputError(f"unknown sampling {sampling!r}; use one of {', '.join(SAMPLING)}.")
    if not is_threshold_rule(search):
        raise InputError(
            f"the packed engine runs the threshold rules only; search {search!r} needs the default dense engine.",
            param="search",
        )


def _pipelined(items: Iterable, submit: Callable[[object], Future], window: int):
    """Submit ``items`` (produced lazily, e.g. read from disk) keeping at most ``window``
    futures in flight; yield results in submission order."""
    pending: deque[Future] = deque()
    for item in items:
        pending.append(submit(item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def sort_order(A_sort: RowSource, ties: str, pool: ThreadPoolExecutor, window: int, chunk_rows: int) -> np.ndarray:
    """Sorting by Sum (Listing 1 ``sort_by_sum``) over packed chunks: sums added up, then ordered."""
    sums = np.zeros(A_sort.n, dtype=np.int64)
    for part in _pipelined(A_sort.chunks(chunk_rows), lambda c: pool.submit(sort_sums_chunk, c[1], A_sort.n), window):
        sums += part
    return order_from_sums(sums, ties)


def prepare(A_sort, A_eval, budgets, sort: str, sampling: str, search: str, ties: str | None, chunk_rows: int):
    """Checks and defaults shared by the packed engines: sources, budgets, tie rule."""
    sampling = resolve_sampling(sampling, search)
    check_config(sort, sampling, search)
    A_sort = as_source(A_sort, "Sort")
    A_eval = as_source(A_eval, "evaluated")
    if A_sort.n_rows == 0:
        raise InputError("the Sort set is empty.")
    if A_eval.n_rows == 0:
        raise InputError("there are no rows to evaluate: every row is in the Sort set.")
    if A_eval.n != A_sort.n:
        raise InputError(f"the evaluated rows have {A_eval.n} samples but the Sort rows have {A_sort.n}.")
    if chunk_rows < 1:
        raise InputError(f"chunk_rows must be at least 1, got {chunk_rows}.")
    budgets = check_budgets(power_budgets(A_sort.n) if budgets is None else budgets, A_sort.n)
    return A_sort, A_eval, budgets, ties or ("reference" if search == "reference" else "stable"), sampling


def run_sweep_packed(
    A_sort,
    A_eval,
    budgets: Sequence[int] | None = None,
    *,
    sort: str = "sum",
    sampling: str | None = None,
    search: str = DEFAULT_RULE,
    seed: int = 0,
    ties: str | None = None,
    threads: int | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[float], None] | None = None,
) -> SweepResult:
    """Sort on ``A_sort``, search every row of ``A_eval`` at every budget, score it.

    ``A_sort``/``A_eval`` are :class:`~lifelong_core.rows.RowSource` objects
    (or dense 0/1 arrays, which are packed first). Arguments mean what they mean for
    ``lifelong_core.sortsearch.run_sweep``; ``ties`` defaults to ``"reference"`` for
    ``search="reference"`` and ``"stable"`` otherwise, as there. ``per_model.model_row``
    holds ``A_eval.row_ids``. ``progress(fraction)`` is called from the calling thread.
    """
    A_sort, A_eval, budgets, ties, sampling = prepare(A_sort, A_eval, budgets, sort, sampling, search, ties, chunk_rows)
    n = A_sort.n
    threads = threads or default_threads()
    window = threads + 1
    total = A_sort.n_rows + A_eval.n_rows
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="packed-sweep") as pool:
        order = sort_order(A_sort, ties, pool, window, chunk_rows)
        if progress is not None:
            progress(A_sort.n_rows / total)
        spec = EvalSpec.build(n, budgets, sampling, search, order, seed)
        parts = []
        done = A_sort.n_rows
        for rec in _pipelined(A_eval.chunks(chunk_rows), lambda c: pool.submit(eval_chunk, c[1], c[0], spec), window):
            parts.append(rec)
            done += len(rec["model_row"]) // len(budgets)
            if progress is not None:
                progress(done / total)
    config = dict(sort=sort, sampling=sampling, search=search, seed=seed, ties=ties, n=n, engine="packed", threads=threads)
    return finish(parts, order, config)
