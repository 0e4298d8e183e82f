"""The one strict reader of user tables (CSV and Parquet), used by every importer.

Every CSV a user hands in (a long table, an id list with metadata, counts per task,
``y, y_pred, p`` predictions, an upload in the app) is read here, so they all refuse the
same things with the same sentence:

- a ragged row. ``pandas.read_csv`` takes the first column as the index when every data
  row has one field more than the header (an unquoted comma inside a model id such as
  ``nb[prep=raw,var_smoothing=0.01]``) and silently shifts every column; it pads short
  rows with missing values. Here both are refused, naming the data row and the line;
- a missing, unreadable or directory path, an empty file, text that is not UTF-8, a
  blank or repeated column name, and cells longer than :data:`MAX_CELL_CHARS`.

Cells come back as text (``dtype=str``, nothing turned into NaN), so validators can quote
an offending cell verbatim and convert with their own row-numbered messages. Rows are
numbered from 1 after the header, as every validator's messages do.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import IO

import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.edges import check_input_file, os_error
from lifelong_core.io.limits import MAX_CELL_CHARS
from lifelong_core.io.text import read_text_bytes


def _ragged_row(data: bytes, what: str) -> str | None:
    """The sentence for the first record whose field count differs from the header's.

    Only run after the fast parser found a problem, so its cost is paid on bad files only.
    """
    text = data.decode("utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""))
    header = None
    row = 0
    try:
        for rec in reader:
            if not rec or (all(not f.strip() for f in rec) and len(rec) <= 1):
                continue  # blank lines are skipped, as the fast parser does
            if header is None:
                header = len(rec)
                continue
            row += 1
            if len(rec) != header:
                hint = (
                    " (an unquoted comma inside a value? quote values that contain commas)"
                    if len(rec) > header
                    else ""
                )
                return (
                    f"{what} data row {row} (line {reader.line_num}) has {len(rec)} fields but the header has "
                    f"{header}{hint}."
                )
    except csv.Error as exc:
        return f"{what} is not a well-formed CSV table (line {reader.line_num}: {exc})."
    return None


def _as_bytes(source: str | os.PathLike[str] | bytes | IO[bytes], what: str) -> bytes:
    # Lines are checked against the line limit as the bytes arrive (io.text), before
    # pandas sees them: its parser needs several times a line's size in memory.
    if not isinstance(source, (bytes, bytearray, memoryview)) and not hasattr(source, "read"):
        source = check_input_file(source, "input")
    return read_text_bytes(source, what)


def read_csv_table(
    source: str | os.PathLike[str] | bytes | IO[bytes], what: str, *, skipinitialspace: bool = False
) -> pd.DataFrame:
    """A CSV table as text cells with stripped column names; ``InputError`` on anything ragged.

    The first non-blank line is the header; blank lines are skipped. Every cell is kept as
    text (nothing becomes NaN), so validators can quote it verbatim.

    Parameters
    ----------
    source : str, Path, bytes or file-like
        A path (gzip when its name ends in ``.gz``), the bytes of the file, or an upload
        or open file.
    what : str
        How messages name the input (e.g. ``"--long file data/x.csv"``).
    skipinitialspace : bool, default False
        Drop spaces after each comma, so that ``a, b`` reads as ``a,b`` (counts files are
        read so).

    Returns
    -------
    pandas.DataFrame
        One row per data row, columns named by the header (stripped), every cell a str.

    Raises
    ------
    InputError
        If the path is missing, a directory, unreadable or empty; if the text is empty or
        not UTF-8; if a line is over the line limit; if a data row has more or fewer
        fields than the header (naming the data row and file line) or the CSV is
        malformed; if a header name is blank or repeated; or if a cell is longer than
        :data:`~lifelong_core.io.limits.MAX_CELL_CHARS` characters.
    """
    data = _as_bytes(source, what)
    if not data.strip():
        raise InputError(f"{what} is empty.")
    try:
        raw = pd.read_csv(
            io.BytesIO(data),
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            skip_blank_lines=True,
            index_col=False,
            encoding="utf-8-sig",
            skipinitialspace=skipinitialspace,
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"{what} is empty.") from None
    except UnicodeDecodeError:
        raise InputError(f"{what} is not UTF-8 text.") from None
    except pd.errors.ParserError as exc:
        raise InputError(
            _ragged_row(data, what)
            or f"{what} is not a well-formed CSV table ({str(exc).strip().splitlines()[-1]})."
        ) from None
    # The fast parser pads a short row with empty cells, which look like cells left empty
    # on purpose; only when the last column has an empty cell is the file scanned for one.
    if raw.shape[0] > 1 and (raw.iloc[1:, -1] == "").any():
        ragged = _ragged_row(data, what)
        if ragged:
            raise InputError(ragged)
    columns = [str(c).strip() for c in raw.iloc[0].tolist()]
    blank = [j for j, c in enumerate(columns) if not c]
    if blank:
        raise InputError(f"{what} has no name for column {blank[0] + 1} in its header.")
    seen: dict[str, int] = {}
    for j, c in enumerate(columns):
        if c in seen:
            raise InputError(
                f"{what} names column {c!r} twice in its header (columns {seen[c] + 1} and {j + 1})."
            )
        seen[c] = j
    df = raw.iloc[1:].reset_index(drop=True)
    df.columns = columns
    check_cell_lengths(df, what)
    return df


def check_cell_lengths(df: pd.DataFrame, what: str, limit: int = MAX_CELL_CHARS) -> None:
    """Refuse a text cell longer than ``limit`` characters, naming row and column."""
    for c in df.columns:
        col = df[c]
        if col.dtype != object and not pd.api.types.is_string_dtype(col):
            continue
        lengths = col.astype(str).str.len().to_numpy()
        if len(lengths) and lengths.max() > limit:
            i = int(lengths.argmax())
            raise InputError(
                f"{what} row {i + 1} column {c!r} holds {lengths[i]:,} characters; "
                f"cells may hold at most {limit:,}."
            )


def read_parquet_table(path: str | os.PathLike[str], what: str) -> pd.DataFrame:
    """A Parquet table (never pickled); ``InputError`` when it cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = check_input_file(path, what)
    try:
        df = pq.read_table(p).to_pandas()
    except OSError as exc:
        if getattr(exc, "errno", None) is not None:
            raise os_error(exc, p, f"{what} file", "read") from None
        raise InputError(
            f"{what} file {p} is not a readable Parquet file ({str(exc).splitlines()[0]})."
        ) from None
    except pa.ArrowException as exc:
        raise InputError(
            f"{what} file {p} is not a readable Parquet file ({str(exc).splitlines()[0]})."
        ) from None
    check_cell_lengths(df, f"{what} file {p}")
    return df


def read_table(path: str | os.PathLike[str], what: str) -> pd.DataFrame:
    """A ``.csv`` or ``.parquet`` table by extension (text cells for CSV)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return read_csv_table(p, f"{what} file {p}")
    if suffix == ".parquet":
        return read_parquet_table(p, what)
    raise InputError(f"{what} file {p} has extension {suffix or '(none)'!r}; use .csv or .parquet.")
