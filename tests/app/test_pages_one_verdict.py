"""One protocol, one verdict: for the same store, dataset, tasks, budgets, method, seed and
number of held-out models, ``lbe backtest``, the Backtest page and the Budget explorer's
comparison with random report the same numbers (the Budget explorer holds out the models
outside its Sort set; both pages score a model-based estimator on a seeded subset of 40 of
them, which ``--scored 40`` gives the command line)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from tests.app.apptest_pages import open_page

LEADERBOARD = "open-llm-leaderboard-v2"
METHOD = "mirt"
SORT_MODELS = 300
SEED = 3
# The Budget explorer's names for the backtest's columns.
SAME = {
    "mae_pts": "eagg_pts",
    "random_pts": "random_pts",
    "mae_vs_random": "mae_vs_random",
    "ratio_lo": "ratio_lo",
    "ratio_hi": "ratio_hi",
    "equivalent_budget": "equivalent_budget",
    "equivalent_lo": "equivalent_lo",
    "equivalent_hi": "equivalent_hi",
    "saving": "saving",
}


@pytest.mark.slow
def test_backtest_command_backtest_page_and_budget_explorer_agree(
    demo_store_path, monkeypatch, tmp_path, capsys
):
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    with Store.open(demo_store_path) as st:
        m = len(select(st, LEADERBOARD, ("musr",)).models)
    holdout = m - SORT_MODELS

    explorer = open_page(
        "pages/1_Budget_explorer.py",
        {
            "ds": LEADERBOARD,
            "dom": "musr",
            "k": str(SORT_MODELS),
            "search": METHOD,
            "budgets": "16,64",
            "seed": str(SEED),
        },
        no_error=True,
    )
    shown = next(d.value for d in explorer.dataframe if "equivalent_budget" in d.value.columns)
    shown = shown.set_index("budget")
    said = " ".join(c.value for c in explorer.code)
    assert f"--holdout {holdout} --split random --repeats 1 --seed {SEED} --scored 40" in said

    page = open_page(
        "pages/10_Backtest.py",
        {
            "ds": LEADERBOARD,
            "dom": "musr",
            "methods": METHOD,
            "budgets": "16,64",
            "holdout": str(holdout),
            "split": "random",
            "repeats": "1",
            "seed": str(SEED),
            "run": "1",
        },
        no_error=True,
    )
    table = next(d.value for d in page.dataframe if "equivalent_budget" in d.value.columns)
    on_page = table[table["method"] == METHOD].set_index("budget")

    out = tmp_path / "table.csv"
    argv = ["backtest", "--store", str(demo_store_path), "--dataset", LEADERBOARD]
    argv += ["--domains", "musr", "--method", METHOD, "--budgets", "16,64"]
    argv += ["--holdout", str(holdout), "--split", "random", "--repeats", "1"]
    argv += ["--seed", str(SEED), "--scored", "40", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    cli = pd.read_csv(out)
    cli = cli[cli["method"] == METHOD].set_index("budget")

    assert list(shown.index) == list(on_page.index) == list(cli.index) == [16, 64]
    for ours, theirs in SAME.items():
        want = cli[ours].to_numpy(dtype=float)
        # The Backtest page shows its table rounded to 4 decimals.
        assert np.allclose(on_page[ours].to_numpy(dtype=float), want, atol=1e-4), ours
        assert np.allclose(shown[theirs].to_numpy(dtype=float), want, rtol=1e-9), ours
