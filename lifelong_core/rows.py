"""Row sources: rows of the cache matrix A handed out a chunk at a time.

One interface, :class:`RowSource`, for every place rows come from, so the sweep engine
never asks where they live: ``n`` samples, ``row_ids`` (the labels of the rows in
results, in order), and two ways to read consecutive positions of ``row_ids``:

- :meth:`RowSource.read` -> packed rows in the layout of :mod:`lifelong_core.bits`
  (what the packed kernel wants; the store's blobs arrive this way);
- :meth:`RowSource.read_dense` -> uint8 0/1 rows (what the dense kernel and the
  search-method protocol want; an in-memory array or a ``.npy`` file arrive this way).

Each source implements the read its data is stored in and gets the other by packing or
unpacking. Implementations: :class:`DenseRows` (a 0/1 array in memory),
:class:`PackedArray` (packed rows in memory or a memmap of a packed ``.npy``),
:class:`MatrixRows` (a 0/1 matrix file, ``.npy`` streamed from disk) and the store's
``lifelong_core.store.StoreRows``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lifelong_core.bits import pack_rows, packed_width, unpack_rows
from lifelong_core.errors import InputError
from lifelong_core.io.matrix import open_matrix

# Rows per chunk: 256 packed rows of the paper's 1.7M samples are 54 MB, and the chunk's
# int32 counts at ~200K cuts another 200 MB; a few chunks in flight stay far below the
# 12 GB budget while per-chunk Python overhead stays negligible.
DEFAULT_CHUNK_ROWS = 256


class RowSource:
    """Rows of A handed out in chunks: ``n`` samples, ``row_ids`` in order.

    Subclasses implement :meth:`read` or :meth:`read_dense` (or both); each default
    converts the other. ``chunks(rows)`` / ``dense_chunks(rows)`` yield ``(row_ids,
    rows)`` for consecutive runs of positions.
    """

    n: int
    row_ids: np.ndarray

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if cls.read is RowSource.read and cls.read_dense is RowSource.read_dense:
            raise TypeError(f"{cls.__name__} must implement read or read_dense")

    @property
    def n_rows(self) -> int:
        """Number of rows the source serves (``len(row_ids)``)."""
        return len(self.row_ids)

    def read(self, start: int, stop: int) -> np.ndarray:
        """Packed rows of ``row_ids[start:stop]``.

        Parameters
        ----------
        start, stop : int
            Positions in ``row_ids`` (not row labels).

        Returns
        -------
        numpy.ndarray
            uint8 (stop - start, ceil(n/8)), little bit order, zero padding.
        """
        return pack_rows(self.read_dense(start, stop))

    def read_dense(self, start: int, stop: int) -> np.ndarray:
        """0/1 rows of ``row_ids[start:stop]``.

        Parameters
        ----------
        start, stop : int
            Positions in ``row_ids`` (not row labels).

        Returns
        -------
        numpy.ndarray
            uint8 (stop - start, n).
        """
        return unpack_rows(self.read(start, stop), self.n)

    def spans(self, rows: int = DEFAULT_CHUNK_ROWS) -> list[tuple[int, int]]:
        """Consecutive ``(start, stop)`` runs of positions covering every row.

        Parameters
        ----------
        rows : int
            Rows per run (the last run may be shorter).

        Returns
        -------
        list of tuple of int
        """
        return [(s, min(s + rows, self.n_rows)) for s in range(0, self.n_rows, rows)]

    def chunks(self, rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Packed rows in runs of ``rows``, each with its row labels.

        Parameters
        ----------
        rows : int
            Rows per chunk.

        Yields
        ------
        tuple of numpy.ndarray
            ``(row_ids of the chunk, packed rows)``.
        """
        for s, e in self.spans(rows):
            yield self.row_ids[s:e], self.read(s, e)

    def dense_chunks(self, rows: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """0/1 rows in runs of ``rows``, each with its row labels.

        Parameters
        ----------
        rows : int
            Rows per chunk.

        Yields
        ------
        tuple of numpy.ndarray
            ``(row_ids of the chunk, uint8 0/1 rows)``.
        """
        for s, e in self.spans(rows):
            yield self.row_ids[s:e], self.read_dense(s, e)


def _check_rows(rows: ArrayLike, m: int, what: str) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= m)):
        raise InputError(f"row indices must lie in [0, {m}){what}.")
    return rows


class DenseRows(RowSource):
    """A uint8 0/1 matrix in memory (not re-validated).

    Parameters
    ----------
    A : numpy.ndarray
        (rows, n) 0/1 matrix.
    row_ids : numpy.ndarray, optional
        Labels of its rows in results (default 0..m-1).

    Raises
    ------
    InputError
        If ``A`` is not 2-dimensional or ``row_ids`` does not have one label per row.
    """

    def __init__(self, A: np.ndarray, row_ids: np.ndarray | None = None) -> None:
        A = np.asarray(A)
        if A.ndim != 2:
            raise InputError(f"the matrix must be 2-dimensional, got {A.ndim} dimensions.")
        self.A = A
        self.n = int(A.shape[1])
        self.row_ids = (
            np.arange(A.shape[0], dtype=np.int64)
            if row_ids is None
            else np.asarray(row_ids, dtype=np.int64)
        )
        if len(self.row_ids) != A.shape[0]:
            raise InputError(
                f"{len(self.row_ids)} row labels were given for a matrix of {A.shape[0]} rows."
            )

    def read_dense(self, start: int, stop: int) -> np.ndarray:
        return self.A[start:stop]


class PackedArray(RowSource):
    """Packed rows held in memory (or a read-only memmap of a packed ``.npy``).

    Parameters
    ----------
    packed : numpy.ndarray
        ``uint8`` rows packed with ``np.packbits(..., axis=1, bitorder="little")``.
    n : int
        The number of samples (bits) per row.
    rows : numpy.ndarray, optional
        Rows to serve, in order; results are labelled with these original row numbers.

    Raises
    ------
    InputError
        If ``packed`` is not 2-dimensional uint8, or its width does not fit ``n``.
    """

    def __init__(self, packed: np.ndarray, n: int, rows: np.ndarray | None = None) -> None:
        packed = np.asarray(packed) if not isinstance(packed, np.memmap) else packed
        if packed.ndim != 2 or packed.dtype != np.uint8:
            raise InputError("packed rows must be a 2-dimensional uint8 array.")
        if packed.shape[1] != packed_width(n):
            raise InputError(
                f"packed rows have {packed.shape[1]} bytes but {n} samples need {packed_width(n)}."
            )
        self.packed = packed
        self.n = int(n)
        if rows is None:
            self.row_ids = np.arange(packed.shape[0], dtype=np.int64)
        else:
            self.row_ids = _check_rows(rows, packed.shape[0], "")
        self._contiguous = rows is None or (
            self.row_ids.size > 0 and np.all(np.diff(self.row_ids) == 1)
        )

    @classmethod
    def from_dense(cls, A: np.ndarray, rows: np.ndarray | None = None) -> PackedArray:
        """Pack a 0/1 matrix.

        Parameters
        ----------
        A : numpy.ndarray
            0/1 values, models x samples.
        rows : numpy.ndarray, optional
            As for the constructor.

        Returns
        -------
        PackedArray
        """
        A = np.asarray(A)
        if A.ndim != 2:
            raise InputError(f"the matrix must be 2-dimensional, got {A.ndim} dimensions.")
        return cls(pack_rows(A), A.shape[1], rows)

    def read(self, start: int, stop: int) -> np.ndarray:
        if self._contiguous and stop > start:
            first = int(self.row_ids[start])
            return np.asarray(self.packed[first : first + (stop - start)])
        return np.asarray(self.packed[self.row_ids[start:stop]])


class MatrixRows(RowSource):
    """Rows of a 0/1 matrix file, validated as they are read.

    Reads through :func:`lifelong_core.io.matrix.open_matrix` (a ``.npy`` is streamed from
    disk). Holds only the path, so it pickles to workers.

    Parameters
    ----------
    path : str or os.PathLike
        The matrix file.
    rows : numpy.ndarray, optional
        File row numbers to serve, in this order (default: every row).
    what : str
        How messages name the file.

    Raises
    ------
    InputError
        If the file cannot be read as a matrix or ``rows`` names a row it does not have.
    """

    def __init__(
        self, path: str | Path, rows: np.ndarray | None = None, what: str = "matrix"
    ) -> None:
        self._src = open_matrix(path, what)
        self.n = self._src.n_cols
        m = self._src.n_rows
        self.row_ids = (
            np.arange(m, dtype=np.int64)
            if rows is None
            else _check_rows(rows, m, f" for {what} file {path}")
        )

    @property
    def shape(self) -> tuple[int, int]:
        """Shape of the whole file (all rows, not only ``row_ids``)."""
        return self._src.shape

    def subset(self, rows: np.ndarray) -> MatrixRows:
        """The same file, rows ``rows``, without opening it again (a .csv, .npz or .parquet is
        loaded once).

        Parameters
        ----------
        rows : numpy.ndarray
            File row numbers.

        Returns
        -------
        MatrixRows

        Raises
        ------
        InputError
            If ``rows`` names a row the file does not have.
        """
        out = object.__new__(MatrixRows)
        out._src, out.n = self._src, self.n
        out.row_ids = _check_rows(
            rows, self._src.n_rows, f" for {self._src.what} file {self._src.path}"
        )
        return out

    def read_dense(self, start: int, stop: int) -> np.ndarray:
        return self._src.read_rows(self.row_ids[start:stop])
