"""AppTest of the Backtest page: it waits for the run, then shows the chart, the tables and
the same numbers as the workflow (and so as ``lbe backtest``)."""

from __future__ import annotations

import pytest

from lifelong_core.methods.registry import BASELINE_METHOD, DEFAULT_METHOD
from tests.app.apptest_pages import ok, open_page

PAGE = "pages/10_Backtest.py"
LEADERBOARD = "open-llm-leaderboard-v2"


@pytest.fixture(autouse=True)
def store_env(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    return demo_store_path


def test_waits_for_the_run_and_offers_the_default_comparison():
    at = open_page(PAGE, {"ds": LEADERBOARD}, no_error=True)
    assert at.title[0].value == "Backtest"
    assert any("run the backtest" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    picked = at.multiselect[0].value
    assert picked[0] == DEFAULT_METHOD and BASELINE_METHOD in picked


def test_run_shows_chart_tables_and_the_workflows_numbers(store_env):
    from lifelong_core.store import Store
    from lifelong_core.workflows.backtest import backtest
    from lifelong_core.workflows.selection import select

    query = {
        "ds": LEADERBOARD,
        "methods": "midpoint",
        "budgets": "16,64",
        "holdout": "5",
        "repeats": "1",
        "seed": "2",
        "run": "1",
    }
    at = open_page(PAGE, query, no_error=True)
    assert len(at.get("plotly_chart")) == 1
    table = next(d.value for d in at.dataframe if "coverage_lo" in d.value.columns)
    assert set(table["method"]) == {"midpoint", BASELINE_METHOD}
    with Store.open(store_env) as st:
        want = backtest(
            select(st, LEADERBOARD), ["midpoint"], [16, 64], holdout=5, repeats=1, seed=2
        )
    got = table.set_index(["method", "budget"])["mae_pts"]
    exp = want.table.set_index(["method", "budget"])["mae_pts"].round(4)
    assert got.to_dict() == pytest.approx(exp.to_dict())
    assert any("its own random draw" in c.value for c in at.caption)
    summary = next(d.value for d in at.dataframe if "items_mae_1pt" in d.value.columns)
    assert set(summary["method"]) == {"midpoint", BASELINE_METHOD}
    # The same items for every model: said, and run.
    at.toggle[0].set_value(True)
    at.button[0].click().run()
    ok(at)
    assert any("run on the same items" in c.value for c in at.caption)


def test_bad_choice_is_one_sentence():
    at = open_page(PAGE, {"ds": LEADERBOARD, "methods": "midpoint", "budgets": "16", "run": "1"})
    assert not at.exception
    at.multiselect[1].set_value([])
    at.button[0].click().run()
    assert not at.exception and len(at.warning) == 1
