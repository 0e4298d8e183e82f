"""Bands over repeated Sort splits: how much of a budget curve is the luck of one split.

The papers draw one Sort split per curve (Prabhu et al. 2024, "Efficient Lifelong Model
Evaluation in an Era of Rapid Progress", §4); a reader cannot then tell a real difference
between two configurations from the spread between splits. Here a sweep is repeated with
seeds ``seed, seed + 1, ...`` (repeat ``r`` draws its Sort set, and its random samples,
with ``seed + r``, so repeat 0 is the single run of the same seed) and each curve is
summarised by its mean and the central ``level`` range of the repeats (percentiles; with
few repeats this is close to their minimum and maximum).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError

METRICS = (
    "mae",
    "eagg",
    "kappa",
    "pearson",
    "spearman",
    "aleatoric",
    "epistemic",
    "kappa_aleatoric",
    "kappa_epistemic",
)


def repeat_seeds(seed: int, repeats: int) -> list[int]:
    """Seeds of the repeats: ``seed, seed + 1, ..., seed + repeats - 1``.

    Parameters
    ----------
    seed : int
        The first seed.
    repeats : int
        How many.

    Returns
    -------
    list of int

    Raises
    ------
    InputError
        If the seed or the number of repeats is out of range.
    """
    repeats = limits.check_count(repeats, "the number of repeats", 1, limits.MAX_REPEATS, "repeats")
    seed = limits.check_seed(seed)
    limits.check_seed(
        seed + repeats - 1, "repeats", "the last repeat's seed (the seed + repeats - 1)"
    )
    return [seed + r for r in range(repeats)]


def band_summary(
    tables: Sequence[pd.DataFrame],
    level: float = 0.95,
    by: Sequence[str] = ("budget",),
    metrics: Sequence[str] = METRICS,
) -> pd.DataFrame:
    """Mean and central ``level`` band of every metric column over repeated tables.

    Parameters
    ----------
    tables : sequence of pandas.DataFrame
        One per repeat, each with the ``by`` columns and metric columns.
    level : float
        The band's coverage.
    by : sequence of str
        The grouping columns.
    metrics : sequence of str
        The metric columns summarised (those present in every table).

    Returns
    -------
    pandas.DataFrame
        One row per ``by`` group: the mean under the metric's own name, ``<metric>_lo`` /
        ``<metric>_hi`` (percentiles ``(1 - level) / 2`` and ``(1 + level) / 2``, linear
        interpolation), and ``repeats`` (how many tables had the group). A single table gives
        a zero-width band.
    """
    if not tables:
        raise InputError("no repeated tables to summarise.")
    if not 0 < level < 1:
        raise InputError(f"the band level must lie strictly between 0 and 1, got {level}.")
    by = list(by)
    metrics = [c for c in metrics if all(c in t for t in tables)]
    long = pd.concat(
        [t[by + metrics].assign(_repeat=i) for i, t in enumerate(tables)], ignore_index=True
    )
    q = [(1 - level) / 2, (1 + level) / 2]
    rows = []
    for key, g in long.groupby(by, sort=True):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        for c in metrics:
            v = g[c].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            row[c] = float(v.mean()) if len(v) else np.nan
            lo, hi = np.percentile(v, [100 * q[0], 100 * q[1]]) if len(v) else (np.nan, np.nan)
            row[f"{c}_lo"], row[f"{c}_hi"] = float(lo), float(hi)
        row["repeats"] = int(g["_repeat"].nunique())
        rows.append(row)
    cols = by + [x for c in metrics for x in (c, f"{c}_lo", f"{c}_hi")] + ["repeats"]
    return pd.DataFrame(rows, columns=cols)
