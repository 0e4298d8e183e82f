"""The :class:`Store`: a DuckDB file of cached per-sample predictions (Prabhu et al., 2024, §2).

See the package docstring for the layout and the lock story. This module opens, creates,
locks and closes the file; what a store does is in :mod:`.reading`, :mod:`.summaries`
and :mod:`.writing`.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path

import duckdb
import numpy as np

from lifelong_core.errors import InputError, StoreLockedError
from lifelong_core.store._schema import BLOCK_SIZE, DDL, FORMAT_VERSION
from lifelong_core.store.reading import StoreReader
from lifelong_core.store.summaries import StoreSummaries
from lifelong_core.store.writing import StoreWriter, utc_now

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
        raise InputError(
            f"{path} is not a DuckDB store file ({str(exc).splitlines()[0]})."
        ) from None
    # No progress bar: DuckDB would draw it on stdout, inside command output. Cursors
    # inherit the setting. Inside Jupyter DuckDB refuses to change the setting unless
    # ipywidgets is installed; its default there draws nothing either.
    with contextlib.suppress(duckdb.Error):
        con.execute("SET enable_progress_bar = false")
    return con


class Store(StoreReader, StoreSummaries, StoreWriter):
    """A lifelong benchmark store. Open with :meth:`open` or :meth:`create`; use as a context manager.

    The methods live by what they do: reading (:mod:`.reading`), summaries
    (:mod:`.summaries`) and writing (:mod:`.writing`: plan, validate, apply); this
    module opens, locks and closes the file."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self._con = con
        self.path = path
        self.read_only = read_only
        self._lock = threading.Lock()
        self._refresh()

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | os.PathLike, read_only: bool = True) -> Store:
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
            raise InputError(
                f"{p} is a DuckDB file but not a lifelong store (no store_meta table)."
            )
        if row[0] != FORMAT_VERSION:
            raise InputError(
                f"Store {p} has format version {row[0]}; this program reads version {FORMAT_VERSION} (rebuild it from its sources)."
            )
        return cls(con, p, read_only)

    @classmethod
    def create(cls, path: str | os.PathLike) -> Store:
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
            [
                ("format_version", FORMAT_VERSION),
                ("block_size", str(BLOCK_SIZE)),
                ("created_at", utc_now().isoformat()),
            ],
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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def limit_memory(self, limit: str) -> None:
        """Cap DuckDB's memory (``"2GB"``) for this handle: by default DuckDB keeps every
        block it has read cached up to 80% of the machine's memory, so a long-lived reader
        (the app's server) that once counted a paper-scale store held 7.4 GB; with a 1 GB
        cap the same count peaks at 1.6 GB at the same speed."""
        if not re.fullmatch(r"\d+(\.\d+)?\s*[KMGT]i?B", limit.strip(), flags=re.IGNORECASE):
            raise InputError(f"memory limit {limit!r} is not a size such as 2GB or 512MB.")
        self.cursor().execute(f"SET memory_limit = '{limit.strip()}'")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A fresh DuckDB cursor on the store, for the store's own modules (everything
        else reads and writes through the methods)."""
        if self._con is None:
            raise InputError(f"Store {self.path} is closed.")
        # One cursor per call: a DuckDB connection must not be shared between threads,
        # and the app shares one read-only handle between sessions.
        return self._con.cursor()

    def _refresh(self) -> None:
        cur = self.cursor()
        self._blocks = cur.execute(
            "SELECT block_id, start, length FROM blocks ORDER BY start"
        ).fetchnumpy()
        self._blocks = {k: np.asarray(v, dtype=np.int64) for k, v in self._blocks.items()}
        self.n_models = int(cur.execute("SELECT count(*) FROM models").fetchone()[0])
        self.n_samples = int(cur.execute("SELECT count(*) FROM samples").fetchone()[0])

    @property
    def block_table(self) -> dict[str, np.ndarray]:
        """The store's blocks of samples: ``block_id``, ``start``, ``length`` (int64
        arrays, ordered by ``start``)."""
        return self._blocks
