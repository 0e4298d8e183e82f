"""Files in and out of the store: long tables, id lists, matrix and long exports.

Formats (``import`` / ``export``; docs/reference/file-formats.md):

- long table, ``.csv`` or ``.parquet``: columns ``model, sample, correct`` and optionally
  ``confidence, predicted, true_prob, label, dataset, domain, category, split``;
- wide matrix: any file :func:`lifelong_core.io.matrix.load_matrix` reads (.npy, .npz,
  .csv, .parquet; never unpickled) plus a model-id file and a sample-id file. An id file
  is one id per line, or a ``.csv``/``.parquet`` table with a ``model_id`` (resp.
  ``sample_id``) column and optional metadata columns (models: name, family,
  release_order, metadata, estimated; samples: dataset, domain, category, label, split).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.arrays import check_npy_header
from lifelong_core.io.edges import atomic_output, check_input_file, os_error
from lifelong_core.io.limits import control_character, printable_rule
from lifelong_core.io.tables import read_table
from lifelong_core.io.text import check_archive, read_text

if TYPE_CHECKING:
    from lifelong_core.store.store import Store

LONG_EXPORT_COLUMNS = (
    "model",
    "sample",
    "correct",
    "confidence",
    "predicted",
    "true_prob",
    "label",
    "dataset",
    "domain",
    "category",
    "split",
)


def read_long(path) -> pd.DataFrame:
    """A long table from CSV or Parquet, unvalidated (the store validates it).

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InputError
        If the file is missing or cannot be read as a table.
    """
    return read_table(path, "--long")


def read_ids(path, kind: str):
    """Model or sample ids: a list of ids (one per line) or a table with ``<kind>_id``.

    Parameters
    ----------
    path : str or os.PathLike
        A text file, or a ``.csv`` / ``.parquet`` table.
    kind : {"model", "sample"}
        Which ids.

    Returns
    -------
    list of str or pandas.DataFrame
        The ids, or the table (with its other columns: fields of the models or samples).

    Raises
    ------
    InputError
        If the file is missing or unreadable, a table lacks ``<kind>_id`` or has no rows.
    """
    what = f"--{kind}s"
    p = check_input_file(path, what)
    if p.suffix.lower() in (".csv", ".parquet"):
        df = read_table(p, what)
        if f"{kind}_id" not in df.columns:
            raise InputError(
                f"{what} file {p} has no column '{kind}_id' (columns found: {', '.join(map(str, df.columns))})."
            )
        if len(df) == 0:
            raise InputError(f"{what} file {p} has no data rows.")
        return df
    text = read_text(p, f"{what} file {p}")
    ids = []
    # Lines end at "\n" only: str.splitlines would also split at form feeds, record
    # separators and U+2028, turning one id with such a character into two.
    for lineno, line in enumerate(text.split("\n"), start=1):
        s = line.removesuffix("\r").strip()
        if not s:
            continue
        found = control_character(s)
        if found:
            raise InputError(printable_rule(f"{what} file {p} line {lineno}", found))
        ids.append(s)
    if not ids:
        raise InputError(f"{what} file {p} lists no ids.")
    return ids


def read_extra_matrix(path, flag: str) -> np.ndarray:
    """A per-entry extras matrix (``--confidence`` etc. of a wide import) from .npy or .npz.

    Read as stored (no narrowing to float32, so values come back exactly); never unpickled.
    Shape and value checks happen in the store with the matrix at hand.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    flag : str
        The option that named it, for messages.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InputError
        If the file is missing, not .npy or .npz, not exactly one readable array, holds
        pickled objects, or is too large for memory.
    """
    p = check_input_file(path, flag)
    suffix = p.suffix.lower()
    if suffix not in (".npy", ".npz"):
        raise InputError(f"{flag} file {p} must be .npy or .npz.")
    try:
        if suffix == ".npy":
            check_npy_header(p, flag)
            arr = np.load(p, allow_pickle=False)
        else:
            check_archive(p, f"{flag} file {p}")
            with np.load(p, allow_pickle=False) as z:
                if len(z.files) != 1:
                    raise InputError(
                        f"{flag} file {p} holds {len(z.files)} arrays; it must hold exactly one."
                    )
                arr = z[z.files[0]]
    except InputError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise InputError(
                f"{flag} file {p} holds pickled Python objects, which are never loaded."
            ) from None
        raise InputError(f"{flag} file {p} is not a readable array ({exc}).") from None
    except OSError as exc:
        if getattr(exc, "errno", None) is not None:
            raise os_error(exc, p, f"{flag} file", "read") from None
        raise InputError(f"{flag} file {p} is not a readable array ({exc}).") from None
    except EOFError as exc:
        raise InputError(f"{flag} file {p} is not a readable array ({exc}).") from None
    except MemoryError:
        raise InputError(
            f"{flag} file {p} holds an array too large for this machine's memory."
        ) from None
    return arr


def write_ids(ids, path, what: str = "id list") -> None:
    """One id per line, written whole or not at all.

    Parameters
    ----------
    ids : iterable
        The ids, written with ``str``.
    path : str or os.PathLike
        The output file.
    what : str
        How messages name the output.

    Raises
    ------
    InputError
        If the file cannot be written.
    """
    with atomic_output(path, what) as tmp:
        tmp.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")


def export_long(store: Store, path, dataset: str | None = None) -> int:
    """Write every recorded entry (of ``dataset``) as a long table.

    Parquet is written in row groups of whole models, so memory stays at one group. Columns
    that would be empty throughout are left out, so the export imports again.

    Parameters
    ----------
    store : Store
        An open store.
    path : str or os.PathLike
        A ``.csv`` or ``.parquet`` file, written whole or not at all.
    dataset : str, optional
        Export this dataset only.

    Returns
    -------
    int
        Rows written.

    Raises
    ------
    InputError
        For another suffix, an unknown dataset, or a store with nothing recorded.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise InputError(f"--long output {p} must end in .csv or .parquet.")
    smp = store.samples(dataset)
    if dataset is not None and len(smp) == 0:
        raise InputError(f"The store has no dataset {dataset!r}.")
    mdl = store.models()
    sidx = smp["sample_idx"].to_numpy(dtype=np.int64)
    per = max(1, 20_000_000 // max(len(sidx), 1))
    fields = tuple(f for f in ("confidence", "predicted", "true_prob") if store.has_extra(f))
    # Columns that would be empty throughout are left out, so the export imports again.
    meta = tuple(
        f for f in ("label", "dataset", "domain", "category", "split") if smp[f].notna().any()
    )
    rows = 0
    with atomic_output(p, "--long") as tmp:
        wrote = False
        parquet = None  # the Parquet writer, opened with the first chunk's schema
        try:
            for a in range(0, len(mdl), per):
                m = mdl["model_idx"].to_numpy(dtype=np.int64)[a : a + per]
                vals, known = store.values_and_known(m, sidx)
                r, c = np.nonzero(known)
                if len(r) == 0:
                    continue
                cols: dict[str, np.ndarray | pd.api.extensions.ExtensionArray] = {
                    "model": mdl["model_id"].to_numpy(dtype=object)[a : a + per][r],
                    "sample": smp["sample_id"].to_numpy(dtype=object)[c],
                    "correct": vals[r, c].astype(np.uint8),
                }
                if fields:
                    ext = store.extras_partial(m, sidx, fields)
                    for f in fields:
                        values, have = ext[f]
                        col = pd.array(
                            values[r, c], dtype="Int32" if f == "predicted" else "Float64"
                        )
                        col[~have[r, c]] = pd.NA
                        cols[f] = col
                for f in meta:
                    cols[f] = smp[f].array[c]
                df = pd.DataFrame(cols)
                rows += len(df)
                if suffix == ".csv":
                    df.to_csv(tmp, mode="a" if wrote else "w", header=not wrote, index=False)
                else:
                    tbl = pa.Table.from_pandas(df, preserve_index=False)
                    if parquet is None:
                        parquet = pq.ParquetWriter(tmp, tbl.schema)
                    parquet.write_table(tbl.cast(parquet.schema))
                wrote = True
            if not wrote:
                raise InputError("The store holds no recorded predictions to export.")
        finally:
            if parquet is not None:
                parquet.close()
    return rows
