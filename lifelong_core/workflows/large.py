"""Pages on a store too large to hold as one dense matrix.

A selection (dataset, domains) whose models x samples matrix exceeds the dense-read limit
(``lifelong_core.limits``; the app sets 64 MB) is never read whole. Its ``A`` is a
:class:`PackedCache`: which rows and columns, with the shape, read on demand:

- sweeps read the Sort rows and a seeded sample of the evaluated models (``scored`` of
  them; the page says how many) as packed bits and run ``run_sweep(..., bounded=True)``
  (the packed engine, or dense blocks within the limit); rows read once are kept for the
  page's other sweeps on them (:func:`held_rows`);
- views that need a dense matrix (the model correlation, the teaching slice, the stream
  study) get a bounded block: a seeded sample of models and as many seeded samples as fit
  in the limit (:func:`bounded_block`), and say so;
- per-model accuracies are popcounts of packed rows (:func:`row_sums`); insert_D is
  fitted from row and column sums (the column sums kept in the store's Sort state).

Touching ``PackedCache`` as an array raises :class:`~lifelong_core.limits.DenseReadError`,
so a dense read of a large store fails loudly instead of filling the memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn
from weakref import WeakKeyDictionary

import numpy as np

from lifelong_core import limits
from lifelong_core.rows import RowSource
from lifelong_core.store.dataset_rows import read_rows

if TYPE_CHECKING:
    from lifelong_core.store import Store
    from lifelong_core.sweeping import SweepResult

DEFAULT_SCORED = 200


@dataclass(frozen=True, eq=False)
class PackedCache:
    """Stand-in for the dense matrix of a large selection: ``model_idx`` (rows) x ``sidx``
    (columns) of the store, read as packed bits on demand.

    It has the ``shape``, ``ndim`` and ``len`` of the matrix it stands for, so code that
    only sizes a selection works unchanged; reading it as an array (``np.asarray``,
    indexing) raises :class:`~lifelong_core.limits.DenseReadError` instead of filling the
    memory. Rows are read with :func:`packed_rows`, :func:`row_sums`, :func:`source`,
    :func:`bounded_block` and :func:`dense_rows`.

    Attributes
    ----------
    model_idx : numpy.ndarray of int64, shape (m,)
        The store's ``model_idx`` of each row, in row order.
    sidx : numpy.ndarray of int64, shape (n,)
        The store's ``sample_idx`` of each column, in column order.
    """

    model_idx: np.ndarray
    sidx: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """``(models, samples)`` of the matrix it stands for."""
        return len(self.model_idx), len(self.sidx)

    ndim = 2

    def __len__(self) -> int:
        return len(self.model_idx)

    def _refuse(self) -> NoReturn:
        m, n = self.shape
        limits.check_dense(m, n, 1, "this view's dense matrix")
        raise limits.DenseReadError(
            f"the {m:,} x {n:,} cache is read as packed blocks; dense access is refused."
        )

    def __array__(self, dtype: object = None, copy: object = None) -> NoReturn:
        self._refuse()

    def __getitem__(self, key: object) -> NoReturn:
        self._refuse()


def is_large(m: int, n: int) -> bool:
    return not limits.fits(m, n, 1)


def packed_rows(store: Store, A: PackedCache, rows: np.ndarray | Sequence[int]) -> np.ndarray:
    """Packed bits of rows ``rows`` (positions in ``A``) on ``A``'s columns."""
    return read_rows(store, A.model_idx[np.asarray(rows, dtype=np.int64)], A.sidx)


class StoreSource(RowSource):
    """Rows ``model_idx`` of a store on samples ``sidx``, read chunk by chunk as packed bits
    (``store.dataset_rows.read_rows``). ``row_ids`` label the rows in results (default:
    positions). Holds an open store handle: for use within one process."""

    def __init__(
        self, st: Store, model_idx: np.ndarray, sidx: np.ndarray, row_ids: np.ndarray | None = None
    ) -> None:
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
        return read_rows(self.st, self.model_idx[start:stop], self.sidx)


# Packed rows a large selection keeps after a sweep read them, for the page's other sweeps
# on the same rows (the default estimator, the baselines beside it, a tab's threshold
# rule, another page's budgets): at most this many bytes per selection, the least recently
# used dropped first. A selection read again (the store changed) starts afresh.
HELD_BYTES = 256 << 20
_HELD: WeakKeyDictionary[PackedCache, OrderedDict[bytes, np.ndarray]] = WeakKeyDictionary()
_HELD_LOCK = threading.Lock()


class HeldRows(RowSource):
    """Packed rows held in memory, labelled ``row_ids`` (:func:`held_rows`)."""

    def __init__(self, packed: np.ndarray, n: int, row_ids: np.ndarray) -> None:
        self.packed = packed
        self.n = int(n)
        self.row_ids = np.asarray(row_ids, dtype=np.int64)

    def read(self, start: int, stop: int) -> np.ndarray:
        return self.packed[start:stop]


def held_rows(
    store: Store,
    A: PackedCache,
    rows: np.ndarray | Sequence[int],
    row_ids: np.ndarray | None = None,
) -> HeldRows:
    """Rows ``rows`` (positions in ``A``) as a source in memory, read from the store the
    first time any sweep of this selection asks for exactly these rows (:data:`HELD_BYTES`).

    Parameters
    ----------
    store : Store
        The open store ``A`` was selected from.
    A : PackedCache
        The large selection's matrix.
    rows : array_like of int
        Row positions in ``A``.
    row_ids : array_like of int, optional
        The rows' labels in results (default: ``rows``).

    Returns
    -------
    HeldRows
        Read-only packed rows.
    """
    rows = np.asarray(rows, dtype=np.int64)
    key = rows.tobytes()
    with _HELD_LOCK:
        kept = _HELD.setdefault(A, OrderedDict())
        P = kept.get(key)
        if P is not None:
            kept.move_to_end(key)
    if P is None:
        P = packed_rows(store, A, rows)
        P.flags.writeable = False
        with _HELD_LOCK:
            kept[key] = P
            while len(kept) > 1 and sum(x.nbytes for x in kept.values()) > HELD_BYTES:
                kept.popitem(last=False)
    return HeldRows(P, A.shape[1], rows if row_ids is None else row_ids)


def source(
    store: Store,
    A: PackedCache,
    rows: np.ndarray | Sequence[int],
    row_ids: np.ndarray | None = None,
) -> StoreSource:
    """A packed row source (positions ``rows`` of ``A``) for the packed engine and fits."""
    rows = np.asarray(rows, dtype=np.int64)
    return StoreSource(store, A.model_idx[rows], A.sidx, rows if row_ids is None else row_ids)


def row_sums(
    store: Store,
    A: PackedCache,
    rows: np.ndarray | Sequence[int] | None = None,
    progress: Callable[[float], object] | None = None,
) -> np.ndarray:
    """Number of correct samples of every row (or of ``rows``), from packed popcounts."""
    rows = np.arange(len(A)) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.empty(len(rows), dtype=np.int64)
    step = int(max(8, min(4096, (64 << 20) // max(1, (A.shape[1] + 7) // 8))))
    for a in range(0, len(rows), step):
        P = packed_rows(store, A, rows[a : a + step])
        out[a : a + step] = np.bitwise_count(P).sum(axis=1, dtype=np.int64)  # padding bits are zero
        if progress is not None:
            progress(min(1.0, (a + step) / len(rows)))
    return out


def sweep(
    store: Store,
    A: PackedCache,
    sort_rows: np.ndarray | Sequence[int],
    eval_rows: np.ndarray | Sequence[int],
    budgets: Sequence[int],
    *,
    scored: int,
    **options: Any,
) -> SweepResult:
    """A sweep on packed rows: Sort on ``sort_rows``, score a seeded sample of at most
    ``scored`` of ``eval_rows`` (positions in ``A``; results labelled by them).
    ``options`` (sort, sampling, search, seed, decompose, progress) go to
    ``run_sweep(..., bounded=True)``."""
    from lifelong_core.errors import InputError
    from lifelong_core.sweeping import run_sweep

    if options.get("sort") == "confidence":
        raise InputError(
            "Sorting by confidence reads the Sort set's confidences whole, which this large store does "
            "not allow here; use the command line, or Sorting by Sum."
        )
    ev = np.asarray(eval_rows, dtype=np.int64)
    if len(ev) > scored:
        seed = options.get("seed", 0)
        ev = np.sort(np.random.default_rng([seed, 13]).choice(ev, scored, replace=False))

    def rows_of(at: np.ndarray) -> RowSource:
        # Rows that fit in what a selection keeps are held; more are read chunk by chunk.
        fits = len(at) * ((A.shape[1] + 7) // 8) <= HELD_BYTES
        return held_rows(store, A, at) if fits else source(store, A, at)

    return run_sweep(
        rows_of(np.asarray(sort_rows, dtype=np.int64)),
        rows_of(ev),
        budgets,
        bounded=True,
        **options,
    )


@dataclass(frozen=True)
class Block:
    """A dense, bounded block of a large selection: rows and columns are positions in it."""

    A: np.ndarray
    rows: np.ndarray
    cols: np.ndarray

    def note(self, shape: tuple[int, int]) -> str:
        m, n = shape
        parts = []
        if len(self.rows) < m:
            parts.append(f"{len(self.rows):,} of the {m:,} models")
        if len(self.cols) < n:
            parts.append(f"{len(self.cols):,} of the {n:,} samples")
        return (
            (
                "This store is too large to show here whole: this view uses a seeded sample of "
                + " and ".join(parts)
                + " (the command line uses all)."
            )
            if parts
            else ""
        )


def bounded_block(
    store: Store,
    A: PackedCache,
    max_models: int,
    seed: int,
    rows: np.ndarray | Sequence[int] | None = None,
) -> Block:
    """A dense block small enough to hold: up to ``max_models`` rows (``rows`` if given,
    else a seeded sample in store order) and as many seeded columns (ascending) as keep the
    block within the dense-read limit.

    The views that need a dense matrix (model correlation, teaching slice, stream study)
    use it on a large store and show :meth:`Block.note` to say they saw a sample.

    Parameters
    ----------
    store : Store
        The open store ``A`` was selected from.
    A : PackedCache
        The large selection's matrix.
    max_models : int
        The most rows to take when ``rows`` is not given.
    seed : int
        Seeds the sample of rows and of columns (the same seed gives the same block).
    rows : array_like of int, optional
        Row positions in ``A`` to take, in the order given (all of them, whatever
        ``max_models``).

    Returns
    -------
    Block
        ``A``: the dense uint8 block (rows x columns); ``rows`` and ``cols``: the
        positions in ``A`` it holds. At least two columns are kept, even beyond the limit.
    """
    m, n = A.shape
    if rows is None:
        rows = (
            np.arange(m)
            if m <= max_models
            else np.sort(np.random.default_rng([seed, 17]).choice(m, max_models, replace=False))
        )
    rows = np.asarray(rows, dtype=np.int64)
    limit = limits.dense_limit()
    width = n if limit is None else int(max(2, min(n, limit // max(1, len(rows)))))
    cols = (
        np.arange(n)
        if width >= n
        else np.sort(np.random.default_rng([seed, 19]).choice(n, width, replace=False))
    )
    dense = np.empty((len(rows), len(cols)), dtype=np.uint8)
    step = limits.block_rows(n)
    for a in range(0, len(rows), step):
        P = packed_rows(store, A, rows[a : a + step])
        dense[a : a + step] = np.unpackbits(P, axis=1, count=n, bitorder="little")[:, cols]
    return Block(dense, rows, cols)


def dense_rows(
    store: Store, A: PackedCache, rows: np.ndarray | Sequence[int], cols: np.ndarray | Sequence[int]
) -> np.ndarray:
    """A small dense sub-block of ``A``, read from packed rows.

    Parameters
    ----------
    store : Store
        The open store ``A`` was selected from.
    A : PackedCache
        The large selection's matrix.
    rows : int or array_like of int
        Row positions in ``A``.
    cols : array_like of int
        Column positions in ``A``.

    Returns
    -------
    numpy.ndarray of uint8, shape (len(rows), len(cols))
        The 0/1 entries.

    Raises
    ------
    lifelong_core.limits.DenseReadError
        If the block would exceed the dense-read limit.
    """
    rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
    cols = np.asarray(cols, dtype=np.int64)
    limits.check_dense(len(rows), len(cols), 1, "a dense sub-block")
    P = packed_rows(store, A, rows)
    out = np.empty((len(rows), len(cols)), dtype=np.uint8)
    step = limits.block_rows(A.shape[1])
    for a in range(0, len(rows), step):
        out[a : a + step] = np.unpackbits(
            P[a : a + step], axis=1, count=A.shape[1], bitorder="little"
        )[:, cols]
    return out
