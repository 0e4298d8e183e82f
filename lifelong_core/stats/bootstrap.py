"""Bootstrap of test instances within each task (LA-UR-24-25289 report, 2024, §2.1) and what follows from it.

For each task ``t`` of size ``n_t`` a bootstrap replicate resamples ``n_t`` test
instances with replacement and records the task accuracy; the benchmark's aggregation
rule (an unweighted mean over tasks for VTAB, or any task weights) turns the replicate's
task accuracies into one score per model. Percentile intervals of the replicate scores
are the confidence intervals; differences of replicate scores give intervals for
pairwise differences (§2.1, Table 3), with a Bonferroni correction for several
comparisons.

Vectorisation: for a 0/1 metric only the number of correct instances in a resample
matters, and resampling ``n_t`` instances of which ``c_t`` are correct gives a count
distributed exactly ``Binomial(n_t, c_t / n_t)``. So a replicate is one binomial draw
per model x task, drawn for all replicates at once, never a loop over instances. As in
the paper, the resampling is independent between models (they have no shared per-item
responses here), so correlation between models is ignored (§2.3 discusses it).

Each model draws from its own random stream, seeded by the seed and the model's name, so
a model's replicates are the same whichever other models are bootstrapped with it: a
page that shows a few models of a source reads exactly the replicates the whole source
has (which normalisation bounds, :mod:`.normalize`, are taken over).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.stats.counts import CountTable

DISPLAY_LEVEL = 0.834  # Goldstein & Healy (1995): overlap of 83.4% intervals ~ a 5% test
DIFFERENCE_LEVEL = 0.95
# Replicate scores are float64 plus the int64 draws: 16 bytes a cell, so this caps a
# bootstrap at about 2.4 GB however many replicates are asked for.
MAX_REPLICATE_CELLS = 150_000_000


@dataclass(frozen=True, eq=False)
class Bootstrap:
    """Bootstrap replicates of the task scores of the models of ``table`` (LA-UR-24-25289 report
    (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine
    Learning Benchmarks*, §2.1).

    Attributes
    ----------
    table : CountTable
        The counts resampled.
    scores : numpy.ndarray
        (replicates, models, tasks) task scores, fractions.
    seed : int
        Seed of the draw.
    low, high : numpy.ndarray, optional
        Per-task normalisation bounds when the scores are normalised (see
        :func:`lifelong_core.stats.normalize.normalize`), else None; both or neither.

    Raises
    ------
    InputError
        If only one of ``low`` and ``high`` is given.
    """

    table: CountTable
    scores: np.ndarray
    seed: int
    low: np.ndarray | None = None
    high: np.ndarray | None = None

    def __post_init__(self) -> None:
        # One bound without the other would leave ``point`` on another scale than ``scores``.
        if (self.low is None) != (self.high is None):
            raise InputError("normalisation bounds need both low and high, or neither.")

    @property
    def normalized(self) -> bool:
        """Whether the scores are normalised (carry ``low`` and ``high``)."""
        return self.low is not None

    @property
    def point(self) -> np.ndarray:
        """Observed task scores (no resampling) on the same scale as ``scores``."""
        acc = self.table.accuracy
        if self.low is None or self.high is None:
            return acc
        return _rescale(acc, self.low, self.high)

    def aggregate(self, task_weights: np.ndarray | None = None) -> np.ndarray:
        """Replicate aggregate scores.

        Parameters
        ----------
        task_weights : numpy.ndarray, optional
            Weights over tasks (default: the unweighted mean over all tasks).

        Returns
        -------
        numpy.ndarray
            (replicates, models).
        """
        w = uniform_task_weights(self.table) if task_weights is None else task_weights
        return self.scores @ w


def _rescale(x: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    span = high - low
    # A task on which every replicate of every model scored the same cannot separate
    # models; giving it 1 everywhere keeps it neutral in means and ranks.
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, (x - low) / safe, 1.0)


def bootstrap(table: CountTable, n_boot: int = 2000, seed: int = 0) -> Bootstrap:
    """Draw ``n_boot`` bootstrap replicates of every model's task accuracies (LA-UR-24-25289 report
    (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine
    Learning Benchmarks*, §2.1).

    Resamples the ``n_t`` test instances of each task with replacement, implemented as one
    vectorised binomial draw per model x task (see the module docstring).

    Parameters
    ----------
    table : CountTable
        The counts.
    n_boot : int
        Replicates.
    seed : int
        Seed of the draw.

    Returns
    -------
    Bootstrap

    Raises
    ------
    InputError
        If ``n_boot`` or the seed is out of range, or the replicates would not fit in memory.
    """
    n_boot = limits.check_count(
        n_boot, "the number of bootstrap replicates", 2, limits.MAX_BOOT, "n_boot"
    )
    seed = limits.check_seed(seed)
    n = table.total
    cells = int(n_boot) * n.size
    if cells > MAX_REPLICATE_CELLS:
        raise InputError(
            f"{n_boot} replicates of {n.shape[0]} models x {n.shape[1]} tasks would need about "
            f"{cells * 16 / 1e9:.0f} GB; use at most {MAX_REPLICATE_CELLS // n.size} replicates."
        )
    scores = np.empty((int(n_boot),) + n.shape)
    for i in range(len(table.models)):
        scores[:, i] = model_replicates(table, i, n_boot, seed)
    return Bootstrap(table=table, scores=scores, seed=seed)


def model_stream(name: str, seed: int) -> np.random.Generator:
    """The random stream of model ``name``'s replicates: seeded by ``seed`` and the name, so
    it does not depend on the other models of the table."""
    key = int.from_bytes(hashlib.blake2b(str(name).encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(np.random.SeedSequence([int(seed), key]))


def model_replicates(table: CountTable, i: int, n_boot: int, seed: int) -> np.ndarray:
    """Replicate task accuracies (n_boot, tasks) of model ``i`` of ``table``."""
    n = table.total[i]
    draws = model_stream(table.models[i], seed).binomial(
        n, table.correct[i] / n, size=(int(n_boot), len(n))
    )
    return draws / n


def uniform_task_weights(table: CountTable, category: str | None = None) -> np.ndarray:
    """Weights over tasks: the unweighted mean over all tasks, or over one category's tasks.

    Parameters
    ----------
    table : CountTable
        The counts.
    category : str, optional
        A category of the table.

    Returns
    -------
    numpy.ndarray
        (tasks,), summing to 1.

    Raises
    ------
    InputError
        If no task is in ``category``.
    """
    if category is None:
        mask = np.ones(len(table.tasks), dtype=bool)
    else:
        mask = table.category_mask(category)
        if not mask.any():
            raise InputError(f"there is no task in category '{category}'.")
    return mask / mask.sum()


def category_task_weights(table: CountTable, weights: Mapping[str, float]) -> np.ndarray:
    """Task weights from category weights: each category's weight spread evenly over its tasks.

    This is the weighted score of LA-UR-24-25289 report (2024), *Statistical Uncertainty
    Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*, §2.3 and
    Appendix A.2 (Eq. 6): sum over categories of
    ``w_c`` times the category's unweighted mean accuracy.

    Parameters
    ----------
    table : CountTable
        The counts.
    weights : mapping of str to float
        Weight of each category.

    Returns
    -------
    numpy.ndarray
        (tasks,).

    Raises
    ------
    InputError
        If a weight names a category the table does not have, or the weights are negative
        or all zero.
    """
    unknown = [c for c in weights if c not in table.categories]
    if unknown:
        raise InputError(
            f"category weight for '{unknown[0]}' does not match any category in the data."
        )
    total = float(sum(weights.values()))
    if total <= 0 or any(v < 0 for v in weights.values()):
        raise InputError("category weights must be non-negative and not all zero.")
    w = np.zeros(len(table.tasks))
    for cat, value in weights.items():
        w += (value / total) * uniform_task_weights(table, cat)
    return w


def percentile_interval(
    samples: np.ndarray, level: float, axis: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and equal-tailed percentile interval of ``samples`` along ``axis``.

    Parameters
    ----------
    samples : numpy.ndarray
        Draws.
    level : float
        Coverage, strictly between 0 and 1.
    axis : int
        The axis of the draws.

    Returns
    -------
    tuple of numpy.ndarray
        (mean, lo, hi).

    Raises
    ------
    InputError
        If ``level`` is not strictly between 0 and 1.
    """
    check_level(level)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(samples, [tail, 1.0 - tail], axis=axis)
    return samples.mean(axis=axis), lo, hi


def check_level(level: float) -> None:
    """Refuse an interval level that is not strictly between 0 and 1.

    Parameters
    ----------
    level : float
        The level.

    Raises
    ------
    InputError
        If ``level`` is not a number strictly between 0 and 1.
    """
    if not 0.0 < float(level) < 1.0:
        raise InputError(f"the interval level must be strictly between 0 and 1, got {level}.")


def scopes(table: CountTable) -> list[str]:
    """``overall`` followed by each category: the scopes of ``ranks.csv``."""
    return ["overall", *table.categories]


def leaderboard(boot: Bootstrap, level: float = DISPLAY_LEVEL) -> pd.DataFrame:
    """Bootstrap mean and percentile interval of every model's score, per scope (LA-UR-24-25289
    report (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in
    Machine Learning Benchmarks*, §2.1,
    §3, Table A.3).

    Scope ``overall`` is the unweighted mean over all tasks (VTAB's rule, Table A.3 column
    "Overall"); a category scope is the unweighted mean over that category's tasks.

    Parameters
    ----------
    boot : Bootstrap
        The replicates.
    level : float
        Coverage of the intervals (83.4% by default, as Table A.3).

    Returns
    -------
    pandas.DataFrame
        model, scope, mean, lo, hi (fractions), point (the observed score); ordered by
        scope, then by decreasing mean.
    """
    table = boot.table
    frames = []
    for scope in scopes(table):
        w = uniform_task_weights(table, None if scope == "overall" else scope)
        mean, lo, hi = percentile_interval(boot.aggregate(w), level)
        df = pd.DataFrame(
            {
                "model": table.models,
                "scope": scope,
                "mean": mean,
                "lo": lo,
                "hi": hi,
                "point": boot.point @ w,
            }
        )
        frames.append(df.sort_values("mean", ascending=False, kind="stable"))
    return pd.concat(frames, ignore_index=True)


def pairwise_differences(
    boot: Bootstrap,
    models: Sequence[str] | None = None,
    level: float = DIFFERENCE_LEVEL,
    bonferroni: bool = True,
    task_weights: np.ndarray | None = None,
) -> pd.DataFrame:
    """Intervals for ``score(a) - score(b)`` over all pairs of ``models`` (LA-UR-24-25289 report
    (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine
    Learning Benchmarks*, §2.1, Table 3).

    With ``bonferroni`` the per-comparison level is ``1 - (1 - level) / m`` for ``m``
    comparisons, which guards the family at ``level``.

    Parameters
    ----------
    boot : Bootstrap
        The replicates.
    models : sequence of str, optional
        The models compared, in the order pairs are formed (default: every model).
    level : float
        Family-wise (or per-comparison, without Bonferroni) coverage.
    bonferroni : bool
        Apply the Bonferroni correction.
    task_weights : numpy.ndarray, optional
        Weights over tasks (default: the unweighted mean).

    Returns
    -------
    pandas.DataFrame
        model_a, model_b, diff, lo, hi (fractions), level (per comparison), excludes_zero.

    Raises
    ------
    InputError
        If ``level`` is out of range or a model is unknown.
    """
    check_level(level)
    table = boot.table
    names = list(table.models if models is None else models)
    for m in names:
        if m not in table.models:
            raise InputError(f"model '{m}' is not in the data.")
    idx = [table.models.index(m) for m in names]
    agg = boot.aggregate(task_weights)
    pairs = [(i, j) for k, i in enumerate(idx) for j in idx[k + 1 :]]
    if not pairs:
        return pd.DataFrame(
            columns=["model_a", "model_b", "diff", "lo", "hi", "level", "excludes_zero"]
        )
    per_level = 1.0 - (1.0 - level) / len(pairs) if bonferroni else level
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    mean, lo, hi = percentile_interval(agg[:, a] - agg[:, b], per_level)
    return pd.DataFrame(
        {
            "model_a": [table.models[i] for i in a],
            "model_b": [table.models[j] for j in b],
            "diff": mean,
            "lo": lo,
            "hi": hi,
            "level": per_level,
            "excludes_zero": (lo > 0) | (hi < 0),
        }
    )
