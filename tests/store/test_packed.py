"""Bulk packed import and packed reads of the store."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.bits import pack_rows
from lifelong_core.errors import InputError
from lifelong_core.rows import PackedArray
from lifelong_core.store import Store
from lifelong_core.store.packed_bulk import StoreRows, insert_packed_rows, read_packed_rows
from lifelong_core.sweeping import run_sweep


def run_sweep_packed(A_sort, A_eval, budgets=None, **kwargs):
    """The packed kernel on a thread pool (what ``run_sweep_packed`` was before the one front door)."""
    return run_sweep(A_sort, A_eval, budgets, kernel="packed", executor="threads", **kwargs)


def _samples(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"sample_id": [f"s{j}" for j in range(n)], "dataset": "synth", "domain": "d"}
    )


def _models(lo: int, hi: int) -> list[str]:
    return [f"m{i}" for i in range(lo, hi)]


@pytest.fixture()
def bulk_store(tmp_path, monkeypatch):
    """A store with 3 blocks per row (small blocks: the last one partial, n % 8 != 0)."""
    import lifelong_core.store.store as store_mod
    import lifelong_core.store.writing as writing_mod

    # New blocks are cut by the writer; the file records the size it was created with.
    monkeypatch.setattr(writing_mod, "BLOCK_SIZE", 96)
    monkeypatch.setattr(store_mod, "BLOCK_SIZE", 96)
    rng = np.random.default_rng(0)
    n = 203
    A = (rng.random((60, n)) < 0.6).astype(np.uint8)
    path = tmp_path / "bulk.duckdb"
    with Store.create(path) as st:
        st.add_dataset("synth", synthetic=True)
        insert_packed_rows(
            st, pack_rows(A[:25]), n, _models(0, 25), _samples(n), source="first", model_chunk=7
        )
        insert_packed_rows(
            st, pack_rows(A[25:]), n, _models(25, 60), None, source="second", model_chunk=7
        )
    return path, A


def test_import_then_read_any_models(bulk_store):
    path, A = bulk_store
    with Store.open(path) as st:
        assert (st.n_models, st.n_samples) == A.shape
        assert len(st.block_table["block_id"]) == 3
        assert np.array_equal(st.matrix(), A)
        for models in (np.arange(10, 40), np.array([59, 3, 3, 17, 0]), np.array([42])):
            got, n = read_packed_rows(st, models)
            assert n == A.shape[1]
            assert np.array_equal(got, pack_rows(A[models]))
            assert np.array_equal(got, st.read_packed(models)[0])
        log = st.log()
        assert list(log["action"]) == ["insert_packed", "insert_packed"]
        assert log["entries"].sum() == A.size


def test_bulk_rows_are_written_model_by_model(bulk_store):
    # A model's full blocks sit next to each other (then the chunk's short last blocks),
    # which is what lets a scattered read touch few places of the file.
    path, _ = bulk_store
    with Store.open(path) as st:
        order = st.cursor().sql("SELECT model_idx, block_id FROM bits ORDER BY rowid").fetchnumpy()
    midx, bid = (
        order["model_idx"][:21],
        order["block_id"][:21],
    )  # the first chunk: 7 models x 3 blocks
    assert midx[:14].tolist() == [m for m in range(7) for _ in range(2)]
    assert bid[:14].tolist() == [0, 1] * 7
    assert midx[14:].tolist() == list(range(7)) and set(bid[14:].tolist()) == {2}


@pytest.mark.parametrize(
    "models", [np.array([1, 2, 3, 40, 41, 7, 7, 59]), np.arange(0, 60, 3), np.arange(5, 50)]
)
def test_scattered_and_range_reads_agree_with_one_scan(bulk_store, monkeypatch, models):
    import lifelong_core.store.packed_bulk as pb

    path, A = bulk_store
    with Store.open(path) as st:
        by_runs, _ = read_packed_rows(st, models)
        monkeypatch.setattr(pb, "POINT_READ_MAX_RUNS", 0)  # one filtered scan for any selection
        by_scan, _ = read_packed_rows(st, models)
    assert np.array_equal(by_runs, pack_rows(A[models]))
    assert np.array_equal(by_scan, by_runs)


def test_store_rows_source_gives_the_array_sweep(bulk_store):
    path, A = bulk_store
    sort_rows, eval_rows = np.arange(0, 60, 4), np.setdiff1d(np.arange(60), np.arange(0, 60, 4))
    want = run_sweep_packed(
        PackedArray(pack_rows(A), A.shape[1], sort_rows),
        PackedArray(pack_rows(A), A.shape[1], eval_rows),
        [8, 64, 203],
    )
    got = run_sweep_packed(
        StoreRows(path, sort_rows), StoreRows(path, eval_rows), [8, 64, 203], chunk_rows=9
    )
    pd.testing.assert_frame_equal(want.per_model, got.per_model)
    pd.testing.assert_frame_equal(want.table, got.table)


def test_bad_bulk_imports_leave_the_store_unchanged(bulk_store):
    path, A = bulk_store
    P = pack_rows(A[:2])
    with Store.open(path, read_only=False) as st:
        before = (st.n_models, len(st.log()))
        with pytest.raises(InputError, match="already in the store"):
            insert_packed_rows(st, P, A.shape[1], ["m1", "new"])
        with pytest.raises(InputError, match="bytes"):
            insert_packed_rows(st, P[:, :-1], A.shape[1], ["x1", "x2"])
        with pytest.raises(InputError, match="2 packed rows but 3 model ids"):
            insert_packed_rows(st, P, A.shape[1], ["x1", "x2", "x3"])
        with pytest.raises(InputError, match="store holds 203"):
            insert_packed_rows(st, pack_rows(A[:2, :100]), 100, ["x1", "x2"])
        # Known samples that cover a stored block only partly.
        with pytest.raises(InputError, match="whole and in store order"):
            insert_packed_rows(st, pack_rows(A[:2, :100]), 100, ["x1", "x2"], _samples(100))
        assert (st.n_models, len(st.log())) == before
        assert np.array_equal(st.matrix(), A)


def test_reading_a_model_with_gaps_names_the_gap(tmp_path):
    path = tmp_path / "gaps.duckdb"
    long = pd.DataFrame(
        {
            "model": ["a", "a", "b"],
            "sample": ["s0", "s1", "s0"],
            "correct": [1, 0, 1],
            "dataset": "synth",
        }
    )
    with Store.create(path) as st:
        st.insert_long(long)
        with pytest.raises(InputError, match="no prediction"):
            read_packed_rows(st, [0, 1])
        got, n = read_packed_rows(st, [0])
        assert n == 2 and np.array_equal(got, pack_rows(np.array([[1, 0]])))


def test_store_rows_pickle_to_workers_and_report_progress(bulk_store):
    import pickle

    path, A = bulk_store
    src = StoreRows(path, np.array([5, 1, 44]))
    assert np.array_equal(src.read(0, 3), pack_rows(A[[5, 1, 44]]))
    copy = pickle.loads(pickle.dumps(src))
    assert copy._store is None
    assert np.array_equal(copy.read(1, 3), pack_rows(A[[1, 44]]))
    seen = []
    run_sweep_packed(
        StoreRows(path, np.arange(10)),
        StoreRows(path, np.arange(10, 60)),
        [8],
        chunk_rows=16,
        progress=seen.append,
    )
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 1 + 4
