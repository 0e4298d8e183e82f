"""The stream study: models arrive in release order and are estimated as they come.

Serial additions as in Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an
Era of Rapid Progress*, App. G; configurations compared by the Pareto front of error
against compute, as Bornschein et al. (2023), *NEVIS'22: A Stream of 100 Tasks Sampled
from 30 Years of Computer Vision Research*, §3 compare methods on a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch import RULES, serial_additions
from lifelong_core.studies.stream_protocol import pareto_front  # noqa: F401  (one implementation; pages import it here)
from lifelong_core.sweeping import sweep_samplings
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.sortsets import release_rows

SAMPLINGS = ("uniform", "random")


def stream_replay(
    sel: Selection, pool: int, budget: int, sampling: str, rule: str, seed: int
) -> pd.DataFrame:
    """Replay ``sel`` in release order: serial additions (Prabhu et al., 2024, App. G).

    The first ``pool`` released models are evaluated in full; each later model is
    estimated by Sort & Search from ``budget`` evaluations and its predicted row joins the
    Sort sums. One row per arriving model with its error and the running evaluation counts
    of this scheme and of evaluating everything in full.

    Parameters
    ----------
    sel : Selection
        The data choice (dense; a large store passes a bounded block).
    pool : int
        Models evaluated in full before the stream starts, 1 to m - 1.
    budget : int
        Evaluations n′ spent on each arriving model.
    sampling : {"uniform", "random"}
        How the n′ sorted positions are chosen.
    rule : {"midpoint", "reference"}
        The threshold rule (:mod:`lifelong_core.sortsearch.search`).
    seed : int
        Seed of the random sampling.

    Returns
    -------
    pandas.DataFrame
        One row per arriving model, in release order: ``step``, ``model_row`` (its row in
        ``sel``), ``name``, ``threshold``, ``est_acc``, ``true_acc``, ``mae``,
        ``order_unchanged`` (the re-sort after adding its prediction kept the order),
        ``models_seen``, ``eagg`` (``|est_acc - true_acc|``), ``evaluations_ss`` and
        ``evaluations_full`` (running totals of evaluations, Sort & Search against
        evaluating every model in full). Accuracies and errors are fractions.

    Raises
    ------
    InputError
        If ``pool`` is not in [1, m - 1], or on a budget, sampling, rule or seed that
        Sort & Search refuses.
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
    sel: Selection,
    pools: Iterable[int],
    budgets: Sequence[int],
    seed: int,
    progress: Callable[[float], object] | None = None,
) -> pd.DataFrame:
    """Cost and error over the whole stream for every Sort & Search configuration.

    Configuration = (initial pool evaluated in full, budget n′, sampling, threshold rule).
    Cost: evaluations spent on all m models (pool x n + rest x n′). Error: mean over all m
    models, the pool counting as exact, so every configuration is scored on the same set.
    Pools outside [1, m) and budgets above n are skipped. The page draws the Pareto front
    of error against cost (:func:`pareto_front`), as Bornschein et al. (2023) compare
    methods on a stream (§3).

    Parameters
    ----------
    sel : Selection
        The data choice (dense).
    pools : iterable of int
        Initial pool sizes, in models, taken in release order.
    budgets : iterable of int
        Budgets n′ per arriving model.
    seed : int
        Seed of the sweeps.
    progress : callable, optional
        Called with the fraction of configurations done, from 0 to 1.

    Returns
    -------
    pandas.DataFrame
        One row per (pool, budget, sampling, rule): ``pool``, ``budget``, ``sampling``,
        ``rule``, ``config`` (a label), ``evaluations`` (the cost), ``mae`` and ``eagg``
        (mean sample-level and aggregate error over all m models, fractions), and
        ``full_evaluations`` (m x n, the cost of evaluating everything).

    Raises
    ------
    InputError
        If the sweep refuses a configuration (e.g. a budget below 1 or a seed out of
        range).
    """
    m, n = sel.A.shape
    order = release_rows(sel.models)
    kept = [p for p in pools if 1 <= p < m]
    grid = [(p, r) for p in kept for r in RULES]
    runs = {}
    for i, (p, r) in enumerate(grid):
        # Both samplings of a rule share one Sort and one pass of prefix counts.
        results = sweep_samplings(
            sel.A[order[:p]],
            sel.A[order[p:]],
            [b for b in budgets if b <= n],
            SAMPLINGS,
            search=r,
            seed=seed,
        )
        runs.update({(p, s, r): res for s, res in zip(SAMPLINGS, results)})
        if progress is not None:
            progress((i + 1) / len(grid))
    recs = []
    for p, s, r in ((p, s, r) for p in kept for s in SAMPLINGS for r in RULES):
        row: Any  # a row of itertuples: its fields are typed as any pandas scalar
        for row in runs[(p, s, r)].table.itertuples():
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
    out = pd.DataFrame(recs)
    out["full_evaluations"] = m * n
    return out
