"""Honest rankings: uncertainty for aggregate benchmark metrics (LA-UR-24-25289 report, 2024).

- :mod:`.counts`: the validated counts table (model x task correct/total, task categories).
- :mod:`.bootstrap`: bootstrap of test instances within tasks (§2.1), leaderboards with
  percentile intervals, pairwise differences with Bonferroni.
- :mod:`.normalize`: BigBench-style normalisation with bounds from every model's replicates (§2.4).
- :mod:`.ranks`: rank intervals under the five aggregation schemes of §3.2.
- :mod:`.bhm`: beta-binomial hierarchical model, Gibbs + slice sampling (§2.2).
- :mod:`.diagnostics`: split R-hat and effective sample size.
- :mod:`.weighting`: category weights on the simplex with standard-error gray zones (§2.3, A.2).
- :mod:`.estimated`: per-task counts estimated by Sort & Search, next to the true ones.
- :mod:`.coverage`: how many intervals held the truth, with an exact interval on that share.
- :mod:`.simulation`: the two-model, three-task simulation study (§2.2, Table 1).
- :mod:`.vtab`: VTAB-1k task facts and Table A.3's published figures.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lifelong_core.stats.bootstrap import (
    DIFFERENCE_LEVEL,
    DISPLAY_LEVEL,
    Bootstrap,
    bootstrap,
    category_task_weights,
    leaderboard,
    pairwise_differences,
    percentile_interval,
    uniform_task_weights,
)
from lifelong_core.stats.counts import CountTable, from_frame, read_counts_csv
from lifelong_core.stats.diagnostics import effective_sample_size, split_rhat
from lifelong_core.stats.normalize import normalization_bounds, normalize

# The hierarchical model, the rank intervals and the task weighting load scipy.special and
# scipy.stats (half a second at start-up): they are imported on first use, so a command
# or page that uses none of them (a backtest reading ``stats.coverage``) does not pay.
# (``bootstrap`` and ``normalize`` are also submodule names: importing the submodule would
# set the package attribute to it, so those two are imported here.)
_LAZY = {
    "HierarchicalFit": "bhm",
    "Prior": "bhm",
    "fit_hierarchical": "bhm",
    "SCHEMES": "ranks",
    "rank_intervals": "ranks",
    "INDETERMINATE": "weighting",
    "CategoryStats": "weighting",
    "WeightRegions": "weighting",
    "category_stats": "weighting",
    "category_stats_from_bootstrap": "weighting",
    "category_stats_from_intervals": "weighting",
    "simplex_grid": "weighting",
    "weight_regions": "weighting",
}

if TYPE_CHECKING:
    from lifelong_core.stats.bhm import HierarchicalFit, Prior, fit_hierarchical
    from lifelong_core.stats.ranks import SCHEMES, rank_intervals
    from lifelong_core.stats.weighting import (
        INDETERMINATE,
        CategoryStats,
        WeightRegions,
        category_stats,
        category_stats_from_bootstrap,
        category_stats_from_intervals,
        simplex_grid,
        weight_regions,
    )

__all__ = [
    "DIFFERENCE_LEVEL",
    "DISPLAY_LEVEL",
    "INDETERMINATE",
    "SCHEMES",
    "Bootstrap",
    "CategoryStats",
    "CountTable",
    "HierarchicalFit",
    "Prior",
    "WeightRegions",
    "bootstrap",
    "category_stats",
    "category_stats_from_bootstrap",
    "category_stats_from_intervals",
    "category_task_weights",
    "effective_sample_size",
    "fit_hierarchical",
    "from_frame",
    "leaderboard",
    "normalization_bounds",
    "normalize",
    "pairwise_differences",
    "percentile_interval",
    "rank_intervals",
    "read_counts_csv",
    "simplex_grid",
    "split_rhat",
    "uniform_task_weights",
    "weight_regions",
]


def __getattr__(name: str) -> Any:
    """A name of :data:`_LAZY`, imported from its submodule on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
