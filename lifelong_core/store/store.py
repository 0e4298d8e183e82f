"""The :class:`Store`: a DuckDB file of cached per-sample predictions (seed 001, §2).

See the package docstring for the layout and the lock story.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from lifelong_core.errors import InputError, StoreLockedError
from lifelong_core.store import _bits
from lifelong_core.store._schema import BLOCK_SIZE, DDL, FORMAT_VERSION
from lifelong_core.store._validate import (
    EXTRA_FIELDS,
    Entries,
    check_extras,
    normalize_models,
    normalize_samples,
    validate_long,
)

Progress = Callable[[float], None]

# DuckDB's file lock only separates processes; within one process a second read-write
# connection to the same file would be granted, so writers are also counted here.
_WRITERS: set[str] = set()
_WRITERS_LOCK = threading.Lock()


def _claim_writer(path: Path) -> None:
    key = str(path.resolve())
    with _WRITERS_LOCK:
        if key in _WRITERS:
            raise StoreLockedError(
                f"Cannot write to store {path}: this process already has a writer open on it; close that one first."
            )
        _WRITERS.add(key)


def _release_writer(path: Path) -> None:
    with _WRITERS_LOCK:
        _WRITERS.discard(str(path.resolve()))


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


def _lock_holder(message: str) -> str:
    m = re.search(r"PID (\d+)", message)
    return f" (process {m.group(1)})" if m else ""


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        msg = str(exc)
        if "lock" in msg.lower():
            mode = "read" if read_only else "write to"
            raise StoreLockedError(
                f"Cannot {mode} store {path}: it is locked by another process{_lock_holder(msg)}; "
                "close the other writer (or, to write, every reader such as the app) and try again."
            ) from None
        if "not a valid DuckDB" in msg:
            raise InputError(f"{path} is not a DuckDB store file.") from None
        raise InputError(f"Cannot open store {path}: {msg.splitlines()[0]}") from None
    except duckdb.ConnectionException:
        # Same process, other mode: DuckDB shares one database instance per file.
        raise StoreLockedError(
            f"Cannot open store {path} {'read-only' if read_only else 'for writing'}: this process already "
            "has it open in the other mode; close that handle first."
        ) from None
    except duckdb.Error as exc:
        raise InputError(f"{path} is not a DuckDB store file ({str(exc).splitlines()[0]}).") from None
    # No progress bar: DuckDB would draw it on stdout, inside command output. Cursors
    # inherit the setting.
    con.execute("SET enable_progress_bar = false")
    return con


@dataclass
class _BlockTask:
    """What one import does to one block. ``build`` runs inside the write (so packing of
    brand-new blocks costs no memory up front); merges with existing rows, which can fail
    validation, are computed before the write and only wrapped here."""

    block_id: int
    # -> (bits rows [(model_idx, correct packed, known packed or None[, block_id per row])],
    #     extras rows [(model_idx, {field: (values (r, L), recorded (r, L) or None)})])
    # A bits entry may name a block per row (the bulk import writes several blocks of one
    # model next to each other); without it every row belongs to ``block_id``.
    build: Callable[[], tuple[list, list]]
    delete_bits: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    delete_extras: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))


@dataclass
class _Plan:
    action: str
    source: str
    checksum: str
    datasets: pd.DataFrame
    domains: pd.DataFrame
    models: pd.DataFrame
    samples: pd.DataFrame
    blocks: pd.DataFrame
    tasks: list[_BlockTask]
    entries: int


class Store:
    """A lifelong benchmark store. Open with :meth:`open` or :meth:`create`; use as a context manager."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self._con = con
        self.path = path
        self.read_only = read_only
        self._lock = threading.Lock()
        self._refresh()

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | os.PathLike, read_only: bool = True) -> "Store":
        """Open an existing store. Read-only handles share the file with each other; a
        writer needs it alone. Raises :class:`StoreLockedError` when that is not possible."""
        p = Path(path)
        if not p.exists():
            raise InputError(f"No store at {p}; create one with an import or `build-demo`.")
        if p.is_dir():
            raise InputError(f"Store path {p} is a directory, not a DuckDB file.")
        if p.stat().st_size == 0:
            raise InputError(f"Store file {p} is empty; it is not a DuckDB store.")
        if not read_only:
            _claim_writer(p)
        try:
            con = _connect(p, read_only)
        except BaseException:
            if not read_only:
                _release_writer(p)
            raise
        try:
            row = con.execute(
                "SELECT value FROM information_schema.tables t, store_meta "
                "WHERE t.table_name = 'store_meta' AND key = 'format_version'"
            ).fetchone()
        except duckdb.Error:
            row = None
        if row is None or row[0] != FORMAT_VERSION:
            con.close()
            if not read_only:
                _release_writer(p)
        if row is None:
            raise InputError(f"{p} is a DuckDB file but not a lifelong store (no store_meta table).")
        if row[0] != FORMAT_VERSION:
            raise InputError(f"Store {p} has format version {row[0]}; this program reads version {FORMAT_VERSION} (rebuild it, e.g. `build-demo --force`).")
        return cls(con, p, read_only)

    @classmethod
    def create(cls, path: str | os.PathLike) -> "Store":
        """Create a new, empty store (read-write). Refuses to overwrite an existing file."""
        p = Path(path)
        if p.exists():
            raise InputError(f"Cannot create store {p}: the file already exists.")
        if not p.parent.exists():
            raise InputError(f"Cannot create store {p}: folder {p.parent} does not exist.")
        _claim_writer(p)
        try:
            con = _connect(p, read_only=False)
        except BaseException:
            _release_writer(p)
            raise
        con.begin()
        con.execute(DDL)
        con.executemany(
            "INSERT INTO store_meta VALUES (?, ?)",
            [("format_version", FORMAT_VERSION), ("block_size", str(BLOCK_SIZE)), ("created_at", _now().isoformat())],
        )
        con.commit()
        con.execute("CHECKPOINT")
        return cls(con, p, False)

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
            if not self.read_only:
                _release_writer(self.path)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _cur(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            raise InputError(f"Store {self.path} is closed.")
        # One cursor per call: a DuckDB connection must not be shared between threads,
        # and the app shares one read-only handle between sessions.
        return self._con.cursor()

    def _refresh(self) -> None:
        cur = self._cur()
        self._blocks = cur.execute("SELECT block_id, start, length FROM blocks ORDER BY start").fetchnumpy()
        self._blocks = {k: np.asarray(v, dtype=np.int64) for k, v in self._blocks.items()}
        self.n_models = int(cur.execute("SELECT count(*) FROM models").fetchone()[0])
        self.n_samples = int(cur.execute("SELECT count(*) FROM samples").fetchone()[0])

    # ------------------------------------------------------------------ metadata reads
    def _df(self, sql: str, params: Sequence = ()) -> pd.DataFrame:
        return self._cur().execute(sql, list(params)).df()

    def sql(self, query: str, params: Sequence = ()) -> pd.DataFrame:
        """Run an ad-hoc read query (e.g. over the ``predictions`` view) and return a DataFrame.

        On a writer handle the query runs in a transaction that is always rolled back, so
        ad-hoc SQL can never change the store behind the importers' checks.
        """
        cur = self._cur()
        try:
            if self.read_only:
                return cur.execute(query, list(params)).df()
            cur.begin()
            try:
                return cur.execute(query, list(params)).df()
            finally:
                cur.rollback()
        except duckdb.Error as exc:
            raise InputError(f"SQL query failed: {str(exc).splitlines()[0]}") from None

    def datasets(self) -> pd.DataFrame:
        """dataset, description, synthetic, source; in the order they arrived."""
        return self._df("SELECT dataset, description, synthetic, source FROM datasets ORDER BY added_at, dataset")

    def domains(self, dataset: str | None = None) -> pd.DataFrame:
        """dataset, domain, category, n_samples; in the order of their first sample."""
        where = "WHERE d.dataset = ?" if dataset is not None else ""
        return self._df(
            "SELECT d.dataset, d.domain, d.category, count(s.sample_idx)::BIGINT AS n_samples "
            "FROM domains d LEFT JOIN samples s ON s.dataset = d.dataset AND s.domain = d.domain "
            f"{where} GROUP BY ALL ORDER BY min(s.sample_idx), d.dataset, d.domain",
            [dataset] if dataset is not None else [],
        )

    def models(self) -> pd.DataFrame:
        """One row per model, ordered by ``model_idx`` (the rows of the matrix)."""
        return self._df(
            "SELECT model_idx, model_id, name, family, release_order, estimated, added_at, metadata "
            "FROM models ORDER BY model_idx"
        )

    def samples(self, dataset: str | None = None, domains: Iterable[str] | None = None) -> pd.DataFrame:
        """Samples (optionally of one dataset and some of its domains), ordered by
        ``sample_idx`` (the columns of the matrix), with their domain's category."""
        cond, params = [], []
        if dataset is not None:
            cond.append("s.dataset = ?")
            params.append(dataset)
        if domains is not None:
            doms = list(domains)
            cond.append("list_contains(?, s.domain)")
            params.append(doms)
        where = f"WHERE {' AND '.join(cond)}" if cond else ""
        df = self._df(
            "SELECT s.sample_idx, s.sample_id, s.dataset, s.domain, d.category, s.label, s.split, s.added_at "
            f"FROM samples s JOIN domains d USING (dataset, domain) {where} ORDER BY s.sample_idx",
            params,
        )
        df["label"] = df["label"].astype("Int64")
        return df

    def log(self) -> pd.DataFrame:
        """The insertion log, one row per import."""
        return self._df(
            "SELECT log_id, added_at, action, source, new_models, new_samples, entries, checksum FROM log ORDER BY log_id"
        )

    def model_index(self, model_ids: Iterable[str]) -> np.ndarray:
        """``model_idx`` of each id, in the given order; InputError naming an unknown id."""
        return self._index_of("models", "model", model_ids)

    def sample_index(self, sample_ids: Iterable[str]) -> np.ndarray:
        """``sample_idx`` of each id, in the given order; InputError naming an unknown id."""
        return self._index_of("samples", "sample", sample_ids)

    def _index_of(self, table: str, kind: str, ids: Iterable[str]) -> np.ndarray:
        if isinstance(ids, (str, bytes)):
            raise InputError(f"{kind.capitalize()} ids must be a list, not one string.")
        want = [str(i) for i in ids]
        if not want:
            return np.zeros(0, dtype=np.int64)
        cur = self._cur()
        cur.register("_ids", pa.table({"id": pa.array(want)}))
        got = cur.sql(f"SELECT {kind}_id AS id, {kind}_idx AS idx FROM {table} WHERE {kind}_id IN (SELECT id FROM _ids)").df()
        lookup = dict(zip(got["id"], got["idx"].astype(np.int64)))
        missing = [i for i in want if i not in lookup]
        if missing:
            raise InputError(f"The store has no {kind} with id {missing[0]!r} ({len(missing)} of {len(want)} ids are unknown).")
        return np.array([lookup[i] for i in want], dtype=np.int64)

    # ------------------------------------------------------------------ matrix reads
    def _model_index(self, models) -> np.ndarray:
        if models is None:
            return np.arange(self.n_models, dtype=np.int64)
        idx = np.asarray(list(models) if not isinstance(models, np.ndarray) else models)
        if idx.size == 0:
            return np.zeros(0, dtype=np.int64)
        if idx.dtype.kind not in "iu":
            raise InputError("Model indices must be whole numbers (model_idx).")
        idx = idx.astype(np.int64).ravel()
        bad = (idx < 0) | (idx >= self.n_models)
        if bad.any():
            raise InputError(f"Model index {int(idx[bad][0])} is outside the store's 0..{self.n_models - 1}.")
        return idx

    def _sample_index(self, samples) -> np.ndarray | None:
        if samples is None:
            return None
        idx = np.asarray(list(samples) if not isinstance(samples, np.ndarray) else samples)
        if idx.size == 0:
            return np.zeros(0, dtype=np.int64)
        if idx.dtype.kind not in "iu":
            raise InputError("Sample indices must be whole numbers (sample_idx).")
        idx = idx.astype(np.int64).ravel()
        bad = (idx < 0) | (idx >= self.n_samples)
        if bad.any():
            raise InputError(f"Sample index {int(idx[bad][0])} is outside the store's 0..{self.n_samples - 1}.")
        return idx

    def _fetch(self, models: np.ndarray, block_ids: np.ndarray | None, columns=("correct", "known"), table: str = "bits"):
        """Rows of ``bits`` (or ``extras``) for the wanted models, grouped by block.

        Returns {block_id: (model_idx int64 sorted, {column: pyarrow array})}.
        """
        cur = self._cur()
        uniq = np.unique(models)
        cond = []
        if len(uniq) < self.n_models:
            cur.register("_want_models", pa.table({"m": pa.array(uniq.astype(np.int32))}))
            cond.append("model_idx IN (SELECT m FROM _want_models)")
        if block_ids is not None and len(block_ids) < len(self._blocks["block_id"]):
            cond.append(f"block_id IN ({','.join(str(int(b)) for b in block_ids) or 'NULL'})")
        where = f"WHERE {' AND '.join(cond)}" if cond else ""
        tbl = cur.sql(
            f"SELECT block_id, model_idx, {', '.join(columns)} FROM {table} {where}"
        ).to_arrow_table()
        out = {}
        if tbl.num_rows == 0:
            return out
        bid = tbl.column("block_id").to_numpy()
        midx = tbl.column("model_idx").to_numpy().astype(np.int64)
        cols = {c: tbl.column(c).combine_chunks() for c in columns}
        # Sorting in numpy and taking once is much cheaper than an ORDER BY that drags
        # every 8 KiB blob through DuckDB's sort.
        order = np.lexsort((midx, bid))
        if np.any(order != np.arange(len(order))):
            bid, midx = bid[order], midx[order]
            cols = {c: v.take(pa.array(order)) for c, v in cols.items()}
        cuts = np.flatnonzero(np.diff(bid)) + 1
        starts = np.concatenate([[0], cuts])
        stops = np.concatenate([cuts, [len(bid)]])
        for a, b in zip(starts, stops):
            out[int(bid[a])] = (midx[a:b], {c: v.slice(a, b - a) for c, v in cols.items()})
        return out

    def _block_rows(self, fetched, block_id: int, length: int, models: np.ndarray):
        """Dense (len(models), length) values and known mask of one block."""
        nbytes = (length + 7) // 8
        vals = np.zeros((len(models), length), dtype=np.uint8)
        known = np.zeros((len(models), length), dtype=bool)
        if block_id not in fetched:
            return vals, known
        midx, cols = fetched[block_id]
        pos = np.searchsorted(midx, models)
        pos_c = np.minimum(pos, len(midx) - 1)
        have = midx[pos_c] == models
        rows = _bits.rows_from_binary(cols["correct"], nbytes)
        vals[have] = _bits.unpack_rows(rows[pos_c[have]], length)
        kcol = cols["known"]
        kvalid = np.asarray(kcol.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        full = have.copy()
        full[have] = ~kvalid[pos_c[have]]
        known[full] = True
        part = have & ~full
        if part.any():
            for r in np.flatnonzero(part):
                blob = np.frombuffer(kcol[int(pos_c[r])].as_py(), dtype=np.uint8)[None, :]
                known[r] = _bits.unpack_rows(blob, length)[0].astype(bool)
        return vals, known

    def _blocks_for(self, samples: np.ndarray | None):
        b = self._blocks
        if samples is None:
            return list(zip(b["block_id"], b["start"], b["length"]))
        bi = np.searchsorted(b["start"], samples, side="right") - 1
        wanted = np.unique(bi)
        return [(b["block_id"][i], b["start"][i], b["length"][i]) for i in wanted]

    def _dense(self, models, samples) -> tuple[np.ndarray, np.ndarray]:
        """Values and known mask for ``models`` x ``samples`` (indices validated)."""
        m = self._model_index(models)
        s = self._sample_index(samples)
        n = self.n_samples if s is None else len(s)
        vals = np.zeros((len(m), n), dtype=np.uint8)
        known = np.zeros((len(m), n), dtype=bool)
        if len(m) == 0 or n == 0:
            return vals, known
        blocks = self._blocks_for(s)
        fetched = self._fetch(m, np.array([b[0] for b in blocks]))
        for block_id, start, length in blocks:
            v, k = self._block_rows(fetched, int(block_id), int(length), m)
            if s is None:
                vals[:, start : start + length] = v
                known[:, start : start + length] = k
            else:
                cols = np.flatnonzero((s >= start) & (s < start + length))
                vals[:, cols] = v[:, s[cols] - start]
                known[:, cols] = k[:, s[cols] - start]
        return vals, known

    def _raise_unknown(self, m: np.ndarray, s: np.ndarray | None, known: np.ndarray) -> None:
        r, c = np.unravel_index(int(np.argmax(~known)), known.shape)
        mi = int(m[r])
        si = int(c if s is None else s[c])
        mid = self._cur().execute("SELECT model_id FROM models WHERE model_idx = ?", [mi]).fetchone()[0]
        sid = self._cur().execute("SELECT sample_id FROM samples WHERE sample_idx = ?", [si]).fetchone()[0]
        missing = int((~known).sum())
        raise InputError(
            f"The store has no prediction of model {mid!r} on sample {sid!r} ({missing} of the requested "
            "entries were never recorded); choose models and samples that were evaluated together."
        )

    def matrix(self, models=None, samples=None) -> np.ndarray:
        """A uint8 0/1 matrix, rows in the given ``model_idx`` order and columns in the given
        ``sample_idx`` order (None = all). InputError if an entry was never recorded."""
        m = self._model_index(models)
        s = self._sample_index(samples)
        if s is None:
            packed, n = self.read_packed(m)
            return _bits.unpack_rows(packed, n)
        vals, known = self._dense(m, s)
        if not known.all():
            self._raise_unknown(m, s, known)
        return vals

    def known(self, models=None, samples=None) -> np.ndarray:
        """Boolean mask: which of ``models`` x ``samples`` have a recorded prediction."""
        return self._dense(models, samples)[1]

    def read_packed(self, models=None, samples=None) -> tuple[np.ndarray, int]:
        """Rows packed with ``np.packbits(axis=1, bitorder="little")`` and the number of samples.

        With ``samples=None`` the rows are assembled from the stored blocks without
        unpacking (the paper-scale path). InputError if an entry was never recorded.
        """
        m = self._model_index(models)
        s = self._sample_index(samples)
        if s is not None:
            return _bits.pack_rows(self.matrix(m, s)), len(s)
        n = self.n_samples
        out = np.zeros((len(m), (n + 7) // 8), dtype=np.uint8)
        if len(m) == 0 or n == 0:
            return out, n
        uniq, inverse = np.unique(m, return_inverse=True)
        fetched = self._fetch(uniq, None)
        complete = True
        for block_id, start, length in zip(self._blocks["block_id"], self._blocks["start"], self._blocks["length"]):
            got = fetched.get(int(block_id))
            if got is None or len(got[0]) != len(uniq) or got[1]["known"].null_count != len(got[0]):
                complete = False
                break
            rows = _bits.rows_from_binary(got[1]["correct"], (int(length) + 7) // 8)
            _bits.or_into(out, rows[inverse], int(start))
        if not complete:
            known = self._dense(m, None)[1]
            self._raise_unknown(m, None, known)
        return out, n

    def has_extra(self, field: str) -> bool:
        """Whether any entry has ``field`` (confidence, predicted, true_prob) recorded."""
        if field not in EXTRA_FIELDS:
            raise InputError(f"Unknown extra field {field!r}; known fields are {', '.join(EXTRA_FIELDS)}.")
        return self._cur().execute(f"SELECT count(*) FROM (SELECT 1 FROM extras WHERE {field} IS NOT NULL LIMIT 1)").fetchone()[0] > 0

    def _extras_block(self, fetched, block_id: int, length: int, models: np.ndarray, fields) -> dict:
        """field -> (values (len(models), length), recorded mask) of one block."""
        out = {}
        got = fetched.get(block_id)
        for f in fields:
            vals = np.zeros((len(models), length), dtype=np.int32 if f == "predicted" else np.float64)
            have = np.zeros((len(models), length), dtype=bool)
            if got is not None:
                midx, cols = got
                pos = np.minimum(np.searchsorted(midx, models), len(midx) - 1)
                hit = midx[pos] == models
                lists = cols[f]
                valid = np.asarray(lists.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
                rows_with = np.flatnonzero(valid)  # rows of this block's slice that hold the field
                if len(rows_with):
                    flat = lists.flatten()
                    data = np.asarray(flat.fill_null(0).to_numpy(zero_copy_only=False)).reshape(len(rows_with), length)
                    rec = (np.ones(data.shape, dtype=bool) if flat.null_count == 0 else
                           np.asarray(flat.is_valid().to_numpy(zero_copy_only=False), dtype=bool).reshape(data.shape))
                    slot = np.full(len(midx), -1, dtype=np.int64)
                    slot[rows_with] = np.arange(len(rows_with))
                    take = np.flatnonzero(hit & (slot[pos] >= 0))
                    vals[take] = data[slot[pos[take]]]
                    have[take] = rec[slot[pos[take]]]
            out[f] = (vals, have)
        return out

    def extras_partial(self, models=None, samples=None, fields: Sequence[str] = EXTRA_FIELDS) -> dict:
        """Like :meth:`extras` but never raises on gaps: field -> (values, recorded mask).

        Probabilities come back as float64, exactly as imported (``extras`` narrows them
        to the float32 of the contract)."""
        fields = tuple(fields)
        for f in fields:
            if f not in EXTRA_FIELDS:
                raise InputError(f"Unknown extra field {f!r}; known fields are {', '.join(EXTRA_FIELDS)}.")
        m = self._model_index(models)
        s = self._sample_index(samples)
        n = self.n_samples if s is None else len(s)
        out = {f: (np.zeros((len(m), n), dtype=np.int32 if f == "predicted" else np.float64),
                   np.zeros((len(m), n), dtype=bool)) for f in fields}
        if len(m) == 0 or n == 0 or not fields:
            return out
        blocks = self._blocks_for(s)
        fetched = self._fetch(m, np.array([b[0] for b in blocks]), columns=fields, table="extras")
        for block_id, start, length in blocks:
            got = self._extras_block(fetched, int(block_id), int(length), m, fields)
            if s is None:
                sl = slice(int(start), int(start + length))
                for f, (v, h) in got.items():
                    out[f][0][:, sl], out[f][1][:, sl] = v, h
            else:
                cols = np.flatnonzero((s >= start) & (s < start + length))
                for f, (v, h) in got.items():
                    out[f][0][:, cols], out[f][1][:, cols] = v[:, s[cols] - start], h[:, s[cols] - start]
        return out

    def extras(self, models=None, samples=None, fields: Sequence[str] = EXTRA_FIELDS) -> dict[str, np.ndarray]:
        """Per-entry extras (confidence, true_prob: float32; predicted: int32), shaped like
        :meth:`matrix`. InputError naming the field if any requested entry lacks it."""
        m = self._model_index(models)
        s = self._sample_index(samples)
        out = {}
        for f, (arr, have) in self.extras_partial(m, s, fields).items():
            if not have.all():
                rr, cc = np.unravel_index(int(np.argmax(~have)), have.shape)
                mid = self._cur().execute("SELECT model_id FROM models WHERE model_idx = ?", [int(m[rr])]).fetchone()[0]
                si = int(cc if s is None else s[cc])
                sid = self._cur().execute("SELECT sample_id FROM samples WHERE sample_idx = ?", [si]).fetchone()[0]
                raise InputError(f"The store has no {f} for model {mid!r} on sample {sid!r}; that field was not recorded.")
            out[f] = arr.astype(np.float32) if f != "predicted" else arr
        return out

    def counts(self, dataset: str | None = None, domains: Iterable[str] | None = None, models=None) -> pd.DataFrame:
        """Correct and total recorded predictions per model and domain: the ``counts.csv``
        of ``rank`` / ``weights`` (model, task, category, correct, total; task = domain).

        Only recorded entries count; model x domain pairs with nothing recorded are left
        out. When several datasets share a domain name, task is ``dataset/domain``.
        """
        smp = self.samples(dataset, domains)
        m = self._model_index(models)
        cols = ["model", "task", "category", "correct", "total"]
        if len(smp) == 0 or len(m) == 0:
            return pd.DataFrame({c: pd.Series(dtype=object if c in ("model", "task", "category") else np.int64) for c in cols})
        doms = smp[["dataset", "domain", "category"]].drop_duplicates(["dataset", "domain"]).reset_index(drop=True)
        clash = doms["domain"].duplicated(keep=False)
        doms["task"] = np.where(clash, doms["dataset"] + "/" + doms["domain"], doms["domain"])
        code = pd.MultiIndex.from_frame(smp[["dataset", "domain"]]).map(
            {k: i for i, k in enumerate(zip(doms["dataset"], doms["domain"]))}
        ).to_numpy(dtype=np.int64)
        order = np.argsort(code, kind="stable")
        sidx = smp["sample_idx"].to_numpy(dtype=np.int64)[order]
        bounds = np.searchsorted(code[order], np.arange(len(doms)))
        ids = self.models().set_index("model_idx")["model_id"]
        chunk = max(1, int(50_000_000 // max(len(sidx), 1)))
        correct = np.zeros((len(m), len(doms)), dtype=np.int64)
        total = np.zeros((len(m), len(doms)), dtype=np.int64)
        for a in range(0, len(m), chunk):
            vals, known = self._dense(m[a : a + chunk], sidx)
            correct[a : a + chunk] = np.add.reduceat(vals & known, bounds, axis=1)
            total[a : a + chunk] = np.add.reduceat(known, bounds, axis=1, dtype=np.int64)
        out = pd.DataFrame(
            {
                "model": np.repeat(ids.loc[m].to_numpy(dtype=object), len(doms)),
                "task": np.tile(doms["task"].to_numpy(dtype=object), len(m)),
                "category": np.tile(doms["category"].to_numpy(dtype=object), len(m)),
                "correct": correct.ravel(),
                "total": total.ravel(),
            }
        )
        return out[out["total"] > 0].reset_index(drop=True)

    def summary(self) -> dict[str, pd.DataFrame]:
        """Counts for ``info`` and the app's home page: tables ``datasets`` (dataset,
        synthetic, domains, samples, models, entries, accuracy, description), ``domains``
        (dataset, domain, category, samples, models, entries, accuracy) and ``models``
        (model_idx, model_id, name, family, entries, correct, accuracy). ``entries`` counts
        recorded predictions; ``models`` counts models with at least one."""
        mdl = self._df(
            "SELECT m.model_idx, m.model_id, m.name, m.family, "
            "coalesce(sum(CASE WHEN b.known IS NULL THEN k.length ELSE bit_count(b.known::BIT) END), 0)::BIGINT AS entries, "
            "coalesce(sum(bit_count(b.correct::BIT)), 0)::BIGINT AS correct "
            "FROM models m LEFT JOIN bits b USING (model_idx) LEFT JOIN blocks k USING (block_id) "
            "GROUP BY ALL ORDER BY m.model_idx"
        )
        mdl["accuracy"] = (mdl["correct"] / mdl["entries"].where(mdl["entries"] > 0)).round(4)
        doms = self.domains().rename(columns={"n_samples": "samples"})
        cnt = self.counts()
        keys = ["dataset", "domain"]
        if len(cnt):
            # counts() names a task dataset/domain only when domain names collide.
            task_key = {t: (ds, dm) for ds, dm in zip(doms["dataset"], doms["domain"]) for t in (dm, f"{ds}/{dm}")}
            cnt[keys] = pd.DataFrame([task_key[t] for t in cnt["task"]], index=cnt.index)
            agg = cnt.groupby(keys).agg(models=("model", "nunique"), entries=("total", "sum"), correct=("correct", "sum"))
            doms = doms.merge(agg.reset_index(), on=keys, how="left")
        else:
            doms = doms.assign(models=0, entries=0, correct=0)
        doms[["models", "entries", "correct"]] = doms[["models", "entries", "correct"]].fillna(0).astype(np.int64)
        dsets = self.datasets().merge(
            doms.groupby("dataset").agg(domains=("domain", "size"), samples=("samples", "sum"),
                                        entries=("entries", "sum"), correct=("correct", "sum")).reset_index(),
            on="dataset", how="left")
        per_model = cnt.groupby("dataset")["model"].nunique() if len(cnt) else pd.Series(dtype=np.int64)
        dsets["models"] = dsets["dataset"].map(per_model).fillna(0).astype(np.int64)
        for c in ("domains", "samples", "entries", "correct"):
            dsets[c] = dsets[c].fillna(0).astype(np.int64)
        for df in (doms, dsets):
            df["accuracy"] = (df["correct"] / df["entries"].where(df["entries"] > 0)).round(4)
        dsets = dsets[["dataset", "synthetic", "domains", "samples", "models", "entries", "accuracy", "description"]]
        doms = doms[["dataset", "domain", "category", "samples", "models", "entries", "accuracy"]]
        return {"datasets": dsets, "domains": doms, "models": mdl[["model_idx", "model_id", "name", "family", "entries", "correct", "accuracy"]]}

    # ------------------------------------------------------------------ writing
    def _require_writer(self) -> None:
        if self.read_only:
            raise InputError(f"Store {self.path} is open read-only; open it with read_only=False to write.")

    def add_dataset(self, dataset: str, description: str = "", synthetic: bool = False, source: str = "") -> None:
        """Register a dataset's description before importing into it (one transaction).

        A dataset that exists with identical fields is left alone; different fields are an error.
        """
        self._require_writer()
        if not isinstance(dataset, str) or not dataset.strip():
            raise InputError("A dataset needs a non-empty name.")
        row = self._cur().execute(
            "SELECT description, synthetic, source FROM datasets WHERE dataset = ?", [dataset]
        ).fetchone()
        if row is not None:
            if tuple(row) != (description, bool(synthetic), source):
                raise InputError(
                    f"Dataset {dataset!r} is already in the store with different fields "
                    f"(description {row[0]!r}, synthetic {row[1]}, source {row[2]!r})."
                )
            return
        with self._lock:
            con = self._con
            con.begin()
            try:
                con.execute("INSERT INTO datasets VALUES (?, ?, ?, ?, ?)", [dataset, description, bool(synthetic), source, _now()])
                con.commit()
            except BaseException:
                con.rollback()
                raise

    def insert_long(self, df: pd.DataFrame, source: str = "<DataFrame>", *, models: pd.DataFrame | None = None,
                    dataset: str | None = None, checksum: str | None = None, progress: Progress | None = None) -> dict:
        """Import a long table (model, sample, correct[, confidence, predicted, true_prob,
        label, dataset, domain, category, split]) in one transaction.

        ``models`` optionally carries model fields (model_id, name, family, release_order,
        metadata, estimated). Entries already in the store must arrive with the same
        values; they are not rewritten. Returns a summary dict (also written to the log).
        """
        self._require_writer()
        entries, smp, mdl = validate_long(df, source, dataset)
        return self._insert_entries("insert_long", source, checksum, entries, smp, mdl, models, progress)

    def _insert_entries(self, action: str, source: str, checksum: str | None, entries: Entries, smp: pd.DataFrame,
                        mdl: pd.DataFrame, models: pd.DataFrame | None, progress: Progress | None) -> dict:
        if models is not None:
            meta = normalize_models(models, f"{source} (models)")
            extra = np.setdiff1d(mdl["model_id"].to_numpy(dtype=object).astype(str),
                                 meta["model_id"].to_numpy(dtype=object).astype(str))
            if len(extra):
                raise InputError(f"{source} names model {extra[0]!r}, which the model table does not describe.")
            mdl = mdl.merge(meta, on="model_id", how="left")
        model_idx, new_models = self._resolve_models(mdl, source)
        sample_idx, new_samples, new_domains, new_datasets, new_blocks = self._resolve_samples(smp, source)
        plan = self._plan_sparse(
            action, source, checksum or _digest_entries(entries),
            model_idx[entries.model_row], sample_idx[entries.sample_row], entries, new_models, new_samples, new_domains, new_datasets, new_blocks,
        )
        return self._write(plan, progress)

    def insert_matrix(self, A, models, samples, source: str = "<array>", *, extras: Mapping[str, np.ndarray] | None = None,
                      dataset: str | None = None, checksum: str | None = None, progress: Progress | None = None) -> dict:
        """Import a wide 0/1 matrix (rows = ``models``, columns = ``samples``) in one transaction.

        ``models``/``samples``: id lists or tables (``model_id`` + model fields;
        ``sample_id`` + dataset, domain, category, label, split). New samples need a
        dataset (column or ``dataset=``); their domain defaults to the dataset name.
        """
        self._require_writer()
        from lifelong_core.io_matrix import check_binary

        arr = np.asarray(A)
        if arr.dtype == object:
            raise InputError(f"{source} holds Python objects; expected a numeric 0/1 matrix.")
        if arr.ndim != 2:
            raise InputError(f"{source} holds a {arr.ndim}-dimensional array; expected a 2-dimensional matrix (models x samples).")
        mdl = normalize_models(models, f"{source} (model ids)")
        smp = normalize_samples(samples, f"{source} (sample ids)", dataset)
        if arr.shape != (len(mdl), len(smp)):
            raise InputError(
                f"{source} has shape {arr.shape[0]} x {arr.shape[1]} but {len(mdl)} model ids and "
                f"{len(smp)} sample ids were given."
            )
        # max() is one SIMD pass; check_binary (which also names the bad cell) runs only
        # when it has something to report or the dtype needs converting.
        if not (arr.dtype == np.uint8 and arr.size and int(arr.max()) <= 1):
            arr = check_binary(arr, source, what="matrix")
        ext = check_extras(extras, arr.shape, source)
        model_idx, new_models = self._resolve_models(mdl, source)
        sample_idx, new_samples, new_domains, new_datasets, new_blocks = self._resolve_samples(smp, source)
        plan = self._plan_dense(
            "insert_matrix", source, checksum or _digest_dense(arr, mdl, smp, ext),
            model_idx, sample_idx, arr, ext, new_models, new_samples, new_domains, new_datasets, new_blocks,
        )
        return self._write(plan, progress)

    def insert_lm_eval(self, path: str | os.PathLike, model_name: str, metric: str | None = None,
                       dataset: str | None = None, filter: str | None = None, progress: Progress | None = None) -> dict:
        """Import one model's lm-evaluation-harness ``--log_samples`` output (see
        :mod:`lifelong_core.store.lm_eval`) in one transaction."""
        self._require_writer()
        from lifelong_core.store.lm_eval import read_lm_eval

        run = read_lm_eval(path, model_name, metric=metric, dataset=dataset, filter=filter)
        entries, smp, mdl = validate_long(run.table, run.source)
        smp["meta"] = run.sample_meta.loc[smp["sample_id"]].to_numpy(dtype=object)
        summary = self._insert_entries("insert_lm_eval", run.source, run.checksum, entries, smp, mdl, run.models, progress)
        return {**summary, "metrics": dict(run.metrics)}

    # -- resolution of ids against what the store holds (reads only)
    def _resolve_models(self, mdl: pd.DataFrame, source: str) -> tuple[np.ndarray, pd.DataFrame]:
        cur = self._cur()
        cur.register("_in_models", pa.table({"model_id": pa.array(mdl["model_id"].astype(str).tolist())}))
        old = cur.sql(
            "SELECT model_idx, model_id, name, family, release_order, metadata, estimated FROM models "
            "WHERE model_id IN (SELECT model_id FROM _in_models)"
        ).df()
        idx = np.full(len(mdl), -1, dtype=np.int64)
        if len(old):
            at = pd.Series(np.arange(len(mdl)), index=mdl["model_id"].to_numpy(dtype=object)).loc[old["model_id"]].to_numpy()
            idx[at] = old["model_idx"].to_numpy(dtype=np.int64)
            for c in ("name", "family", "release_order", "metadata", "estimated"):
                if c in mdl:
                    _check_same(mdl[c].to_numpy(dtype=object)[at], old[c].to_numpy(dtype=object),
                                old["model_id"], "model", c, source)
        fresh = idx < 0
        idx[fresh] = self.n_models + np.arange(int(fresh.sum()))
        new = mdl[fresh].reset_index(drop=True)
        out = pd.DataFrame({"model_idx": idx[fresh].astype(np.int32), "model_id": new["model_id"].astype(str)})
        out["name"] = new["name"] if "name" in new else out["model_id"]
        out["name"] = [i if _missing(n) else n for n, i in zip(out["name"], out["model_id"])]
        out["family"] = new["family"] if "family" in new else None
        out["metadata"] = new["metadata"] if "metadata" in new else "{}"
        out["release_order"] = new["release_order"] if "release_order" in new else pd.array([None] * len(new), dtype="Int64")
        out["estimated"] = new["estimated"].astype(bool) if "estimated" in new else False
        return idx, out

    def _resolve_samples(self, smp: pd.DataFrame, source: str):
        cur = self._cur()
        cur.register("_in_samples", pa.table({"sample_id": pa.array(smp["sample_id"].astype(str).tolist())}))
        old = cur.sql(
            "SELECT s.sample_idx, s.sample_id, s.dataset, s.domain, d.category, s.label, s.split, s.meta "
            "FROM samples s JOIN domains d USING (dataset, domain) "
            "WHERE s.sample_id IN (SELECT sample_id FROM _in_samples)"
        ).df()
        idx = np.full(len(smp), -1, dtype=np.int64)
        if len(old):
            pos = pd.Series(np.arange(len(smp)), index=smp["sample_id"])
            at = pos.loc[old["sample_id"]].to_numpy()
            idx[at] = old["sample_idx"].to_numpy(dtype=np.int64)
            for c in ("dataset", "domain", "category", "label", "split", "meta"):
                if c in smp:
                    _check_same(smp[c].to_numpy(dtype=object)[at], old[c].to_numpy(dtype=object),
                                old["sample_id"], "sample", c, source)
        fresh = idx < 0
        n_new = int(fresh.sum())
        idx[fresh] = self.n_samples + np.arange(n_new)
        new = smp[fresh].reset_index(drop=True)
        if n_new and "dataset" not in new:
            raise InputError(
                f"{source}: sample {new['sample_id'].iloc[0]!r} is new to the store and no dataset is given; "
                "add a dataset column or pass a dataset name (--dataset)."
            )
        if n_new and "domain" not in new:
            # Only new samples take the default domain (the dataset's name): a known
            # sample keeps the one it has.
            new["domain"] = new["dataset"]
        samples = pd.DataFrame({"sample_idx": idx[fresh].astype(np.int32), "sample_id": new["sample_id"].astype(str)})
        for c in ("dataset", "domain"):
            samples[c] = new[c].astype(str) if n_new else pd.Series(dtype=str)
        samples["label"] = new["label"] if "label" in new else pd.array([None] * n_new, dtype="Int64")
        samples["split"] = new["split"] if "split" in new else None
        samples["meta"] = new["meta"] if "meta" in new else None

        # Domains and datasets named by new samples (or re-stated by known ones).
        stated = [smp[~fresh]] if {"dataset", "domain"} <= set(smp.columns) else []
        doms = pd.concat(stated + ([new] if n_new else [])) if stated or n_new else smp.iloc[:0]
        doms = doms.drop_duplicates(["dataset", "domain"]) if len(doms) else doms
        cats = doms["category"].to_numpy(dtype=object) if "category" in doms else np.full(len(doms), None, dtype=object)
        new_domains = []
        if len(doms):
            cur.register("_in_domains", pa.table({"dataset": pa.array(doms["dataset"].astype(str).tolist()),
                                                  "domain": pa.array(doms["domain"].astype(str).tolist())}))
            old_d = cur.sql(
                "SELECT d.dataset, d.domain, d.category FROM domains d JOIN _in_domains i USING (dataset, domain)"
            ).df()
            old_cat = {(a, b): c for a, b, c in zip(old_d["dataset"], old_d["domain"], old_d["category"])}
            for (ds, dm), cat in zip(zip(doms["dataset"], doms["domain"]), cats):
                if (ds, dm) in old_cat:
                    if "category" in smp and not _same(cat, old_cat[(ds, dm)]):
                        raise InputError(
                            f"{source}: domain {dm!r} of dataset {ds!r} is already in the store with category "
                            f"{_show(old_cat[(ds, dm)])}, but this import gives {_show(cat)}."
                        )
                else:
                    new_domains.append((ds, dm, cat))
        new_domains = pd.DataFrame(new_domains, columns=["dataset", "domain", "category"])
        names = sorted(set(new_domains["dataset"]))
        have = set(cur.execute("SELECT dataset FROM datasets").df()["dataset"]) if names else set()
        new_datasets = pd.DataFrame({"dataset": [d for d in names if d not in have]})

        # New samples occupy new blocks only, so existing packed rows are never rewritten.
        starts = np.arange(self.n_samples, self.n_samples + n_new, BLOCK_SIZE, dtype=np.int64)
        next_id = int(self._blocks["block_id"].max()) + 1 if len(self._blocks["block_id"]) else 0
        new_blocks = pd.DataFrame({
            "block_id": np.arange(next_id, next_id + len(starts), dtype=np.int32),
            "start": starts,
            "length": np.minimum(BLOCK_SIZE, self.n_samples + n_new - starts).astype(np.int32),
        })
        return idx, samples, new_domains, new_datasets, new_blocks

    def _all_blocks(self, new_blocks: pd.DataFrame):
        b = self._blocks
        return (
            np.concatenate([b["block_id"], new_blocks["block_id"].to_numpy(np.int64)]),
            np.concatenate([b["start"], new_blocks["start"].to_numpy(np.int64)]),
            np.concatenate([b["length"], new_blocks["length"].to_numpy(np.int64)]),
            len(b["block_id"]),
        )

    def _merge(self, block_id: int, length: int, models: np.ndarray, vals: np.ndarray, known_new: np.ndarray,
               ext_new: dict, source: str):
        """Merge incoming dense rows of one existing block with what is stored there.

        Returns (task or None, mask of incoming entries that are new). Raises on a
        conflicting value; entries already recorded identically are dropped, not rewritten.
        """
        fetched = self._fetch(models, np.array([block_id]))
        old_v, old_k = self._block_rows(fetched, block_id, length, models)
        both = old_k & known_new
        if both.any():
            clash = both & (old_v != vals)
            if clash.any():
                r, c = np.unravel_index(int(np.argmax(clash)), clash.shape)
                self._raise_conflict(int(models[r]), block_id, int(c), f"correct {int(old_v[r, c])}",
                                     f"correct {int(vals[r, c])}", source)
        old_ext = {}
        if ext_new:
            ex_fetched = self._fetch(models, np.array([block_id]), columns=EXTRA_FIELDS, table="extras")
            old_ext = self._extras_block(ex_fetched, block_id, length, models, EXTRA_FIELDS)
            for f, new in ext_new.items():
                ov, oh = old_ext[f]
                bad = both & (~oh | (ov != new))
                if bad.any():
                    r, c = np.unravel_index(int(np.argmax(bad)), bad.shape)
                    was = f"{f} {ov[r, c].item()!r}" if oh[r, c] else f"no {f}"
                    self._raise_conflict(int(models[r]), block_id, int(c), was, f"{f} {new[r, c].item()!r}", source)
        fresh = known_new & ~old_k
        rows = np.flatnonzero(fresh.any(axis=1))
        if len(rows) == 0:
            return None, fresh
        final_v = (old_v[rows] | (vals[rows] & fresh[rows])).astype(np.uint8)
        final_k = old_k[rows] | known_new[rows]
        had_bits = np.isin(models[rows], fetched[block_id][0]) if block_id in fetched else np.zeros(len(rows), bool)
        mid = models[rows].astype(np.int32)
        full = final_k.all(axis=1)
        ext_rows = {}
        delete_extras = np.zeros(0, np.int32)
        if ext_new:
            # A rewritten extras row keeps the fields this import does not carry.
            for f in EXTRA_FIELDS:
                ov, oh = old_ext[f]
                if f in ext_new:
                    fr = fresh[rows]
                    ext_rows[f] = (np.where(fr, ext_new[f][rows], ov[rows]), oh[rows] | fr)
                else:
                    ext_rows[f] = (ov[rows], oh[rows])
            had = ex_fetched.get(block_id)
            if had is not None:
                delete_extras = mid[np.isin(mid, had[0])]

        def build():
            bits = []
            if full.any():
                bits.append((mid[full], _bits.pack_rows(final_v[full]), None))
            if (~full).any():
                bits.append((mid[~full], _bits.pack_rows(final_v[~full]), _bits.pack_rows(final_k[~full])))
            return bits, ([(mid, ext_rows)] if ext_rows else [])

        return _BlockTask(block_id, build, delete_bits=mid[had_bits], delete_extras=delete_extras), fresh

    def _raise_conflict(self, model_idx: int, block_id: int, offset: int, old: str, new: str, source: str):
        start = int(self._blocks["start"][self._blocks["block_id"] == block_id][0])
        mid = self._cur().execute("SELECT model_id FROM models WHERE model_idx = ?", [model_idx]).fetchone()[0]
        sid = self._cur().execute("SELECT sample_id FROM samples WHERE sample_idx = ?", [start + offset]).fetchone()[0]
        raise InputError(
            f"{source}: the store already records model {mid!r} on sample {sid!r} with {old}, but this import gives {new}."
        )

    def _plan_dense(self, action, source, checksum, model_idx, sample_idx, arr, ext, new_models, new_samples,
                    new_domains, new_datasets, new_blocks) -> _Plan:
        ids, starts, lengths, n_old = self._all_blocks(new_blocks)
        blk = np.searchsorted(starts, sample_idx, side="right") - 1
        tasks: list[_BlockTask] = []
        entries = 0
        m32 = model_idx.astype(np.int32)
        for b in np.unique(blk):
            cols = np.flatnonzero(blk == b)
            start, length, block_id = int(starts[b]), int(lengths[b]), int(ids[b])
            offs = sample_idx[cols] - start
            if b >= n_old:
                # A brand-new block: nothing to merge with; pack during the write.
                contiguous = len(cols) == length and bool(np.all(np.diff(cols) == 1)) and bool(np.all(offs == np.arange(length)))

                def build(cols=cols, offs=offs, length=length, contiguous=contiguous):
                    def place(a):
                        if contiguous:
                            return a[:, cols[0] : cols[0] + length]
                        out = np.zeros((a.shape[0], length), dtype=a.dtype)
                        out[:, offs] = a[:, cols]
                        return out

                    have = None
                    if not contiguous:
                        have = np.zeros((arr.shape[0], length), dtype=bool)
                        have[:, offs] = True
                    known = None if have is None or have.all() else _bits.pack_rows(have)
                    ext_rows = [(m32, {f: (place(v), have) for f, v in ext.items()})] if ext else []
                    return [(m32, _bits.pack_rows(place(arr)), known)], ext_rows

                tasks.append(_BlockTask(block_id, build))
                entries += arr.shape[0] * len(cols)
                continue
            vals = np.zeros((len(model_idx), length), dtype=np.uint8)
            known = np.zeros((len(model_idx), length), dtype=bool)
            vals[:, offs] = arr[:, cols]
            known[:, offs] = True
            ext_b = {}
            for f, v in ext.items():
                e = np.zeros((len(model_idx), length), dtype=v.dtype)
                e[:, offs] = v[:, cols]
                ext_b[f] = e
            task, fresh = self._merge(block_id, length, model_idx, vals, known, ext_b, source)
            if task is not None:
                tasks.append(task)
            entries += int(fresh.sum())
        return _Plan(action, source, checksum, new_datasets, new_domains, new_models, new_samples, new_blocks, tasks, entries)

    def _plan_sparse(self, action, source, checksum, model_idx, sample_idx, entries: Entries, new_models, new_samples,
                     new_domains, new_datasets, new_blocks) -> _Plan:
        ids, starts, lengths, n_old = self._all_blocks(new_blocks)
        blk = np.searchsorted(starts, sample_idx, side="right") - 1
        order = np.lexsort((model_idx, blk))
        tasks: list[_BlockTask] = []
        n_entries = 0
        bounds = np.flatnonzero(np.diff(blk[order])) + 1
        for part in np.split(order, bounds):
            b = int(blk[part[0]])
            start, length, block_id = int(starts[b]), int(lengths[b]), int(ids[b])
            mods, inv = np.unique(model_idx[part], return_inverse=True)
            offs = sample_idx[part] - start
            vals = np.zeros((len(mods), length), dtype=np.uint8)
            known = np.zeros((len(mods), length), dtype=bool)
            vals[inv, offs] = entries.correct[part]
            known[inv, offs] = True
            ext_b = {}
            for f, v in entries.extras.items():
                e = np.zeros((len(mods), length), dtype=v.dtype)
                e[inv, offs] = v[part]
                ext_b[f] = e
            if b >= n_old:
                m32 = mods.astype(np.int32)

                def build(vals=vals, known=known, m32=m32, ext_b=ext_b):
                    full = known.all(axis=1)
                    bits = []
                    if full.any():
                        bits.append((m32[full], _bits.pack_rows(vals[full]), None))
                    if (~full).any():
                        bits.append((m32[~full], _bits.pack_rows(vals[~full]), _bits.pack_rows(known[~full])))
                    return bits, ([(m32, {f: (v, known) for f, v in ext_b.items()})] if ext_b else [])

                tasks.append(_BlockTask(block_id, build))
                n_entries += len(part)
            else:
                task, fresh = self._merge(block_id, length, mods, vals, known, ext_b, source)
                if task is not None:
                    tasks.append(task)
                n_entries += int(fresh.sum())
        return _Plan(action, source, checksum, new_datasets, new_domains, new_models, new_samples, new_blocks, tasks, n_entries)

    def _write(self, plan: _Plan, progress: Progress | None) -> dict:
        """Apply a validated plan in ONE DuckDB transaction; roll back on any failure."""
        now = _now()
        with self._lock:
            con = self._con
            con.begin()
            try:
                def put(table: str, df: pd.DataFrame | pa.Table, columns: str):
                    if len(df) == 0:
                        return
                    tbl = df if isinstance(df, pa.Table) else pa.Table.from_pandas(df, preserve_index=False)
                    con.register("_put", tbl)
                    con.execute(f"INSERT INTO {table} SELECT {columns} FROM _put")
                    con.unregister("_put")

                def delete(table: str, block_id: int, models: np.ndarray):
                    if len(models):
                        con.register("_del", pa.table({"m": pa.array(models.astype(np.int32))}))
                        con.execute(f"DELETE FROM {table} WHERE block_id = {block_id} AND model_idx IN (SELECT m FROM _del)")
                        con.unregister("_del")

                ds = plan.datasets.assign(description="", synthetic=False, source=plan.source, added_at=now)
                put("datasets", ds, "dataset, description, synthetic, source, added_at")
                put("domains", plan.domains.assign(added_at=now), "dataset, domain, category, added_at")
                put("models", plan.models.assign(added_at=now),
                    "model_idx, model_id, name, family, metadata, release_order, estimated, added_at")
                put("samples", plan.samples.assign(added_at=now),
                    "sample_idx, sample_id, dataset, domain, label, split, meta, added_at")
                put("blocks", plan.blocks, "block_id, start, length")
                for i, task in enumerate(plan.tasks):
                    delete("bits", task.block_id, task.delete_bits)
                    delete("extras", task.block_id, task.delete_extras)
                    bits_rows, extras_rows = task.build()
                    for midx, correct, known, *row_blocks in bits_rows:
                        block_ids = row_blocks[0] if row_blocks else np.full(len(midx), task.block_id)
                        put("bits", pa.table({
                            "model_idx": pa.array(midx.astype(np.int32)),
                            "block_id": pa.array(np.asarray(block_ids, dtype=np.int32)),
                            "correct": _bits.binary_from_rows(correct),
                            "known": _bits.binary_from_rows(known) if known is not None else pa.nulls(len(midx), pa.binary()),
                        }), "model_idx, block_id, correct, known")
                    for midx, fields in extras_rows:
                        put("extras", _extras_table(midx, task.block_id, fields), "model_idx, block_id, " + ", ".join(EXTRA_FIELDS))
                    if progress is not None:
                        progress((i + 1) / max(len(plan.tasks), 1))
                log_id = con.execute("SELECT coalesce(max(log_id) + 1, 0) FROM log").fetchone()[0]
                summary = {
                    "log_id": int(log_id), "added_at": now, "action": plan.action, "source": plan.source,
                    "new_models": len(plan.models), "new_samples": len(plan.samples),
                    "entries": int(plan.entries), "checksum": plan.checksum,
                }
                con.execute("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?, ?)", list(summary.values()))
                con.commit()
            except BaseException:
                con.rollback()
                raise
            finally:
                self._refresh()
        return summary


def _extras_table(model_idx: np.ndarray, block_id: int, fields: Mapping[str, tuple]) -> pa.Table:
    """One row per model: a list per field (NULL list when the row has none of it,
    NULL elements where an entry lacks it)."""
    n = len(model_idx)
    cols = {"model_idx": pa.array(np.asarray(model_idx, dtype=np.int32)),
            "block_id": pa.array(np.full(n, block_id, dtype=np.int32))}
    for f in EXTRA_FIELDS:
        typ = pa.int32() if f == "predicted" else pa.float64()
        if f not in fields:
            cols[f] = pa.nulls(n, pa.large_list(typ))
            continue
        values, have = fields[f]
        length = values.shape[1]
        row_has = np.ones(n, dtype=bool) if have is None else have.any(axis=1)
        flat_mask = None if have is None or have.all() else ~have.ravel()
        flat = pa.array(np.ascontiguousarray(values, dtype=np.int32 if f == "predicted" else np.float64).ravel(),
                        type=typ, mask=flat_mask)
        offsets = pa.array(np.arange(0, (n + 1) * length, length, dtype=np.int64))
        cols[f] = pa.LargeListArray.from_arrays(offsets, flat, mask=pa.array(~row_has) if not row_has.all() else None)
    return pa.table(cols)


def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and np.isnan(v))


def _same(a, b) -> bool:
    na, nb = _missing(a), _missing(b)
    if na or nb:
        return na and nb
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return bool(a) == bool(b)
    if isinstance(a, (int, np.integer, float, np.floating)) and isinstance(b, (int, np.integer, float, np.floating)):
        return float(a) == float(b)
    return str(a) == str(b)


def _check_same(new: np.ndarray, old: np.ndarray, ids: pd.Series, what: str, column: str, source: str) -> None:
    """Known ids must arrive with the metadata the store holds (missing == missing)."""
    miss_new = pd.isna(pd.Series(new, dtype=object)).to_numpy()
    miss_old = pd.isna(pd.Series(old, dtype=object)).to_numpy()
    both = ~miss_new & ~miss_old
    eq = miss_new & miss_old
    if both.any():
        a, b = new[both], old[both]
        if column in ("label", "release_order"):
            # Whole numbers compare by value (7 == 7.0 from a CSV), the rest as text.
            eq[both] = a.astype(np.float64) == b.astype(np.float64)
        else:
            eq[both] = (pd.Series(a, dtype=object).astype(str).to_numpy()
                        == pd.Series(b, dtype=object).astype(str).to_numpy())
    if not eq.all():
        j = int(np.argmax(~eq))
        raise InputError(
            f"{source}: {what} {ids.iloc[j]!r} is already in the store with {column} {_show(old[j])}, "
            f"but this import gives {_show(new[j])}."
        )


def _show(v) -> str:
    if _missing(v):
        return "none"
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        v = v.item()
    return repr(v)


def _digest_entries(e: Entries) -> str:
    h = hashlib.sha256()
    for a in (e.model, e.sample):
        h.update("\x00".join(a.tolist()).encode())
    h.update(e.correct.tobytes())
    for f in sorted(e.extras):
        h.update(f.encode())
        h.update(np.ascontiguousarray(e.extras[f]).tobytes())
    return "sha256:" + h.hexdigest()


def _digest_dense(arr: np.ndarray, mdl: pd.DataFrame, smp: pd.DataFrame, ext: Mapping[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for ids in (mdl["model_id"], smp["sample_id"]):
        h.update("\x00".join(ids.to_numpy(dtype=object).tolist()).encode())
    # The packed bits are the same content in an eighth of the bytes to hash; row chunks
    # keep the extra memory to ~64 MB whatever the matrix size.
    step = max(1, (64 << 20) // max(arr.shape[1], 1))
    for a in range(0, arr.shape[0], step):
        h.update(np.packbits(arr[a : a + step], axis=1, bitorder="little").data)
    for f in sorted(ext):
        h.update(f.encode())
        h.update(np.ascontiguousarray(ext[f]).data)
    return "sha256:" + h.hexdigest()


def file_checksum(*paths: str | os.PathLike) -> str:
    """sha256 over the bytes of the source file(s) of an import, recorded in the log."""
    h = hashlib.sha256()
    for i, path in enumerate(paths):
        if i:
            h.update(b"\x00next file\x00")
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return "sha256:" + h.hexdigest()
