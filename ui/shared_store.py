"""The app's one store handle, shared by every session, and the one way the app writes.

DuckDB lets a process write a file only when it holds no other handle on it, so a write
from the app must close the read-only handle that every session reads through. Closing
it under a session that is reading gave "Connection already closed!" there and
"connection is busy" in the writer. Here every read goes through :class:`SharedStore`,
which holds a read slot of a readers-writer gate for the length of one store call and
always calls the *current* handle; :func:`write` waits until no call is running, keeps
new ones waiting, closes the handle, writes with a short-lived writer, opens a fresh
read-only handle and lets the readers go on. Sessions never see a closed handle.

Writes are on when the server listens on loopback only (the default, see
``.streamlit/config.toml``) and off otherwise unless ``LBE_APP_WRITES=1`` is set, so a
server reachable from a network cannot be written to by whoever reaches it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lifelong_core.errors import InputError

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Gate:
    """Many readers or one writer; a waiting writer keeps new readers out (no starvation)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting = 0

    def acquire_read(self) -> None:
        with self._cond:
            while self._writer or self._waiting:
                self._cond.wait()
            self._readers += 1

    def release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    def acquire_write(self) -> None:
        with self._cond:
            self._waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._writer = True

    def release_write(self) -> None:
        with self._cond:
            self._writer = False
            self._cond.notify_all()


_GATE = _Gate()
_HANDLES: dict[str, tuple[float, Any]] = {}  # path -> (mtime when opened, read-only Store)
_HANDLES_LOCK = threading.Lock()


MEMORY_ENV = "LBE_APP_DUCKDB_MEMORY"


def app_memory_limit() -> str:
    """DuckDB's memory cap for the app's shared read handle: ``LBE_APP_DUCKDB_MEMORY`` (e.g.
    ``4GB``), else 2GB (the server's whole budget at paper scale is 4 GB)."""
    return os.environ.get(MEMORY_ENV, "").strip() or "2GB"


def _current(path: Path):
    """The read-only handle of ``path``, reopened when the file changed on disk."""
    from lifelong_core.store import Store

    key = str(path)
    mtime = path.stat().st_mtime
    with _HANDLES_LOCK:
        held = _HANDLES.get(key)
        if held is not None and held[0] == mtime:
            return held[1]
        # Another process rebuilt or grew the store: a fresh handle sees its content. The
        # old one is closed only when no call is running on it (we hold a read slot, and
        # other readers may too), so it is kept until the next write closes all handles.
        store = Store.open(path, read_only=True)
        try:
            # A damaged file may open and fail only when a lost page is read, on any page;
            # the tables every page reads first are read once per version of the file, so
            # such a file stops every page at its first read with one sentence.
            store.probe()
            store.limit_memory(app_memory_limit())
        except BaseException:
            store.close()
            raise
        if held is not None:
            _RETIRED.append(held[1])
        _HANDLES[key] = (mtime, store)
        return store


_RETIRED: list = []


def _close_all() -> None:
    """Close every handle (called with the write gate held: no call is running)."""
    with _HANDLES_LOCK:
        for _, store in _HANDLES.values():
            store.close()
        for store in _RETIRED:
            store.close()
        _HANDLES.clear()
        _RETIRED.clear()


class SharedStore:
    """Proxy of the read-only :class:`~lifelong_core.store.Store` of ``path`` for the app.

    Each method call runs under a read slot on the current handle, so a write in another
    session can neither close the handle during the call nor leave this browser session with a
    closed one afterwards. Attributes (``n_models``, ``path``) are read the same way.
    """

    def __init__(self, path: Path):
        self._path = Path(path)

    def __getattr__(self, name: str):
        _GATE.acquire_read()
        try:
            value = getattr(_current(self._path), name)
        except Exception as exc:
            raise _one_sentence(exc, self._path) from None
        finally:
            _GATE.release_read()
        if not callable(value):
            return value

        def call(*args, **kwargs):
            _GATE.acquire_read()
            try:
                out = getattr(_current(self._path), name)(*args, **kwargs)
            except Exception as exc:
                raise _one_sentence(exc, self._path) from None
            finally:
                _GATE.release_read()
            # The store's own modules read through a cursor (store.cursor().execute(...));
            # its reads fail the same way and get the same sentence.
            return _GuardedCursor(out, self._path) if name == "cursor" else out

        return call


class _GuardedCursor:
    """A DuckDB cursor whose calls turn a read of a damaged file into one sentence."""

    def __init__(self, cursor, path: Path):
        self._cursor = cursor
        self._path = path

    def __getattr__(self, name: str):
        value = getattr(self._cursor, name)
        if not callable(value):
            return value

        def call(*args, **kwargs):
            try:
                out = value(*args, **kwargs)
            except Exception as exc:
                raise _one_sentence(exc, self._path) from None
            # execute() returns the cursor itself, for chained fetches.
            return self if out is self._cursor else out

        return call


def _one_sentence(exc: Exception, path: Path) -> Exception:
    """A damaged page of the file fails when it is read, at open or in any call: one
    sentence (an InputError), not a traceback. Anything else is re-raised as it is."""
    if isinstance(exc, InputError):
        return exc
    from lifelong_core.store.maintenance import store_error_sentence

    sentence = store_error_sentence(exc, path)
    return exc if sentence is None else InputError(sentence)


# The server's shared hold on the store it serves (hold_served_store), for its lifetime.
_SERVED: list = []


def hold_served_store(path: Path) -> None:
    """Hold the served store shared from start-up until the server ends.

    A server that has not yet shown a page has no handle on its store, yet serves it: the
    hold makes ``build-demo --force`` and imports from other processes refuse, naming the
    server, before any page is viewed, as they do afterwards. The app's own writes
    upgrade this process's hold (``lifelong_core.store.locking``).

    Parameters
    ----------
    path : pathlib.Path
        The served store; nothing is held when it does not exist yet.

    Raises
    ------
    InputError
        When another process is writing the store (``StoreLockedError``) or the path is not
        a regular file.
    """
    from lifelong_core.store import hold

    _SERVED.append(hold(path, exclusive=False, doing="read"))


def writes_enabled(address: str | None) -> tuple[bool, str]:
    """Whether the app may write, and why not: on loopback yes, elsewhere only if asked."""
    flag = os.environ.get("LBE_APP_WRITES", "").strip().lower()
    if flag in ("0", "false", "no", "off"):
        return False, "Writing to the store from the app is turned off (LBE_APP_WRITES=0)."
    if flag in ("1", "true", "yes", "on"):
        return True, ""
    if (address or "").strip() in LOOPBACK:
        return True, ""
    return False, (
        f"Writing to the store from the app is off because the server listens on {address or 'every address'} "
        "(not only this computer); restart it with LBE_APP_WRITES=1 to allow writes from anyone who can reach it."
    )


def write(path: Path, fn: Callable, address: str | None) -> Any:
    """Run ``fn(writer)`` on a short-lived writer of ``path`` without disturbing readers.

    ``fn`` must only use the writer it is given (a read through :class:`SharedStore`
    inside it would wait for the write to end). Raises ``InputError`` when writes are off,
    when another process holds the file (``StoreLockedError``) or when ``fn`` refuses the
    data; the store is then unchanged.
    """
    from lifelong_core.store import Store

    ok, why = writes_enabled(address)
    if not ok:
        raise InputError(why)
    from lifelong_core.store.maintenance import check_sound

    _GATE.acquire_write()
    try:
        _close_all()
        with Store.open(path, read_only=False) as writer:
            check_sound(writer)  # imports refuse a store that fails its integrity check
            return fn(writer)
    finally:
        _GATE.release_write()
