"""Reading user-supplied matrices and index lists, with one-sentence errors.

Formats: ``.npy``, ``.npz``, ``.csv`` and ``.parquet``. Rows are models and columns are
samples (the cache matrix A of Prabhu et al. (2024), §2). Every check failure raises
:class:`~lifelong_core.errors.InputError` naming the file and, where it applies, the row
and column; rows and columns in messages count from 1, like a spreadsheet, except where a
message explicitly says "0-based" (index lists, which are 0-based row numbers).

``.npy`` and ``.npz`` are always read with ``allow_pickle=False``: a file holding Python
objects could run code when unpickled, so it is refused rather than trusted.

CSV files have no index column; one optional header line is accepted when *none* of its
fields is a number (e.g. sample ids), otherwise the first line is data. Parquet files hold
one column per sample; every column must be numeric.

For large ``.npy`` files :func:`open_matrix` gives a :class:`MatrixSource` that reads
blocks of rows on demand (C-ordered rows are contiguous on disk), so the sweep streams
over evaluated models without holding the whole matrix in memory.
"""

from __future__ import annotations

import csv
import io
import math
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.io.arrays import check_npy_header
from lifelong_core.io.edges import not_regular, open_input
from lifelong_core.io.text import check_archive, iter_lines, read_text

MATRIX_SUFFIXES = (".npy", ".npz", ".csv", ".parquet")


def _name(path: Path | str) -> str:
    return os.fspath(path)


def _check_file(path: Path | str, what: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} file {_name(p)} does not exist.")
    kind = not_regular(p.stat().st_mode)
    if kind is not None:  # a pipe or a device is never opened: it may never end
        raise InputError(f"{what} path {_name(p)} is {kind}.")
    if not os.access(p, os.R_OK):
        raise InputError(f"{what} file {_name(p)} is not readable.")
    if p.stat().st_size == 0:
        raise InputError(f"{what} file {_name(p)} is empty.")
    return p


def _suffix(p: Path, what: str) -> str:
    suffix = p.suffix.lower()
    if suffix not in MATRIX_SUFFIXES:
        raise InputError(
            f"{what} file {_name(p)} has unsupported extension {suffix or '(none)'!r}; "
            f"use one of {', '.join(MATRIX_SUFFIXES)}."
        )
    return suffix


def _first_bad(mask: np.ndarray) -> tuple[int, int]:
    r, c = np.unravel_index(int(np.argmax(mask)), mask.shape)
    return int(r), int(c)


def _check_shape(arr: np.ndarray, p: Path | str, what: str) -> None:
    if arr.ndim != 2:
        raise InputError(
            f"{what} file {_name(p)} holds a {arr.ndim}-dimensional array; "
            "expected a 2-dimensional matrix (rows = models, columns = samples)."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{what} file {_name(p)} holds an empty matrix of shape {arr.shape}.")


def _row_namer(row_offset: int, lines: tuple[int, ...] | None) -> Callable[[int], str]:
    if lines is not None:
        return lambda r: f"line {lines[r]}"
    return lambda r: f"row {r + 1 + row_offset}"


def check_binary(
    arr: np.ndarray,
    source: str,
    what: str = "matrix",
    row_offset: int = 0,
    lines: tuple[int, ...] | None = None,
) -> np.ndarray:
    """Validate a 0/1 matrix and return it as ``uint8`` (a view when already uint8/bool).

    Used by the store's wide-matrix import too, so that both report the same sentences.

    Parameters
    ----------
    arr : numpy.ndarray, shape (rows, samples)
        The matrix or a block of its rows; bool, integer or float.
    source : str
        The file it came from, as messages show it.
    what : str, default "matrix"
        What the matrix is to the user (usually its flag), starting each message.
    row_offset : int, default 0
        The 0-based row of the larger matrix that ``arr``'s first row is, so that messages
        about a block name the row of the whole file.
    lines : tuple of int, optional
        For a CSV file, the file line of each row of ``arr``; messages then name the line
        instead of the row.

    Returns
    -------
    numpy.ndarray of uint8, same shape
        ``arr`` itself for ``uint8``, a view for ``bool``, else a converted copy.

    Raises
    ------
    InputError
        If the dtype is not numeric or bool, or at the first NaN or value other than 0 and
        1, naming its row (or line) and column, both from 1.
    """
    row = _row_namer(row_offset, lines)
    if arr.dtype == np.bool_:
        return arr.view(np.uint8)
    if arr.dtype.kind not in "iuf":
        raise InputError(
            f"{what} file {source} has dtype {arr.dtype}; expected 0/1 numbers (bool, integer or float)."
        )
    if arr.dtype.kind == "f":
        nan = np.isnan(arr)
        if nan.any():
            r, c = _first_bad(nan)
            raise InputError(
                f"{what} file {source} has a missing value (NaN) at {row(r)}, column {c + 1}."
            )
    if arr.dtype == np.uint8:
        # A max-reduction needs no temporary; the mask is built only to locate a problem.
        if arr.size == 0 or arr.max() <= 1:
            return arr
        bad = arr > 1
    else:
        bad = (arr != 0) & (arr != 1)
    if bad.any():
        r, c = _first_bad(bad)
        raise InputError(
            f"{what} file {source} has non-binary value {arr[r, c].item()!r} at {row(r)}, "
            f"column {c + 1}; only 0 and 1 are allowed."
        )
    return arr if arr.dtype == np.uint8 else arr.astype(np.uint8)


def _check_unit_interval(
    arr: np.ndarray, source: str, what: str, lines: tuple[int, ...] | None = None
) -> np.ndarray:
    row = _row_namer(0, lines)
    if arr.dtype.kind not in "iufb":
        raise InputError(f"{what} file {source} has dtype {arr.dtype}; expected numbers in [0, 1].")
    # Range-check before the float32 cast, which could round 1.00000001 to 1.
    nan = np.isnan(arr) if arr.dtype.kind == "f" else np.zeros(arr.shape, dtype=bool)
    if nan.any():
        r, c = _first_bad(nan)
        raise InputError(
            f"{what} file {source} has a missing value (NaN) at {row(r)}, column {c + 1}."
        )
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        r, c = _first_bad(bad)
        raise InputError(
            f"{what} file {source} has value {float(arr[r, c]):g} at {row(r)}, column {c + 1}, "
            "outside [0, 1]."
        )
    return arr.astype(np.float32, copy=False)


def _check_npy_magic(p: Path, what: str) -> None:
    # Without this, np.load treats any other file as a pickle and the message misleads.
    with open_input(p, f"{what} file") as fh:
        head = fh.read(6)
    if head != b"\x93NUMPY":
        raise InputError(f"{what} file {_name(p)} is not a readable .npy array (no NumPy header).")


def _load_npy(p: Path, what: str) -> np.ndarray:
    _check_npy_magic(p, what)
    check_npy_header(p, what)
    try:
        return np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _unreadable(exc, p, what, ".npy array") from None


def _load_npz(p: Path, what: str, key: str | None) -> np.ndarray:
    check_archive(p, f"{what} file {_name(p)}")
    try:
        with np.load(p, allow_pickle=False) as z:
            keys = list(z.files)
            if key is None:
                if len(keys) != 1:
                    raise InputError(
                        f"{what} file {_name(p)} holds {len(keys)} arrays ({', '.join(keys) or 'none'}); "
                        "it must hold exactly one unless a key is named."
                    )
                key = keys[0]
            if key not in keys:
                raise InputError(
                    f"{what} file {_name(p)} has no array named {key!r} (it has {', '.join(keys) or 'none'})."
                )
            return z[key]
    except InputError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise _unreadable(exc, p, what, ".npz archive") from None


def _unreadable(exc: Exception, p: Path, what: str, kind: str) -> InputError:
    """The sentence for a ``kind`` file NumPy could not load; pickled objects are named as such."""
    if isinstance(exc, ValueError) and "pickle" in str(exc).lower():
        return InputError(
            f"{what} file {_name(p)} holds pickled Python objects, which are never loaded "
            "(allow_pickle=False); save a numeric array instead."
        )
    return InputError(f"{what} file {_name(p)} is not a readable {kind} ({exc}).")


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _load_csv(p: Path, what: str) -> tuple[np.ndarray, list[int]]:
    """Parse a CSV of numbers; ragged rows and non-numbers are reported by line.

    Returns the matrix and the file line number of each of its rows.
    """
    rows: list[np.ndarray] = []
    lines: list[int] = []
    width = None
    # Read under the line limit (io.text); "utf-8-sig" drops a byte-order mark, as the
    # long-table reader does (a matrix CSV saved by Excel starts with one).
    text = read_text(p, f"{what} file {_name(p)}")
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        for lineno, fields in enumerate(reader, start=1):
            if not fields or all(not f.strip() for f in fields):
                continue
            if lineno == 1 and not any(_is_number(f) for f in fields):
                width = len(fields)
                continue
            if width is None:
                width = len(fields)
            elif len(fields) != width:
                raise InputError(
                    f"{what} file {_name(p)} is ragged: line {lineno} has {len(fields)} "
                    f"fields where earlier lines have {width}."
                )
            try:
                rows.append(np.array([float(f) if f.strip() else math.nan for f in fields]))
                lines.append(lineno)
            except ValueError:
                col = next(i for i, f in enumerate(fields) if f.strip() and not _is_number(f))
                raise InputError(
                    f"{what} file {_name(p)} has non-numeric value {fields[col].strip()!r} at "
                    f"line {lineno}, column {col + 1}."
                ) from None
    except csv.Error as exc:
        raise InputError(f"{what} file {_name(p)} is not a readable CSV file ({exc}).") from None
    if not rows:
        raise InputError(f"{what} file {_name(p)} has no data rows.")
    return np.vstack(rows), lines


def _load_parquet(p: Path, what: str) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(p)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"{what} file {_name(p)} is not a readable Parquet file ({exc})."
        ) from None
    if table.num_columns == 0 or table.num_rows == 0:
        raise InputError(
            f"{what} file {_name(p)} holds an empty table ({table.num_rows} rows, {table.num_columns} columns)."
        )
    cols = []
    for j, (name, col) in enumerate(zip(table.column_names, table.columns)):
        t = col.type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
            raise InputError(
                f"{what} file {_name(p)} column {j + 1} ({name!r}) has type {t}; expected numbers."
            )
        if col.null_count:
            r = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False)))
            raise InputError(
                f"{what} file {_name(p)} has a missing value at row {r + 1}, column {j + 1} ({name!r})."
            )
        cols.append(col.to_numpy())
    return np.column_stack(cols)


def _load_any(
    path: Path | str, what: str, key: str | None
) -> tuple[np.ndarray, Path, tuple[int, ...] | None]:
    """The raw array, its path, and for CSV the file line of each row (for messages)."""
    p = _check_file(path, what)
    lines = None
    suffix = _suffix(p, what)
    if key is not None and suffix != ".npz":
        raise InputError(f"{what}: an array key is only meaningful for .npz files, not {_name(p)}.")
    if suffix == ".npy":
        arr = _load_npy(p, what)
    elif suffix == ".npz":
        arr = _load_npz(p, what, key)
    elif suffix == ".csv":
        arr, line_list = _load_csv(p, what)
        lines = tuple(line_list)
    else:
        arr = _load_parquet(p, what)
    if arr.dtype == object:
        raise InputError(f"{what} file {_name(p)} holds Python objects; expected a numeric matrix.")
    _check_shape(arr, p, what)
    return arr, p, lines


def load_matrix(path: Path | str, what: str = "matrix", key: str | None = None) -> np.ndarray:
    """Load a 0/1 correctness matrix (models x samples) as ``np.uint8``.

    The cache matrix A of Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress*, §2: entry (m, s) is 1 when model m answered sample s
    correctly.

    Parameters
    ----------
    path : str or Path
        A ``.npy``, ``.npz``, ``.csv`` or ``.parquet`` file (see the module's notes on each
        format).
    what : str, default "matrix"
        What the file is to the user (usually its flag), starting each message.
    key : str, optional
        The array of an ``.npz`` to load; needed when it holds more than one, refused for
        other formats.

    Returns
    -------
    numpy.ndarray of uint8, shape (models, samples)
        C-contiguous, entries 0 or 1.

    Raises
    ------
    InputError
        For a missing, unreadable or empty file, an unsupported extension, a ``key`` that
        is absent or given for a format other than ``.npz``, a ragged CSV, non-numbers,
        NaN, values other than 0 and 1, an array that is not 2-dimensional or is empty, a
        ``.npy`` header claiming more data than the file holds, and pickled objects
        (never loaded).
    """
    arr, p, lines = _load_any(path, what, key)
    return np.ascontiguousarray(check_binary(arr, _name(p), what, lines=lines))


def load_float_matrix(
    path: Path | str, what: str = "confidence", key: str | None = None
) -> np.ndarray:
    """Load a matrix of values in [0, 1] (e.g. confidences) as ``np.float32``.

    Read like :func:`load_matrix` (same formats and file checks); only the value check
    differs.

    Parameters
    ----------
    path : str or Path
        A ``.npy``, ``.npz``, ``.csv`` or ``.parquet`` file, rows = models, columns =
        samples.
    what : str, default "confidence"
        What the file is to the user (usually its flag), starting each message.
    key : str, optional
        The array of an ``.npz`` to load; needed when it holds more than one.

    Returns
    -------
    numpy.ndarray of float32, shape (models, samples)
        C-contiguous, entries in [0, 1] (checked before the cast to float32, so a value
        just above 1 is refused rather than rounded).

    Raises
    ------
    InputError
        For the file problems :func:`load_matrix` names, for a non-numeric dtype, and at
        the first NaN or value outside [0, 1], naming its row (or CSV line) and column.
    """
    arr, p, lines = _load_any(path, what, key)
    return np.ascontiguousarray(_check_unit_interval(arr, _name(p), what, lines=lines))


def load_index_list(path: Path | str, n: int | None = None, what: str = "index list") -> np.ndarray:
    """Read 0-based indices, one per line (blank lines ignored), as ``np.int64``.

    Duplicates are refused: an index list names a set of rows, and a repeated row would
    silently weigh twice in Sort.

    Parameters
    ----------
    path : str or Path
        A UTF-8 text file (gzip when it ends in ``.gz``), one whole number per line.
    n : int, optional
        The number of rows the indices refer to; when given, every index must lie in
        ``[0, n)``.
    what : str, default "index list"
        What the file is to the user (usually its flag), starting each message.

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        The indices in file order.

    Raises
    ------
    InputError
        If the file is missing, unreadable, empty, not UTF-8 or holds no indices, or
        names the line of a value that is not a whole number, lies outside the range or
        repeats an earlier one; also for a line over the line limit
        (:mod:`lifelong_core.io.limits`).
    """
    p = _check_file(path, what)
    out: list[int] = []
    seen: dict[int, int] = {}
    try:
        for lineno, raw in iter_lines(p, f"{what} file {_name(p)}"):
            line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            s = line.strip()
            if not s:
                continue
            try:
                v = int(s)
            except ValueError:
                raise InputError(
                    f"{what} file {_name(p)} line {lineno} is {s!r}, not a whole number."
                ) from None
            if v < 0 or (n is not None and v >= n):
                rng = f"[0, {n - 1}]" if n is not None else "0 or more"
                raise InputError(
                    f"{what} file {_name(p)} line {lineno} holds index {v}, outside {rng} (0-based)."
                )
            if v in seen:
                raise InputError(
                    f"{what} file {_name(p)} line {lineno} repeats index {v} (first on line {seen[v]})."
                )
            seen[v] = lineno
            out.append(v)
    except UnicodeDecodeError:
        raise InputError(f"{what} file {_name(p)} is not a UTF-8 text file.") from None
    if not out:
        raise InputError(f"{what} file {_name(p)} holds no indices.")
    return np.asarray(out, dtype=np.int64)


@dataclass(frozen=True)
class MatrixSource:
    """A 0/1 matrix that hands out validated row blocks without loading everything.

    For a C-ordered ``.npy`` file rows are read straight from disk, so peak memory is one
    block; other formats are loaded once (they are small in practice) and sliced.
    """

    path: str
    shape: tuple[int, int]
    what: str
    _array: np.ndarray | None
    _offset: int
    _dtype: np.dtype

    @property
    def n_rows(self) -> int:
        return self.shape[0]

    @property
    def n_cols(self) -> int:
        return self.shape[1]

    def read_rows(self, rows: np.ndarray) -> np.ndarray:
        """Rows ``rows`` (0-based, any order) as a validated ``uint8`` array."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._array is not None:
            return np.ascontiguousarray(self._array[rows])
        out = np.empty((len(rows), self.shape[1]), dtype=np.uint8)
        if len(rows) == 0:
            return out
        # Contiguous runs are read in one call; sorted runs make this one call per block.
        width = self.shape[1] * self._dtype.itemsize
        with open(self.path, "rb") as fh:
            start = 0
            while start < len(rows):
                stop = start + 1
                while stop < len(rows) and rows[stop] == rows[stop - 1] + 1:
                    stop += 1
                fh.seek(self._offset + int(rows[start]) * width)
                block = np.fromfile(fh, dtype=self._dtype, count=(stop - start) * self.shape[1])
                if block.size != (stop - start) * self.shape[1]:
                    raise InputError(f"{self.what} file {self.path} is truncated.")
                block = block.reshape(stop - start, self.shape[1])
                out[start:stop] = check_binary(
                    block, self.path, self.what, row_offset=int(rows[start])
                )
                start = stop
        return out


def open_matrix(path: Path | str, what: str = "matrix") -> MatrixSource:
    """Open a 0/1 matrix for block reads; validation happens as blocks are read.

    A C-ordered numeric ``.npy`` is streamed from disk; anything else goes through
    :func:`load_matrix` (validated immediately) and is served from memory.

    Parameters
    ----------
    path : str or Path
        A ``.npy``, ``.npz``, ``.csv`` or ``.parquet`` file, rows = models, columns =
        samples.
    what : str, default "matrix"
        What the file is to the user (usually its flag), starting each message.

    Returns
    -------
    MatrixSource
        Its ``shape`` is known at once; :meth:`MatrixSource.read_rows` returns validated
        ``uint8`` blocks.

    Raises
    ------
    InputError
        For a missing, unreadable or empty file, an unsupported extension, and for a
        ``.npy`` whose header is unreadable, holds objects, is not 2-dimensional, is empty,
        has a non-numeric dtype or promises more data than the file holds; for other
        formats, whatever :func:`load_matrix` refuses. A streamed ``.npy``'s values are
        checked later, by ``read_rows``, which raises the same sentences as
        :func:`check_binary`.
    """
    p = _check_file(path, what)
    if _suffix(p, what) == ".npy":
        _check_npy_magic(p, what)
        check_npy_header(p, what)
        try:
            with open(p, "rb") as fh:
                version = np.lib.format.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                else:
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                offset = fh.tell()
        except (ValueError, OSError, EOFError) as exc:
            raise InputError(
                f"{what} file {_name(p)} is not a readable .npy array ({exc})."
            ) from None
        if dtype.hasobject:
            raise InputError(
                f"{what} file {_name(p)} holds pickled Python objects, which are never loaded "
                "(allow_pickle=False); save a numeric array instead."
            )
        if len(shape) != 2:
            raise InputError(
                f"{what} file {_name(p)} holds a {len(shape)}-dimensional array; "
                "expected a 2-dimensional matrix (rows = models, columns = samples)."
            )
        if shape[0] == 0 or shape[1] == 0:
            raise InputError(
                f"{what} file {_name(p)} holds an empty matrix of shape {tuple(shape)}."
            )
        if dtype.kind not in "biuf":
            raise InputError(
                f"{what} file {_name(p)} has dtype {dtype}; expected 0/1 numbers (bool, integer or float)."
            )
        expected = offset + int(np.prod(shape)) * dtype.itemsize
        if p.stat().st_size < expected:
            raise InputError(f"{what} file {_name(p)} is truncated.")
        if not fortran:
            return MatrixSource(_name(p), (int(shape[0]), int(shape[1])), what, None, offset, dtype)
    arr = load_matrix(p, what)
    return MatrixSource(_name(p), (int(arr.shape[0]), int(arr.shape[1])), what, arr, 0, arr.dtype)
