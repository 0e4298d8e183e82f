"""Text and compressed inputs read under the size limits of :mod:`lifelong_core.io.limits`.

Every reader of a user's text file (CSV tables, JSON Lines, id and index lists, JSON
documents) and of a compressed one (``.gz``, zip archives) goes through here, so a line
longer than the line limit, or a file unpacking to more than the unpacked limit, is
refused while it is read, with one sentence naming the file, the line and the limit;
memory never holds more than one limit's worth before the refusal.
"""

from __future__ import annotations

import gzip
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.io.edges import os_error
from lifelong_core.io.limits import size_limit, size_rule

CHUNK = 1 << 20


class _LineGuard:
    """Tracks line lengths across chunks of a byte stream; refuses an over-long line."""

    def __init__(self, what: str):
        self.what = what
        self.limit = size_limit("line")
        self.run = 0  # bytes of the line in progress
        self.lines = 0  # complete lines so far

    def feed(self, chunk: bytes) -> None:
        nl = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
        if len(nl) == 0:
            self.run += len(chunk)
            if self.run > self.limit:
                self._refuse(self.lines + 1)
            return
        first = self.run + int(nl[0])
        if first > self.limit:
            self._refuse(self.lines + 1)
        if len(nl) > 1:
            inner = np.diff(nl) - 1
            if int(inner.max()) > self.limit:
                self._refuse(self.lines + 2 + int(np.argmax(inner > self.limit)))
        self.lines += len(nl)
        self.run = len(chunk) - int(nl[-1]) - 1
        if self.run > self.limit:
            self._refuse(self.lines + 1)

    def _refuse(self, line: int) -> None:
        raise InputError(
            f"{self.what} line {line:,} is longer than {size_rule('line')}; is it the right file?"
        )


def _unpacked_guard(total: int, what: str) -> None:
    if total > size_limit("unpacked"):
        raise InputError(f"{what} unpacks to more than {size_rule('unpacked')}.")


def _open_binary(path: Path, what: str):
    try:
        if path.name.lower().endswith(".gz"):
            return gzip.open(path, "rb")
        return open(path, "rb")
    except OSError as exc:
        raise os_error(exc, path, what, "read") from None


def _read_chunks(fh, path: Path, what: str, gz: bool) -> Iterator[bytes]:
    total = 0
    try:
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                return
            total += len(chunk)
            if gz:
                _unpacked_guard(total, what)
            yield chunk
    except (EOFError, gzip.BadGzipFile, zlib.error):
        raise InputError(f"{what} is truncated or not a valid gzip file.") from None
    except OSError as exc:
        raise os_error(exc, path, what, "read") from None


def read_text_bytes(source, what: str) -> bytes:
    """The whole of a text input as bytes: a path (gzip when it ends in ``.gz``), bytes,
    or a file-like upload. Refused as soon as a line passes the line limit (and a gzip
    file as soon as it unpacks past the unpacked limit)."""
    guard = _LineGuard(what)
    if isinstance(source, (bytes, bytearray, memoryview)) or hasattr(source, "read"):
        data = source.read() if hasattr(source, "read") else source
        data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        for start in range(0, len(data), CHUNK):
            guard.feed(data[start : start + CHUNK])
        return data
    path = Path(source)
    gz = path.name.lower().endswith(".gz")
    parts = []
    with _open_binary(path, what) as fh:
        for chunk in _read_chunks(fh, path, what, gz):
            guard.feed(chunk)
            parts.append(chunk)
    return b"".join(parts)


def read_text(source, what: str, encoding: str = "utf-8-sig") -> str:
    """:func:`read_text_bytes` decoded; text that is not UTF-8 is one sentence.

    Parameters
    ----------
    source : str, Path, bytes or file-like
        A path (gzip when its name ends in ``.gz``), the bytes themselves, or an upload or
        open file (its ``read`` may return bytes or str).
    what : str
        How messages name the input (``"--long file runs.csv"``).
    encoding : str, default "utf-8-sig"
        The codec; the default also drops a leading byte-order mark (as Excel writes).

    Returns
    -------
    str
        The whole text.

    Raises
    ------
    InputError
        If the bytes are not valid in ``encoding``, a line is longer than the line limit,
        a gzip file is truncated, corrupt or unpacks past the unpacked limit, or the file
        cannot be read (with the OS cause).
    """
    try:
        return read_text_bytes(source, what).decode(encoding)
    except UnicodeDecodeError:
        raise InputError(f"{what} is not UTF-8 text.") from None


def iter_lines(path, what: str) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of a text file (gzip when it ends in ``.gz``), streamed:
    a line longer than the line limit, or a gzip file unpacking past the unpacked limit,
    is refused as it is read, never held."""
    path = Path(path)
    gz = path.name.lower().endswith(".gz")
    limit = size_limit("line")
    total = 0
    with _open_binary(path, what) as fh:
        lineno = 0
        try:
            while True:
                line = fh.readline(limit + 2)  # the line, its newline and one byte more
                if not line:
                    return
                lineno += 1
                total += len(line)
                if gz:
                    _unpacked_guard(total, what)
                if len(line.rstrip(b"\r\n")) > limit:
                    raise InputError(
                        f"{what} line {lineno:,} is longer than {size_rule('line')}; is it the "
                        "right file?"
                    )
                yield lineno, line
        except (EOFError, gzip.BadGzipFile, zlib.error):
            raise InputError(f"{what} is truncated or not a valid gzip file.") from None
        except OSError as exc:
            raise os_error(exc, path, what, "read") from None


def check_json_size(path, what: str) -> None:
    """Refuse a JSON document larger than the JSON limit before anything reads it whole."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise os_error(exc, path, what, "read") from None
    if size > size_limit("json"):
        raise InputError(f"{what} is {size:,} bytes, more than {size_rule('json')}.")


def read_json_bytes(path, what: str) -> bytes:
    """A JSON document read whole, refused first when the file is larger than the JSON limit."""
    path = Path(path)
    check_json_size(path, what)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise os_error(exc, path, what, "read") from None


def check_archive(path, what: str) -> list[zipfile.ZipInfo]:
    """The members of a zip archive (a zip upload, ``.npz``, Inspect ``.eval``), refused
    when they unpack to more than the unpacked limit in all. Returns the members.

    Sizes are the ones the archive declares; Python's zip reader stops a member at its
    declared size, so a member cannot unpack to more than it declares.
    """
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, zlib.error, EOFError):
        raise InputError(f"{what} is not a readable zip archive.") from None
    except OSError as exc:
        raise os_error(exc, path, what, "read") from None
    _unpacked_guard(sum(i.file_size for i in infos), what)
    return infos


def extract_zip(archive, dest) -> Path:
    """Unpack ``archive`` under ``dest`` and return ``dest``.

    Every member is checked before anything is written: a member that would land outside
    ``dest`` (``../`` or an absolute path) and an archive that unpacks to more than the
    unpacked limit (:mod:`lifelong_core.io.limits`: a "zip bomb" must not fill the disk)
    are refused.

    Parameters
    ----------
    archive : str or Path
        The zip file; messages name it by its file name.
    dest : str or Path
        The folder to unpack into (created if missing).

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    InputError
        If the archive is not a readable zip file, unpacks past the unpacked limit, holds a
        path outside ``dest``, or could not be unpacked (an OS error or a corrupt member;
        members already written may remain in ``dest``).
    """
    archive, dest = Path(archive), Path(dest)
    infos = check_archive(archive, archive.name)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError):
        raise InputError(f"{archive.name} is not a readable zip archive.") from None
    with zf:
        root = dest.resolve()
        for info in infos:
            target = (dest / info.filename).resolve()
            if root != target and root not in target.parents:
                raise InputError(
                    f"{archive.name} holds {info.filename!r}, a path outside the archive; it is not unpacked."
                )
        try:
            zf.extractall(dest)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise InputError(f"{archive.name} could not be unpacked ({exc}).") from None
    return dest
