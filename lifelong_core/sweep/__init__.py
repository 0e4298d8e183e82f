"""The sweep engine: one front door, :func:`run_sweep`, with the kernel (``dense`` or
``packed``) and the executor (``serial``, ``threads`` or ``dask``) as parameters.

- :mod:`.engine`: :func:`run_sweep` (Sort once, Search at every budget, score);
- :mod:`.dense`, :mod:`.packed`: the kernels (chunk -> records);
- :mod:`.executors`: where chunk tasks run;
- :mod:`.result`: :class:`SweepResult`, budgets, the one summary per budget.
"""

from lifelong_core.sweep.engine import KERNELS, run_sweep
from lifelong_core.sweep.executors import EXECUTORS
from lifelong_core.sweep.result import (
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
    "SweepResult",
    "check_budgets",
    "power_budgets",
    "run_sweep",
]
