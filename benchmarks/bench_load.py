"""Load test: many visitors on one server, on 127.0.0.1 only.

    .venv/bin/python -m benchmarks.bench_load [--sessions 20] [--views 3]
        [--pages Home,Budget_explorer,Rankings] [--store data/demo.duckdb]

Starts the app (``python -m ui.serve``) on a free loopback port against the store, then
opens ``--sessions`` real Streamlit websocket sessions at once, the way a browser tab
does (``/_stcore/stream``, the frontend's protobuf messages: ``rerun_script`` with the
page name, then every ``ForwardMsg`` until ``script_finished``). Each session makes
``--views`` page views one after another, going round ``--pages`` from its own starting
page (session ``i`` starts at page ``i mod len(pages)``), so every page is loaded by
several sessions at once; the first views pay for the sweeps, later ones read the
server's caches, as real visitors do. No browser draws anything: the numbers are server
time (script runs, store reads, serialising figures), not chart drawing.

Meanwhile a prober asks for ``GET /`` (the page a browser loads first) and
``/_stcore/health`` every 0.25 s: both are answered by the server's event loop, so their
latency shows whether page views starve it.

Reports page views per second over the whole run, latency percentiles overall, per page
and per view, when each page's first views were done (how long its cold computation held
the sessions that opened on it), every view's start and duration, the probes' latencies, the server's peak resident memory (sampled every
0.1 s), the machine's load average before and after, and any view that ended in an
exception element or a timeout. Bounded: the whole run stops after ``--deadline`` seconds
(views still running count as timeouts), the server is stopped at the end, and it only
ever listens on and is reached through 127.0.0.1. Writes the numbers to
``benchmarks/results/bench_load.json`` (``--out`` to choose another file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_load.json"
HOST = "127.0.0.1"  # never anything else: the test must not reach or open a network
PAGES = ("Home", "Budget_explorer", "Rankings")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _wait_healthy(port: int, proc: subprocess.Popen, timeout: float) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return time.perf_counter() - t0
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer /_stcore/health within {timeout:.0f} s")


class _MemorySampler(threading.Thread):
    """Peak resident memory of the server process, sampled until stopped."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        import psutil

        self.proc = psutil.Process(pid)
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, self.proc.memory_info().rss)
            except Exception:
                return
            time.sleep(0.1)


async def _view(ws, page: str) -> tuple[float, str]:
    """One page view on an open session: (seconds until script_finished, the first exception
    element's type and message, or "")."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_name = page
    t0 = time.perf_counter()
    await ws.send(msg.SerializeToString())
    failed = ""
    while True:
        fwd = ForwardMsg()
        fwd.ParseFromString(await ws.recv())
        kind = fwd.WhichOneof("type")
        if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            element = fwd.delta.new_element
            if element.WhichOneof("type") == "exception" and not failed:
                failed = f"{element.exception.type}: {element.exception.message}"[:300]
        if kind == "page_not_found":
            raise RuntimeError(f"the server has no page {page!r}")
        if kind == "script_finished":
            if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                continue
            return time.perf_counter() - t0, failed


async def _session(
    port: int, views: int, pages: list[str], session: int, out: list, deadline: float, t0: float
) -> None:
    import websockets

    try:
        async with websockets.connect(
            f"ws://{HOST}:{port}/_stcore/stream",
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=60,
            ping_interval=None,
        ) as ws:
            for k in range(views):
                page = pages[(session + k) % len(pages)]
                rec = {
                    "session": session,
                    "view": k,
                    "page": page,
                    "start_s": round(time.perf_counter() - t0, 3),
                }
                left = deadline - time.perf_counter()
                if left <= 0:
                    out.append({**rec, "seconds": None, "exception": "", "timeout": True})
                    continue
                try:
                    name = "" if page == "Home" else page
                    seconds, failed = await asyncio.wait_for(_view(ws, name), left)
                    out.append({**rec, "seconds": seconds, "exception": failed, "timeout": False})
                except asyncio.TimeoutError:
                    out.append({**rec, "seconds": None, "exception": "", "timeout": True})
    except (OSError, websockets.exceptions.WebSocketException) as exc:
        out.append({"seconds": None, "exception": "", "timeout": False, "error": repr(exc)})


class _Prober(threading.Thread):
    """``GET /`` and ``/_stcore/health`` every 0.25 s until stopped: (path, seconds) each."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port = port
        self.times: dict[str, list[float]] = {"/": [], "/_stcore/health": []}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for path, got in self.times.items():
                t0 = time.perf_counter()
                try:
                    with urllib.request.urlopen(
                        f"http://{HOST}:{self.port}{path}", timeout=120
                    ) as r:
                        r.read()
                    got.append(time.perf_counter() - t0)
                except OSError:
                    got.append(float("inf"))
            self.stop.wait(0.25)


def _pcts(values, qs=(50, 90)) -> dict:
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    if not len(arr):
        return {}
    out = {f"p{q}": round(float(np.percentile(arr, q)), 2) for q in qs}
    out["max"] = round(float(arr.max()), 2)
    out["n"] = len(arr)
    return out


def run(
    store: Path, sessions: int, views: int, deadline_s: float, pages: tuple[str, ...] = PAGES
) -> dict:
    port = _free_port()
    env = dict(os.environ, LBE_STORE=str(store))
    cmd = [
        sys.executable,
        "-m",
        "ui.serve",
        "--server.address",
        HOST,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        startup = _wait_healthy(port, proc, 180)
        sampler = _MemorySampler(proc.pid)
        idle = sampler.proc.memory_info().rss
        sampler.start()
        prober = _Prober(port)
        out: list = []
        load_before = os.getloadavg()

        async def all_sessions():
            begin = time.perf_counter()
            deadline = begin + deadline_s
            await asyncio.gather(
                *(
                    _session(port, views, list(pages), i, out, deadline, begin)
                    for i in range(sessions)
                )
            )

        prober.start()
        cpu0 = sampler.proc.cpu_times()
        t0 = time.perf_counter()
        asyncio.run(all_sessions())
        wall = time.perf_counter() - t0
        cpu1 = sampler.proc.cpu_times()
        server_cpu = (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)
        prober.stop.set()
        prober.join(130)
        sampler.stop.set()
        sampler.join(5)
        load_after = os.getloadavg()
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
    done = np.array([v["seconds"] for v in out if v["seconds"] is not None])
    return {
        "sessions": sessions,
        "views_per_session": views,
        "pages": list(pages),
        "store": str(store),
        "server_start_s": round(startup, 2),
        "wall_s": round(wall, 2),
        # The server's own CPU while the views ran (every thread): on a machine where
        # nothing else runs, wall time near this figure means the views queued on it.
        "server_cpu_s": round(server_cpu, 2),
        "views_done": len(done),
        "views_timed_out": sum(v["timeout"] for v in out),
        "views_with_exception": sum(bool(v["exception"]) for v in out),
        "exceptions": sorted({v["exception"] for v in out if v["exception"]}),
        "session_errors": [v["error"] for v in out if "error" in v],
        "pages_per_s": round(len(done) / wall, 3) if wall else None,
        "latency_s": {f"p{q}": round(float(np.percentile(done, q)), 2) for q in (50, 90, 99)}
        if len(done)
        else {},
        "latency_max_s": round(float(done.max()), 2) if len(done) else None,
        # The first view of every session arrives together on a cold server; later views
        # find the sweeps in the server's caches.
        "latency_by_view_p50_s": {
            k: round(
                float(
                    np.median(
                        [
                            v["seconds"]
                            for v in out
                            if v.get("view") == k and v["seconds"] is not None
                        ]
                        or [np.nan]
                    )
                ),
                2,
            )
            for k in range(views)
        },
        "latency_by_page_s": {
            p: _pcts(v["seconds"] for v in out if v.get("page") == p) for p in pages
        },
        # When each page's cold computation was done: the latest end, seconds into the run,
        # of the first views of the sessions that opened on it.
        "first_view_done_s": {
            p: max(
                (
                    round(v["start_s"] + v["seconds"], 2)
                    for v in out
                    if v.get("page") == p and v.get("view") == 0 and v["seconds"] is not None
                ),
                default=None,
            )
            for p in pages
        },
        # Every view: its session, its place in the session, its page, when it started
        # (seconds into the run) and how long it took.
        "views": sorted(
            (
                {**v, "seconds": None if v["seconds"] is None else round(v["seconds"], 3)}
                for v in out
                if "session" in v
            ),
            key=lambda v: (v["session"], v["view"]),
        ),
        "probe_s": {path: _pcts(got) for path, got in prober.times.items()},
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "server_rss_idle_mb": round(idle / 2**20),
        "server_rss_peak_mb": round(sampler.peak / 2**20),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "note": "shared machine, measured with other work running",
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--views", type=int, default=3)
    ap.add_argument(
        "--pages",
        default=",".join(PAGES),
        help="comma-separated page names (Home, or a page's URL name such as Budget_explorer)",
    )
    ap.add_argument(
        "--deadline", type=float, default=900.0, help="stop the whole run after this many seconds"
    )
    ap.add_argument("--out", default=str(RESULTS), help="JSON file for the numbers")
    args = ap.parse_args(argv)
    if not Path(args.store).exists():
        print(f"no store at {args.store}; run `make store` first", file=sys.stderr)
        return 2
    pages = tuple(p.strip() for p in args.pages.split(",") if p.strip())
    res = run(Path(args.store), args.sessions, args.views, args.deadline, pages)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    lat = res["latency_s"]
    print(
        f"| sessions | views | pages/s | p50 s | p90 s | p99 s | max s | server RSS idle -> peak | timeouts | exceptions |\n"
        f"|---|---|---|---|---|---|---|---|---|---|\n"
        f"| {res['sessions']} | {res['views_done']} | {res['pages_per_s']} | {lat.get('p50')} | {lat.get('p90')} | "
        f"{lat.get('p99')} | {res['latency_max_s']} | {res['server_rss_idle_mb']} -> {res['server_rss_peak_mb']} MB | "
        f"{res['views_timed_out']} | {res['views_with_exception']} |"
    )
    print(f"wall {res['wall_s']} s; the server's CPU over it {res['server_cpu_s']} s")
    print("median latency by view (first = cold, together):", res["latency_by_view_p50_s"])
    print(
        "| page | views | p50 s | p90 s | max s | first views done, s into the run |\n"
        "|---|---|---|---|---|---|"
    )
    for page, q in res["latency_by_page_s"].items():
        done = res["first_view_done_s"].get(page)
        print(
            f"| {page} | {q.get('n')} | {q.get('p50')} | {q.get('p90')} | {q.get('max')} | {done} |"
        )
    for path, q in res["probe_s"].items():
        print(
            f"GET {path}: p50 {q.get('p50')} s, p90 {q.get('p90')} s, max {q.get('max')} s ({q.get('n')} probes)"
        )
    print(f"load average before {res['load_average_before']}, after {res['load_average_after']}")
    if res["session_errors"]:
        print("session errors:", res["session_errors"][:3])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
