"""The packed-bit layout of the cache matrix A and its kernels (Prabhu et al., 2024, §2-§3).

One layout everywhere, from the store's blobs to the sweep's kernels: a packed block is
``np.packbits(A_block, axis=1, bitorder="little")``: sample ``j`` of row ``r`` is bit
``j % 8`` (least significant first) of byte ``P[r, j // 8]``. Padding bits past ``n``
are zero wherever rows are written (so blocks can be OR-ed into a longer row,
:func:`or_into`) and masked wherever they could be counted. Blocks read from DuckDB go
straight into the kernels, never through a dense (rows x n) uint8 detour.

The one expensive step of a Sort & Search sweep is the permutation of every evaluated row
into Sort order before prefix counts are taken (the seam ``boundary_counts`` of
docs/development/contracts.md). Gathering single bits costs one random read per entry. Here rows are
taken eight at a time: an 8x8 bit transpose turns eight packed rows into one byte per
column ("vertical" bytes: bit ``i`` of column byte ``j`` is row ``i``'s sample ``j``), the
permutation then moves one byte per column for eight rows, and a second 8x8 transpose
turns the permuted bytes back into packed rows in sorted order, whose prefix counts are
byte popcounts plus one masked byte per cut. Sort sums (column sums, Listing 1
``sort_by_sum``) are popcounts of the vertical bytes: one byte operation per eight
entries instead of an unpack.

Every kernel works on one block of rows and returns small arrays; callers stream blocks
(see :mod:`lifelong_core.sweeping`), so peak memory is a few blocks whatever the matrix
size. numpy releases the GIL inside each of these calls, so a thread pool over row
blocks uses both cores without copying data between processes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lifelong_core.errors import InputError

# Masks of Hacker's Delight "transpose8" (Warren, 2nd ed., §7-3) for an 8x8 bit matrix
# held in one little-endian uint64, element (row i, column b) at bit 8*i + b.
_M1 = np.uint64(0x00AA00AA00AA00AA)
_M2 = np.uint64(0x0000CCCC0000CCCC)
_M3 = np.uint64(0x00000000F0F0F0F0)
_S7, _S14, _S28 = np.uint64(7), np.uint64(14), np.uint64(28)

# _LOW[k] keeps the k lowest bits of a byte (the samples before a cut inside that byte).
_LOW = np.array([(1 << k) - 1 for k in range(8)], dtype=np.uint8)


def packed_width(n: int) -> int:
    """Bytes per packed row of ``n`` samples.

    Parameters
    ----------
    n : int
        Samples per row.

    Returns
    -------
    int
        ``ceil(n / 8)``.
    """
    return (int(n) + 7) // 8


def pack_rows(A: np.ndarray) -> np.ndarray:
    """Pack 0/1 rows into bytes, little bit order (the one layout of the module docstring).

    Parameters
    ----------
    A : numpy.ndarray
        (rows, n) 0/1 or bool.

    Returns
    -------
    numpy.ndarray
        uint8 (rows, ceil(n/8)); padding bits are zero.
    """
    A = np.asarray(A)
    if A.ndim != 2:
        raise InputError(f"a matrix to pack must be 2-dimensional, got {A.ndim} dimensions.")
    # packbits reads any nonzero byte as 1, so 0/1 uint8 needs no bool copy.
    if A.dtype not in (np.uint8, np.bool_):
        A = A.astype(bool)
    return np.packbits(A, axis=1, bitorder="little")


def unpack_rows(P: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`pack_rows`.

    Parameters
    ----------
    P : numpy.ndarray
        uint8 (rows, nbytes) packed rows.
    n : int
        Samples per row (the padding past ``n`` is dropped).

    Returns
    -------
    numpy.ndarray
        uint8 (rows, n) 0/1.
    """
    return np.unpackbits(_check_packed(P, n), axis=1, count=n, bitorder="little")


def _check_packed(P: np.ndarray, n: int) -> np.ndarray:
    P = np.asarray(P)
    if P.dtype != np.uint8 or P.ndim != 2:
        raise InputError(
            f"packed rows must be a 2-dimensional uint8 array, got {P.dtype} with {P.ndim} dimensions."
        )
    if P.shape[1] != packed_width(n):
        raise InputError(
            f"packed rows have {P.shape[1]} bytes but {n} samples need {packed_width(n)} bytes per row."
        )
    return P


def _transpose8(x: np.ndarray, t: np.ndarray, u: np.ndarray) -> None:
    """Transpose every 8x8 bit tile of the uint64 array ``x`` in place (bit 8i+b <-> 8b+i).

    ``t`` and ``u`` are scratch arrays of ``x``'s shape; callers pass cache-sized slices,
    which is several times faster than whole-array temporaries.
    """
    for shift, mask in ((_S7, _M1), (_S14, _M2), (_S28, _M3)):
        np.right_shift(x, shift, out=t)
        t ^= x
        t &= mask
        x ^= t
        np.left_shift(t, shift, out=u)
        x ^= u


def _transpose8_all(x: np.ndarray) -> None:
    """:func:`_transpose8` over a contiguous 1-D uint64 array, 32K words (256 KiB) at a time."""
    step = 1 << 15
    t = np.empty(min(step, x.size), dtype=np.uint64)
    u = np.empty_like(t)
    for s in range(0, x.size, step):
        e = min(s + step, x.size)
        _transpose8(x[s:e], t[: e - s], u[: e - s])


def mask_tail(P: np.ndarray, n: int) -> np.ndarray:
    """``P`` with the padding bits of the last byte cleared (a copy only if any are set).

    Parameters
    ----------
    P : numpy.ndarray
        uint8 (rows, nbytes) packed rows.
    n : int
        Samples per row.

    Returns
    -------
    numpy.ndarray
        The rows with zero padding.
    """
    rem = n % 8
    if rem == 0 or P.shape[1] == 0 or not np.any(P[:, -1] & ~_LOW[rem]):
        return P
    P = P.copy()
    P[:, -1] &= _LOW[rem]
    return P


def to_vertical(P: np.ndarray, n: int) -> np.ndarray:
    """Packed rows (rows, nbytes) -> vertical bytes (ceil(rows/8), 8 * nbytes) uint8.

    ``V[g, j]`` holds sample ``j`` of rows ``8g .. 8g+7``, row ``8g+i`` at bit ``i``; rows
    past the end and samples past ``n`` are zero bits.
    """
    P = mask_tail(_check_packed(P, n), n)
    rows, nbytes = P.shape
    groups = (rows + 7) // 8
    if rows % 8:
        P = np.concatenate([P, np.zeros((groups * 8 - rows, nbytes), dtype=np.uint8)])
    P3 = P.reshape(groups, 8, nbytes)
    # out[g, q] read as one little-endian uint64 is the tile of rows 8g..8g+7 x samples
    # 8q..8q+7, row i in byte i; transposed, byte b holds sample 8q+b with row i at bit i.
    out = np.empty((groups, nbytes, 8), dtype=np.uint8)
    for i in range(8):
        out[:, :, i] = P3[:, i, :]
    _transpose8_all(out.reshape(-1).view("<u8"))
    return out.reshape(groups, 8 * nbytes)


def _from_vertical_inplace(V: np.ndarray, rows: int) -> np.ndarray:
    """Vertical bytes (groups, width), width a multiple of 8 -> packed rows (rows, width/8).

    Inverse of :func:`to_vertical`; scribbles over ``V`` (callers pass a temporary).
    """
    groups, width = V.shape
    nbytes = width // 8
    _transpose8_all(V.reshape(-1).view("<u8"))
    Vb = V.reshape(groups, nbytes, 8)
    out = np.empty((groups, 8, nbytes), dtype=np.uint8)
    for i in range(8):
        out[:, i, :] = Vb[:, :, i]
    return out.reshape(groups * 8, nbytes)[:rows]


def from_vertical(V: np.ndarray, rows: int) -> np.ndarray:
    """Inverse of :func:`to_vertical` for a width that is a multiple of 8: -> (rows, width/8)."""
    V = np.array(V, dtype=np.uint8, order="C", copy=True)
    if V.ndim != 2 or V.shape[1] % 8:
        raise InputError(
            "vertical bytes must be 2-dimensional with a width that is a multiple of 8."
        )
    return _from_vertical_inplace(V, rows)


def row_totals(P: np.ndarray, n: int) -> np.ndarray:
    """Number of ones per packed row.

    Parameters
    ----------
    P : numpy.ndarray
        uint8 (rows, nbytes) packed rows.
    n : int
        Samples per row (padding bits are not counted).

    Returns
    -------
    numpy.ndarray
        int64 (rows,).
    """
    P = mask_tail(_check_packed(P, n), n)
    return np.bitwise_count(P).sum(axis=1, dtype=np.int64)


def column_sums_packed(P: np.ndarray, n: int) -> np.ndarray:
    """Column sums of a packed block: the Sort sum of Listing 1 over this block.

    Identical to ``unpack_rows(P, n).sum(axis=0)``; add the results of several blocks to get
    the sums over all Sort models (Prabhu et al. (2024), "Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress", §3.1 and Appendix D, Listing 1).

    Parameters
    ----------
    P : numpy.ndarray
        uint8 (rows, nbytes) packed rows.
    n : int
        Samples per row.

    Returns
    -------
    numpy.ndarray
        int64 (n,).
    """
    V = to_vertical(P, n)
    # <= 255 groups per call keeps the uint8->int32 popcount sum exact and small.
    out = np.zeros(V.shape[1], dtype=np.int64)
    for g in range(0, V.shape[0], 255):
        out += np.bitwise_count(V[g : g + 255]).sum(axis=0, dtype=np.int32)
    return out[:n]


def check_cuts(cuts: np.ndarray, n: int) -> np.ndarray:
    """Cut positions as int64, checked sorted, unique and within [0, n]."""
    cuts = np.asarray(cuts, dtype=np.int64)
    if cuts.ndim != 1:
        raise InputError("cut positions must be a 1-dimensional array.")
    if cuts.size and (cuts[0] < 0 or cuts[-1] > n or np.any(np.diff(cuts) <= 0)):
        raise InputError(f"cut positions must be sorted, unique and within [0, {n}].")
    return cuts


def check_order(order: np.ndarray, n: int) -> np.ndarray:
    """A Sort order as intp, checked to be a permutation of range(n)."""
    order = np.asarray(order)
    if order.ndim != 1 or order.shape[0] != n or order.dtype.kind not in "iu":
        raise InputError(f"the Sort order must be an integer permutation of {n} samples.")
    order = order.astype(np.intp, copy=False)
    seen = np.zeros(n, dtype=bool)
    if n and (order.min() < 0 or order.max() >= n):
        raise InputError(f"the Sort order holds sample indices outside [0, {n}).")
    seen[order] = True
    if not seen.all():
        raise InputError(f"the Sort order is not a permutation of {n} samples (an index repeats).")
    return order


class SortOrder:
    """A Sort order (easy -> hard) applied to packed rows.

    Built once per order (the padded order is shared by every chunk and thread);
    :meth:`sorted_rows` is pure. Sorted rows are 64-bit words so prefix counts are word
    popcounts; sorted positions ``n .. 64*words-1`` are padding that no count reads. The
    order is the Sort of Prabhu et al. (2024), "Efficient Lifelong Model Evaluation in an Era of
    Rapid Progress", §3.1.

    Parameters
    ----------
    order : numpy.ndarray
        A permutation of ``range(n)``, easiest sample first.
    n : int
        Samples per row.
    checked : bool
        Skip the permutation check (the caller has made it).

    Raises
    ------
    InputError
        If ``order`` is not a permutation of ``n`` samples.
    """

    def __init__(self, order: np.ndarray, n: int, *, checked: bool = False) -> None:
        self.n = int(n)
        if not checked:
            order = check_order(order, self.n)
        self.words = (self.n + 63) // 64
        # Padding positions gather column 0: they are never counted, any source will do.
        self._order = np.zeros(self.words * 64, dtype=np.intp)
        self._order[: self.n] = order

    def sorted_rows(self, P: np.ndarray) -> np.ndarray:
        """Packed rows permuted into Sort order.

        Parameters
        ----------
        P : numpy.ndarray
            uint8 (rows, ceil(n/8)) packed rows, in sample order.

        Returns
        -------
        numpy.ndarray
            uint64 (rows, ceil(n/64)), little bit order: bit ``j`` is the ``j``-th easiest sample.

        Raises
        ------
        InputError
            If ``P`` is not packed rows of ``n`` samples.
        """
        P = _check_packed(P, self.n)
        rows = P.shape[0]
        V = to_vertical(P, self.n)
        Vs = np.take(V, self._order, axis=1)
        del V
        return _from_vertical_inplace(Vs, rows).view("<u8")


def word_prefix(S: np.ndarray) -> np.ndarray:
    """Ones in the first ``w`` words of each sorted row, for every ``w``.

    Parameters
    ----------
    S : numpy.ndarray
        uint64 (rows, words) from :meth:`SortOrder.sorted_rows`.

    Returns
    -------
    numpy.ndarray
        int32 (rows, words + 1); column 0 is zero.
    """
    cum = np.empty((S.shape[0], S.shape[1] + 1), dtype=np.int32)
    cum[:, 0] = 0
    np.cumsum(np.bitwise_count(S), axis=1, dtype=np.int32, out=cum[:, 1:])
    return cum


def ones_before(S: np.ndarray, cum: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Ones among the first ``t[r]`` sorted samples of row ``r``: the prefix counts from which
    Search reads its thresholds (Prabhu et al. (2024), "Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress", §3.2).

    Parameters
    ----------
    S : numpy.ndarray
        uint64 (rows, words) from :meth:`SortOrder.sorted_rows`.
    cum : numpy.ndarray
        :func:`word_prefix` of ``S``.
    t : numpy.ndarray
        One prefix length per row, in [0, n].

    Returns
    -------
    numpy.ndarray
        int64 (rows,).
    """
    t = np.asarray(t, dtype=np.int64)
    r = np.arange(S.shape[0])
    w = t >> 6
    part = S[r, np.minimum(w, S.shape[1] - 1)] & (
        (np.uint64(1) << (t & 63).astype(np.uint64)) - np.uint64(1)
    )
    return cum[r, w].astype(np.int64) + np.bitwise_count(part)


def bits_at(S: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The bits of every row at ``positions``: the observations a new model would return
    there.

    Parameters
    ----------
    S : numpy.ndarray
        Packed rows: uint64 sorted rows from :meth:`SortOrder.sorted_rows` (positions in
        the order), or uint8 rows of :func:`pack_rows` (positions are sample columns).
    positions : numpy.ndarray
        The positions to read, each in ``[0, n)``.

    Returns
    -------
    numpy.ndarray
        uint8 (rows, len(positions)), 0/1.
    """
    positions = np.asarray(positions, dtype=np.int64)
    Sb = S.view(np.uint8)
    out = np.take(Sb, positions >> 3, axis=1)
    out >>= (positions & 7).astype(np.uint8)
    out &= np.uint8(1)
    return out


def packed_bits_at(S: np.ndarray, positions: np.ndarray, block: int = 1 << 15) -> np.ndarray:
    """:func:`bits_at` packed: bit ``j % 8`` of byte ``j // 8`` is the sample at ``positions[j]``.

    Built ``block`` positions at a time, so the dense 0/1 temporary stays at
    rows x ``block`` bytes whatever the budget (the paper's n' = n/2 at 1.7M samples would
    otherwise be rows x 850k bytes).

    Parameters
    ----------
    S : numpy.ndarray
        uint64 (rows, words) from :meth:`SortOrder.sorted_rows`.
    positions : numpy.ndarray
        Sorted positions to read.
    block : int
        Positions packed at a time.

    Returns
    -------
    numpy.ndarray
        uint8 (rows, ceil(len(positions)/8)), padding bits zero.
    """
    positions = np.asarray(positions, dtype=np.int64)
    block -= block % 8
    out = np.empty((S.shape[0], (len(positions) + 7) // 8), dtype=np.uint8)
    for a in range(0, len(positions), block):
        out[:, a // 8 : (a + block + 7) // 8] = np.packbits(
            bits_at(S, positions[a : a + block]), axis=1, bitorder="little"
        )
    return out


class SortedCounter(SortOrder):
    """Prefix counts of packed rows in Sort order at fixed cut positions: the seam of
    docs/development/contracts.md for packed rows.

    ``counts(P)[r, t]`` is the number of ones among the first ``cuts[t]`` samples of row
    ``r`` in the order ``order``, equal to the dense
    ``boundary_counts(unpack_rows(P, n), order, cuts)``.
    """

    def __init__(
        self, order: np.ndarray, cuts: np.ndarray, n: int, *, checked: bool = False
    ) -> None:
        super().__init__(order, n, checked=checked)
        self.cuts = np.asarray(cuts if checked else check_cuts(cuts, self.n), dtype=np.int64)

    def counts(self, P: np.ndarray) -> np.ndarray:
        """int32 (rows, len(cuts)) prefix counts of the packed rows ``P`` in Sort order."""
        rows = _check_packed(P, self.n).shape[0]
        out = np.empty((rows, self.cuts.size), dtype=np.int32)
        if rows == 0 or self.cuts.size == 0:
            return out
        S = self.sorted_rows(P)
        cum = word_prefix(S)
        w = self.cuts >> 6
        wa = np.minimum(w, self.words - 1)
        mask = (np.uint64(1) << (self.cuts & 63).astype(np.uint64)) - np.uint64(1)
        for r in range(rows):
            np.take(cum[r], w, out=out[r])
            out[r] += np.bitwise_count(S[r, wa] & mask)
        return out


def boundary_counts_packed(
    P: np.ndarray, order: np.ndarray, cuts: np.ndarray, n: int
) -> np.ndarray:
    """Prefix counts of packed rows in Sort order at ``cuts``: int32 (rows, len(cuts)).

    The packed twin of the engine's ``boundary_counts(block, order, cuts)`` (same values).
    For many blocks with the same order and cuts, build one :class:`SortedCounter`.
    """
    return SortedCounter(order, cuts, n).counts(P)


def or_into(out: np.ndarray, packed: np.ndarray, start: int) -> None:
    """OR a block's packed rows into ``out`` (packed rows of the whole sample axis), in place.

    Blocks need not start on a byte boundary (samples are appended in whatever batch sizes
    users import); a misaligned block is shifted across byte pairs instead of being
    unpacked, so this stays byte-speed.

    Parameters
    ----------
    out : numpy.ndarray
        uint8 (rows, nbytes) packed rows of all samples, updated in place.
    packed : numpy.ndarray
        uint8 (rows, block bytes) packed rows of the block, zero padding.
    start : int
        The block's first sample index.
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


def rows_from_binary(array: Any, nbytes: int) -> np.ndarray:
    """Packed rows from a pyarrow Binary array whose values all have ``nbytes`` bytes.

    Reads the Arrow data buffer directly (no per-row Python objects).

    Parameters
    ----------
    array : pyarrow.BinaryArray
        One packed row per value.
    nbytes : int
        Bytes per row.

    Returns
    -------
    numpy.ndarray
        uint8 (len(array), nbytes).

    Raises
    ------
    ValueError
        If the values are not all ``nbytes`` long (a damaged block).
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


def binary_from_rows(packed: np.ndarray) -> Any:
    """A pyarrow Binary array with one value per packed row, built without copying rows.

    Parameters
    ----------
    packed : numpy.ndarray
        uint8 (rows, nbytes).

    Returns
    -------
    pyarrow.BinaryArray or pyarrow.LargeBinaryArray
        Large offsets once the data passes 2 GiB.
    """
    # pyarrow is imported here, not at the top: only the store's writes need it, and the
    # sweep's worker processes and the command line's start-up should not pay for it.
    import pyarrow as pa

    packed = np.ascontiguousarray(packed, dtype=np.uint8)
    n, nbytes = packed.shape
    offsets = np.arange(0, (n + 1) * nbytes, nbytes, dtype=np.int64)
    if offsets[-1] < 2**31:
        return pa.Array.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(packed)]
        )
    return pa.Array.from_buffers(
        pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(packed)]
    )
