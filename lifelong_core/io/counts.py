"""Counts files: ``counts.csv``, one row per (model, task) with ``model, task, category,
correct, total`` (the input of ``lbe rank``, ``lbe weights`` and the Rankings and Task
weighting pages; the ``counts.csv`` that ``lbe export --counts`` writes).

The file is read strictly here (:func:`lifelong_core.io.tables.read_csv_table`: sizes,
ragged rows, control characters); the counts themselves are validated once, by
:func:`lifelong_core.stats.from_frame`, which names the file line of a bad row.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

import pandas as pd

from lifelong_core.io.tables import read_csv_table


def counts_name(path: str | os.PathLike[str] | IO[bytes], name: str | None = None) -> str:
    """How messages call a counts input: ``name``, else the file's (or upload's) name.

    Parameters
    ----------
    path : str, Path or file-like
        The counts input: a path, or an object with ``read`` (a Streamlit upload, an open
        file) whose ``name`` attribute is used when it has one.
    name : str, optional
        The caller's name for the input; when given (and not empty) it is returned as is.

    Returns
    -------
    str
        ``name``; else the file name of ``path`` without its folder; else the upload's
        ``name``, or ``"counts.csv"`` for a file-like object without one.
    """
    if name:
        return name
    if hasattr(path, "read"):
        return str(getattr(path, "name", "counts.csv"))
    return Path(path).name


def read_counts(path: str | os.PathLike[str] | IO[bytes], name: str | None = None) -> pd.DataFrame:
    """The rows of a ``counts.csv`` file or file-like object, unvalidated.

    Parameters
    ----------
    path : str, Path or file-like
        The ``counts.csv`` file, or an upload or open file holding its text.
    name : str, optional
        How errors refer to the input (default: the file's name).

    Returns
    -------
    pandas.DataFrame
        As written (leading spaces after commas dropped).

    Raises
    ------
    InputError
        If the file is missing, unreadable, empty or not UTF-8, if a line or cell is over
        the size limits, if a row is ragged, or if a header name is blank or repeated (see
        :func:`lifelong_core.io.tables.read_csv_table`).
    """
    return read_csv_table(path, counts_name(path, name), skipinitialspace=True)
