"""Every test in this folder drives a real Streamlit server and headless Chromium: each is
marked ``browser``, so ``make test-fast`` (``-m "not browser"``) leaves the folder out.

The servers are session fixtures, started by the first test that needs them, whichever
file it is in, and stopped at the end of the session. Under ``pytest-xdist`` the folder's
tests form one unit of work (``--dist loadgroup``, as ``make test`` runs; the scheduler is
``tests/conftest.py``'s): one worker starts each server once and its caches serve every page
after the first, instead of every worker starting and warming its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.serving import CHROMIUM, CHROMIUM_ARGS, serve

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before the root conftest sorts by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def server(demo_store_path):
    with serve(demo_store_path, "streamlit-server.log") as base:
        yield base


@pytest.fixture(scope="session")
def user_server(user_store_path):
    """The app on a store built the way a user builds one (tests/user_store.py)."""
    with serve(user_store_path, "streamlit-server-user-store.log") as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def llm_server(llm_store_path, tmp_path_factory):
    """A server on a store holding only the bundled Open LLM Leaderboard v2 results, so
    every page opens on that dataset (a copy: the round trip inserts into it)."""
    import shutil

    from lifelong_core.store import Store

    path = tmp_path_factory.mktemp("llm-browser") / "llm.duckdb"
    shutil.copy2(llm_store_path, path)
    with Store.open(path, read_only=True) as st:
        smp = st.samples()
        # One stored model's real results, read before the server holds the file.
        first = dict(
            zip(smp["sample_id"], st.matrix([0], smp["sample_idx"].to_numpy())[0].tolist())
        )
    with serve(path, "streamlit-server-llm.log") as base:
        yield base, first
