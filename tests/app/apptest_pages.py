"""Running a page under Streamlit's AppTest, as the page tests do."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def ok(at: AppTest) -> None:
    """The run raised nothing and showed no error box."""
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def open_page(
    page: str | Path, query: dict | None = None, timeout: int = 240, no_error: bool = False
) -> AppTest:
    """``page`` (a path, relative to the checkout or absolute) run once with ``query`` in
    its URL. It must raise nothing; with ``no_error`` it must show no error box either."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if no_error:
        ok(at)
    else:
        assert not at.exception, [e.message for e in at.exception]
    return at


def open_fresh(page: str | Path, store: Path, monkeypatch) -> AppTest:
    """``page`` opened on ``store`` with every Streamlit cache empty before and after, as a
    fresh server would open it; it must show no error."""
    import streamlit as st

    monkeypatch.setenv("LBE_STORE", str(store))
    st.cache_data.clear()
    st.cache_resource.clear()
    try:
        return open_page(page, no_error=True)
    finally:
        st.cache_data.clear()
        st.cache_resource.clear()
