"""The Rankings page under streamlit's AppTest: every data source and the main interactions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.store import Store

from apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "pages" / "6_Rankings.py")


def make_store(path: Path, categories=("alpha", "beta", "gamma"), m: int = 16, per_domain: int = 60) -> Path:
    """A small store: two domains per category, models of spread-out skill."""
    rng = np.random.default_rng(0)
    domains = [(f"{c}-{k}", c) for c in categories for k in range(2)]
    smp = pd.DataFrame(
        {
            "sample_id": [f"s{i}" for i in range(len(domains) * per_domain)],
            "dataset": "toy",
            "domain": [d for d, _ in domains for _ in range(per_domain)],
            "category": [c for _, c in domains for _ in range(per_domain)],
            "label": 0,
            "split": "test",
        }
    )
    difficulty = rng.random(len(smp))
    skill = np.linspace(0.2, 0.9, m)[:, None]
    A = (rng.random((m, len(smp))) < np.clip(skill + 0.5 - difficulty, 0.02, 0.98)).astype(np.uint8)
    models = pd.DataFrame({"model_id": [f"id{i}" for i in range(m)], "name": [f"model-{i:02d}" for i in range(m)]})
    with Store.create(path) as st:
        st.insert_matrix(A, models=models, samples=smp, source="toy.npy")
    return path


@pytest.fixture(scope="module")
def toy_store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("rank") / "toy.duckdb")


@pytest.fixture
def use_store(toy_store, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(toy_store))
    return toy_store


def run_page(**query) -> AppTest:
    return open_page(PAGE, query, timeout=180)


def test_default_shows_published_vtab_figures_without_a_store(monkeypatch, tmp_path):
    monkeypatch.setenv("LBE_STORE", str(tmp_path / "absent.duckdb"))
    at = run_page()
    assert at.radio(key="source").value == "published"
    table = at.dataframe[0].value
    assert len(table) == 16 and table["model"].iloc[0] == "Sup-Rotation-100%"
    assert table["overall"].iloc[0] == "68.0 (67.8, 68.1)"
    assert len(at.get("plotly_chart")) == 1
    at.selectbox(key="pub_method").set_value("bayesian").run()
    assert not at.exception
    assert at.dataframe[0].value["overall"].iloc[0] == "68.0 (67.7, 68.2)"
    at.selectbox(key="pub_method").set_value("bootstrap").run()
    at.toggle(key="pub_norm").set_value(True).run()
    assert at.dataframe[0].value["overall"].iloc[0] == "89.5 (89.0, 90.0)"


def test_store_source_all_tabs(use_store):
    at = run_page(source="store")
    assert at.radio(key="source").value == "store"
    titles = [t.label for t in at.tabs]
    assert titles == ["Leaderboard", "Pairwise differences", "Rank intervals", "Bayesian model"]
    # 16 models > 12: the default ranks the 12 most accurate.
    assert len(at.multiselect(key="models-store").value) == 12
    board = [d.value for d in at.dataframe if "scope" in d.value.columns][0]
    overall = board[board["scope"] == "overall"].sort_values("mean", ascending=False)
    assert overall["model"].iloc[0] == "model-15"
    assert (overall["lo"] <= overall["mean"]).all() and (overall["mean"] <= overall["hi"]).all()
    rank_table = [d.value for d in at.dataframe if "Average rank" in d.value.columns][0]
    assert list(rank_table.columns)[1:] == [
        "By average", "Geometric mean", "Average rank", "Average rank (noise)", "Average rank (1% bins)"
    ]
    labels = [m.label for m in at.metric]
    assert "Largest split R-hat" in labels and "Smallest effective sample size" in labels
    assert len(at.get("plotly_chart")) >= 5


def test_store_interactions_level_normalisation_and_pairs(use_store):
    at = run_page(source="store")
    before = [d.value for d in at.dataframe if "scope" in d.value.columns][0]
    at.select_slider(key="level").set_value(0.95).run()
    assert not at.exception
    after = [d.value for d in at.dataframe if "scope" in d.value.columns][0]
    assert ((after["hi"] - after["lo"]).sum()) > ((before["hi"] - before["lo"]).sum())
    at.toggle(key="normalized").set_value(True).run()
    assert not at.exception
    at.multiselect(key="pair-store").set_value(["model-15", "model-14", "model-13"]).run()
    assert not at.exception
    diffs = [d.value for d in at.dataframe if "model_a" in d.value.columns][0]
    assert len(diffs) == 3 and diffs["level"].iloc[0] == pytest.approx(1 - 0.05 / 3)
    at.selectbox(key="trace_param").set_value("a").run()
    assert not at.exception


def test_sort_and_search_estimates_against_truth(use_store):
    at = run_page(source="estimated")
    assert not at.error
    comp = [d.value for d in at.dataframe if "true_pct" in d.value.columns][0]
    assert len(comp) == 4  # a quarter of the 16 models are held out by default
    assert {"estimated_pct", "true_pct", "error_pts", "true_in_interval"} <= set(comp.columns)
    assert "True accuracy inside the bootstrap interval" in [m.label for m in at.metric]
    at.selectbox(key="ss_budget").set_value(50).run()
    assert not at.exception

def test_sort_and_search_estimates_carry_the_estimators_own_intervals(use_store):
    at = run_page(source="estimated")
    assert not at.exception
    assert at.selectbox(key="ss_method").value == "mirt"
    own = [d.value for d in at.dataframe if "est_lo_pct" in d.value.columns][0]
    assert len(own) == 4
    assert ((own["est_lo_pct"] <= own["est_pct"]) & (own["est_pct"] <= own["est_hi_pct"])).all()
    assert "True accuracy inside the estimator's 95% interval" in [m.label for m in at.metric]
    at.selectbox(key="ss_method").set_value("midpoint").run()
    assert not at.exception
    assert not [d for d in at.dataframe if "est_lo_pct" in d.value.columns]
    assert "True accuracy inside the estimator's 95% interval" not in [m.label for m in at.metric]


def test_upload_source_waits_for_a_file(use_store):
    at = run_page(source="upload")
    assert any("Upload a counts.csv" in i.value for i in at.info)
