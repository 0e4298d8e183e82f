"""Writing to a store: resolve ids, plan, validate, apply in one transaction.

Every import goes the same way: the input is validated (:mod:`._validate`), its ids are
resolved against what the store holds (:meth:`StoreWriter.resolve_models`,
:meth:`StoreWriter.resolve_samples`, reads only), a :class:`WritePlan` lists the new
rows of every table and one :class:`BlockWrite` per block of samples (merges with
recorded entries are checked while planning), and :meth:`StoreWriter.apply` writes the
plan in ONE DuckDB transaction, rolled back on any failure. Importers outside this
module (:mod:`.packed_bulk`) build their own plans from these public pieces.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NoReturn

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import ArrayLike

from lifelong_core.bits import binary_from_rows, pack_rows
from lifelong_core.errors import InputError
from lifelong_core.io.lm_eval import LmEvalRun, read_lm_eval
from lifelong_core.io.matrix import check_binary
from lifelong_core.store._schema import BLOCK_SIZE
from lifelong_core.store._validate import (
    EXTRA_FIELDS,
    Entries,
    check_extras,
    normalize_models,
    normalize_samples,
    validate_long,
)
from lifelong_core.store.maintenance import store_error_sentence
from lifelong_core.store.reading import HARNESS_METRIC_KEY, StoreReader

Progress = Callable[[float], object]
# One write of packed rows into ``bits``: (model_idx, correct packed, known packed or None),
# optionally followed by the block of each row (the bulk import writes several blocks of
# one model next to each other); without it every row belongs to the task's block.
BitsRows = (
    tuple[np.ndarray, np.ndarray, np.ndarray | None]
    | tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]
)
# One write into ``extras``: (model_idx, {field: (values (r, L), recorded (r, L) or None)}).
ExtrasRows = tuple[np.ndarray, Mapping[str, tuple[np.ndarray, np.ndarray | None]]]


def utc_now() -> _dt.datetime:
    """The time stamp of store rows: UTC, without a time zone (DuckDB TIMESTAMP)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


@dataclass
class BlockWrite:
    """What one import does to one block.

    ``build`` runs inside the write (so packing of brand-new blocks costs no memory up
    front); merges with existing rows, which can fail validation, are computed before the
    write and only wrapped here.

    Attributes
    ----------
    block_id : int
        The block.
    build : callable
        Returns (``bits`` rows, ``extras`` rows) to insert (:data:`BitsRows`,
        :data:`ExtrasRows`).
    delete_bits, delete_extras : numpy.ndarray
        int32 ``model_idx`` whose rows of the block are replaced.
    """

    block_id: int
    build: Callable[[], tuple[list[BitsRows], list[ExtrasRows]]]
    delete_bits: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    delete_extras: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))


@dataclass
class WritePlan:
    """Everything one import writes, validated before the write begins.

    Attributes
    ----------
    action : str
        The log's action (``insert_long``, ``insert_matrix``, ...).
    source : str
        What the log names.
    checksum : str
        Digest of the input.
    datasets, domains, models, samples, blocks : pandas.DataFrame
        New rows of those tables.
    tasks : list of BlockWrite
        One per block touched.
    entries : int
        New entries written.
    meta : dict of str to str
        ``store_meta`` rows to write or replace with the import (the harness metric per
        task, :meth:`~lifelong_core.store.reading.StoreReader.harness_metrics`).
    """

    action: str
    source: str
    checksum: str
    datasets: pd.DataFrame
    domains: pd.DataFrame
    models: pd.DataFrame
    samples: pd.DataFrame
    blocks: pd.DataFrame
    tasks: list[BlockWrite]
    entries: int
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ResolvedSamples:
    """An input's samples resolved against the store (:meth:`StoreWriter.resolve_samples`).

    Attributes
    ----------
    sample_idx : numpy.ndarray
        int64 ``sample_idx`` of every input row (new samples numbered after the store's).
    samples, domains, datasets, blocks : pandas.DataFrame
        The new rows of those tables.
    """

    sample_idx: np.ndarray
    samples: pd.DataFrame
    domains: pd.DataFrame
    datasets: pd.DataFrame
    blocks: pd.DataFrame


@dataclass(frozen=True)
class BlockLayout:
    """The block table as it will be after an import (:meth:`StoreWriter.blocks_after`).

    Attributes
    ----------
    ids, starts, lengths : numpy.ndarray
        int64 block_id, first sample and length of every block, stored ones first.
    stored : int
        How many of them are stored already (the rest are new).
    """

    ids: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    stored: int


# One block's cells of an import: the block's index in the layout, the model rows it
# writes, a function giving (values, known or None for all known, extras) on demand, so a
# new block is packed during the write and never held twice, and the number of cells.
CellMaker = Callable[[], tuple[np.ndarray, "np.ndarray | None", dict]]
BlockCells = tuple[int, np.ndarray, CellMaker, int]


def _write_plan(
    action: str,
    source: str,
    checksum: str,
    new_models: pd.DataFrame,
    resolved: ResolvedSamples,
    tasks: list[BlockWrite],
    entries: int,
) -> WritePlan:
    """The plan of an import whose samples were resolved as ``resolved``."""
    return WritePlan(
        action,
        source,
        checksum,
        resolved.datasets,
        resolved.domains,
        new_models,
        resolved.samples,
        resolved.blocks,
        tasks,
        entries,
    )


def _new_block_rows(mods: np.ndarray, make: CellMaker) -> tuple[list[BitsRows], list]:
    """A new block's packed rows (complete rows without a known mask) and extras rows."""
    vals, known, ext_b = make()
    m32 = mods.astype(np.int32)
    full = np.ones(len(m32), dtype=bool) if known is None else known.all(axis=1)
    bits: list[BitsRows] = []
    if full.any():
        bits.append((m32[full], pack_rows(vals[full]), None))
    if (~full).any():
        assert known is not None  # rows not full exist only with a mask
        bits.append((m32[~full], pack_rows(vals[~full]), pack_rows(known[~full])))
    return bits, ([(m32, {f: (v, known) for f, v in ext_b.items()})] if ext_b else [])


def _dense_cells(
    layout: BlockLayout,
    model_idx: np.ndarray,
    sample_idx: np.ndarray,
    arr: np.ndarray,
    ext: Mapping[str, np.ndarray],
) -> Iterator[BlockCells]:
    """A wide matrix's cells block by block: every model row on the block's columns (a
    block the input covers whole and in order is a view, not a copy)."""
    blk = np.searchsorted(layout.starts, sample_idx, side="right") - 1
    for b in np.unique(blk):
        cols = np.flatnonzero(blk == b)
        start, length = int(layout.starts[b]), int(layout.lengths[b])
        offs = sample_idx[cols] - start
        contiguous = (
            len(cols) == length
            and bool(np.all(np.diff(cols) == 1))
            and bool(np.all(offs == np.arange(length)))
        )

        def make(
            cols: np.ndarray = cols,
            offs: np.ndarray = offs,
            length: int = length,
            contiguous: bool = contiguous,
        ) -> tuple[np.ndarray, np.ndarray | None, dict]:
            def place(a: np.ndarray) -> np.ndarray:
                if contiguous:
                    return a[:, cols[0] : cols[0] + length]
                out = np.zeros((a.shape[0], length), dtype=a.dtype)
                out[:, offs] = a[:, cols]
                return out

            known = None
            if not contiguous:
                known = np.zeros((arr.shape[0], length), dtype=bool)
                known[:, offs] = True
            return place(arr), known, {f: place(v) for f, v in ext.items()}

        yield int(b), model_idx, make, arr.shape[0] * len(cols)


def _sparse_cells(
    layout: BlockLayout, model_idx: np.ndarray, sample_idx: np.ndarray, entries: Entries
) -> Iterator[BlockCells]:
    """A long table's cells block by block: the models it names there, each on the cells
    it gives."""
    blk = np.searchsorted(layout.starts, sample_idx, side="right") - 1
    order = np.lexsort((model_idx, blk))
    bounds = np.flatnonzero(np.diff(blk[order])) + 1
    for part in np.split(order, bounds):
        b = int(blk[part[0]])
        length = int(layout.lengths[b])
        mods, inv = np.unique(model_idx[part], return_inverse=True)
        offs = sample_idx[part] - int(layout.starts[b])

        def make(
            part: np.ndarray = part,
            mods: np.ndarray = mods,
            inv: np.ndarray = inv,
            offs: np.ndarray = offs,
            length: int = length,
        ) -> tuple[np.ndarray, np.ndarray | None, dict]:
            vals = np.zeros((len(mods), length), dtype=np.uint8)
            known = np.zeros((len(mods), length), dtype=bool)
            vals[inv, offs] = entries.correct[part]
            known[inv, offs] = True
            ext_b = {}
            for f, v in entries.extras.items():
                e = np.zeros((len(mods), length), dtype=v.dtype)
                e[inv, offs] = v[part]
                ext_b[f] = e
            return vals, known, ext_b

        yield b, mods, make, len(part)


class StoreWriter(StoreReader):
    """The write methods of a store (see :class:`~lifelong_core.store.Store`)."""

    def require_writer(self) -> None:
        """Refuse a write on a read-only handle.

        Raises
        ------
        InputError
            If the handle is read-only.
        """
        if self.read_only:
            raise InputError(
                f"Store {self.path} is open read-only; open it with read_only=False to write."
            )

    def add_dataset(
        self, dataset: str, description: str = "", synthetic: bool = False, source: str = ""
    ) -> None:
        """Register a dataset's description before importing into it (one transaction).

        A dataset that exists with identical fields is left alone.

        Parameters
        ----------
        dataset : str
            Its name.
        description : str
            What it is.
        synthetic : bool
            Whether its data is synthetic.
        source : str
            Where it comes from.

        Raises
        ------
        InputError
            For a read-only handle, an empty name, or a dataset already there with different
            fields.
        """
        self.require_writer()
        if not isinstance(dataset, str) or not dataset.strip():
            raise InputError("A dataset needs a non-empty name.")
        row = (
            self.cursor()
            .execute(
                "SELECT description, synthetic, source FROM datasets WHERE dataset = ?", [dataset]
            )
            .fetchone()
        )
        if row is not None:
            if tuple(row) != (description, bool(synthetic), source):
                raise InputError(
                    f"Dataset {dataset!r} is already in the store with different fields "
                    f"(description {row[0]!r}, synthetic {row[1]}, source {row[2]!r})."
                )
            return
        with self._lock:
            con = self._connection()
            con.begin()
            try:
                con.execute(
                    "INSERT INTO datasets VALUES (?, ?, ?, ?, ?)",
                    [dataset, description, bool(synthetic), source, utc_now()],
                )
                con.commit()
            except BaseException:
                _rollback(con)
                raise

    def insert_long(
        self,
        df: pd.DataFrame,
        source: str = "<DataFrame>",
        *,
        models: pd.DataFrame | None = None,
        dataset: str | None = None,
        checksum: str | None = None,
        progress: Progress | None = None,
    ) -> dict:
        """Import a long table in one transaction (Prabhu et al. (2024), *Efficient Lifelong Model
        Evaluation in an Era of Rapid Progress*, §2: insert_M and insert_D).

        Entries already in the store must arrive with the same values; they are not rewritten.

        Parameters
        ----------
        df : pandas.DataFrame
            model, sample, correct[, confidence, predicted, true_prob, label, dataset, domain,
            category, split].
        source : str
            What the log names.
        models : pandas.DataFrame, optional
            Model fields (model_id, name, family, release_order, metadata, estimated).
        dataset : str, optional
            The dataset of new samples without a dataset column.
        checksum : str, optional
            Digest recorded in the log (default: computed from the entries).
        progress : callable, optional
            Called with the fraction of blocks written.

        Returns
        -------
        dict
            The import's summary (also written to the log).

        Raises
        ------
        InputError
            Naming the row and column of bad input, or an entry or field that conflicts with
            what the store holds; the store is then unchanged.
        """
        self.require_writer()
        entries, smp, mdl = validate_long(df, source, dataset)
        return self._insert_entries(
            "insert_long", source, checksum, entries, smp, mdl, models, progress
        )

    def _insert_entries(
        self,
        action: str,
        source: str,
        checksum: str | None,
        entries: Entries,
        smp: pd.DataFrame,
        mdl: pd.DataFrame,
        models: pd.DataFrame | None,
        progress: Progress | None,
        store_meta: dict[str, str] | None = None,
    ) -> dict:
        if models is not None:
            meta = normalize_models(models, f"{source} (models)")
            extra = np.setdiff1d(
                mdl["model_id"].to_numpy(dtype=object).astype(str),
                meta["model_id"].to_numpy(dtype=object).astype(str),
            )
            if len(extra):
                raise InputError(
                    f"{source} names model {extra[0]!r}, which the model table does not describe."
                )
            mdl = mdl.merge(meta, on="model_id", how="left")
        model_idx, new_models = self.resolve_models(mdl, source)
        resolved = self.resolve_samples(smp, source)
        layout = self.blocks_after(resolved.blocks)
        tasks, count = self._plan_blocks(
            layout,
            _sparse_cells(
                layout,
                model_idx[entries.model_row],
                resolved.sample_idx[entries.sample_row],
                entries,
            ),
            source,
        )
        plan = _write_plan(
            action, source, checksum or _digest_entries(entries), new_models, resolved, tasks, count
        )
        plan.meta = dict(store_meta or {})
        return self.apply(plan, progress)

    def insert_matrix(
        self,
        A: ArrayLike,
        models: Sequence[str] | pd.DataFrame,
        samples: Sequence[str] | pd.DataFrame,
        source: str = "<array>",
        *,
        extras: Mapping[str, np.ndarray] | None = None,
        dataset: str | None = None,
        checksum: str | None = None,
        progress: Progress | None = None,
    ) -> dict:
        """Import a wide 0/1 matrix (rows = ``models``, columns = ``samples``) in one transaction
        (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
        §2).

        Parameters
        ----------
        A : array_like
            (models, samples) 0/1.
        models : list of str or pandas.DataFrame
            Ids, or a table of ``model_id`` and model fields.
        samples : list of str or pandas.DataFrame
            Ids, or a table of ``sample_id`` and dataset, domain, category, label, split. New
            samples need a dataset (column or ``dataset``); their domain defaults to the dataset
            name.
        source : str
            What the log names.
        extras : mapping of str to numpy.ndarray, optional
            Per-entry confidence, predicted, true_prob, shaped like ``A``.
        dataset : str, optional
            The dataset of new samples.
        checksum : str, optional
            Digest recorded in the log (default: computed from the input).
        progress : callable, optional
            Called with the fraction of blocks written.

        Returns
        -------
        dict
            The import's summary (also written to the log).

        Raises
        ------
        InputError
            For a shape that does not match the ids, values other than 0/1, bad extras, or
            entries that conflict with the store; the store is then unchanged.
        """
        self.require_writer()
        arr = np.asarray(A)
        if arr.dtype == object:
            raise InputError(f"{source} holds Python objects; expected a numeric 0/1 matrix.")
        if arr.ndim != 2:
            raise InputError(
                f"{source} holds a {arr.ndim}-dimensional array; expected a 2-dimensional matrix (models x samples)."
            )
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
        model_idx, new_models = self.resolve_models(mdl, source)
        resolved = self.resolve_samples(smp, source)
        layout = self.blocks_after(resolved.blocks)
        tasks, count = self._plan_blocks(
            layout, _dense_cells(layout, model_idx, resolved.sample_idx, arr, ext), source
        )
        plan = _write_plan(
            "insert_matrix",
            source,
            checksum or _digest_dense(arr, mdl, smp, ext),
            new_models,
            resolved,
            tasks,
            count,
        )
        return self.apply(plan, progress)

    def insert_lm_eval(
        self,
        path: str | os.PathLike,
        model_name: str,
        metric: str | None = None,
        dataset: str | None = None,
        filter: str | None = None,
        progress: Progress | None = None,
    ) -> dict:
        """Import one model's lm-evaluation-harness ``--log_samples`` output in one transaction
        (see :mod:`lifelong_core.io.lm_eval`).

        Parameters
        ----------
        path : str or os.PathLike
            The run (folder, results file or samples file).
        model_name : str
            The model's name.
        metric, dataset, filter : str, optional
            As for :func:`~lifelong_core.io.lm_eval.read_lm_eval`.
        progress : callable, optional
            Called with the fraction of blocks written.

        Returns
        -------
        dict
            The import's summary.

        Raises
        ------
        InputError
            If the run cannot be read or conflicts with the store; the store is then unchanged.
        """
        self.require_writer()
        run = read_lm_eval(path, model_name, metric=metric, dataset=dataset, filter=filter)
        return self.insert_lm_eval_run(run, progress)

    def insert_lm_eval_run(self, run: LmEvalRun, progress: Progress | None = None) -> dict:
        """Import lm-eval runs already read in one transaction.

        Parameters
        ----------
        run : LmEvalRun
            One model's run, or several models' put together.
        progress : callable, optional
            Called with the fraction of blocks written.

        Returns
        -------
        dict
            The import's summary with ``metrics``: task -> (metric, filter) used.

        Raises
        ------
        InputError
            If the run conflicts with the store; the store is then unchanged.
        """
        self.require_writer()
        entries, smp, mdl = validate_long(run.table, run.source)
        smp["meta"] = run.sample_meta.loc[smp["sample_id"]].to_numpy(dtype=object)
        summary = self._insert_entries(
            "insert_lm_eval",
            run.source,
            run.checksum,
            entries,
            smp,
            mdl,
            run.models,
            progress,
            store_meta=_metric_rows(run),
        )
        return {**summary, "metrics": dict(run.metrics)}

    def set_harness_metrics(
        self, dataset: str, metrics: Mapping[str, tuple[str, str | None]]
    ) -> None:
        """Record the 0/1 metric (and filter) of each harness task of a dataset, in one
        transaction (what an lm-eval import records by itself; a dataset built another way,
        such as the bundled leaderboard, states its own).

        Parameters
        ----------
        dataset : str
            The dataset.
        metrics : mapping of str to (str, str or None)
            Task -> (metric, filter); None for the task's only filter.
        """
        self.require_writer()
        rows = [
            (f"{HARNESS_METRIC_KEY}{dataset}\t{task}", json.dumps([m, f]))
            for task, (m, f) in metrics.items()
        ]
        with self._lock:
            con = self._connection()
            con.begin()
            try:
                con.executemany("INSERT OR REPLACE INTO store_meta VALUES (?, ?)", rows)
                con.commit()
            except BaseException:
                _rollback(con)
                raise

    # -- resolution of ids against what the store holds (reads only)
    def resolve_models(self, mdl: pd.DataFrame, source: str) -> tuple[np.ndarray, pd.DataFrame]:
        """Resolve model ids against the store (reads only).

        Parameters
        ----------
        mdl : pandas.DataFrame
            ``model_id`` and any model fields of the input.
        source : str
            The input, for messages.

        Returns
        -------
        tuple
            ``model_idx`` of every input row (new models numbered after the store's) and the
            table of new model rows.

        Raises
        ------
        InputError
            If a known model arrives with fields other than those the store holds.
        """
        cur = self.cursor()
        cur.register(
            "_in_models", pa.table({"model_id": pa.array(mdl["model_id"].astype(str).tolist())})
        )
        old = cur.sql(
            "SELECT model_idx, model_id, name, family, release_order, metadata, estimated FROM models "
            "WHERE model_id IN (SELECT model_id FROM _in_models)"
        ).df()
        idx = np.full(len(mdl), -1, dtype=np.int64)
        if len(old):
            at = (
                pd.Series(np.arange(len(mdl)), index=mdl["model_id"].to_numpy(dtype=object))
                .loc[old["model_id"]]
                .to_numpy()
            )
            idx[at] = old["model_idx"].to_numpy(dtype=np.int64)
            for c in ("name", "family", "release_order", "metadata", "estimated"):
                if c in mdl:
                    _check_same(
                        mdl[c].to_numpy(dtype=object)[at],
                        old[c].to_numpy(dtype=object),
                        old["model_id"],
                        "model",
                        c,
                        source,
                    )
        fresh = idx < 0
        idx[fresh] = self.n_models + np.arange(int(fresh.sum()))
        new = mdl[fresh].reset_index(drop=True)
        out = pd.DataFrame(
            {"model_idx": idx[fresh].astype(np.int32), "model_id": new["model_id"].astype(str)}
        )
        out["name"] = new["name"] if "name" in new else out["model_id"]
        out["name"] = [i if _missing(n) else n for n, i in zip(out["name"], out["model_id"])]
        out["family"] = new.get("family", None)
        out["metadata"] = new.get("metadata", "{}")
        out["release_order"] = (
            new["release_order"]
            if "release_order" in new
            else pd.array([None] * len(new), dtype="Int64")
        )
        out["estimated"] = new["estimated"].astype(bool) if "estimated" in new else False
        return idx, out

    def resolve_samples(self, smp: pd.DataFrame, source: str) -> ResolvedSamples:
        """Resolve sample ids against the store (reads only).

        New samples occupy new blocks only, so existing packed rows are never rewritten.

        Parameters
        ----------
        smp : pandas.DataFrame
            ``sample_id`` and any sample fields of the input.
        source : str
            The input, for messages.

        Returns
        -------
        ResolvedSamples
            ``sample_idx`` of every input row, and the new rows of ``samples``, ``domains``,
            ``datasets`` and ``blocks``.

        Raises
        ------
        InputError
            If a known sample or domain arrives with other fields, or a new sample has no
            dataset.
        """
        cur = self.cursor()
        cur.register(
            "_in_samples", pa.table({"sample_id": pa.array(smp["sample_id"].astype(str).tolist())})
        )
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
                    _check_same(
                        smp[c].to_numpy(dtype=object)[at],
                        old[c].to_numpy(dtype=object),
                        old["sample_id"],
                        "sample",
                        c,
                        source,
                    )
        fresh = idx < 0
        n_new = int(fresh.sum())
        idx[fresh] = self.n_samples + np.arange(n_new)
        new = smp[fresh].reset_index(drop=True)
        if n_new and "dataset" not in new:
            raise InputError(
                f"{source}: sample {new['sample_id'].iloc[0]!r} is new to the store and no dataset is given; "
                "add a dataset column or pass a dataset name.",
                param="dataset",
            )
        if n_new and "domain" not in new:
            # Only new samples take the default domain (the dataset's name): a known
            # sample keeps the one it has.
            new["domain"] = new["dataset"]
        samples = pd.DataFrame(
            {"sample_idx": idx[fresh].astype(np.int32), "sample_id": new["sample_id"].astype(str)}
        )
        for c in ("dataset", "domain"):
            samples[c] = new[c].astype(str) if n_new else pd.Series(dtype=str)
        samples["label"] = (
            new["label"] if "label" in new else pd.array([None] * n_new, dtype="Int64")
        )
        samples["split"] = new.get("split", None)
        samples["meta"] = new.get("meta", None)

        # Domains and datasets named by new samples (or re-stated by known ones).
        stated = [smp[~fresh]] if {"dataset", "domain"} <= set(smp.columns) else []
        doms = pd.concat(stated + ([new] if n_new else [])) if stated or n_new else smp.iloc[:0]
        doms = doms.drop_duplicates(["dataset", "domain"]) if len(doms) else doms
        cats = (
            doms["category"].to_numpy(dtype=object)
            if "category" in doms
            else np.full(len(doms), None, dtype=object)
        )
        new_domains = []
        if len(doms):
            cur.register(
                "_in_domains",
                pa.table(
                    {
                        "dataset": pa.array(doms["dataset"].astype(str).tolist()),
                        "domain": pa.array(doms["domain"].astype(str).tolist()),
                    }
                ),
            )
            old_d = cur.sql(
                "SELECT d.dataset, d.domain, d.category FROM domains d JOIN _in_domains i USING (dataset, domain)"
            ).df()
            old_cat = {
                (a, b): c for a, b, c in zip(old_d["dataset"], old_d["domain"], old_d["category"])
            }
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
        new_blocks = pd.DataFrame(
            {
                "block_id": np.arange(next_id, next_id + len(starts), dtype=np.int32),
                "start": starts,
                "length": np.minimum(BLOCK_SIZE, self.n_samples + n_new - starts).astype(np.int32),
            }
        )
        return ResolvedSamples(idx, samples, new_domains, new_datasets, new_blocks)

    def blocks_after(self, new_blocks: pd.DataFrame) -> BlockLayout:
        """The block table as it will be after adding ``new_blocks``.

        Parameters
        ----------
        new_blocks : pandas.DataFrame
            block_id, start, length of the blocks an import adds.

        Returns
        -------
        BlockLayout
            int64 block_id, start and length arrays, and the number of blocks already stored.
        """
        b = self._blocks
        return BlockLayout(
            np.concatenate([b["block_id"], new_blocks["block_id"].to_numpy(np.int64)]),
            np.concatenate([b["start"], new_blocks["start"].to_numpy(np.int64)]),
            np.concatenate([b["length"], new_blocks["length"].to_numpy(np.int64)]),
            len(b["block_id"]),
        )

    def _merge(
        self,
        block_id: int,
        length: int,
        models: np.ndarray,
        vals: np.ndarray,
        known_new: np.ndarray,
        ext_new: dict,
        source: str,
    ) -> tuple[BlockWrite | None, np.ndarray]:
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
                self._raise_conflict(
                    int(models[r]),
                    block_id,
                    int(c),
                    f"correct {int(old_v[r, c])}",
                    f"correct {int(vals[r, c])}",
                    source,
                )
        old_ext = {}
        if ext_new:
            ex_fetched = self._fetch(
                models, np.array([block_id]), columns=EXTRA_FIELDS, table="extras"
            )
            old_ext = self._extras_block(ex_fetched, block_id, length, models, EXTRA_FIELDS)
            for f, new in ext_new.items():
                ov, oh = old_ext[f]
                bad = both & (~oh | (ov != new))
                if bad.any():
                    r, c = np.unravel_index(int(np.argmax(bad)), bad.shape)
                    was = f"{f} {ov[r, c].item()!r}" if oh[r, c] else f"no {f}"
                    self._raise_conflict(
                        int(models[r]), block_id, int(c), was, f"{f} {new[r, c].item()!r}", source
                    )
        fresh = known_new & ~old_k
        rows = np.flatnonzero(fresh.any(axis=1))
        if len(rows) == 0:
            return None, fresh
        final_v = (old_v[rows] | (vals[rows] & fresh[rows])).astype(np.uint8)
        final_k = old_k[rows] | known_new[rows]
        had_bits = (
            np.isin(models[rows], fetched[block_id][0])
            if block_id in fetched
            else np.zeros(len(rows), bool)
        )
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

        def build() -> tuple[list[BitsRows], list[ExtrasRows]]:
            bits: list[BitsRows] = []
            if full.any():
                bits.append((mid[full], pack_rows(final_v[full]), None))
            if (~full).any():
                bits.append((mid[~full], pack_rows(final_v[~full]), pack_rows(final_k[~full])))
            return bits, ([(mid, ext_rows)] if ext_rows else [])

        return BlockWrite(
            block_id, build, delete_bits=mid[had_bits], delete_extras=delete_extras
        ), fresh

    def _raise_conflict(
        self, model_idx: int, block_id: int, offset: int, old: str, new: str, source: str
    ) -> NoReturn:
        start = int(self._blocks["start"][self._blocks["block_id"] == block_id][0])
        mid = self._one("SELECT model_id FROM models WHERE model_idx = ?", [model_idx])[0]
        sid = self._one("SELECT sample_id FROM samples WHERE sample_idx = ?", [start + offset])[0]
        raise InputError(
            f"{source}: the store already records model {mid!r} on sample {sid!r} with {old}, but this import gives {new}."
        )

    def _plan_blocks(
        self, layout: BlockLayout, cells: Iterable[BlockCells], source: str
    ) -> tuple[list[BlockWrite], int]:
        """One write per block touched, and the entries new to the store: a new block's rows
        are packed during the write; a stored block's are merged with what it holds
        (:meth:`_merge`, which refuses a conflicting entry)."""
        tasks: list[BlockWrite] = []
        entries = 0
        for b, mods, make, count in cells:
            block_id, length = int(layout.ids[b]), int(layout.lengths[b])
            if b >= layout.stored:
                tasks.append(BlockWrite(block_id, partial(_new_block_rows, mods, make)))
                entries += count
                continue
            vals, known, ext_b = make()
            if known is None:
                known = np.ones(vals.shape, dtype=bool)
            task, fresh = self._merge(block_id, length, mods, vals, known, ext_b, source)
            if task is not None:
                tasks.append(task)
            entries += int(fresh.sum())
        return tasks, entries

    def apply(self, plan: WritePlan, progress: Progress | None) -> dict:
        """Apply a validated plan in ONE DuckDB transaction; roll back on any failure.

        The kept lifelong state follows every import (:meth:`after_write`).

        Parameters
        ----------
        plan : WritePlan
            From the store's planning methods (or :mod:`.packed_bulk`).
        progress : callable or None
            Called with the fraction of blocks written.

        Returns
        -------
        dict
            The log row written: log_id, added_at, action, source, new_models, new_samples,
            entries, checksum.

        Raises
        ------
        InputError
            If the write fails for a reason one sentence can say (disk full, unwritable folder);
            the store is then unchanged.
        """
        now = utc_now()
        with self._lock:
            con = self._connection()
            con.begin()
            try:

                def put(table: str, df: pd.DataFrame | pa.Table, columns: str) -> None:
                    if len(df) == 0:
                        return
                    tbl = (
                        df
                        if isinstance(df, pa.Table)
                        else pa.Table.from_pandas(df, preserve_index=False)
                    )
                    con.register("_put", tbl)
                    con.execute(f"INSERT INTO {table} SELECT {columns} FROM _put")
                    con.unregister("_put")

                def delete(table: str, block_id: int, models: np.ndarray) -> None:
                    if len(models):
                        con.register("_del", pa.table({"m": pa.array(models.astype(np.int32))}))
                        con.execute(
                            f"DELETE FROM {table} WHERE block_id = {block_id} AND model_idx IN (SELECT m FROM _del)"
                        )
                        con.unregister("_del")

                ds = plan.datasets.assign(
                    description="", synthetic=False, source=plan.source, added_at=now
                )
                put("datasets", ds, "dataset, description, synthetic, source, added_at")
                put(
                    "domains",
                    plan.domains.assign(added_at=now),
                    "dataset, domain, category, added_at",
                )
                put(
                    "models",
                    plan.models.assign(added_at=now),
                    "model_idx, model_id, name, family, metadata, release_order, estimated, added_at",
                )
                put(
                    "samples",
                    plan.samples.assign(added_at=now),
                    "sample_idx, sample_id, dataset, domain, label, split, meta, added_at",
                )
                put("blocks", plan.blocks, "block_id, start, length")
                for i, task in enumerate(plan.tasks):
                    delete("bits", task.block_id, task.delete_bits)
                    delete("extras", task.block_id, task.delete_extras)
                    bits_rows, extras_rows = task.build()
                    for midx, correct, known, *row_blocks in bits_rows:
                        block_ids = (
                            row_blocks[0] if row_blocks else np.full(len(midx), task.block_id)
                        )
                        put(
                            "bits",
                            pa.table(
                                {
                                    "model_idx": pa.array(midx.astype(np.int32)),
                                    "block_id": pa.array(np.asarray(block_ids, dtype=np.int32)),
                                    "correct": binary_from_rows(correct),
                                    "known": binary_from_rows(known)
                                    if known is not None
                                    else pa.nulls(len(midx), pa.binary()),
                                }
                            ),
                            "model_idx, block_id, correct, known",
                        )
                    for midx, fields in extras_rows:
                        put(
                            "extras",
                            _extras_table(midx, task.block_id, fields),
                            "model_idx, block_id, " + ", ".join(EXTRA_FIELDS),
                        )
                    if progress is not None:
                        progress((i + 1) / max(len(plan.tasks), 1))
                log_id = self._one("SELECT coalesce(max(log_id) + 1, 0) FROM log", con=con)[0]
                summary = {
                    "log_id": int(log_id),
                    "added_at": now,
                    "action": plan.action,
                    "source": plan.source,
                    "new_models": len(plan.models),
                    "new_samples": len(plan.samples),
                    "entries": int(plan.entries),
                    "checksum": plan.checksum,
                }
                con.execute(
                    "INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?, ?)", list(summary.values())
                )
                if plan.meta:
                    con.executemany(
                        "INSERT OR REPLACE INTO store_meta VALUES (?, ?)", list(plan.meta.items())
                    )
                con.commit()
            except BaseException as exc:
                _rollback(con)
                sentence = store_error_sentence(exc, self.path)
                if sentence is not None:
                    raise InputError(sentence) from None
                raise
            finally:
                # The write's own error (raised above) is the one that says what happened.
                with contextlib.suppress(duckdb.Error):
                    self._refresh()
        self.after_write()
        return summary

    def after_write(self) -> None:
        """What follows every committed import; nothing here. The store
        (:class:`~lifelong_core.store.Store`) brings its kept lifelong state up to date
        (:func:`lifelong_core.store.state.after_write`)."""


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back, unless the failed statement already ended the transaction.

    A failed commit (disk full, unwritable folder) leaves no transaction; rolling back then
    raised "cannot rollback - no transaction is active", which hid the real cause.
    """
    with contextlib.suppress(duckdb.Error):
        con.rollback()


def _extras_table(model_idx: np.ndarray, block_id: int, fields: Mapping[str, tuple]) -> pa.Table:
    """One row per model: a list per field (NULL list when the row has none of it,
    NULL elements where an entry lacks it)."""
    n = len(model_idx)
    cols = {
        "model_idx": pa.array(np.asarray(model_idx, dtype=np.int32)),
        "block_id": pa.array(np.full(n, block_id, dtype=np.int32)),
    }
    for f in EXTRA_FIELDS:
        typ = pa.int32() if f == "predicted" else pa.float64()
        if f not in fields:
            cols[f] = pa.nulls(n, pa.large_list(typ))
            continue
        values, have = fields[f]
        length = values.shape[1]
        row_has = np.ones(n, dtype=bool) if have is None else have.any(axis=1)
        flat_mask = None if have is None or have.all() else ~have.ravel()
        flat = pa.array(
            np.ascontiguousarray(
                values, dtype=np.int32 if f == "predicted" else np.float64
            ).ravel(),
            type=typ,
            mask=flat_mask,
        )
        offsets = pa.array(np.arange(0, (n + 1) * length, length, dtype=np.int64))
        cols[f] = pa.LargeListArray.from_arrays(
            offsets, flat, mask=pa.array(~row_has) if not row_has.all() else None
        )
    return pa.table(cols)


def _metric_rows(run: Any) -> dict[str, str]:
    """The ``store_meta`` rows recording the metric each task of an lm-eval import was read
    with, under the dataset its items go to; a task read with different metrics in
    different runs (recorded as text naming them, :mod:`lifelong_core.io.lm_eval`) records
    none."""
    pairs = run.table[["dataset", "domain"]].drop_duplicates()
    out = {}
    for dataset, task in zip(pairs["dataset"], pairs["domain"]):
        metric, flt = run.metrics.get(task, (None, None))
        if metric is not None and " in " not in str(metric):
            out[f"{HARNESS_METRIC_KEY}{dataset}\t{task}"] = json.dumps([metric, flt])
    return out


def _missing(v: object) -> bool:
    return v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and np.isnan(v))


def _same(a: object, b: object) -> bool:
    na, nb = _missing(a), _missing(b)
    if na or nb:
        return na and nb
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return bool(a) == bool(b)
    if isinstance(a, (int, np.integer, float, np.floating)) and isinstance(
        b, (int, np.integer, float, np.floating)
    ):
        return float(a) == float(b)
    return str(a) == str(b)


def _check_same(
    new: np.ndarray, old: np.ndarray, ids: pd.Series, what: str, column: str, source: str
) -> None:
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
            eq[both] = (
                pd.Series(a, dtype=object).astype(str).to_numpy()
                == pd.Series(b, dtype=object).astype(str).to_numpy()
            )
    if not eq.all():
        j = int(np.argmax(~eq))
        raise InputError(
            f"{source}: {what} {ids.iloc[j]!r} is already in the store with {column} {_show(old[j])}, "
            f"but this import gives {_show(new[j])}."
        )


def _show(v: object) -> str:
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


def _digest_dense(
    arr: np.ndarray, mdl: pd.DataFrame, smp: pd.DataFrame, ext: Mapping[str, np.ndarray]
) -> str:
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
