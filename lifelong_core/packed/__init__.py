"""Packed-bit cache matrix and the paper-scale Sort & Search engines (issue 7).

Rows of A are kept as ``np.packbits(axis=1, bitorder="little")`` bytes, the store's own
layout, from disk to the kernels. Public API:

- kernels: :func:`pack_rows`, :func:`unpack_rows`, :func:`row_totals`,
  :func:`column_sums_packed`, :func:`boundary_counts_packed`, :class:`SortedCounter`;
- sources: :class:`RowSource`, :class:`PackedArray`, :class:`MatrixRows` (a 0/1
  matrix file, packed chunk by chunk; the store's source is
  ``lifelong_core.store.packed_bulk.StoreRows``);
- engines: :func:`run_sweep_packed` (thread pool) and :func:`run_sweep_dask` (dask tasks
  on a local or existing cluster; dask is optional), both returning the engine's
  ``SweepResult`` with the numbers of ``lifelong_core.sortsearch.run_sweep``.
"""

from lifelong_core.bits import (
    SortedCounter,
    boundary_counts_packed,
    column_sums_packed,
    pack_rows,
    row_totals,
    unpack_rows,
)
from lifelong_core.packed.sweep import run_sweep_packed
from lifelong_core.rows import MatrixRows, PackedArray, RowSource


def run_sweep_dask(*args, **kwargs):
    """See :func:`lifelong_core.packed.dask_engine.run_sweep_dask` (imports dask lazily)."""
    from lifelong_core.packed.dask_engine import run_sweep_dask as run

    return run(*args, **kwargs)


__all__ = [
    "MatrixRows", "PackedArray", "RowSource", "SortedCounter", "boundary_counts_packed", "column_sums_packed", "pack_rows",
    "row_totals", "run_sweep_dask", "run_sweep_packed", "unpack_rows",
]
