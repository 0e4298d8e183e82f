"""AppTest of the home page and the Sort & Search pages: default state and main interactions.

Every run must finish without an exception and show the page's key elements; numbers the
page shows are checked against the engine where that is cheap.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.methods.registry import DEFAULT_METHOD
from tests.app.apptest_pages import ok, open_page

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def store_env(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    return demo_store_path


def run(page: str, query: dict | None = None) -> AppTest:
    return open_page(page, query, no_error=True)


def by_label(widgets, prefix: str):
    """The one widget whose label starts with ``prefix`` (keys carry data-dependent suffixes)."""
    found = [w for w in widgets if w.label.startswith(prefix)]
    assert len(found) == 1, [w.label for w in widgets]
    return found[0]


def charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


# ------------------------------------------------------------------ home
def test_home_lists_store_and_links_every_page(store_env):
    from lifelong_core.store import Store

    at = run("app.py")
    assert at.title[0].value == "Lifelong Benchmark Explorer"
    with Store.open(store_env, read_only=True) as s:
        n_models, n_samples = s.n_models, s.n_samples
    mt = metrics(at)
    assert mt["models"] == f"{n_models:,}" and mt["samples"] == f"{n_samples:,}"
    links = {p.proto.page for p in at.get("page_link")}
    expected = {re.sub(r"^\d+[_ -]*", "", page.stem) for page in (ROOT / "pages").glob("*.py")}
    assert links == expected
    assert any("real" in c.value for c in at.caption)


# ------------------------------------------------------------------ budget explorer
BUDGET = "pages/1_Budget_explorer.py"


def chart_specs(at: AppTest) -> list[str]:
    return [c.proto.spec for c in at.get("plotly_chart")]


@pytest.mark.slow
def test_budget_explorer_default(store_env):
    from lifelong_core.methods.registry import DEFAULT_METHOD, LIMIT_METHOD
    from ui.controls import method_label

    at = run(BUDGET)
    assert at.title[0].value == "Budget explorer"
    assert charts(at) == 3  # MAE with fit, E_agg with power law (and the baselines), kappa
    # The headline is the equivalent random budget; n / n' is the paper's figure, labelled.
    assert any(label.startswith("equivalent random budget") for label in metrics(at))
    assert "n / n′ (the paper's figure)" in metrics(at) and "compute saved" not in metrics(at)
    assert any("a·exp" in c.value or "No exponential fit" in c.value for c in at.caption)
    # It opens on the product's default estimator, and the URL carries the view.
    assert at.sidebar.selectbox(key="search").value == DEFAULT_METHOD
    assert at.query_params["search"] in (DEFAULT_METHOD, [DEFAULT_METHOD])
    # Both baselines are drawn beside it by default: "better than random, and than --limit?"
    eagg = next(sp for sp in chart_specs(at) if "E_agg vs budget" in sp)
    assert method_label(DEFAULT_METHOD) in eagg and "random sample (exact expected error)" in eagg
    assert method_label(LIMIT_METHOD) in eagg
    vs = next(d.value for d in at.dataframe if "equivalent_budget" in d.value.columns)
    assert (vs["eagg_pts"] / vs["random_pts"]).tolist() == pytest.approx(
        vs["mae_vs_random"].tolist()
    )
    assert any("`lbe backtest`'s on the" in c.value for c in at.caption)
    assert any(c.value.startswith("lbe backtest --store STORE") for c in at.code)


@pytest.mark.slow
def test_budget_explorer_baseline_can_be_hidden_and_the_papers_rule_is_one_click_away(store_env):
    from lifelong_core.methods.registry import DEFAULT_METHOD, LIMIT_METHOD, PUBLISHED_METHOD
    from ui.controls import method_label

    at = run(BUDGET, {"budgets": "16,64"})
    at.sidebar.toggle(key="baseline").set_value(False).run()
    ok(at)
    assert not any(label.startswith("equivalent random budget") for label in metrics(at))
    assert at.query_params["baseline"] in ("0", ["0"])
    assert "random sample (exact expected error)" not in " ".join(chart_specs(at))
    assert method_label(LIMIT_METHOD) not in " ".join(chart_specs(at))
    paper = next(b for b in at.sidebar.button if "paper's method" in b.label)
    paper.click().run()
    ok(at)
    assert at.sidebar.selectbox(key="search").value == PUBLISHED_METHOD
    back = next(b for b in at.sidebar.button if "default estimator" in b.label)
    back.click().run()
    ok(at)
    assert at.sidebar.selectbox(key="search").value == DEFAULT_METHOD


def test_budget_explorer_on_the_random_baseline_itself(store_env):
    from lifelong_core.methods.registry import BASELINE_METHOD

    at = run(BUDGET, {"search": BASELINE_METHOD, "budgets": "16,64"})
    # No sample-level prediction: no MAE chart or kappa, the accuracy error instead.
    assert charts(at) == 1
    assert any("no sample-level error" in i.value for i in at.info)
    assert "E_agg at n′=16" in metrics(at) or "E_agg at n′=64" in metrics(at)


def test_budget_explorer_numbers_match_the_engine(store_env):
    from lifelong_core.sortsearch import choose_sort_rows
    from lifelong_core.store import Store
    from lifelong_core.sweeping import run_sweep

    # reference sampling + reference rule: the published code end to end, as run_sweep's default.
    at = run(
        BUDGET,
        {
            "k": "50",
            "budgets": "16,64",
            "seed": "3",
            "search": "reference",
            "sampling": "reference",
        },
    )
    from lifelong_core.workflows.selection import select

    with Store.open(store_env, read_only=True) as s:
        A = select(
            s, "lifelong-digits"
        ).A  # the page opens on the first dataset; the store holds two
    rows = choose_sort_rows(A.shape[0], 50, 3)
    rest = np.setdiff1d(np.arange(A.shape[0]), rows)
    ref = run_sweep(A[rows], A[rest], [16, 64], search="reference", seed=3).table
    table = at.dataframe[0].value
    assert list(table["budget"]) == [16, 64]
    np.testing.assert_allclose(table["mae"].to_numpy(), ref["mae"].to_numpy())
    assert metrics(at)["MAE at n′=64"] == f"{ref['mae'].iloc[-1]:.4f}"


@pytest.mark.slow
def test_budget_explorer_widget_changes(synthetic_store_env):
    at = run(BUDGET, {"budgets": "8,32,128"})
    at.sidebar.radio(key="sampling").set_value("random").run()
    ok(at)
    at.sidebar.selectbox(key="sort").set_value("recursive").run()
    ok(at)
    by_label(at.sidebar.slider, "Models used for Sort").set_value(30).run()
    ok(at)
    assert metrics(at)["Sort models"] == "30"
    assert at.query_params["k"] in ("30", ["30"])
    by_label(at.sidebar.multiselect, "Budgets").set_value([]).run()
    assert not at.exception and len(at.warning) == 1


@pytest.mark.parametrize(
    "tab,n_charts",
    [
        ("vs CopyNearest&Expand", 1),
        ("Aleatoric vs epistemic", 1),
        ("Design choices", 3),
        ("Model correlation", 2),
    ],
)
def test_budget_explorer_tabs(store_env, tab, n_charts):
    at = run(BUDGET, {"tab": tab, "budgets": "16,64,256", "search": "midpoint"})
    assert charts(at) == n_charts
    assert len(at.dataframe) >= 1


@pytest.mark.slow
def test_budget_explorer_confidence_sort_and_estimator(store_env):
    at = run(BUDGET, {"sort": "confidence", "budgets": "32,128"})
    assert charts(at) == 3
    at = run(BUDGET, {"search": "neighbours", "budgets": "32,128"})
    assert metrics(at)["evaluated models"] == "40"
    assert any("seeded subset" in c.value for c in at.caption)
    assert any("est_lo" in d.value.columns for d in at.dataframe)


def test_budget_explorer_decomposes_the_default_rule_for_an_estimator(store_env):
    # The decomposition is of a threshold rule: with an estimator chosen (the default is
    # one) the tab shows the default rule's and says so.
    at = run(BUDGET, {"tab": "Aleatoric vs epistemic", "search": "copy-nearest", "budgets": "32"})
    assert charts(at) == 1
    assert any("shown for midpoint, since copy-nearest is not one" in c.value for c in at.caption)
    assert "aleatoric" in at.dataframe[-1].value.columns


def test_stale_url_values_fall_back(store_env):
    at = run(
        BUDGET, {"ds": "no-such-dataset", "sort": "bogus", "k": "abc", "budgets": "7,notanumber"}
    )
    assert at.title[0].value == "Budget explorer"
    assert charts(at) == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    "page",
    [
        BUDGET,
        "pages/2_Estimated_vs_true.py",
        "pages/3_Evaluate_something_new.py",
        "pages/4_How_Sort_and_Search_works.py",
        "pages/5_Stream.py",
    ],
)
def test_out_of_range_url_values_are_clipped(synthetic_store_env, page):
    at = run(
        page,
        {
            "seed": "-5",
            "slice": "-1",
            "window": "500",
            "pool": "99999",
            "m": "2",
            "n": "1000000",
            "b": "0",
            "step": "-3",
            "cols": "9",
            "k": "100000",
            "budget": "3",
            "rank_budget": "x",
        },
    )
    assert at.title


# ------------------------------------------------------------------ estimated vs true
EST = "pages/2_Estimated_vs_true.py"


@pytest.mark.slow
def test_estimated_vs_true_default_and_rank_budget(store_env):
    from lifelong_core.methods.registry import BASELINE_METHOD, DEFAULT_METHOD, LIMIT_METHOD
    from ui.controls import method_label

    at = run(EST)
    assert at.title[0].value == "Estimated vs true accuracy"
    assert charts(at) == 3  # small multiples, rank agreement, rank scatter
    # The product's default estimator, with both baselines drawn behind it.
    assert at.sidebar.selectbox(key="search").value == DEFAULT_METHOD
    grid = chart_specs(at)[0]
    assert method_label(DEFAULT_METHOD) in grid and method_label(BASELINE_METHOD) in grid
    assert method_label(LIMIT_METHOD) in grid
    corr = at.dataframe[0].value
    assert list(corr["method"].unique()) == [DEFAULT_METHOD, BASELINE_METHOD, LIMIT_METHOD]
    assert list(corr["budget"].unique()) == [32, 64, 128, 256, 512, 1024]
    assert corr["spearman"].between(-1, 1).all()
    # Interval coverage per budget, for each, with its own exact interval.
    cov = next(d.value for d in at.dataframe if "coverage_lo" in d.value.columns)
    assert set(cov["method"]) == {DEFAULT_METHOD, BASELINE_METHOD, LIMIT_METHOD}
    assert (cov["coverage_lo"] <= cov["coverage"]).all() and (
        cov["coverage"] <= cov["coverage_hi"]
    ).all()
    assert any("same samples at a budget" in c.value for c in at.caption)
    at.selectbox(key="rank_budget").set_value(1024).run()
    ok(at)
    at.sidebar.slider(key="cols").set_value(2).run()
    ok(at)


@pytest.mark.slow
def test_estimated_vs_true_with_intervals(store_env):
    at = run(EST, {"search": "mirt", "budgets": "64,256", "k": "100"})
    assert charts(at) == 3
    fig = at.get("plotly_chart")[0].proto.spec
    assert '"error_y"' in fig


# ------------------------------------------------------------------ teaching
HOW = "pages/4_How_Sort_and_Search_works.py"


def test_teaching_default_and_steps(store_env):
    at = run(HOW)
    assert at.title[0].value == "How Sort & Search works"
    assert charts(at) == 5
    mt = metrics(at)
    t = int(mt["threshold t"])
    steps = at.dataframe[0].value
    assert len(steps) == int(by_label(at.sidebar.slider, "Budget n′").value)
    # The page follows its slider: after 2 evaluations it shows what those 2 say, and only them.
    by_label(at.main.slider, "Evaluations seen").set_value(2).run()
    ok(at)
    assert len(at.dataframe[0].value) == 2
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select
    from lifelong_core.workflows.teaching import prediction_after, teaching_slice, walkthrough

    q = dict(at.query_params)
    get = lambda k: q[k][0] if isinstance(q[k], list) else q[k]  # noqa: E731

    with Store.open(store_env, read_only=True) as s:
        A, _, _ = teaching_slice(
            select(s, get("ds")), int(get("m")), int(get("n")), int(get("slice"))
        )
    w = walkthrough(
        A, int(get("new")), int(get("b")), get("rule"), get("sampling"), int(get("seed"))
    )
    assert w.threshold == t
    assert int(metrics(at)["threshold t"]) == prediction_after(w, 2, get("rule"))[0]
    by_label(at.main.slider, "Evaluations seen").set_value(0).run()
    ok(at)
    assert "threshold t" not in metrics(at) and len(at.dataframe[0].value) == 0
    by_label(at.sidebar.slider, "Budget n′").set_value(60).run()
    by_label(at.main.slider, "Evaluations seen").set_value(60).run()
    ok(at)
    # With every sample evaluated the midpoint rule is the exact DP optimum: no better threshold exists.
    assert float(metrics(at)["sample-level error (MAE)"]) <= 0.5


def test_teaching_transpose(store_env):
    at = run(HOW, {"mode": "new sample (insert_D)", "rule": "reference", "sampling": "random"})
    assert charts(at) == 5
    assert "predicted share of models right" in metrics(at)


# ------------------------------------------------------------------ stream
STREAM = "pages/5_Stream.py"


@pytest.mark.slow
def test_stream_default_and_changes(store_env):
    at = run(STREAM)
    assert at.title[0].value == "Stream"
    assert charts(at) == 5  # evaluations, error, whole-stream Pareto; Nevis'22 Pareto and regret
    mt = metrics(at)
    assert mt["models in the stream"] == "440"
    # n / n' is the paper's figure, against evaluating everything, not a saving against random.
    full, spent = (int(mt[k].replace(",", "")) for k in ("full evaluation", "evaluations spent"))
    assert mt["n / n′ (the paper's figure)"] == f"{full / spent:.1f}×"
    assert "compute saved" not in mt
    front = at.dataframe[1].value
    # The front is non-dominated: cost up, error strictly down.
    assert (np.diff(front["evaluations"].to_numpy()) >= 0).all()
    assert (np.diff(front["mae"].to_numpy()) < 0).all()
    at.sidebar.radio(key="perr").set_value("eagg").run()
    ok(at)
    by_label(at.sidebar.slider, "Models evaluated in full").set_value(50).run()
    ok(at)
    assert metrics(at)["evaluations spent"] != mt["evaluations spent"]


def test_missing_store_gives_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(tmp_path / "nothing.duckdb"))
    at = AppTest.from_file(str(ROOT / BUDGET), default_timeout=60)
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "No store at" in at.error[0].value


# ------------------------------------------------------------------ tiny stores
def make_tiny_store(path: Path, m: int, n: int) -> Path:
    """A synthetic store of ``m`` models x ``n`` samples in two domains, no confidences."""
    import pandas as pd

    from lifelong_core.store import Store

    A = (np.random.default_rng(1).random((m, n)) < 0.6).astype(np.uint8)
    with Store.create(path) as s:
        s.add_dataset("tiny", "tiny synthetic", synthetic=True, source="test")
        s.insert_matrix(
            A,
            pd.DataFrame({"model_id": [f"m{i}" for i in range(m)]}),
            pd.DataFrame(
                {
                    "sample_id": [f"s{j}" for j in range(n)],
                    "dataset": "tiny",
                    "domain": ["a", "b"] * (n // 2) + ["a"] * (n % 2),
                }
            ),
        )
    return path


@pytest.fixture(scope="module", params=[(2, 5), (3, 7)], ids=["2x5", "3x7"])
def tiny_store(request, tmp_path_factory):
    return make_tiny_store(tmp_path_factory.mktemp("tiny") / "tiny.duckdb", *request.param)


@pytest.mark.parametrize(
    "page,query",
    [
        ("app.py", {}),
        (BUDGET, {}),
        (BUDGET, {"tab": "vs CopyNearest&Expand"}),
        (BUDGET, {"tab": "Aleatoric vs epistemic"}),
        (BUDGET, {"tab": "Design choices"}),
        (BUDGET, {"tab": "Model correlation"}),
        (EST, {}),
        ("pages/3_Evaluate_something_new.py", {}),
        ("pages/3_Evaluate_something_new.py", {"tab": "New samples (insert_D)"}),
        (HOW, {}),
        (HOW, {"mode": "new sample (insert_D)"}),
        (STREAM, {}),
    ],
)
def test_pages_survive_tiny_synthetic_stores(tiny_store, monkeypatch, page, query):
    monkeypatch.setenv("LBE_STORE", str(tiny_store))
    at = run(page, query)
    assert at.title
    assert any("synthetic" in c.value for c in at.caption) or page == "app.py"


def test_dataset_with_one_complete_model_gives_one_sentence(tmp_path, monkeypatch):
    import pandas as pd

    from lifelong_core.store import Store

    path = tmp_path / "solo.duckdb"
    with Store.create(path) as s:
        s.add_dataset("solo", "one model", synthetic=True, source="test")
        s.insert_matrix(
            np.array([[1, 0, 1, 1]], dtype=np.uint8),
            pd.DataFrame({"model_id": ["only"]}),
            pd.DataFrame({"sample_id": ["a", "b", "c", "d"], "dataset": "solo"}),
        )
    monkeypatch.setenv("LBE_STORE", str(path))
    for page in (BUDGET, EST, "pages/3_Evaluate_something_new.py", HOW, STREAM):
        at = AppTest.from_file(str(ROOT / page), default_timeout=120)
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert len(at.error) == 1 and "fewer than two models" in at.error[0].value, page


@pytest.mark.slow
def test_switching_dataset_resets_data_dependent_widgets(tmp_path, monkeypatch):
    import pandas as pd

    from lifelong_core.store import Store

    path = tmp_path / "two.duckdb"
    rng = np.random.default_rng(0)
    with Store.create(path) as s:
        for ds, m, n, doms in (("alpha", 8, 40, ["a1", "a2"]), ("beta", 4, 12, ["b1", "b2", "b3"])):
            s.add_dataset(ds, ds, synthetic=True, source="test")
            s.insert_matrix(
                (rng.random((m, n)) < 0.6).astype(np.uint8),
                pd.DataFrame(
                    {"model_id": [f"{ds}-m{i}" for i in range(m)], "release_order": range(m)}
                ),
                pd.DataFrame(
                    {
                        "sample_id": [f"{ds}{j}" for j in range(n)],
                        "dataset": ds,
                        "domain": [doms[j % len(doms)] for j in range(n)],
                    }
                ),
            )
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run(BUDGET, {"k": "6", "budgets": "16,32"})
    assert by_label(at.sidebar.slider, "Models used for Sort").value == 6
    at.sidebar.selectbox(key="ds").set_value("beta").run()
    ok(at)
    assert by_label(at.sidebar.multiselect, "Domains").value == ["b1", "b2", "b3"]
    assert by_label(at.sidebar.slider, "Models used for Sort").value <= 3
    assert all(b <= 12 for b in by_label(at.sidebar.multiselect, "Budgets").value)
    assert charts(at) == 3
    for page in (EST, STREAM, HOW, "pages/3_Evaluate_something_new.py"):
        other = run(page, {"ds": "alpha"})
        other.sidebar.selectbox(key="ds").set_value("beta").run()
        ok(other)


def test_the_sidebar_calls_home_home(store_env, monkeypatch):
    """The first entry of the navigation is titled Home (Streamlit would label the entry
    script "app")."""
    import streamlit

    seen = []
    real = streamlit.navigation

    def spy(pages, *a, **kw):
        seen.append(list(pages))
        return real(pages, *a, **kw)

    monkeypatch.setattr(streamlit, "navigation", spy)
    at = run("app.py")
    assert not at.exception
    pages = seen[-1]
    assert pages[0].title == "Home"
    assert "app" not in {p.title.lower() for p in pages}


@pytest.mark.slow
@pytest.mark.parametrize("page", [BUDGET, "pages/2_Estimated_vs_true.py"])
def test_sort_and_search_pages_open_on_the_default_estimator(synthetic_store_env, page):
    # On the demo store test_budget_explorer_default and
    # test_estimated_vs_true_default_and_rank_budget check the same default.
    at = run(page, {"budgets": "32"})
    assert by_label(at.sidebar.selectbox, "Search rule").value == DEFAULT_METHOD
