"""Per-task correct/total counts: the input of every method in the LA-UR-24-25289 report (2024).

A benchmark with a 0/1 metric is summarised without loss, for everything in the LA-UR-24-25289 report (2024)
§2, by the number of correct answers ``c[i, t]`` of model ``i`` on task ``t`` out of
``n[i, t]`` test instances, plus the category of each task. That is the ``counts.csv``
shape of the ``rank`` and ``weights`` commands (model, task, category, correct, total)
and of ``Store.counts``. Validation happens once, here, so the methods can trust the
arrays.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.counts import counts_name, read_counts

COLUMNS = ("model", "task", "category", "correct", "total")


@dataclass(frozen=True, eq=False)
class CountTable:
    """Correct and total predictions of ``len(models)`` models on ``len(tasks)`` tasks.

    Attributes
    ----------
    models : tuple of str
        Model names.
    tasks : tuple of str
        Task names.
    task_category : tuple of str
        The category of each task.
    correct, total : numpy.ndarray
        int64 (models, tasks); ``total`` may differ between models of one task (models
        evaluated on different subsets).
    """

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    task_category: tuple[str, ...]
    correct: np.ndarray
    total: np.ndarray

    @property
    def categories(self) -> tuple[str, ...]:
        """The distinct categories, in order of first appearance."""
        return tuple(dict.fromkeys(self.task_category))

    @property
    def accuracy(self) -> np.ndarray:
        """``correct / total``, float (models, tasks)."""
        return self.correct / self.total

    def category_mask(self, category: str) -> np.ndarray:
        """Boolean mask over tasks that belong to ``category``.

        Parameters
        ----------
        category : str
            A category.

        Returns
        -------
        numpy.ndarray
        """
        return np.array([c == category for c in self.task_category])

    def subset(
        self, models: Sequence[str] | None = None, tasks: Sequence[str] | None = None
    ) -> CountTable:
        """The same counts restricted to ``models`` and ``tasks``, in the given order.

        Parameters
        ----------
        models, tasks : sequence of str, optional
            Names to keep (default: all).

        Returns
        -------
        CountTable

        Raises
        ------
        InputError
            Naming a model or task the table does not have.
        """
        mi = _positions(self.models, models, "model")
        ti = _positions(self.tasks, tasks, "task")
        return CountTable(
            models=tuple(self.models[i] for i in mi),
            tasks=tuple(self.tasks[j] for j in ti),
            task_category=tuple(self.task_category[j] for j in ti),
            correct=self.correct[np.ix_(mi, ti)],
            total=self.total[np.ix_(mi, ti)],
        )

    def to_frame(self) -> pd.DataFrame:
        """The long ``counts.csv`` form, one row per model x task."""
        m, t = np.meshgrid(np.arange(len(self.models)), np.arange(len(self.tasks)), indexing="ij")
        return pd.DataFrame(
            {
                "model": np.asarray(self.models, dtype=object)[m.ravel()],
                "task": np.asarray(self.tasks, dtype=object)[t.ravel()],
                "category": np.asarray(self.task_category, dtype=object)[t.ravel()],
                "correct": self.correct.ravel(),
                "total": self.total.ravel(),
            }
        )


MAX_COUNT = 10**12


def _whole_numbers(values: pd.Series, column: str, where: Callable[[int], str]) -> np.ndarray:
    """Parse a column of whole numbers, naming the first offending cell."""
    numeric = pd.to_numeric(values, errors="coerce")
    bad = numeric.isna() | ~np.isfinite(numeric.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"{where(i)}, column '{column}': {values.iloc[i]!r} is not a whole number."
        )
    arr = numeric.to_numpy(dtype=float)
    frac = arr != np.round(arr)
    if frac.any():
        i = int(np.flatnonzero(frac)[0])
        raise InputError(
            f"{where(i)}, column '{column}': {values.iloc[i]!r} is not a whole number."
        )
    neg = arr < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise InputError(f"{where(i)}, column '{column}': {values.iloc[i]!r} is negative.")
    # Above this, floats no longer hold whole numbers exactly and the bootstrap's binomial
    # draws overflow (1e300 once reached NumPy as a negative count).
    big = arr > MAX_COUNT
    if big.any():
        i = int(np.flatnonzero(big)[0])
        raise InputError(
            f"{where(i)}, column '{column}': {values.iloc[i]!r} is larger than {MAX_COUNT:.0e}, "
            "the most test instances a task may count."
        )
    return arr.astype(np.int64)


def _positions(have: tuple[str, ...], wanted: Sequence[str] | None, what: str) -> list[int]:
    """Index of each wanted name in ``have`` (all of them for None); InputError for a name
    the table does not have."""
    if wanted is None:
        return list(range(len(have)))
    at: dict[str, int] = {}
    for i, name in enumerate(have):
        at.setdefault(name, i)
    unknown = [w for w in wanted if w not in at]
    if unknown:
        raise InputError(f"the counts have no {what} {unknown[0]!r}.", param=f"{what}s")
    return [at[w] for w in wanted]


def from_frame(
    df: pd.DataFrame, source: str = "counts", line_offset: int | None = None
) -> CountTable:
    """Validate a long counts frame and pivot it to a :class:`CountTable`.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns model, task, category, correct, total; one row per (model, task).
    source : str
        How errors name the input.
    line_offset : int, optional
        With it (2 for a CSV file with a header line) errors name the file line of a row;
        otherwise the 1-based row number.

    Returns
    -------
    CountTable

    Raises
    ------
    InputError
        Naming the row and column: missing columns or rows, an empty value, a count that is
        not a whole number or is negative, ``correct`` above ``total``, a repeated (model,
        task), a task in two categories, or a model without a row for some task.
    """

    def loc(i: int) -> str:
        return f"row {i + 1}" if line_offset is None else f"line {i + line_offset}"

    def where(i: int) -> str:
        return f"{source} {loc(i)}"

    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        names = ", ".join(f"'{c}'" for c in missing)
        raise InputError(
            f"{source} is missing column(s) {names}; expected model, task, category, correct, total."
        )
    if len(df) == 0:
        raise InputError(f"{source} has no rows.")
    df = df.reset_index(drop=True)
    labels = {}
    for col in ("model", "task", "category"):
        text = df[col].astype("string").str.strip()
        empty = text.isna() | (text == "")
        if empty.any():
            i = int(np.flatnonzero(empty.to_numpy())[0])
            raise InputError(f"{where(i)}, column '{col}': the value is empty.")
        labels[col] = text.astype(str).to_numpy()
    correct = _whole_numbers(df["correct"], "correct", where)
    total = _whole_numbers(df["total"], "total", where)
    zero = total == 0
    if zero.any():
        i = int(np.flatnonzero(zero)[0])
        raise InputError(
            f"{where(i)}, column 'total': a task needs at least one test instance, got 0."
        )
    over = correct > total
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise InputError(f"{where(i)}: correct ({correct[i]}) is larger than total ({total[i]}).")

    first_seen: dict[tuple[str, str], int] = {}
    for i, key in enumerate(zip(labels["model"], labels["task"])):
        if key in first_seen:
            raise InputError(
                f"{where(i)}: model '{key[0]}' on task '{key[1]}' appears twice "
                f"(first at {loc(first_seen[key])})."
            )
        first_seen[key] = i

    task_cat: dict[str, str] = {}
    for i, (task, cat) in enumerate(zip(labels["task"], labels["category"])):
        if task_cat.setdefault(task, cat) != cat:
            raise InputError(
                f"{where(i)}, column 'category': task '{task}' is in category '{cat}' here "
                f"but in '{task_cat[task]}' on an earlier row."
            )

    models = tuple(dict.fromkeys(labels["model"]))
    tasks = tuple(task_cat)
    mi = {m: k for k, m in enumerate(models)}
    ti = {t: k for k, t in enumerate(tasks)}
    rows = np.array([mi[m] for m in labels["model"]])
    cols = np.array([ti[t] for t in labels["task"]])
    seen = np.zeros((len(models), len(tasks)), dtype=bool)
    seen[rows, cols] = True
    if not seen.all():
        i, j = np.argwhere(~seen)[0]
        raise InputError(
            f"{source}: model '{models[i]}' has no row for task '{tasks[j]}'; every model needs every task."
        )
    C = np.zeros(seen.shape, dtype=np.int64)
    N = np.zeros(seen.shape, dtype=np.int64)
    C[rows, cols] = correct
    N[rows, cols] = total
    return CountTable(
        models=models,
        tasks=tasks,
        task_category=tuple(task_cat[t] for t in tasks),
        correct=C,
        total=N,
    )


def read_counts_csv(
    path: str | os.PathLike[str] | IO[bytes], name: str | None = None
) -> CountTable:
    """Read and validate a ``counts.csv`` file or file-like object (see :func:`from_frame`).

    Parameters
    ----------
    path : str, os.PathLike or file-like
        The CSV.
    name : str, optional
        How errors refer to the input (default: the file's name).

    Returns
    -------
    CountTable

    Raises
    ------
    InputError
        Naming the file line of the first problem.
    """
    df = read_counts(path, name)
    return from_frame(df, source=counts_name(path, name), line_offset=2)
