"""The sweep: reference mode equals Listing 1, fast path equals protocol path, streaming,
the protocol seam, insert_M / insert_D, CopyNearest&Expand and serial additions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.methods import (
    CopyNearestExpand,
    Estimate,
    InsertD,
    InsertM,
    available_methods,
    capabilities,
    get_method,
    register,
    unregister,
)
from lifelong_core.rows import DenseRows, PackedArray, RowSource
from lifelong_core.sortsearch import boundary_counts, serial_additions, sweep_cuts
from lifelong_core.sweeping import power_budgets, run_sweep


def synthetic(m: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.3, 1.0, size=(m, 1))
    difficulty = rng.normal(0.0, 1.5, size=(1, n))
    p = 1 / (1 + np.exp(-(ability - difficulty + rng.normal(0, 0.7, size=(m, n)))))
    return (rng.random((m, n)) < p).astype(np.uint8)


# --- a plain transcription of Listing 1 + the reference threshold rule ----------------


def listing1_sort_by_sum(A):
    sum_ranking = A.sum(axis=0)
    order = np.flip(np.argsort(sum_ranking))
    return order


def listing1_dp_search(query):
    query = query.astype(np.int64).copy()
    query[query == 0] = -1
    cumsum = np.cumsum(query)
    idx = np.argmax(cumsum)
    return idx


def reference_uniform(n, k):
    step = n // k
    offset = step // 2 if k * step == n else n - k * step
    return np.array([offset + i * step for i in range(k)])


def transcribed_sweep(A_sort, A_eval, budgets):
    order = listing1_sort_by_sum(A_sort)
    truth = A_eval[:, order]
    out = []
    for b in budgets:
        p = reference_uniform(A_sort.shape[1], b)
        for i, row in enumerate(truth):
            y = np.zeros_like(row)
            y[: p[listing1_dp_search(row[p])]] = 1
            out.append((i, b, y.mean(), row.mean(), np.abs(y.astype(int) - row).mean()))
    return pd.DataFrame(out, columns=["model_row", "budget", "est_acc", "true_acc", "mae"])


@pytest.mark.parametrize("seed,m,n", [(0, 30, 997), (1, 25, 1024), (2, 12, 333)])
def test_reference_mode_equals_listing1_transcription(seed, m, n):
    A = synthetic(m, n, seed)
    budgets = [1, 3, 8, 50, 128, n]
    res = run_sweep(A[:8], A[8:], budgets, search="reference", chunk_rows=5)
    ref = (
        transcribed_sweep(A[:8], A[8:], budgets)
        .sort_values(["budget", "model_row"])
        .reset_index(drop=True)
    )
    got = res.per_model[["model_row", "budget", "est_acc", "true_acc", "mae"]]
    assert np.array_equal(got["model_row"].to_numpy(), ref["model_row"].to_numpy())
    assert np.array_equal(got["budget"].to_numpy(), ref["budget"].to_numpy())
    for c in ("est_acc", "true_acc", "mae"):
        assert np.array_equal(got[c].to_numpy(), ref[c].to_numpy()), c


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 60), st.integers(0, 2**32 - 1), st.data())
def test_reference_mode_equals_transcription_with_heavy_ties(m_sort, n, seed, data):
    """Few Sort rows make most sums tie, which exercises Listing 1's tie order."""
    A = (np.random.default_rng(seed).random((m_sort + 4, n)) < 0.5).astype(np.uint8)
    budgets = sorted(set(data.draw(st.lists(st.integers(1, n), min_size=1, max_size=4))))
    res = run_sweep(A[:m_sort], A[m_sort:], budgets, search="reference", chunk_rows=3)
    ref = transcribed_sweep(A[:m_sort], A[m_sort:], budgets).sort_values(["budget", "model_row"])
    assert np.array_equal(res.per_model["est_acc"].to_numpy(), ref["est_acc"].to_numpy())
    assert np.array_equal(res.per_model["mae"].to_numpy(), ref["mae"].to_numpy())


def test_sweep_table_is_tidy_and_means_per_model():
    A = synthetic(40, 2000, 3)
    res = run_sweep(A[:10], A[10:], None)
    assert list(res.table.columns) == ["budget", "mae", "eagg", "kappa", "pearson", "spearman"]
    assert (
        res.table["budget"].tolist()
        == list(power_budgets(2000))
        == [8, 16, 32, 64, 128, 256, 512, 1024]
    )
    g = res.per_model.groupby("budget")
    assert np.allclose(res.table["mae"], g["mae"].mean().to_numpy())
    assert np.allclose(
        res.table["eagg"],
        (res.per_model["est_acc"] - res.per_model["true_acc"])
        .abs()
        .groupby(res.per_model["budget"])
        .mean()
        .to_numpy(),
    )
    assert len(res.per_model) == 30 * 8


@pytest.mark.parametrize("search", ["midpoint", "reference"])
@pytest.mark.parametrize("sampling", ["uniform", "random"])
def test_fast_path_equals_protocol_path(search, sampling):
    A = synthetic(24, 800, 4)
    budgets = [4, 32, 200, 800]
    fast = run_sweep(A[:8], A[8:], budgets, search=search, sampling=sampling, seed=9)
    method = InsertM(rule=search, sampling=sampling).fit(A[:8], order=fast.order)
    rng = np.random.default_rng(9)
    for b in budgets:
        cols = method.select(800, b, rng)
        sub = fast.per_model[fast.per_model["budget"] == b]
        for (_, r), row in zip(sub.iterrows(), A[8:]):
            est = method.estimate(cols, row[cols])
            assert est.acc == pytest.approx(r["est_acc"])
            assert np.abs(est.per_sample.astype(int) - row).mean() == pytest.approx(r["mae"])


def test_decomposition_in_sweep():
    A = synthetic(30, 600, 5)
    res = run_sweep(A[:10], A[10:], [8, 64, 600], decompose=True)
    pm = res.per_model
    assert (pm["mae"] >= pm["aleatoric"] - 1e-12).all()
    assert (pm["mae"] <= pm["aleatoric"] + pm["epistemic"] + 1e-12).all()
    assert (pm.loc[pm["budget"] == 600, "epistemic"] == 0).all()
    assert {"aleatoric", "epistemic"} <= set(res.table.columns)
    ref = run_sweep(A[:10], A[10:], [600], search="reference", decompose=True)
    # the reference rule stops one short of the optimum even with every sample seen
    assert (ref.per_model["epistemic"] <= 1 / 600 + 1e-12).all()


def test_streamed_rows_and_progress_match_array():
    A = synthetic(30, 500, 6)
    fractions = []
    a = run_sweep(A[:5], A[5:], [8, 100], eval_row_ids=np.arange(5, 30))
    b = run_sweep(
        PackedArray.from_dense(A, np.arange(5)),
        DenseRows(A[5:], np.arange(5, 30)),
        [8, 100],
        chunk_rows=7,
        progress=fractions.append,
    )
    pd.testing.assert_frame_equal(a.per_model, b.per_model)
    # One step for the streamed Sort rows, one per chunk of 7 evaluated rows.
    assert fractions[-1] == 1.0 and fractions == sorted(fractions) and len(fractions) == 1 + 4


@pytest.mark.parametrize("kernel", ["dense", "packed"])
@pytest.mark.parametrize("executor", ["serial", "threads"])
def test_kernels_and_executors_give_the_same_numbers(kernel, executor):
    """The front door's kernel and executor change how, never what."""
    A = synthetic(20, 301, 7)
    dense = run_sweep(A[:6], A[6:], [8, 30])
    P = np.packbits(A, axis=1, bitorder="little")
    got = run_sweep(
        PackedArray(P, 301, np.arange(6)),
        PackedArray(P, 301, np.arange(6, 20)),
        [8, 30],
        kernel=kernel,
        executor=executor,
        threads=2,
        chunk_rows=3,
    )
    pd.testing.assert_frame_equal(dense.table, got.table)
    pd.testing.assert_frame_equal(
        dense.per_model.assign(model_row=dense.per_model["model_row"] + 6), got.per_model
    )
    if kernel == "packed":
        with pytest.raises(InputError, match="decomposition"):
            run_sweep(A[:6], A[6:], [8], kernel=kernel, decompose=True)


def test_boundary_counts_brute_force():
    rng = np.random.default_rng(8)
    block = (rng.random((4, 50)) < 0.5).astype(np.uint8)
    order = rng.permutation(50)
    cuts = np.array([0, 1, 7, 8, 49, 50])
    got = boundary_counts(block, order, cuts)
    want = np.array([[block[r, order[:c]].sum() for c in cuts] for r in range(4)])
    assert np.array_equal(got, want)
    cuts2 = sweep_cuts(50, (8, 16), "uniform", None)
    assert cuts2[0] == 0 and cuts2[-1] == 50 and (np.diff(cuts2) > 0).all()


# --- protocol methods ------------------------------------------------------------------


class OracleHalf:
    """Test double: evaluates the first `budget` columns, predicts 1 for the observed
    ones and 0 elsewhere, and reports a fixed interval around the observed mean."""

    name = "oracle-half"

    def fit(self, A_sort, order, confidence=None):
        self.n = A_sort.shape[1]
        return self

    def select(self, n, budget, rng):
        return np.arange(budget)

    def estimate(self, positions, observed):
        y = np.zeros(self.n, dtype=np.uint8)
        y[positions] = observed
        acc = float(observed.mean())
        return Estimate(acc, max(acc - 0.1, 0.0), min(acc + 0.1, 1.0), y)


def test_protocol_method_path():
    register("oracle-half", OracleHalf)
    try:
        _check_oracle_half()
    finally:
        unregister("oracle-half")


def _check_oracle_half():
    assert "oracle-half" in available_methods()
    A = synthetic(12, 100, 9)
    res = run_sweep(A[:4], A[4:], [10, 100], search="oracle-half")
    pm = res.per_model
    assert {"est_lo", "est_hi"} <= set(pm.columns)
    full = pm[pm["budget"] == 100]
    assert np.allclose(full["mae"], 0.0) and np.allclose(full["est_acc"], full["true_acc"])
    first = pm[pm["budget"] == 10].reset_index(drop=True)
    rows = A[4:]
    assert np.allclose(first["mae"], rows[:, 10:].sum(axis=1) / 100)
    assert np.allclose(first["est_acc"], rows[:, :10].mean(axis=1))
    assert np.allclose(first["est_lo"], np.maximum(first["est_acc"] - 0.1, 0))


def test_unknown_method_and_bad_budgets():
    A = synthetic(6, 40, 10)
    with pytest.raises(InputError, match="unknown search method"):
        get_method("no-such-method")
    with pytest.raises(InputError, match="between 1 and"):
        run_sweep(A[:3], A[3:], [0])
    with pytest.raises(InputError, match="between 1 and"):
        run_sweep(A[:3], A[3:], [41])
    with pytest.raises(InputError, match="no rows to evaluate"):
        run_sweep(A[:3], A[3:3], [8])


# --- insert_M, insert_D, CopyNearest&Expand ---------------------------------------------


def test_insert_m_tiny_case():
    A_sort = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 0, 1, 0, 0], [1, 0, 1, 1, 0, 1]])
    m = InsertM().fit(A_sort)  # sums 3,2,2,2,0,1 -> order 0,1,2,3,5,4
    assert m.order_.tolist() == [0, 1, 2, 3, 5, 4]
    cols = m.select(6, 3)  # uniform positions 1, 3, 5 -> columns 1, 3, 4
    assert cols.tolist() == [1, 3, 4]
    est = m.estimate(cols, np.array([1, 1, 0]))  # observed in column order 1, 3, 4
    # positions 1, 3 observed 1, position 5 observed 0: j* = 2, t = (3 + 1 + 5) // 2 = 4
    assert est.acc == pytest.approx(4 / 6)
    assert est.per_sample.tolist() == [1, 1, 1, 1, 0, 0]
    with pytest.raises(InputError):
        m.estimate(cols, np.array([1, 1]))


def test_insert_d_predicts_models_and_place():
    A = np.array(
        [
            [1, 1, 1, 1, 0],  # 4 correct
            [1, 1, 0, 0, 0],  # 2
            [1, 1, 1, 0, 0],  # 3
            [1, 0, 0, 0, 0],  # 1
        ]
    )
    d = InsertD().fit(A)
    assert d.model_order_.tolist() == [0, 2, 1, 3]
    rows = d.select(4, 4)
    assert rows.tolist() == [0, 1, 2, 3]
    # the new sample is solved by the two best models only
    est = d.estimate(rows, np.array([1, 0, 1, 0]))
    assert est.per_sample.tolist() == [1, 0, 1, 0] and est.acc == 0.5
    # sample sums 4, 3, 2, 1, 0: predicted sum 2 goes after the three samples with sum >= 2
    assert d.place(rows, np.array([1, 0, 1, 0])) == 3


def test_copy_nearest_expand_tiny_case():
    A_sort = np.array([[1, 1, 0, 0, 1, 0], [0, 1, 1, 1, 0, 1]])
    c = CopyNearestExpand().fit(A_sort, order=None)
    # observed columns 0 and 2 as (0, 1): row 1 agrees on both, row 0 on none
    est = c.estimate(np.array([0, 2]), np.array([0, 1]))
    assert c.nearest(np.array([0, 2]), np.array([0, 1])) == 1
    assert est.per_sample.tolist() == [0, 1, 1, 1, 0, 1]
    # observations override the copied row
    est2 = c.estimate(
        np.array([0, 1]), np.array([1, 0])
    )  # row 0: (1,1) dist 1, row 1: (0,1) dist 2
    assert est2.per_sample.tolist() == [1, 0, 0, 0, 1, 0] and est2.acc == pytest.approx(2 / 6)
    cols = c.select(6, 3, np.random.default_rng(0))
    assert len(cols) == 3 and (np.diff(cols) > 0).all()


# --- serial additions (App. G) -----------------------------------------------------------


def test_serial_additions_keep_the_order_and_do_not_depend_on_arrival_order():
    A = synthetic(40, 400, 11)
    A_sort, A_new = A[:10], A[10:]
    base = InsertM().fit(A_sort)
    table, final = serial_additions(A_sort, A_new, 32)
    assert table["order_unchanged"].all()
    assert np.array_equal(final, base.order_)
    perm = np.random.default_rng(0).permutation(len(A_new))
    table2, final2 = serial_additions(A_sort, A_new[perm], 32)
    assert np.array_equal(final2, final)
    assert np.array_equal(table2["threshold"].to_numpy(), table["threshold"].to_numpy()[perm])
    # each step equals a one-off insert_M estimate on the original cache
    cols = base.select(400, 32)
    assert table["est_acc"].tolist() == [base.estimate(cols, r[cols]).acc for r in A_new]


def test_threads_give_identical_results_and_full_progress():
    A = synthetic(50, 900, 12)
    one = run_sweep(A[:10], A[10:], [8, 90, 900], chunk_rows=3, decompose=True)
    seen = []
    two = run_sweep(
        A[:10], A[10:], [8, 90, 900], chunk_rows=3, decompose=True, threads=2, progress=seen.append
    )
    pd.testing.assert_frame_equal(one.per_model, two.per_model)
    pd.testing.assert_frame_equal(one.table, two.table)
    assert seen[-1] == 1.0 and len(seen) == 14


def test_external_estimators_are_found_lazily_and_run_through_the_protocol_path():
    names = available_methods()
    assert names[:3] == ["midpoint", "reference", "copy-nearest"]
    # The first estimator that predicts every sample (the random baseline predicts none).
    external = [n for n in names[3:] if capabilities(n).per_sample]
    A = synthetic(14, 300, 13)
    res = run_sweep(A[:6], A[6:], [16, 64], search=external[0], seed=1)
    assert res.table["budget"].tolist() == [16, 64]
    assert res.per_model["mae"].between(0, 1).all()


def test_compute_order_by_name():
    from lifelong_core.sortsearch import compute_order

    A = synthetic(8, 120, 14)
    C = np.clip(A * 0.5 + np.random.default_rng(0).random(A.shape) * 0.5, 0, 1)
    assert sorted(compute_order(A, "recursive", depth=3).tolist()) == list(range(120))
    assert np.array_equal(
        compute_order(A, "confidence", C), np.argsort(-C.sum(axis=0), kind="stable")
    )
    with pytest.raises(InputError, match="needs a confidence matrix"):
        compute_order(A, "confidence")
    with pytest.raises(InputError, match="unknown sort"):
        compute_order(A, "median")
    with pytest.raises(InputError, match="shape"):
        run_sweep(A[:3], A[3:], [8], sort="confidence", confidence=C)


class _NoRows(RowSource):
    """A source that promises rows and yields none (a broken reader)."""

    n, row_ids = 50, np.arange(3)

    def spans(self, rows):
        return []

    def dense_chunks(self, rows):
        return iter(())

    def read_dense(self, start, stop):
        raise AssertionError("never read")


@pytest.mark.parametrize("search", ["midpoint", "copy-nearest"])
def test_empty_block_source_is_an_input_error(search):
    A = synthetic(6, 50, 15)
    with pytest.raises(InputError, match="no blocks"):
        run_sweep(A[:3], _NoRows(), [8], search=search)
