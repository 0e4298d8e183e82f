"""The stream study: models arrive in release order and are estimated as they come.

Serial additions as in Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an
Era of Rapid Progress*, App. G; configurations compared by the Pareto front of error
against compute, as Bornschein et al. (2023), *NEVIS'22: A Stream of 100 Tasks Sampled
from 30 Years of Computer Vision Research*, §3 compare methods on a stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch import RULES, serial_additions
from lifelong_core.studies.stream_protocol import pareto_front  # noqa: F401  (one implementation; pages import it here)
from lifelong_core.sweep import run_sweep
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.sortsets import release_rows

SAMPLINGS = ("uniform", "random")


def stream_replay(
    sel: Selection, pool: int, budget: int, sampling: str, rule: str, seed: int
) -> pd.DataFrame:
    """Replay ``sel`` in release order.

    The first ``pool`` released models are evaluated in full; each later model is
    estimated by Sort & Search from ``budget`` evaluations and its predicted row joins the
    Sort sums. One row per arriving model with its error and the running evaluation counts
    of this scheme and of evaluating everything in full.
    """
    m, n = sel.A.shape
    order = release_rows(sel.models)
    if not 1 <= pool < m:
        raise InputError(f"the initial pool needs between 1 and {m - 1} models, got {pool}.")
    steps, _ = serial_additions(
        sel.A[order[:pool]], sel.A[order[pool:]], budget, sampling=sampling, rule=rule, seed=seed
    )
    steps["model_row"] = order[pool:][steps["step"].to_numpy()]
    steps["name"] = np.asarray(sel.names, dtype=object)[steps["model_row"].to_numpy()]
    steps["models_seen"] = pool + steps["step"] + 1
    steps["eagg"] = (steps["est_acc"] - steps["true_acc"]).abs()
    steps["evaluations_ss"] = pool * n + (steps["step"] + 1) * budget
    steps["evaluations_full"] = steps["models_seen"] * n
    return steps


def stream_configs(
    sel: Selection, pools, budgets, seed: int, progress: Callable[[float], None] | None = None
) -> pd.DataFrame:
    """Cost and error over the whole stream for every Sort & Search configuration.

    Configuration = (initial pool evaluated in full, budget n′, sampling, threshold rule).
    Cost: evaluations spent on all m models (pool x n + rest x n′). Error: mean over all m
    models, the pool counting as exact, so every configuration is scored on the same set.
    Pools outside [1, m) and budgets above n are skipped.
    """
    m, n = sel.A.shape
    order = release_rows(sel.models)
    recs = []
    grid = [(p, s, r) for p in pools if 1 <= p < m for s in SAMPLINGS for r in RULES]
    for i, (p, s, r) in enumerate(grid):
        res = run_sweep(
            sel.A[order[:p]],
            sel.A[order[p:]],
            [b for b in budgets if b <= n],
            sampling=s,
            search=r,
            seed=seed,
        )
        row: Any  # a row of itertuples: its fields are typed as any pandas scalar
        for row in res.table.itertuples():
            recs.append(
                {
                    "pool": p,
                    "budget": int(row.budget),
                    "sampling": s,
                    "rule": r,
                    "config": f"pool {p}, n′={int(row.budget)}, {s}, {r}",
                    "evaluations": p * n + (m - p) * int(row.budget),
                    "mae": row.mae * (m - p) / m,
                    "eagg": row.eagg * (m - p) / m,
                }
            )
        if progress is not None:
            progress((i + 1) / len(grid))
    out = pd.DataFrame(recs)
    out["full_evaluations"] = m * n
    return out
