"""Shared fixtures.

The demo store is built once per machine by `make test` (data/demo.duckdb); when pytest
is run directly and the file is missing, the fixture builds it the same way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO_STORE = Path(os.environ.get("LBE_STORE", ROOT / "data" / "demo.duckdb"))


@pytest.fixture(scope="session")
def demo_store_path() -> Path:
    if not DEMO_STORE.exists():
        subprocess.run(
            [sys.executable, "-m", "lifelong_core", "build-demo", "--store", str(DEMO_STORE)],
            cwd=ROOT,
            check=True,
        )
    return DEMO_STORE


@pytest.fixture(scope="session")
def vtab_csv() -> Path:
    """The VTAB-1k leaderboard bundled under data/vtab1k/ (or $LBE_VTAB_LEADERBOARD)."""
    from lifelong_core.stats.vtab import LEADERBOARD_CSV

    assert LEADERBOARD_CSV.exists(), f"the bundled VTAB-1k leaderboard {LEADERBOARD_CSV} is missing"
    return LEADERBOARD_CSV


def pytest_sessionfinish(session, exitstatus):
    # Pages cache DuckDB handles in Streamlit's caches; freeing them before interpreter
    # shutdown keeps DuckDB's binding from printing leak warnings after the summary.
    import gc

    import streamlit as st
    from streamlit.logger import set_log_level

    # Outside a Streamlit runtime clearing a cache logs a harmless warning; keep it quiet.
    set_log_level("error")
    st.cache_resource.clear()
    st.cache_data.clear()
    gc.collect()


@pytest.fixture(scope="session")
def user_store_path(tmp_path_factory) -> Path:
    """A store built the way a user builds one (lm-eval runs without groups, a second
    dataset by other models, no confidences); see ``tests/user_store.py``."""
    from tests.user_store import build_user_store

    work = tmp_path_factory.mktemp("user-store")
    return build_user_store(work / "user.duckdb", work)


@pytest.fixture(autouse=True)
def _no_dense_limit_leaks():
    """Pages set the app's dense-read limit process-wide (ui.common); AppTest runs them in
    this process, so a later library test would otherwise inherit it."""
    from lifelong_core import limits

    yield
    limits.set_dense_limit(None)
