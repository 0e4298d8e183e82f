"""Bulk packed-rows import and read for paper-scale stores.

Built on :class:`~lifelong_core.store.Store` and its layout (one ``bits`` row per model
per block of samples, packed ``bitorder="little"``); nothing here changes the schema.

``insert_packed_rows`` adds *new models* whose rows arrive already packed (a packed
``.npy``, the synthetic generator's packed blocks), so 53G entries never pass through a
dense uint8 array: block slices of the packed rows are written as they are. Ids and
metadata go through the store's own validation and resolution, and the write is the
store's single transaction (``Store.apply`` of a ``WritePlan``), so a failed or killed
import leaves the store as it was. Two departures from ``insert_matrix``, for speed:

- rows are written model by model (all full blocks of one model, then the next; the
  shorter last block of ``model_chunk`` models after them), so one model's blobs are
  next to each other in the file: a read of any 1,000 models touches about 2,000 runs
  of the file, not 26,000 scattered 8 KiB pieces, which is what a cold page cache
  punishes;
- ``packed`` may be a read-only memmap of any size: block slices are read from it as the
  write proceeds, so one call (one transaction) can import 31,250 x 1.7M entries. One
  large import is also the fast way: DuckDB writes full row groups straight to the file,
  while many small imports each rewrite the table's last, partly filled row group at
  their checkpoint;
- the ``bits`` blobs are written with DuckDB's compression forced off for the duration
  of the import: packed correctness bits are close to random bytes, and the compression
  analysis was measured to cut insert throughput about 6x for nothing.

``read_packed_rows`` reads any set of models straight into packed rows (no long-format
detour, no dense detour) and no ``ORDER BY`` on the blobs (sorting 8 KiB payloads
dominated the store's general read); rows are put in place with numpy. A range of
models is one filtered query; a scattered set is one query per run of consecutive
models on a few cursors, because a filtered scan reads every blob of the table.
``StoreRows`` streams chunks of models to the packed sweep engines.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa

from lifelong_core.bits import mask_tail, or_into, pack_rows, rows_from_binary
from lifelong_core.errors import InputError
from lifelong_core.rows import RowSource
from lifelong_core.store._validate import normalize_models, normalize_samples
from lifelong_core.store.dataset_rows import read_rows
from lifelong_core.store.store import Store
from lifelong_core.store.writing import BlockWrite, ResolvedSamples, _write_plan

Progress = Callable[[float], object]

# DuckDB settings held during a bulk import and its checkpoint (see module docstring).
# The memory limit caps DuckDB's write buffers in a transaction of many GB (its default
# is 80% of the machine).
BULK_SETTINGS = (("force_compression", "uncompressed"), ("memory_limit", "3GB"))

# DuckDB buffer limit of the read handles that stream rows to the sweep.
READ_MEMORY_LIMIT = "1GB"

# Models per task of the bulk import (all their blocks, written model by model).
DEFAULT_MODEL_CHUNK = 128

# Scattered reads: one query per run of consecutive models, on this many cursors, up to
# this many runs (beyond it one scan of the whole table is cheaper). Measured at paper
# scale (31,250 x 1.7M, 1,000 random models, page cache dropped): 1.7-2.6 s with 4
# cursors, 3.1-3.9 s with one, 8.1 s for one filtered scan; 8 or 16 cursors were no
# better beyond the noise (the disk's throughput, not the number of queries, limits it).
POINT_READ_THREADS = 4
POINT_READ_MAX_RUNS = 4096


def _digest(packed: np.ndarray, model_ids: np.ndarray, n: int, first_sample: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"packed {packed.shape[0]}x{n} {first_sample}\n".encode())
    h.update("\n".join(map(str, model_ids)).encode())
    step = max(1, (64 << 20) // max(packed.shape[1], 1))
    for s in range(0, packed.shape[0], step):
        h.update(np.ascontiguousarray(packed[s : s + step]).data)
    return h.hexdigest()


def insert_packed_rows(
    st: Store,
    packed: np.ndarray,
    n: int,
    models: Sequence[str] | pd.DataFrame,
    samples: Sequence[str] | pd.DataFrame | None = None,
    source: str = "<packed rows>",
    *,
    dataset: str | None = None,
    checksum: str | None = None,
    model_chunk: int = DEFAULT_MODEL_CHUNK,
    progress: Progress | None = None,
) -> dict:
    """Import packed rows of new models in one transaction (insert_M of Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §2).

    Parameters
    ----------
    st : Store
        A writer handle.
    packed : numpy.ndarray
        uint8 (len(models), ceil(n/8)) as ``np.packbits(axis=1, bitorder="little")``.
    n : int
        Samples per row.
    models : list of str or pandas.DataFrame
        Ids or a table as for ``Store.insert_matrix``; every model must be new to the store.
    samples : list of str or pandas.DataFrame, optional
        None means every sample already in the store, in ``sample_idx`` order (the common
        paper-scale case: the columns are known, so 1.7M ids are not resolved again);
        otherwise ids or a table whose known samples cover whole stored blocks in their order
        and whose new samples follow them.
    source : str
        What the store's log names.
    dataset : str, optional
        The dataset of new samples.
    checksum : str, optional
        Digest recorded in the log (default: computed from the input).
    model_chunk : int
        Models written at a time.
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    dict
        The store's import summary (also written to its log).

    Raises
    ------
    InputError
        For a model already in the store, rows of the wrong shape, or samples that do not
        line up with the stored blocks; the store is then unchanged.
    """
    st.require_writer()
    packed = np.asarray(packed)
    if packed.ndim != 2 or packed.dtype != np.uint8:
        raise InputError(f"{source}: packed rows must be a 2-dimensional uint8 array.")
    if packed.shape[1] != (n + 7) // 8:
        raise InputError(
            f"{source}: packed rows have {packed.shape[1]} bytes but {n} samples need {(n + 7) // 8}."
        )
    if model_chunk < 1:
        raise InputError(f"model_chunk must be at least 1, got {model_chunk}.")
    mdl = normalize_models(models, f"{source} (model ids)")
    if len(mdl) != packed.shape[0]:
        raise InputError(
            f"{source} has {packed.shape[0]} packed rows but {len(mdl)} model ids were given."
        )
    model_idx, new_models = st.resolve_models(mdl, source)
    if len(new_models) != len(mdl):
        old = mdl["model_id"].iloc[int(np.argmax(model_idx < st.n_models))]
        raise InputError(
            f"{source}: model {old!r} is already in the store; the bulk packed import only adds new models "
            "(use insert_matrix to fill in entries of known models)."
        )
    if samples is None:
        if n != st.n_samples:
            raise InputError(
                f"{source} has {n} samples per row but the store holds {st.n_samples} samples."
            )
        resolved = ResolvedSamples(
            np.arange(n, dtype=np.int64),
            pd.DataFrame(
                columns=["sample_idx", "sample_id", "dataset", "domain", "label", "split", "meta"]
            ),
            pd.DataFrame(columns=["dataset", "domain", "category"]),
            pd.DataFrame({"dataset": pd.Series(dtype=str)}),
            pd.DataFrame(
                {
                    "block_id": pd.Series(dtype=np.int32),
                    "start": pd.Series(dtype=np.int64),
                    "length": pd.Series(dtype=np.int32),
                }
            ),
        )
        first = "<store samples>"
    else:
        smp = normalize_samples(samples, f"{source} (sample ids)", dataset)
        if len(smp) != n:
            raise InputError(
                f"{source} has {n} samples per row but {len(smp)} sample ids were given."
            )
        resolved = st.resolve_samples(smp, source)
        first = str(smp["sample_id"].iloc[0])
    sample_idx = resolved.sample_idx
    layout = st.blocks_after(resolved.blocks)
    ids, starts, lengths = layout.ids, layout.starts, layout.lengths
    # Column of each block's first sample; each touched block must be covered whole, in order.
    col_of = np.full(int(starts[-1] + lengths[-1]) if len(starts) else 0, -1, dtype=np.int64)
    col_of[sample_idx] = np.arange(n, dtype=np.int64)
    spans = []
    for block_id, start, length in zip(ids, starts, lengths):
        cols = col_of[start : start + length]
        if (cols < 0).all():
            continue
        if (cols < 0).any() or not np.array_equal(cols, np.arange(cols[0], cols[0] + length)):
            raise InputError(
                f"{source}: the samples must cover each stored block of {int(length)} samples whole and in store "
                f"order (block starting at sample {int(start)} is covered partly or out of order)."
            )
        spans.append((int(block_id), int(start), int(length), int(cols[0])))
    packed = mask_tail(packed, n)
    m32 = model_idx.astype(np.int32)

    def block_rows(r0: int, r1: int, c0: int, length: int) -> np.ndarray:
        if c0 % 8 == 0:
            rows = packed[r0:r1, c0 // 8 : c0 // 8 + (length + 7) // 8]
            return mask_tail(np.ascontiguousarray(rows), length)
        # A block that starts mid-byte in the input: shift through a dense slice.
        dense = np.unpackbits(packed[r0:r1], axis=1, count=n, bitorder="little")[
            :, c0 : c0 + length
        ]
        return pack_rows(dense)

    # Blocks of one length are written model by model: a model's blobs then lie next to
    # each other in the file, so reading a few random models touches a few runs of the
    # file instead of one 8 KiB piece per block per model (what made the first read of
    # 1,000 models after opening slow on a cold page cache).
    by_length: dict[int, list[tuple[int, int]]] = {}
    for block_id, _, length, c0 in spans:
        by_length.setdefault(length, []).append((block_id, c0))

    def chunk_rows(r0: int, r1: int) -> tuple[list, list]:
        out = []
        for length, group in by_length.items():
            rows = np.stack([block_rows(r0, r1, c0, length) for _, c0 in group], axis=1)
            ids = np.array([b for b, _ in group], dtype=np.int32)
            out.append(
                (
                    np.repeat(m32[r0:r1], len(group)),
                    rows.reshape(-1, rows.shape[2]),
                    None,
                    np.tile(ids, r1 - r0),
                )
            )
        return out, []

    tasks = [
        BlockWrite(-1, functools.partial(chunk_rows, r0, min(r0 + model_chunk, len(mdl))))
        for r0 in range(0, len(mdl), model_chunk)
    ]
    digest = checksum or _digest(packed, mdl["model_id"].to_numpy(dtype=object), n, first)
    plan = _write_plan(
        "insert_packed", source, digest, new_models, resolved, tasks, int(packed.shape[0]) * int(n)
    )
    cur = st.cursor()
    for name, value in BULK_SETTINGS:
        cur.execute(f"SET {name} = '{value}'")
    try:
        summary = st.apply(plan, progress)
        # Checkpoint while the setting holds: a later checkpoint (at close) would
        # otherwise re-analyse the freshly appended row groups with every method.
        cur.execute("CHECKPOINT")
        return summary
    finally:
        for name, _ in BULK_SETTINGS:
            cur.execute(f"RESET {name}")


def _runs(models: np.ndarray) -> list[tuple[int, int]]:
    """Sorted unique model indices as (first, last) runs of consecutive values."""
    cuts = np.flatnonzero(np.diff(models) != 1) + 1
    return [(int(r[0]), int(r[-1])) for r in np.split(models, cuts)]


def _fetch_bits(st: Store, models: np.ndarray) -> pa.Table:
    """The ``bits`` rows of sorted unique ``models``, as one Arrow table.

    A filtered scan of ``bits`` reads every blob of the table whatever the filter (at
    paper scale 6.7 GB from disk on a cold page cache, ~8 s). A query per run of
    consecutive models reads little more than those models' blobs, which the bulk import
    keeps next to each other, so a scattered selection of up to ``POINT_READ_MAX_RUNS``
    runs is read that way, on a few cursors at once.
    """
    select = "SELECT model_idx, block_id, correct, known IS NULL AS full FROM bits WHERE "
    runs = _runs(models)
    if len(runs) == 1 or len(runs) > POINT_READ_MAX_RUNS:
        return st.cursor().sql(select + _model_filter(models)).to_arrow_table()

    def part(chunk: list[tuple[int, int]]) -> list[pa.Table]:
        cur = st.cursor()
        return [cur.sql(select + _run_filter(a, b)).to_arrow_table() for a, b in chunk]

    threads = min(POINT_READ_THREADS, len(runs))
    with ThreadPoolExecutor(threads) as pool:
        tables = [
            t for ts in pool.map(part, [runs[i::threads] for i in range(threads)]) for t in ts
        ]
    return pa.concat_tables(tables)


def _run_filter(lo: int, hi: int) -> str:
    return f"model_idx = {lo}" if lo == hi else f"model_idx BETWEEN {lo} AND {hi}"


def _model_filter(models: np.ndarray) -> str:
    lo, hi = int(models[0]), int(models[-1])
    if hi - lo + 1 == len(models):
        return _run_filter(lo, hi)
    # A literal list: DuckDB pushes IN-list filters into the scan; a semi-join with a
    # registered table was several times slower on random model sets.
    return f"model_idx IN ({','.join(map(str, models.tolist()))})"


def read_packed_rows(st: Store, models: Sequence[int] | np.ndarray) -> tuple[np.ndarray, int]:
    """Packed rows of ``models`` and the number of samples, read in bulk.

    Same result as ``Store.read_packed(models)``; for a store where some requested entry was
    never recorded it defers to that method, which names the gap.

    Parameters
    ----------
    st : Store
        An open store.
    models : iterable of int
        ``model_idx``, any order.

    Returns
    -------
    tuple
        uint8 (len(models), ceil(n/8)) packed rows and n.

    Raises
    ------
    InputError
        If an index is out of range or an entry was never recorded.
    """
    m = st.model_rows(models)
    n = st.n_samples
    out = np.zeros((len(m), (n + 7) // 8), dtype=np.uint8)
    if len(m) == 0 or n == 0:
        return out, n
    uniq, inverse = np.unique(m, return_inverse=True)
    blocks = st.block_table
    tbl = _fetch_bits(st, uniq)
    midx = tbl.column("model_idx").to_numpy()
    bid = tbl.column("block_id").to_numpy()
    full = tbl.column("full").to_numpy()
    if tbl.num_rows != len(uniq) * len(blocks["block_id"]) or not full.all():
        return st.read_packed(m)
    correct = tbl.column("correct").combine_chunks()
    by_block = np.argsort(bid, kind="stable")
    bounds = np.flatnonzero(np.diff(bid[by_block])) + 1
    start_of = dict(zip(blocks["block_id"].tolist(), blocks["start"].tolist()))
    length_of = dict(zip(blocks["block_id"].tolist(), blocks["length"].tolist()))
    # Where each requested row lands: out row positions of each unique model.
    first_pos = np.full(len(uniq), -1, dtype=np.int64)
    first_pos[inverse[::-1]] = np.arange(len(m) - 1, -1, -1)
    dup = len(uniq) != len(m)
    for sel in np.split(by_block, bounds):
        b = int(bid[sel[0]])
        start, length = int(start_of[b]), int(length_of[b])
        rows = rows_from_binary(correct.take(pa.array(sel)), (length + 7) // 8)
        pos = np.searchsorted(uniq, midx[sel])
        if start % 8 == 0:
            out[first_pos[pos], start // 8 : start // 8 + rows.shape[1]] |= rows
        else:
            tmp = np.zeros((len(sel), out.shape[1]), dtype=np.uint8)
            or_into(tmp, rows, start)
            out[first_pos[pos]] |= tmp
    if dup:
        out = out[first_pos[inverse]]
    return out, n


class StoreRows(RowSource):
    """Packed rows of some models of a store, read a chunk of models at a time.

    Holds only the path and the model and sample indices, so it pickles to dask workers;
    each process opens the store read-only once (DuckDB shares one read-only database per
    file within a process, and every read uses its own cursor).

    Parameters
    ----------
    path : str or os.PathLike
        The store file.
    models : iterable of int, optional
        ``model_idx`` of the rows (None: every model).
    samples : iterable of int, optional
        ``sample_idx`` of the columns (None: every sample; a dataset of a store holding
        several otherwise).
    row_ids : array_like, optional
        Labels of the rows in results (default: the model indices).

    Raises
    ------
    InputError
        If the store cannot be opened or an index is out of range.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        models: Sequence[int] | np.ndarray | None = None,
        samples: Sequence[int] | np.ndarray | None = None,
        row_ids: np.ndarray | None = None,
    ) -> None:
        self.path = os.fspath(path)
        with Store.open(self.path, read_only=True) as st:
            self.models = st.model_rows(models)
            # Labels of the rows in results: the model indices unless given.
            self.row_ids = self.models if row_ids is None else np.asarray(row_ids, dtype=np.int64)
            # A dataset's columns (sorted sample_idx); None: every sample of the store.
            self.samples = None if samples is None else np.sort(st.sample_rows(samples))
            self.n = st.n_samples if self.samples is None else len(self.samples)
        self._store: Store | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        return {
            "path": self.path,
            "n": self.n,
            "models": self.models,
            "row_ids": self.row_ids,
            "samples": self.samples,
        }

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._store = None
        self._lock = threading.Lock()

    def _open(self) -> Store:
        # Tasks of a threaded dask worker may read concurrently: open one handle only.
        with self._lock:
            if self._store is None:
                st = Store.open(self.path, read_only=True)
                # Every block is read once per sweep; DuckDB would otherwise keep up to 80%
                # of the machine's memory of them cached, so peak memory would grow with
                # the store.
                st.cursor().execute(f"SET memory_limit = '{READ_MEMORY_LIMIT}'")
                self._store = st
            return self._store

    def read(self, start: int, stop: int) -> np.ndarray:
        if self.samples is not None:
            return read_rows(self._open(), self.models[start:stop], self.samples)
        packed, _ = read_packed_rows(self._open(), self.models[start:stop])
        return packed

    def close(self) -> None:
        """Close this process's handle on the store (it reopens on the next read)."""
        if self._store is not None:
            self._store.close()
            self._store = None
