"""The Rankings page under streamlit's AppTest: every data source and the main interactions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from lifelong_core.methods.registry import DEFAULT_METHOD
from lifelong_core.store import Store
from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "6_Rankings.py")


def make_store(
    path: Path, categories=("alpha", "beta", "gamma"), m: int = 16, per_domain: int = 60
) -> Path:
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
    models = pd.DataFrame(
        {"model_id": [f"id{i}" for i in range(m)], "name": [f"model-{i:02d}" for i in range(m)]}
    )
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


TABS = ["Leaderboard", "Pairwise differences", "Rank intervals", "Bayesian model"]
RANK_COLUMNS = [
    "By average",
    "Geometric mean",
    "Average rank",
    "Average rank (noise)",
    "Average rank (1% bins)",
]
BAYES_METRICS = {"Largest split R-hat", "Smallest effective sample size"}


def frames_with(at: AppTest, column: str) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe if column in d.value.columns]


def test_store_source_leaderboard_tab(use_store):
    at = run_page(source="store")
    assert at.radio(key="source").value == "store"
    assert [t.label for t in at.tabs] == TABS
    # 16 models, at most 20: the default ranks them all (a larger source, its 12 best).
    assert len(at.multiselect(key="models-store").value) == 16
    board = frames_with(at, "scope")[0]
    overall = board[board["scope"] == "overall"].sort_values("mean", ascending=False)
    assert overall["model"].iloc[0] == "model-15"
    assert (overall["lo"] <= overall["mean"]).all() and (overall["mean"] <= overall["hi"]).all()
    assert len(at.get("plotly_chart")) == 1


def test_store_source_pairwise_tab(use_store):
    at = run_page(source="store", tab="Pairwise differences")
    diffs = frames_with(at, "model_a")[0]
    assert len(diffs) == 5 * 4 // 2  # the five best models by default
    assert diffs["level"].iloc[0] == pytest.approx(1 - 0.05 / 10)
    assert len(at.get("plotly_chart")) == 1


def test_store_source_rank_intervals_tab(use_store):
    at = run_page(source="store", tab="Rank intervals")
    rank_table = frames_with(at, "Average rank")[0]
    assert list(rank_table.columns) == ["model"] + RANK_COLUMNS
    assert rank_table["model"].iloc[0] == "model-15"  # in leaderboard order
    at.selectbox(key="scheme").set_value("geometric").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1


@pytest.mark.slow
def test_store_source_bayesian_tab(use_store):
    at = run_page(source="store", tab="Bayesian model")
    assert {m.label for m in at.metric} >= BAYES_METRICS
    intervals = frames_with(at, "mean_bayes")[0]
    assert {"mean_boot", "lo_boot", "hi_boot"} <= set(intervals.columns) and len(intervals) == 16
    assert len(at.get("plotly_chart")) == 3  # rank probabilities, a trace, the pairwise matrix


@pytest.mark.slow
def test_hidden_tabs_compute_nothing(use_store, monkeypatch):
    """The Bayesian model and the rank intervals run only when their tab is open."""
    import lifelong_core.stats as stats

    calls = {"fit_hierarchical": 0, "rank_intervals": 0}

    def counting(name):
        real = getattr(stats, name)

        def spy(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        return spy

    for name in calls:
        monkeypatch.setattr(stats, name, counting(name))
    streamlit.cache_data.clear()  # an earlier test's cached fit would hide the calls
    at = run_page(source="store")
    assert calls == {"fit_hierarchical": 0, "rank_intervals": 0}
    assert not BAYES_METRICS & {m.label for m in at.metric}
    assert not frames_with(at, "Average rank") and not frames_with(at, "model_a")
    assert "chains" not in [s.key for s in at.selectbox]
    at = run_page(source="store", tab="Bayesian model")
    assert calls == {"fit_hierarchical": 1, "rank_intervals": 0}
    assert {m.label for m in at.metric} >= BAYES_METRICS
    assert not frames_with(at, "point")  # the leaderboard's own table is the hidden one now
    at = run_page(source="store", tab="Rank intervals")
    assert calls == {"fit_hierarchical": 1, "rank_intervals": 1}


def test_store_interactions_level_normalisation_and_pairs(use_store):
    at = run_page(source="store")
    before = frames_with(at, "scope")[0]
    at.select_slider(key="level").set_value(0.95).run()
    assert not at.exception
    after = frames_with(at, "scope")[0]
    assert ((after["hi"] - after["lo"]).sum()) > ((before["hi"] - before["lo"]).sum())
    at.toggle(key="normalized").set_value(True).run()
    assert not at.exception
    at = run_page(source="store", normalized="1", tab="Pairwise differences")
    at.multiselect(key="pair-store").set_value(["model-15", "model-14", "model-13"]).run()
    assert not at.exception
    diffs = frames_with(at, "model_a")[0]
    assert len(diffs) == 3 and diffs["level"].iloc[0] == pytest.approx(1 - 0.05 / 3)
    at = run_page(source="store", normalized="1", tab="Bayesian model")
    assert any("works on raw counts" in c.value for c in at.caption)
    at.selectbox(key="trace_param").set_value("a").run()
    assert not at.exception


def test_sort_and_search_estimates_against_truth(use_store):
    at = run_page(source="estimated")
    assert not at.error
    comp = next(d.value for d in at.dataframe if "true_pct" in d.value.columns)
    assert len(comp) == 4  # a quarter of the 16 models are held out by default
    assert {"estimated_pct", "true_pct", "error_pts", "true_in_interval"} <= set(comp.columns)
    assert "True accuracy inside the bootstrap interval" in [m.label for m in at.metric]
    at.selectbox(key="ss_budget").set_value(50).run()
    assert not at.exception


def test_sort_and_search_estimates_carry_the_estimators_own_intervals(use_store):
    at = run_page(source="estimated")
    assert not at.exception
    assert at.selectbox(key="ss_method").value == DEFAULT_METHOD
    own = next(d.value for d in at.dataframe if "est_lo_pct" in d.value.columns)
    assert len(own) == 4
    assert ((own["est_lo_pct"] <= own["est_pct"]) & (own["est_pct"] <= own["est_hi_pct"])).all()
    assert "True accuracy inside the estimator's 95% interval" in [m.label for m in at.metric]
    # The count is over every estimated model, with an exact interval and the draw it used.
    metric = next(m for m in at.metric if m.label.startswith("True accuracy inside the estimator"))
    assert metric.value.endswith("of 4 models")
    said = " ".join(c.value for c in at.caption)
    assert "exact 95% interval of that share" in said and "its own random draw" in said
    at.toggle(key="ss_common").set_value(True).run()
    assert not at.exception
    assert "run on the same samples" in " ".join(c.value for c in at.caption)
    at.selectbox(key="ss_method").set_value("midpoint").run()
    assert not at.exception
    assert not [d for d in at.dataframe if "est_lo_pct" in d.value.columns]
    assert "True accuracy inside the estimator's 95% interval" not in [m.label for m in at.metric]


def test_upload_source_waits_for_a_file(use_store):
    at = run_page(source="upload")
    assert any("Upload a counts.csv" in i.value for i in at.info)
