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

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.packed.kernels import (
    SortOrder,
    bits_at,
    column_sums_packed,
    ones_before,
    pack_rows,
    packed_width,
    word_prefix,
)
from lifelong_core.sortsearch.metrics import correlations, threshold_metrics
from lifelong_core.sortsearch.search import positions_for, rule_thresholds
from lifelong_core.sortsearch.sweep import TABLE_COLUMNS, SweepResult

RECORD_FIELDS = ("model_row", "budget", "est_acc", "true_acc", "mae", "eagg", "kappa")

# Rows per chunk: 256 packed rows of the paper's 1.7M samples are 54 MB, and the chunk's
# int32 counts at ~200K cuts another 200 MB; a few chunks in flight stay far below the
# 12 GB budget while per-chunk Python overhead stays negligible.
DEFAULT_CHUNK_ROWS = 256


class PackedSource(ABC):
    """Rows of packed bits handed out in chunks: ``n`` samples, ``row_ids`` in order.

    Subclasses implement :meth:`read` (packed rows for some positions of ``row_ids``).
    ``chunks(rows)`` yields ``(row_ids, packed)`` for consecutive runs of positions.
    """

    n: int
    row_ids: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.row_ids)

    @abstractmethod
    def read(self, start: int, stop: int) -> np.ndarray:
        """Packed rows (stop - start, ceil(n/8)) of ``row_ids[start:stop]``."""

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


class MatrixRows(PackedSource):
    """Rows of a 0/1 matrix file (``io_matrix.open_matrix``: .npy streamed from disk),
    validated and packed a chunk at a time. Holds only the path, so it pickles to workers."""

    def __init__(self, path, rows: np.ndarray | None = None, what: str = "--matrix"):
        from lifelong_core.io_matrix import open_matrix

        self._src = open_matrix(path, what)
        self.n = self._src.n_cols
        m = self._src.n_rows
        self.row_ids = np.arange(m, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
        if self.row_ids.size and (self.row_ids.min() < 0 or self.row_ids.max() >= m):
            raise InputError(f"row indices must lie in [0, {m}) for {what} file {path}.")

    def read(self, start: int, stop: int) -> np.ndarray:
        return pack_rows(self._src.read_rows(self.row_ids[start:stop]))


def as_source(A, what: str) -> PackedSource:
    """A :class:`PackedSource` as is; a dense 0/1 array is packed (tests, small inputs)."""
    if isinstance(A, PackedSource):
        return A
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] == 0 or A.shape[1] == 0:
        raise InputError(f"the {what} matrix must be 2-dimensional and non-empty.")
    if A.dtype != bool and ((A != 0) & (A != 1)).any():
        raise InputError(f"the {what} matrix must hold only 0 and 1.")
    return PackedArray.from_dense(A)


def sort_sums_chunk(packed: np.ndarray, n: int) -> np.ndarray:
    """Map step of Sort: column sums (int64, n) of one chunk of packed Sort rows."""
    return column_sums_packed(packed, n)


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

    @classmethod
    def build(cls, n: int, budgets: tuple[int, ...], sampling: str, search: str, order: np.ndarray, seed: int) -> "EvalSpec":
        """Positions drawn as the engine's ``plan_sweep`` draws them: one per budget, in
        budget order, from ``default_rng(seed)`` (used by random sampling only)."""
        rng = np.random.default_rng(seed)
        return cls(n, tuple(budgets), tuple(positions_for(sampling, n, b, rng) for b in budgets), search, order)


def records_from_sorted(S: np.ndarray, row_ids: np.ndarray, spec: EvalSpec) -> dict[str, np.ndarray]:
    """Per-(model, budget) metrics of one chunk from its packed rows in Sort order.

    The numbers of the engine's threshold fast path (``lifelong_core.sortsearch.sweep``),
    computed without materialising counts at every cut: the observations at a budget's
    sorted positions ``p`` are read as bits of the sorted rows, the rule turns them into a
    threshold ``t`` (§3.2, extrapolated to n), and MAE, E_agg and kappa follow from the
    ones before ``t`` and the row total (Theorem 3.1, Eq. 6) -- one prefix count per row
    and budget instead of ~3 n' counts.
    """
    n = spec.n
    rows = len(row_ids)
    cum = word_prefix(S)
    # Not cum[:, -1]: the last word's padding positions hold arbitrary gathered bits.
    totals = ones_before(S, cum, np.full(rows, n, dtype=np.int64))
    out: dict[str, list] = {k: [] for k in RECORD_FIELDS}
    for b, p in zip(spec.budgets, spec.positions):
        t = rule_thresholds(spec.search, p, bits_at(S, p), n)
        met = threshold_metrics(t, ones_before(S, cum, t), totals, n)
        out["model_row"].append(np.asarray(row_ids, dtype=np.int64))
        out["budget"].append(np.full(rows, b, dtype=np.int64))
        for k in ("est_acc", "true_acc", "mae", "eagg", "kappa"):
            out[k].append(np.asarray(met[k], dtype=np.float64))
    return {k: np.concatenate(v) for k, v in out.items()}


def eval_chunk(packed: np.ndarray, row_ids: np.ndarray, spec: EvalSpec) -> dict[str, np.ndarray]:
    """Map step of Search: records of one chunk of packed evaluated rows."""
    # Building the padded order costs O(n) (~10 ms at 1.7M samples), small next to a
    # chunk, and keeps the task free of per-process caches.
    S = SortOrder(spec.order, spec.n, checked=True).sorted_rows(packed)
    return records_from_sorted(S, row_ids, spec)


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
