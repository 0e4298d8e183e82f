"""Sort & Search (Prabhu et al., 2024) and its metrics (Prabhu et al., 2024, *Lifelong Benchmarks*): the engine of the explorer.

Public API (see docs/development/contracts.md):

- Sort: :func:`sort_by_sum`, :func:`sort_by_confidence`, :func:`sort_recursive`,
  :func:`sort_models`, :func:`choose_sort_rows`, :func:`compute_order` (by name, ``SORTS``).
- Search: :func:`uniform_positions`, :func:`random_positions`, :func:`dp_search`,
  :func:`rule_thresholds` (rules ``midpoint`` = default, ``reference``).
- The seam of the sweep: :func:`boundary_counts`, :func:`column_sums`,
  :func:`sweep_cuts`, :func:`plan_sweep`. The search methods are in
  :mod:`lifelong_core.methods`, the sweep in :mod:`lifelong_core.sweeping`.
- Metrics: :func:`mae`, :func:`eagg`, :func:`kappa`, :func:`decompose`,
  :func:`theorem21_vector`, :func:`model_correlation`; fits :func:`fit_exponential`,
  :func:`fit_power_law`; :func:`serial_additions` (App. G).
"""

from lifelong_core.sortsearch.fits import FitResult, fit_exponential, fit_power_law
from lifelong_core.sortsearch.kernels import SweepPlan, boundary_counts, plan_sweep, sweep_cuts
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
    SORTS,
    choose_sort_rows,
    column_sums,
    compute_order,
    sort_by_confidence,
    sort_by_sum,
    sort_models,
    sort_recursive,
)

__all__ = [
    "DEFAULT_RULE",
    "RULES",
    "SORTS",
    "Decomposition",
    "FitResult",
    "ModelCorrelation",
    "SweepPlan",
    "boundary_counts",
    "choose_sort_rows",
    "column_sums",
    "compute_order",
    "decompose",
    "dp_search",
    "eagg",
    "fit_exponential",
    "fit_power_law",
    "kappa",
    "mae",
    "model_correlation",
    "plan_sweep",
    "random_positions",
    "rule_thresholds",
    "serial_additions",
    "sort_by_confidence",
    "sort_by_sum",
    "sort_models",
    "sort_recursive",
    "sweep_cuts",
    "theorem21_vector",
    "threshold_metrics",
    "uniform_positions",
]
