"""Sort & Search (seed 001) and its metrics (seed 000): the engine of the explorer.

Public API (see docs/CONTRACTS.md and the README section ``engine``):

- Sort: :func:`sort_by_sum`, :func:`sort_by_confidence`, :func:`sort_recursive`,
  :func:`sort_models`, :func:`choose_sort_rows`.
- Search: :func:`uniform_positions`, :func:`random_positions`, :func:`dp_search`,
  :func:`rule_thresholds` (rules ``midpoint`` = default, ``reference``).
- Estimators: :class:`InsertM`, :class:`InsertD`, :class:`CopyNearestExpand`;
  :func:`get_method`, :func:`available_methods`.
- Sweep: :func:`run_sweep` -> :class:`SweepResult`; :func:`power_budgets`; the seam
  :func:`boundary_counts`, :func:`column_sums`, :func:`sweep_cuts`, :class:`Backend`,
  :class:`RowBlocks`.
- Metrics: :func:`mae`, :func:`eagg`, :func:`kappa`, :func:`decompose`,
  :func:`theorem21_vector`, :func:`model_correlation`; fits :func:`fit_exponential`,
  :func:`fit_power_law`; :func:`serial_additions` (App. G).
"""

from lifelong_core.sortsearch.fits import FitResult, fit_exponential, fit_power_law
from lifelong_core.sortsearch.kernels import (
    DENSE,
    Backend,
    RowBlocks,
    SweepPlan,
    boundary_counts,
    plan_sweep,
    sweep_cuts,
)
from lifelong_core.sortsearch.methods import (
    SEARCH_METHODS,
    CopyNearestExpand,
    Estimate,
    InsertD,
    InsertM,
    available_methods,
    compute_order,
    get_method,
)
from lifelong_core.sortsearch.metrics import (
    Decomposition,
    ModelCorrelation,
    decompose,
    eagg,
    kappa,
    mae,
    model_correlation,
    theorem21_vector,
    threshold_metrics,
)
from lifelong_core.sortsearch.search import (
    DEFAULT_RULE,
    RULES,
    dp_search,
    random_positions,
    rule_thresholds,
    uniform_positions,
)
from lifelong_core.sortsearch.serial import serial_additions
from lifelong_core.sortsearch.sort import (
    choose_sort_rows,
    column_sums,
    sort_by_confidence,
    sort_by_sum,
    sort_models,
    sort_recursive,
)
from lifelong_core.sortsearch.sweep import SweepResult, power_budgets, run_sweep

__all__ = [
    "DEFAULT_RULE", "DENSE", "RULES", "SEARCH_METHODS", "Backend", "CopyNearestExpand", "Decomposition",
    "Estimate", "FitResult", "InsertD", "InsertM", "ModelCorrelation", "RowBlocks", "SweepPlan", "SweepResult",
    "available_methods", "boundary_counts", "choose_sort_rows", "column_sums", "compute_order", "decompose",
    "dp_search", "eagg", "fit_exponential", "fit_power_law", "get_method", "kappa", "mae", "model_correlation",
    "plan_sweep", "power_budgets", "random_positions", "rule_thresholds", "run_sweep", "serial_additions",
    "sort_by_confidence", "sort_by_sum", "sort_models", "sort_recursive", "sweep_cuts", "theorem21_vector",
    "threshold_metrics", "uniform_positions",
]
