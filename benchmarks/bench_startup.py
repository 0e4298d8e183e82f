"""How long the command line takes to start: what a user waits for before any work.

Times, as separate processes, ``python -c "import lifelong_core"``, ``lbe --version`` and
``lbe info --store STORE --summary`` (the median wall time of ``--repeats`` runs, process
start included), and lists which heavy packages each loads.

    .venv/bin/python -m benchmarks.bench_startup [--store data/demo.duckdb] [--repeats 7]

Writes ``benchmarks/results/bench_startup.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_startup.json"
HEAVY = ("scipy", "scipy.stats", "pandas", "duckdb", "streamlit", "plotly")
_PROBE = (
    "import json, runpy, sys, contextlib, io\n"
    "sys.argv = ['lbe', *sys.argv[1:]]\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
    "    runpy.run_module('lifelong_core', run_name='__main__')\n"
    f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)\n"
)


def commands(store: str) -> dict[str, list[str]]:
    return {
        "import lifelong_core": [sys.executable, "-c", "import lifelong_core"],
        "lbe --version": [sys.executable, "-m", "lifelong_core", "--version"],
        "lbe info --summary": [
            sys.executable,
            "-m",
            "lifelong_core",
            "info",
            "--store",
            store,
            "--summary",
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    rows = []
    for label, cmd in commands(args.store).items():
        walls = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
            walls.append(time.perf_counter() - t0)
        loaded = []
        if cmd[1] == "-m":
            probe = subprocess.run(
                [sys.executable, "-c", _PROBE, *cmd[3:]],
                check=True,
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            loaded = json.loads(probe.stderr.strip().splitlines()[-1])
        row = {
            "command": label,
            "wall_s": round(statistics.median(walls), 3),
            "loads": loaded,
            "load": [round(x, 2) for x in os.getloadavg()],
        }
        rows.append(row)
        print(f"  {label:22s} {row}", flush=True)
    Path(args.out).write_text(
        json.dumps({"repeats": args.repeats, "cpus": os.cpu_count(), "rows": rows}, indent=1) + "\n"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
