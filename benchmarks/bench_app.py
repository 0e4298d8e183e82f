"""Timings of the Streamlit app on the demo store: first render and re-run after a widget change.

    .venv/bin/python -m benchmarks.bench_app [--store data/demo.duckdb] [--repeats 5] [--no-browser]

Two views of the same question:

- **browser**: the real server (``streamlit run app.py``) driven by headless Chromium.
  *first render* = from the moment ``/_stcore/health`` answers ``ok`` until the page's
  script has finished and every visible chart has drawn, for a fresh server (cold: loading
  the frontend, imports, store read, Sort & Search, plotly.js drawing); *first content* =
  until the script has finished and its metrics are on screen; *budget after home* = from
  a click on "Budget explorer" in the sidebar of a freshly loaded home page until its
  charts are drawn. *re-run* = from a click on a sidebar widget of the
  Budget explorer until the script has finished again and the charts are redrawn; the
  widgets alternate between values, so after the first round the sweeps come from the
  memo (the common case while exploring) and the first round is a new sweep.
- **AppTest**: ``streamlit.testing.v1.AppTest`` in this process: the script run alone,
  without server or browser.

Prints a markdown table and writes ``benchmarks/results/bench_app.json``. The machine is
shared, so numbers are noisy; medians are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_app.json"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SETTLED_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
        .filter(el => el.offsetParent !== null);
    return charts.length > 0 && charts.every(el => el.querySelector('.main-svg') !== null);
}"""
HOME_SETTLED_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelectorAll('[data-testid="stMetric"]').length > 0;
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(store: Path) -> tuple[subprocess.Popen, str, float]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ui.serve",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        env=dict(os.environ, LBE_STORE=str(store)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return proc, base, time.monotonic()
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("streamlit did not come up within 120 s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _wait_rerun(page, t0: float, timeout_s: float = 60.0) -> float:
    """Seconds from ``t0`` until the script ran and the page settled again."""
    started = False
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = page.evaluate(
            "() => document.querySelector('[data-testid=\"stApp\"]').getAttribute('data-test-script-state')"
        )
        if state == "running":
            started = True
        elif started and page.evaluate(SETTLED_JS):
            return time.monotonic() - t0
        elif not started and time.monotonic() - t0 > 3 and page.evaluate(SETTLED_JS):
            # Never saw it running: the rerun finished between two polls.
            return time.monotonic() - t0
        time.sleep(0.005)
    raise RuntimeError("re-run did not settle")


def browser_timings(store: Path, repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {
        "first_render_home_s": [],
        "first_content_budget_s": [],
        "first_render_budget_s": [],
        "rerun_new_sweep_s": [],
        "rerun_memo_s": [],
    }
    with sync_playwright() as p:
        # The browser is up before the server starts: its launch is not the app's time.
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for target, key, js in (
            ("", "first_render_home_s", HOME_SETTLED_JS),
            ("Budget_explorer", "first_render_budget_s", SETTLED_JS),
        ):
            for _ in range(max(1, repeats // 2)):
                page = browser.new_page(viewport={"width": 1400, "height": 1200})
                proc, base, up = _start_server(store)
                try:
                    page.goto(f"{base}/{target}")
                    if target:
                        # Script finished and metrics shown; the charts still have to draw.
                        page.wait_for_function(HOME_SETTLED_JS, timeout=120_000, polling=20)
                        out["first_content_budget_s"].append(time.monotonic() - up)
                    page.wait_for_function(js, timeout=120_000, polling=20)
                    out[key].append(time.monotonic() - up)
                finally:
                    page.close()
                    _stop(proc)
        for _ in range(max(1, repeats // 2)):
            # The usual path: land on the home page, then open the budget explorer.
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            proc, base, _ = _start_server(store)
            try:
                page.goto(f"{base}/")
                page.wait_for_function(HOME_SETTLED_JS, timeout=120_000, polling=20)
                t0 = time.monotonic()
                page.locator('[data-testid="stSidebarNav"]').get_by_text(
                    "Budget explorer", exact=True
                ).click()
                page.wait_for_function(SETTLED_JS, timeout=120_000, polling=20)
                out.setdefault("budget_after_home_s", []).append(time.monotonic() - t0)
            finally:
                page.close()
                _stop(proc)
        proc, base, _ = _start_server(store)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.goto(f"{base}/Budget_explorer")
            page.wait_for_function(SETTLED_JS, timeout=120_000, polling=20)
            side = page.locator('[data-testid="stSidebar"]')
            # Sampling radio: uniform <-> random. Sort-set radio: random <-> earliest released.
            clicks = [
                ("Sampling", "random"),
                ("Sampling", "uniform"),
                ("Sort set", "earliest released"),
                ("Sort set", "random"),
            ]
            for r in range(repeats + 1):
                for group, option in clicks:
                    radio = side.locator('[data-testid="stRadio"]', has_text=group).get_by_text(
                        option, exact=True
                    )
                    t0 = time.monotonic()
                    radio.click()
                    dt = _wait_rerun(page, t0)
                    (out["rerun_new_sweep_s"] if r == 0 else out["rerun_memo_s"]).append(dt)
        finally:
            _stop(proc)
        browser.close()
    return out


def apptest_timings(store: Path, repeats: int) -> dict:
    os.environ["LBE_STORE"] = str(store)
    from streamlit.testing.v1 import AppTest

    out: dict = {
        "apptest_first_run_s": [],
        "apptest_rerun_new_sweep_s": [],
        "apptest_rerun_memo_s": [],
    }
    page = str(ROOT / "pages" / "1_Budget_explorer.py")
    t = time.perf_counter()
    at = AppTest.from_file(page, default_timeout=300)
    at.run()
    out["apptest_first_run_s"].append(time.perf_counter() - t)
    assert not at.exception, [e.message for e in at.exception]

    def k_slider():
        return next(w for w in at.sidebar.slider if w.label == "Models used for Sort")

    for i in range(repeats):
        t = time.perf_counter()
        k_slider().set_value(60 + i).run()  # a Sort set not seen before
        out["apptest_rerun_new_sweep_s"].append(time.perf_counter() - t)
    for i in range(repeats):
        t = time.perf_counter()
        k_slider().set_value(60 + i).run()  # seen before: memoised
        out["apptest_rerun_memo_s"].append(time.perf_counter() - t)
    assert not at.exception
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=ROOT / "data" / "demo.duckdb")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args(argv)
    if not args.store.exists():
        print(f"error: no store at {args.store}; run `make store` first", file=sys.stderr)
        return 2
    timings = apptest_timings(args.store, args.repeats)
    if not args.no_browser and Path("/usr/bin/chromium").exists():
        timings.update(browser_timings(args.store, args.repeats))
    rows = {
        k: {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}
        for k, v in timings.items()
        if v
    }
    print("| measurement | median s | min s | max s | n |\n|---|---:|---:|---:|---:|")
    for k, r in rows.items():
        print(f"| {k} | {r['median']:.2f} | {r['min']:.2f} | {r['max']:.2f} | {r['n']} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "command": "python -m benchmarks.bench_app "
                + " ".join(argv if argv is not None else sys.argv[1:]),
                "store": str(args.store),
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "note": "shared machine, ~7 other jobs; timings noisy",
                },
                "summary": rows,
                "raw": timings,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
