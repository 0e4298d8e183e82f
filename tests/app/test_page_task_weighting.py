"""The Task weighting page under streamlit's AppTest: VTAB default, k/rho, store, categories."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_pages import open_page
from tests.app.test_page_rankings import make_store

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "7_Task_weighting.py")


def run_page(**query) -> AppTest:
    return open_page(PAGE, query, timeout=180)


def regions(at: AppTest):
    return next(d.value for d in at.dataframe if "winner" in d.value.columns)


def clear_share(at: AppTest) -> float:
    metric = next(m for m in at.metric if m.label == "Weightings with a clear winner")
    return float(metric.value.rstrip("%"))


@pytest.fixture
def no_store(monkeypatch, tmp_path):
    monkeypatch.setenv("LBE_STORE", str(tmp_path / "absent.duckdb"))


def test_the_pdf_is_drawn_when_asked_for(no_store, monkeypatch):
    """The PDF button holds a deferred callable (no PDF is drawn on page open); called, as
    a click does, it gives the map as a PDF."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    deferred: dict[str, object] = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        deferred[str(file_name)] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    at = run_page()
    assert not at.exception
    assert "task_weighting.png" not in deferred  # the page's own image, drawn now
    pdf = deferred["task_weighting.pdf"]()
    assert isinstance(pdf, bytes) and pdf.startswith(b"%PDF")


def test_default_vtab_map_without_a_store(no_store):
    at = run_page()
    assert at.radio(key="wsource").value == "published"
    table = regions(at)
    df = table.set_index(["natural", "specialized", "structured"])
    # The LA-UR-24-25289 report (2024) §3.3: Rotation wins when structured tasks dominate; the natural corner
    # is a tie between the two supervised models.
    assert df.loc[(0.0, 0.0, 1.0), "winner"] == "Rotation"
    natural = df.loc[(1.0, 0.0, 0.0)]
    assert natural["winner"] == "indeterminate"
    assert {natural["leader"], natural["runner_up"]} == {"Sup-Rotation-100%", "Sup-Exemplar-100%"}
    assert len(df) == 21 * 22 // 2  # grid step 0.05, as the weights command
    # Only the open tab draws: the static map (with its downloads) by default, plotly on request.
    assert len(at.get("image")) == 1 and len(at.get("plotly_chart")) == 0
    labels = [b.label for b in at.get("download_button")]
    assert "Download ternary map (PNG)" in labels and "Download ternary map (PDF)" in labels
    at = run_page(wtab="Interactive (plotly)")
    assert len(at.get("image")) == 0 and len(at.get("plotly_chart")) == 1
    assert "Download ternary map (PNG)" not in [b.label for b in at.get("download_button")]
    assert regions(at).equals(table)


def test_k_and_rho_move_the_gray_zone(no_store):
    at = run_page(k="0")
    none = clear_share(at)
    at.slider(key="k").set_value(3.0).run()
    wide = clear_share(at)
    assert wide < none
    at.slider(key="rho").set_value(0.9).run()
    assert not at.exception
    assert clear_share(at) > wide  # correlation shrinks the SE of the difference (Eq. 3)
    assert at.query_params["rho"] == ["0.9"] or at.query_params["rho"] == "0.9"


def test_normalised_published_map(no_store):
    at = run_page()
    at.toggle(key="wnorm").set_value(True).run()
    assert not at.exception
    df = regions(at).set_index(["natural", "specialized", "structured"])
    assert df.loc[(0.0, 0.0, 1.0), "winner"] == "Rotation"


def test_store_with_four_categories_asks_for_three(monkeypatch, tmp_path):
    path = make_store(tmp_path / "four.duckdb", categories=("a", "b", "c", "d"), m=6, per_domain=40)
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run_page(wsource="store")
    assert at.multiselect(key="wcats").value == ["a", "b", "c"]
    assert set(regions(at).columns) >= {"a", "b", "c", "winner", "runner_up"}
    at.multiselect(key="wcats").set_value(["d", "b", "a"]).run()
    assert not at.exception
    assert list(regions(at).columns[:3]) == ["d", "b", "a"]
    at.toggle(key="wnorm").set_value(True).run()
    assert not at.exception


def test_store_with_two_categories_says_why(monkeypatch, tmp_path):
    path = make_store(tmp_path / "two.duckdb", categories=("a", "b"), m=4, per_domain=30)
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run_page(wsource="store")
    # Not an error: the page says what is missing and where to give the categories.
    assert not at.error
    assert any("three task categories" in i.value and "Task categories" in i.value for i in at.info)
    at.text_area(key="wcatmap").set_value("a-0 = a\na-1 = b\nb-0 = c\nb-1 = c\n").run()
    assert not at.exception and not at.error and len(at.get("image")) == 1
