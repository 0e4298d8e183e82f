"""Packed-bit helpers for the store's block layout (no DuckDB here).

Bits are packed with ``np.packbits(..., axis=1, bitorder="little")``: sample ``j`` of a
block lives in byte ``j // 8``, bit ``j % 8`` (least significant first). Padding bits past
the block's end are always zero, which lets blocks be OR-ed into a larger packed row.
"""

from __future__ import annotations

import numpy as np


def pack_rows(dense: np.ndarray) -> np.ndarray:
    """(rows, n) 0/1 or bool -> (rows, ceil(n / 8)) uint8, little bit order."""
    # packbits reads any nonzero as 1, so validated uint8 needs no bool copy.
    if dense.dtype not in (np.uint8, np.bool_):
        dense = np.asarray(dense, dtype=bool)
    return np.packbits(dense, axis=1, bitorder="little")


def unpack_rows(packed: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`pack_rows`: (rows, nbytes) uint8 -> (rows, n) uint8 0/1."""
    return np.unpackbits(packed, axis=1, count=n, bitorder="little")


def or_into(out: np.ndarray, packed: np.ndarray, start: int) -> None:
    """OR a block's packed rows into ``out`` (packed rows of the whole sample axis).

    ``start`` is the block's first sample index. Blocks need not start on a byte boundary
    (samples are appended in whatever batch sizes users import); a misaligned block is
    shifted across byte pairs instead of being unpacked, so this stays byte-speed.
    """
    shift = start % 8
    first = start // 8
    nbytes = packed.shape[1]
    width = out.shape[1]
    if shift == 0:
        stop = min(first + nbytes, width)
        out[:, first:stop] |= packed[:, : stop - first]
        return
    wide = packed.astype(np.uint16) << shift
    low = (wide & 0xFF).astype(np.uint8)
    high = (wide >> 8).astype(np.uint8)
    stop = min(first + nbytes, width)
    out[:, first:stop] |= low[:, : stop - first]
    stop = min(first + 1 + nbytes, width)
    if stop > first + 1:
        out[:, first + 1 : stop] |= high[:, : stop - first - 1]


def rows_from_binary(array, nbytes: int) -> np.ndarray:
    """A pyarrow Binary array whose values all have ``nbytes`` bytes -> (len, nbytes) uint8.

    Reads the Arrow data buffer directly (no per-row Python objects).
    """
    n = len(array)
    if n == 0:
        return np.zeros((0, nbytes), dtype=np.uint8)
    _, offsets_buf, data_buf = array.buffers()
    offset_dtype = np.int64 if str(array.type) == "large_binary" else np.int32
    offs = np.frombuffer(offsets_buf, dtype=offset_dtype)[array.offset : array.offset + n + 1]
    if not np.all(np.diff(offs) == nbytes):
        raise ValueError("packed rows of unequal length in one block")
    data = np.frombuffer(data_buf, dtype=np.uint8)[offs[0] : offs[-1]]
    return data.reshape(n, nbytes)


def binary_from_rows(packed: np.ndarray):
    """(rows, nbytes) uint8 -> pyarrow Binary array with one value per row, zero-copy build."""
    import pyarrow as pa

    packed = np.ascontiguousarray(packed, dtype=np.uint8)
    n, nbytes = packed.shape
    offsets = np.arange(0, (n + 1) * nbytes, nbytes, dtype=np.int64)
    if offsets[-1] < 2**31:
        return pa.Array.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(packed)]
        )
    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(packed)])
