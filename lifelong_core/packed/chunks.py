"""Row sources of packed bits and the per-chunk functions both sweep engines map.

A sweep over packed rows is two maps and two reductions (docs/SCALING.md):

1. map :func:`sort_sums_chunk` over chunks of Sort rows -> int64 (n,) partial sums;
   reduce by addition -> the Sort order (``order_from_sums``, seed 001 §3.1.1 (1));
2. map :func:`eval_chunk` over chunks of evaluated rows -> per-(model, budget) records,
   computed from prefix counts at the sweep's cuts (docs/CONTRACTS.md seam); reduce by
   concatenation -> :func:`finish` builds the engine's ``SweepResult``.

The chunk functions only take plain arrays and small frozen objects, so the same code runs
in a thread pool (:mod:`lifelong_core.packed.sweep`) and as dask tasks
(:mod:`lifelong_core.packed.dask_engine`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.packed.kernels import SortedCounter, column_sums_packed, pack_rows, packed_width
from lifelong_core.sortsearch.kernels import SweepPlan
from lifelong_core.sortsearch.metrics import correlations, threshold_metrics
from lifelong_core.sortsearch.search import rule_thresholds
from lifelong_core.sortsearch.sweep import TABLE_COLUMNS, SweepResult

RECORD_FIELDS = ("model_row", "budget", "est_acc", "true_acc", "mae", "eagg", "kappa")

# Rows per chunk: 256 packed rows of the paper's 1.7M samples are 54 MB, and the chunk's
# int32 counts at ~200K cuts another 200 MB; a few chunks in flight stay far below the
# 12 GB budget while per-chunk Python overhead stays negligible.
DEFAULT_CHUNK_ROWS = 256


class PackedSource:
    """Rows of packed bits handed out in chunks: ``n`` samples, ``row_ids`` in order.

    Subclasses implement :meth:`read` (packed rows for some positions of ``row_ids``).
    ``chunks(rows)`` yields ``(row_ids, packed)`` for consecutive runs of positions.
    """

    n: int
    row_ids: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.row_ids)

    def read(self, start: int, stop: int) -> np.ndarray:
        raise NotImplementedError

    def chunks(self, rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for s in range(0, self.n_rows, rows):
            e = min(s + rows, self.n_rows)
            yield self.row_ids[s:e], self.read(s, e)

    def spans(self, rows: int = DEFAULT_CHUNK_ROWS) -> list[tuple[int, int]]:
        return [(s, min(s + rows, self.n_rows)) for s in range(0, self.n_rows, rows)]


class PackedArray(PackedSource):
    """Packed rows held in memory (or a read-only memmap of a packed ``.npy``).

    ``PackedArray.from_dense(A)`` packs a 0/1 matrix; ``rows`` selects and orders rows
    (labels in results are these original row numbers).
    """

    def __init__(self, packed: np.ndarray, n: int, rows: np.ndarray | None = None):
        packed = np.asarray(packed) if not isinstance(packed, np.memmap) else packed
        if packed.ndim != 2 or packed.dtype != np.uint8:
            raise InputError("packed rows must be a 2-dimensional uint8 array.")
        if packed.shape[1] != packed_width(n):
            raise InputError(f"packed rows have {packed.shape[1]} bytes but {n} samples need {packed_width(n)}.")
        self.packed = packed
        self.n = int(n)
        if rows is None:
            self.row_ids = np.arange(packed.shape[0], dtype=np.int64)
        else:
            rows = np.asarray(rows, dtype=np.int64)
            if rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= packed.shape[0])):
                raise InputError(f"row indices must lie in [0, {packed.shape[0]}).")
            self.row_ids = rows
        self._contiguous = rows is None or (rows.size > 0 and np.all(np.diff(rows) == 1))

    @classmethod
    def from_dense(cls, A: np.ndarray, rows: np.ndarray | None = None) -> "PackedArray":
        A = np.asarray(A)
        if A.ndim != 2:
            raise InputError(f"the matrix must be 2-dimensional, got {A.ndim} dimensions.")
        return cls(pack_rows(A), A.shape[1], rows)

    def read(self, start: int, stop: int) -> np.ndarray:
        if self._contiguous and stop > start:
            first = int(self.row_ids[start])
            return np.asarray(self.packed[first : first + (stop - start)])
        return np.asarray(self.packed[self.row_ids[start:stop]])


def as_source(A, what: str) -> PackedSource:
    """A :class:`PackedSource` as is; a dense 0/1 array is packed (tests, small inputs)."""
    if isinstance(A, PackedSource):
        return A
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] == 0 or A.shape[1] == 0:
        raise InputError(f"the {what} matrix must be 2-dimensional and non-empty.")
    if A.dtype != bool and not np.isin(np.unique(A[:, : min(A.shape[1], 1 << 16)]), (0, 1)).all():
        raise InputError(f"the {what} matrix must hold only 0 and 1.")
    return PackedArray.from_dense(A)


def sort_sums_chunk(packed: np.ndarray, n: int) -> np.ndarray:
    """Map step of Sort: column sums (int64, n) of one chunk of packed Sort rows."""
    return column_sums_packed(packed, n)


@dataclass(frozen=True)
class EvalSpec:
    """What every evaluation chunk needs: the sweep plan, the rule and the Sort order.

    On a cluster this is broadcast once to every worker; the order dominates (8 bytes
    per sample, 13.6 MB at the paper's 1.7M samples).
    """

    plan: SweepPlan
    search: str
    order: np.ndarray


def records_from_counts(counts: np.ndarray, row_ids: np.ndarray, plan: SweepPlan, search: str) -> dict[str, np.ndarray]:
    """Per-(model, budget) metrics of one chunk from its prefix counts at ``plan.cuts``.

    The arithmetic of the engine's threshold fast path (``lifelong_core.sortsearch.sweep``):
    the observation at sorted position ``p`` is ``count(p+1) - count(p)``, the rule turns
    the ``n'`` observations into a threshold ``t`` (§3.2, extrapolated to n), and MAE,
    E_agg and kappa follow from ``count(t)`` and the row total (Theorem 3.1, Eq. 6).
    """
    n = plan.n
    total_col = int(plan.index(np.array([n]))[0])
    totals = counts[:, total_col].astype(np.int64)
    rows = len(row_ids)
    out: dict[str, list] = {k: [] for k in RECORD_FIELDS}
    for b, p in zip(plan.budgets, plan.positions):
        observed = (np.take(counts, plan.index(p + 1), axis=1) - np.take(counts, plan.index(p), axis=1)).astype(np.uint8)
        t = rule_thresholds(search, p, observed, n)
        c_t = np.take_along_axis(counts, plan.index(t)[:, None], axis=1)[:, 0]
        met = threshold_metrics(t, c_t, totals, n)
        out["model_row"].append(np.asarray(row_ids, dtype=np.int64))
        out["budget"].append(np.full(rows, b, dtype=np.int64))
        for k in ("est_acc", "true_acc", "mae", "eagg", "kappa"):
            out[k].append(np.asarray(met[k], dtype=np.float64))
    return {k: np.concatenate(v) for k, v in out.items()}


def eval_chunk(packed: np.ndarray, row_ids: np.ndarray, spec: EvalSpec) -> dict[str, np.ndarray]:
    """Map step of Search: records of one chunk of packed evaluated rows."""
    # Building the counter costs O(n) (~10 ms at 1.7M samples), small next to a chunk,
    # and keeps the task free of per-process caches.
    counts = SortedCounter(spec.order, spec.plan.cuts, spec.plan.n, checked=True).counts(packed)
    return records_from_counts(counts, row_ids, spec.plan, spec.search)


def finish(parts: list[dict[str, np.ndarray]], order: np.ndarray, config: dict) -> SweepResult:
    """Reduce step: concatenate chunk records, sort by (budget, model), summarise per budget.

    Same ordering and summary as the engine's ``run_sweep`` (means over models;
    Pearson and Spearman across models).
    """
    if not parts:
        raise InputError("there are no rows to evaluate.")
    rec = {k: np.concatenate([p[k] for p in parts]) for k in RECORD_FIELDS}
    idx = np.lexsort((rec["model_row"], rec["budget"]))
    per_model = pd.DataFrame({k: v[idx] for k, v in rec.items()})
    rows = []
    for b, g in per_model.groupby("budget", sort=True):
        pear, spear = correlations(g["est_acc"].to_numpy(), g["true_acc"].to_numpy())
        rows.append({"budget": int(b), "mae": g["mae"].mean(), "eagg": g["eagg"].mean(), "kappa": g["kappa"].mean(),
                     "pearson": pear, "spearman": spear})
    return SweepResult(pd.DataFrame(rows, columns=TABLE_COLUMNS), per_model, order, config)
