"""A dataset's models x samples read as packed bits, never as one dense array.

``Store.matrix`` gives a dense uint8 matrix; at 4,000 x 500,000 that is 2 GB, at the
paper's shape (Prabhu et al. 2024, §4: 31,250 x 1,697,682) 53 GB. The readers here give the same
rows packed 8 samples per byte (``np.packbits(axis=1, bitorder="little")``, the store's
own layout) and only for the blocks that hold the dataset's samples:

- :func:`complete_models`: which real models were evaluated on every chosen sample, from
  the ``bits`` table's model, block and known columns (the correctness blobs are not
  read); only models with a partly recorded block are checked entry by entry, in bounded
  chunks.
- :func:`recorded_models`: which real models have any prediction on the chosen samples,
  the same way.
- :func:`read_rows`: packed rows of some models on the chosen samples.

``lifelong_core.workflows.large.StoreSource`` serves these rows to the sweep. ``st`` is an
open :class:`~lifelong_core.store.Store` (not imported here: the store imports this module's
users).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import ArrayLike

from lifelong_core import bits as _bits
from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.store.reading import StoreReader


def _blocks_of(st: StoreReader, sidx: np.ndarray) -> pd.DataFrame:
    b = st.block_table
    ids, starts, lengths = (
        np.asarray(b["block_id"]),
        np.asarray(b["start"]),
        np.asarray(b["length"]),
    )
    pos = np.searchsorted(starts, sidx, side="right") - 1
    step = np.diff(pos)
    if (step >= 0).all():  # sorted samples (the callers'): distinct values without a sort
        pos = pos[np.concatenate([[True], step != 0])] if len(pos) else pos
    else:
        pos = np.unique(pos)
    return pd.DataFrame({"block_id": ids[pos], "start": starts[pos], "length": lengths[pos]})


def _in_list(values: Iterable[Any]) -> str:
    return ",".join(str(int(v)) for v in values)


def complete_models(st: StoreReader, models: pd.DataFrame, sidx: np.ndarray) -> pd.DataFrame:
    """The rows of ``models`` recorded on every sample ``sidx``.

    Decided from the key columns of the packed blocks, without unpacking any row.

    Parameters
    ----------
    st : Store
        An open store.
    models : pandas.DataFrame
        A ``Store.models()`` table (or some of its rows).
    sidx : numpy.ndarray
        Sorted ``sample_idx``.

    Returns
    -------
    pandas.DataFrame
        The complete rows, in the order given.
    """
    return _models_on(st, models, sidx, every=True)


def recorded_models(st: StoreReader, models: pd.DataFrame, sidx: np.ndarray) -> pd.DataFrame:
    """The rows of ``models`` with at least one recorded prediction among the samples ``sidx``.

    (Counting every model's predictions answered the same question in 23 s per side at the
    paper's 31,250 x 1,697,682.)

    Parameters
    ----------
    st : Store
        An open store.
    models : pandas.DataFrame
        A ``Store.models()`` table (or some of its rows).
    sidx : numpy.ndarray
        Sorted ``sample_idx``.

    Returns
    -------
    pandas.DataFrame
        The rows with something recorded, in the order given.
    """
    return _models_on(st, models, sidx, every=False)


def _models_on(
    st: StoreReader, models: pd.DataFrame, sidx: np.ndarray, every: bool
) -> pd.DataFrame:
    """From the ``bits`` table's key columns: a wholly recorded block (``known`` NULL) that
    holds some of ``sidx`` settles a model without reading a blob; only models whose
    blocks there are partly recorded are checked entry by entry, in bounded chunks."""
    sidx = np.asarray(sidx, dtype=np.int64)
    if len(models) == 0 or len(sidx) == 0:
        return models.iloc[:0]
    blocks = _blocks_of(st, sidx)
    per = (
        st.cursor()
        .sql(
            "SELECT model_idx, count(*) AS blocks, bool_and(known IS NULL) AS all_whole, bool_or(known IS NULL) AS any_whole "
            f"FROM bits WHERE block_id IN ({_in_list(blocks['block_id'])}) GROUP BY model_idx"
        )
        .df()
    )
    per = per[per["model_idx"].isin(models["model_idx"].to_numpy(dtype=np.int64))]
    if every:
        per = per[per["blocks"] == len(blocks)]
    settled = per["all_whole" if every else "any_whole"].astype(bool)
    hit = set(per.loc[settled, "model_idx"].astype(int))
    partly = np.sort(per.loc[~settled, "model_idx"].to_numpy(dtype=np.int64))
    step = limits.block_rows(len(sidx), 2)
    for a in range(0, len(partly), step):
        known = st.known(partly[a : a + step], sidx)
        ok = known.all(axis=1) if every else known.any(axis=1)
        hit.update(int(x) for x in partly[a : a + step][ok])
    return models[models["model_idx"].astype(int).isin(hit)]


def _fetch(st: StoreReader, models: np.ndarray, block_ids: np.ndarray) -> pa.Table:
    """``bits`` rows (model_idx, block_id, correct) of sorted unique ``models`` on ``block_ids``.

    One query: a run of consecutive models is a range filter; a scattered set is a semi
    join with the list of models, which DuckDB answers from the model and block columns
    before touching a blob. Measured on the 4,000 x 500,000 and the paper-shaped store
    (200 random models, warm page cache): 4x faster than a range query per run of
    consecutive models (``packed_bulk``'s point reads) and as fast on a cold cache; an
    ``IN`` list filter reads every blob of the range (14 s cold at paper scale).
    """
    blocks = f"block_id IN ({_in_list(block_ids)})"
    lo, hi = int(models[0]), int(models[-1])
    if hi - lo + 1 == len(models):
        sql = f"SELECT model_idx, block_id, correct FROM bits WHERE model_idx BETWEEN {lo} AND {hi} AND {blocks}"
    else:
        sql = (
            f"SELECT b.model_idx, b.block_id, b.correct FROM bits b SEMI JOIN "
            f"(SELECT unnest([{_in_list(models)}]) AS m) w ON b.model_idx = w.m WHERE b.{blocks}"
        )
    return st.cursor().sql(sql).to_arrow_table()


def read_rows(st: StoreReader, model_idx: ArrayLike, sidx: ArrayLike) -> np.ndarray:
    """Packed rows of ``model_idx`` on the sorted samples ``sidx``.

    Every entry must be recorded (see :func:`complete_models`).

    Parameters
    ----------
    st : Store
        An open store.
    model_idx : array_like
        ``model_idx`` of the rows, any order.
    sidx : numpy.ndarray
        Sorted ``sample_idx`` of the columns.

    Returns
    -------
    numpy.ndarray
        uint8 (len(model_idx), ceil(len(sidx)/8)), little bit order.

    Raises
    ------
    InputError
        If an entry was never recorded.
    """
    m = np.asarray(model_idx, dtype=np.int64)
    sidx = np.asarray(sidx, dtype=np.int64)
    n = len(sidx)
    if len(m) == 0 or n == 0:
        return np.zeros((len(m), (n + 7) // 8), dtype=np.uint8)
    uniq, inverse = np.unique(m, return_inverse=True)
    blocks = _blocks_of(st, sidx)
    lo, hi = int(sidx[0]), int(sidx[-1]) + 1
    span = np.zeros((len(uniq), (hi - lo + 7) // 8), dtype=np.uint8)
    tbl = _fetch(st, uniq, blocks["block_id"].to_numpy())
    if tbl.num_rows != len(uniq) * len(blocks):
        raise InputError("some of the requested models were not evaluated on every chosen sample.")
    midx = tbl.column("model_idx").to_numpy()
    bid = tbl.column("block_id").to_numpy()
    correct = tbl.column("correct").combine_chunks()
    start_of = dict(zip(blocks["block_id"].tolist(), blocks["start"].tolist()))
    length_of = dict(zip(blocks["block_id"].tolist(), blocks["length"].tolist()))
    by_block = np.argsort(bid, kind="stable")
    for sel in np.split(by_block, np.flatnonzero(np.diff(bid[by_block])) + 1):
        b = int(bid[sel[0]])
        start, length = int(start_of[b]), int(length_of[b])
        rows = _bits.rows_from_binary(correct.take(pa.array(sel)), (length + 7) // 8)
        rows = rows[np.argsort(np.searchsorted(uniq, midx[sel]))]
        # The block may begin before the chosen span (a dataset sharing a block with another).
        skip = max(0, lo - start)
        if skip:
            keep = min(length, hi - start) - skip
            dense = np.unpackbits(rows, axis=1, count=length, bitorder="little")[
                :, skip : skip + keep
            ]
            rows, start = _bits.pack_rows(dense), lo
        _bits.or_into(span, rows, start - lo)
    if (
        hi - lo != n
    ):  # chosen samples are not one run: keep their columns, a bounded block at a time
        out = np.empty((len(uniq), (n + 7) // 8), dtype=np.uint8)
        step = limits.block_rows(hi - lo)
        for a in range(0, len(uniq), step):
            dense = np.unpackbits(span[a : a + step], axis=1, count=hi - lo, bitorder="little")
            out[a : a + step] = np.packbits(dense[:, sidx - lo], axis=1, bitorder="little")
        span = out
    else:
        span = _mask_tail(span, n)
    return span[inverse] if len(uniq) != len(m) or not np.array_equal(uniq, m) else span


def _mask_tail(P: np.ndarray, n: int) -> np.ndarray:
    if n % 8:
        P[:, -1] &= np.uint8((1 << (n % 8)) - 1)
    return P
