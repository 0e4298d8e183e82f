"""Rankings with uncertainty: the tables of ``lbe rank`` and of the Python API, and counts
estimated by Sort & Search for the newest models, ready for the ranking methods.

The tables (LA-UR-24-25289 report, 2024, *Statistical Uncertainty Quantification for
Aggregate Performance Metrics in Machine Learning Benchmarks*): a ranking source is the
bootstrap of test items within each task (§2.1; optionally normalised, §2.4) or the
beta-binomial hierarchical model (§2.2); from it :func:`leaderboard_table` (the
``ranks.csv`` of ``lbe rank``), :func:`pairwise_table` (``--pairwise``, §2.1, Table 3) and
:func:`rank_interval_table` (``--rank-intervals``, §3.2, Tables 4, 5 and 11). The command
line and :mod:`lifelong_core.api` call these, so their tables are the same.

Estimated counts:
The models are one dataset's complete set (:func:`~lifelong_core.workflows.selection.select`:
real models evaluated on every sample; a store whose datasets were run by different models
has one such set per dataset), optionally narrowed to the ones the user chose. The newest of
them by release order play the new models: each is estimated from ``budget`` samples
(Prabhu et al., 2024, *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
§3.2) and its predicted vector summed per domain, beside its true counts; see
:mod:`lifelong_core.stats.estimated` for what intervals on them mean. Domains without a
category get one by :func:`~lifelong_core.workflows.categories.fill_categories`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.methods.draws import PER_MODEL
from lifelong_core.stats.coverage import Coverage, coverage_of
from lifelong_core.stats.estimated import sortsearch_counts
from lifelong_core.workflows.categories import fill_categories
from lifelong_core.workflows.selection import Selection, select
from lifelong_core.workflows.sortsets import release_rows

if TYPE_CHECKING:
    from lifelong_core.stats import Bootstrap, CountTable, HierarchicalFit
    from lifelong_core.store import Store

# The ranking sources: the bootstrap of test items (§2.1) or the hierarchical model (§2.2).
RANK_METHODS = ("bootstrap", "hierarchical")
# ranks.csv, pairwise.csv and rank_intervals.csv, column by column.
RANK_COLUMNS = ["model", "scope", "rank", "mean_pct", "lo_pct", "hi_pct", "level"]
PAIR_COLUMNS = [
    "scope",
    "model_a",
    "model_b",
    "diff_pct",
    "lo_pct",
    "hi_pct",
    "level",
    "excludes_zero",
]
RANK_INTERVAL_COLUMNS = ["scope", "model", "scheme", "mean", "lo", "hi"]


def count_table(counts: Any) -> CountTable:
    """``counts`` as a :class:`~lifelong_core.stats.CountTable`: one already, a long frame
    with the ``counts.csv`` columns (model, task, category, correct, total), or the path of
    a ``counts.csv`` file; validated as ``lbe rank --counts`` validates it.

    Parameters
    ----------
    counts : CountTable, pandas.DataFrame, str or Path
        The per-task correct and total counts of every model, in one of those forms.

    Returns
    -------
    CountTable
        ``counts`` itself when it is one.

    Raises
    ------
    InputError
        On a file or frame that is not a valid counts table (named by row and column).
    """
    from lifelong_core.stats import CountTable, from_frame, read_counts_csv

    if isinstance(counts, CountTable):
        return counts
    if isinstance(counts, pd.DataFrame):
        return from_frame(counts)
    if isinstance(counts, (str, Path)):
        return read_counts_csv(counts)
    raise InputError(
        f"counts must be a CountTable, a counts frame or a counts.csv path, not {type(counts).__name__}.",
        param="counts",
    )


@dataclass(frozen=True)
class RankingOptions:
    """How the replicates every ranking table reads are drawn: one value for the options
    ``lbe rank``, the Python API's ranking functions and the Rankings page share.

    Attributes
    ----------
    method : {"bootstrap", "hierarchical"}
        The ranking source (:data:`RANK_METHODS`).
    boot : int
        Bootstrap replicates (bootstrap only).
    normalize : bool
        Normalise the bootstrap's scores (§2.4); not with the hierarchical model.
    seed : int
        Seed of the replicates or of the chains.
    chains, draws, warmup : int
        The hierarchical model's chains, draws kept per chain and warm-up draws.
    """

    method: str = "bootstrap"
    boot: int = 2000
    normalize: bool = False
    seed: int = 0
    chains: int = 4
    draws: int = 1000
    warmup: int = 500


def ranking_source(
    table: CountTable, options: RankingOptions | None = None
) -> Bootstrap | HierarchicalFit:
    """The replicates every ranking table reads: the bootstrap of test items within each
    task (LA-UR-24-25289 report, 2024, §2.1), normalised to the BigBench scale with bounds
    over every model of ``table`` when ``normalize`` (§2.4), or the beta-binomial
    hierarchical model's posterior (§2.2).

    Parameters
    ----------
    table : CountTable
        Correct and total counts per model and task (:func:`count_table`).
    options : RankingOptions, optional
        The method and its settings (default: the bootstrap's defaults).

    Returns
    -------
    Bootstrap or HierarchicalFit
        What :func:`leaderboard_table`, :func:`pairwise_table` and
        :func:`rank_interval_table` read.

    Raises
    ------
    InputError
        On an unknown method, ``normalize`` with the hierarchical model, or a seed or work
        size out of bounds.
    """
    from lifelong_core.limits import check_seed
    from lifelong_core.stats import bootstrap, fit_hierarchical
    from lifelong_core.stats import normalize as normalized

    o = options or RankingOptions()
    if o.method not in RANK_METHODS:
        raise InputError(
            f"unknown ranking method {o.method!r}; use one of {', '.join(RANK_METHODS)}.",
            param="method",
        )
    check_seed(o.seed)
    if o.method == "hierarchical":
        if o.normalize:
            raise InputError(
                "normalisation applies to the bootstrap; the hierarchical model works on counts.",
                param="normalize",
            )
        return fit_hierarchical(table, chains=o.chains, draws=o.draws, warmup=o.warmup, seed=o.seed)
    source = bootstrap(table, n_boot=o.boot, seed=o.seed)
    return normalized(source) if o.normalize else source


def _pct(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    out = frame.copy()
    for col in columns:
        out[f"{col}_pct"] = (frame[col] * 100.0).round(6)
    return out


def leaderboard_table(
    source: Bootstrap | HierarchicalFit, *, level: float = 0.834, seed: int = 0
) -> pd.DataFrame:
    """``ranks.csv``: every model's score and rank, overall and per category, with the
    score's interval at ``level`` (LA-UR-24-25289 report, 2024, §2.1-2.3), in percent: the
    bootstrap mean and percentile interval, or the hierarchical model's posterior
    predictive mean and interval.

    The default level is 83.4% (Goldstein & Healy, 1995, "The graphical presentation of
    a collection of means", JRSS A 158(1)): when two models' 83.4% intervals do not
    overlap, their difference is significant at about the 5% level, so the intervals can
    be compared by eye. A 95% interval per model would call too few differences
    significant; ``pairwise_table`` tests the differences themselves.

    Parameters
    ----------
    source : Bootstrap or HierarchicalFit
        The replicates (:func:`ranking_source`).
    level : float
        Interval level, strictly between 0 and 1 (default 0.834).
    seed : int
        Seed of the hierarchical model's predictive draws (unused by the bootstrap).

    Returns
    -------
    pandas.DataFrame
        model, scope (``overall``, then each category), rank (the model's place in the
        scope by its mean, 1 = best; equal means share the better place), mean_pct,
        lo_pct, hi_pct, and level (the interval level, a fraction, on every row).

    Raises
    ------
    InputError
        If ``level`` is not strictly between 0 and 1.
    """
    from lifelong_core.stats import Bootstrap, leaderboard
    from lifelong_core.stats.bootstrap import check_level

    check_level(level)
    if isinstance(source, Bootstrap):
        board = leaderboard(source, level=level)
    else:
        board = source.aggregate_intervals(level=level, seed=seed)
    out = _pct(board, ("mean", "lo", "hi"))
    # Ranked on the unrounded mean, so the rank never depends on the percent rounding.
    out["rank"] = out.groupby("scope", sort=False)["mean"].rank(method="min", ascending=False)
    out["rank"] = out["rank"].astype(int)
    out["level"] = float(level)
    return out[RANK_COLUMNS]


def pairwise_table(
    source: Bootstrap | HierarchicalFit,
    *,
    level: float = 0.95,
    models: Sequence[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """``pairwise.csv``: the difference of every pair of ``models`` (default: every
    model) per scope, in points, with intervals Bonferroni-corrected over the pairs
    compared to hold together at ``level`` (LA-UR-24-25289 report, 2024, §2.1, Table 3).
    The hierarchical model's differences are of posterior predictive scores, as its
    intervals are (Table A.3's Bayesian block, Table 3's Bayesian column).

    Parameters
    ----------
    source : Bootstrap or HierarchicalFit
        The replicates (:func:`ranking_source`).
    level : float
        The level all the intervals hold at together, strictly between 0 and 1.
    models : sequence of str, optional
        The models to compare, at least two (default: every model).
    seed : int
        Seed of the hierarchical model's predictive draws (unused by the bootstrap).

    Returns
    -------
    pandas.DataFrame
        scope, model_a, model_b, diff_pct (score of a minus score of b, in points),
        lo_pct, hi_pct, level (of each comparison, after Bonferroni), excludes_zero.

    Raises
    ------
    InputError
        If ``level`` is out of range, or a model is unknown, named twice, or fewer than two
        are named.
    """
    from lifelong_core.stats.bootstrap import check_level
    from lifelong_core.stats.hierarchical_views import pairwise_by_scope

    check_level(level)
    pairs = pairwise_by_scope(source, level=level, models=models, predictive=True, seed=seed)
    return _pct(pairs, ("diff", "lo", "hi"))[PAIR_COLUMNS]


def rank_interval_table(
    source: Bootstrap | HierarchicalFit,
    *,
    level: float = 0.95,
    schemes: Sequence[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """``rank_intervals.csv``: every model's rank interval per scope under each
    aggregation scheme (LA-UR-24-25289 report, 2024, §3.2; Tables 4, 5 and, with the
    hierarchical model's predictive draws, 11); 1 = best.

    Parameters
    ----------
    source : Bootstrap or HierarchicalFit
        The replicates (:func:`ranking_source`).
    level : float
        Interval level, strictly between 0 and 1.
    schemes : sequence of str, optional
        Aggregation schemes (keys of ``lifelong_core.stats.SCHEMES``: ``mean``,
        ``geometric``, ``avg_rank``, ``avg_rank_noise``, ``avg_rank_bins``); default all.
    seed : int
        Seed of the noise scheme and of the hierarchical model's predictive draws.

    Returns
    -------
    pandas.DataFrame
        scope, model, scheme, mean, lo, hi (ranks).

    Raises
    ------
    InputError
        If ``level`` is out of range or a scheme is unknown.
    """
    from lifelong_core.stats import SCHEMES
    from lifelong_core.stats.bootstrap import check_level
    from lifelong_core.stats.hierarchical_views import rank_intervals_by_scope

    check_level(level)
    chosen = list(SCHEMES) if schemes is None else list(schemes)
    return rank_intervals_by_scope(source, level=level, schemes=chosen, seed=seed)[
        RANK_INTERVAL_COLUMNS
    ]


class EstimatedCounts(NamedTuple):
    """The newest models' estimated and true counts (:func:`newest_estimated_counts`).

    Attributes
    ----------
    estimated, true : pandas.DataFrame
        ``counts.csv`` frames (model, task, category, correct, total) of the new models.
    own : pandas.DataFrame or None
        The method's own interval of each new model's pooled accuracy in percent (model,
        mean, lo, hi, true, and level: the interval's level), or None when the method
        gives none.
    """

    estimated: pd.DataFrame
    true: pd.DataFrame
    own: pd.DataFrame | None


def newest_estimated_counts(
    store: Store,
    dataset: str,
    n_new: int,
    budget: int,
    method: str,
    seed: int,
    models: Sequence[str] | None = None,
    sel: Selection | None = None,
    draws: str = PER_MODEL,
) -> EstimatedCounts:
    """Estimated and true counts of the newest models, to rank with uncertainty: the
    ``n_new`` newest (by release order) of the chosen models of ``dataset`` are estimated
    by ``method`` from ``budget`` samples each, the older ones forming the cache (Prabhu
    et al., 2024, §3.2), and their predicted rows summed per domain.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.
    n_new : int
        How many of the newest models play new ones; at least 2, leaving at least two in
        the cache.
    budget : int
        Samples evaluated per new model, n′.
    method : str
        A registered search method.
    seed : int
        Seed of the samples drawn.
    models : sequence of str, optional
        Display names of the models to use (None = every model of the selection).
    sel : Selection, optional
        The dataset's selection, when the caller already holds it (default
        :func:`~lifelong_core.workflows.selection.select` of the whole dataset).
    draws : {"per-model", "common"}
        Each new model's samples are its own draw (``"per-model"``) or the seed's common
        set (``"common"``).

    Returns
    -------
    EstimatedCounts
        The estimated and the true ``counts.csv`` frames of the new models (model, task,
        category, correct, total; a domain without a category gets one by
        :func:`~lifelong_core.workflows.categories.fill_categories`), and, where
        ``method`` gives intervals, its own interval of each model's pooled accuracy in
        percent (model, mean, lo, hi, true), else None.

    Raises
    ------
    InputError
        If ``n_new`` is out of range, or the budget, method or draw is refused (or the
        selection, when none is passed: :func:`select`).
    """
    sel = sel if sel is not None else select(store, dataset)
    names = np.asarray(sel.names, dtype=object)
    keep = np.arange(len(names)) if models is None else np.flatnonzero(np.isin(names, list(models)))
    keep = keep[release_rows(sel.models.iloc[keep])]
    if not 2 <= n_new < len(keep) - 1:
        raise InputError(
            f"hold out between 2 and {len(keep) - 2} of the {len(keep)} chosen models "
            "(at least two stay in the cache)."
        )
    smp = sel.samples
    doms = fill_categories(
        pd.DataFrame(
            {
                "model": "",
                "task": smp["domain"].astype(str),
                "category": smp["category"],
                "correct": 0,
                "total": 1,
            }
        ).drop_duplicates("task")
    )
    rows = np.arange(len(keep))
    est = sortsearch_counts(
        sel.A[keep],
        smp["domain"].astype(str).tolist(),
        dict(zip(doms["task"], doms["category"])),
        names[keep].tolist(),
        sort_rows=rows[:-n_new],
        eval_rows=rows[-n_new:],
        budget=budget,
        method=method,
        seed=seed,
        draws=draws,
    )
    own = None
    if est.has_intervals:
        own = pd.DataFrame(
            {
                "model": list(est.estimated.models),
                "mean": est.acc * 100,
                "lo": est.lo * 100,
                "hi": est.hi * 100,
                "true": est.true_acc * 100,
                # Every method's interval is at its default level in a page's estimate.
                "level": 0.95,
            }
        )
    return EstimatedCounts(est.estimated.to_frame(), est.true.to_frame(), own)


def estimator_coverage(own: pd.DataFrame, draws: str = PER_MODEL) -> tuple[Coverage, str]:
    """How many of the estimated models' own 95% intervals (the frame
    :func:`newest_estimated_counts` returns) hold their true accuracy, with an exact 95%
    interval on that share, and the sentence a front end shows.

    Counted over every estimated model, not a subset picked by its estimate: keeping the
    models estimated highest favours those whose error was upward, and biases the count.
    The sentence says whose item draw the estimates used; with a common set the models'
    errors move together and the count says less than its interval suggests.

    Parameters
    ----------
    own : pandas.DataFrame
        The estimator's own intervals (model, mean, lo, hi, true, in percent).
    draws : {"per-model", "common"}
        The item draw the estimates used.

    Returns
    -------
    tuple of (Coverage, str)
        How many intervals hold the truth, of how many, with the exact (Clopper-Pearson)
        95% interval on that share; and the sentence a front end shows.
    """
    cov = coverage_of(own["true"], own["lo"], own["hi"])
    how = (
        "each model's samples were its own random draw, so the intervals are independent trials"
        if draws == PER_MODEL
        else "every model was run on the same samples, so their errors move together and the count is "
        "less certain than this interval says"
    )
    if cov.lo <= 0.95 <= cov.hi:
        verdict = f"with {cov.total} models that is consistent with intervals that hold the truth 95% of the time"
    else:
        verdict = (
            f"that excludes 95%: on these models the intervals hold the truth "
            f"{'less' if cov.hi < 0.95 else 'more'} often than they claim"
        )
    text = (
        f"{cov.covered} of {cov.total} estimated models ({cov.share:.0%}) have their true accuracy inside "
        f"the estimator's 95% interval (exact 95% interval of that share: {cov.lo:.0%}-{cov.hi:.0%}); "
        f"{verdict}. {how[0].upper()}{how[1:]}."
    )
    return cov, text


# A source with at most this many models shows them all by default (VTAB-1k's 16, so the
# default view is the report's Table A.3); a larger one shows its DEFAULT_TOP most accurate.
SHOW_ALL_UP_TO = 20
DEFAULT_TOP = 12


def default_models(best_first: Sequence[str]) -> list[str]:
    """The models a ranking view shows before the user chooses: all of them for a source
    of at most :data:`SHOW_ALL_UP_TO`, else the :data:`DEFAULT_TOP` first of
    ``best_first`` (the source's models, most accurate first).

    With at most 20 models the default view is the whole of the LA-UR-24-25289 report's
    Table A.3 (VTAB-1k's 16 models).

    Parameters
    ----------
    best_first : sequence of str
        The source's model names, most accurate first (:func:`overall_accuracy`).

    Returns
    -------
    list of str
        The names to show, in the order given.

    Examples
    --------
    >>> len(default_models([f"m{i}" for i in range(16)]))
    16
    >>> default_models([f"m{i}" for i in range(30)])[-1]
    'm11'
    """
    names = list(best_first)
    return names if len(names) <= SHOW_ALL_UP_TO else names[:DEFAULT_TOP]


# ------------------------------------------------------------------ the Rankings page's tables


def overall_accuracy(table: CountTable) -> pd.Series:
    """Every model's unweighted mean accuracy over the tasks, most accurate first: the
    order in which a ranking view lists and picks models.

    Parameters
    ----------
    table : CountTable
        Correct and total counts per model and task.

    Returns
    -------
    pandas.Series
        Accuracy (a fraction) by model name, descending.
    """
    acc = pd.Series(table.accuracy.mean(axis=1), index=list(table.models))
    return acc.sort_values(ascending=False)


def hierarchical_views(
    table: CountTable,
    *,
    chains: int,
    draws: int,
    seed: int,
    prior: tuple[str, float, float],
    level: float,
) -> dict:
    """Everything the Rankings page shows of the beta-binomial hierarchical model
    (LA-UR-24-25289 report, 2024, §2.2), warm-up half the draws: diagnostics, intervals at
    ``level``, rank probabilities, the draws of a and b, the mean accuracy per draw, and
    beside them all pairwise differences (Bonferroni) and rank intervals from posterior
    predictive draws at 95% (Table 11; differences of predictive scores, as Table 3's
    Bayesian column).

    Parameters
    ----------
    table : CountTable
        Correct and total counts per model and task.
    chains : int
        Independent chains.
    draws : int
        Draws per chain; the first half is warm-up.
    seed : int
        Seed of the chains and of the predictive draws.
    prior : tuple of (str, float, float)
        ``("normal", mean, sd)`` or ``("uniform", low, high)``, the prior on a and b.
    level : float
        Level of the score intervals (e.g. 0.834).

    Returns
    -------
    dict
        ``diagnostics`` (parameter, model, rhat, ess), ``intervals`` (model, scope,
        mean, lo, hi as fractions), ``rank_probs`` (models x ranks), ``a`` and ``b``
        (chains x draws x models), ``mean`` (each draw's mean accuracy, chains x draws x
        models), ``models``, ``pairwise`` (as :func:`pairwise_table`'s columns, fractions)
        and ``rank_intervals`` (model, scheme, mean, lo, hi).

    Raises
    ------
    InputError
        If a count, the prior, the seed, the level or the work (models x tasks x draws)
        is out of range.
    """
    from lifelong_core.stats import DIFFERENCE_LEVEL, Prior, fit_hierarchical
    from lifelong_core.stats.hierarchical_views import (
        hierarchical_pairwise,
        hierarchical_rank_intervals,
    )

    kind, p1, p2 = prior
    pr = Prior.normal(p1, p2) if kind == "normal" else Prior.uniform(p1, p2)
    fit = fit_hierarchical(
        table, prior_a=pr, prior_b=pr, chains=chains, draws=draws, warmup=draws // 2, seed=seed
    )
    return {
        "diagnostics": fit.diagnostics(),
        "intervals": fit.aggregate_intervals(level=level, seed=seed),
        "rank_probs": fit.rank_probabilities(),
        "a": fit.a,
        "b": fit.b,
        "mean": fit.p.mean(axis=3),
        "models": list(table.models),
        "pairwise": hierarchical_pairwise(fit, level=DIFFERENCE_LEVEL, predictive=True, seed=seed),
        "rank_intervals": hierarchical_rank_intervals(fit, level=DIFFERENCE_LEVEL, seed=seed),
    }
