"""The dense kernel: threshold rules on uint8 row chunks via prefix counts (Prabhu et al., 2024, §4.2).

One pass per chunk of evaluated rows computes prefix counts at every cut any budget
needs (docs/development/contracts.md, "boundary counts"), then each budget costs O(rows * n') from
those counts. Nothing of size (models x samples) beyond one chunk is ever held. The only
kernel that also gives the error decomposition (§4.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lifelong_core.rows import RowSource
from lifelong_core.sortsearch.kernels import (
    Scratch,
    SweepPlan,
    default_block_rows,
    plan_from_positions,
)
from lifelong_core.sortsearch.metrics import kappa_from, threshold_metrics
from lifelong_core.sortsearch.search import rule_thresholds
from lifelong_core.sortsearch.sort import best_prefix_counts, column_sums
from lifelong_core.sweeping.result import DECOMP_KEYS, RECORD_KEYS


@dataclass(frozen=True)
class DenseSpec:
    """What every chunk needs: the plan (positions and cuts), the order and the rule."""

    plan: SweepPlan
    order: np.ndarray
    search: str
    decompose: bool
    # Every sampled position of any budget, once: observations are read for all of them
    # in one gather from the sorted chunk, then each budget picks its own subset.
    sampled: np.ndarray
    pick: tuple[np.ndarray, ...]
    total_col: int


class DenseKernel:
    """uint8 rows, :func:`~lifelong_core.sortsearch.boundary_counts` on reusable buffers."""

    name = "dense"
    decomposes = True

    def __init__(self) -> None:
        self._scratch = Scratch()

    def __getstate__(self) -> dict:
        # Buffers are per thread and per process; a copy sent to a worker makes its own.
        return {}

    def __setstate__(self, state: dict) -> None:
        self._scratch = Scratch()

    def default_chunk_rows(self, n: int) -> int:
        return default_block_rows(n)

    def read(self, source: RowSource, start: int, stop: int) -> np.ndarray:
        return source.read_dense(start, stop)

    def sort_sums(self, rows: np.ndarray, n: int) -> np.ndarray:
        return column_sums(rows)

    def spec(
        self,
        n: int,
        budgets: tuple[int, ...],
        positions: tuple[np.ndarray, ...],
        search: str,
        order: np.ndarray,
        decompose: bool,
    ) -> DenseSpec:
        plan = plan_from_positions(n, budgets, positions, rules=(search,))
        sampled = np.unique(np.concatenate(plan.positions))
        return DenseSpec(
            plan,
            order,
            search,
            decompose,
            sampled,
            tuple(np.searchsorted(sampled, p) for p in plan.positions),
            int(plan.index(np.array([n]))[0]),
        )

    def evaluate(
        self, block: np.ndarray, row_ids: np.ndarray, spec: DenseSpec
    ) -> dict[str, np.ndarray]:
        plan, n = spec.plan, spec.plan.n
        counts, sorted_block = self._scratch.sorted_counts(block, spec.order, plan.cuts)
        rows = counts.shape[0]
        totals = counts[:, spec.total_col].astype(np.int64)
        # np.take along an axis is several times faster than fancy indexing here.
        observed_all = np.take(sorted_block, spec.sampled, axis=1)
        if spec.decompose:
            t_star, c_star = best_prefix_counts(sorted_block)
            ale = ((t_star - c_star) + (totals - c_star)) / n
        parts: dict[str, list] = {
            k: [] for k in RECORD_KEYS + (DECOMP_KEYS if spec.decompose else ())
        }
        for b, p, sel in zip(plan.budgets, plan.positions, spec.pick):
            t = rule_thresholds(spec.search, p, np.take(observed_all, sel, axis=1), n)
            c_t = counts[np.arange(rows), plan.index(t)]
            met = threshold_metrics(t, c_t, totals, n)
            parts["model_row"].append(np.asarray(row_ids, dtype=np.int64))
            parts["budget"].append(np.full(rows, b, dtype=np.int64))
            for k in ("est_acc", "true_acc", "mae", "eagg", "kappa"):
                parts[k].append(met[k])
            if spec.decompose:
                parts["aleatoric"].append(ale)
                parts["epistemic"].append(np.abs(t - t_star) / n)
                parts["kappa_aleatoric"].append(kappa_from(ale, totals / n, t_star / n))
                parts["kappa_epistemic"].append(
                    kappa_from(np.abs(t - t_star) / n, t_star / n, t / n)
                )
        return {k: np.concatenate(v) for k, v in parts.items()}
