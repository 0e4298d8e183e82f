"""Operating-system errors at the edges, turned into one sentence with the real cause.

Inputs are checked before they are read (:func:`check_input_file`); outputs are written to
a temporary file next to the target and renamed over it only when complete
(:func:`atomic_output`), so a full disk or a kill never leaves a partial output file.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
    """The plain cause of an OS error (``"the disk is full"``), without the path."""
    found = None if exc.errno is None else _CAUSES.get(exc.errno)
    return found or exc.strerror or type(exc).__name__


def os_error(exc: OSError, path, what: str, doing: str) -> InputError:
    """``Cannot <doing> <what> <path>: <cause>.`` as an InputError to raise."""
    return InputError(f"Cannot {doing} {what} {os.fspath(path)}: {cause(exc)}.")


def check_input_file(path, what: str) -> Path:
    """``path`` as a Path if it is an existing, readable, non-empty regular file."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} file {p} does not exist.") from None
    except OSError as exc:
        raise os_error(exc, p, f"{what} file", "read") from None
    if p.is_dir():
        raise InputError(f"{what} path {p} is a directory, not a file.")
    if not os.access(p, os.R_OK):
        raise InputError(f"Cannot read {what} file {p}: permission denied.")
    if st.st_size == 0:
        raise InputError(f"{what} file {p} is empty.")
    return p


def check_output_path(path, what: str) -> Path:
    """Refuse an output path whose folder is missing or which names a directory."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{what} output {p} is a directory; give a file name.")
    parent = p.parent
    if not parent.exists():
        raise InputError(f"Cannot write {what} output {p}: folder {parent} does not exist.")
    if not parent.is_dir():
        raise InputError(f"Cannot write {what} output {p}: {parent} is not a folder.")
    if not os.access(parent, os.W_OK):
        raise InputError(f"Cannot write {what} output {p}: permission denied in folder {parent}.")
    return p


@contextmanager
def atomic_output(path, what: str, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success.

    On any failure the temporary file is removed and ``path`` is left as it was; OS
    errors become one sentence. ``suffix`` is kept on the temporary name for writers
    that add an extension (``np.save`` appends ``.npy``).
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
    """sha256 over the bytes of the source file(s) of an import, recorded in the log."""
    h = hashlib.sha256()
    for i, path in enumerate(paths):
        if i:
            h.update(b"\x00next file\x00")
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return "sha256:" + h.hexdigest()
