"""What a damaged store file looks like, for the sentence that explains a failed read.

No DuckDB calls here: the store, its maintenance and the app's backstops all explain a
read DuckDB could not make in the same words.
"""

from __future__ import annotations

import struct
from pathlib import Path

from lifelong_core.errors import InputError

_HEADER = 4096  # DuckDB's file starts with three 4 KiB headers, then its blocks


def truncated_size(path: Path) -> int | None:
    """The size the file's DuckDB header describes, when the file is shorter than that.

    Only an explanation for a file DuckDB failed to read: a sound store can be a block or
    more shorter than its header says (DuckDB trims free blocks at the end of the file),
    so a short file alone proves nothing. ``None`` when the file is as long as its header
    says or the header is not one this reads.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(3 * _HEADER)
        size = path.stat().st_size
    except OSError:
        return None
    if len(head) < 3 * _HEADER or head[8:12] != b"DUCK":
        return None
    best = None
    for off in (_HEADER, 2 * _HEADER):  # two database headers; the newer one is current
        iteration, _, _, block_count, block_size = struct.unpack_from("<5Q", head, off + 8)
        if not (1 << 12 <= block_size <= 1 << 24) or block_size & (block_size - 1):
            continue
        if best is None or iteration > best[0]:
            best = (iteration, 3 * _HEADER + block_count * block_size)
    if best is None or size >= best[1]:
        return None
    return best[1]


def unreadable(path: Path, exc: BaseException) -> InputError:
    """The sentence for a store file DuckDB failed to read, with what the file's size says."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    want = truncated_size(Path(path))
    why = (
        f"; the file holds {Path(path).stat().st_size:,} bytes, less than the {want:,} its header "
        "describes, so it was probably cut short"
        if want is not None
        else ""
    )
    return InputError(
        f"Store {path} cannot be read (DuckDB: {first}){why}; restore it from a backup or rebuild "
        "it from its sources (`check --store` verifies a store)."
    )
