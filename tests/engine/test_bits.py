"""Store: packed-bit helpers against a dense reference."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as hst

from lifelong_core.bits import binary_from_rows, or_into, pack_rows, rows_from_binary, unpack_rows


@settings(max_examples=60, deadline=None)
@given(
    lengths=hst.lists(hst.integers(1, 40), min_size=1, max_size=6),
    rows=hst.integers(1, 4),
    seed=hst.integers(0, 2**31 - 1),
)
def test_blocks_or_into_a_packed_row_equal_packing_the_whole(lengths, rows, seed):
    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 2, (rows, sum(lengths)), dtype=np.uint8)
    out = np.zeros((rows, (dense.shape[1] + 7) // 8), dtype=np.uint8)
    start = 0
    for n in lengths:
        or_into(out, pack_rows(dense[:, start : start + n]), start)
        start += n
    assert np.array_equal(out, np.packbits(dense, axis=1, bitorder="little"))
    assert np.array_equal(unpack_rows(out, dense.shape[1]), dense)


def test_binary_round_trip_through_arrow():
    rng = np.random.default_rng(0)
    packed = rng.integers(0, 256, (5, 3), dtype=np.uint8)
    arr = binary_from_rows(packed)
    assert arr.type == pa.binary() and len(arr) == 5 and arr[2].as_py() == packed[2].tobytes()
    assert np.array_equal(rows_from_binary(arr, 3), packed)
    assert np.array_equal(rows_from_binary(arr.slice(1, 3), 3), packed[1:4])
    assert rows_from_binary(arr.slice(0, 0), 3).shape == (0, 3)


def test_pack_rows_accepts_bool_and_uint8_alike():
    dense = np.array([[1, 0, 1, 1, 0, 0, 0, 0, 1]], dtype=np.uint8)
    assert np.array_equal(pack_rows(dense), pack_rows(dense.astype(bool)))
    assert pack_rows(dense).tolist() == [[0b00001101, 0b1]]
