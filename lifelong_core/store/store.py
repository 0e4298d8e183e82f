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
from lifelong_core.store.locking import (
    Hold,
    check_regular,
    check_still_held,
    file_identity,
    hold,
    holder_text,
)
from lifelong_core.store.state import after_write as _update_kept_state
from lifelong_core.store.summaries import StoreSummaries
from lifelong_core.store.writing import StoreWriter, utc_now

# The tables every page and command reads first: what Store.probe reads whole.
PROBED = ("datasets", "domains", "models", "samples", "log")


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
def held_alone(path: str | os.PathLike, doing: str = "replace") -> Iterator[Hold]:
    """Hold the file ``path`` against every other process while it is rebuilt or replaced.

    Takes the store's writer lock exclusively (:mod:`.locking`) and, beside it, the lock
    DuckDB itself takes on a store file (an exclusive POSIX record lock), so while it is
    held no other process can open the store to read or to write, whether or not it
    follows this package's rule. The file need not be a sound store (``build-demo
    --force`` replaces a damaged one). Within this process a writer open on ``path`` is
    refused the same way. Before renaming a new file over ``path``, call
    :func:`replace_held`, which checks the path still names the held file.

    Parameters
    ----------
    path : str or os.PathLike
        The store file (it may not exist yet).
    doing : str
        What is done to it, for the message.

    Yields
    ------
    Hold
        The hold (its ``identity`` is None when the file did not exist).

    Raises
    ------
    StoreLockedError
        When another process has the file open (a writer, an import, or the app serving it),
        naming the holder as an import's refusal does.
    InputError
        When ``path`` names a folder, a device, a pipe or a socket.
    """
    p = Path(path)
    h = hold(p, exclusive=True, doing=doing)
    fd = None
    try:
        if h.identity is not None:
            try:
                fd = os.open(p, os.O_RDWR | os.O_CLOEXEC)
            except OSError as exc:
                from lifelong_core.io.edges import os_error

                raise os_error(exc, p, "store", doing) from None
            _lock_alone(fd, p, doing)
        yield h
    finally:
        if fd is not None:
            os.close(fd)
        h.release()


def replace_held(tmp: Path, target: Path, held: Hold) -> None:
    """Put the finished file ``tmp`` at ``target``, which ``held`` holds: the one way a
    build replaces (or first creates) a store.

    Looks again at the moment of the rename (:func:`.locking.check_still_held`): a store
    that another process created at ``target`` during the build, or renamed over it, is
    kept and the build refused. An existing store's write-ahead log goes with it.

    Parameters
    ----------
    tmp : pathlib.Path
        The finished store, beside ``target``.
    target : pathlib.Path
        The store path.
    held : Hold
        The exclusive hold :func:`held_alone` took on ``target`` when the build started.

    Raises
    ------
    InputError
        If ``target`` changed during the build (it is left as it is).
    """
    check_still_held(held)
    if held.identity is not None:
        target.with_name(target.name + ".wal").unlink(missing_ok=True)
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)  # fails, instead of replacing, if another process made one
    except FileExistsError:
        raise InputError(
            f"store {target} was created by another process during the build; it is left as it is."
        ) from None
    except OSError:
        os.replace(tmp, target)  # a file system without hard links


def _lock_alone(fd: int, path: Path, doing: str) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: DuckDB's own lock refuses the later writer instead
        return
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        # A program that takes only DuckDB's lock: DuckDB's refusal names the process.
        holder = holder_text(file_identity(path))
        if not holder:
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
    held : Hold, optional
        The hold on the file (:mod:`.locking`), released when the handle closes.
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        path: Path,
        read_only: bool,
        held: Hold | None = None,
    ) -> None:
        self._con = con
        self._held = held
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
        check_regular(p)
        if p.stat().st_size == 0:
            raise InputError(f"Store file {p} is empty; it is not a DuckDB store.")
        # The writer rule (.locking): the lock first, then DuckDB's first read of the file.
        held = hold(p, exclusive=not read_only, doing="read" if read_only else "write to")
        try:
            con = _connect(p, read_only)
        except BaseException:
            held.release()
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
            held.release()
            raise unreadable(p, exc) from None
        if row is None or row[0] != FORMAT_VERSION:
            con.close()
            held.release()
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
            return cls(con, p, read_only, held)
        except duckdb.Error as exc:  # the first reads of the tables' pages
            con.close()
            held.release()
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
        con = _connect(p, read_only=False)
        try:
            held = hold(p, exclusive=True, doing="write to")
        except BaseException:
            con.close()
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
        return cls(con, p, False, held)

    def probe(self) -> None:
        """Read every column of the tables every page and command reads first (datasets,
        domains, models, samples, log); a damaged or cut-short file is one sentence
        (:class:`InputError`).

        Each column is read through an aggregate, so every stored segment is decoded but
        no table is built: at 1.7M samples, building the samples' table took most of a
        server's first page view."""
        cur = self.cursor()
        try:
            for table in PROBED:
                cols = [
                    r[0]
                    for r in cur.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                        "ORDER BY ordinal_position",
                        [table],
                    ).fetchall()
                ]
                reads = ", ".join(f'max(length(CAST("{c}" AS VARCHAR)))' for c in cols)
                cur.execute(f"SELECT count(*), {reads} FROM {table}").fetchall()
        except duckdb.Error as exc:
            raise unreadable(self.path, exc) from None

    def after_write(self) -> None:
        """Bring every kept Sort state up to date after an import
        (:func:`lifelong_core.store.state.after_write`): the kept lifelong state is the
        store's own, so it follows every write made through it."""
        _update_kept_state(self)

    def close(self) -> None:
        """Close the handle, then release its hold on the file (:mod:`.locking`); closing
        twice is harmless."""
        if self._con is not None:
            self._con.close()
            self._con = None
        if self._held is not None:
            self._held.release()
            self._held = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
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
