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


@pytest.fixture(scope="session", autouse=True)
def tuning_memory_folder(tmp_path_factory) -> Path:
    """The default estimator's remembered choices (``lifelong_core.methods.tuning_memory``)
    go to one folder of the session, shared by the workers and every process they start
    (servers, commands, notebook kernels), never to the user's cache folder. A test of the
    remembering itself points it elsewhere."""
    from tests.shared import session_folder

    folder = session_folder(tmp_path_factory) / "auto-tuning"
    os.environ["LBE_TUNING_CACHE"] = str(folder)
    return folder


@pytest.fixture(scope="session", autouse=True)
def installed_components_scanned_once():
    """Streamlit's AppTest scans every installed distribution for Streamlit components each
    time an AppTest is made (about half a second, for hundreds of AppTests in the suite).
    The installed packages do not change during a session: the first scan's result serves
    every later one. (Should a Streamlit release move the scanner, nothing is patched and
    each AppTest scans again.)"""
    from streamlit.components.v2 import manifest_scanner

    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is None:
        yield
        return
    found = scan()
    manifest_scanner.scan_component_manifests = lambda *args, **kwargs: list(found)
    try:
        yield
    finally:
        manifest_scanner.scan_component_manifests = scan


@pytest.fixture(scope="session", autouse=True)
def page_scripts_compiled_once():
    """Each AppTest run compiles its page afresh (a new script cache every run: Streamlit's
    magic rewrite of the syntax tree, then compile), hundreds of runs of the same few pages.
    A served app compiles a page once and reuses it on every rerun; here one compiled page
    serves every run of the session, keyed by its path and its text, so a file that changes
    compiles again. (Should a Streamlit release move the cache, nothing is patched.)"""
    from streamlit import config
    from streamlit.runtime.scriptrunner import script_cache

    cache = getattr(script_cache, "ScriptCache", None)
    compile_page = getattr(cache, "get_bytecode", None)
    if compile_page is None:
        yield
        return
    compiled: dict[tuple[str, bytes, bool], object] = {}

    def get_bytecode(self, script_path):
        path = os.path.abspath(script_path)
        with open(path, "rb") as f:
            key = (path, f.read(), bool(config.get_option("runner.magicEnabled")))
        if key not in compiled:
            compiled[key] = compile_page(self, script_path)
        return compiled[key]

    cache.get_bytecode = get_bytecode
    try:
        yield
    finally:
        cache.get_bytecode = compile_page


@pytest.fixture(scope="session")
def vtab_csv() -> Path:
    """The VTAB-1k leaderboard bundled under data/vtab1k/ (or $LBE_VTAB_LEADERBOARD)."""
    from lifelong_core.stats.vtab import LEADERBOARD_CSV

    assert LEADERBOARD_CSV.exists(), f"the bundled VTAB-1k leaderboard {LEADERBOARD_CSV} is missing"
    return LEADERBOARD_CSV


# Tests that run on one worker, one after another, under ``--dist loadgroup`` (``make test``),
# by the start of their node id. The browser folder: each of its servers and its browser
# start once. The documentation's examples and notebooks: they share the default
# estimator's remembered choices (``tuning_memory_folder``), and run in turn a page reuses
# what an earlier one cross-validated, where pages run at once on several workers each
# computed it.
WORKER_GROUPS = {
    "tests/browser/": "browser",
    "tests/docs/test_docs_examples.py::": "docs",
    "tests/docs/test_notebooks.py::": "docs",
}


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` sends each group of :data:`WORKER_GROUPS` to one worker, as one
    unit of work; every other test is a unit of its own.

    pytest-xdist groups ``xdist_group`` tests by a suffix it writes into each test's node id
    on the worker; pytest 9 builds the id from its own parts, the suffix never reaches the
    scheduler and a group's tests went to every worker (each starting its own servers and
    Chromium). The groups are therefore decided here, on the node ids the scheduler sees."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            for start, group in WORKER_GROUPS.items():
                if nodeid.startswith(start):
                    return group
            return nodeid

    return Grouped(config, log)


@pytest.hookimpl(trylast=True)  # after the folders' conftests have added their markers
def pytest_collection_modifyitems(config, items):
    """Slow and browser tests first, in their file order: under ``pytest-xdist`` a
    minute-long test (or the browser group) sent last would keep one worker busy after the
    others are done."""
    items.sort(key=lambda item: not any(item.get_closest_marker(m) for m in ("slow", "browser")))


def pytest_sessionfinish(session, exitstatus):
    # Pages cache DuckDB handles in Streamlit's caches; freeing them before interpreter
    # shutdown keeps DuckDB's binding from printing leak warnings after the summary.
    if "streamlit" not in sys.modules:
        return  # nothing was cached (the xdist controller, a run without pages)
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
    from tests.shared import built_once
    from tests.user_store import build_user_store

    def build(folder: Path) -> None:
        build_user_store(folder / "user.duckdb", folder / "work")

    return built_once(tmp_path_factory, "user-store", build) / "user.duckdb"


@pytest.fixture(scope="session")
def small_synthetic_path(tmp_path_factory) -> Path:
    """A small store from the seeded generator (30 models x 600 samples, two clusters),
    built once, for the tests of what ``lbe state --refresh`` keeps. Readers only: a test
    that writes copies it first."""
    from lifelong_core.datasets.synthetic import SyntheticSpec, write_store
    from tests.shared import built_once

    def build(folder: Path) -> None:
        write_store(
            SyntheticSpec(n_models=30, n_samples=600, seed=5, n_clusters=2, cluster_spread=1.0),
            folder / "s.duckdb",
        )

    return built_once(tmp_path_factory, "small-synthetic", build) / "s.duckdb"


@pytest.fixture(scope="session")
def llm_store_path(tmp_path_factory) -> Path:
    """A store holding only the bundled Open LLM Leaderboard v2 results, built once the way
    build-demo adds them (the long import), so every page opens on that dataset. Readers
    only: a test that writes copies it first."""
    from lifelong_core.datasets import leaderboard
    from lifelong_core.store import Store
    from tests.shared import built_once

    def build(folder: Path) -> None:
        with Store.create(folder / "llm.duckdb") as st:
            leaderboard.insert(st)

    return built_once(tmp_path_factory, "llm-store", build) / "llm.duckdb"


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory) -> dict[str, Path]:
    """Real Inspect AI logs, written once by tests/data/inspect_toy/write_logs.py
    (one tiny task under three scorers, Inspect's scripted mockllm, offline), by task name:
    ``toy-match`` (C/I), ``toy-binary`` (0/1) and ``toy-partial`` (0.5 for a wrong answer).
    Readers only: a test that changes a log copies it first."""
    pytest.importorskip("inspect_ai")
    from tests.shared import built_once

    log_dir = built_once(tmp_path_factory, "inspect-logs", _write_inspect_logs)
    found = {}
    for p in log_dir.iterdir():
        for task in ("toy-match", "toy-binary", "toy-partial"):
            if f"_{task}_" in p.name:
                found[task] = p
    assert set(found) == {"toy-match", "toy-binary", "toy-partial"}, sorted(
        p.name for p in log_dir.iterdir()
    )
    return found


def _write_inspect_logs(log_dir: Path) -> None:
    env = {
        **os.environ,
        "INSPECT_LOG_DIR": str(log_dir),
        "INSPECT_LOG_LEVEL": "warning",
        "HF_HUB_OFFLINE": "1",
        "INSPECT_DISPLAY": "none",
    }
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "data" / "inspect_toy" / "write_logs.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=log_dir,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(autouse=True)
def _no_dense_limit_leaks():
    """Pages set the app's dense-read limit process-wide (ui.common); AppTest runs them in
    this process, so a later library test would otherwise inherit it."""
    from lifelong_core import limits

    yield
    limits.set_dense_limit(None)
