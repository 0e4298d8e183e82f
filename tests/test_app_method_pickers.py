"""Every page's method picker lists the method registry (ui.data.method_names), so a
method added with one ``register`` line is offered, and runs, with no page edit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.methods import Estimate, check_fitted, check_observations, register, unregister
from lifelong_core.sortsearch.search import check_budget

ROOT = Path(__file__).resolve().parents[1]
TINY = "tiny-first-samples"


class TinyFirstSamples:
    """Evaluate the first ``budget`` samples; predict every other sample as their mean rounded."""

    def fit(self, A_sort, order=None, confidence=None):
        self.n_ = np.asarray(A_sort).shape[1]
        return self

    def select(self, n, budget, rng=None):
        check_fitted(self, "n_")
        check_budget(n, budget)
        return np.arange(budget, dtype=np.int64)

    def estimate(self, indices, observed):
        check_fitted(self, "n_")
        idx, obs = check_observations(indices, observed, self.n_)
        y = np.full(self.n_, int(2 * obs.sum() >= len(obs)), dtype=np.uint8)
        y[idx] = obs
        return Estimate(float(y.mean()), None, None, y)


@pytest.fixture(autouse=True)
def tiny_registered(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    register(TINY, TinyFirstSamples)  # the one line that adds a method
    yield
    unregister(TINY)


def run(page: str, **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=240)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.parametrize("page,query,key", [
    ("2_Estimated_vs_true.py", {"search": "midpoint"}, "search"),
    ("3_Evaluate_something_new.py", {"search": "midpoint"}, "search"),
    ("6_Rankings.py", {"source": "estimated"}, "ss_method"),
])
def test_every_picker_offers_a_registered_method(page, query, key):
    at = run(page, **query)
    assert TINY in at.selectbox(key=key).options


def test_a_registered_method_runs_on_the_budget_explorer():
    at = run("1_Budget_explorer.py", search=TINY, k="50", budgets="16,64")
    assert at.selectbox(key="search").value == TINY
    shown = {m.label: m.value for m in at.metric}
    assert "MAE at n′=64" in shown


def test_a_registered_method_selects_samples_for_a_new_model():
    at = run("3_Evaluate_something_new.py", search=TINY, budget="16")
    assert at.selectbox(key="search").value == TINY
    assert any("Run the new model on these 16" in m.value for m in at.markdown)
