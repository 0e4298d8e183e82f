"""Rank intervals under the five aggregation schemes of the LA-UR-24-25289 report (2024) §3.2 (Tables 4, 5, A.3).

Each bootstrap replicate (or posterior predictive draw) of the task scores is turned
into one number per model by each scheme, and the mean and percentile interval of those
numbers over replicates are reported:

1. ``mean``: rank of the unweighted mean over tasks;
2. ``geometric``: rank of the geometric mean over tasks;
3. ``avg_rank``: rank models within each task, then average the ranks over tasks;
4. ``avg_rank_noise``: as 3 after adding N(0, 1) noise, in percentage points, to every
   task score (the VTAB paper's tie-breaking variant);
5. ``avg_rank_bins``: as 3 after putting scores into 1-percentage-point bins; models in
   the same bin tie.

Rank 1 is the best model. For schemes 3-5 the reported number is the average rank
itself, as in the paper's tables. Ties (frequent in 5, possible in 2 when a normalised
score is 0) get the largest rank of the tied group in every scheme: the paper's binned
average ranks are all larger than the unbinned ones, which is what such ties give
(average ties would keep the mean rank at (M + 1) / 2). That reading is ours; the text
only says "a tie rank". On continuous scores without ties all conventions agree.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from lifelong_core.errors import InputError
from lifelong_core.stats.bootstrap import DIFFERENCE_LEVEL, percentile_interval

SCHEMES = {
    "mean": "By average",
    "geometric": "Geometric mean",
    "avg_rank": "Average rank",
    "avg_rank_noise": "Average rank (noise)",
    "avg_rank_bins": "Average rank (1% bins)",
}


def _rank_desc(values: np.ndarray, axis: int) -> np.ndarray:
    return rankdata(-values, axis=axis, method="max")


def scheme_values(scores: np.ndarray, scheme: str, rng: np.random.Generator) -> np.ndarray:
    """Per-replicate rank number of every model, shape (replicates, models).

    ``scores`` has shape (replicates, models, tasks), fractions.
    """
    if scheme == "mean":
        return _rank_desc(scores.mean(axis=2), axis=1)
    if scheme == "geometric":
        with np.errstate(divide="ignore"):
            # A zero task score (possible after normalisation) makes the geometric mean 0.
            gm = np.exp(np.log(np.clip(scores, 0.0, None)).mean(axis=2))
        return _rank_desc(gm, axis=1)
    if scheme == "avg_rank":
        return _rank_desc(scores, axis=1).mean(axis=2)
    if scheme == "avg_rank_noise":
        noisy = scores * 100.0 + rng.standard_normal(scores.shape)
        return _rank_desc(noisy, axis=1).mean(axis=2)
    if scheme == "avg_rank_bins":
        # The small offset keeps 0.57 (stored as 56.99999...) in the 57 bin.
        binned = np.floor(scores * 100.0 + 1e-9)
        return _rank_desc(binned, axis=1).mean(axis=2)
    raise InputError(f"unknown rank scheme '{scheme}'; choose one of {', '.join(SCHEMES)}.")


def rank_intervals(
    scores: np.ndarray,
    models: Sequence[str],
    level: float = DIFFERENCE_LEVEL,
    schemes: Sequence[str] = tuple(SCHEMES),
    seed: int = 0,
) -> pd.DataFrame:
    """Mean and percentile interval of each model's rank number under each scheme (LA-UR-24-25289
    report (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in
    Machine Learning Benchmarks*, §3.2,
    Tables 4 and 5).

    Parameters
    ----------
    scores : numpy.ndarray
        Replicate task scores (replicates, models, tasks), e.g. ``Bootstrap.scores``.
    models : sequence of str
        The model of each score row.
    level : float
        Coverage (95% by default, as Tables 4 and 5).
    schemes : sequence of str
        Aggregation schemes of :data:`SCHEMES` (a list, not one string).
    seed : int
        Seed of the noise scheme.

    Returns
    -------
    pandas.DataFrame
        model, scheme, mean, lo, hi.

    Raises
    ------
    InputError
        For mis-shaped scores, one string of schemes or an unknown scheme.
    """
    if isinstance(schemes, str):
        raise InputError(f"schemes must be a list of scheme names, not one string ({schemes!r}).")
    if scores.ndim != 3 or scores.shape[1] != len(models):
        raise InputError("rank intervals need replicate scores shaped (replicates, models, tasks).")
    rng = np.random.default_rng(seed)
    frames = []
    for scheme in schemes:
        mean, lo, hi = percentile_interval(scheme_values(scores, scheme, rng), level)
        frames.append(
            pd.DataFrame(
                {"model": list(models), "scheme": scheme, "mean": mean, "lo": lo, "hi": hi}
            )
        )
    return pd.concat(frames, ignore_index=True)
