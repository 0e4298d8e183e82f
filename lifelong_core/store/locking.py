"""The writer rule: one lock on a store file, held for the whole of every write.

Every process that writes a store (an import, ``build-demo --force``, the synthetic
generator's ``--force``, the app's Data page, the Python API) takes the file's lock
*exclusively* before its first read of it and keeps it until its commit or its rename;
every process that reads one (a command, the app serving it from start-up on, whatever
its pages have viewed) holds it *shared* for as long as its handle is open. A writer is
therefore refused, naming the holder, while anything else has the file open, and a
reader while a writer has it.

Why a lock of its own rather than DuckDB's alone. DuckDB takes a POSIX record lock when
it opens the file, and POSIX record locks belong to the *process*: the first
``close()`` of *any* descriptor the process has on the file drops all of them, whatever
opened it (a size check that reads the header, a second handle closed, a probe of who
holds the file), and they are taken only once DuckDB itself opens the file. The lock here
is a BSD ``flock`` on a descriptor kept for that purpose: it belongs to that descriptor,
survives every other open and close, and is released only when the hold ends or the
process dies. Within one process the holds are counted on one descriptor per file, so a
server's readers and its one writer share it (the writer upgrades it to exclusive and
hands it back shared). DuckDB's own lock stays in force beside it for any program that
does not take this one; ``flock`` and POSIX locks do not see each other on Linux, so a
replacing build takes both.

A hold is on the file the path names when the hold is taken. A file renamed over the
path afterwards (a finished build) is a new file with no hold; a build therefore checks,
at the moment it replaces the path, that the path still names the file it holds
(:func:`check_still_held`).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from lifelong_core.errors import InputError, StoreLockedError

try:  # POSIX; elsewhere DuckDB's own lock is the only one
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


@dataclass
class _Held:
    """This process's descriptor on one file and what is held through it."""

    fd: int
    shared: int = 0
    exclusive: bool = False


# (device, inode) of a held file -> its descriptor; one per file in the process.
_HELD: dict[tuple[int, int], _Held] = {}
_HELD_LOCK = threading.Lock()


class Hold:
    """One hold on a store file (shared or exclusive); :meth:`release` ends it.

    Parameters
    ----------
    path : pathlib.Path
        The file, as the caller named it.
    identity : tuple of (int, int) or None
        The held file's (device, inode); None when nothing is held (the file did not
        exist, or the file system offers no lock).
    exclusive : bool
        Whether the hold is a writer's.
    """

    def __init__(self, path: Path, identity: tuple[int, int] | None, exclusive: bool) -> None:
        self.path = path
        self.identity = identity
        self.exclusive = exclusive
        self._released = False

    def release(self) -> None:
        """End the hold (the descriptor closes when this process holds the file no more);
        releasing twice is harmless."""
        if self._released:
            return
        self._released = True
        if self.identity is not None:
            _release(self.identity, self.exclusive)

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def file_identity(path: str | os.PathLike) -> tuple[int, int] | None:
    """The (device, inode) the path names now, or None when nothing is there.

    Parameters
    ----------
    path : str or os.PathLike
        A file path (links are followed).

    Returns
    -------
    tuple of (int, int) or None
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_dev, st.st_ino)


def check_regular(path: str | os.PathLike, what: str = "Store file") -> None:
    """Refuse a path that names a device, a pipe, a socket or a folder, before it is opened.

    Opening a pipe waits for a writer and reading a device such as ``/dev/zero`` never
    ends; neither is a store.

    Parameters
    ----------
    path : str or os.PathLike
        The path (links are followed).
    what : str
        How the sentence names it.

    Raises
    ------
    InputError
        If the path names anything but a regular file (a missing path passes: the caller
        says what a missing file means).
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise InputError(f"{what} {path} cannot be read ({exc.strerror}).") from None
    if not stat.S_ISREG(mode):
        kind = (
            "a directory" if stat.S_ISDIR(mode) else "not a regular file (a device, pipe or socket)"
        )
        raise InputError(f"{what} {path} is {kind}.")


def _open(path: Path) -> int:
    # O_NONBLOCK: opening a pipe must not wait for a writer (check_regular refuses it, but
    # the path could be swapped between the check and the open).
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"Store file {path} is not a regular file (a device, pipe or socket).")
    return fd


def hold(path: str | os.PathLike, *, exclusive: bool, doing: str = "write to") -> Hold:
    """Take the store file's lock, shared (a reader) or exclusive (a writer).

    Non-blocking: a conflicting holder in another process refuses at once, naming it. In
    this process holds are counted on one descriptor per file; a second exclusive hold is
    refused, an exclusive hold while this process reads the file upgrades its descriptor.

    Parameters
    ----------
    path : str or os.PathLike
        The store file. A path where nothing exists gives a hold of nothing (the caller
        creates the file; :func:`check_still_held` then checks nothing appeared there).
    exclusive : bool
        True for a writer (import, build, undo), False for a reader.
    doing : str
        What the holder does to the file, for the sentence (``"write to"``, ``"read"``,
        ``"replace"``).

    Returns
    -------
    Hold
        Release it (or use it as a context manager) when the write or read is over.

    Raises
    ------
    StoreLockedError
        When another process holds the file in a conflicting way, or, for an exclusive
        hold, when this process already has a writer on it.
    InputError
        When the path names something other than a regular file.
    """
    p = Path(path)
    check_regular(p)
    if fcntl is None:
        return Hold(p, None, exclusive)
    for _ in range(5):
        identity = file_identity(p)
        if identity is None:
            return Hold(p, None, exclusive)
        with _HELD_LOCK:
            held = _HELD.get(identity)
            if held is not None:
                _join(held, p, exclusive)
                return Hold(p, identity, exclusive)
            try:
                fd = _open(p)
            except FileNotFoundError:
                continue  # removed meanwhile: look again
            except InputError:
                raise
            except OSError as exc:
                raise InputError(f"Store file {p} cannot be opened ({exc.strerror}).") from None
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != identity:
                os.close(fd)  # the path was replaced between the look and the open
                continue
            try:
                fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise _refusal(p, identity, doing) from None
            except OSError:
                # A file system without flock (some network mounts): DuckDB's own lock is
                # all there is.
                os.close(fd)
                return Hold(p, None, exclusive)
            if file_identity(p) != identity:
                # Replaced after the lock was had (a build renamed its file into place):
                # the hold must be on what the path names now.
                os.close(fd)
                continue
            _HELD[identity] = _Held(fd, shared=0 if exclusive else 1, exclusive=exclusive)
            return Hold(p, identity, exclusive)
    raise StoreLockedError(
        f"Cannot {doing} store {p}: another process keeps replacing the file; try again."
    )


def _join(held: _Held, path: Path, exclusive: bool) -> None:
    """Add a hold of this process to the descriptor it already has on the file."""
    if not exclusive:
        held.shared += 1
        return
    if held.exclusive:
        raise StoreLockedError(
            f"Cannot write to store {path}: this process already has a writer open on it; close that one first."
        )
    assert fcntl is not None
    try:
        fcntl.flock(held.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        # A failed upgrade gives up the shared lock it had; this process still reads.
        with contextlib.suppress(OSError):
            fcntl.flock(held.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        st = os.fstat(held.fd)
        raise _refusal(path, (st.st_dev, st.st_ino), "write to") from None
    held.exclusive = True


def _release(identity: tuple[int, int], exclusive: bool) -> None:
    with _HELD_LOCK:
        held = _HELD.get(identity)
        if held is None:
            return
        if exclusive:
            held.exclusive = False
            if held.shared and fcntl is not None:
                # Back to what this process's readers hold. Never waiting (this runs under
                # _HELD_LOCK): should another process take the file in the instant of the
                # change, the readers keep DuckDB's own lock until their next hold.
                with contextlib.suppress(OSError):
                    fcntl.flock(held.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        else:
            held.shared = max(0, held.shared - 1)
        if not held.exclusive and held.shared == 0:
            os.close(held.fd)
            del _HELD[identity]


def check_still_held(h: Hold) -> None:
    """At the moment of replacing ``h.path``: refuse unless the path still names the held file.

    A build holds the file it replaces from start to end; this looks again at the moment
    of the rename, so a file that another process put at the path meanwhile (a store
    created where there was none, or renamed over the one held) is kept, not replaced.

    Parameters
    ----------
    h : Hold
        The exclusive hold taken when the build started.

    Raises
    ------
    InputError
        If the path names another file than the held one, or a file where there was none.
    """
    now = file_identity(h.path)
    if now != h.identity:
        what = "created" if h.identity is None else "replaced"
        raise InputError(
            f"store {h.path} was {what} by another process during the build; it is left as it is."
        )


_PROC_LOCKS = re.compile(
    r"^\d+:\s+(?:->\s+)?\w+\s+\w+\s+\w+\s+(?P<pid>-?\d+)\s+"
    r"(?P<major>[0-9a-f]+):(?P<minor>[0-9a-f]+):(?P<ino>\d+)\s",
    re.MULTILINE,
)


def holders(identity: tuple[int, int]) -> list[int]:
    """The other processes holding a lock on the file (Linux's ``/proc/locks``); empty
    where that cannot be read.

    Parameters
    ----------
    identity : tuple of (int, int)
        The file's (device, inode).

    Returns
    -------
    list of int
        Process ids, without this process's, in the order the kernel lists them.
    """
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return []
    dev, ino = identity
    found: list[int] = []
    for m in _PROC_LOCKS.finditer(text):
        pid = int(m.group("pid"))
        if (
            int(m.group("ino")) == ino
            and int(m.group("major"), 16) == os.major(dev)
            and int(m.group("minor"), 16) == os.minor(dev)
            and pid > 0
            and pid != os.getpid()
            and pid not in found
        ):
            found.append(pid)
    return found


def holder_text(identity: tuple[int, int] | None) -> str:
    """`` (process N)`` naming the first other holder of the file, or empty.

    Parameters
    ----------
    identity : tuple of (int, int) or None
        The file's (device, inode).

    Returns
    -------
    str
    """
    pids = holders(identity) if identity is not None else []
    return f" (process {pids[0]})" if pids else ""


def _refusal(path: Path, identity: tuple[int, int], doing: str) -> StoreLockedError:
    who = holder_text(identity)
    if doing == "read":
        return StoreLockedError(
            f"Cannot read store {path}: it is locked by another process{who} writing to it; "
            "wait for it to finish and try again."
        )
    if doing == "write to":
        return StoreLockedError(
            f"Cannot write to store {path}: it is locked by another process{who}; close the other "
            "writer (or, to write, every reader such as the app) and try again."
        )
    return StoreLockedError(
        f"Cannot {doing} store {path}: it is open in another process{who}; close that process "
        "(an import, a writer, or the app serving it) and try again."
    )
