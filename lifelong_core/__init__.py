"""Lifelong Benchmark Explorer: evaluate new models from a few evaluations, with honest
uncertainty, on a growing cache of per-sample predictions.

``import lifelong_core as lbe`` gives the public API (:mod:`lifelong_core.api`): open or
create a store, import results, choose the items a new model should run, estimate it with
an interval and a rank, run a budget sweep or a backtest, rank with uncertainty, weigh
tasks, compare matched accuracy. Names are resolved on first use, so importing the package
loads neither Streamlit nor DuckDB. The engine (:mod:`lifelong_core.sortsearch`,
:mod:`lifelong_core.methods`, :mod:`lifelong_core.sweeping`, :mod:`lifelong_core.stats`,
:mod:`lifelong_core.matching`) never imports Streamlit or plotly; only
:mod:`lifelong_core.store` imports DuckDB. docs/development/architecture.md maps the modules.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# The public names, each defined in lifelong_core.api (kept equal to api.__all__ by a test).
__all__ = [
    "DEFAULT_METHOD",
    "Capabilities",
    "FitMemory",
    "SweepResult",
    "available_methods",
    "backtest",
    "cache",
    "capabilities",
    "counts",
    "create_store",
    "demo_store",
    "estimate_new_model",
    "get_method",
    "import_file",
    "import_inspect",
    "import_lm_eval",
    "import_long",
    "import_matrix",
    "matched_accuracy",
    "matched_accuracy_in_store",
    "open_store",
    "pairwise_differences",
    "rank_intervals",
    "rank_models",
    "register",
    "results",
    "run_sweep",
    "select_items",
    "sweep",
    "task_weighting",
    "vtab_counts",
]


def __getattr__(name: str) -> Any:
    # The package root re-exports the API lazily: the API sits on the top floor of the
    # layers (it calls the workflows), and importing it eagerly would load them all.
    if name in __all__:
        import importlib

        value = getattr(importlib.import_module("lifelong_core.api"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lifelong_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
