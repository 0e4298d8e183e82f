"""The teaching page's Theorem 2.1 example and Table 1 simulation study."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "4_How_Sort_and_Search_works.py")


def run(monkeypatch, store, **query) -> AppTest:
    monkeypatch.setenv("LBE_STORE", str(store))
    return open_page(PAGE, query, timeout=300)


def test_theorem21_default_and_typed(demo_store_path, monkeypatch):
    at = run(monkeypatch, demo_store_path)
    assert not at.error
    m = {x.label: x.value for x in at.metric}
    assert m["E_agg"] == "0.000" and m["MAE"] == "0.800"
    at = run(monkeypatch, demo_store_path, t21="1110")
    m = {x.label: x.value for x in at.metric}
    assert m["E_agg"] == "0.000" and m["MAE"] == "0.500"  # 2 min(0.75, 0.25)
    at = run(monkeypatch, demo_store_path, t21="10x1")
    assert len(at.error) == 1 and "only 0 and 1" in at.error[0].value


@pytest.mark.slow
def test_simulation_study_on_request(demo_store_path, monkeypatch):
    at = run(monkeypatch, demo_store_path, sim="1")
    assert not at.error
    table = next(d.value for d in at.dataframe if "published 95% interval" in d.value.columns)
    assert table["published 95% interval"].tolist()[:2] == ["(-0.059, +0.097)", "(-0.021, -0.003)"]
    assert table["excludes 0"].tolist() == [False, True, False]
