"""The packed sweep as dask tasks: the same chunk functions on an existing engine.

When a cache outgrows one machine the chunks of :mod:`lifelong_core.packed.chunks` run
as ``dask.distributed`` tasks instead of a home-made scheduler (docs/SCALING.md):

- Sort: one task per chunk of Sort rows reads its rows and returns column sums (map);
  the partial sums are added pairwise on the workers (tree reduction) and only the final
  n-vector reaches the client, which orders it (Listing 1 ``sort_by_sum``).
- Search: the plan and the order are broadcast once; one task per chunk of evaluated
  rows reads its rows and returns that chunk's per-(model, budget) records (map); the
  client concatenates them and summarises per budget (reduction).

Tasks read their own rows from the source (a store path, a matrix file; an in-memory
array is handed over by reference on a threads-only local cluster), so no matrix passes
through the client. Results are identical to :func:`run_sweep_packed` and hence to the
engine's ``run_sweep``. dask is optional: it is imported only when this engine runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.packed.chunks import EvalSpec, eval_chunk, finish, sort_sums_chunk
from lifelong_core.packed.sweep import prepare
from lifelong_core.rows import DEFAULT_CHUNK_ROWS, RowSource
from lifelong_core.sortsearch.search import DEFAULT_RULE
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.sortsearch.sweep import SweepResult


def _distributed():
    try:
        import dask.distributed as dd
    except ImportError:
        raise InputError(
            "the dask engine needs the optional package dask[distributed]; install it with "
            "pip install 'dask[distributed]' or use the default numpy engine."
        ) from None
    return dd


def _sort_task(source: RowSource, start: int, stop: int) -> np.ndarray:
    return sort_sums_chunk(source.read(start, stop), source.n)


def _eval_task(source: RowSource, start: int, stop: int, spec: EvalSpec) -> dict[str, np.ndarray]:
    return eval_chunk(source.read(start, stop), source.row_ids[start:stop], spec)


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + b


def run_sweep_dask(
    A_sort,
    A_eval,
    budgets: Sequence[int] | None = None,
    *,
    sort: str = "sum",
    sampling: str | None = None,
    search: str = DEFAULT_RULE,
    seed: int = 0,
    ties: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    client=None,
    n_workers: int = 1,
    threads_per_worker: int = 2,
    progress: Callable[[float], None] | None = None,
) -> SweepResult:
    """:func:`~lifelong_core.packed.sweep.run_sweep_packed` with dask tasks as the map steps.

    ``client``: an existing ``dask.distributed.Client`` (a real cluster); without one a
    threads-only ``LocalCluster`` of ``n_workers`` x ``threads_per_worker`` is started and
    closed around the run. Sources must be readable where the workers run.
    """
    A_sort, A_eval, budgets, ties, sampling = prepare(A_sort, A_eval, budgets, sort, sampling, search, ties, chunk_rows)
    n = A_sort.n
    dd = _distributed()
    own = client is None
    cluster = None
    if own:
        cluster = dd.LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker, processes=False,
                                  dashboard_address=None)
        client = dd.Client(cluster)
    try:
        result = _run(dd, client, A_sort, A_eval, n, budgets, sampling, search, seed, ties, chunk_rows, progress)
    finally:
        if own:
            _close_quietly(client, cluster)
    return result


def _close_quietly(client, cluster) -> None:
    # A worker heartbeat racing the shutdown of a local cluster logs a harmless
    # CommClosedError traceback; the run is over, so keep stderr to real problems.
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        client.close()
        cluster.close()
    finally:
        log.setLevel(level)


def _run(dd, client, A_sort, A_eval, n, budgets, sampling, search, seed, ties, chunk_rows, progress) -> SweepResult:
    total = A_sort.n_rows + A_eval.n_rows
    # Sources travel once per worker; tasks refer to them (pure=False: no hashing of data).
    src_sort, src_eval = client.scatter([A_sort, A_eval], broadcast=True, hash=False)
    spans = A_sort.spans(chunk_rows)
    level = client.map(_sort_task, [src_sort] * len(spans), [s for s, _ in spans], [e for _, e in spans], pure=False)
    while len(level) > 1:
        nxt = [client.submit(_add, level[i], level[i + 1], pure=False) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    sums = level[0].result()
    del level
    order = order_from_sums(sums, ties)
    if progress is not None:
        progress(A_sort.n_rows / total)
    [spec] = client.scatter([EvalSpec.build(n, budgets, sampling, search, order, seed)], broadcast=True, hash=False)
    spans = A_eval.spans(chunk_rows)
    futures = client.map(_eval_task, [src_eval] * len(spans), [s for s, _ in spans], [e for _, e in spans],
                         [spec] * len(spans), pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    parts: list = [None] * len(futures)
    done = A_sort.n_rows
    for fut in dd.as_completed(futures):
        i = index[fut.key]
        parts[i] = fut.result()
        done += spans[i][1] - spans[i][0]
        if progress is not None:
            progress(done / total)
    config = dict(sort="sum", sampling=sampling, search=search, seed=seed, ties=ties, n=n, engine="dask")
    return finish(parts, order, config)
