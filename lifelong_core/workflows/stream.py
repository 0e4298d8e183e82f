"""The stream study: models arrive in release order and are estimated as they come.

Serial additions as in Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an
Era of Rapid Progress*, App. G; configurations compared by the Pareto front of error
against compute, as Bornschein et al. (2023), *NEVIS'22: A Stream of 100 Tasks Sampled
from 30 Years of Computer Vision Research*, §3 compare methods on a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch import RULES, serial_additions
from lifelong_core.studies.stream_protocol import pareto_front  # noqa: F401  (one implementation; pages import it here)
from lifelong_core.sweeping import sweep_samplings
from lifelong_core.workflows.budgets import budgets_within, default_budgets, single_budget_choices
from lifelong_core.workflows.selection import Selection, kept_key
from lifelong_core.workflows.sortsets import release_rows

if TYPE_CHECKING:
    from lifelong_core.store.kept_results import KeptResults

SAMPLINGS = ("uniform", "random")

# The Stream page before a widget is touched: what it shows first, and what
# ``lbe state --refresh`` keeps of it.
DEFAULT_POOL = 20
DEFAULT_BUDGET = 128
DEFAULT_SEED = 0
# The grid of the page's Pareto front: these pool sizes and the page's own, these budgets.
CONFIG_POOLS = (5, 10, 20, 50, 100)
CONFIG_BUDGETS = (8, 16, 32, 64, 128, 256, 512, 1024, 2048)
# What a kept stream table is filed under (store.kept_results), and the version of its
# digest.
KEPT_KIND = "stream"
KEPT_FORMAT = 1


def default_pool(m: int) -> int:
    """The models evaluated in full before the stream starts, by default.

    Parameters
    ----------
    m : int
        Models in the stream (at least 2).

    Returns
    -------
    int
        :data:`DEFAULT_POOL`, or ``m - 1`` when there are fewer models.
    """
    return min(DEFAULT_POOL, m - 1)


def default_budget(n: int) -> int:
    """The budget n′ per arriving model, by default: :data:`DEFAULT_BUDGET` when it is one of
    the page's choices (:func:`~.budgets.single_budget_choices`), else the middle choice.

    Parameters
    ----------
    n : int
        Samples per model.

    Returns
    -------
    int
    """
    choices = single_budget_choices(n)
    return DEFAULT_BUDGET if DEFAULT_BUDGET in choices else choices[len(choices) // 2]


def config_grid(m: int, n: int, pool: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The pool sizes and budgets of the page's Pareto front (:func:`stream_configs`).

    Parameters
    ----------
    m, n : int
        Models and samples of the stream.
    pool : int
        The pool chosen for the replay, added to :data:`CONFIG_POOLS`.

    Returns
    -------
    tuple
        The pools below ``m`` (sorted) and the budgets within ``n`` (the default budgets
        when none of :data:`CONFIG_BUDGETS` is).
    """
    pools = tuple(sorted({p for p in (*CONFIG_POOLS, pool) if p < m}))
    budgets = tuple(budgets_within(CONFIG_BUDGETS, n) or default_budgets(n))
    return pools, budgets


def stream_replay(
    sel: Selection,
    pool: int,
    budget: int,
    sampling: str,
    rule: str,
    seed: int,
    kept: KeptResults | None = None,
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
    kept : KeptResults, optional
        Results kept in the store (:mod:`lifelong_core.store.kept_results`): a table kept
        under the digest of ``sel`` (:func:`~.selection.kept_key`), these arguments and
        the code's version is read instead of replaying; one computed is kept when
        ``kept`` writes (``lbe state --refresh`` keeps the page's first view).

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
    m = sel.A.shape[0]
    if not 1 <= pool < m:
        raise InputError(f"the initial pool needs between 1 and {m - 1} models, got {pool}.")
    if kept is None:
        return _replay(sel, pool, budget, sampling, rule, seed)
    args = [int(pool), int(budget), str(sampling), str(rule), int(seed)]
    return kept.get_or_compute(
        kept_key(sel, [KEPT_KIND, "replay", KEPT_FORMAT], args),
        KEPT_KIND,
        ("steps",),
        lambda: {"steps": _replay(sel, pool, budget, sampling, rule, seed)},
        {"replay": args},
    )["steps"]


def _replay(
    sel: Selection, pool: int, budget: int, sampling: str, rule: str, seed: int
) -> pd.DataFrame:
    n = sel.A.shape[1]
    order = release_rows(sel.models)
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
    kept: KeptResults | None = None,
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
    kept : KeptResults, optional
        Results kept in the store, as for :func:`stream_replay`.

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
    pools, budgets = [int(p) for p in pools], [int(b) for b in budgets]
    if kept is None:
        return _configs(sel, pools, budgets, seed, progress)
    args = [pools, budgets, int(seed)]
    return kept.get_or_compute(
        kept_key(sel, [KEPT_KIND, "configs", KEPT_FORMAT], args),
        KEPT_KIND,
        ("configs",),
        lambda: {"configs": _configs(sel, pools, budgets, seed, progress)},
        {"configs": args},
    )["configs"]


def _configs(
    sel: Selection,
    pools: list[int],
    budgets: list[int],
    seed: int,
    progress: Callable[[float], object] | None,
) -> pd.DataFrame:
    m, n = sel.A.shape
    order = release_rows(sel.models)
    valid = [p for p in pools if 1 <= p < m]
    grid = [(p, r) for p in valid for r in RULES]
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
    for p, s, r in ((p, s, r) for p in valid for s in SAMPLINGS for r in RULES):
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
