"""Packed-bit kernels against the dense engine (issue 7): same numbers, any shape."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.bits import (
    SortedCounter,
    SortOrder,
    bits_at,
    boundary_counts_packed,
    column_sums_packed,
    from_vertical,
    ones_before,
    pack_rows,
    row_totals,
    to_vertical,
    unpack_rows,
    word_prefix,
)
from lifelong_core.sortsearch.kernels import boundary_counts, sweep_cuts


def _random(rng, rows, n, p=None):
    p = rng.random() if p is None else p
    return (rng.random((rows, n)) < p).astype(np.uint8)


def _dirty(P: np.ndarray, n: int) -> np.ndarray:
    """Set every padding bit: kernels must never count them."""
    P = P.copy()
    if n % 8:
        P[:, -1] |= np.uint8(0xFF) ^ np.uint8((1 << (n % 8)) - 1)
    return P


shapes = st.tuples(st.integers(1, 40), st.integers(1, 300), st.integers(0, 2**32 - 1))


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_pack_roundtrip_and_vertical_roundtrip(shape):
    rows, n, seed = shape
    A = _random(np.random.default_rng(seed), rows, n)
    P = pack_rows(A)
    assert P.shape == (rows, (n + 7) // 8)
    assert np.array_equal(unpack_rows(P, n), A)
    V = to_vertical(P, n)
    assert V.shape == ((rows + 7) // 8, 8 * P.shape[1])
    # bit i of V[g, j] is row 8g+i at sample j
    for r in range(rows):
        assert np.array_equal((V[r // 8, :n] >> (r % 8)) & 1, A[r])
    assert np.array_equal(from_vertical(V, rows), P)


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_sums_and_totals_match_dense_and_ignore_padding(shape):
    rows, n, seed = shape
    A = _random(np.random.default_rng(seed), rows, n)
    P = _dirty(pack_rows(A), n)
    assert np.array_equal(column_sums_packed(P, n), A.sum(axis=0, dtype=np.int64))
    assert np.array_equal(row_totals(P, n), A.sum(axis=1, dtype=np.int64))


def test_column_sums_over_many_row_groups():
    # > 255 groups of 8 rows exercises the chunked popcount accumulation.
    A = _random(np.random.default_rng(0), 2100, 70, 0.9)
    assert np.array_equal(column_sums_packed(pack_rows(A), 70), A.sum(axis=0))


@settings(max_examples=60, deadline=None)
@given(shapes, st.integers(1, 50))
def test_boundary_counts_equal_dense_engine(shape, k):
    rows, n, seed = shape
    rng = np.random.default_rng(seed)
    A = _random(rng, rows, n)
    order = rng.permutation(n)
    cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n + 1, size=k)]))
    dense = boundary_counts(A, order, cuts)
    packed = boundary_counts_packed(_dirty(pack_rows(A), n), order, cuts, n)
    assert packed.dtype == np.int32
    assert np.array_equal(packed, dense)


def test_boundary_counts_at_sweep_cuts_multiple_words():
    rng = np.random.default_rng(3)
    n = 1_000 * 8 + 5
    A = _random(rng, 19, n)
    order = rng.permutation(n)
    cuts = sweep_cuts(n, (8, 64, 512, 4096), "random", np.random.default_rng(1))
    counter = SortedCounter(order, cuts, n)
    assert np.array_equal(counter.counts(pack_rows(A)), boundary_counts(A, order, cuts))


@settings(max_examples=40, deadline=None)
@given(shapes)
def test_sorted_rows_bits_and_prefixes(shape):
    rows, n, seed = shape
    rng = np.random.default_rng(seed)
    A = _random(rng, rows, n)
    order = rng.permutation(n)
    S = SortOrder(order, n).sorted_rows(_dirty(pack_rows(A), n))
    sorted_dense = A[:, order]
    assert np.array_equal(np.unpackbits(S.view(np.uint8), axis=1, count=n, bitorder="little"), sorted_dense)
    pos = np.sort(rng.choice(n, size=min(n, 7), replace=False))
    assert np.array_equal(bits_at(S, pos), sorted_dense[:, pos])
    t = rng.integers(0, n + 1, size=rows)
    want = np.array([sorted_dense[r, : t[r]].sum() for r in range(rows)])
    assert np.array_equal(ones_before(S, word_prefix(S), t), want)


def test_kernels_do_not_modify_their_input():
    A = _random(np.random.default_rng(5), 8, 8)
    P = pack_rows(A)
    before = P.copy()
    to_vertical(P, 8)
    column_sums_packed(P, 8)
    SortOrder(np.arange(8), 8).sorted_rows(P)
    assert np.array_equal(P, before)


def test_bad_inputs_raise_one_sentence():
    P = pack_rows(np.ones((2, 10), dtype=np.uint8))
    with pytest.raises(InputError, match="bytes"):
        column_sums_packed(P, 30)
    with pytest.raises(InputError, match="uint8"):
        row_totals(P.astype(np.int16), 10)
    with pytest.raises(InputError, match="permutation"):
        SortOrder(np.zeros(10, dtype=np.int64), 10)
    with pytest.raises(InputError, match="outside"):
        SortOrder(np.arange(1, 11), 10)
    with pytest.raises(InputError, match="sorted, unique"):
        SortedCounter(np.arange(10), np.array([3, 2]), 10)
    with pytest.raises(InputError, match="sorted, unique"):
        SortedCounter(np.arange(10), np.array([0, 11]), 10)
