"""Real server, real browser: every page renders in headless Chromium without an exception.

Starts ``streamlit run app.py`` on a free localhost port against the demo store, waits for
``/_stcore/health``, then opens the home page and every file in ``pages/`` in Debian's
chromium (driven by Python playwright, no browser download), waits for the script to
finish and the charts to draw, and checks that no Streamlit exception block is on the
page. A page that fails its check leaves a full-page screenshot in ``test-artifacts/``
(with ``LBE_TEST_SCREENSHOTS=1`` every page does: a full-page picture costs Chromium about as
much as drawing the page); with ``LBE_DOCS_SCREENSHOTS=docs/images/app``
(``make docs-screenshots``) the top of each page is also saved there for the documentation,
so its pictures show the app as it is.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.browser.serving import ARTIFACTS, serve

ROOT = Path(__file__).resolve().parents[2]
DOCS_SHOTS = os.environ.get("LBE_DOCS_SCREENSHOTS")
ALL_SHOTS = bool(os.environ.get("LBE_TEST_SCREENSHOTS"))


def _url_path(page_file: Path) -> str:
    # Streamlit's pages/ convention: "3_Evaluate_something_new.py" is served at
    # /Evaluate_something_new (the numeric prefix only orders the sidebar).
    return re.sub(r"^\d+[_ -]*", "", page_file.stem)


def _page_files() -> list[Path]:
    return sorted((ROOT / "pages").glob("*.py"))


def settle(page, timeout_s: float = 120.0, quiet_s: float = 1.5) -> None:
    """Wait until the script has finished and stayed finished for ``quiet_s`` seconds.

    Streamlit marks the app root with ``data-test-script-state`` (``initial``, ``running``,
    ``notRunning``); a rerun triggered by URL sync or a lazy tab flips it back to running,
    hence the quiet period.
    """
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    state_js = """() => {
        const app = document.querySelector('[data-testid="stApp"]');
        const state = app ? app.getAttribute('data-test-script-state') : null;
        const skeleton = document.querySelector('[data-testid="stSkeleton"]') !== null;
        return state === 'notRunning' && !skeleton;
    }"""
    while time.monotonic() < deadline:
        if not page.evaluate(state_js):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return
        time.sleep(0.1)
    raise AssertionError("the page did not settle within the time limit")


PAGES = [("home", "")] + [(f.stem, _url_path(f)) for f in _page_files()]
# Views behind a tab or a choice, opened by their URL.
PAGES += [
    ("budget_insert_d", "Budget_explorer?tab=New+samples+%28insert_D%29&ns_budgets=8,32,128"),
    ("budget_bands", "Budget_explorer?reps=3&budgets=16,64,256&search=midpoint"),
    ("rankings_vtab_hierarchical", "Rankings?source=vtab&tab=Bayesian+model"),
    ("weighting_vtab_hierarchical", "Task_weighting?wsource=vtab&wstats=hierarchical"),
    ("stream_nevis_protocol", "Stream?np_methods=midpoint,reference,copy-nearest"),
]
# The teaching page's simulation study (?sim=1) runs under AppTest only
# (tests/app/test_page_how_sort_and_search_works.py): it is the slowest view and draws the same chart types.


def _check_page(base, browser, name, path, shot):
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    try:
        page.goto(f"{base}/{path}", wait_until="domcontentloaded", timeout=60_000)
        settle(page)
        # Plotly draws after the script finishes; wait until every visible chart has
        # drawn (charts in tabs that are not shown never draw).
        page.wait_for_function(
            """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
                    .filter(el => el.offsetParent !== null)
                    .every(el => el.querySelector('.main-svg') !== null)""",
            timeout=30_000,
        )
        if ALL_SHOTS:
            page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
        if DOCS_SHOTS:
            out = ROOT / DOCS_SHOTS / Path(shot).with_suffix(".jpg").name
            out.parent.mkdir(parents=True, exist_ok=True)
            page.set_viewport_size({"width": 1400, "height": 900})
            page.screenshot(path=str(out), type="jpeg", quality=70)
        text = page.locator('[data-testid="stMain"]').inner_text()
        assert "Page not found" not in text, f"{name}: {path!r} is not a page of the app"
        errors = page.locator('[data-testid="stException"]')
        assert errors.count() == 0, f"{name}: {errors.first.inner_text()[:500]}"
        # A page that stops with st.error in its default state is broken too (e.g. no store).
        alerts = page.locator('[data-testid="stAlertContentError"]')
        assert alerts.count() == 0, f"{name}: {alerts.first.inner_text()[:500]}"
        assert page.locator("h1").count() >= 1, f"{name}: no page title rendered"
        return text
    except BaseException:
        # The picture of the failing page, to see what broke.
        with contextlib.suppress(Exception):
            page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
        raise
    finally:
        context.close()


@pytest.mark.parametrize("name,path", PAGES, ids=[p[0] for p in PAGES])
def test_page_renders_without_exception(server, browser, name, path):
    _check_page(server, browser, name, path, f"{name}.png")


# On the user's store and the LLM dataset every page already runs under AppTest
# (tests/app/test_pages_user_store.py, tests/app/test_pages_llm_dataset.py); in the browser, the
# pages whose widgets and charts depend most on the data's shape.
OTHER_STORE_PAGES = [
    p
    for p in PAGES
    if p[0] in ("home", "1_Budget_explorer", "3_Evaluate_something_new", "6_Rankings")
]


@pytest.mark.parametrize("name,path", OTHER_STORE_PAGES, ids=[p[0] for p in OTHER_STORE_PAGES])
def test_page_renders_on_a_user_store(user_server, browser, name, path):
    text = _check_page(user_server, browser, name, path, f"user-store-{name}.png")
    for demo in ("scikit", "Demo store", "handwritten digits"):
        assert demo not in text, f"{name} shows demo text {demo!r} on a user's store"


def test_import_on_the_data_page_shows_on_the_budget_explorer(
    user_server, user_store_path, browser, tmp_path
):
    """Create a store, import a long table through the page, then open the Budget explorer
    from the sidebar in the same session: the new dataset is there, no server restart.
    The new store goes in the stores folder (the served store's folder)."""
    import uuid

    from tests.user_store import own_eval_csv

    csv = own_eval_csv(tmp_path / "my_eval.csv")
    new = user_store_path.parent / f"browser-{uuid.uuid4().hex[:8]}.duckdb"
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    try:
        page.goto(f"{user_server}/Data", wait_until="domcontentloaded", timeout=60_000)
        settle(page)
        page.get_by_role("textbox", name="Name of the new store file").fill(new.name)
        page.get_by_role("textbox", name="Name of the new store file").press("Enter")
        settle(page)
        page.get_by_role("button", name="Create and open").click()
        settle(page)
        assert new.exists()
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(csv))
        settle(page)
        page.get_by_role("button", name=f"Import into {new.name}").click()
        settle(page)
        main = page.locator('[data-testid="stMain"]').inner_text()
        assert "imported 1260 predictions" in main, main[:2000]
        page.locator('[data-testid="stSidebarNav"]').get_by_text(
            "Budget explorer", exact=True
        ).click()
        settle(page)
        page.wait_for_function(
            """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
                    .filter(el => el.offsetParent !== null)
                    .every(el => el.querySelector('.main-svg') !== null)""",
            timeout=60_000,
        )
        if ALL_SHOTS:
            page.screenshot(
                path=str(ARTIFACTS / "data-import-then-budget-explorer.png"), full_page=True
            )
        # The new store's dataset: its domains in the sidebar (the select box shows its value in
        # an input, not as text), its name in the provenance caption; nothing of the old store.
        side = page.locator('[data-testid="stSidebar"]').inner_text()
        assert "clean" in side and "noisy" in side and "arc_easy" not in side, side[:1000]
        assert "my-eval" in page.locator('[data-testid="stMain"]').inner_text()
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    finally:
        context.close()


def test_downloads_deliver_files(server, browser):
    # Downloads are produced on click (deferred), so check that a click really yields the file.
    context = browser.new_context(viewport={"width": 1400, "height": 2400}, accept_downloads=True)
    page = context.new_page()
    try:
        page.goto(
            f"{server}/Budget_explorer?budgets=16,64", wait_until="domcontentloaded", timeout=60_000
        )
        settle(page)
        for label, start in (
            ("Download sweep_table (CSV)", b"budget,mae,eagg,kappa,pearson,spearman"),
            ("Download mae_vs_budget (HTML)", b"<html>"),
        ):
            with page.expect_download(timeout=60_000) as info:
                page.get_by_text(label, exact=True).click()
            body = Path(info.value.path()).read_bytes()
            assert body.startswith(start), body[:80]
            settle(page)
        # The figure file embeds plotly.js: it opens offline, like the app.
        assert b"plotly.js" in body
    finally:
        context.close()


# ------------------------------------------------------------------ the LLM dataset
@pytest.mark.parametrize("name,path", OTHER_STORE_PAGES, ids=[p[0] for p in OTHER_STORE_PAGES])
def test_page_renders_on_the_llm_dataset(llm_server, browser, name, path):
    base, _ = llm_server
    _check_page(base, browser, name, path, f"llm-{name}.png")


def test_lm_eval_round_trip_on_the_page(llm_server, browser, tmp_path):
    """Download samples.json, upload lm-eval samples files of a stored model's real
    results on those items, read the estimate, insert it marked estimated."""
    base, truth = llm_server
    context = browser.new_context(viewport={"width": 1400, "height": 2400}, accept_downloads=True)
    page = context.new_page()
    try:
        page.goto(
            f"{base}/Evaluate_something_new?tab=A+new+model+with+lm-eval+or+Inspect&lm_search=neighbours&lm_budget=64",
            wait_until="domcontentloaded",
            timeout=60_000,
        )
        settle(page)
        with page.expect_download(timeout=60_000) as info:
            page.get_by_text("Download samples.json", exact=True).click()
        chosen = json.loads(Path(info.value.path()).read_text())
        # The leaderboard's own lm-eval subtasks, each item by its doc_id.
        assert sum(map(len, chosen.values())) == 64
        assert all(t.startswith("leaderboard_") for t in chosen), sorted(chosen)
        settle(page)
        # Each subtask's 0/1 metric as the release recorded it (the store keeps it at import).
        metric = dict(
            pd.read_csv(ROOT / "data" / "open_llm_leaderboard_v2" / "lm_eval_tasks.csv")[
                ["lm_eval_task", "metric"]
            ].itertuples(index=False)
        )
        files = []
        for task, docs in chosen.items():
            f = tmp_path / f"samples_{task}_2026-11-23T05-00-00.000001.jsonl"
            f.write_text(
                "".join(
                    json.dumps(
                        {
                            "doc_id": d,
                            "filter": "none",
                            "metrics": [metric[task]],
                            metric[task]: float(truth[f"{task}/{d}"]),
                        }
                    )
                    + "\n"
                    for d in docs
                )
            )
            files.append(str(f))
        # The lm-eval run's uploader (the page has others, for CSV results).
        page.locator(
            '[data-testid="stFileUploaderDropzoneInput"][accept*=".jsonl"]'
        ).set_input_files(files)
        settle(page)
        page.get_by_text("estimated accuracy").first.wait_for(timeout=120_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        errors = page.locator('[data-testid="stAlertContentError"]')
        assert errors.count() == 0, errors.all_inner_texts()
        if ALL_SHOTS:
            page.screenshot(path=str(ARTIFACTS / "llm-lm-eval-tab.png"), full_page=True)
        page.get_by_role("button", name="Insert into the store").click()
        page.get_by_text("Inserted 'new-llm' as estimated").first.wait_for(timeout=120_000)
    finally:
        context.close()


# Names a store may hold (an older store, or one imported before ids were checked), drawn
# by a real browser: Markdown, HTML and a link must show as typed and fetch nothing; a
# right-to-left override must not turn the text around it.
TRAP = "127.0.0.1:9"
HOSTILE = {
    "markdown": f"![t](http://{TRAP}/md.png) **bold** [link](http://{TRAP}/l)",
    "html": f'<img src="http://{TRAP}/h.png"><b>b</b>',
    "rlo": "model\u202egnp.exe",
}


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory):
    import numpy as np
    import pandas as pd

    from lifelong_core.store import Store

    path = tmp_path_factory.mktemp("hostile") / "hostile.duckdb"
    rng = np.random.default_rng(0)
    m, n = 12, 80
    A = (rng.random((m, n)) < np.linspace(0.9, 0.2, n)).astype(np.uint8)
    ids = [f"m{i}" for i in range(m)]
    samples = pd.DataFrame(
        {"sample_id": [f"s{j}" for j in range(n)], "domain": [f"d{j % 2}" for j in range(n)]}
    )
    with Store.create(path) as st:
        st.insert_matrix(A, ids, samples, dataset="hostile")
        # Written past the importer, which now refuses control characters in names.
        cur = st.cursor()
        for i, name in enumerate(HOSTILE.values()):
            cur.execute("UPDATE models SET name = ? WHERE model_id = ?", [name, ids[i]])
    with serve(path, "streamlit-server-hostile.log") as base:
        yield base


@pytest.mark.parametrize("path", ["", "Budget_explorer", "Estimated_vs_true"])
def test_hostile_names_are_drawn_as_text_in_the_browser(hostile_server, browser, path):
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if TRAP in r.url else None)
    try:
        page.goto(f"{hostile_server}/{path}", wait_until="domcontentloaded", timeout=60_000)
        settle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert fetched == [], fetched  # no image or link of a name was loaded
        injected = page.evaluate(
            """(trap) => [...document.querySelectorAll('img, a, b, strong')]
                .filter(el => (el.getAttribute('src') || el.getAttribute('href') || '')
                                .includes(trap) || el.textContent === 'b' || el.textContent === 'bold')
                .map(el => el.outerHTML)""",
            TRAP,
        )
        assert injected == [], injected
    finally:
        context.close()
