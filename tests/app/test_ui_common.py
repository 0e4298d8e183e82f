"""ui.common: bad input becomes one error box, never a traceback; pages keep their order."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import streamlit as st
from lifelong_core.errors import InputError
from ui.common import input_errors

STOP = {stop}
bar = st.progress(0.0, text="working")
with input_errors(stop=STOP, cleanup=bar.empty) as box:
    st.write("before")
    raise InputError("the budget 0 is below 1.")
st.write(f"after ok={{box.ok}}")
"""


def run(stop: bool) -> AppTest:
    at = AppTest.from_string(SCRIPT.format(stop=stop), default_timeout=60)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_input_error_stops_the_page_with_one_box():
    at = run(True)
    assert [e.value.replace("\\", "") for e in at.error] == [
        "the budget 0 is below 1."
    ]  # shown as plain text
    texts = [m.value for m in at.markdown]
    assert "before" in texts and not any(t.startswith("after") for t in texts)


def test_input_error_without_stop_lets_the_page_go_on():
    at = run(False)
    assert [e.value.replace("\\", "") for e in at.error] == [
        "the budget 0 is below 1."
    ]  # shown as plain text
    assert "after ok=False" in [m.value for m in at.markdown]


def test_plain_figure_draws_store_text_as_typed_and_leaves_the_original():
    import numpy as np
    import plotly.graph_objects as go

    from ui.common import plain_figure

    names = ["<b>x</b>", "a&b", "<a href='http://e'>link</a>"]
    fig = go.Figure(
        go.Bar(
            y=names,
            x=[1, 2, 3],
            name="<i>n</i>",
            text=names,
            hovertemplate="%{y}<br>%{x}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Heatmap(z=np.eye(3), customdata=np.array([[("<s>", 1)] * 3] * 3, dtype=object))
    )
    fig.update_yaxes(tickvals=[0, 1, 2], ticktext=names)
    out = plain_figure(fig)
    assert list(out.data[0].y) == [
        "&lt;b&gt;x&lt;/b&gt;",
        "a&amp;b",
        "&lt;a href='http://e'&gt;link&lt;/a&gt;",
    ]
    assert out.data[0].name == "&lt;i&gt;n&lt;/i&gt;" and list(out.data[0].text) == list(
        out.data[0].y
    )
    assert out.data[0].hovertemplate == "%{y}<br>%{x}<extra></extra>"  # the app's own markup stays
    assert out.data[1].customdata[0][0][0] == "&lt;s&gt;" and out.data[1].customdata[0][0][1] == 1
    assert list(out.layout.yaxis.ticktext) == list(out.data[0].y)
    assert list(fig.data[0].y) == names  # the figure passed in is untouched


SHARED_SELECTION = """
import streamlit as st
from ui import caches

key = caches.store_key()
dataset = caches.overview(key)["datasets"]["dataset"].iloc[0]
a, b = caches.selection(key, dataset, ()), caches.selection(key, dataset, ())
st.write(f"same={a is b}")
try:
    a.A[0, 0] = 1 - a.A[0, 0]
    st.write("written")
except ValueError:
    st.write("refused")
"""


def test_the_cached_selection_is_shared_and_read_only(demo_store_path, monkeypatch):
    # One object serves every session (no copy per run), so a page must not be able to
    # change it for the others.
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = AppTest.from_string(SHARED_SELECTION, default_timeout=120)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert [m.value for m in at.markdown] == ["same=True", "refused"]


@pytest.mark.slow
def test_server_start_up_prints_no_streamlit_warnings():
    # `make run` warms the imports before serving; Streamlit's "No runtime found" warnings
    # (one per cached function) would greet every user with nine lines that look like faults.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", "import ui.serve; ui.serve.warm_imports()"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "WARNING" not in out.stderr, out.stderr


def test_pages_are_ordered_by_their_numeric_prefix(tmp_path):
    from ui.common import page_files

    for name in ("10_Backtest.py", "9_Data.py", "1_Budget_explorer.py", "notes.py"):
        (tmp_path / name).write_text("")
    assert [p.name for p in page_files(tmp_path)] == [
        "1_Budget_explorer.py",
        "9_Data.py",
        "10_Backtest.py",
        "notes.py",
    ]
    shipped = [p.name for p in page_files(ROOT / "pages")]
    assert shipped[0].startswith("1_") and shipped[-1].startswith("10_")
