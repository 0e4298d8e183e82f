"""Every page on the bundled Open LLM Leaderboard v2 dataset (real language-model results).

The store holds only that dataset, built the way build-demo adds it (through the long
import), so each page opens on it by default; Home must report the 19 names stored once
and the partial model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py"))


@pytest.fixture(scope="module")
def llm_store(llm_store_path):
    return llm_store_path


@pytest.fixture(autouse=True)
def store_env(llm_store, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(llm_store))
    return llm_store


def run(page: str, query: dict | None = None) -> AppTest:
    return open_page(page, query, timeout=300, no_error=True)


def text(at: AppTest) -> str:
    parts = (
        [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    )
    parts += [w.value for w in at.warning]
    return "\n".join(str(p) for p in parts)


@pytest.mark.slow
def test_home_reports_duplicates_and_the_partial_model():
    at = run("app.py")
    body = text(at).replace("\\", "")  # names are shown escaped: what the visitor reads
    assert "Qwen/Qwen2-VL-7B-Instruct" in body and "partial" in body
    assert "19 model names appear twice" in body
    tables = [t.value for t in at.dataframe]
    assert any("open-llm-leaderboard-v2" in df.to_string() for df in tables)


# Budgets below the smallest task keep the pages quick; mirt (the Evaluate page's default)
# is fitted once per module through the app's cache.
@pytest.mark.slow
@pytest.mark.parametrize(
    "page,query",
    [
        ("pages/1_Budget_explorer.py", {"budgets": "16,64", "search": "reference"}),
        (
            "pages/1_Budget_explorer.py",
            {"budgets": "32", "search": "reference", "tab": "Model correlation"},
        ),
        ("pages/2_Estimated_vs_true.py", {"budgets": "32,128", "search": "reference"}),
        ("pages/3_Evaluate_something_new.py", {"search": "neighbours", "budget": "64"}),
        ("pages/3_Evaluate_something_new.py", {"tab": "New samples (insert_D)"}),
        ("pages/4_How_Sort_and_Search_works.py", {}),
        ("pages/5_Stream.py", {}),
        ("pages/6_Rankings.py", {"source": "store"}),
        # Only the open tab runs: the others are opened through the URL.
        ("pages/6_Rankings.py", {"source": "store", "tab": "Pairwise differences"}),
        ("pages/6_Rankings.py", {"source": "store", "tab": "Rank intervals"}),
        ("pages/6_Rankings.py", {"source": "store", "tab": "Bayesian model"}),
        ("pages/7_Task_weighting.py", {"wsource": "store"}),
        ("pages/7_Task_weighting.py", {"wsource": "store", "wtab": "Interactive (plotly)"}),
        ("pages/8_Matched_accuracy.py", {"src_ds": "open-llm-leaderboard-v2"}),
        ("pages/9_Data.py", {}),
        (
            "pages/10_Backtest.py",
            {"methods": "reference", "budgets": "32", "holdout": "3", "repeats": "1", "run": "1"},
        ),
    ],
)
def test_page_works_on_the_leaderboard(page, query):
    at = run(page, query)
    assert at.title
    assert (
        "open-llm-leaderboard-v2" in str(dict(at.query_params))
        or page in ("pages/7_Task_weighting.py", "pages/8_Matched_accuracy.py", "pages/9_Data.py")
        or any(s.value == "open-llm-leaderboard-v2" for s in at.selectbox)
    )


def test_every_page_is_covered():
    covered = {p for p, _ in test_page_works_on_the_leaderboard.pytestmark[0].args[1]}
    assert covered == set(PAGES)


def test_matched_accuracy_says_why_it_cannot_run_on_correctness_only():
    at = run("pages/8_Matched_accuracy.py")
    assert any("no labels, predicted labels or probabilities" in i.value for i in at.info)
