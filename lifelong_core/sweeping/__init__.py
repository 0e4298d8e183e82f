"""The sweep engine: one front door, :func:`run_sweep`, with the kernel (``dense`` or
``packed``), the executor (``serial``, ``threads`` or ``dask``) and the memory bound as
parameters.

- :mod:`.plan`: :func:`plan_sweep`, how a sweep runs (the rows' form, the method's
  registered capabilities, the request), decided once;
- :mod:`.engine`: :func:`run_sweep` (Sort once, Search at every budget, score), following
  the plan down one path; :func:`sweep_samplings`, a threshold rule's sweeps at several
  samplings sharing one Sort and one pass of prefix counts;
- :mod:`.dense`, :mod:`.packed`: the threshold rules' kernels (chunk -> records);
- :mod:`.protocol`: any other method, fitted once and run model by model;
- :mod:`.copy_nearest`: CopyNearest&Expand's declared whole sweep on packed rows;
- :mod:`.executors`: where chunk tasks run;
- :mod:`.result`: :class:`SweepResult`, budgets, the one summary per budget.
"""

from lifelong_core.sweeping.engine import check_bounds, run_sweep, sweep_samplings
from lifelong_core.sweeping.executors import EXECUTORS
from lifelong_core.sweeping.plan import KERNELS, SweepPlan, plan_sweep
from lifelong_core.sweeping.result import (
    PER_MODEL_COLUMNS,
    TABLE_COLUMNS,
    SweepResult,
    check_budgets,
    power_budgets,
)

__all__ = [
    "EXECUTORS",
    "KERNELS",
    "PER_MODEL_COLUMNS",
    "TABLE_COLUMNS",
    "SweepPlan",
    "SweepResult",
    "check_bounds",
    "check_budgets",
    "plan_sweep",
    "power_budgets",
    "run_sweep",
    "sweep_samplings",
]
