"""Counts files: ``counts.csv``, one row per (model, task) with ``model, task, category,
correct, total`` (the input of ``lbe rank``, ``lbe weights`` and the Rankings and Task
weighting pages; the ``counts.csv`` that ``lbe export --counts`` writes).

The file is read strictly here (:func:`lifelong_core.io.tables.read_csv_table`: sizes,
ragged rows, control characters); the counts themselves are validated once, by
:func:`lifelong_core.stats.from_frame`, which names the file line of a bad row.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from lifelong_core.io.tables import read_csv_table


def counts_name(path, name: str | None = None) -> str:
    """How messages call a counts input: ``name``, else the file's (or upload's) name."""
    if name:
        return name
    if hasattr(path, "read"):
        return str(getattr(path, "name", "counts.csv"))
    return Path(path).name


def read_counts(path, name: str | None = None) -> pd.DataFrame:
    """The rows of a ``counts.csv`` file or file-like object, unvalidated.

    Parameters
    ----------
    path : str, Path or file-like
    name : str, optional
        How errors refer to the input (default: the file's name).

    Returns
    -------
    pandas.DataFrame
        As written (leading spaces after commas dropped).
    """
    return read_csv_table(path, counts_name(path, name), skipinitialspace=True)
