"""Text and compressed inputs read under the size limits of :mod:`lifelong_core.io.limits`.

Every reader of a user's text file (CSV tables, JSON Lines, id and index lists, JSON
documents) and of a compressed one (``.gz``, zip archives) goes through here, so a line
longer than the line limit, a file unpacking to more than the unpacked limit, or JSON
nested deeper than the nesting limit, is refused while it is read, with one sentence
naming the file, the line and the limit; memory never holds more than one limit's worth
before the refusal. Files are opened only when they are regular files
(:func:`lifelong_core.io.edges.open_input`: never a pipe or a device), and a checksum of
a file is taken from the bytes as they are read, so the limits apply to it too.
:func:`extract_zip` is the one way an archive is unpacked, by the command line and the app
alike.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hashlib import _Hash as Hash

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.io.edges import open_input, os_error
from lifelong_core.io.limits import (
    count_limit,
    count_rule,
    json_depth_rule,
    json_too_deep,
    size_limit,
    size_rule,
)

CHUNK = 1 << 20


class _LineGuard:
    """Tracks line lengths across chunks of a byte stream; refuses an over-long line."""

    def __init__(self, what: str) -> None:
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


class _Hashing(io.RawIOBase):
    """A file read through a digest: every byte read updates it (one pass for both)."""

    def __init__(self, fh: Any, digest: Hash) -> None:
        self._fh = fh
        self._digest = digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._fh.readinto(buffer)
        if n:
            self._digest.update(memoryview(buffer)[:n])
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def _open_binary(path: Path, what: str, digest: Hash | None = None) -> Any:
    fh = open_input(path, what)
    if digest is not None:
        fh = io.BufferedReader(_Hashing(fh, digest))
    if path.name.lower().endswith(".gz"):
        return gzip.GzipFile(fileobj=fh, mode="rb")
    return fh


def _read_chunks(fh: Any, path: Path, what: str, gz: bool) -> Iterator[bytes]:
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


def read_text_bytes(source: str | os.PathLike[str] | bytes | IO[bytes], what: str) -> bytes:
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


def read_text(
    source: str | os.PathLike[str] | bytes | IO[bytes], what: str, encoding: str = "utf-8-sig"
) -> str:
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


def iter_lines(
    path: str | os.PathLike[str], what: str, digest: Hash | None = None
) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of a text file (gzip when it ends in ``.gz``), streamed:
    a line longer than the line limit, or a gzip file unpacking past the unpacked limit,
    is refused as it is read, never held.

    Parameters
    ----------
    path : str or Path
        A regular file (a pipe or a device is refused before it is opened).
    what : str
        How messages name the file.
    digest : hashlib hash, optional
        Updated with the file's bytes as stored (compressed for ``.gz``) as they are read,
        so a checksum costs no second pass and no read past a refusal.

    Yields
    ------
    tuple of (int, bytes)
        The line number, from 1, and the line with its newline.

    Raises
    ------
    InputError
        At the first line over the line limit, when a gzip file unpacks past the unpacked
        limit or is corrupt, or when the file cannot be read.
    """
    path = Path(path)
    gz = path.name.lower().endswith(".gz")
    limit = size_limit("line")
    total = 0
    with _open_binary(path, what, digest) as fh:
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


def check_json_size(path: str | os.PathLike[str], what: str) -> None:
    """Refuse a JSON document larger than the JSON limit before anything reads it whole."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise os_error(exc, path, what, "read") from None
    if size > size_limit("json"):
        raise InputError(f"{what} is {size:,} bytes, more than {size_rule('json')}.")


def read_json_bytes(path: str | os.PathLike[str], what: str) -> bytes:
    """A JSON document read whole, refused first when the file is larger than the JSON
    limit (and never more than the limit read, whatever the file claims to hold)."""
    path = Path(path)
    limit = size_limit("json")
    with open_input(path, what) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise os_error(exc, path, what, "read") from None
    if len(data) > limit:
        raise InputError(f"{what} is more than {size_rule('json')}.")
    return data


def load_json(data: bytes | str, what: str) -> Any:
    """``json.loads(data)``, with JSON nested too deeply refused in one sentence.

    Python's parser raises a ``RecursionError`` on a few hundred thousand ``[``; here that
    and anything nested more than :data:`lifelong_core.io.limits.MAX_JSON_DEPTH` levels
    is one sentence (later readers, writers and pages never meet such a value).

    Parameters
    ----------
    data : bytes or str
        The JSON text.
    what : str
        Where it comes from, starting the sentence.

    Returns
    -------
    object
        The parsed value.

    Raises
    ------
    InputError
        When the value nests arrays or objects too deeply.
    json.JSONDecodeError, UnicodeDecodeError
        When ``data`` is not JSON (callers say what that means for their file).
    """
    try:
        value = json.loads(data)
    except RecursionError:
        raise InputError(json_depth_rule(what)) from None
    if json_too_deep(value):
        raise InputError(json_depth_rule(what))
    return value


def check_archive(path: str | os.PathLike[str], what: str) -> list[zipfile.ZipInfo]:
    """The members of a zip archive (a zip upload, ``.npz``, Inspect ``.eval``), refused
    when they unpack to more than the unpacked limit in all, or are more than the file
    count limit. Returns the members.

    Sizes are the ones the archive declares; Python's zip reader stops a member at its
    declared size, so a member cannot unpack to more than it declares.

    Parameters
    ----------
    path : str or Path
        The archive (a regular file).
    what : str
        How messages name it.

    Returns
    -------
    list of zipfile.ZipInfo

    Raises
    ------
    InputError
        If the file is not a readable zip archive or its members pass a limit.
    """
    path = Path(path)
    with open_input(path, what) as fh:
        try:
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
        except (zipfile.BadZipFile, zlib.error, EOFError, ValueError):
            raise InputError(f"{what} is not a readable zip archive.") from None
        except OSError as exc:
            raise os_error(exc, path, what, "read") from None
    if len(infos) > count_limit("files"):
        raise InputError(f"{what} holds {len(infos):,} files, more than {count_rule('files')}.")
    _unpacked_guard(sum(i.file_size for i in infos), what)
    return infos


def _member_path(info: zipfile.ZipInfo) -> PurePosixPath | None:
    """The member's path under the destination, or None for a member that names none."""
    rel = PurePosixPath(info.filename.replace("\\", "/"))
    parts = [p for p in rel.parts if p not in ("", ".")]
    return PurePosixPath(*parts) if parts else None


def extract_zip(
    archive: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    limit: int | None = None,
    limit_rule: str | None = None,
) -> Path:
    """Unpack ``archive`` under ``dest`` and return ``dest``: the one way an archive is
    unpacked (``import --lm-eval x.zip``, ``estimate --lm-eval x.zip``, the app's uploads).

    Every member is checked before anything is written: a member that would land outside
    ``dest`` (``../`` or an absolute path), more members than the file count limit, and an
    archive that unpacks to more than the unpacked limit (:mod:`lifelong_core.io.limits`:
    a "zip bomb" must not fill the disk) or than ``limit`` are refused; the bytes written
    are counted again as they are written.

    Parameters
    ----------
    archive : str or Path
        The zip file; messages name it by its file name.
    dest : str or Path
        The folder to unpack into (created if missing).
    limit : int, optional
        A smaller budget in bytes for what is unpacked (the app's upload budget).
    limit_rule : str, optional
        How the sentence names ``limit`` (default: "the limit of N MiB").

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    InputError
        If the archive is not a readable zip file, unpacks past a limit, holds a path
        outside ``dest``, or could not be unpacked (an OS error or a corrupt member;
        members already written may remain in ``dest``).
    """
    archive, dest = Path(archive), Path(dest)
    infos = check_archive(archive, archive.name)
    most = size_limit("unpacked") if limit is None else min(limit, size_limit("unpacked"))
    if limit is not None and most == limit:
        rule = limit_rule or f"the limit of {most / (1 << 20):,.0f} MiB"
    else:
        rule = size_rule("unpacked")
    if sum(i.file_size for i in infos) > most:
        raise InputError(f"{archive.name} unpacks to more than {rule}.")
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    targets = []
    for info in infos:
        rel = _member_path(info)
        target = (dest / rel).resolve() if rel is not None else root
        if rel is None or rel.is_absolute() or (root != target and root not in target.parents):
            raise InputError(
                f"{archive.name} holds {info.filename!r}, a path outside the archive; it is not unpacked."
            )
        targets.append((info, target))
    written = 0
    try:
        with open_input(archive, archive.name) as fh, zipfile.ZipFile(fh) as zf:
            for info, target in targets:
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    while chunk := src.read(CHUNK):
                        written += len(chunk)
                        if written > most:
                            raise InputError(f"{archive.name} unpacks to more than {rule}.")
                        out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise InputError(f"{archive.name} could not be unpacked ({exc}).") from None
    except OSError as exc:
        raise os_error(exc, archive.name, "archive", "unpack") from None
    return dest
