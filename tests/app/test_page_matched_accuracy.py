"""The Matched-accuracy page under streamlit's AppTest: defaults and main interactions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.store import Store
from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "8_Matched_accuracy.py")


def make_store(path: Path, with_bare: bool = True, with_extras: bool = True) -> Path:
    rng = np.random.default_rng(0)
    n_src, n_tgt, k, m = 120, 60, 5, 6
    smp = pd.DataFrame(
        {
            "sample_id": [f"s{i}" for i in range(n_src + n_tgt)],
            "dataset": "lifelong-digits",
            "domain": ["clean"] * n_src + ["clean-replication"] * n_tgt,
            "category": "handwriting",
            "label": rng.integers(k, size=n_src + n_tgt),
            "split": "test",
        }
    )
    y = smp["label"].to_numpy()
    skill = np.linspace(0.4, 0.95, m)[:, None]
    conf = np.clip(rng.normal(skill, 0.1, size=(m, y.size)), 1 / k, 1).round(3).astype(np.float32)
    pred = np.where(rng.random((m, y.size)) < conf, y, (y + 1) % k).astype(np.int32)
    models = pd.DataFrame(
        {"model_id": [f"id{i}" for i in range(m)], "name": [f"model-{i}" for i in range(m)]}
    )
    with Store.create(path) as st:
        st.insert_matrix(
            (pred == y).astype(np.uint8),
            models=models,
            samples=smp,
            source="toy.npy",
            extras={"predicted": pred, "confidence": conf} if with_extras else None,
        )
        if with_bare:
            st.insert_matrix(
                np.ones((1, y.size), np.uint8), models=["bare"], samples=smp, source="bare.npy"
            )
    return path


@pytest.fixture
def toy_store(tmp_path, monkeypatch):
    path = make_store(tmp_path / "toy.duckdb")
    monkeypatch.setenv("LBE_STORE", str(path))
    return path


def run_page(**query) -> AppTest:
    return open_page(PAGE, query, timeout=120)


def test_toy_store_all_models_default(toy_store):
    at = run_page()
    assert at.selectbox(key="match-src-ds").value == "lifelong-digits"
    assert at.multiselect(key="match-src-dom-lifelong-digits").value == ["clean"]
    assert at.multiselect(key="match-tgt-dom-lifelong-digits").value == ["clean-replication"]
    assert at.selectbox(key="match-model").value == "All models"
    # The model without confidences is left out, and the page says why.
    assert any("1 model(s) left out" in w.value for w in at.warning)
    assert len(at.dataframe) >= 1
    table = at.dataframe[0].value
    assert len(table) == 6 and table["acc_source"].is_monotonic_increasing
    assert at.query_params["crit"] == ["label-prob"] or at.query_params["crit"] == "label-prob"


def test_toy_store_one_model_and_criterion_switch(toy_store):
    at = run_page()
    at.selectbox(key="match-model").select("model-3").run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "Matched acc., target" in labels and "Fraction unmatched" in labels
    before = {m.label: m.value for m in at.metric}
    at.radio(key="match-crit").set_value("prob").run()
    assert not at.exception
    after = {m.label: m.value for m in at.metric}
    assert (
        after["Accuracy, source"] == before["Accuracy, source"]
    )  # accuracy does not depend on matching
    # Probability-only matching can pair across labels, so at most as many targets stay unmatched.
    assert float(after["Fraction unmatched"].rstrip("%")) <= float(
        before["Fraction unmatched"].rstrip("%")
    )


def test_model_without_confidence_is_named(toy_store):
    at = run_page(model="bare")
    errors = " ".join(e.value for e in at.error)
    assert "confidence" in errors or "predicted" in errors
    assert "needs the label, predicted and confidence columns" in errors


def test_store_without_any_confidence(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "LBE_STORE", str(make_store(tmp_path / "bare.duckdb", with_bare=False, with_extras=False))
    )
    at = run_page()
    # Not an error on a valid store: the page names what an import must carry.
    assert not at.error
    assert any("predicted, confidence" in i.value and "**confidence**" in i.value for i in at.info)


def test_url_state_round_trip(toy_store):
    at = run_page(
        model="model-1", eps="0.02", crit="prob", runs="3", seed="4", tgt_dom="clean-replication"
    )
    assert at.selectbox(key="match-model").value == "model-1"
    assert at.number_input(key="match-eps").value == pytest.approx(0.02)
    assert at.radio(key="match-crit").value == "prob"
    assert at.number_input(key="match-runs").value == 3
    at.multiselect(key="match-src-dom-lifelong-digits").set_value(
        []
    ).run()  # whole dataset as source
    assert not at.exception
    assert any("all domains" in c.value for c in at.caption)


# ------------------------------------------------------------------ on the bundled demo store
@pytest.fixture
def demo_store(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    return demo_store_path


@pytest.mark.slow
def test_demo_default_is_the_replication_pair_for_all_models(demo_store):
    at = run_page()
    assert at.multiselect(key="match-src-dom-lifelong-digits").value == ["clean"]
    assert at.multiselect(key="match-tgt-dom-lifelong-digits").value == ["clean-replication"]
    assert not at.error
    table = at.dataframe[0].value
    with Store.open(demo_store) as st:
        n_models = st.counts("lifelong-digits")["model"].nunique()
    assert len(table) == n_models  # every digits model has predicted labels and confidences
    # Only models recorded on both sides are offered: not the leaderboard's language models.
    assert len(at.selectbox(key="match-model").options) == 1 + n_models
    assert table["acc_source"].is_monotonic_increasing
    assert ((table["fraction_unmatched"] >= 0) & (table["fraction_unmatched"] <= 1)).all()
    labels = [m.label for m in at.metric]
    assert "Mean matched gap" in labels and "Acc. on unmatched" in labels  # summary + detail view


def test_demo_one_model_then_criterion(demo_store):
    at = run_page()
    best = at.dataframe[0].value["model"].iloc[-1]
    at.selectbox(key="match-model").select(best).run()
    assert not at.exception and not at.error
    first = {m.label: m.value for m in at.metric}
    assert set(first) == {
        "Accuracy, source",
        "Accuracy, target",
        "Matched acc., source",
        "Matched acc., target",
        "Fraction unmatched",
        "Acc. on unmatched",
    }
    at.radio(key="match-crit").set_value("prob").run()
    assert not at.exception and not at.error
    second = {m.label: m.value for m in at.metric}
    assert second["Accuracy, source"] == first["Accuracy, source"]
    assert second["Accuracy, target"] == first["Accuracy, target"]
    per_run = next(d.value for d in at.dataframe if "run" in d.value.columns)
    assert per_run["run"].tolist() == list(range(10))


def test_stale_or_bad_url_values_fall_back(toy_store):
    at = run_page(eps="nan", runs="many", crit="nope", model="gone", src_dom="nowhere", seed="-3")
    assert at.number_input(key="match-eps").value == pytest.approx(0.005)
    assert at.number_input(key="match-runs").value == 10
    assert at.radio(key="match-crit").value == "label-prob"
    assert at.selectbox(key="match-model").value == "All models"
    assert at.multiselect(key="match-src-dom-lifelong-digits").value == ["clean"]
    assert at.number_input(key="match-seed").value == 0


def test_empty_store(tmp_path, monkeypatch):
    path = tmp_path / "empty.duckdb"
    Store.create(path).close()
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run_page()
    assert any("holds no dataset" in i.value and "Data page" in i.value for i in at.info)


def test_a_model_name_with_markdown_is_shown_as_text(tmp_path, monkeypatch):
    """The one-model caption quoted the model as Markdown: a name holding an image made
    every visitor's browser fetch it."""
    path = make_store(tmp_path / "toy.duckdb", with_bare=False)
    hostile = "![t](http://127.0.0.1:9/t.png) **x**"
    with Store.open(path, read_only=False) as st:
        st.cursor().execute("UPDATE models SET name = ? WHERE model_id = 'id3'", [hostile])
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run_page()
    at.selectbox(key="match-model").select(hostile).run()
    assert not at.exception
    caption = next(c.value for c in at.caption if "source and" in c.value)
    assert "![" not in caption and "\\!\\[t\\]" in caption


def test_model_list_leaves_out_another_datasets_models(tmp_path, monkeypatch):
    """A store with a second dataset run by other models: comparing two domains of the
    first offers only that dataset's models (the other dataset's have nothing here)."""
    path = make_store(tmp_path / "two.duckdb", with_bare=False)
    rng = np.random.default_rng(1)
    other = pd.DataFrame(
        {
            "sample_id": [f"o{i}" for i in range(40)],
            "dataset": "other-benchmark",
            "domain": ["a"] * 20 + ["b"] * 20,
            "category": "x",
            "label": rng.integers(3, size=40),
            "split": "test",
        }
    )
    with Store.open(path, read_only=False) as st:
        st.insert_matrix(
            (rng.random((3, 40)) < 0.6).astype(np.uint8),
            models=pd.DataFrame(
                {
                    "model_id": [f"other{i}" for i in range(3)],
                    "name": [f"other-{i}" for i in range(3)],
                }
            ),
            samples=other,
            source="other.npy",
            extras={
                "predicted": rng.integers(3, size=(3, 40)).astype(np.int32),
                "confidence": rng.random((3, 40)).astype(np.float32),
            },
        )
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run_page()
    assert at.selectbox(key="match-src-ds").value == "lifelong-digits"
    offered = at.selectbox(key="match-model").options
    assert "model-0" in offered and not any(o.startswith("other-") for o in offered)
