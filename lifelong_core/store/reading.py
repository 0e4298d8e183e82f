"""Reading a store: metadata tables, the 0/1 matrix (dense or packed), extras.

Mixed into :class:`~lifelong_core.store.Store`; every read takes its own cursor
(``cursor()``), so one read-only handle can serve many threads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, SupportsIndex, overload

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import NDArray

from lifelong_core import limits
from lifelong_core.bits import or_into, pack_rows, rows_from_binary, unpack_rows
from lifelong_core.errors import InputError
from lifelong_core.store._handle import StoreHandle
from lifelong_core.store._validate import EXTRA_FIELDS

# store_meta keys of the harness metric per task: HARNESS_METRIC_KEY + dataset + TAB + task.
HARNESS_METRIC_KEY = "harness metric\t"
# Model or sample indices as callers give them: a list, a range, an integer array, a Series.
Indices = Iterable[SupportsIndex]
# What ``_fetch`` returns: block_id -> (model_idx sorted, {column: pyarrow array of that block}).
Fetched = dict[int, tuple[NDArray[np.int64], dict[str, Any]]]


# What :meth:`StoreReader.samples` reads, in its order.
SAMPLE_COLUMNS = (
    "sample_idx",
    "sample_id",
    "dataset",
    "domain",
    "category",
    "label",
    "split",
    "added_at",
)


class StoreReader(StoreHandle):
    """The read methods of a store (see :class:`~lifelong_core.store.Store`)."""

    # ------------------------------------------------------------------ metadata reads
    def _df(self, sql: str, params: Sequence = ()) -> pd.DataFrame:
        # Through Arrow: strings (sample ids, 1.7M of them at paper scale) convert about 4x
        # faster than DuckDB's own .df(), with the same dtypes.
        return self.cursor().sql(sql, params=list(params) or None).to_arrow_table().to_pandas()

    def sql(self, query: str, params: Sequence = ()) -> pd.DataFrame:
        """Run an ad-hoc read query (e.g. over the ``predictions`` view).

        On a writer handle the query runs in a transaction that is always rolled back, so ad-hoc
        SQL can never change the store behind the importers' checks.

        Parameters
        ----------
        query : str
            DuckDB SQL.
        params : sequence
            Values of its ``?`` placeholders.

        Returns
        -------
        pandas.DataFrame

        Raises
        ------
        InputError
            With DuckDB's first line when the query fails.
        """
        cur = self.cursor()
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
        return self._df(
            "SELECT dataset, description, synthetic, source FROM datasets ORDER BY added_at, dataset"
        )

    def domains(self, dataset: str | None = None) -> pd.DataFrame:
        """The domains (tasks) of the store, in the order of their first sample.

        Parameters
        ----------
        dataset : str, optional
            Only this dataset's domains.

        Returns
        -------
        pandas.DataFrame
            dataset, domain, category, n_samples.
        """
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

    def samples(
        self,
        dataset: str | None = None,
        domains: Iterable[str] | None = None,
        columns: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """Samples, ordered by ``sample_idx`` (the columns of the matrix), with their domain's
        category.

        Parameters
        ----------
        dataset : str, optional
            Only this dataset's samples.
        domains : iterable of str, optional
            Only these domains' samples.
        columns : sequence of str, optional
            Only these of :data:`SAMPLE_COLUMNS`, in their order there (at paper scale each
            string column read costs a tenth of a second or more); default every one.

        Returns
        -------
        pandas.DataFrame
            sample_idx, sample_id, dataset, domain, category, label (Int64), split, added_at,
            or those of ``columns``.

        Raises
        ------
        InputError
            If ``columns`` names a column not in :data:`SAMPLE_COLUMNS`.
        """
        wanted = SAMPLE_COLUMNS if columns is None else tuple(columns)
        unknown = [c for c in wanted if c not in SAMPLE_COLUMNS]
        if unknown:
            raise InputError(
                f"the samples have no column {unknown[0]!r}; they have {', '.join(SAMPLE_COLUMNS)}.",
                param="columns",
            )
        picked = [c for c in SAMPLE_COLUMNS if c in wanted]
        where, params = _sample_filter(dataset, domains, "s.")
        select = ", ".join(("d." if c == "category" else "s.") + c for c in picked)
        df = self._df(
            f"SELECT {select} FROM samples s JOIN domains d USING (dataset, domain) {where} "
            "ORDER BY s.sample_idx",
            params,
        )
        if "label" in df:
            df["label"] = df["label"].astype("Int64")
        return df

    def sample_indices(
        self, dataset: str | None = None, domains: Iterable[str] | None = None
    ) -> np.ndarray:
        """``sample_idx`` of the samples :meth:`samples` would return, without reading their ids
        and labels.

        Parameters
        ----------
        dataset : str, optional
            Only this dataset's samples.
        domains : iterable of str, optional
            Only these domains' samples.

        Returns
        -------
        numpy.ndarray
            int64, ascending.
        """
        where, params = _sample_filter(dataset, domains)
        rows = (
            self.cursor()
            .sql(
                f"SELECT sample_idx FROM samples {where} ORDER BY sample_idx", params=params or None
            )
            .fetchnumpy()["sample_idx"]
        )
        return np.asarray(rows, dtype=np.int64)

    def harness_metrics(self, dataset: str) -> dict[str, tuple[str, str | None]]:
        """The 0/1 metric (and filter) each harness task of a dataset was imported with.

        What ``import --lm-eval`` used (chosen with ``--metric`` / ``--filter`` or the
        task's only one), so that reading a new model's run of the same tasks takes the
        same metric without asking again.

        Parameters
        ----------
        dataset : str
            The dataset.

        Returns
        -------
        dict of str to (str, str or None)
            Task -> (metric, filter); empty when nothing was recorded.
        """
        import json

        rows = (
            self.cursor()
            .execute(
                "SELECT key, value FROM store_meta WHERE starts_with(key, ?)",
                [HARNESS_METRIC_KEY + dataset + "\t"],
            )
            .fetchall()
        )
        out: dict[str, tuple[str, str | None]] = {}
        for key, value in rows:
            metric, flt = json.loads(value)
            out[key.rsplit("\t", 1)[1]] = (str(metric), None if flt is None else str(flt))
        return out

    def log(self) -> pd.DataFrame:
        """The insertion log, one row per import."""
        return self._df(
            "SELECT log_id, added_at, action, source, new_models, new_samples, entries, checksum FROM log ORDER BY log_id"
        )

    def model_index(self, model_ids: Iterable[str]) -> np.ndarray:
        """``model_idx`` of each id, in the given order.

        Parameters
        ----------
        model_ids : iterable of str
            Model ids (a list, not one string).

        Returns
        -------
        numpy.ndarray
            int64.

        Raises
        ------
        InputError
            Naming an unknown id, or for one string instead of a list.
        """
        return self._index_of("models", "model", model_ids)

    def sample_index(self, sample_ids: Iterable[str]) -> np.ndarray:
        """``sample_idx`` of each id, in the given order.

        Parameters
        ----------
        sample_ids : iterable of str
            Sample ids (a list, not one string).

        Returns
        -------
        numpy.ndarray
            int64.

        Raises
        ------
        InputError
            Naming an unknown id, or for one string instead of a list.
        """
        return self._index_of("samples", "sample", sample_ids)

    def datasets_of_samples(self, sample_ids: Iterable[str]) -> dict[str, str]:
        """The dataset of each of ``sample_ids`` the store holds (unknown ids are left out).

        Parameters
        ----------
        sample_ids : iterable of str
            Sample ids.

        Returns
        -------
        dict of str to str
        """
        want = [str(i) for i in sample_ids]
        if not want:
            return {}
        cur = self.cursor()
        cur.register("_ids", pa.table({"id": pa.array(want)}))
        got = cur.sql(
            "SELECT sample_id, dataset FROM samples WHERE sample_id IN (SELECT id FROM _ids)"
        ).df()
        return dict(zip(got["sample_id"], got["dataset"]))

    def _index_of(self, table: str, kind: str, ids: Iterable[str]) -> np.ndarray:
        if isinstance(ids, (str, bytes)):
            raise InputError(f"{kind.capitalize()} ids must be a list, not one string.")
        want = [str(i) for i in ids]
        if not want:
            return np.zeros(0, dtype=np.int64)
        cur = self.cursor()
        cur.register("_ids", pa.table({"id": pa.array(want)}))
        got = cur.sql(
            f"SELECT {kind}_id AS id, {kind}_idx AS idx FROM {table} WHERE {kind}_id IN (SELECT id FROM _ids)"
        ).df()
        lookup = dict(zip(got["id"], got["idx"].astype(np.int64)))
        missing = [i for i in want if i not in lookup]
        if missing:
            raise InputError(
                f"The store has no {kind} with id {missing[0]!r} ({len(missing)} of {len(want)} ids are unknown)."
            )
        return np.array([lookup[i] for i in want], dtype=np.int64)

    # ------------------------------------------------------------------ matrix reads
    def model_rows(self, models: Indices | None) -> NDArray[np.int64]:
        """Checked ``model_idx`` of a selection of rows.

        Parameters
        ----------
        models : iterable of int or None
            ``model_idx`` (None: every model).

        Returns
        -------
        numpy.ndarray
            int64, in the order given.

        Raises
        ------
        InputError
            For indices that are not whole numbers or lie outside the store.
        """
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
            raise InputError(
                f"Model index {int(idx[bad][0])} is outside the store's 0..{self.n_models - 1}."
            )
        return idx

    @overload
    def sample_rows(self, samples: None) -> None: ...
    @overload
    def sample_rows(self, samples: Indices) -> NDArray[np.int64]: ...
    @overload
    def sample_rows(self, samples: Indices | None) -> NDArray[np.int64] | None: ...
    def sample_rows(self, samples: Indices | None) -> NDArray[np.int64] | None:
        """Checked ``sample_idx`` of a selection of columns.

        Parameters
        ----------
        samples : iterable of int or None
            ``sample_idx`` (None: every sample, returned as None).

        Returns
        -------
        numpy.ndarray or None
            int64, in the order given.

        Raises
        ------
        InputError
            For indices that are not whole numbers or lie outside the store.
        """
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
            raise InputError(
                f"Sample index {int(idx[bad][0])} is outside the store's 0..{self.n_samples - 1}."
            )
        return idx

    def _fetch(
        self,
        models: np.ndarray,
        block_ids: np.ndarray | None,
        columns: Sequence[str] = ("correct", "known"),
        table: str = "bits",
        list_spans: dict[int, tuple[int, int]] | None = None,
    ) -> Fetched:
        """Rows of ``bits`` (or ``extras``) for the wanted models, grouped by block.

        ``list_spans`` (list columns only) cuts each block's lists to the positions
        [lo, hi) given for its block id.

        Returns {block_id: (model_idx int64 sorted, {column: pyarrow array})}.
        """
        cur = self.cursor()
        uniq = np.unique(models)
        cond = []
        if len(uniq) < self.n_models:
            cur.register("_want_models", pa.table({"m": pa.array(uniq.astype(np.int32))}))
            cond.append("model_idx IN (SELECT m FROM _want_models)")
        if block_ids is not None and len(block_ids) < len(self._blocks["block_id"]):
            cond.append(f"block_id IN ({','.join(str(int(b)) for b in block_ids) or 'NULL'})")
        where = f"WHERE {' AND '.join(cond)}" if cond else ""
        select = list(columns)
        if list_spans:
            # list_slice counts from 1 and includes its end.
            first = " ".join(f"WHEN {int(b)} THEN {lo + 1}" for b, (lo, _) in list_spans.items())
            last = " ".join(f"WHEN {int(b)} THEN {hi}" for b, (_, hi) in list_spans.items())
            select = [
                f"list_slice({c}, CASE block_id {first} END, CASE block_id {last} END) AS {c}"
                for c in columns
            ]
        tbl = cur.sql(
            f"SELECT block_id, model_idx, {', '.join(select)} FROM {table} {where}"
        ).to_arrow_table()
        out: Fetched = {}
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

    def _block_rows(
        self, fetched: Fetched, block_id: int, length: int, models: np.ndarray
    ) -> tuple[NDArray[np.uint8], NDArray[np.bool_]]:
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
        rows = rows_from_binary(cols["correct"], nbytes)
        vals[have] = unpack_rows(rows[pos_c[have]], length)
        kcol = cols["known"]
        kvalid = np.asarray(kcol.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        full = have.copy()
        full[have] = ~kvalid[pos_c[have]]
        known[full] = True
        part = have & ~full
        if part.any():
            for r in np.flatnonzero(part):
                blob = np.frombuffer(kcol[int(pos_c[r])].as_py(), dtype=np.uint8)[None, :]
                known[r] = unpack_rows(blob, length)[0].astype(bool)
        return vals, known

    def _blocks_for(self, samples: np.ndarray | None) -> list[tuple[int, int, int]]:
        b = self._blocks
        if samples is None:
            wanted = np.arange(len(b["block_id"]))
        else:
            wanted = np.unique(np.searchsorted(b["start"], samples, side="right") - 1)
        return [(int(b["block_id"][i]), int(b["start"][i]), int(b["length"][i])) for i in wanted]

    def values_and_known(
        self, models: Indices | None, samples: Indices | None
    ) -> tuple[NDArray[np.uint8], NDArray[np.bool_]]:
        """Values and recorded mask of ``models`` x ``samples``; never raises on gaps.

        Parameters
        ----------
        models : iterable of int, optional
            ``model_idx`` of the rows, in the order wanted (None: every model).
        samples : iterable of int, optional
            ``sample_idx`` of the columns, in the order wanted (None: every sample).

        Returns
        -------
        tuple of numpy.ndarray
            uint8 values (0 where unrecorded) and the bool mask of recorded entries.

        Raises
        ------
        InputError
            For bad indices, or a read above the dense-read limit.
        """
        m = self.model_rows(models)
        s = self.sample_rows(samples)
        n = self.n_samples if s is None else len(s)
        limits.check_dense(len(m), n, 2, "reading the store as a dense matrix")
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
        mid = self._one("SELECT model_id FROM models WHERE model_idx = ?", [mi])[0]
        sid = self._one("SELECT sample_id FROM samples WHERE sample_idx = ?", [si])[0]
        missing = int((~known).sum())
        raise InputError(
            f"The store has no prediction of model {mid!r} on sample {sid!r} ({missing} of the requested "
            "entries were never recorded); choose models and samples that were evaluated together."
        )

    def matrix(
        self, models: Indices | None = None, samples: Indices | None = None
    ) -> NDArray[np.uint8]:
        """The 0/1 matrix of ``models`` x ``samples``, in the orders given.

        Parameters
        ----------
        models : iterable of int, optional
            ``model_idx`` of the rows, in the order wanted (None: every model).
        samples : iterable of int, optional
            ``sample_idx`` of the columns, in the order wanted (None: every sample).

        Returns
        -------
        numpy.ndarray
            uint8 (models, samples).

        Raises
        ------
        InputError
            For bad indices, an entry that was never recorded, or a read above the dense-read
            limit.
        """
        m = self.model_rows(models)
        s = self.sample_rows(samples)
        if s is None:
            limits.check_dense(len(m), self.n_samples, 1, "reading the store as a dense matrix")
            packed, n = self.read_packed(m)
            return unpack_rows(packed, n)
        vals, known = self.values_and_known(m, s)
        if not known.all():
            self._raise_unknown(m, s, known)
        return vals

    def known(
        self, models: Indices | None = None, samples: Indices | None = None
    ) -> NDArray[np.bool_]:
        """Which of ``models`` x ``samples`` have a recorded prediction.

        Parameters
        ----------
        models : iterable of int, optional
            ``model_idx`` of the rows, in the order wanted (None: every model).
        samples : iterable of int, optional
            ``sample_idx`` of the columns, in the order wanted (None: every sample).

        Returns
        -------
        numpy.ndarray
            bool (models, samples).
        """
        return self.values_and_known(models, samples)[1]

    def read_packed(
        self, models: Indices | None = None, samples: Indices | None = None
    ) -> tuple[NDArray[np.uint8], int]:
        """Rows packed with ``np.packbits(axis=1, bitorder="little")``, and the number of samples.

        With ``samples=None`` the rows are assembled from the stored blocks without unpacking
        (the paper-scale path).

        Parameters
        ----------
        models : iterable of int, optional
            ``model_idx`` of the rows, in the order wanted (None: every model).
        samples : iterable of int, optional
            ``sample_idx`` of the columns, in the order wanted (None: every sample).

        Returns
        -------
        tuple
            uint8 (models, ceil(n/8)) packed rows and n.

        Raises
        ------
        InputError
            For bad indices or an entry that was never recorded.
        """
        m = self.model_rows(models)
        s = self.sample_rows(samples)
        if s is not None:
            return pack_rows(self.matrix(m, s)), len(s)
        n = self.n_samples
        out = np.zeros((len(m), (n + 7) // 8), dtype=np.uint8)
        if len(m) == 0 or n == 0:
            return out, n
        uniq, inverse = np.unique(m, return_inverse=True)
        fetched = self._fetch(uniq, None)
        complete = True
        for block_id, start, length in zip(
            self._blocks["block_id"], self._blocks["start"], self._blocks["length"]
        ):
            got = fetched.get(int(block_id))
            if got is None or len(got[0]) != len(uniq) or got[1]["known"].null_count != len(got[0]):
                complete = False
                break
            rows = rows_from_binary(got[1]["correct"], (int(length) + 7) // 8)
            or_into(out, rows[inverse], int(start))
        if not complete:
            known = self.values_and_known(m, None)[1]
            self._raise_unknown(m, None, known)
        return out, n

    def has_extra(self, field: str) -> bool:
        """Whether any entry has ``field`` recorded.

        Parameters
        ----------
        field : {"confidence", "predicted", "true_prob"}
            The extra field.

        Returns
        -------
        bool

        Raises
        ------
        InputError
            For an unknown field.
        """
        if field not in EXTRA_FIELDS:
            raise InputError(
                f"Unknown extra field {field!r}; known fields are {', '.join(EXTRA_FIELDS)}."
            )
        sql = f"SELECT count(*) FROM (SELECT 1 FROM extras WHERE {field} IS NOT NULL LIMIT 1)"
        return bool(self._one(sql)[0] > 0)

    def _extras_block(
        self,
        fetched: Fetched,
        block_id: int,
        length: int,
        models: np.ndarray,
        fields: Sequence[str],
    ) -> dict[str, tuple[np.ndarray, NDArray[np.bool_]]]:
        """field -> (values (len(models), length), recorded mask) of one block."""
        out: dict[str, tuple[np.ndarray, NDArray[np.bool_]]] = {}
        got = fetched.get(block_id)
        for f in fields:
            vals = np.zeros(
                (len(models), length), dtype=np.int32 if f == "predicted" else np.float64
            )
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
                    data = np.asarray(flat.fill_null(0).to_numpy(zero_copy_only=False)).reshape(
                        len(rows_with), length
                    )
                    rec = (
                        np.ones(data.shape, dtype=bool)
                        if flat.null_count == 0
                        else np.asarray(
                            flat.is_valid().to_numpy(zero_copy_only=False), dtype=bool
                        ).reshape(data.shape)
                    )
                    slot = np.full(len(midx), -1, dtype=np.int64)
                    slot[rows_with] = np.arange(len(rows_with))
                    take = np.flatnonzero(hit & (slot[pos] >= 0))
                    vals[take] = data[slot[pos[take]]]
                    have[take] = rec[slot[pos[take]]]
            out[f] = (vals, have)
        return out

    def extras_partial(
        self,
        models: Indices | None = None,
        samples: Indices | None = None,
        fields: Sequence[str] = EXTRA_FIELDS,
    ) -> dict[str, tuple[np.ndarray, NDArray[np.bool_]]]:
        """Like :meth:`extras` but never raises on gaps.

        Probabilities come back as float64, exactly as imported (``extras`` narrows them to the
        float32 of the contract).

        Parameters
        ----------
        models : iterable of int, optional
            ``model_idx`` of the rows, in the order wanted (None: every model).
        samples : iterable of int, optional
            ``sample_idx`` of the columns, in the order wanted (None: every sample).
        fields : sequence of str
            Extra fields to read.

        Returns
        -------
        dict
            field -> (values (models, samples), recorded mask).

        Raises
        ------
        InputError
            For an unknown field, bad indices, or a read above the dense-read limit.
        """
        fields = tuple(fields)
        for f in fields:
            if f not in EXTRA_FIELDS:
                raise InputError(
                    f"Unknown extra field {f!r}; known fields are {', '.join(EXTRA_FIELDS)}."
                )
        m = self.model_rows(models)
        s = self.sample_rows(samples)
        n = self.n_samples if s is None else len(s)
        limits.check_dense(len(m), n, 9 * len(fields), "reading extras as dense arrays")
        out = {
            f: (
                np.zeros((len(m), n), dtype=np.int32 if f == "predicted" else np.float64),
                np.zeros((len(m), n), dtype=bool),
            )
            for f in fields
        }
        if len(m) == 0 or n == 0 or not fields:
            return out
        blocks = self._blocks_for(s)
        # Only the span of each block's list that holds wanted samples leaves DuckDB: a few
        # hundred samples of a block of ten thousand need not carry the rest.
        spans: dict[int, tuple[int, int]] = {}
        for block_id, start, length in blocks:
            if s is None:
                spans[block_id] = (0, length)
            else:
                inside = s[(s >= start) & (s < start + length)] - start
                spans[block_id] = (int(inside.min()), int(inside.max()) + 1)
        fetched = self._fetch(
            m,
            np.array([b[0] for b in blocks]),
            columns=fields,
            table="extras",
            list_spans=None if s is None else spans,
        )
        for block_id, start, length in blocks:
            lo, hi = spans[block_id]
            got = self._extras_block(fetched, int(block_id), hi - lo, m, fields)
            if s is None:
                sl = slice(int(start), int(start + length))
                for f, (v, h) in got.items():
                    out[f][0][:, sl], out[f][1][:, sl] = v, h
            else:
                cols = np.flatnonzero((s >= start) & (s < start + length))
                for f, (v, h) in got.items():
                    out[f][0][:, cols], out[f][1][:, cols] = (
                        v[:, s[cols] - start - lo],
                        h[:, s[cols] - start - lo],
                    )
        return out

    def extras(
        self,
        models: Indices | None = None,
        samples: Indices | None = None,
        fields: Sequence[str] = EXTRA_FIELDS,
    ) -> dict[str, np.ndarray]:
        """Per-entry extras shaped like :meth:`matrix`.

        Parameters
        ----------
        models : iterable of int, optional
            ``model_idx`` of the rows, in the order wanted (None: every model).
        samples : iterable of int, optional
            ``sample_idx`` of the columns, in the order wanted (None: every sample).
        fields : sequence of str
            Extra fields to read.

        Returns
        -------
        dict of str to numpy.ndarray
            confidence and true_prob as float32, predicted as int32.

        Raises
        ------
        InputError
            Naming the field, model and sample if a requested entry lacks it; for an unknown
            field or bad indices.
        """
        m = self.model_rows(models)
        s = self.sample_rows(samples)
        out: dict[str, np.ndarray] = {}
        for f, (arr, have) in self.extras_partial(m, s, fields).items():
            if not have.all():
                rr, cc = np.unravel_index(int(np.argmax(~have)), have.shape)
                mid = self._one("SELECT model_id FROM models WHERE model_idx = ?", [int(m[rr])])[0]
                si = int(cc if s is None else s[cc])
                sid = self._one("SELECT sample_id FROM samples WHERE sample_idx = ?", [si])[0]
                raise InputError(
                    f"The store has no {f} for model {mid!r} on sample {sid!r}; that field was not recorded."
                )
            out[f] = arr.astype(np.float32) if f != "predicted" else arr
        return out


def _sample_filter(
    dataset: str | None, domains: Iterable[str] | None, alias: str = ""
) -> tuple[str, list[object]]:
    """The WHERE clause (and its parameters) choosing the samples of ``dataset`` in ``domains``."""
    cond: list[str] = []
    params: list[object] = []
    if dataset is not None:
        cond.append(f"{alias}dataset = ?")
        params.append(dataset)
    if domains is not None:
        cond.append(f"list_contains(?, {alias}domain)")
        params.append(list(domains))
    return (f"WHERE {' AND '.join(cond)}" if cond else ""), params
