"""The app on a large store, in a real browser.

    .venv/bin/python -m benchmarks.bench_app_scale --store BIG.duckdb [--build MODELSxSAMPLES] [--refresh]
        [--method auto,midpoint] [--apptest N] [--no-browser]
    .venv/bin/python -m benchmarks.bench_app_scale --store paper.duckdb --build paper   # 31,250 x 1,697,682

``--build`` writes the synthetic store first if it does not exist
(``lifelong_core.datasets.synthetic``: 4 model clusters, seeded; ``paper`` = Prabhu et al. (2024) §4's
6,000 + 25,250 models x 1,697,682 samples, ~7 GB on disk, ~15 GB of memory during the
import). ``--refresh`` runs ``python -m lifelong_core state --refresh synthetic`` first
(Sort state and ``mirt`` parameters kept in the store; timed, with peak memory).

Then, on a fresh server each time (``python -m ui.serve``, headless Chromium, as
``bench_app``): Home from server up until rendered; the Budget explorer opened directly,
from server up until the script finished and every chart was drawn, for each method of
``--method`` (default: the product's default estimator, then the paper's ``midpoint``
rule; the median of ``--first-renders`` fresh servers and pages, each value kept);
re-runs after a widget change (the Sampling radio, alternating, median); with the first
method, every other page opened and waited for until its script finished, checking for no
exception and no error box. The server's peak memory is its ``VmHWM`` (peak resident set)
read from ``/proc`` before it stops, children included.

``--apptest`` measures the Budget explorer's script alone under Streamlit's AppTest, for
each method, each run in a new process (cold caches): the first run with default widgets
and a re-run after the Sampling radio changes, wall and CPU seconds (the CPU counts every
thread). A refreshed store keeps the default estimator's fit on the default Sort split, so
that first run reads it; ``--other-split`` also times the first run on a split with one
more Sort model, whose fit the page makes. The benchmarks keep no cross-validated choice between processes
(``benchmarks/__init__``), so every first run includes the default estimator's
cross-validation.

The load average is recorded at the start and the end. Results:
``benchmarks/results/bench_app_scale.json`` (one entry per store).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from benchmarks.bench_app import (
    CHROMIUM_ARGS,
    HOME_SETTLED_JS,
    SETTLED_JS,
    _start_server,
    _stop,
    _wait_rerun,
)
from lifelong_core.methods.registry import DEFAULT_METHOD

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_app_scale.json"
PAPER = (31_250, 1_697_682)
DONE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('[data-testid="stSkeleton"]') === null;
}"""


def _peak_gb(pid: int) -> float:
    """Peak resident memory (VmHWM) of ``pid`` and its children, GB."""
    total = 0
    pids = [pid]
    with contextlib.suppress(OSError):
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    for p in pids:
        try:
            m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{p}/status").read_text())
            total += int(m.group(1)) if m else 0
        except OSError:
            pass
    return total / 1024**2


def build(store: Path, spec: str) -> dict:
    if store.exists():
        return {"built": False}
    m, n = PAPER if spec == "paper" else map(int, spec.lower().split("x"))
    t = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core.datasets.synthetic",
            "--models",
            str(m),
            "--samples",
            str(n),
            "--clusters",
            "4",
            "--store",
            str(store),
        ],
        cwd=ROOT,
        check=True,
    )
    return {"built": True, "models": m, "samples": n, "build_s": time.perf_counter() - t}


def refresh(store: Path) -> dict:
    t = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core",
            "state",
            "--store",
            str(store),
            "--refresh",
            "synthetic",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2
    return {
        "refresh_s": time.perf_counter() - t,
        "refresh_peak_gb": peak,
        "output": proc.stdout.strip(),
    }


def _page_paths() -> list[str]:
    return [re.sub(r"^\d+[_ -]*", "", f.stem) for f in sorted((ROOT / "pages").glob("*.py"))]


def _errors(page) -> list[str]:
    out = []
    for sel in ('[data-testid="stException"]', '[data-testid="stAlertContentError"]'):
        loc = page.locator(sel)
        out += [loc.nth(i).inner_text()[:300] for i in range(loc.count())]
    return out


def _first_renders(chromium, store: Path, method: str, n: int, tmo: int):
    """The Budget explorer opened directly on ``n`` fresh servers and pages; the last page
    and server are returned open."""
    firsts = []
    query = "" if method == DEFAULT_METHOD else f"?search={method}"
    for i in range(n):
        page = chromium.new_page(viewport={"width": 1400, "height": 1200})
        proc, base, up = _start_server(store)
        try:
            page.goto(f"{base}/Budget_explorer{query}")
            page.wait_for_function(SETTLED_JS, timeout=tmo, polling=50)
            firsts.append(time.monotonic() - up)
        except BaseException:
            page.close()
            _stop(proc)
            raise
        if i < n - 1:
            page.close()
            _stop(proc)
    return firsts, page, proc, base


def _reruns(page, reruns: int, timeout_s: float) -> list[float]:
    side = page.locator('[data-testid="stSidebar"]')
    times = []
    for r in range(reruns):
        option = "random" if r % 2 == 0 else "uniform"
        radio = side.locator('[data-testid="stRadio"]', has_text="Sampling").get_by_text(
            option, exact=True
        )
        t0 = time.monotonic()
        radio.click()
        times.append(_wait_rerun(page, t0, timeout_s))
    return times


def browser(
    store: Path,
    reruns: int,
    timeout_s: float,
    first_renders: int = 5,
    methods: tuple[str, ...] = (DEFAULT_METHOD, "midpoint"),
) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {"pages": {}, "methods": {}}
    tmo = int(timeout_s * 1000)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        # Home, on a fresh server.
        page = chromium.new_page(viewport={"width": 1400, "height": 1200})
        proc, base, up = _start_server(store)
        try:
            page.goto(f"{base}/")
            page.wait_for_function(HOME_SETTLED_JS, timeout=tmo, polling=50)
            out["home_s"] = time.monotonic() - up
            out["home_errors"] = _errors(page)
        finally:
            page.close()
            out["home_server_peak_gb"] = _peak_gb(proc.pid)
            _stop(proc)
        # The Budget explorer opened directly on fresh servers and fresh browser pages,
        # several times per method: on two cores the browser and the server share the CPU,
        # so one render swings by a second or more; the median is the figure.
        for j, method in enumerate(methods):
            firsts, page, proc, base = _first_renders(chromium, store, method, first_renders, tmo)
            res = {
                "budget_first_render_runs_s": firsts,
                "budget_first_render_s": statistics.median(firsts),
                "budget_errors": _errors(page),
            }
            try:
                times = _reruns(page, reruns, timeout_s)
                res["rerun_s"] = times
                res["rerun_median_s"] = statistics.median(times) if times else None
                if j == 0:
                    out["pages"] = _other_pages(page, base, tmo)
            finally:
                page.close()
                res["server_peak_gb"] = _peak_gb(proc.pid)
                _stop(proc)
            out["methods"][method] = res
            print(method, res, flush=True)
        chromium.close()
    return out


def _other_pages(page, base: str, tmo: int) -> dict:
    """Every other page on the same server, each waited for until its script finished."""
    out = {}
    for path in _page_paths():
        if path == "Budget_explorer":
            continue
        t0 = time.monotonic()
        try:
            page.goto(f"{base}/{path}")
            page.wait_for_selector('[data-testid="stApp"]', timeout=tmo)
            time.sleep(0.5)
            page.wait_for_function(DONE_JS, timeout=tmo, polling=100)
            out[path] = {"s": time.monotonic() - t0, "errors": _errors(page)}
        except Exception as exc:  # a page that does not finish is a result, not the end of the run
            out[path] = {"s": time.monotonic() - t0, "errors": [f"did not finish: {exc}"[:300]]}
        print(path, out[path], flush=True)
    return out


# The Budget explorer's script under AppTest, in a new process: first run, then a re-run
# after the Sampling radio changes.
_APPTEST = textwrap.dedent(
    """
    import json, os, sys, time
    from streamlit.testing.v1 import AppTest
    from lifelong_core.methods.parallel import keep_freed_memory
    from ui.serve import warm_imports
    warm_imports()  # what the served app does before it listens
    keep_freed_memory()
    page, method = sys.argv[1], sys.argv[2]
    extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    at = AppTest.from_file(page, default_timeout=1800)
    # A server scans the installed packages for Streamlit components once, when it starts
    # (streamlit.runtime.Runtime); AppTest does it in its first run. Done here before the
    # clock starts, so the first run times the page's script as a server runs it.
    from streamlit.components.v2.component_manager import BidiComponentManager
    at._bidi_component_manager = BidiComponentManager()
    at._bidi_component_manager.discover_and_register_components(start_file_watching=False)
    if method != sys.argv[3]:
        at.query_params["search"] = method
    for name, value in extra.items():
        at.query_params[name] = value
    c0, w0 = time.process_time(), time.perf_counter()
    at.run()
    first = [time.perf_counter() - w0, time.process_time() - c0]
    assert not at.exception and not at.error, [e.value for e in at.exception] + [e.value for e in at.error]
    radio = next(r for r in at.sidebar.radio if r.label == "Sampling")
    c0, w0 = time.process_time(), time.perf_counter()
    radio.set_value("random" if radio.value != "random" else "uniform").run()
    rerun = [time.perf_counter() - w0, time.process_time() - c0]
    assert not at.exception and not at.error
    print(json.dumps({"first_wall_s": first[0], "first_cpu_s": first[1],
                      "rerun_wall_s": rerun[0], "rerun_cpu_s": rerun[1]}))
    """
)


def apptest(store: Path, methods: tuple[str, ...], repeats: int, other_split: bool = False) -> dict:
    out = {}
    page = str(ROOT / "pages" / "1_Budget_explorer.py")
    cases = [(method, method, {}) for method in methods]
    if other_split:
        # A Sort split whose fit no refresh kept: one model more than the default's.
        from lifelong_core import limits
        from lifelong_core.store import Store
        from lifelong_core.workflows.selection import select
        from lifelong_core.workflows.sortsets import default_sort_size

        with Store.open(store) as st, limits.dense_limit_set(limits.app_limit_bytes()):
            models = len(select(st, st.datasets()["dataset"].iloc[0], ()).models)
        k = default_sort_size(models) + 1
        cases.append((f"{methods[0]}, Sort models {k}", methods[0], {"k": str(k)}))
    for label, method, extra in cases:
        runs = []
        for _ in range(repeats):
            load = os.getloadavg()[0]
            proc = subprocess.run(
                [sys.executable, "-c", _APPTEST, page, method, DEFAULT_METHOD, json.dumps(extra)],
                cwd=ROOT,
                env=dict(os.environ, LBE_STORE=str(store)),
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append({**json.loads(proc.stdout.strip().splitlines()[-1]), "load": load})
        out[label] = {
            "runs": runs,
            "first_wall_median_s": statistics.median(r["first_wall_s"] for r in runs),
            "first_cpu_median_s": statistics.median(r["first_cpu_s"] for r in runs),
            "rerun_wall_median_s": statistics.median(r["rerun_wall_s"] for r in runs),
        }
        print("apptest", label, out[label], flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument(
        "--build", metavar="MxN|paper", help="write the synthetic store first if it is missing"
    )
    ap.add_argument(
        "--refresh",
        action="store_true",
        help="refresh the kept Sort state and mirt parameters first",
    )
    ap.add_argument("--reruns", type=int, default=8)
    ap.add_argument(
        "--first-renders",
        type=int,
        default=5,
        help="fresh-server first renders of the Budget explorer (the median is reported)",
    )
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for any one page")
    ap.add_argument(
        "--method",
        default=f"{DEFAULT_METHOD},midpoint",
        help="Budget explorer methods, comma-separated (the first also visits every other page)",
    )
    ap.add_argument(
        "--apptest",
        type=int,
        default=0,
        metavar="N",
        help="also time the Budget explorer's script under AppTest, N new processes per method",
    )
    ap.add_argument(
        "--other-split",
        action="store_true",
        help="with --apptest, also time a first run on a Sort split whose fit no refresh kept",
    )
    ap.add_argument("--no-browser", action="store_true", help="skip the real-browser part")
    ap.add_argument("--note", default="2-core machine shared with other work; timings noisy")
    args = ap.parse_args(argv)
    res: dict = {
        "command": "python -m benchmarks.bench_app_scale "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "note": args.note,
    }
    if args.build:
        res.update(build(args.store, args.build))
    if not args.store.exists():
        print(f"error: no store at {args.store}; pass --build MxN", file=sys.stderr)
        return 2
    methods = tuple(m.strip() for m in args.method.split(",") if m.strip())
    res["load_start"] = list(os.getloadavg())
    if args.refresh:
        res.update(refresh(args.store))
        print(res, flush=True)
    if args.apptest:
        res["apptest"] = apptest(args.store, methods, args.apptest, args.other_split)
    if not args.no_browser:
        res.update(
            browser(args.store, args.reruns, args.timeout, max(1, args.first_renders), methods)
        )
    res["load_end"] = list(os.getloadavg())
    print(json.dumps(res, indent=2), flush=True)
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[str(args.store.name)] = res
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
