"""AppTest of the Budget explorer's insert_D tab: numbers equal the engine's."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.sortsearch.search import SAMPLING
from lifelong_core.workflows.selection import select
from tests.app.apptest_pages import open_page
from tests.app.test_pages_demo import make_tiny_store

BUDGET = "pages/1_Budget_explorer.py"
TAB = "New samples (insert_D)"


def run(query: dict) -> AppTest:
    return open_page(BUDGET, query, no_error=True)


def test_insert_d_tab_matches_engine(demo_store_path, monkeypatch):
    from lifelong_core.store import Store
    from lifelong_core.studies.new_samples import new_sample_study, random_split

    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = run(
        {
            "tab": TAB,
            "ns_budgets": "8,32,128",
            "ns_rank": "sum",
            "ns_dom": "0",
            "seed": "2",
            "search": "midpoint",
            "budgets": "16",
        }
    )
    assert len(at.get("plotly_chart")) == 1
    shown = at.dataframe[0].value
    with Store.open(demo_store_path, read_only=True) as s:
        A = select(s, "lifelong-digits").A  # the page opens on the first dataset
    want = new_sample_study(
        A, [random_split(A.shape[1], 0.2, 2)], [8, 32, 128], search="midpoint", seed=2
    ).curves
    np.testing.assert_allclose(shown["mae"].to_numpy(), want["mae"].to_numpy())
    assert set(shown["curve"]) == {"random · sum"}


@pytest.mark.slow
def test_insert_d_tab_domains_and_both_rankings(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = run({"tab": TAB, "ns_budgets": "16,64", "ns_dom": "1", "dom": "clean,blur,rotate"})
    shown = at.dataframe[0].value
    assert set(shown["curve"]) == {
        f"{k} · {s}"
        for k in ("random", "held-out domain (mean over domains)")
        for s in ("sum", "confidence")
    }
    by_domain = at.dataframe[1].value
    assert sorted(by_domain["domain"]) == ["blur", "clean", "rotate"]
    assert any("Spearman" in c.value for c in at.caption)


@pytest.mark.parametrize("m,n", [(2, 5), (3, 7)])
def test_insert_d_tab_tiny_store_without_confidences(tmp_path, monkeypatch, m, n):
    path = make_tiny_store(tmp_path / "tiny.duckdb", m, n)
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run({"tab": TAB})
    if m < 3:
        assert any("at least three models" in i.value for i in at.info)
    else:
        assert len(at.get("plotly_chart")) == 1


@pytest.mark.slow
def test_budget_curves_with_bands_over_sort_splits(demo_store_path, monkeypatch):
    from lifelong_core.sortsearch import choose_sort_rows
    from lifelong_core.store import Store
    from lifelong_core.studies.bands import band_summary
    from lifelong_core.sweeping import run_sweep

    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = run({"k": "50", "budgets": "16,64", "seed": "3", "search": "midpoint", "reps": "3"})
    table = at.dataframe[0].value
    assert {"mae_lo", "mae_hi", "repeats"} <= set(table.columns)
    with Store.open(demo_store_path, read_only=True) as s:
        A = select(s, "lifelong-digits").A  # the page opens on the first dataset
    tables = []
    for seed in (3, 4, 5):
        rows = choose_sort_rows(A.shape[0], 50, seed)
        rest = np.setdiff1d(np.arange(A.shape[0]), rows)
        tables.append(
            run_sweep(
                A[rows], A[rest], [16, 64], search="midpoint", seed=seed, decompose=True
            ).table
        )
    want = band_summary(tables)
    for c in ("mae", "mae_lo", "mae_hi", "eagg_hi"):
        np.testing.assert_allclose(table[c].to_numpy(), want[c].to_numpy())
    # every curve draws its band: a filled trace per line
    # MAE, E_agg and first-n's, kappa; a random sample's exact expected error has no band.
    assert fills(at) == 4
    for tab, lines in (
        ("Aleatoric vs epistemic", 3),
        # Sort-set sizes, Sort methods, and one line per sampling (listing's grid included)
        ("Design choices", 6 + 3 + len(SAMPLING)),
        ("vs CopyNearest&Expand", 2),
    ):
        at2 = run(
            {
                "k": "50",
                "budgets": "16,64",
                "seed": "3",
                "search": "midpoint",
                "reps": "2",
                "tab": tab,
            }
        )
        assert fills(at2) == lines, tab


def fills(at: AppTest) -> int:
    import json

    return sum(
        tr.get("fill") == "toself"
        for ch in at.get("plotly_chart")
        for tr in json.loads(ch.proto.spec)["data"]
    )


def test_insert_d_tab_bands_over_seeds(demo_store_path, monkeypatch):
    from lifelong_core.store import Store
    from lifelong_core.studies.new_samples import new_sample_study, random_split

    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = run(
        {
            "tab": TAB,
            "ns_budgets": "8,64",
            "ns_rank": "sum",
            "ns_dom": "0",
            "seed": "0",
            "reps": "3",
            "search": "midpoint",
            "budgets": "16",
        }
    )
    shown = at.dataframe[0].value
    with Store.open(demo_store_path, read_only=True) as s:
        A = select(s, "lifelong-digits").A  # the page opens on the first dataset
    maes = np.array(
        [
            new_sample_study(A, [random_split(A.shape[1], 0.2, s)], [8, 64], seed=s).curves["mae"]
            for s in (0, 1, 2)
        ]
    )
    np.testing.assert_allclose(shown["mae"].to_numpy(), maes.mean(axis=0))
    np.testing.assert_allclose(shown["mae_lo"].to_numpy(), np.percentile(maes, 2.5, axis=0))
    assert fills(at) == 1


def test_estimated_vs_true_rank_agreement_band(demo_store_path, monkeypatch):
    from lifelong_core.sortsearch import choose_sort_rows
    from lifelong_core.store import Store
    from lifelong_core.studies.bands import band_summary
    from lifelong_core.sweeping import run_sweep
    from lifelong_core.workflows.sweeps import rank_agreement

    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = open_page(
        "pages/2_Estimated_vs_true.py",
        {"k": "50", "budgets": "16,64", "seed": "3", "search": "midpoint", "reps": "3"},
        no_error=True,
    )
    with Store.open(demo_store_path, read_only=True) as s:
        A = select(s, "lifelong-digits").A
    tables = []
    for seed in (3, 4, 5):
        rows = choose_sort_rows(A.shape[0], 50, seed)
        rest = np.setdiff1d(np.arange(A.shape[0]), rows)
        per = run_sweep(
            A[rows], A[rest], [16, 64], search="midpoint", seed=seed, eval_row_ids=rest
        ).per_model
        tables.append(rank_agreement(per))
    want = band_summary(tables, metrics=("spearman", "kendall", "top10_overlap"))
    import base64
    import json

    def values(y):  # plotly's JSON packs arrays as {"dtype", "bdata"}
        return (
            np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"])
            if isinstance(y, dict)
            else np.asarray(y)
        )

    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    agreement = next(
        f for f in figs if "Rank agreement" in json.dumps(f["layout"].get("title", ""))
    )
    lines = {
        tr["name"]: values(tr["y"]) for tr in agreement["data"] if tr.get("mode") == "lines+markers"
    }
    np.testing.assert_allclose(lines["spearman"], want["spearman"].to_numpy())
    assert sum(tr.get("fill") == "toself" for tr in agreement["data"]) == 3
