"""run_sweep(..., bounded=True) (packed sources, bounded dense blocks) gives run_sweep's numbers."""

from __future__ import annotations

import numpy as np
import pytest

from lifelong_core import limits
from lifelong_core.rows import PackedArray
from lifelong_core.sweeping import run_sweep


@pytest.fixture(scope="module")
def cache():
    rng = np.random.default_rng(5)
    ability = rng.normal(size=70)[:, None]
    difficulty = rng.normal(size=1203)[None, :]
    A = (rng.random((70, 1203)) < 1 / (1 + np.exp(-(ability - difficulty) * 1.5))).astype(np.uint8)
    return A, np.arange(0, 70, 3), np.setdiff1d(np.arange(70), np.arange(0, 70, 3))


@pytest.mark.parametrize(
    "search,decompose",
    [
        ("midpoint", False),
        ("midpoint", True),
        ("reference", False),
        ("copy-nearest", False),
        ("irt", False),
    ],
)
def test_same_numbers_as_run_sweep_within_a_small_dense_limit(cache, search, decompose):
    A, rows, ev = cache
    with limits.dense_limit_set(8 * 1203):  # dense blocks of at most 8 rows
        got = run_sweep(
            PackedArray.from_dense(A, rows),
            PackedArray.from_dense(A, ev),
            (8, 64, 512),
            search=search,
            decompose=decompose,
            seed=3,
            bounded=True,
        )
    want = run_sweep(
        A[rows], A[ev], (8, 64, 512), search=search, decompose=decompose, seed=3, eval_row_ids=ev
    )
    cols = list(want.per_model.columns)
    # irt is fitted from packed rows in float32 chunks: equal to ~1e-6, not to the last bit.
    tol = 1e-5 if search == "irt" else 0.0
    assert (
        np.abs(got.per_model[cols].to_numpy(float) - want.per_model[cols].to_numpy(float)).max()
        <= tol
    )
    assert np.array_equal(got.order, want.order)


def test_dense_sort_methods_obey_the_guard(cache):
    A, rows, ev = cache
    with limits.dense_limit_set(1000), pytest.raises(limits.DenseReadError):
        run_sweep(
            PackedArray.from_dense(A, rows),
            PackedArray.from_dense(A, ev),
            (8,),
            sort="recursive",
            bounded=True,
        )
