"""Hostile and careless use of the app: concurrent writes, the insert_D target, tracebacks
and wrong messages, unbounded URL and upload work, exposure on a network address. Real Streamlit (AppTest) and a real DuckDB file throughout.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomllib
from streamlit.testing.v1 import AppTest

from lifelong_core.errors import InputError
from lifelong_core.limits import MAX_SEED
from lifelong_core.store import Store
from tests.app.test_page_evaluate_new import _selected
from tests.store_content import content

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "pages"


def page(name: str, query: dict | None = None, timeout: int = 240) -> AppTest:
    at = AppTest.from_file(str(PAGES / name), default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def unescaped(el) -> str:
    return el.value.replace("\\", "")


@pytest.fixture
def store_copy(tmp_path, demo_store_path, monkeypatch):
    p = tmp_path / "copy.duckdb"
    shutil.copy(demo_store_path, p)
    monkeypatch.setenv("LBE_STORE", str(p))
    return p


@pytest.fixture
def small_store(tmp_path):
    p = tmp_path / "small.duckdb"
    with Store.create(p) as st:
        A = (np.arange(6 * 50).reshape(6, 50) % 3 == 0).astype(np.uint8)
        st.insert_matrix(A, [f"m{i}" for i in range(6)], [f"s{j}" for j in range(50)], dataset="d")
    return p


# ------------------------------------------------------------------ finding 3: concurrent sessions
def _hammer(path: Path, stop: threading.Event, errors: list, seen: list) -> None:
    from ui.shared_store import SharedStore

    store = SharedStore(path)
    while not stop.is_set():
        try:
            n = len(store.models())
            store.known(None, None)  # every entry of the store, recorded or not
            seen.append(n)
        except Exception as exc:
            errors.append(repr(exc))
            return


def test_writes_never_disturb_readers(small_store):
    """Readers in four threads (other sessions) keep working through three writes."""
    from ui.shared_store import write

    stop, errors, seen = threading.Event(), [], []
    threads = [
        threading.Thread(target=_hammer, args=(small_store, stop, errors, seen)) for _ in range(4)
    ]
    for t in threads:
        t.start()
    try:
        time.sleep(0.3)
        for k in range(3):
            write(
                small_store,
                lambda w, k=k: w.insert_matrix(
                    np.ones((1, 50), np.uint8), [f"new{k}"], [f"s{j}" for j in range(50)]
                ),
                "127.0.0.1",
            )
            time.sleep(0.2)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert not errors, errors[:3]
    assert seen and max(seen) == 9 and min(seen) >= 6


def test_insert_from_a_page_while_other_sessions_read(store_copy):
    """Two sessions: one inserts a model through the page while another keeps reading."""
    stop, errors, seen = threading.Event(), [], []
    reader = threading.Thread(target=_hammer, args=(store_copy, stop, errors, seen))
    with Store.open(store_copy) as s:
        n_before = s.n_models
    writer = page("3_Evaluate_something_new.py", {"search": "midpoint", "budget": "64"})
    ids = _selected(store_copy, "midpoint", 64)
    csv = (
        pd.DataFrame({"sample_id": ids, "correct": [i % 2 for i in range(len(ids))]})
        .to_csv(index=False)
        .encode()
    )
    writer.file_uploader[0].upload("r.csv", csv, "text/csv").run()
    writer.text_input(key="new_name").set_value("concurrent-model").run()
    reader.start()
    try:
        writer.button(key="insert_model").click().run()
    finally:
        time.sleep(0.2)
        stop.set()
        reader.join(60)
    assert not writer.exception and not writer.error, [e.value for e in writer.error]
    assert not errors, errors[:3]
    assert seen and max(seen) == n_before + 1
    other = page(
        "3_Evaluate_something_new.py", {"search": "midpoint", "budget": "64"}
    )  # a second session
    assert not other.error


# ------------------------------------------------------------------ finding 4: insert_D target
def test_insert_d_cannot_merge_into_an_existing_dataset_by_name(store_copy):
    from lifelong_core.methods import InsertD
    from lifelong_core.workflows.selection import select

    with Store.open(store_copy, read_only=True) as s:
        sel = select(s, "lifelong-digits")  # the store also holds the leaderboard's models
        models, A = sel.models, sel.A
    rows = InsertD().fit(A).select(A.shape[0], 16, np.random.default_rng(0))
    recs = [
        {"model_id": models["model_id"].iloc[r], "sample_id": "fresh-x", "correct": int(A[r, 7])}
        for r in rows
    ]
    before = content(store_copy)
    at = page(
        "3_Evaluate_something_new.py", {"tab": "New samples (insert_D)", "models_budget": "16"}
    )
    at.file_uploader[0].upload(
        "new.csv", pd.DataFrame(recs).to_csv(index=False).encode(), "text/csv"
    ).run()
    assert at.text_input(key="new_dataset").value == "lifelong-digits-new"
    at.text_input(key="new_dataset").set_value("lifelong-digits").run()
    at.button(key="insert_samples").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "already has a dataset 'lifelong-digits'" in unescaped(
        at.error[0]
    )
    assert content(store_copy) == before
    # A new name works; afterwards that dataset can be chosen from the list, and typing its
    # name again is refused like any existing name.
    at.text_input(key="new_dataset").set_value("lifelong-digits-new").run()
    at.button(key="insert_samples").click().run()
    assert not at.error, [e.value for e in at.error]
    at.run()
    assert not at.radio(key="new_dataset_how").disabled
    at.button(key="insert_samples").click().run()
    assert len(at.error) == 1 and "already has a dataset 'lifelong-digits-new'" in unescaped(
        at.error[0]
    )


def test_model_name_box_refuses_long_or_existing_names(store_copy):
    at = page("3_Evaluate_something_new.py", {"search": "midpoint", "budget": "64"})
    ids = _selected(store_copy, "midpoint", 64)
    with Store.open(store_copy) as s:
        existing = s.models()["model_id"].iloc[0]
    csv = pd.DataFrame({"sample_id": ids, "correct": [1] * len(ids)}).to_csv(index=False).encode()
    at.file_uploader[0].upload("r.csv", csv, "text/csv").run()
    before = content(store_copy)
    at.text_input(key="new_name").set_value(existing).run()
    at.button(key="insert_model").click().run()
    assert (
        not at.exception and len(at.error) == 1 and "already has a model" in unescaped(at.error[0])
    )
    assert content(store_copy) == before
    # The box stops typing at 512 characters in the browser; the page checks again.
    from ui.stores import check_new_model_name

    with pytest.raises(InputError, match="2,000,000 characters long; names may hold at most 512"):
        check_new_model_name("n" * 2_000_000)


# ------------------------------------------------------------------ finding 6/7: URLs and uploads
def test_matched_accuracy_url_bounds(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    t0 = time.perf_counter()
    at = page("8_Matched_accuracy.py", {"src_dom": "", "tgt_dom": "", "seed": str(10**40)})
    assert time.perf_counter() - t0 < 120  # was 130 s of matching; the refusal needs none
    assert any("above the app's limit" in unescaped(e) for e in at.error)
    assert at.number_input(key="match-seed").value == MAX_SEED


def test_counts_upload_of_1e300_gets_the_right_sentence(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = page("6_Rankings.py", {"source": "upload"})
    body = b"model,task,category,correct,total\nm,t,c,1e300,1e300\nn,t,c,1,2\n"
    at.file_uploader(key="upload").upload("counts.csv", body, "text/csv").run()
    assert not at.exception
    assert len(at.error) == 1 and "'1e300' is larger than" in unescaped(at.error[0])


def test_upload_and_address_bounds_in_config():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["address"] == "127.0.0.1"
    assert cfg["server"]["maxUploadSize"] <= 32
    from ui.serve import streamlit_args

    assert streamlit_args([])[:2] == ["--server.address", "127.0.0.1"]
    given = streamlit_args(["--server.address", "0.0.0.0"])
    assert given[-2:] == ["--server.address", "0.0.0.0"] and given.count("--server.address") == 1


def test_writes_off_when_listening_beyond_loopback(small_store, monkeypatch):
    from ui.shared_store import write, writes_enabled

    monkeypatch.delenv("LBE_APP_WRITES", raising=False)
    assert writes_enabled("127.0.0.1")[0] and writes_enabled("localhost")[0]
    assert not writes_enabled("0.0.0.0")[0] and not writes_enabled("")[0]
    before = content(small_store)
    with pytest.raises(InputError, match="LBE_APP_WRITES=1"):
        write(
            small_store,
            lambda w: w.insert_matrix(
                np.ones((1, 50), np.uint8), ["x"], [f"s{j}" for j in range(50)]
            ),
            "0.0.0.0",
        )
    assert content(small_store) == before
    monkeypatch.setenv("LBE_APP_WRITES", "1")
    assert writes_enabled("0.0.0.0")[0]


# ------------------------------------------------------------------ finding 8: Markdown
def test_store_text_is_rendered_as_text():
    from ui.common import plain

    name = "![t](http://127.0.0.1:9/t.png) **bold** [link](http://x) `code` <img src=x>"
    escaped = plain(name)
    assert not re.search(r"(?<!\\)[`!\[\]()<>*]", escaped), escaped
    assert escaped.replace("\\", "") == name

    def script():
        from lifelong_core.errors import InputError
        from ui.common import input_errors

        with input_errors(stop=False):
            raise InputError(
                "uploaded file names model '![t](http://127.0.0.1:9/t.png)', which is unknown."
            )

    at = AppTest.from_function(script).run()
    assert len(at.error) == 1 and "![" not in at.error[0].value and "](" not in at.error[0].value
    assert (
        unescaped(at.error[0])
        == "uploaded file names model '![t](http://127.0.0.1:9/t.png)', which is unknown."
    )


def test_sweep_memo_computes_once_for_sessions_asking_together():
    """Finding 7 (20 sessions): a sweep missed by many sessions at once is computed once."""
    from ui.common import Memo as _Memo

    memo, calls, results = _Memo(4), [], []

    def compute():
        calls.append(1)
        time.sleep(0.3)
        return {"table": [1, 2, 3]}

    threads = [
        threading.Thread(target=lambda: results.append(memo.get_or_compute("k", compute)))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(calls) == 1 and results == [{"table": [1, 2, 3]}] * 8

    def boom():
        raise InputError("bad")

    with pytest.raises(InputError):
        memo.get_or_compute("j", boom)
    assert memo.get_or_compute("j", lambda: 5) == 5  # a failed computation leaves no stale waiter


def test_the_apps_read_handle_caps_duckdb_memory(small_store, monkeypatch):
    """The server's read handle lives as long as the server: DuckDB's cache must not grow
    with every block a page ever read (LBE_APP_DUCKDB_MEMORY sets the cap)."""
    from ui import shared_store

    monkeypatch.setenv(shared_store.MEMORY_ENV, "300MB")
    monkeypatch.setattr(shared_store, "_HANDLES", {})
    store = shared_store.SharedStore(small_store)
    assert store.sql("SELECT current_setting('memory_limit') AS m")["m"][0] == "286.1 MiB"


def test_serving_options_are_set_unless_given():
    from ui.serve import SERVING_OPTIONS, streamlit_args

    args = streamlit_args([])
    for option, value in SERVING_OPTIONS.items():
        assert args[args.index(f"--{option}") + 1] == value
    mine = streamlit_args(["--runner.postScriptGC", "true"])
    assert mine.count("--runner.postScriptGC") == 1 and mine[-1] == "true"
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["runner"]["postScriptGC"] is False


def test_a_keyed_chart_is_built_once_per_server_and_escaped():
    """Under load, building and escaping the same figure for every visitor held the
    interpreter lock; with a key it is built once and shared by every session (and is
    still escaped)."""

    def script():
        import sys
        import types

        import plotly.graph_objects as go

        from ui.common import show_chart

        # Counts builds across sessions (two AppTests are two sessions of one process).
        counter = sys.modules.setdefault("_keyed_chart_builds", types.ModuleType("c"))
        counter.__dict__.setdefault("built", [])

        def build():
            counter.built.append(1)
            return go.Figure(go.Bar(x=["<b>m</b>", "n"], y=[1, 2], name="<i>x</i>"))

        show_chart(build, "shared-test-chart", key=("shared-test", 1))

    sessions = [AppTest.from_function(script, default_timeout=60) for _ in range(3)]
    for at in sessions:
        at.run()
        at.run()
        assert not at.exception
    import sys

    assert sys.modules["_keyed_chart_builds"].built == [1]
    spec = json.loads(sessions[-1].get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["x"] == ["&lt;b&gt;m&lt;/b&gt;", "n"]
    assert spec["data"][0]["name"] == "&lt;i&gt;x&lt;/i&gt;"


def test_home_reads_the_page_files_once():
    from ui.common import page_summary

    page = next((ROOT / "pages").glob("1_*.py"))
    page_summary.cache_clear()
    page_summary(page)
    page_summary(page)
    assert page_summary.cache_info().hits == 1 and page_summary.cache_info().misses == 1
