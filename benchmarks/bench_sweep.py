"""Benchmark: 13-budget sweep on a seeded 2,000 x 200,000 matrix, Sort on 400 rows.

Runs ``python -m lifelong_core sweep`` and ``python -m benchmarks.naive_reference`` (the
dense transcription of the reference code) as whole processes, loading included, and
records wall time and peak RSS (``ru_maxrss`` of the child from ``os.wait4``). Checks that
both report the same per-budget MAE. Prints a markdown table and writes
``benchmarks/results/bench_sweep.json``.

    .venv/bin/python -m benchmarks.bench_sweep [--models 2000 --samples 200000 --sort 400]
    .venv/bin/python -m benchmarks.bench_sweep --compare-rules   # reference vs midpoint MAE

The matrix is written once to ``--workdir`` (default ``/tmp/lbe_bench_sweep``) and reused.
Timings on a shared machine are noisy; the run is sequential (one process at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = ",".join(str(2**k) for k in range(3, 16))


def make_matrix(path: Path, m: int, n: int, seed: int) -> None:
    """Seeded synthetic cache: P(correct) = sigmoid(ability_i - difficulty_j), plus a
    per-model idiosyncratic term so models do not follow one order exactly."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.5, 1.0, size=(m, 1)).astype(np.float32)
    difficulty = rng.normal(0.0, 1.5, size=(1, n)).astype(np.float32)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(m, n))
    for s in range(0, m, 100):
        k = min(100, m - s)
        noise = rng.normal(0.0, 0.8, size=(k, n)).astype(np.float32)
        logit = ability[s : s + k] - difficulty + noise
        out[s : s + k] = rng.random((k, n), dtype=np.float32) < 1.0 / (1.0 + np.exp(-logit))
    out.flush()
    del out


def ensure_matrix(path: Path, m: int, n: int, seed: int) -> None:
    """Generate the matrix once, in a child process: a forked child's ``ru_maxrss`` starts
    from the parent's resident size, so generating it here would inflate every peak-memory
    figure measured after it."""
    if path.exists():
        return
    t = time.perf_counter()
    code = (
        f"from pathlib import Path; from benchmarks.bench_sweep import make_matrix; "
        f"make_matrix(Path({str(path)!r}), {m}, {n}, {seed})"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    print(f"generated {path} in {time.perf_counter() - t:.1f} s", file=sys.stderr)


def timed(cmd: list[str]) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{err}")
    return {
        "cmd": " ".join(cmd),
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def compare_rules(seeds: int, store: Path | None) -> dict:
    """Mean MAE / E_agg of the two threshold rules, same Sort and samples, per setting.

    Synthetic: ``seeds`` seeded 300 x 20,000 matrices (Sort on 100 rows, 200 evaluated),
    uniform and random sampling. Demo: the digits store, Sort on 110 of 440 models drawn
    with each seed. Budgets 8 ... 16,384 (all powers of two that fit).
    """
    from lifelong_core.sweeping import run_sweep

    settings: list[tuple[str, np.ndarray, int]] = []
    for s in range(seeds):
        path = Path("/tmp") / f"lbe_rules_{s}.npy"
        if not path.exists():
            make_matrix(path, 300, 20_000, 100 + s)
        settings.append((f"synthetic seed {100 + s}", np.load(path), 100))
    if store is not None and store.exists():
        from lifelong_core.store import Store
        from lifelong_core.workflows.selection import select

        # The demo store holds more than one dataset; the rule comparison is on the digits.
        with Store.open(store, read_only=True) as st:
            settings.append(("demo digits store", select(st, "lifelong-digits").A, 110))
    rows = []
    for label, A, k in settings:
        m = A.shape[0]
        for s in range(seeds):
            sort_rows = np.sort(np.random.default_rng(s).choice(m, k, replace=False))
            ev = np.setdiff1d(np.arange(m), sort_rows)
            for sampling in ("uniform", "random"):
                for rule in ("reference", "midpoint"):
                    t = run_sweep(
                        A[sort_rows],
                        A[ev],
                        None,
                        sampling=sampling,
                        search=rule,
                        seed=s,
                        ties="stable",
                    ).table
                    for _, r in t.iterrows():
                        rows.append(
                            {
                                "data": label.split(" seed")[0],
                                "matrix": label,
                                "seed": s,
                                "sampling": sampling,
                                "rule": rule,
                                "budget": int(r["budget"]),
                                "mae": r["mae"],
                                "eagg": r["eagg"],
                            }
                        )
    df = pd.DataFrame(rows)
    wide = df.pivot_table(
        index=["data", "sampling", "matrix", "seed", "budget"],
        columns="rule",
        values=["mae", "eagg"],
    )
    summary = []
    for (data, sampling), g in wide.groupby(level=[0, 1]):
        summary.append(
            {
                "data": data,
                "sampling": sampling,
                "cases": len(g),
                "mae_reference": round(float(g[("mae", "reference")].mean()), 5),
                "mae_midpoint": round(float(g[("mae", "midpoint")].mean()), 5),
                "midpoint_mae_wins": int((g[("mae", "midpoint")] < g[("mae", "reference")]).sum()),
                "reference_mae_wins": int((g[("mae", "midpoint")] > g[("mae", "reference")]).sum()),
                "eagg_reference": round(float(g[("eagg", "reference")].mean()), 5),
                "eagg_midpoint": round(float(g[("eagg", "midpoint")].mean()), 5),
            }
        )
    per_budget = (
        df.groupby(["data", "sampling", "rule", "budget"])["mae"].mean().round(5).reset_index()
    )
    return {"summary": summary, "per_budget": per_budget.to_dict(orient="records")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--compare-rules",
        action="store_true",
        help="instead of timing, compare the reference and midpoint threshold rules "
        "(writes benchmarks/results/bench_sweep_rules.json)",
    )
    ap.add_argument("--rule-seeds", type=int, default=3)
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--models", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--sort", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", default="/tmp/lbe_bench_sweep")
    args = ap.parse_args(argv)
    if args.compare_rules:
        res = compare_rules(args.rule_seeds, Path(args.store))
        cols = list(res["summary"][0])
        print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
        for r in res["summary"]:
            print("| " + " | ".join(str(r[c]) for c in cols) + " |")
        out = ROOT / "benchmarks" / "results" / "bench_sweep_rules.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=2) + "\n")
        return 0

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    matrix = work / f"A_{args.models}x{args.samples}_seed{args.seed}.npy"
    ensure_matrix(matrix, args.models, args.samples, args.seed)
    budgets = ",".join(b for b in BUDGETS.split(",") if int(b) <= args.samples)
    py = sys.executable
    common = [
        "--matrix",
        str(matrix),
        "--sort-models",
        str(args.sort),
        "--seed",
        str(args.seed),
        "--budgets",
        budgets,
    ]
    runs = {
        "naive dense reference": [
            py,
            "-m",
            "benchmarks.naive_reference",
            *common,
            "--out",
            str(work / "naive.csv"),
        ],
        "sweep --method reference": [
            py,
            "-m",
            "lifelong_core",
            "sweep",
            *common,
            "--method",
            "reference",
            "--out",
            str(work / "ours_reference.csv"),
        ],
        "sweep --method midpoint": [
            py,
            "-m",
            "lifelong_core",
            "sweep",
            *common,
            "--method",
            "midpoint",
            "--out",
            str(work / "ours_midpoint.csv"),
        ],
    }
    results = {name: timed(cmd) for name, cmd in runs.items()}
    naive = pd.read_csv(work / "naive.csv")
    ours = pd.read_csv(work / "ours_reference.csv")
    mid = pd.read_csv(work / "ours_midpoint.csv")
    diff = float(np.abs(naive["mae"].to_numpy() - ours["mae"].to_numpy()).max())
    base = results["naive dense reference"]
    ref = results["sweep --method reference"]
    summary = {
        "matrix": [args.models, args.samples],
        "sort_rows": args.sort,
        "budgets": [int(b) for b in budgets.split(",")],
        "runs": results,
        "mae_max_abs_diff_reference_vs_naive": diff,
        "speedup": round(base["wall_s"] / ref["wall_s"], 1),
        "cpu_speedup": round(base["cpu_s"] / ref["cpu_s"], 1),
        "memory_ratio": round(base["peak_rss_mb"] / ref["peak_rss_mb"], 1),
        "mae_reference": ours["mae"].round(5).tolist(),
        "mae_midpoint": mid["mae"].round(5).tolist(),
        "note": "single run each, sequential, on a shared 2-core machine; timings are noisy",
    }
    print("| run | wall (s) | CPU (s) | peak RSS (MB) |\n|---|---:|---:|---:|")
    for name, r in results.items():
        print(f"| {name} | {r['wall_s']} | {r['cpu_s']} | {r['peak_rss_mb']} |")
    print(
        f"\nMAE max |diff| reference vs naive: {diff:.3g}; speed-up {summary['speedup']}x wall, "
        f"{summary['cpu_speedup']}x CPU; memory {summary['memory_ratio']}x less"
    )
    print("\n| budget | MAE reference | MAE midpoint |\n|---:|---:|---:|")
    for b, r, mm in zip(summary["budgets"], summary["mae_reference"], summary["mae_midpoint"]):
        print(f"| {b} | {r:.5f} | {mm:.5f} |")
    out = ROOT / "benchmarks" / "results" / "bench_sweep.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if diff <= 1e-12 else 1


if __name__ == "__main__":
    raise SystemExit(main())
