"""ui.common.input_errors: bad input becomes one error box, never a traceback."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

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
    assert [e.value for e in at.error] == ["the budget 0 is below 1."]
    texts = [m.value for m in at.markdown]
    assert "before" in texts and not any(t.startswith("after") for t in texts)


def test_input_error_without_stop_lets_the_page_go_on():
    at = run(False)
    assert [e.value for e in at.error] == ["the budget 0 is below 1."]
    assert "after ok=False" in [m.value for m in at.markdown]
