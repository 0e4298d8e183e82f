"""Both sides of a comparison read from a real (temporary) store."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.errors import InputError
from lifelong_core.matching import matched_accuracy
from lifelong_core.matching.store_pair import (
    Side,
    load_pair,
    model_names,
    read_samples,
)
from lifelong_core.store import Store
from lifelong_core.workflows.matching import compare_block

N_A, N_B, K = 40, 25, 4


def samples(rng):
    return pd.DataFrame(
        {
            "sample_id": [f"s{i}" for i in range(N_A + N_B)],
            "dataset": "toy",
            "domain": ["a"] * N_A + ["b"] * N_B,
            "category": "c",
            "label": rng.integers(K, size=N_A + N_B),
            "split": "test",
        }
    )


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("store") / "toy.duckdb"
    smp = samples(rng)
    y = smp["label"].to_numpy()
    m = 3
    pred = np.where(rng.random((m, y.size)) < 0.7, y, (y + 1) % K).astype(np.int32)
    conf = rng.uniform(0.3, 1.0, size=(m, y.size)).round(2).astype(np.float32)
    with Store.create(path) as st:
        st.insert_matrix(
            (pred == y).astype(np.uint8),
            models=["m0", "m1", "m2"],
            samples=smp,
            source="toy.npy",
            extras={"predicted": pred, "confidence": conf},
        )
        # A model recorded without predicted labels or confidences.
        st.insert_matrix(
            np.ones((1, y.size), np.uint8), models=["bare"], samples=smp, source="bare.npy"
        )
    return path


def test_load_and_compare(store_path):
    with Store.open(store_path) as st:
        pair = read_samples(st, Side("toy", ("a",)), Side("toy", ("b",)))
        data = load_pair(st, pair, models=[0, 1, 2])
        assert data.models == ("m0", "m1", "m2")
        assert data.pred_source.shape == (3, N_A) and data.conf_target.shape == (3, N_B)
        assert data.skipped == ()
        table, skipped = compare_block(
            st, pair, [2, 0], eps=0.05, criterion="label-prob", runs=3, seed=1
        )
        truth = st.matrix(models=[0], samples=st.samples("toy", ["a"])["sample_idx"])
    assert skipped == ()
    assert set(table["model"]) == {"m0", "m2"}
    src, tgt = data.predictions("m0")
    assert src.accuracy == pytest.approx(truth.mean())
    one = matched_accuracy(src, tgt, eps=0.05, runs=3, seed=1)
    row = table.set_index("model").loc["m0"]
    assert row["matched_acc_target"] == pytest.approx(one.matched_acc_target)


def test_models_without_confidence_are_skipped_or_named(store_path):
    with Store.open(store_path) as st:
        pair = read_samples(st, Side("toy", ("a",)), Side("toy", ("b",)))
        data = load_pair(st, pair)
        assert data.models == ("m0", "m1", "m2")
        assert len(data.skipped) == 1 and data.skipped[0].startswith("bare:")
        table, skipped = compare_block(
            st, pair, [3], eps=0.005, criterion="label-prob", runs=10, seed=0
        )
        assert table.empty and next(iter(table.columns)) == "model" and len(skipped) == 1
        with pytest.raises(InputError) as info:
            load_pair(st, pair, models=[3])
    msg = str(info.value)
    assert "predicted" in msg or "confidence" in msg
    assert "needs the label, predicted and confidence columns" in msg


def test_whole_dataset_side_and_bad_sides(store_path):
    with Store.open(store_path) as st:
        data = load_pair(st, read_samples(st, Side("toy"), Side("toy", ("b",))), models=[1])
        assert data.y_source.size == N_A + N_B
        with pytest.raises(InputError, match="no dataset 'nope'"):
            read_samples(st, Side("nope"), Side("toy"))
        with pytest.raises(InputError, match="no domain 'z' \\(the target set\\)"):
            read_samples(st, Side("toy"), Side("toy", ("z",)))
        with pytest.raises(InputError, match="no model with index 9"):
            load_pair(st, read_samples(st, Side("toy"), Side("toy")), models=[9])


def test_model_names_disambiguate_repeats():
    df = pd.DataFrame({"model_id": ["a", "b", "c"], "name": ["x", "x", None]})
    assert model_names(df) == ["x [a]", "x [b]", "c"]


def test_unlabeled_samples_are_named(tmp_path):
    path = tmp_path / "nolabel.duckdb"
    smp = pd.DataFrame({"sample_id": ["u0", "u1"], "dataset": "raw", "domain": "d"})  # no labels
    with Store.create(path) as st:
        st.insert_matrix(
            np.ones((1, 2), np.uint8),
            models=["m"],
            samples=smp,
            source="raw.npy",
            extras={
                "predicted": np.ones((1, 2), np.int32),
                "confidence": np.ones((1, 2), np.float32),
            },
        )
    with (
        Store.open(path) as st,
        pytest.raises(InputError, match="without a label \\(first: 'u0'\\)"),
    ):
        read_samples(st, Side("raw"), Side("raw"))
