"""The Open LLM Leaderboard v2 per-item results under ``data/open_llm_leaderboard_v2``.

Real language-model results: 0/1 correctness of Hugging Face models on IFEval (541 items),
MuSR (756) and MATH-hard (894), as released under the MIT license with Guanhua Zhang,
Florian E. Dorner and Moritz Hardt, "How Benchmark Prediction from Fewer Data Misses the
Mark" (2025). Each ``<task>.npz`` holds ``correct`` (models x items, uint8) and ``models``
(names, row order).

The store receives the data the way a user's import would: one long table per task
(model, sample, correct, dataset, domain, category) through :meth:`Store.insert_long`.
That path keeps a (model, sample) pair repeated with identical values once and refuses
repeats that disagree, which is exactly what the release needs: 19 names appear twice
with identical rows. One model has no MATH-hard row; it is stored with what it has and
its metadata says ``"partial"``. :func:`describe` finds both so the build can report them.

Sample ids are lm-evaluation-harness items, ``<lm-eval task>/<doc_id>``: the release's own
code built each task's columns from the leaderboard's per-sample details of its subtasks,
subtask after subtask, and ``lm_eval_tasks.csv`` beside the files records which columns are
which subtask (IFEval 1 subtask, MuSR 3, MATH-hard 5 of the leaderboard's 7: the release
leaves out ``leaderboard_math_algebra_hard`` and ``leaderboard_math_counting_and_prob_hard``).
A column's offset within its subtask is the item's ``doc_id``, on the one assumption that the
details list each subtask's items in ascending ``doc_id`` (how the leaderboard writes them).
The domain of a sample is its task file (``ifeval``, ``musr``, ``math_hard``), and the store
records each subtask's per-sample metric (``prompt_level_strict_acc``, ``acc_norm``,
``exact_match``) as the metric a new model's lm-eval run is read with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.paths import DATA_DIR

if TYPE_CHECKING:
    from lifelong_core.store.store import Store

DEFAULT_SOURCE = DATA_DIR / "open_llm_leaderboard_v2"
# Which lm-evaluation-harness subtask each column range of a task file is (see the module
# docstring and the data folder's README).
ITEMS_FILE = "lm_eval_tasks.csv"
ITEMS_COLUMNS = ("file", "first_column", "items", "lm_eval_task", "metric")
DATASET = "open-llm-leaderboard-v2"
TASKS = ("ifeval", "musr", "math_hard")
TASK_TITLES = {"ifeval": "IFEval", "musr": "MuSR", "math_hard": "MATH-hard"}
SOURCE = (
    "Open LLM Leaderboard v2 per-item results, released (MIT) with Zhang, Dorner & Hardt, "
    "'How Benchmark Prediction from Fewer Data Misses the Mark' (2025)"
)


@dataclass(frozen=True)
class Leaderboard:
    """The release in memory, with what is irregular about it."""

    tables: dict  # task -> (correct uint8 models x items, names np.ndarray of str)
    duplicated: list  # names listed twice or more within a task's file (any task)
    partial: dict  # name -> tasks it has no results on
    items: pd.DataFrame  # the column ranges of lm_eval_tasks.csv, one row per subtask

    @property
    def names(self) -> list[str]:
        """Every distinct model name, in first-appearance order over the tasks."""
        return list(dict.fromkeys(n for t in self.tables for n in self.tables[t][1].tolist()))


def load(source: str | Path = DEFAULT_SOURCE) -> Leaderboard:
    """Read the three task files of the bundled Open LLM Leaderboard v2 results (Zhang, Dorner
    and Hardt, 2025, "How Benchmark Prediction from Fewer Data Misses the Mark").

    Parameters
    ----------
    source : str or pathlib.Path
        The folder holding the task files.

    Returns
    -------
    Leaderboard

    Raises
    ------
    InputError
        Naming the file when one is missing or unusable.
    """
    source = Path(source)
    tables = {}
    for task in TASKS:
        path = source / f"{task}.npz"
        if not path.is_file():
            raise InputError(f"leaderboard file {path} does not exist.")
        try:
            with np.load(path, allow_pickle=False) as z:
                correct, names = np.asarray(z["correct"]), np.asarray(z["models"]).astype(str)
        except (KeyError, ValueError, OSError) as exc:
            raise InputError(
                f"{path} is not a leaderboard file with arrays 'correct' and 'models' ({exc})."
            ) from None
        if correct.ndim != 2 or correct.shape[0] != len(names):
            raise InputError(f"{path} has {correct.shape} results for {len(names)} model names.")
        tables[task] = (correct, names)
    dup = sorted(
        {
            n
            for _, names in tables.values()
            for n, c in zip(*np.unique(names, return_counts=True))
            if c > 1
        }
    )
    everyone = {n for _, names in tables.values() for n in names.tolist()}
    partial = {}
    for n in sorted(everyone):
        missing = [t for t in TASKS if n not in set(tables[t][1].tolist())]
        if missing:
            partial[n] = missing
    return Leaderboard(tables, dup, partial, read_items(source, tables))


def read_items(source: str | Path, tables: dict) -> pd.DataFrame:
    """The column ranges of ``lm_eval_tasks.csv``, checked to cover every column of every
    task file exactly once, in order.

    Parameters
    ----------
    source : str or pathlib.Path
        The folder holding the task files and ``lm_eval_tasks.csv``.
    tables : dict
        Task -> (correct, names), as :func:`load` reads them.

    Returns
    -------
    pandas.DataFrame
        ``file``, ``first_column``, ``items``, ``lm_eval_task``, ``metric``; one row per
        subtask, in file order.

    Raises
    ------
    InputError
        Naming the file when it is missing, lacks a column, or its ranges do not tile a
        task file's columns.
    """
    path = Path(source) / ITEMS_FILE
    if not path.is_file():
        raise InputError(f"leaderboard file {path} does not exist.")
    items = pd.read_csv(path, dtype={"file": str, "lm_eval_task": str, "metric": str})
    missing = [c for c in ITEMS_COLUMNS if c not in items.columns]
    if missing:
        raise InputError(f"{path} has no column {missing[0]!r}.")
    for task in TASKS:
        rows = items[items["file"] == task]
        n = tables[task][0].shape[1]
        ends = (rows["first_column"] + rows["items"]).tolist()
        if rows["first_column"].tolist() != [0, *ends[:-1]] or (ends[-1:] or [0])[0] != n:
            raise InputError(
                f"{path}: the column ranges of {task} do not cover its {n} columns in order."
            )
    return items[list(ITEMS_COLUMNS)].reset_index(drop=True)


def sample_ids(lb: Leaderboard, task: str) -> np.ndarray:
    """The sample ids of a task file's columns, in column order: ``<lm-eval task>/<doc_id>``.

    Parameters
    ----------
    lb : Leaderboard
        The release, as :func:`load` reads it.
    task : str
        One of :data:`TASKS`.

    Returns
    -------
    numpy.ndarray
        Object array of ids, one per column.
    """
    rows = lb.items[lb.items["file"] == task]
    return np.array(
        [f"{sub}/{j}" for sub, k in zip(rows["lm_eval_task"], rows["items"]) for j in range(k)],
        dtype=object,
    )


def harness_metrics(lb: Leaderboard) -> dict[str, tuple[str, None]]:
    """The per-sample metric of each lm-eval subtask (its only filter): what the release
    scored each column with.

    Parameters
    ----------
    lb : Leaderboard
        The release, as :func:`load` reads it.

    Returns
    -------
    dict of str to (str, None)
        lm-eval task -> (metric, None).
    """
    return {str(t): (str(m), None) for t, m in zip(lb.items["lm_eval_task"], lb.items["metric"])}


def long_table(lb: Leaderboard, task: str) -> pd.DataFrame:
    """One task as the long import format (every row of the file, repeats included)."""
    correct, names = lb.tables[task]
    m, n = correct.shape
    return pd.DataFrame(
        {
            "model": np.repeat(names.astype(object), n),
            "sample": np.tile(sample_ids(lb, task), m),
            "correct": correct.reshape(-1),
            "dataset": DATASET,
            "domain": task,
            # Each task is its own category, so Task weighting can weigh the three tasks.
            "category": task,
        }
    )


def models_table(lb: Leaderboard) -> pd.DataFrame:
    """Model fields: name = the Hugging Face name, family = its organisation (the part
    before ``/``), metadata naming the source and, for a partial model, what it lacks."""
    rows = []
    for name in lb.names:
        meta = {"source": "Open LLM Leaderboard v2"}
        if name in lb.partial:
            meta["partial"] = "no results on " + ", ".join(TASK_TITLES[t] for t in lb.partial[name])
        rows.append(
            {
                "model_id": name,
                "name": name,
                "family": name.split("/")[0] if "/" in name else None,
                "metadata": json.dumps(meta, sort_keys=True, separators=(",", ":")),
            }
        )
    return pd.DataFrame(rows)


def description(lb: Leaderboard) -> str:
    """The dataset's description in the store (Home shows it): what it is and its quirks."""
    sizes = ", ".join(f"{TASK_TITLES[t]} ({lb.tables[t][0].shape[1]} items)" for t in TASKS)
    text = (
        f"Open LLM Leaderboard v2: real per-item results of {len(lb.names)} language models on {sizes}, "
        "released with Zhang, Dorner & Hardt (2025). Sample ids are lm-evaluation-harness items, "
        "<lm-eval task>/<doc_id> (the leaderboard's subtasks; two MATH-hard subtasks are not in the release), "
        "assuming the leaderboard's details list each subtask's items in ascending doc_id."
    )
    if lb.duplicated:
        text += f" {len(lb.duplicated)} model names appear twice in the release with identical rows; each is stored once."
    for name, tasks in lb.partial.items():
        text += f" {name} has no {', '.join(TASK_TITLES[t] for t in tasks)} results: stored with what it has, marked partial."
    return text


def insert(
    store: Store, source: str | Path = DEFAULT_SOURCE, lb: Leaderboard | None = None
) -> dict:
    """Add the leaderboard dataset to an open, writable store.

    Parameters
    ----------
    store : Store
        A writer handle.
    source : str or pathlib.Path
        The folder holding the task files (named in the store's log).
    lb : Leaderboard, optional
        The files already read (default: read them from ``source``).

    Returns
    -------
    dict
        dataset, models, entries, and the quirks of the data (duplicated, partial).

    Raises
    ------
    InputError
        If the files are unusable or conflict with what the store holds; the store is then
        unchanged.
    """
    lb = lb or load(source)
    store.add_dataset(DATASET, description=description(lb), synthetic=False, source=SOURCE)
    models = models_table(lb)
    entries = 0
    for task in TASKS:
        table = long_table(lb, task)
        # insert_long needs a model row for exactly the models this table names.
        summary = store.insert_long(
            table,
            source=str(Path(source) / f"{task}.npz"),
            models=models[models["model_id"].isin(set(lb.tables[task][1].tolist()))],
        )
        entries += int(summary.get("entries", 0))
    store.set_harness_metrics(DATASET, harness_metrics(lb))
    return {
        "dataset": DATASET,
        "models": len(lb.names),
        "entries": entries,
        "duplicated": lb.duplicated,
        "partial": lb.partial,
    }
