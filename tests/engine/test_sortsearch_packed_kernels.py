"""Packed-bit kernels against the dense engine: same numbers, any shape."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.bits import (
    SortedCounter,
    SortOrder,
    bits_at,
    boundary_counts_packed,
    column_sums_packed,
    from_vertical,
    ones_before,
    pack_rows,
    packed_bits_at,
    row_totals,
    to_vertical,
    unpack_rows,
    word_prefix,
)
from lifelong_core.errors import InputError
from lifelong_core.sortsearch.kernels import boundary_counts, sweep_cuts
from lifelong_core.sortsearch.search import rule_thresholds, rule_thresholds_packed


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
    assert np.array_equal(
        np.unpackbits(S.view(np.uint8), axis=1, count=n, bitorder="little"), sorted_dense
    )
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


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 90),
    st.integers(0, 40),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["reference", "midpoint"]),
    st.sampled_from([1, 2, 3, 8192]),
)
def test_byte_table_thresholds_equal_the_running_sum_rule(rows, k, extra, seed, rule, block):
    # Ties (long 0/1 alternations), all-wrong and all-right rows are where a first-maximiser
    # scan goes wrong; a low or high p makes them common.
    rng = np.random.default_rng(seed)
    n = k + extra
    positions = np.sort(rng.choice(n, k, replace=False))
    obs = _random(rng, rows, k, p=rng.choice([0.0, 0.5, 1.0, rng.random()]))
    if rows > 1:
        obs[0] = np.arange(k) % 2  # S_j = 1, 0, 1, 0, ...: every odd j ties
    packed = np.packbits(obs, axis=1, bitorder="little")
    assert np.array_equal(
        rule_thresholds_packed(rule, positions, packed, n, block=block),
        rule_thresholds(rule, positions, obs, n),
    )


@settings(max_examples=40, deadline=None)
@given(shapes, st.sampled_from([8, 16, 1 << 15]))
def test_packed_bits_at_is_bits_at_packed(shape, block):
    rows, n, seed = shape
    rng = np.random.default_rng(seed)
    S = SortOrder(rng.permutation(n), n).sorted_rows(pack_rows(_random(rng, rows, n)))
    pos = np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False))
    assert np.array_equal(
        packed_bits_at(S, pos, block=block), np.packbits(bits_at(S, pos), axis=1, bitorder="little")
    )
