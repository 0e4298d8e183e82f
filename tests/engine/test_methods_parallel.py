"""Independent pieces on a few threads (``methods.parallel``): the same bits as serially.

The item model's packed fit, the cross-validation of the default and the sweep's batched
scoring are run with one thread and with three (``LBE_THREADS``); every array must be
equal bit for bit, and progress must be reported from the calling thread, in order.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lifelong_core.bits import pack_rows
from lifelong_core.datasets.synthetic import SyntheticSpec, generate
from lifelong_core.methods import auto, parallel
from lifelong_core.methods.irt_fit import fit_packed_item_model
from lifelong_core.rows import DenseRows
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.sweeping.protocol import score_method


@pytest.fixture(scope="module")
def A():
    return generate(SyntheticSpec(n_models=40, n_samples=3000, seed=4, n_clusters=2))


def with_threads(monkeypatch, n: int, fn):
    monkeypatch.setenv(parallel.ENV, str(n))
    return fn()


def test_ordered_map_keeps_the_order_and_reports_from_the_calling_thread(monkeypatch):
    monkeypatch.setenv(parallel.ENV, "3")
    caller = threading.get_ident()
    seen: list[tuple[int, int]] = []
    out = parallel.ordered_map(
        lambda x: (x * x, threading.get_ident()),
        range(20),
        lambda r: seen.append((r[0], threading.get_ident())),
    )
    assert [r[0] for r in out] == [x * x for x in range(20)]
    assert [s[0] for s in seen] == [x * x for x in range(20)]
    assert {s[1] for s in seen} == {caller}
    monkeypatch.setenv(parallel.ENV, "not a number")
    assert parallel.threads() >= 1


def test_the_packed_fit_is_the_same_on_one_thread_and_on_three(A, monkeypatch):
    P = pack_rows(A[:30])

    def fit():
        seen: list[float] = []
        out = fit_packed_item_model(
            P, A.shape[1], k=3, iters=4, max_columns=1024, block_bytes=4096, progress=seen.append
        )
        return out, seen

    (one, p1), (three, p3) = (with_threads(monkeypatch, t, fit) for t in (1, 3))
    for a, b in zip(one, three):
        np.testing.assert_array_equal(a, b)
    assert p1 == p3 and p1 == sorted(p1) and p1[-1] == pytest.approx(1.0)


def test_the_cross_validation_and_the_scoring_are_the_same_on_one_thread_and_on_three(
    A, monkeypatch
):
    S, E = A[:30], A[30:]
    order = order_from_sums(S.sum(axis=0))

    def run():
        tuning = auto.tune_auto(S[:, :900], seed=2, iters=3)
        method = auto.AutoEstimator(tuning=tuning).fit(S, order)
        method.name = "auto"
        per = score_method(
            method, DenseRows(E), (8, 64, 512), np.random.default_rng(0), 4, lambda r: 0
        )
        return tuning, per

    (t1, per1), (t3, per3) = (with_threads(monkeypatch, t, run) for t in (1, 3))
    assert t1.choices == t3.choices and t1.table == t3.table
    assert per1.equals(per3)


def test_the_allocator_keeps_freed_blocks_where_it_is_glibc():
    import platform

    from lifelong_core.methods.parallel import keep_freed_memory

    took = keep_freed_memory()
    assert isinstance(took, bool)
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert took
