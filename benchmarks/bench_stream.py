"""CPU of the Stream page's first (cold) view on the demo store, and of the sweeps behind it.

    .venv/bin/python -m benchmarks.bench_stream [--store data/demo.duckdb] [--repeats 3]

Three measurements, each the median of ``--repeats`` runs:

- **cold page**: ``pages/5_Stream.py`` under ``streamlit.testing.v1.AppTest`` in a fresh
  process each time (caches empty; imports warmed as the served app warms them), CPU and
  wall seconds of the script run (on a store refreshed by ``lbe state --refresh``, as the
  demo store is, the replay and the grid are read from the store);
- **configurations** and **Nevis'22 protocol**: the page's two computations, computed,
  :func:`lifelong_core.workflows.stream.stream_configs` and
  :func:`lifelong_core.studies.stream_protocol.stream_protocol` at the page's defaults, CPU
  seconds in this process;
- **kernels**: the configuration grid's sweeps (pools 5, 10, 20, 50, 100; both rules; both
  samplings) on the dense and on the packed kernel side by side, CPU seconds and their
  ratio, the numbers checked equal.

Prints a markdown table and writes ``benchmarks/results/bench_stream.json``. CPU seconds
still grow with the load of a shared machine: report ``uptime`` beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from lifelong_core.workflows.stream import CONFIG_BUDGETS as BUDGETS
from lifelong_core.workflows.stream import CONFIG_POOLS as POOLS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_stream.json"

# Run in a fresh interpreter: prints "cpu wall" of the page's first script run.
COLD_PAGE = """
import os, sys, time
from streamlit.testing.v1 import AppTest
from ui.serve import warm_imports
warm_imports()
at = AppTest.from_file(sys.argv[1], default_timeout=600)
c0, w0 = time.process_time(), time.perf_counter()
at.run()
print(time.process_time() - c0, time.perf_counter() - w0, bool(at.exception))
"""


def _load() -> float:
    return os.getloadavg()[0]


def cold_page(store: Path, repeats: int) -> dict:
    """CPU and wall seconds of the Stream page's first view, each in a fresh process."""
    env = dict(os.environ, LBE_STORE=str(store), PYTHONPATH=str(ROOT))
    cpu, wall = [], []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", COLD_PAGE, str(ROOT / "pages" / "5_Stream.py")],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        if out[2] != "False":
            raise RuntimeError("the Stream page raised an exception")
        cpu.append(float(out[0]))
        wall.append(float(out[1]))
    return {"cpu_s": cpu, "wall_s": wall}


def _cpu(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return times


def computations(store: Path, repeats: int) -> dict:
    """CPU seconds of the page's two computations, and of the grid on either kernel."""
    import pandas as pd

    from lifelong_core.methods import available_methods, capabilities
    from lifelong_core.sortsearch import RULES
    from lifelong_core.store import Store
    from lifelong_core.studies.stream_protocol import stream_protocol
    from lifelong_core.sweeping import sweep_samplings
    from lifelong_core.workflows import stream
    from lifelong_core.workflows.selection import select
    from lifelong_core.workflows.sortsets import release_rows

    with Store.open(store) as st:
        sel = select(st, "lifelong-digits")
    A, order = sel.A, release_rows(sel.models)
    methods = [
        x
        for x in available_methods(kind="model")
        if capabilities(x).cheap and capabilities(x).per_sample
    ]

    def grid(kernel: str) -> list:
        return [
            res.per_model
            for p in POOLS
            for r in RULES
            for res in sweep_samplings(
                A[order[:p]], A[order[p:]], BUDGETS, stream.SAMPLINGS, search=r, kernel=kernel
            )
        ]

    for a, b in zip(grid("dense"), grid("packed")):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    out = {
        "configurations_cpu_s": _cpu(
            lambda: stream.stream_configs(sel, POOLS, BUDGETS, 0), repeats
        ),
        "protocol_cpu_s": _cpu(
            lambda: stream_protocol(
                sel.dense(),
                order,
                methods=methods,
                budgets=BUDGETS,
                samplings=("uniform", "random", "reference"),
                seed=0,
            ),
            repeats,
        ),
        "protocol_methods": methods,
    }
    for kernel in ("dense", "packed"):
        out[f"grid_{kernel}_cpu_s"] = _cpu(lambda k=kernel: grid(k), repeats)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table and write the results.

    Parameters
    ----------
    argv : list of str, optional
        The command line (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0.
    """
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=ROOT / "data" / "demo.duckdb")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    load_start = _load()
    res = {"cold_page": cold_page(args.store, args.repeats)}
    res.update(computations(args.store, args.repeats))
    res.update(
        load_start=load_start,
        load_end=_load(),
        machine=f"{platform.machine()}, {os.cpu_count()} cores",
        store=str(args.store),
    )
    med = statistics.median
    rows = [
        ("Stream page, first view (AppTest), CPU s", med(res["cold_page"]["cpu_s"])),
        ("Stream page, first view (AppTest), wall s", med(res["cold_page"]["wall_s"])),
        ("configurations (stream_configs), CPU s", med(res["configurations_cpu_s"])),
        ("Nevis'22 protocol (stream_protocol), CPU s", med(res["protocol_cpu_s"])),
        ("grid sweeps, dense kernel, CPU s", med(res["grid_dense_cpu_s"])),
        ("grid sweeps, packed kernel, CPU s", med(res["grid_packed_cpu_s"])),
    ]
    print("| measurement | median |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value:.3f} |")
    print(f"load {load_start:.2f} -> {res['load_end']:.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
