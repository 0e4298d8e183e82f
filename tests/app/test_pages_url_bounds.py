"""Every page's URL is bounded: a hand-written link never raises and never buys minutes of
the server's CPU.

``/Budget_explorer`` with every numeric parameter at 99999999999999999999999 took 161 s
and 225 CPU-seconds; ``/Backtest?run=1&repeats=20&methods=<all 9>&budgets=<all 39>`` ran
past 300 s; ``/Backtest?seed=99999999999999999999999`` raised
``StreamlitValueAboveMaxError``. Now numbers outside a widget's range are clipped, and
every view estimates its work from its parameters before computing and refuses a view
over the budget (``LBE_APP_WORK``) in one sentence.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.methods import available_methods

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["app.py"] + [f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))]
HUGE = "99999999999999999999999"
ODD = ["nan", "-inf", "1e308", "-" + HUGE, "0x10", ""]
# The huge number and NaN on every view in every run; the other odd values in the slow run.
VALUES = [HUGE, "nan"] + [pytest.param(v, marks=pytest.mark.slow) for v in ODD[1:]]


def _run(page: str, store: Path, query: dict, monkeypatch) -> AppTest:
    monkeypatch.setenv("LBE_STORE", str(store))
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    return at


_URL_KEY = re.compile(
    r'(?:query_default|query_list|url_index)\(\s*"([\w-]+)"'
    # The shared inputs take a label, then the URL key: the second text on the line.
    r'|(?:int_input|int_slider|url_number)\([^\n"]*"[^"]*",[^\n"]*"([\w-]+)"'
)


def _url_keys(page: str) -> list[str]:
    """Every URL parameter the page or the shared widgets read (read from their source)."""
    files = [ROOT / page, *sorted((ROOT / "ui").glob("*.py"))]
    keys = set()
    for f in files:
        for a, b in _URL_KEY.findall(f.read_text()):
            keys.add(a or b)
    return sorted(keys)


# Pages whose tabs or sources are in the URL: each is opened too.
VIEWS = (
    [(p, {}) for p in PAGES]
    + [
        ("pages/1_Budget_explorer.py", {"tab": t})
        for t in (
            "vs CopyNearest&Expand",
            "Design choices",
            "Model correlation",
            "New samples (insert_D)",
        )
    ]
    + [
        ("pages/3_Evaluate_something_new.py", {"tab": t})
        for t in (
            "New samples (insert_D)",
            "Until sure (adaptive)",
            "A new model with lm-eval or Inspect",
        )
    ]
    + [
        ("pages/6_Rankings.py", {"source": "store", "tab": t})
        for t in ("Leaderboard", "Pairwise differences", "Rank intervals")
    ]
    + [("pages/7_Task_weighting.py", {"wsource": "store"})]
)


@pytest.mark.parametrize(
    "page,view", VIEWS, ids=[f"{Path(p).stem}-{'-'.join(v.values())}" for p, v in VIEWS]
)
@pytest.mark.parametrize("value", VALUES)
def test_every_numeric_parameter_out_of_range_is_clipped_not_a_traceback(
    page, view, value, hostile_store, monkeypatch
):
    # Every parameter at once, text ones included (a number where a name is expected).
    query = dict.fromkeys(_url_keys(page), value) | {"run": "1"} | view
    at = _run(page, hostile_store, query, monkeypatch)
    assert not at.exception, (query, [e.message for e in at.exception])
    assert len(at.error) <= 1, [e.value for e in at.error]


def test_a_sweep_view_over_the_work_budget_is_one_sentence(hostile_store, monkeypatch):
    monkeypatch.setenv("LBE_APP_WORK", "0.001")
    at = _run("pages/1_Budget_explorer.py", hostile_store, {"reps": "20"}, monkeypatch)
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "units of work" in errors[0] and "LBE_APP_WORK" in errors[0]
    assert not at.get("plotly_chart"), "the sweep ran although the view was refused"


def test_the_budget_grows_with_every_parameter(monkeypatch):
    from ui.controls import backtest_work, sweep_work

    base = sweep_work("auto", 100, 40, 10_000, 6)
    assert sweep_work("auto", 100, 40, 10_000, 12) > base
    assert sweep_work("auto", 200, 40, 10_000, 6) > base
    assert sweep_work("auto", 100, 40, 20_000, 6) > base
    # The registry's capabilities set the cost: a cheap rule far below a self-tuning method.
    assert sweep_work("midpoint", 100, 40, 10_000, 6) < base / 10
    one = backtest_work(["auto", "random"], 440, 10_700, 10, 4, 3)
    every = backtest_work(available_methods(), 440, 10_700, 10, 15, 20)
    assert every > 10 * one


def test_the_backtest_page_refuses_an_unbounded_link(hostile_store, monkeypatch):
    monkeypatch.setenv("LBE_APP_WORK", "0.001")
    query = {
        "run": "1",
        "repeats": "20",
        "methods": ",".join(available_methods()),
        "budgets": "1,2,4,8,16,32,64,128,180",
        "seed": HUGE,
    }
    at = _run("pages/10_Backtest.py", hostile_store, query, monkeypatch)
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "units of work" in errors[0], errors


def test_a_bad_work_setting_is_one_sentence(hostile_store, monkeypatch):
    monkeypatch.setenv("LBE_APP_WORK", "lots")
    at = _run("pages/1_Budget_explorer.py", hostile_store, {}, monkeypatch)
    assert not at.exception
    assert [e.value for e in at.error] == ["LBE\\_APP\\_WORK\\='lots' is not a number\\."] or (
        len(at.error) == 1 and "LBE" in at.error[0].value
    )
