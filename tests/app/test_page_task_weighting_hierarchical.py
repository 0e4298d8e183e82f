"""Task weighting page: the VTAB per-task source and the hierarchical model's map (Appendix Fig. 5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "7_Task_weighting.py")


def run_page(**query) -> AppTest:
    return open_page(PAGE, query, timeout=300, no_error=True)


def regions(at: AppTest):
    return next(d.value for d in at.dataframe if "winner" in d.value.columns)


@pytest.mark.slow
def test_vtab_leaderboard_binomial_and_hierarchical(monkeypatch, tmp_path, vtab_csv):
    from lifelong_core.stats import category_stats, fit_hierarchical, weight_regions
    from lifelong_core.stats.hierarchical_views import category_stats_from_hierarchical
    from lifelong_core.stats.vtab import counts_from_leaderboard

    monkeypatch.setenv("LBE_STORE", str(tmp_path / "absent.duckdb"))
    table = counts_from_leaderboard(vtab_csv)
    at = run_page(wsource="vtab")
    got = regions(at)
    # VTAB-1k's 16 models: at most 20, so all of them by default.
    pooled = table.correct.sum(axis=1) / table.total.sum(axis=1)
    top = [table.models[i] for i in np.argsort(-pooled, kind="stable")]
    want = weight_regions(category_stats(table.subset(models=top)), step=0.05).to_frame()
    assert got["winner"].tolist() == want["winner"].tolist()
    at = run_page(wsource="vtab", wstats="hierarchical")
    got = regions(at).set_index(["natural", "specialized", "structured"])
    assert got.loc[(0.0, 0.0, 1.0), "winner"] == "Rotation"  # the paper's finding, Fig. 5
    # The page maps all 16 models by default (pooled accuracy order).
    fit = fit_hierarchical(table.subset(models=top), chains=2, draws=500, warmup=250, seed=0)
    want = weight_regions(category_stats_from_hierarchical(fit), step=0.05).to_frame()
    np.testing.assert_allclose(got["diff_pct"].to_numpy(), (want["diff"] * 100).round(4).to_numpy())
    assert at.radio(key="wstats").value == "hierarchical"
