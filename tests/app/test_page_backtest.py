"""AppTest of the Backtest page: it waits for the run, then shows the verdict, the charts, the
tables and the same numbers as the workflow (and so as ``lbe backtest``); budgets are any
whole numbers, and a bad one in the URL is one sentence, not a silent replacement."""

from __future__ import annotations

import pandas as pd
import pytest

from lifelong_core.methods.registry import BASELINE_METHOD, DEFAULT_METHOD, LIMIT_METHOD
from tests.app.apptest_pages import ok, open_page

PAGE = "pages/10_Backtest.py"
LEADERBOARD = "open-llm-leaderboard-v2"
COMPARED = ["mae_pts", "random_pts", "mae_vs_random", "ratio_lo", "ratio_hi", "equivalent_budget"]


@pytest.fixture(autouse=True)
def store_env(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    return demo_store_path


def methods_picker(at):
    return next(w for w in at.multiselect if w.label.startswith("Methods"))


def test_waits_for_the_run_and_offers_the_default_comparison():
    at = open_page(PAGE, {"ds": LEADERBOARD}, no_error=True)
    assert at.title[0].value == "Backtest"
    assert any("run the backtest" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    picked = methods_picker(at).value
    assert picked[0] == DEFAULT_METHOD and {BASELINE_METHOD, LIMIT_METHOD} <= set(picked)
    # Any whole numbers: 100 is among the default budgets.
    assert "100" in at.text_input[0].value.split(",")


def test_run_shows_the_verdict_charts_tables_and_the_workflows_numbers(store_env):
    from lifelong_core.store import Store
    from lifelong_core.workflows.backtest import backtest
    from lifelong_core.workflows.selection import select

    query = {
        "ds": LEADERBOARD,
        "methods": "midpoint",
        "budgets": "16,100",
        "holdout": "5",
        "repeats": "2",
        "seed": "2",
        "run": "1",
    }
    at = open_page(PAGE, query, no_error=True)
    assert len(at.get("plotly_chart")) == 2
    assert any("midpoint at n′ = 100 on models like your cache's" in md.value for md in at.markdown)
    table = next(d.value for d in at.dataframe if "equivalent_budget" in d.value.columns)
    assert set(table["method"]) == {"midpoint", BASELINE_METHOD, LIMIT_METHOD}
    with Store.open(store_env) as st:
        want = backtest(
            select(st, LEADERBOARD), ["midpoint"], [16, 100], holdout=5, repeats=2, seed=2
        )
    got = table.set_index(["method", "budget"])[COMPARED]
    exp = want.table.set_index(["method", "budget"])[COMPARED].round(4)
    pd.testing.assert_frame_equal(got, exp.loc[got.index], check_dtype=False)
    assert any("its own random draw" in c.value for c in at.caption)
    assert any("lbe backtest --store STORE" in c.value for c in at.code)
    coverage = next(d.value for d in at.dataframe if "worst_covered" in d.value.columns)
    assert set(coverage["method"]) == {BASELINE_METHOD, LIMIT_METHOD}  # those with an interval
    ranges = next(d.value for d in at.dataframe if "quantile" in d.value.columns)
    assert set(ranges["quantile"]) == {1, 2, 3, 4, 5}
    summary = next(d.value for d in at.dataframe if "items_mae_1pt" in d.value.columns)
    assert set(summary["method"]) == {"midpoint", BASELINE_METHOD, LIMIT_METHOD}
    # The same items for every model: said, and run.
    at.toggle[0].set_value(True)
    at.button[0].click().run()
    ok(at)
    assert any("run on the same items" in c.value for c in at.caption)


def test_a_budget_in_the_url_is_kept_as_given():
    at = open_page(PAGE, {"ds": LEADERBOARD, "budgets": "100"}, no_error=True)
    assert at.text_input[0].value == "100"


@pytest.mark.parametrize(
    "budgets,words",
    [
        ("abc", "budgets must be whole numbers separated by commas"),
        ("100,0", "budget 0 must be between 1 and 2,191"),
        ("5000", "budget 5000 must be between 1 and 2,191"),
    ],
)
def test_an_invalid_budget_in_the_url_is_one_sentence(budgets, words):
    at = open_page(PAGE, {"ds": LEADERBOARD, "budgets": budgets, "run": "1"})
    assert not at.exception and len(at.error) == 1
    assert words in at.error[0].value.replace("\\", "")
    assert not at.get("plotly_chart")


def test_tasks_and_the_old_split_name(store_env):
    from lifelong_core.store import Store
    from lifelong_core.workflows.backtest import backtest
    from lifelong_core.workflows.selection import select

    query = {
        "ds": LEADERBOARD,
        "dom": "musr",
        "methods": "midpoint",
        "budgets": "30",
        "holdout": "4",
        "split": "best",
        "repeats": "1",
        "run": "1",
    }
    at = open_page(PAGE, query, no_error=True)
    table = next(d.value for d in at.dataframe if "equivalent_budget" in d.value.columns)
    with Store.open(store_env) as st:
        want = backtest(
            select(st, LEADERBOARD, ("musr",)),
            ["midpoint"],
            [30],
            holdout=4,
            split="beyond-cache",
            repeats=1,
        )
    got = table.set_index(["method", "budget"])["mae_pts"]
    assert got.to_dict() == pytest.approx(
        want.table.set_index(["method", "budget"])["mae_pts"].round(4).to_dict()
    )
    assert any("models beyond your cache" in c.value for c in at.caption)


def test_bad_choice_is_one_sentence():
    at = open_page(PAGE, {"ds": LEADERBOARD, "methods": "midpoint", "budgets": "16", "run": "1"})
    assert not at.exception
    methods_picker(at).set_value([])
    at.button[0].click().run()
    assert not at.exception and len(at.warning) == 1
