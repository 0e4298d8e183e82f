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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from lifelong_core.errors import InputError, StoreLockedError
from lifelong_core.store._schema import BLOCK_SIZE, DDL, FORMAT_VERSION
from lifelong_core.store.damage import truncated_size, unreadable
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
        raise unreadable(path, exc) from None
    except duckdb.ConnectionException:
        # Same process, other mode: DuckDB shares one database instance per file.
        raise StoreLockedError(
            f"Cannot open store {path} {'read-only' if read_only else 'for writing'}: this process already "
            "has it open in the other mode; close that handle first."
        ) from None
    except duckdb.Error as exc:
        if truncated_size(path) is not None:
            raise unreadable(path, exc) from None
        raise InputError(
            f"{path} is not a DuckDB store file ({str(exc).splitlines()[0]})."
        ) from None
    # No progress bar: DuckDB would draw it on stdout, inside command output. Cursors
    # inherit the setting. Inside Jupyter DuckDB refuses to change the setting unless
    # ipywidgets is installed; its default there draws nothing either.
    with contextlib.suppress(duckdb.Error):
        con.execute("SET enable_progress_bar = false")
    return con


def check_readable(path: str | os.PathLike) -> None:
    """Refuse a store file that cannot be read, before anything shows it.

    Opens ``path`` read-only and reads the tables every page reads first (datasets, domains,
    models, samples, log): a damaged or cut-short file is one sentence here instead of
    failing halfway through a page or a command.

    Parameters
    ----------
    path : str or os.PathLike
        The store file.

    Raises
    ------
    InputError
        If the file is missing, not a store, of another format version, or damaged.
    StoreLockedError
        If another process holds it for writing.
    """
    with Store.open(path, read_only=True) as st:
        st.probe()


@contextmanager
def held_alone(path: str | os.PathLike, doing: str = "replace") -> Iterator[None]:
    """Hold the file ``path`` against every other process while it is rebuilt or replaced.

    Takes the lock DuckDB itself takes on a store file (an exclusive POSIX record lock), so
    while it is held no other process can open the store to read or to write. The file need
    not be a sound store (``build-demo --force`` replaces a damaged one). Within this process
    a writer open on ``path`` is refused the same way.

    Parameters
    ----------
    path : str or os.PathLike
        The store file (it may not exist yet).
    doing : str
        What is done to it, for the message.

    Yields
    ------
    None
        While the file is held.

    Raises
    ------
    StoreLockedError
        When another process has the file open (a writer, an import, or the app serving it),
        naming the holder as an import's refusal does.
    """
    p = Path(path)
    _claim_writer(p)
    try:
        try:
            fd = os.open(p, os.O_RDWR)
        except FileNotFoundError:
            fd = None  # nothing to hold: the caller creates the file
        except OSError as exc:
            from lifelong_core.io.edges import os_error

            raise os_error(exc, p, "store", doing) from None
        try:
            if fd is not None:
                _lock_alone(fd, p, doing)
            yield
        finally:
            if fd is not None:
                os.close(fd)
    finally:
        _release_writer(p)


def _lock_alone(fd: int, path: Path, doing: str) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: DuckDB's own lock refuses the later writer instead
        return
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        # DuckDB's refusal names the holding process; ask it for that sentence.
        holder = ""
        try:
            duckdb.connect(str(path), read_only=False).close()
        except duckdb.Error as exc:
            holder = _lock_holder(str(exc))
        raise StoreLockedError(
            f"Cannot {doing} store {path}: it is open in another process{holder}; close that "
            "process (an import, a writer, or the app serving it) and try again."
        ) from None


class Store(StoreSummaries, StoreWriter):
    """A lifelong benchmark store: a DuckDB file of cached per-sample predictions (Prabhu et al.
    (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §2).

    Open with :meth:`open` or :meth:`create`; use as a context manager. The methods live by
    what they do: reading (:mod:`.reading`), summaries (:mod:`.summaries`) and writing
    (:mod:`.writing`: plan, validate, apply); this module opens, locks and closes the file.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        The open connection (the handle closes it).
    path : pathlib.Path
        The store file.
    read_only : bool
        Whether the connection is read-only.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool):
        self._con = con
        self.path = path
        self.read_only = read_only
        self._lock = threading.Lock()
        self._refresh()

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | os.PathLike, read_only: bool = True) -> Store:
        """Open an existing store.

        Read-only handles share the file with each other; a writer needs it alone.

        Parameters
        ----------
        path : str or os.PathLike
            The store file.
        read_only : bool
            Open for reading only.

        Returns
        -------
        Store

        Raises
        ------
        InputError
            If the file is missing, empty, a folder, not a store, of another format version, or
            damaged.
        StoreLockedError
            When the lock cannot be had (another writer, or a reader while writing).
        """
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
        except duckdb.CatalogException:
            row = None
        except duckdb.Error as exc:
            con.close()
            if not read_only:
                _release_writer(p)
            raise unreadable(p, exc) from None
        if row is None or row[0] != FORMAT_VERSION:
            con.close()
            if not read_only:
                _release_writer(p)
        if row is None:
            if truncated_size(p) is not None:
                raise unreadable(p, InputError("no store_meta table"))
            raise InputError(
                f"{p} is a DuckDB file but not a lifelong store (no store_meta table)."
            )
        if row[0] != FORMAT_VERSION:
            raise InputError(
                f"Store {p} has format version {row[0]}; this program reads version {FORMAT_VERSION} (rebuild it from its sources)."
            )
        try:
            return cls(con, p, read_only)
        except duckdb.Error as exc:  # the first reads of the tables' pages
            con.close()
            if not read_only:
                _release_writer(p)
            raise unreadable(p, exc) from None

    @classmethod
    def create(cls, path: str | os.PathLike) -> Store:
        """Create a new, empty store (read-write).

        Parameters
        ----------
        path : str or os.PathLike
            The file to create.

        Returns
        -------
        Store
            A writer handle.

        Raises
        ------
        InputError
            If the file exists (it is never overwritten) or its folder does not.
        """
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

    def probe(self) -> None:
        """Read the tables every page and command reads first (datasets, domains, models,
        samples, log); a damaged or cut-short file is one sentence (:class:`InputError`)."""
        try:
            for read in (self.datasets, self.domains, self.models, self.samples, self.log):
                read()
        except duckdb.Error as exc:
            raise unreadable(self.path, exc) from None

    def close(self) -> None:
        """Close the handle (and release this process's writer claim); closing twice is harmless."""
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
        """Cap DuckDB's memory for this handle.

        By default DuckDB keeps every block it has read cached up to 80% of the machine's
        memory, so a long-lived reader (the app's server) that once counted a paper-scale store
        held 7.4 GB; with a 1 GB cap the same count peaks at 1.6 GB at the same speed.

        Parameters
        ----------
        limit : str
            A size such as ``"2GB"`` or ``"512MB"``.

        Raises
        ------
        InputError
            If ``limit`` is not a size.
        """
        if not re.fullmatch(r"\d+(\.\d+)?\s*[KMGT]i?B", limit.strip(), flags=re.IGNORECASE):
            raise InputError(f"memory limit {limit!r} is not a size such as 2GB or 512MB.")
        self.cursor().execute(f"SET memory_limit = '{limit.strip()}'")
