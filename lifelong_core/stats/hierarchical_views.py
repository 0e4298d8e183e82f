"""What the beta-binomial hierarchical model gives beside its intervals: pairwise
differences, rank intervals (Table 11) and the task-weighting map (Appendix Fig. 5) of
"Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine
Learning Benchmarks" (Los Alamos report LA-UR-24-25289, 2024, §2.2, §3, Appendix A.3);
plus the per-scope (overall and per category) versions of the bootstrap's pairwise
differences and rank intervals that ``rank`` writes.

Posterior predictive draws replace each draw of ``p`` by the accuracy on a new test set
of the same size, ``Binomial(n, p) / n`` (§2.2): the quantity Table A.3's Bayesian block,
Table 11 and Fig. 5 summarise. Differences use the parameter draws by default (the
simulation study's "credibility interval for the difference in mean performances").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.stats.bhm import HierarchicalFit
from lifelong_core.stats.bootstrap import (
    DIFFERENCE_LEVEL,
    Bootstrap,
    check_level,
    pairwise_differences,
    percentile_interval,
    scopes,
    uniform_task_weights,
)
from lifelong_core.stats.counts import CountTable
from lifelong_core.stats.ranks import SCHEMES, rank_intervals
from lifelong_core.stats.weighting import CategoryStats, _three

PAIR_COLUMNS = ["model_a", "model_b", "diff", "lo", "hi", "level", "excludes_zero"]


def predictive_task_scores(fit: HierarchicalFit, seed: int = 0) -> np.ndarray:
    """Posterior predictive task accuracies, shape (chains * draws, models, tasks)."""
    p = fit.p.reshape(-1, *fit.p.shape[2:])
    n = fit.table.total
    return np.random.default_rng(seed).binomial(n, p) / n


def _pairs_frame(
    agg: np.ndarray,
    models: Sequence[str],
    level: float,
    bonferroni: bool,
    compared: Sequence[str] | None = None,
) -> pd.DataFrame:
    idx = list(range(agg.shape[1])) if compared is None else _indices(models, compared)
    pairs = [(i, j) for k, i in enumerate(idx) for j in idx[k + 1 :]]
    if not pairs:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    per_level = 1.0 - (1.0 - level) / len(pairs) if bonferroni else level
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    mean, lo, hi = percentile_interval(agg[:, a] - agg[:, b], per_level)
    return pd.DataFrame(
        {
            "model_a": [models[i] for i in a],
            "model_b": [models[j] for j in b],
            "diff": mean,
            "lo": lo,
            "hi": hi,
            "level": per_level,
            "excludes_zero": (lo > 0) | (hi < 0),
        }
    )


def _indices(models: Sequence[str], compared: Sequence[str]) -> list[int]:
    names = list(models)
    for m in compared:
        if m not in names:
            raise InputError(f"model '{m}' is not in the data.", param="models")
    if len(set(compared)) != len(compared):
        raise InputError("each model to compare must be named once.", param="models")
    return [names.index(m) for m in compared]


def hierarchical_pairwise(
    fit: HierarchicalFit,
    level: float = DIFFERENCE_LEVEL,
    bonferroni: bool = True,
    task_weights: np.ndarray | None = None,
    predictive: bool = False,
    seed: int = 0,
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Credible intervals for ``score(a) - score(b)`` over the pairs of ``models`` (LA-UR-24-25289
    report (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in
    Machine Learning Benchmarks*, §2.2,
    §3), Bonferroni over those pairs as for the bootstrap (§2.1).

    Parameters
    ----------
    fit : HierarchicalFit
        The posterior draws.
    level : float
        Family-wise coverage (per comparison without Bonferroni).
    bonferroni : bool
        Apply the Bonferroni correction.
    task_weights : numpy.ndarray, optional
        Weights over tasks (default: the unweighted mean).
    predictive : bool
        Differences of posterior predictive scores instead of the parameters'.
    seed : int
        Seed of the predictive draws.
    models : sequence of str, optional
        The models compared, pairs in this order (a before b; default: every model).

    Returns
    -------
    pandas.DataFrame
        Columns as :func:`~lifelong_core.stats.bootstrap.pairwise_differences`.

    Raises
    ------
    InputError
        If ``level`` is out of range, or a model is unknown or named twice.
    """
    check_level(level)
    return _pairs_frame(
        fit.aggregate_draws(task_weights, predictive, seed),
        list(fit.table.models),
        level,
        bonferroni,
        models,
    )


def hierarchical_rank_intervals(
    fit: HierarchicalFit,
    level: float = DIFFERENCE_LEVEL,
    schemes: Sequence[str] = tuple(SCHEMES),
    seed: int = 0,
    tasks: np.ndarray | None = None,
) -> pd.DataFrame:
    """Rank intervals under the five schemes from posterior predictive task scores (LA-UR-24-25289
    report (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in
    Machine Learning Benchmarks*,
    Table 11).

    Parameters
    ----------
    fit : HierarchicalFit
        The posterior draws.
    level : float
        Coverage.
    schemes : sequence of str
        Aggregation schemes (:data:`~lifelong_core.stats.ranks.SCHEMES`).
    seed : int
        Seed of the predictive draws and of the noise scheme.
    tasks : numpy.ndarray, optional
        A boolean mask to rank on some tasks only (a category).

    Returns
    -------
    pandas.DataFrame
        model, scheme, mean, lo, hi.
    """
    scores = predictive_task_scores(fit, seed)
    if tasks is not None:
        scores = scores[:, :, np.asarray(tasks, dtype=bool)]
    return rank_intervals(scores, fit.table.models, level=level, schemes=schemes, seed=seed)


def category_stats_from_hierarchical(
    fit: HierarchicalFit, categories: Sequence[str] | None = None, seed: int = 0
) -> CategoryStats:
    """Category means and variances from posterior predictive draws: the input of the ternary
    map drawn from the hierarchical model (LA-UR-24-25289 report (2024), *Statistical Uncertainty
    Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*, Appendix A.3,
    Fig. 5).

    Parameters
    ----------
    fit : HierarchicalFit
        The posterior draws.
    categories : sequence of str, optional
        The three categories (default: the table's, when it has exactly three).
    seed : int
        Seed of the predictive draws.

    Returns
    -------
    CategoryStats

    Raises
    ------
    InputError
        Unless exactly three different categories of the table are named.
    """
    cats = _three(fit.table, categories)
    mean = np.empty((len(fit.table.models), 3))
    var = np.empty_like(mean)
    for k, c in enumerate(cats):
        agg = fit.aggregate_draws(uniform_task_weights(fit.table, c), predictive=True, seed=seed)
        mean[:, k] = agg.mean(axis=0)
        var[:, k] = agg.var(axis=0, ddof=1)
    return CategoryStats(models=fit.table.models, categories=cats, mean=mean, var=var)


def _scope_mask(table: CountTable, scope: str) -> np.ndarray:
    return (
        np.ones(len(table.tasks), dtype=bool) if scope == "overall" else table.category_mask(scope)
    )


def pairwise_by_scope(
    source: Bootstrap | HierarchicalFit,
    level: float = DIFFERENCE_LEVEL,
    bonferroni: bool = True,
    models: Sequence[str] | None = None,
    predictive: bool = False,
    seed: int = 0,
) -> pd.DataFrame:
    """Pairwise differences of the unweighted mean over each scope's tasks (overall, then each
    category), with a ``scope`` column in front (LA-UR-24-25289 report (2024), *Statistical
    Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*,
    §2.1, Table 3).

    Parameters
    ----------
    source : Bootstrap or HierarchicalFit
        Replicates or posterior draws.
    level : float
        Family-wise coverage.
    bonferroni : bool
        Apply the Bonferroni correction, over the pairs of ``models`` only (the report's
        Table 3 compares the top three models three ways).
    models : sequence of str, optional
        The models compared, in the order pairs are formed (default: every model).
    predictive : bool
        For the hierarchical model, differences of posterior predictive scores instead of
        the parameters'.
    seed : int
        Seed of the predictive draws.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InputError
        If ``level`` is out of range, a model is unknown or named twice, or fewer than two
        are named.
    """
    table = source.table
    if models is not None:
        _indices(table.models, models)
        if len(models) < 2:
            raise InputError("name at least two models to compare.", param="models")
    frames = []
    for scope in scopes(table):
        w = uniform_task_weights(table, None if scope == "overall" else scope)
        if isinstance(source, Bootstrap):
            df = pairwise_differences(
                source, models=models, level=level, bonferroni=bonferroni, task_weights=w
            )
        else:
            df = hierarchical_pairwise(
                source,
                level=level,
                bonferroni=bonferroni,
                task_weights=w,
                predictive=predictive,
                seed=seed,
                models=models,
            )
        frames.append(df.assign(scope=scope)[["scope"] + PAIR_COLUMNS])
    return pd.concat(frames, ignore_index=True)


def rank_intervals_by_scope(
    source: Bootstrap | HierarchicalFit,
    level: float = DIFFERENCE_LEVEL,
    schemes: Sequence[str] = tuple(SCHEMES),
    seed: int = 0,
) -> pd.DataFrame:
    """Rank intervals on each scope's tasks (overall, then each category) (LA-UR-24-25289 report
    (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine
    Learning Benchmarks*, §3.2).

    Parameters
    ----------
    source : Bootstrap or HierarchicalFit
        Bootstrap replicates or posterior predictive draws.
    level : float
        Coverage.
    schemes : sequence of str
        Aggregation schemes.
    seed : int
        Seed of the predictive draws and of the noise scheme.

    Returns
    -------
    pandas.DataFrame
        scope, model, scheme, mean, lo, hi.

    Raises
    ------
    InputError
        If a scheme is unknown.
    """
    for s in schemes:
        if s not in SCHEMES:
            raise InputError(f"unknown rank scheme '{s}'; choose one of {', '.join(SCHEMES)}.")
    table = source.table
    frames = []
    for scope in scopes(table):
        mask = _scope_mask(table, scope)
        if isinstance(source, Bootstrap):
            r = rank_intervals(
                source.scores[:, :, mask], table.models, level=level, schemes=schemes, seed=seed
            )
        else:
            r = hierarchical_rank_intervals(
                source, level=level, schemes=schemes, seed=seed, tasks=mask
            )
        frames.append(r.assign(scope=scope)[["scope", "model", "scheme", "mean", "lo", "hi"]])
    return pd.concat(frames, ignore_index=True)
