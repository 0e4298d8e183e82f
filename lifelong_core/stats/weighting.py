"""Task weighting over three categories with standard-error gray zones (LA-UR-24-25289 report, 2024, §2.3, §3.3, A.2).

For category weights ``w = (w_1, w_2, w_3)`` on the simplex, a model's weighted score is
``sum_c w_c * mean_c``, where ``mean_c`` is its unweighted mean accuracy over the tasks
of category ``c`` (A.2, Eq. 4 and 6). Under independence between tasks,
``Var(mean_c) = (1 / K_c^2) * sum_t p_t (1 - p_t) / n_t`` (Eq. 5, binomial standard
errors) and ``Var(score) = sum_c w_c^2 Var(mean_c)`` (Eq. 7). At each grid point the two
best models are compared; the standard error of their difference allows a correlation
``rho`` between them (Eq. 3)::

    SE^2 = Var_1 + Var_2 - 2 * rho * sqrt(Var_1 * Var_2)

and the point is *indeterminate* when ``score_1 - score_2 <= k * SE``. As in §3.3 this is
a picture drawn with uncertainty, not a significance test.

For normalised metrics (Figure 4) the category means and their variances come from the
bootstrap replicates instead (:func:`category_stats_from_bootstrap`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.stats.bootstrap import Bootstrap, uniform_task_weights
from lifelong_core.stats.counts import CountTable

INDETERMINATE = "indeterminate"
MAX_GRID_DIVISIONS = 1000  # 501,501 weightings; finer grids only cost memory


@dataclass(frozen=True, eq=False)
class CategoryStats:
    """Per-model category means and their variances (LA-UR-24-25289 report (2024), *Statistical
    Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*,
    Appendix A.2).

    Attributes
    ----------
    models : tuple of str
        Model names.
    categories : tuple of str
        The three categories.
    mean, var : numpy.ndarray
        (models, 3) means and variances of the means.
    """

    models: tuple[str, ...]
    categories: tuple[str, str, str]
    mean: np.ndarray
    var: np.ndarray


def _three(table: CountTable, categories: Sequence[str] | None) -> tuple[str, str, str]:
    cats = tuple(table.categories if categories is None else categories)
    if len(cats) != 3:
        found = ", ".join(table.categories)
        raise InputError(
            f"task weighting needs exactly three categories, but the data has {len(table.categories)} ({found})."
            if categories is None
            else f"task weighting needs exactly three categories, got {len(cats)}."
        )
    if len(set(cats)) != 3:
        raise InputError("the three categories for task weighting must be different.")
    for c in cats:
        if c not in table.categories:
            raise InputError(f"category '{c}' is not in the data.")
    return cats


def category_stats(table: CountTable, categories: Sequence[str] | None = None) -> CategoryStats:
    """Category means and binomial variances of the means (LA-UR-24-25289 report (2024),
    *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning
    Benchmarks*, Appendix A.2, Eq. 4-5).

    Parameters
    ----------
    table : CountTable
        The counts.
    categories : sequence of str, optional
        The three categories (default: the table's, when it has exactly three).

    Returns
    -------
    CategoryStats

    Raises
    ------
    InputError
        Unless exactly three different categories of the table are named.
    """
    cats = _three(table, categories)
    p = table.accuracy
    var_task = p * (1.0 - p) / table.total
    mean = np.empty((len(table.models), 3))
    var = np.empty((len(table.models), 3))
    for k, c in enumerate(cats):
        w = uniform_task_weights(table, c)
        mean[:, k] = p @ w
        var[:, k] = var_task @ (w**2)
    return CategoryStats(models=table.models, categories=cats, mean=mean, var=var)


def category_stats_from_bootstrap(
    boot: Bootstrap, categories: Sequence[str] | None = None
) -> CategoryStats:
    """Category means and variances estimated from bootstrap replicates (e.g. normalised).

    Parameters
    ----------
    boot : Bootstrap
        The replicates.
    categories : sequence of str, optional
        The three categories (default: the table's, when it has exactly three).

    Returns
    -------
    CategoryStats

    Raises
    ------
    InputError
        Unless exactly three different categories of the table are named.
    """
    cats = _three(boot.table, categories)
    mean = np.empty((len(boot.table.models), 3))
    var = np.empty_like(mean)
    for k, c in enumerate(cats):
        agg = boot.aggregate(uniform_task_weights(boot.table, c))
        mean[:, k] = agg.mean(axis=0)
        var[:, k] = agg.var(axis=0, ddof=1)
    return CategoryStats(models=boot.table.models, categories=cats, mean=mean, var=var)


def category_stats_from_intervals(
    models: Sequence[str],
    categories: Sequence[str],
    mean: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    level: float,
) -> CategoryStats:
    """Category means and variances recovered from published intervals.

    For figures published without per-task counts (LA-UR-24-25289 report (2024), *Statistical
    Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*,
    Table A.3 gives 83.4% intervals per
    category): the standard error is the interval's width over ``2 z``, with ``z`` the normal
    quantile of ``(1 + level) / 2``. Figures rounded to 0.1 point make this SE approximate (by
    up to about a third for the narrowest VTAB intervals).

    Parameters
    ----------
    models : sequence of str
        Model names.
    categories : sequence of str
        The three categories.
    mean, lo, hi : numpy.ndarray
        (models, 3) published means and interval ends, fractions.
    level : float
        Coverage of the published intervals.

    Returns
    -------
    CategoryStats

    Raises
    ------
    InputError
        Unless there are three categories, or when an interval ends below its start.
    """
    cats = tuple(categories)
    if len(cats) != 3:
        raise InputError(f"task weighting needs exactly three categories, got {len(cats)}.")
    z = norm.ppf(0.5 + level / 2.0)
    se = (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)) / (2.0 * z)
    if (se < 0).any():
        raise InputError("a published interval has its upper end below its lower end.")
    return CategoryStats(
        models=tuple(models),
        categories=cats,
        mean=np.asarray(mean, dtype=float),
        var=se**2,
    )


def simplex_grid(step: float) -> np.ndarray:
    """All weight triples on the simplex with spacing ``step``.

    Parameters
    ----------
    step : float
        Spacing; ``1 / step`` must be a whole number.

    Returns
    -------
    numpy.ndarray
        (points, 3), ordered by the first weight, then the second; ``round(1/step) + 1``
        points per side.

    Raises
    ------
    InputError
        If ``step`` is finer than the grid allows or does not divide 1.
    """
    step = limits.check_real(step, "the weight step", 0, 1, open_lo=True, param="step")
    n = round(1.0 / step)
    if n > MAX_GRID_DIVISIONS:
        raise InputError(
            f"the weight step must be at least {1 / MAX_GRID_DIVISIONS:g}, got {step}."
        )
    if abs(n * step - 1.0) > 1e-9:
        raise InputError(
            f"the weight step must divide 1 evenly (e.g. 0.05, 0.1, 0.01), got {step}."
        )
    i, j = np.triu_indices(n + 1)
    # Pairs (i, j - i) enumerate every (w1, w2) with w1 + w2 <= 1 exactly once.
    first = i
    second = j - i
    counts = np.stack([first, second, n - first - second], axis=1)
    order = np.lexsort((counts[:, 1], counts[:, 0]))
    return counts[order] / n


@dataclass(frozen=True, eq=False)
class WeightRegions:
    """The best model on every grid point of the simplex (LA-UR-24-25289 report (2024), *Statistical
    Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*,
    §2.3, §3.3).

    Attributes
    ----------
    stats : CategoryStats
        The category means and variances.
    weights : numpy.ndarray
        (points, 3) grid of category weights.
    leader, runner_up : numpy.ndarray
        Model indices of the best and second best at each point.
    diff, se : numpy.ndarray
        Their difference and its standard error, fractions.
    se_mult : float
        A point is indeterminate where ``diff <= se_mult * se``.
    rho : float
        Correlation assumed between the two models' category means.
    step : float
        Grid spacing.
    """

    stats: CategoryStats
    weights: np.ndarray
    leader: np.ndarray
    runner_up: np.ndarray
    diff: np.ndarray
    se: np.ndarray
    se_mult: float
    rho: float
    step: float

    @property
    def indeterminate(self) -> np.ndarray:
        """Boolean per point: the top two are within ``se_mult`` standard errors."""
        return self.diff <= self.se_mult * self.se

    @property
    def winner(self) -> np.ndarray:
        """Winning model name per point, or ``'indeterminate'``."""
        names = np.asarray(self.stats.models, dtype=object)[self.leader]
        return np.where(self.indeterminate, INDETERMINATE, names)

    def to_frame(self) -> pd.DataFrame:
        """One row per grid point: a weight column per category, winner, runner_up, diff, se, leader."""
        names = np.asarray(self.stats.models, dtype=object)
        df = pd.DataFrame(np.round(self.weights, 10), columns=list(self.stats.categories))
        df["winner"] = self.winner
        df["runner_up"] = names[self.runner_up]
        df["diff"] = self.diff
        df["se"] = self.se
        df["leader"] = names[self.leader]
        return df


def weight_regions(
    stats: CategoryStats, step: float = 0.05, se_mult: float = 1.0, rho: float = 0.0
) -> WeightRegions:
    """Leader, runner-up, difference and its standard error at each simplex grid point
    (LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for Aggregate Performance
    Metrics in Machine Learning Benchmarks*, §2.3, §3.3, Appendix A.2).

    Parameters
    ----------
    stats : CategoryStats
        Category means and variances.
    step : float
        Grid spacing.
    se_mult : float
        Standard errors within which the top two are indeterminate.
    rho : float
        Correlation between two models' category means, in [-1, 1] (0: independent).

    Returns
    -------
    WeightRegions

    Raises
    ------
    InputError
        If a parameter is out of range or there are fewer than two models.
    """
    if len(stats.models) < 2:
        raise InputError("task weighting compares models, so it needs at least two models.")
    rho = limits.check_real(rho, "the correlation rho", -1.0, 1.0, param="rho")
    se_mult = limits.check_real(se_mult, "the standard-error multiplier", 0.0, param="se_mult")
    w = simplex_grid(step)
    score = w @ stats.mean.T
    var = (w**2) @ stats.var.T
    # argpartition would not order the two best; a full argsort over M models is cheap.
    top2 = np.argsort(-score, axis=1, kind="stable")[:, :2]
    rows = np.arange(len(w))
    lead, second = top2[:, 0], top2[:, 1]
    v1, v2 = var[rows, lead], var[rows, second]
    se = np.sqrt(np.maximum(v1 + v2 - 2.0 * rho * np.sqrt(v1 * v2), 0.0))
    diff = score[rows, lead] - score[rows, second]
    return WeightRegions(
        stats=stats,
        weights=w,
        leader=lead,
        runner_up=second,
        diff=diff,
        se=se,
        se_mult=float(se_mult),
        rho=float(rho),
        step=float(step),
    )
