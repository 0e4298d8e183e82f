"""What the default estimator costs where a user waits for it: fits on the demo store and the
Budget explorer's first run.

1. **Fit on a whole dataset** (the Evaluate-something-new page, ``select``/``estimate``):
   ``auto`` (cross-validation + its item model) against ``mirt`` and ``mirt-cv``, on each
   demo dataset's real models evaluated on every sample, and on a 12-model cache of each.
2. **The Budget explorer's first run** on the demo store, through streamlit's AppTest (the
   script alone, no browser), opening on ``auto`` (the default), ``mirt`` and ``midpoint``.
3. **Remembered choices** (:mod:`lifelong_core.methods.tuning_memory`): ``auto`` fitted on
   each whole dataset three times in an empty choice folder: in a new process (the
   cross-validation runs), in another new process (the choice is read from the folder),
   and again in that process (from memory). Fit time only, not the process's start.
4. **A sweep from the command line** (``--part sweep``): ``python -m lifelong_core sweep``
   on a seeded synthetic 2,000 x 20,000 ``.npy`` matrix (4 model clusters), Sort on 400
   random rows, the 12 budgets 8 ... 16,384, every other row scored, with each of
   :data:`SWEEP_METHODS`; each a whole process (start-up included), its wall and CPU
   seconds and peak memory from ``/usr/bin/time``, and the sweep's mean E_agg at
   ``n' = 1,024``.

CPU seconds (process time, every thread) and wall seconds, each the median of
``--repeats``; the load average is recorded beside them (the machine is shared).

    .venv/bin/python -m benchmarks.bench_default_cost [--store data/demo.duckdb] [--repeats 3]
        [--part fits,page,remembered,sweep]

Writes ``benchmarks/results/bench_default_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_default_cost.json"
DATASETS = ("lifelong-digits", "open-llm-leaderboard-v2")
FIT_METHODS = ("auto", "mirt", "mirt-cv")
PAGE_METHODS = ("auto", "mirt", "midpoint")
SWEEP_METHODS = ("auto", "mirt", "midpoint")
SWEEP_BUDGETS = ",".join(str(8 << i) for i in range(12))  # 8 ... 16,384
PARTS = ("fits", "page", "remembered", "sweep")


def timed(fn, repeats: int) -> dict:
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {
        "cpu_s": round(statistics.median(cpu), 2),
        "wall_s": round(statistics.median(wall), 2),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def fits(store: str, repeats: int) -> list[dict]:
    from lifelong_core.methods import get_method
    from lifelong_core.sortsearch.sort import order_from_sums
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    with Store.open(store, read_only=True) as st:
        data = {d: np.asarray(select(st, d).A) for d in DATASETS}
    rows = []
    for name, A in data.items():
        small = A[np.sort(np.random.default_rng(0).choice(len(A), 12, replace=False))]
        for label, cache in ((f"all {len(A)} models", A), ("12 models", small)):
            order = order_from_sums(cache.sum(axis=0))
            for method in FIT_METHODS:
                t = timed(lambda m=method, c=cache, o=order: get_method(m).fit(c, o), repeats)
                rows.append(dict(dataset=name, cache=label, method=method, **t))
                print(f"  fit {name:24s} {label:16s} {method:8s} {t}", flush=True)
    return rows


def budget_page(store: str, repeats: int) -> list[dict]:
    from streamlit.testing.v1 import AppTest

    os.environ["LBE_STORE"] = store
    rows = []
    for method in PAGE_METHODS:

        def run(m=method):
            import streamlit as st

            # Cold: the page's caches, the sweep memo and the kept fits (cached resources)
            # emptied.
            st.cache_data.clear()
            st.cache_resource.clear()
            at = AppTest.from_file(
                str(ROOT / "pages" / "1_Budget_explorer.py"), default_timeout=900
            )
            at.query_params["search"] = m
            at.run()
            assert not at.exception, [e.message for e in at.exception]

        t = timed(run, repeats)
        rows.append(dict(page="Budget explorer, first run", method=method, **t))
        print(f"  Budget explorer first run, {method:8s} {t}", flush=True)
    return rows


_FIT_TWICE = """
import json, sys, time
import numpy as np
from lifelong_core.methods import get_method
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.store import Store
from lifelong_core.workflows.selection import select

store, dataset = sys.argv[1], sys.argv[2]
with Store.open(store, read_only=True) as st:
    A = np.asarray(select(st, dataset).A)
order = order_from_sums(A.sum(axis=0))
out = []
for _ in range(2):
    c0, w0 = time.process_time(), time.perf_counter()
    get_method("auto").fit(A, order)
    out.append([time.process_time() - c0, time.perf_counter() - w0])
print(json.dumps(out))
"""


def remembered(store: str) -> list[dict]:
    import subprocess
    import sys
    import tempfile

    rows = []
    for dataset in DATASETS:
        with tempfile.TemporaryDirectory() as folder:
            env = {**os.environ, "LBE_TUNING_CACHE": folder}
            runs = []
            for _ in range(2):
                out = subprocess.run(
                    [sys.executable, "-c", _FIT_TWICE, store, dataset],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                runs.append(json.loads(out))
        load = [round(x, 2) for x in os.getloadavg()]
        for label, (cpu, wall) in (
            ("new process, empty folder", runs[0][0]),
            ("new process, choice in the folder", runs[1][0]),
            ("same process, choice in memory", runs[1][1]),
        ):
            row = dict(dataset=dataset, fit=label, cpu_s=round(cpu, 2), wall_s=round(wall, 2))
            rows.append({**row, "load": load})
            print(f"  auto {dataset:24s} {label:34s} {row}", flush=True)
    return rows


def sweep(repeats: int) -> list[dict]:
    import subprocess
    import sys
    import tempfile

    import pandas as pd

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        matrix = Path(tmp) / "A.npy"
        subprocess.run(
            [sys.executable, "-m", "lifelong_core.datasets.synthetic", "--models", "2000"]
            + ["--samples", "20000", "--clusters", "4", "--seed", "0", "--out", str(matrix)],
            check=True,
            capture_output=True,
        )
        for method in SWEEP_METHODS:
            runs = []
            for _ in range(repeats):
                out = Path(tmp) / f"{method}.csv"
                timing = (
                    subprocess.run(
                        [
                            "/usr/bin/time",
                            "-f",
                            "%e %U %S %M",
                            sys.executable,
                            "-m",
                            "lifelong_core",
                        ]
                        + ["sweep", "--matrix", str(matrix), "--sort-models", "400", "--seed", "0"]
                        + ["--budgets", SWEEP_BUDGETS, "--method", method, "--out", str(out)]
                        + ["--no-baselines"],
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    .stderr.strip()
                    .splitlines()[-1]
                )
                wall, user, system, peak_kb = (float(x) for x in timing.split())
                table = pd.read_csv(out).set_index("budget")
                runs.append(
                    dict(
                        wall_s=wall,
                        cpu_s=user + system,
                        peak_mb=peak_kb / 1024,
                        eagg_1024=float(table.loc[1024, "eagg"]),
                        load=[round(x, 2) for x in os.getloadavg()],
                    )
                )
            row = dict(
                method=method,
                wall_s=round(statistics.median(r["wall_s"] for r in runs), 2),
                cpu_s=round(statistics.median(r["cpu_s"] for r in runs), 2),
                peak_mb=round(statistics.median(r["peak_mb"] for r in runs)),
                eagg_1024=round(runs[0]["eagg_1024"], 4),
                runs=runs,
            )
            rows.append(row)
            print(f"  sweep 2,000 x 20,000 {method:8s} {row}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument(
        "--part",
        default=",".join(PARTS),
        help=f"comma-separated parts to run, of {', '.join(PARTS)} (the others keep their results)",
    )
    args = ap.parse_args(argv)
    parts = [p.strip() for p in args.part.split(",") if p.strip()]
    bad = [p for p in parts if p not in PARTS]
    if bad:
        ap.error(f"--part: unknown {', '.join(bad)}; choose from {', '.join(PARTS)}")
    out = Path(args.out)
    res = json.loads(out.read_text()) if out.exists() else {}
    res.update(
        store=args.store,
        machine={"cpus": os.cpu_count(), "note": "shared machine; CPU seconds count every thread"},
        repeats=args.repeats,
    )
    if "fits" in parts:
        res["fits"] = fits(args.store, args.repeats)
    if "page" in parts:
        res["budget_explorer"] = budget_page(args.store, args.repeats)
    if "remembered" in parts:
        res["remembered"] = remembered(args.store)
    if "sweep" in parts:
        res["sweep"] = sweep(args.repeats)
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
