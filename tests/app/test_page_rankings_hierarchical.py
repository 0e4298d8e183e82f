"""Rankings page: the VTAB per-task source and the hierarchical model's per-category
intervals, pairwise differences and rank intervals (Table 11)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "6_Rankings.py")


@pytest.mark.slow
def test_vtab_source_and_hierarchical_views(monkeypatch, tmp_path, vtab_csv):
    from lifelong_core.stats import Prior, fit_hierarchical
    from lifelong_core.stats.hierarchical_views import hierarchical_pairwise
    from lifelong_core.stats.vtab import counts_from_leaderboard

    monkeypatch.setenv("LBE_STORE", str(tmp_path / "absent.duckdb"))
    at = AppTest.from_file(PAGE, default_timeout=600)
    at.query_params["source"] = "vtab"
    at.query_params["tab"] = "Bayesian model"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    frames = [d.value for d in at.dataframe]
    per_cat = [
        f for f in frames if {"natural", "specialized", "structured", "overall"} <= set(f.columns)
    ]
    assert per_cat and len(per_cat[0]) == 16  # VTAB-1k's 16 models, all shown by default
    pairs = [f for f in frames if "model_a" in f.columns]
    assert (
        len(pairs) == 1
    )  # the hierarchical model's all pairs; the bootstrap's pairs tab is closed
    bayes_pairs = pairs[0]
    assert len(bayes_pairs) == 16 * 15 // 2
    table = counts_from_leaderboard(vtab_csv)
    chosen = list(at.multiselect(key="models-vtab").value)
    fit = fit_hierarchical(
        table.subset(models=[m for m in table.models if m in chosen]),
        prior_a=Prior.uniform(0.0, 10000.0),
        prior_b=Prior.uniform(0.0, 10000.0),
        chains=4,
        draws=1000,
        warmup=500,
        seed=0,
    )
    want = hierarchical_pairwise(fit, predictive=True, seed=0)
    np.testing.assert_allclose(
        bayes_pairs["diff"].to_numpy(), (want["diff"] * 100).round(3).to_numpy()
    )
    ranks = [f for f in frames if "Average rank (1% bins)" in f.columns]
    assert (
        len(ranks) == 1
    )  # hierarchical (Table 11); the bootstrap's (Tables 4-5) is in its own tab
    top = ranks[0].set_index("model").loc["Sup-Rotation-100%", "By average"]
    assert top.startswith(("1.", "2."))


@pytest.mark.parametrize("source", ["store"])
def test_store_source_says_domains_are_treated_as_independent(demo_store_path, monkeypatch, source):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = AppTest.from_file(PAGE, default_timeout=600)
    at.query_params["source"] = source
    at.run()
    assert not at.exception
    assert any("too narrow" in c.value for c in at.caption)
