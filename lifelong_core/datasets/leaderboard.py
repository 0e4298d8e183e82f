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

Sample ids are ``<task>/<index>``, where the index is the item's column in the release,
not necessarily the harness's ``doc_id``: the release carries no item ids.
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
    return Leaderboard(tables, dup, partial)


def long_table(lb: Leaderboard, task: str) -> pd.DataFrame:
    """One task as the long import format (every row of the file, repeats included)."""
    correct, names = lb.tables[task]
    m, n = correct.shape
    return pd.DataFrame(
        {
            "model": np.repeat(names.astype(object), n),
            "sample": np.tile(np.array([f"{task}/{j}" for j in range(n)], dtype=object), m),
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
        "released with Zhang, Dorner & Hardt (2025). Sample ids are <task>/<index>; an index is the item's "
        "position in the release, not necessarily the harness's doc_id."
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
    return {
        "dataset": DATASET,
        "models": len(lb.names),
        "entries": entries,
        "duplicated": lb.duplicated,
        "partial": lb.partial,
    }
