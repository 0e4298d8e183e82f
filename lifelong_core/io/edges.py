"""Operating-system errors at the edges, turned into one sentence with the real cause.

Inputs are checked before they are read (:func:`check_input_file`); outputs are written to
a temporary file next to the target and renamed over it only when complete
(:func:`atomic_output`), so a full disk or a kill never leaves a partial output file.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from lifelong_core.errors import InputError

_CAUSES = {
    errno.ENOENT: "it does not exist",
    errno.EISDIR: "it is a directory",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EFBIG: "the file is too large for the file system",
    errno.EIO: "an input/output error",
    errno.ENAMETOOLONG: "the file name is too long",
}


def cause(exc: OSError) -> str:
    """The plain cause of an OS error (``"the disk is full"``), without the path.

    Parameters
    ----------
    exc : OSError
        The error raised by the operating system.

    Returns
    -------
    str
        A short phrase for the common ``errno`` values (missing file, directory, permission,
        full disk, quota, read-only file system, ...); else the system's own message, or
        the exception's class name when there is none.
    """
    found = None if exc.errno is None else _CAUSES.get(exc.errno)
    return found or exc.strerror or type(exc).__name__


def os_error(exc: OSError, path: str | os.PathLike[str], what: str, doing: str) -> InputError:
    """``Cannot <doing> <what> <path>: <cause>.`` as an InputError to raise.

    Parameters
    ----------
    exc : OSError
        The error raised by the operating system; its cause comes from :func:`cause`.
    path : str or os.PathLike
        The file the operation was on, shown as given.
    what : str
        What the file is to the user (``"--matrix file"``, ``"store"``).
    doing : str
        The verb of the operation (``"read"``, ``"write"``).

    Returns
    -------
    InputError
        The one-sentence error, for the caller to raise (``from None``, so the user sees
        no traceback).
    """
    return InputError(f"Cannot {doing} {what} {os.fspath(path)}: {cause(exc)}.")


def not_regular(mode: int) -> str | None:
    """What a file of this mode is when it is not a regular file a reader can read
    (``"a pipe, not a regular file"``), else None.

    Parameters
    ----------
    mode : int
        ``st_mode`` of the file.

    Returns
    -------
    str or None
    """
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "a pipe, not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    return "a device, not a regular file"


def check_regular_file(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a Path if it names an existing regular file (links followed).

    Checked before anything opens the file: a pipe waits forever for a writer and a device
    such as ``/dev/zero`` or ``/dev/urandom`` never ends, so neither is opened, and a link
    to one is refused the same way.

    Parameters
    ----------
    path : str or os.PathLike
        The input file.
    what : str
        What the file is to the user, usually its flag; it starts the message.

    Returns
    -------
    pathlib.Path
        ``path`` as a Path.

    Raises
    ------
    InputError
        If nothing is there, or it is a directory, a pipe, a socket or a device, or the
        operating system refuses to say (with its cause).
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} file {p} does not exist.") from None
    except OSError as exc:
        raise os_error(exc, p, f"{what} file", "read") from None
    kind = not_regular(st.st_mode)
    if kind is not None:
        raise InputError(f"{what} path {p} is {kind}.")
    return p


def check_input_file(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a Path if it is an existing, readable, non-empty regular file.

    Checked before a reader opens the file, so the user reads one sentence rather than the
    error of whichever library opens it first (:func:`check_regular_file`: never a pipe
    or a device).

    Parameters
    ----------
    path : str or os.PathLike
        The input file.
    what : str
        What the file is to the user, usually its flag (``"--sample-domains"``, ``"input"``);
        it starts the message.

    Returns
    -------
    pathlib.Path
        ``path``, unchanged but as a Path.

    Raises
    ------
    InputError
        If the file does not exist, is a directory, a pipe, a socket or a device, cannot
        be read (permission or another OS error, with its cause) or is empty.
    """
    p = check_regular_file(path, what)
    if not os.access(p, os.R_OK):
        raise InputError(f"Cannot read {what} file {p}: permission denied.")
    if p.stat().st_size == 0:
        raise InputError(f"{what} file {p} is empty.")
    return p


def open_input(path: str | os.PathLike[str], what: str) -> BinaryIO:
    """Open a user's file for reading, refusing anything but a regular file.

    The one way a reader opens a file by name: :func:`check_regular_file` first, then the
    descriptor itself is checked (opened without waiting, so a pipe put at the path in the
    meantime is refused too instead of blocking).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str
        What the file is to the user; it starts the message.

    Returns
    -------
    BinaryIO
        The file, open for buffered binary reading (the caller closes it).

    Raises
    ------
    InputError
        As :func:`check_regular_file`, or when the file cannot be opened (with the cause).
    """
    p = check_regular_file(path, what)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise os_error(exc, p, f"{what} file", "read") from None
    try:
        kind = not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise InputError(f"{what} path {p} is {kind}.")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_output_path(path: str | os.PathLike[str], what: str) -> Path:
    """Refuse an output path that cannot be written, before any work is done.

    Checked before a long computation, so it does not fail at its last step: the folder
    must exist and take a new file (a probe file is created and removed there, since
    outputs are written beside the target and renamed over it; ``/proc`` and read-only
    mounts refuse it), and an existing target must be a regular file (never a device or a
    pipe, which a rename would replace).

    Parameters
    ----------
    path : str or os.PathLike
        The file to be written; it need not exist (an existing file is replaced).
    what : str
        What the output is to the user, usually its flag (``"--long"``, ``"--out"``).

    Returns
    -------
    pathlib.Path
        ``path`` as a Path.

    Raises
    ------
    InputError
        If ``path`` is a directory or another non-regular file, or its folder does not
        exist, is not a folder or does not take new files.
    """
    import tempfile

    p = Path(path)
    if p.is_dir():
        raise InputError(f"{what} output {p} is a directory; give a file name.")
    if p.exists():
        kind = not_regular(p.stat().st_mode)
        if kind is not None:
            raise InputError(f"{what} output {p} is {kind}; give the name of a file.")
    parent = p.parent
    if not parent.exists():
        raise InputError(f"Cannot write {what} output {p}: folder {parent} does not exist.")
    if not parent.is_dir():
        raise InputError(f"Cannot write {what} output {p}: {parent} is not a folder.")
    if not os.access(parent, os.W_OK):
        raise InputError(f"Cannot write {what} output {p}: permission denied in folder {parent}.")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{p.name[:40]}.", suffix=".probe"):
            pass
    except OSError as exc:
        why = (exc.strerror or type(exc).__name__).lower()
        raise InputError(
            f"Cannot write {what} output {p}: folder {parent} does not take new files ({why})."
        ) from None
    return p


@contextmanager
def atomic_output(path: str | os.PathLike[str], what: str, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success.

    On any failure the temporary file is removed and ``path`` is left as it was; OS
    errors become one sentence.

    Parameters
    ----------
    path : str or os.PathLike
        The output file, checked first with :func:`check_output_path`.
    what : str
        What the output is to the user, for error messages.
    suffix : str, default ""
        Kept at the end of the temporary name for writers that add an extension
        (``np.save`` appends ``.npy`` to a name without it).

    Yields
    ------
    pathlib.Path
        A hidden temporary file in the folder of ``path`` (same file system, so the final
        rename is atomic); the caller writes it completely inside the ``with`` block.

    Raises
    ------
    InputError
        If the output path is refused (:func:`check_output_path`) or an OS error occurs
        while writing or renaming (full disk, permission, ...). Any other exception from
        the block propagates unchanged, with ``path`` untouched.

    Examples
    --------
    >>> with atomic_output(out, "--out", suffix=".npy") as tmp:  # doctest: +SKIP
    ...     np.save(tmp, arr)
    """
    p = check_output_path(path, what)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp{suffix}")
    try:
        yield tmp
        os.replace(tmp, p)
    except OSError as exc:
        raise os_error(exc, p, f"{what} output", "write") from None
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            pass  # the original error (if any) is the one worth reporting


def file_checksum(*paths: str | os.PathLike[str]) -> str:
    """sha256 over the bytes of the source file(s) of an import, recorded in the log.

    Parameters
    ----------
    *paths : str or os.PathLike
        The files, hashed in the order given; a separator between them keeps two files
        from hashing like their concatenation into one.

    Returns
    -------
    str
        ``"sha256:"`` followed by the hexadecimal digest.

    Raises
    ------
    InputError
        If a path is not a regular file (:func:`open_input`).
    OSError
        If a file cannot be read (callers have checked their inputs with
        :func:`check_input_file` first).
    """
    h = hashlib.sha256()
    for i, path in enumerate(paths):
        if i:
            h.update(b"\x00next file\x00")
        with open_input(path, "input") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return "sha256:" + h.hexdigest()
