"""Tables of a computation on a cache, kept in the store under a digest of what they came from.

The Budget explorer's first view compares the default estimator with a random sample the
way ``lbe backtest`` does: models held out of the cache, estimated and scored against
their full rows. On the demo store that is about half of the page's first view. ``lbe state
--refresh`` (and the demo's build) runs the comparison of the page's default view once and
keeps its tables here, so the page reads them instead of recomputing.

A kept result is found by its key: a digest of everything the computation depends on,
made by its caller (for the backtest, :func:`lifelong_core.workflows.backtest.backtest`
with ``kept=``: the cache's bits, its models' and samples' tables, the arguments, the
source of the package, :func:`lifelong_core.methods.tuning_memory.package_digest`, and the
numerical libraries' versions). Only an identical computation is ever
found, so reading one changes how long a view takes, never what it shows.

The tables are kept as Arrow IPC streams, one per table, with the settings as JSON: a
store may come from anyone, and neither format runs code when read. A kept result that
cannot be read is treated as missing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lifelong_core.store.state import KeptTable, forget_kept, kept_count, replace_row
from lifelong_core.store.writing import StoreWriter, utc_now

DDL = """
CREATE TABLE IF NOT EXISTS kept_results (
    key VARCHAR PRIMARY KEY, dataset VARCHAR NOT NULL, kind VARCHAR NOT NULL,
    info VARCHAR NOT NULL, tables BLOB NOT NULL, computed_at TIMESTAMP NOT NULL,
    seconds DOUBLE NOT NULL);
"""


@dataclass(frozen=True)
class KeptResult:
    """One kept result: its tables and settings.

    Attributes
    ----------
    key : str
        The digest it is found by.
    dataset : str
        The dataset it was computed on.
    kind : str
        What computed it (e.g. ``backtest``).
    tables : dict of str to pandas.DataFrame
        The tables, by name.
    info : dict
        Its settings, JSON-able.
    seconds : float
        How long the computation took.
    """

    key: str
    dataset: str
    kind: str
    tables: dict[str, pd.DataFrame] = field(repr=False)
    info: dict
    seconds: float


def _encode(tables: dict[str, pd.DataFrame]) -> tuple[list[list], bytes]:
    """The tables as one Arrow IPC stream each, concatenated, with each one's name and size."""
    import pyarrow as pa

    parts, blobs = [], []
    for name, frame in tables.items():
        table = pa.Table.from_pandas(frame)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        blob = sink.getvalue().to_pybytes()
        parts.append([name, len(blob)])
        blobs.append(blob)
    return parts, b"".join(blobs)


def _decode(parts: list, blob: bytes) -> dict[str, pd.DataFrame] | None:
    """The tables of :func:`_encode`, or None when the sizes do not add up or a stream is
    not Arrow IPC."""
    import pyarrow as pa

    if sum(int(size) for _, size in parts) != len(blob):
        return None
    tables, at = {}, 0
    try:
        for name, size in parts:
            piece = pa.py_buffer(blob[at : at + int(size)])
            tables[str(name)] = pa.ipc.open_stream(piece).read_all().to_pandas()
            at += int(size)
    except (pa.ArrowException, ValueError, TypeError, KeyError):
        return None
    return tables


class KeptResults(KeptTable):
    """The store's kept results, read (and, on a writer handle with ``dataset``, written).

    Parameters
    ----------
    store : Store
        An open store (a read-only handle reads).
    dataset : str, optional
        The dataset new results are kept for; without it nothing is written.
    """

    def load(self, key: str) -> KeptResult | None:
        """The result kept under ``key``, or None (also when it cannot be read).

        Parameters
        ----------
        key : str
            The result's digest.

        Returns
        -------
        KeptResult or None
        """
        row = self._row("kept_results", "key, dataset, kind, info, tables, seconds", key)
        if row is None:
            return None
        k_, dataset, kind, info, blob, seconds = row
        try:
            meta = json.loads(info)
            tables = _decode(meta["parts"], bytes(blob))
        except (ValueError, TypeError, KeyError):
            return None
        if tables is None:
            return None
        return KeptResult(k_, dataset, kind, tables, meta.get("info", {}), float(seconds))

    def save(self, result: KeptResult) -> None:
        """Keep ``result`` (replacing one under the same key), when :attr:`writes`.

        Parameters
        ----------
        result : KeptResult
            The result and its key.
        """
        if not self.writes:  # KeptTable: a writer handle and a dataset
            return
        st: StoreWriter = self.store
        st.require_writer()
        parts, blob = _encode(result.tables)
        replace_row(
            st,
            "kept_results",
            "key = ?",
            [result.key],
            [
                result.key,
                result.dataset,
                result.kind,
                json.dumps({"parts": parts, "info": result.info}, sort_keys=True),
                blob,
                utc_now(),
                float(result.seconds),
            ],
            ddl=DDL,
        )

    def get_or_compute(
        self,
        key: str,
        kind: str,
        names: tuple[str, ...],
        compute: Callable[[], dict[str, pd.DataFrame]],
        info: dict | None = None,
    ) -> dict[str, pd.DataFrame]:
        """The tables kept under ``key`` by ``kind``; else ``compute()``'s, kept when
        :attr:`writes`.

        Parameters
        ----------
        key : str
            The computation's digest (everything that can change a number).
        kind : str
            What computes them (a kept result of another kind is not used).
        names : tuple of str
            The tables ``compute`` returns: a kept result holding other tables is not
            used either.
        compute : callable
            Returns the tables, by name.
        info : dict, optional
            Settings kept beside them (JSON-able).

        Returns
        -------
        dict of str to pandas.DataFrame
        """
        found = self.load(key)
        if found is not None and found.kind == kind and set(found.tables) == set(names):
            return found.tables
        t0 = time.perf_counter()
        tables = compute()
        if self.writes:
            self.save(
                KeptResult(
                    key, str(self.dataset), kind, tables, info or {}, time.perf_counter() - t0
                )
            )
        return tables


def forget_kept_results(st: StoreWriter, dataset: str, kind: str) -> None:
    """Drop the results of ``kind`` kept for ``dataset`` (before a refresh keeps new ones).

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset, kind : str
        Whose results.
    """
    forget_kept(st, "kept_results", DDL, dataset, "kind", kind)


def kept_result_count(st: Any, dataset: str | None = None, kind: str | None = None) -> int:
    """How many results the store keeps (for ``dataset``, or in all).

    Parameters
    ----------
    st : Store
        An open store.
    dataset : str, optional
        Count only this dataset's.
    kind : str, optional
        Count only results of this kind (e.g. ``backtest``).

    Returns
    -------
    int
    """
    return kept_count(st, "kept_results", dataset, None if kind is None else ("kind", kind))
