"""The packed kernel: threshold rules on packed-bit row chunks (Prabhu et al., 2024, §4.2).

Same numbers as the dense kernel for Sorting by Sum and the threshold rules; rows stay
packed 8 per byte (:mod:`lifelong_core.bits`) from the source to the counts, which is
what makes paper-scale sweeps fit in memory. A sweep is two maps and two reductions
(docs/SCALING.md):

1. map :meth:`PackedKernel.sort_sums` over chunks of Sort rows -> int64 (n,) partial
   sums; reduce by addition -> the Sort order (``order_from_sums``, Prabhu et al. (2024) §3.1.1 (1));
2. map :meth:`PackedKernel.evaluate` over chunks of evaluated rows -> per-(model, budget)
   records; reduce by concatenation (:func:`lifelong_core.sweeping.result.assemble`).

The chunk functions only take plain arrays and small frozen objects, so any executor
(:mod:`lifelong_core.sweeping.executors`) can run them, dask tasks included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lifelong_core.bits import (
    SortOrder,
    column_sums_packed,
    ones_before,
    packed_bits_at,
    word_prefix,
)
from lifelong_core.rows import DEFAULT_CHUNK_ROWS, RowSource
from lifelong_core.sortsearch.metrics import threshold_metrics
from lifelong_core.sortsearch.search import rule_thresholds_packed
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.sweeping.result import RECORD_KEYS


@dataclass(frozen=True)
class EvalSpec:
    """What every evaluation chunk needs: the sampled sorted positions of every budget,
    the threshold rule and the Sort order.

    On a cluster this is broadcast once to every worker; the order dominates (8 bytes
    per sample, 13.6 MB at the paper's 1.7M samples).
    """

    n: int
    budgets: tuple[int, ...]
    positions: tuple[np.ndarray, ...]
    search: str
    order: np.ndarray


def records_from_sorted(
    S: np.ndarray, row_ids: np.ndarray, spec: EvalSpec
) -> dict[str, np.ndarray]:
    """Per-(model, budget) metrics of one chunk from its packed rows in Sort order.

    The numbers of the dense kernel (:mod:`lifelong_core.sweeping.dense`), computed without
    materialising counts at every cut: the observations at a budget's sorted positions
    ``p`` are read as bits of the sorted rows and stay packed, the rule turns them into a
    threshold ``t`` a byte at a time (§3.2, extrapolated to n;
    :func:`~lifelong_core.sortsearch.search.rule_thresholds_packed`), and MAE, E_agg and
    kappa follow from the ones before ``t`` and the row total (Theorem 3.1, Eq. 6) -- one
    prefix count per row and budget instead of ~3 n' counts.
    """
    n = spec.n
    rows = len(row_ids)
    cum = word_prefix(S)
    # Not cum[:, -1]: the last word's padding positions hold arbitrary gathered bits.
    totals = ones_before(S, cum, np.full(rows, n, dtype=np.int64))
    out: dict[str, list] = {k: [] for k in RECORD_KEYS}
    for b, p in zip(spec.budgets, spec.positions):
        t = rule_thresholds_packed(spec.search, p, packed_bits_at(S, p), n)
        met = threshold_metrics(t, ones_before(S, cum, t), totals, n)
        out["model_row"].append(np.asarray(row_ids, dtype=np.int64))
        out["budget"].append(np.full(rows, b, dtype=np.int64))
        for k in ("est_acc", "true_acc", "mae", "eagg", "kappa"):
            out[k].append(np.asarray(met[k], dtype=np.float64))
    return {k: np.concatenate(v) for k, v in out.items()}


class PackedKernel:
    """Packed rows, the 8x8 bit-transpose kernels of :mod:`lifelong_core.bits`."""

    name = "packed"
    decomposes = False

    def default_chunk_rows(self, n: int) -> int:
        return DEFAULT_CHUNK_ROWS

    def read(self, source: RowSource, start: int, stop: int) -> np.ndarray:
        return source.read(start, stop)

    def sort_sums(self, packed: np.ndarray, n: int) -> np.ndarray:
        """Map step of Sort: column sums (int64, n) of one chunk of packed Sort rows."""
        return column_sums_packed(packed, n)

    def spec(
        self,
        n: int,
        budgets: tuple[int, ...],
        positions: tuple[np.ndarray, ...],
        search: str,
        order: np.ndarray,
        decompose: bool,
    ) -> EvalSpec:
        return EvalSpec(n, tuple(budgets), tuple(positions), search, order)

    def evaluate(
        self, packed: np.ndarray, row_ids: np.ndarray, spec: EvalSpec
    ) -> dict[str, np.ndarray]:
        """Map step of Search: records of one chunk of packed evaluated rows."""
        # Building the padded order costs O(n) (~10 ms at 1.7M samples), small next to a
        # chunk, and keeps the task free of per-process caches.
        S = SortOrder(spec.order, spec.n, checked=True).sorted_rows(packed)
        return records_from_sorted(S, row_ids, spec)


def order_from_packed(source: RowSource, ties: str = "stable") -> np.ndarray:
    """Sorting by Sum (Prabhu et al. (2024) §3.1.1 (1)) of a source's rows, read packed a
    chunk at a time: column sums added up, then the easy-to-hard order."""
    sums = np.zeros(source.n, dtype=np.int64)
    for _, P in source.chunks():
        sums += column_sums_packed(P, source.n)
    return order_from_sums(sums, ties)
