"""mirt fitted from packed rows in column chunks agrees with the in-memory fit.

Tolerance stated here and on the documentation's Benchmarks page: on the demo data every fitted probability of
every cache entry within 1e-4, and the estimate (accuracy, interval ends) of every held-out
model within 1e-5, with identical per-sample predictions. Measured: 7e-7 and 1e-8.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.methods.irt import MIRTEstimator
from lifelong_core.methods.irt_fit import column_chunks, fit_packed_item_model


def _probs(item) -> np.ndarray:
    return expit(item.d.astype(np.float64)[:, None] + item.w.astype(np.float64) @ item.theta.T)


@pytest.fixture(scope="module")
def demo_cache(demo_store_path):
    from lifelong_core.sortsearch import choose_sort_rows, compute_order
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    with Store.open(demo_store_path) as st:
        A = select(st, "lifelong-digits").A  # the store also holds the leaderboard's models
    rows = choose_sort_rows(len(A), 60, 0)
    return A, rows, compute_order(A[rows], "sum")


@pytest.mark.slow
def test_chunked_fit_agrees_with_in_memory_fit_on_demo_data(demo_cache):
    A, rows, order = demo_cache
    As = A[rows]
    n = As.shape[1]
    assert n % 8 != 0  # the last chunk ends inside a byte
    dense = MIRTEstimator().fit(As, order)
    block = 4 * len(As) * 1024  # several column chunks of 1,024 samples
    assert len(column_chunks(n, len(As), block)) > 5
    packed = MIRTEstimator().fit_packed(
        np.packbits(As, axis=1, bitorder="little"), n, order, block_bytes=block
    )
    assert packed.item_.w.dtype == np.float32
    assert np.abs(_probs(dense.item_) - _probs(packed.item_)).max() < 1e-4
    rest = np.setdiff1d(np.arange(len(A)), rows)
    for i in rest[::10]:
        cols = dense.select(n, 128, np.random.default_rng(int(i)))
        a, b = dense.estimate(cols, A[i, cols]), packed.estimate(cols, A[i, cols])
        assert abs(a.acc - b.acc) < 1e-5 and abs(a.lo - b.lo) < 1e-5 and abs(a.hi - b.hi) < 1e-5
        assert np.array_equal(a.per_sample, b.per_sample)


def test_progress_reaches_one_and_is_monotone():
    rng = np.random.default_rng(0)
    A = (rng.random((30, 700)) < rng.random(700)).astype(np.uint8)
    seen = []
    fit_packed_item_model(
        np.packbits(A, axis=1, bitorder="little"),
        700,
        k=3,
        iters=3,
        block_bytes=4 * 30 * 128,
        progress=seen.append,
    )
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)


def test_bad_packed_input_is_an_input_error():
    with pytest.raises(InputError, match="packed Sort cache"):
        fit_packed_item_model(np.zeros((5, 3), dtype=np.uint8), 100)
    with pytest.raises(InputError, match="at least 2 models"):
        fit_packed_item_model(np.zeros((1, 13), dtype=np.uint8), 100)
