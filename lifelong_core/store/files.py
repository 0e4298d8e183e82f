"""Files out of the store: id lists and long exports (``export``;
docs/reference/file-formats.md). What is read in lives in :mod:`lifelong_core.io` (the
reader registry, :mod:`lifelong_core.io.readers`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.edges import atomic_output

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


def write_ids(ids: Iterable[object], path: str | os.PathLike[str], what: str = "id list") -> None:
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


def export_long(store: Store, path: str | os.PathLike[str], dataset: str | None = None) -> int:
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
