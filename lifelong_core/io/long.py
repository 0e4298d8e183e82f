"""Long tables: one row per (model, sample) prediction, ``.csv`` or ``.parquet``.

Columns ``model, sample, correct`` and optionally ``confidence, predicted, true_prob,
label, dataset, domain, category, split`` (docs/reference/file-formats.md). The file is
read strictly here (:func:`lifelong_core.io.tables.read_table`: sizes, ragged rows,
control characters); the rows' values are validated by the store with the rest of the
import, before anything is written.
"""

from __future__ import annotations

import os

import pandas as pd

from lifelong_core.io.edges import file_checksum
from lifelong_core.io.readers import Source
from lifelong_core.io.tables import read_table


def read_long(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A long table from CSV or Parquet, unvalidated (the store validates it)."""
    return read_table(path, "--long")


def long_source(path: str | os.PathLike[str], dataset: str | None = None) -> Source:
    """A long ``.csv``/``.parquet`` table (model, sample, correct[, ...]) as a source.

    Parameters
    ----------
    path : str or Path
    dataset : str, optional
        The dataset of samples whose row names none.

    Returns
    -------
    Source
        ``write="long"``, with the file's checksum for the store's log.
    """
    table = read_long(path)  # validates the path first: the checksum needs a readable file
    return Source("long", str(path), file_checksum(path), dataset or None, table=table)
