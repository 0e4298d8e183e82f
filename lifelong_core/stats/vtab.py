"""VTAB-1k as the LA-UR-24-25289 report (2024) analyses it (§3, Appendix A.1, Table A.3).

The repository carries five tables under ``data/vtab1k/`` (its README names sources and
licences): ``tasks.csv`` (19 tasks, their category and test-set size, from the
benchmark's own splits), ``published_table_a3.csv`` (the per-category and overall figures
of Table A.3 with their 83.4% intervals: bootstrap, Bayesian, and bootstrap on normalised
accuracy), ``published_ranks.csv`` (Table A.3's rank intervals under the five schemes and
Table 11's), ``published_pairwise.csv`` (Table 3) and ``leaderboard_results.csv``, the public VTAB leaderboard's per-task
accuracies (google-research/task_adaptation, Apache-2.0), turned into counts by
:func:`counts_from_leaderboard`. ``$LBE_VTAB_LEADERBOARD`` points at another file in that
format.

Like the paper (§3: "simulated data consistent with the per-task accuracies"), the
number correct of a model on a task is its published accuracy times the test-set size,
rounded to a whole number.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.paths import DATA_DIR  # the committed data, in a checkout or installed
from lifelong_core.stats.counts import CountTable

VTAB_DIR = DATA_DIR / "vtab1k"
TASKS_CSV = VTAB_DIR / "tasks.csv"
PUBLISHED_CSV = VTAB_DIR / "published_table_a3.csv"
PUBLISHED_RANKS_CSV = VTAB_DIR / "published_ranks.csv"
PUBLISHED_PAIRWISE_CSV = VTAB_DIR / "published_pairwise.csv"
LEADERBOARD_CSV = Path(
    os.environ.get("LBE_VTAB_LEADERBOARD") or VTAB_DIR / "leaderboard_results.csv"
)
CATEGORIES = ("natural", "specialized", "structured")


def load_tasks(path: str | Path = TASKS_CSV) -> pd.DataFrame:
    """The 19 VTAB tasks: task, category, test_examples (in the benchmark's order)."""
    return pd.read_csv(path)


def load_published(path: str | Path = PUBLISHED_CSV) -> pd.DataFrame:
    """The figures of LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for
    Aggregate Performance Metrics in Machine Learning Benchmarks*, Table A.3.

    Parameters
    ----------
    path : str or pathlib.Path
        The bundled CSV.

    Returns
    -------
    pandas.DataFrame
        model, method (bootstrap or bayesian), normalized, scope, mean_pct, lo_pct, hi_pct.
    """
    df = pd.read_csv(path)
    df["normalized"] = df["normalized"].astype(str).str.lower().eq("true")
    return df


def load_published_ranks(path: str | Path = PUBLISHED_RANKS_CSV) -> pd.DataFrame:
    """Table A.3's rank intervals (and Table 11's): model, method (bootstrap|bayesian),
    normalized, scheme (as :data:`lifelong_core.stats.ranks.SCHEMES`), mean, lo, hi (ranks)."""
    df = pd.read_csv(path)
    df["normalized"] = df["normalized"].astype(str).str.lower().eq("true")
    return df


def load_published_pairwise(path: str | Path = PUBLISHED_PAIRWISE_CSV) -> pd.DataFrame:
    """Table 3: model_a, model_b, method (bootstrap|bayesian), normalized, diff_pct, lo_pct,
    hi_pct (points; 95% with Bonferroni over the three comparisons)."""
    df = pd.read_csv(path)
    df["normalized"] = df["normalized"].astype(str).str.lower().eq("true")
    return df


def counts_from_leaderboard(
    path: str | Path = LEADERBOARD_CSV, tasks: pd.DataFrame | None = None, regime: str = "1000"
) -> CountTable:
    """Counts for the VTAB leaderboard's models from its per-task accuracy table: accuracy x
    test-set size, rounded, as LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification
    for Aggregate Performance Metrics in Machine Learning Benchmarks*, §3 does.

    The file's first row gives each column's training regime (``1000`` for VTAB-1k,
    ``full``, ``metadata``), the second row the task name; model rows follow after a
    ``method`` row. Only the columns of ``regime`` are used.

    Parameters
    ----------
    path : str or pathlib.Path
        The leaderboard CSV.
    tasks : pandas.DataFrame, optional
        Task facts (category, test-set size; default: the bundled ``tasks.csv``).
    regime : str
        The training regime read.

    Returns
    -------
    CountTable

    Raises
    ------
    InputError
        If the file is missing or too short, has no column of ``regime`` for a task, or an
        accuracy is not a percentage in [0, 100].
    """
    path = Path(path)
    tasks = load_tasks() if tasks is None else tasks
    try:
        raw = pd.read_csv(path, header=None, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError(
            f"the VTAB-1k leaderboard file {path} is not there; pass the path of a file in "
            "the format of google-research/task_adaptation's docs/data/results.csv "
            "(or set LBE_VTAB_LEADERBOARD)."
        ) from None
    if len(raw) < 4:
        raise InputError(
            f"{path.name} has fewer rows than the leaderboard format needs (regime, task, method, models)."
        )
    regimes, names = raw.iloc[0].tolist(), raw.iloc[1].tolist()
    column = {}
    for j, (reg, name) in enumerate(zip(regimes, names)):
        if reg == regime:
            column[name] = j
    missing = [t for t in tasks["task"] if t not in column]
    if missing:
        raise InputError(f"{path.name} has no '{regime}' column for task '{missing[0]}'.")
    body = raw.iloc[3:]
    models = tuple(body.iloc[:, 0].str.strip())
    acc = np.empty((len(models), len(tasks)))
    for t, task in enumerate(tasks["task"]):
        col = pd.to_numeric(body.iloc[:, column[task]], errors="coerce").to_numpy(dtype=float)
        if np.isnan(col).any() or (col < 0).any() or (col > 100).any():
            i = int(np.flatnonzero(np.isnan(col) | (col < 0) | (col > 100))[0])
            raise InputError(
                f"{path.name} line {i + 4}, task '{task}': accuracy must be a percentage in [0, 100]."
            )
        acc[:, t] = col
    n = np.broadcast_to(tasks["test_examples"].to_numpy(dtype=np.int64), acc.shape).copy()
    correct = np.rint(acc / 100.0 * n).astype(np.int64)
    return CountTable(
        models=models,
        tasks=tuple(tasks["task"]),
        task_category=tuple(tasks["category"]),
        correct=correct,
        total=n,
    )


def published_table(
    published: pd.DataFrame, method: str = "bootstrap", normalized: bool = False
) -> pd.DataFrame:
    """One block of LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for
    Aggregate Performance Metrics in Machine Learning Benchmarks*, Table A.3 as a wide frame.

    Parameters
    ----------
    published : pandas.DataFrame
        From :func:`load_published`.
    method : {"bootstrap", "bayesian"}
        The block's method.
    normalized : bool
        The normalised block.

    Returns
    -------
    pandas.DataFrame
        model, then mean, lo and hi per scope (percent).

    Raises
    ------
    InputError
        If the table has no such block.
    """
    sel = published[(published["method"] == method) & (published["normalized"] == normalized)]
    if sel.empty:
        raise InputError(
            f"the published VTAB table has no rows for method '{method}' (normalized={normalized})."
        )
    wide = sel.pivot(index="model", columns="scope", values=["mean_pct", "lo_pct", "hi_pct"])
    order = list(dict.fromkeys(sel["model"]))
    out = pd.DataFrame({"model": order})
    for scope in ("overall", *CATEGORIES):
        out[scope] = wide.loc[order, ("mean_pct", scope)].to_numpy()
        out[f"{scope}_lo"] = wide.loc[order, ("lo_pct", scope)].to_numpy()
        out[f"{scope}_hi"] = wide.loc[order, ("hi_pct", scope)].to_numpy()
    return out
