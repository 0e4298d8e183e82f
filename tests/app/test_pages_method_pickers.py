"""Every page's method picker lists the method registry (ui.controls.method_names), so a
method added with one ``register`` line is offered, and runs, with no page edit."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.methods import register, unregister
from tests.app.apptest_pages import open_page
from tests.engine.test_methods_conformance import (
    TINY,
    TinyMajority,
)  # the conformance battery's tiny method


@pytest.fixture(autouse=True)
def tiny_registered(synthetic_store_path, monkeypatch):
    # What is checked is the pickers, not the data: the small synthetic store of
    # tests/app/conftest.py keeps each page's run short.
    monkeypatch.setenv("LBE_STORE", str(synthetic_store_path))
    register(TINY, TinyMajority)  # the one line that adds a method
    yield
    unregister(TINY)


def run(page: str, **query) -> AppTest:
    return open_page(f"pages/{page}", query, no_error=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "page,query,key",
    [
        ("2_Estimated_vs_true.py", {"search": "midpoint"}, "search"),
        ("3_Evaluate_something_new.py", {"search": "midpoint"}, "search"),
        ("6_Rankings.py", {"source": "estimated", "ss_method": "midpoint"}, "ss_method"),
    ],
)
def test_every_picker_offers_a_registered_method(page, query, key):
    at = run(page, **query)
    assert TINY in at.selectbox(key=key).options


def test_the_pickers_help_lists_a_registered_method():
    at = run("3_Evaluate_something_new.py", search="midpoint")
    text = at.selectbox(key="search").help
    assert TINY in text and "midpoint" in text and "copy-nearest" in text and "issue" not in text


def test_a_registered_method_runs_on_the_budget_explorer():
    at = run("1_Budget_explorer.py", search=TINY, k="50", budgets="16,64")
    assert at.selectbox(key="search").value == TINY
    shown = {m.label: m.value for m in at.metric}
    assert "MAE at n′=64" in shown


def test_a_registered_method_selects_samples_for_a_new_model():
    at = run("3_Evaluate_something_new.py", search=TINY, budget="16")
    assert at.selectbox(key="search").value == TINY
    assert any("Run the new model on these 16" in m.value for m in at.markdown)


def test_the_backtest_page_offers_and_runs_a_registered_method():
    at = run(
        "10_Backtest.py",
        methods=TINY,
        budgets="16",
        holdout="3",
        repeats="1",
        run="1",
    )
    picker = next(w for w in at.multiselect if w.label.startswith("Methods"))
    assert TINY in picker.options
    table = next(d.value for d in at.dataframe if "coverage_lo" in d.value.columns)
    assert TINY in set(table["method"])
