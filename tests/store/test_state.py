"""The lifelong state kept in the store follows every import.

After each import of a sequence (insert_M: new models; insert_D: new samples, evaluated
by every model or by only some; a second dataset sharing a storage block; filling in a
model's missing entries; an estimated row), the kept Sort state must equal a fresh
computation from the cache: members = real models evaluated on every sample of the
dataset, column sums over them, stable order of the sums.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.errors import InputError
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.store import Store
from lifelong_core.store import state as lstate


def fresh(st: Store, dataset: str):
    smp = st.samples(dataset)
    sidx = np.sort(smp["sample_idx"].to_numpy())
    models = st.models()
    models = models[~models["estimated"].astype(bool)]
    ok = st.known(models["model_idx"].to_numpy(), sidx).all(axis=1)
    members = np.sort(models["model_idx"].to_numpy()[ok])
    A = st.matrix(members, sidx)
    sums = A.sum(axis=0, dtype=np.int64)
    return members, sidx, sums, order_from_sums(sums, "stable"), A.sum(axis=1, dtype=np.int64)


def check(st: Store, dataset: str):
    kept = lstate.load_sort_state(st, dataset)
    members, sidx, sums, order, row_sums = fresh(st, dataset)
    assert kept.log_id == lstate.latest_log_id(st)
    assert np.array_equal(kept.members, members)
    assert np.array_equal(kept.samples, sidx)
    assert np.array_equal(kept.sums, sums)
    assert np.array_equal(kept.order, order)
    assert np.array_equal(kept.row_sums, row_sums)


def samples(ids, dataset="ds"):
    return pd.DataFrame({"sample_id": ids, "dataset": dataset})


def test_kept_sort_state_equals_a_fresh_computation_after_every_import(tmp_path):
    rng = np.random.default_rng(0)
    with Store.create(tmp_path / "s.duckdb") as st:
        st.add_dataset("ds")
        A = (rng.random((12, 203)) < rng.random(203)).astype(np.uint8)
        st.insert_matrix(A, [f"m{i}" for i in range(12)], samples([f"s{j}" for j in range(203)]))
        assert lstate.load_sort_state(st, "ds") is None
        lstate.refresh_sort_state(st, "ds")
        check(st, "ds")
        # insert_M: new models on every sample
        st.insert_matrix(
            (rng.random((5, 203)) < 0.6).astype(np.uint8),
            [f"n{i}" for i in range(5)],
            samples([f"s{j}" for j in range(203)]),
        )
        check(st, "ds")
        # insert_D: new samples, every model evaluated on them (columns appended)
        every = st.models()["model_id"].tolist()
        st.insert_matrix(
            (rng.random((len(every), 37)) < 0.5).astype(np.uint8),
            every,
            samples([f"t{j}" for j in range(37)]),
        )
        check(st, "ds")
        # a second dataset, sharing the storage block, evaluated by some models only
        st.add_dataset("other")
        st.insert_matrix(
            (rng.random((3, 20)) < 0.5).astype(np.uint8),
            every[:3],
            samples([f"o{j}" for j in range(20)], "other"),
        )
        check(st, "ds")
        # insert_D evaluated by only some models: the others leave the Sort set
        st.insert_matrix(
            (rng.random((6, 9)) < 0.5).astype(np.uint8),
            every[:6],
            samples([f"u{j}" for j in range(9)]),
        )
        check(st, "ds")
        # filling in the missing entries: they join again
        st.insert_matrix(
            (rng.random((len(every) - 6, 9)) < 0.5).astype(np.uint8),
            every[6:],
            samples([f"u{j}" for j in range(9)]),
        )
        check(st, "ds")
        # an estimated row never joins the Sort set
        est = pd.DataFrame({"model_id": ["e0"], "estimated": [True]})
        st.insert_matrix(
            np.ones((1, len(st.samples("ds"))), dtype=np.uint8),
            est,
            samples(st.samples("ds")["sample_id"].tolist()),
        )
        check(st, "ds")
        lstate.refresh_sort_state(st, "other")
        check(st, "other")
        assert set(lstate.sort_states(st)["dataset"]) == {"ds", "other"}
        assert not lstate.sort_states(st)["stale"].any()


def test_item_state_round_trip_and_read_only_handles(tmp_path):
    path = tmp_path / "s.duckdb"
    rng = np.random.default_rng(1)
    with Store.create(path) as st:
        st.add_dataset("ds")
        st.insert_matrix(
            (rng.random((4, 30)) < 0.5).astype(np.uint8),
            list("abcd"),
            samples([f"s{j}" for j in range(30)]),
        )
        item = lstate.ItemState(
            "ds",
            "mirt",
            0,
            {"k": 2},
            np.arange(4),
            np.arange(30),
            rng.random(30).astype(np.float32),
            rng.random((30, 2)).astype(np.float32),
            rng.random((4, 2)),
            lstate.utc_now(),
            1.5,
        )
        lstate.save_item_state(st, item)
    with Store.open(path) as ro:
        got = lstate.load_item_state(ro, "ds", "mirt")
        assert (
            np.array_equal(got.w, item.w)
            and np.array_equal(got.theta, item.theta)
            and got.params == {"k": 2}
        )
        assert lstate.load_sort_state(ro, "ds") is None
        with pytest.raises(InputError):
            lstate.refresh_sort_state(ro, "ds")


def test_a_dataset_without_a_complete_model_is_one_sentence(tmp_path):
    with (
        Store.create(tmp_path / "s.duckdb") as st,
        pytest.raises(InputError, match="no dataset 'nope'"),
    ):
        lstate.refresh_sort_state(st, "nope")
