"""AppTest of the Data page: create a store, import through the page, see the new data on
the Budget explorer in the same session (no server restart), errors in one sentence,
exports, and the page's URL state."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.store import Store
from tests.app.apptest_pages import ok

ROOT = Path(__file__).resolve().parents[2]
DATA = "pages/9_Data.py"


def app(store: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("LBE_STORE", str(store))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    ok(at)
    at.switch_page(DATA)
    at.run()
    ok(at)
    return at


def create_store(at: AppTest, path: Path) -> None:
    """Create a new store at ``path`` on the page (which opens it); ``path`` is in the
    stores folder the test set (``LBE_STORES_DIR``)."""
    at.text_input(key="create_path").set_value(path.name)
    at.button(key="create_btn").click()
    at.run()


def import_file(at: AppTest, uploader: str, name: str, data: bytes, mime: str) -> None:
    """Give the page's uploader ``uploader`` one file and press Import."""
    at.file_uploader(key=uploader).set_value((name, data, mime))
    at.run()
    at.button(key="import_btn").click()
    at.run()


def test_create_import_and_see_it_on_the_budget_explorer(demo_store_path, tmp_path, monkeypatch):
    from tests.user_store import own_eval_csv

    monkeypatch.setenv("LBE_STORES_DIR", str(tmp_path))
    at = app(demo_store_path, monkeypatch)
    new = tmp_path / "mine.duckdb"
    create_store(at, new)
    ok(at)
    assert new.exists() and any("Created and opened" in s.value for s in at.success)
    csv = own_eval_csv(tmp_path / "my_eval.csv")
    import_file(at, "up_long", csv.name, csv.read_bytes(), "text/csv")
    ok(at)
    assert any("imported 1260 predictions" in s.value for s in at.success), [
        s.value for s in at.success
    ]
    with Store.open(new) as s:
        assert s.datasets()["dataset"].tolist() == ["my-eval"]
    at.switch_page("pages/1_Budget_explorer.py")
    at.run()
    ok(at)
    ds = next(w for w in at.sidebar.selectbox if w.label == "Dataset")
    assert ds.options == ["my-eval"] and ds.value == "my-eval"
    assert any("my\\-eval" in c.value or "my-eval" in c.value for c in at.caption)
    assert not any("scikit" in c.value for c in at.caption)


def test_bad_upload_is_one_sentence_and_writes_nothing(user_store_path, tmp_path, monkeypatch):
    import shutil

    store = tmp_path / "copy.duckdb"
    shutil.copy(user_store_path, store)
    before = store.stat().st_mtime_ns
    at = app(store, monkeypatch)
    import_file(at, "up_long", "bad.csv", b"model,sample,correct\nm1,s1,2\n", "text/csv")
    assert not at.exception
    assert len(at.error) == 1 and "correct" in at.error[0].value and "\n" not in at.error[0].value
    with Store.open(store) as s:
        assert s.n_models == 23
    assert store.stat().st_mtime_ns == before


def test_zip_of_lm_eval_runs_imports_every_model(tmp_path, monkeypatch, demo_store_path):
    from tests.user_store import lm_eval_runs

    runs = lm_eval_runs(tmp_path / "out")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for folder in list(runs.values())[:3]:
            for f in folder.iterdir():
                zf.write(f, f"out/{folder.name}/{f.name}")
    monkeypatch.setenv("LBE_STORES_DIR", str(tmp_path))
    at = app(demo_store_path, monkeypatch)
    new = tmp_path / "llm.duckdb"
    create_store(at, new)
    at.radio(key="fmt").set_value("lm-eval")
    at.run()
    import_file(at, "up_lm-eval", "runs.zip", buf.getvalue(), "application/zip")
    ok(at)
    # One import of the three runs (one transaction), as the command line does.
    done = [s.value for s in at.success if "imported" in s.value]
    assert len(done) == 1 and "imported 540 predictions from 3 of 3 runs" in done[0], done
    with Store.open(new) as s:
        assert sorted(s.models()["model_id"]) == sorted(list(runs)[:3])
        assert set(s.domains()["domain"]) == {"arc_easy", "boolq", "piqa"}
    assert at.query_params["fmt"] == ["lm-eval"] or at.query_params["fmt"] == "lm-eval"


def test_export_counts_and_url_state(user_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(user_store_path))
    at = AppTest.from_file(str(ROOT / DATA), default_timeout=240)
    at.query_params["fmt"] = "matrix"
    at.query_params["xds"] = "my-eval"
    at.query_params["dataset"] = "mine"
    at.run()
    ok(at)
    assert at.radio(key="fmt").value == "matrix"
    assert at.selectbox(key="xds").value == "my-eval"
    assert at.text_input(key="imp_dataset").value == "mine"
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download counts.csv" in labels and "Download the long table (CSV)" in labels
    at.radio(key="fmt").set_value("lm-eval")
    at.selectbox(key="xds").set_value("lm-eval")
    at.run()
    ok(at)
    assert at.query_params["fmt"] in ("lm-eval", ["lm-eval"]) and at.query_params["xds"] in (
        "lm-eval",
        ["lm-eval"],
    )


@pytest.mark.harness
def test_inspect_logs_import_through_the_page(tmp_path, monkeypatch, demo_store_path, inspect_logs):
    """Real Inspect logs (written offline by Inspect's mockllm, tests/data/inspect_toy)."""
    match = inspect_logs["toy-match"]
    partial = inspect_logs["toy-partial"]
    monkeypatch.setenv("LBE_STORES_DIR", str(tmp_path))
    at = app(demo_store_path, monkeypatch)
    new = tmp_path / "inspect.duckdb"
    create_store(at, new)
    at.radio(key="fmt").set_value("inspect")
    at.run()
    import_file(at, "up_inspect", partial.name, partial.read_bytes(), "application/octet-stream")
    assert (
        not at.exception and len(at.error) == 1 and "\n" not in at.error[0].value
    )  # partial credit: refused
    import_file(at, "up_inspect", match.name, match.read_bytes(), "application/octet-stream")
    ok(at)
    assert any("imported 8 predictions" in s.value for s in at.success), [
        s.value for s in at.success
    ]
    with Store.open(new) as s:
        assert s.models()["model_id"].tolist() == ["mockllm/model"]
