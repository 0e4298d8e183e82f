"""Where a sweep's chunk tasks run: in the calling thread, a thread pool, or dask.

Every executor maps a task ``fn(source, start, stop, *args)`` over spans of a
:class:`~lifelong_core.rows.RowSource` and returns the results in span order; the task
reads its own rows, so with dask no matrix passes through the client. Executors are
context managers (the pool or cluster lives for one sweep).

- ``serial``: one chunk after the other in the calling thread.
- ``threads``: a pool of ``threads`` workers; at most ``threads + 1`` chunks are in
  flight, so memory stays bounded. numpy releases the GIL inside every kernel, so this
  uses all cores without copying data between processes.
- ``dask``: ``dask.distributed`` tasks (docs/SCALING.md) on an existing ``client`` (a
  real cluster; sources must be readable where the workers run) or on a threads-only
  local cluster started and closed around the sweep. Sums (the Sort step) are added
  pairwise on the workers (a tree reduction), so only the final n-vector reaches the
  client. dask is optional: it is imported only when this executor runs.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.rows import RowSource

EXECUTORS = ("serial", "threads", "dask")

Task = Callable[..., object]
OnResult = Callable[[int, object], None] | None


def default_threads() -> int:
    """All cores, at most 8 (beyond that the memory bandwidth, not the cores, limits)."""
    return max(1, min(os.cpu_count() or 1, 8))


class SerialExecutor:
    name = "serial"

    def __enter__(self) -> SerialExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def _ordered(
        self, fn: Task, source: RowSource, spans: Sequence[tuple[int, int]], args: tuple
    ) -> Iterator:
        for s, e in spans:
            yield fn(source, s, e, *args)

    def map(
        self,
        fn: Task,
        source: RowSource,
        spans: Sequence[tuple[int, int]],
        *args: Any,
        on_result: OnResult = None,
    ) -> list:
        out = []
        for part in self._ordered(fn, source, spans, args):
            out.append(part)
            if on_result is not None:
                on_result(len(out) - 1, part)
        return out

    def total(
        self, fn: Task, source: RowSource, spans: Sequence[tuple[int, int]], *args: Any
    ) -> np.ndarray:
        """The sum of the task results (int arrays), added up as they arrive."""
        acc: np.ndarray | None = None
        for part in self._ordered(fn, source, spans, args):
            acc = np.asarray(part) if acc is None else acc + part
        if acc is None:
            raise InputError("there are no rows to add up.")
        return acc


class ThreadExecutor(SerialExecutor):
    name = "threads"

    def __init__(self, threads: int | None = None):
        self.threads = threads or default_threads()
        if self.threads < 1:
            raise InputError(f"threads must be at least 1, got {self.threads}.", param="threads")

    def __enter__(self) -> ThreadExecutor:
        self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="sweep")
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown()

    def _ordered(
        self, fn: Task, source: RowSource, spans: Sequence[tuple[int, int]], args: tuple
    ) -> Iterator:
        pending: deque = deque()
        for s, e in spans:
            pending.append(self._pool.submit(fn, source, s, e, *args))
            if len(pending) > self.threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _distributed() -> Any:
    try:
        import dask.distributed as dd
    except ImportError:
        raise InputError(
            "the dask executor needs the optional package dask[distributed]; install it with "
            "pip install 'dask[distributed]' or use the threads executor.",
            param="executor",
        ) from None
    return dd


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + b


class DaskExecutor:
    name = "dask"

    def __init__(self, client: Any | None = None, n_workers: int = 1, threads_per_worker: int = 2):
        self.client = client
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker

    def __enter__(self) -> DaskExecutor:
        self._dd = _distributed()
        self._cluster = None
        if self.client is None:
            self._cluster = self._dd.LocalCluster(
                n_workers=self.n_workers,
                threads_per_worker=self.threads_per_worker,
                processes=False,
                dashboard_address=None,
            )
            self._client = self._dd.Client(self._cluster)
        else:
            self._client = self.client
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cluster is None:
            return
        # A worker heartbeat racing the shutdown of a local cluster logs a harmless
        # CommClosedError traceback; the run is over, so keep stderr to real problems.
        log = logging.getLogger("distributed")
        level = log.level
        log.setLevel(logging.CRITICAL)
        try:
            self._client.close()
            self._cluster.close()
        finally:
            log.setLevel(level)

    def _submit(
        self, fn: Task, source: RowSource, spans: Sequence[tuple[int, int]], args: tuple
    ) -> list:
        client = self._client
        # Sources and arguments travel once per worker; tasks refer to them (pure=False:
        # no hashing of data).
        [src, *shared] = client.scatter([source, *args], broadcast=True, hash=False)
        return client.map(
            fn,
            [src] * len(spans),
            [s for s, _ in spans],
            [e for _, e in spans],
            *[[a] * len(spans) for a in shared],
            pure=False,
        )

    def map(
        self,
        fn: Task,
        source: RowSource,
        spans: Sequence[tuple[int, int]],
        *args: Any,
        on_result: OnResult = None,
    ) -> list:
        futures = self._submit(fn, source, spans, args)
        index = {f.key: i for i, f in enumerate(futures)}
        out: list = [None] * len(futures)
        for fut in self._dd.as_completed(futures):
            i = index[fut.key]
            out[i] = fut.result()
            if on_result is not None:
                on_result(i, out[i])
        return out

    def total(
        self, fn: Task, source: RowSource, spans: Sequence[tuple[int, int]], *args: Any
    ) -> np.ndarray:
        level = self._submit(fn, source, spans, args)
        while len(level) > 1:
            nxt = [
                self._client.submit(_add, level[i], level[i + 1], pure=False)
                for i in range(0, len(level) - 1, 2)
            ]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0].result()


def make_executor(
    name: str, *, threads: int | None = None, client: Any | None = None, n_workers: int = 1
) -> Any:
    """The executor called ``name``; ``threads`` sizes the pool (threads) or each dask worker."""
    if name == "serial":
        return SerialExecutor()
    if name == "threads":
        return ThreadExecutor(threads)
    if name == "dask":
        return DaskExecutor(client, n_workers, threads or 2)
    raise InputError(
        f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}.", param="executor"
    )
