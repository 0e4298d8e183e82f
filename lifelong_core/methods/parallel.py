"""Independent pieces of an estimator's work on a few threads, results in order.

The item model's fits and a sweep's scoring split into pieces that share nothing: column
chunks of the fit, the folds of the cross-validation, the budgets' ability fits, chunks of
items. Each piece is a handful of large array operations, during which numpy releases the
interpreter lock, so two threads use two cores. Results come back in the order of the
pieces and are combined in that order, so the numbers are those of a serial run, bit for
bit, whatever the number of threads. BLAS is kept to one thread meanwhile.

``LBE_THREADS`` sets the number of threads (1 turns this off); by default, the machine's
cores, at most :data:`MAX_THREADS`.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

ENV = "LBE_THREADS"
MAX_THREADS = 4

_LOCK = threading.Lock()
_STATE: dict = {"controller": None, "users": 0, "limit": None}


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread while any caller, in any thread, is inside.

    The first one in sets the limit and the last one out lifts it, so that concurrent
    work (the app's sessions) never has it lifted under it; the controller is made once.

    Yields
    ------
    None
    """
    with _LOCK:
        if _STATE["controller"] is None:
            from threadpoolctl import ThreadpoolController

            _STATE["controller"] = ThreadpoolController()
        if _STATE["users"] == 0:
            _STATE["limit"] = _STATE["controller"].limit(limits=1, user_api="blas")
        _STATE["users"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["users"] -= 1
            if _STATE["users"] == 0:
                _STATE["limit"].restore_original_limits()
                _STATE["limit"] = None


# glibc's allocator options (mallopt): M_TRIM_THRESHOLD and M_MMAP_THRESHOLD.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
KEEP_BYTES = 32 << 20  # glibc's largest mmap threshold


def keep_freed_memory() -> bool:
    """Let the C allocator keep freed blocks of up to 32 MB for reuse instead of handing
    them back to the system at once (glibc only; elsewhere nothing changes).

    The estimators' chunked passes allocate and free arrays of one to a few megabytes
    thousands of times; by default glibc returns each to the system and the next one is
    faulted in again page by page, which costs more than the arithmetic on it. Kept for
    reuse, the process's peak memory stays the same (the blocks are reused, not added).
    For a long-running process: the served app calls it at start-up.

    Returns
    -------
    bool
        Whether the allocator took the settings.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(
        mallopt(_M_MMAP_THRESHOLD, KEEP_BYTES) and mallopt(_M_TRIM_THRESHOLD, 2 * KEEP_BYTES)
    )


def threads() -> int:
    """How many threads :func:`ordered_map` uses: ``LBE_THREADS``, else the cores (at most
    :data:`MAX_THREADS`).

    Returns
    -------
    int
        At least 1.
    """
    raw = os.environ.get(ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return min(int(raw), 64)
    return max(1, min(os.cpu_count() or 1, MAX_THREADS))


def ordered_map(
    fn: Callable[[T], R], pieces: Iterable[T], after: Callable[[R], None] | None = None
) -> list[R]:
    """``[fn(p) for p in pieces]``, on :func:`threads` threads.

    Parameters
    ----------
    fn : callable
        The work on one piece; pieces must not write to the same memory.
    pieces : iterable
        The pieces.
    after : callable, optional
        Called with each result, in order, in the calling thread (e.g. to add it up, or
        to move a progress bar, which only the calling thread may).

    Returns
    -------
    list
        ``fn`` of each piece, in the order of ``pieces``.
    """
    pieces = list(pieces)
    n = min(threads(), len(pieces))
    out: list[R] = []
    # One BLAS thread whatever the number of threads here: BLAS's own threads on these
    # small products cost more than they give (far more on busy cores), and they would
    # make the rounding depend on the number of threads.
    with one_blas_thread():
        if n <= 1:
            results: Iterable[R] = map(fn, pieces)
        else:
            pool = ThreadPoolExecutor(n)
            results = pool.map(fn, pieces)
        try:
            for r in results:
                out.append(r)
                if after is not None:
                    after(r)
        finally:
            if n > 1:
                pool.shutdown(cancel_futures=True)
    return out
