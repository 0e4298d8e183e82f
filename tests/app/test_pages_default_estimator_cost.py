"""What the pages fit and sweep for the default estimator: counted, never timed.

- Evaluate something new loads ``auto`` from the store's kept state (``lbe state
  --refresh``) instead of fitting it on the whole cache; without a kept state it fits.
- The Budget explorer's re-run after the Sampling radio changes finds the default's sweep
  already made: only the threshold rules read that grid.
- The Budget explorer's comparison with random backtests on the page's Sort set: it uses
  the sweep's fit of the default instead of fitting it again.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
import streamlit as st

from lifelong_core.methods import auto
from lifelong_core.methods.registry import DEFAULT_METHOD
from tests.app.apptest_pages import ok, open_page
from tests.shared import count_calls


@pytest.fixture()
def counted(monkeypatch):
    """Whole fits of the default estimator and sweeps run, counted."""
    from lifelong_core.workflows import sweeps

    seen = {"fit": 0, "sweep": 0}
    count_calls(monkeypatch, seen, "fit", auto.AutoEstimator, "fit", "fit_packed")
    count_calls(monkeypatch, seen, "sweep", sweeps, "run_sweep")
    st.cache_data.clear()
    st.cache_resource.clear()  # the server's kept fits (ui.caches.fit_memory) included
    yield seen
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture()
def own_store(synthetic_store_path, tmp_path, monkeypatch):
    path = tmp_path / "s.duckdb"
    shutil.copy(synthetic_store_path, path)
    monkeypatch.setenv("LBE_STORE", str(path))
    return path


def refresh(path) -> None:
    from lifelong_core.store import Store
    from lifelong_core.workflows import lifelong_state

    with Store.open(path, read_only=False) as s:
        _, item = lifelong_state.refresh(s, s.datasets()["dataset"].item())
    assert item.method == DEFAULT_METHOD


PAGE = "pages/3_Evaluate_something_new.py"


def test_a_new_model_is_chosen_for_from_the_kept_state_without_a_fit(own_store, counted):
    refresh(own_store)
    counted["fit"] = 0
    at = open_page(PAGE, {"search": DEFAULT_METHOD}, no_error=True)
    assert counted["fit"] == 0
    assert any("Run the new model on these" in m.value for m in at.markdown)


def test_without_a_kept_state_the_page_fits_once(own_store, counted):
    open_page(PAGE, {"search": DEFAULT_METHOD}, no_error=True)
    assert counted["fit"] == 1


def test_the_sampling_radio_does_not_sweep_the_default_again(synthetic_store_env, counted):
    at = open_page("pages/1_Budget_explorer.py", {"search": DEFAULT_METHOD, "baseline": "false"})
    ok(at)
    assert counted["sweep"] == 1
    radio = next(r for r in at.sidebar.radio if r.label == "Sampling")
    radio.set_value("random" if radio.value != "random" else "uniform").run()
    ok(at)
    assert counted["sweep"] == 1
    # A threshold rule reads the grid: the same change sweeps it again.
    at = open_page("pages/1_Budget_explorer.py", {"search": "midpoint", "baseline": "false"})
    assert counted["sweep"] == 2
    radio = next(r for r in at.sidebar.radio if r.label == "Sampling")
    radio.set_value("random" if radio.value != "random" else "uniform").run()
    assert counted["sweep"] == 3


def test_the_comparison_with_random_uses_the_sweeps_fit(synthetic_store_env, counted):
    at = open_page("pages/1_Budget_explorer.py", {"search": DEFAULT_METHOD, "baseline": "true"})
    ok(at)
    assert any("lbe backtest" in c.value for c in at.caption)  # the comparison ran
    assert counted["fit"] == 1


def test_the_default_view_of_a_large_store_is_within_the_work_budget():
    """The Budget explorer's default view (100 Sort models; the default, the baselines and a
    threshold rule scored on the same 40 models; every default budget) on the
    4,000 x 500,000 store and at the paper's shape, read packed: within the budget, and
    far below the same work priced at the dense, row-by-row rates."""
    from lifelong_core.methods.registry import PUBLISHED_METHOD
    from lifelong_core.workflows.budgets import default_budgets
    from ui.controls import BASELINES, DEFAULT_WORK, sweep_work

    def view(n: int, packed: bool) -> float:
        budgets = len(default_budgets(n))
        return (
            sweep_work(DEFAULT_METHOD, 100, 40, n, budgets, packed=packed)
            + sum(sweep_work(b, 100, 40, n, budgets, packed=packed) for b in BASELINES)
            + sweep_work(PUBLISHED_METHOD, 100, 40, n, budgets, packed=packed)
        )

    for n in (500_000, 1_697_682):
        assert view(n, True) < DEFAULT_WORK < view(n, False)


def test_the_budget_explorer_opens_on_the_fit_a_refresh_kept(own_store, counted, monkeypatch):
    """``lbe state --refresh`` fits the default Sort split as the page does and keeps it,
    with the page's comparison with random: the page's first view then fits nothing,
    computes no backtest and shows the same tables as when it fitted and computed."""
    from lifelong_core.workflows import backtest as bt

    table = bt._table

    def counted_table(*args, **kwargs):
        counted["backtest"] = counted.get("backtest", 0) + 1
        return table(*args, **kwargs)

    monkeypatch.setattr(bt, "_table", counted_table)
    query = {"search": DEFAULT_METHOD, "baseline": "true"}
    at = open_page("pages/1_Budget_explorer.py", query, no_error=True)
    assert counted["fit"] == 1
    assert counted["backtest"] == 1
    fitted = [d.value for d in at.dataframe]
    said = [(m.label, m.value) for m in at.metric] + [c.value for c in at.caption]
    # As the Data page's refresh button does: through the server's writer, which closes the
    # pages' read handles first.
    from lifelong_core.workflows import lifelong_state
    from ui.shared_store import write

    write(
        own_store, lambda s: lifelong_state.refresh(s, s.datasets()["dataset"].item()), "127.0.0.1"
    )
    st.cache_data.clear()
    st.cache_resource.clear()
    counted["fit"] = counted["backtest"] = 0
    at = open_page("pages/1_Budget_explorer.py", query, no_error=True)
    assert counted["fit"] == 0
    assert counted["backtest"] == 0
    kept = [d.value for d in at.dataframe]
    assert len(kept) == len(fitted) > 0
    for a, b in zip(kept, fitted):
        pd.testing.assert_frame_equal(a, b)
    assert [(m.label, m.value) for m in at.metric] + [c.value for c in at.caption] == said
