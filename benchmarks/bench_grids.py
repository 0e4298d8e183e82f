"""Benchmark: the published uniform grid (``reference`` sampling) against stratum centres
(``uniform``) and random sampling, for both threshold rules on one Sort order.

The published grid (``step = n // n'``, offset ``n - n' * step`` when ``n'`` does not
divide ``n``) leaves the first ``n - n' * step`` positions of the easy -> hard order
unsampled; stratum centres cover the whole order. Both rules run with stable ties, so the
only thing that changes between rows of one rule is the grid.

    .venv/bin/python -m benchmarks.bench_grids [--seeds 3] [--store data/demo.duckdb]

Settings: insert_M on the demo store (Sort on 110 of 440 models drawn with each seed;
budgets 8 ... 8,192), insert_D on the demo store (the transpose: each seed holds out a
random 20% of the samples as new ones, models are sorted by their accuracy on the rest;
model budgets m' = 8 ... 256) and insert_M on seeded synthetic 300 x 20,000 matrices
(Sort on 100 rows). Prints markdown tables and writes
``benchmarks/results/bench_grids.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.bench_sweep import make_matrix

ROOT = Path(__file__).resolve().parents[1]
SAMPLINGS = ("reference", "uniform", "random")
RULES = ("midpoint", "reference")


def _settings(seeds: int, store: Path | None):
    """(data label, seed, A_sort, A_eval, budgets) for every setting."""
    out = []
    if store is not None and store.exists():
        from lifelong_core.store import Store
        from lifelong_core.workflows.selection import select

        with Store.open(store, read_only=True) as st:
            A = select(st, "lifelong-digits").A
        m, n = A.shape
        for s in range(seeds):
            rows = np.sort(np.random.default_rng(s).choice(m, 110, replace=False))
            ev = np.setdiff1d(np.arange(m), rows)
            out.append(
                ("demo insert_M", s, A[rows], A[ev], [2**k for k in range(3, 14) if 2**k <= n])
            )
            new = np.sort(np.random.default_rng(1000 + s).choice(n, n // 5, replace=False))
            old = np.setdiff1d(np.arange(n), new)
            out.append(
                (
                    "demo insert_D",
                    s,
                    np.ascontiguousarray(A[:, old].T),
                    np.ascontiguousarray(A[:, new].T),
                    [2**k for k in range(3, 9) if 2**k <= m],
                )
            )
    for s in range(seeds):
        path = Path("/tmp") / f"lbe_rules_{s}.npy"
        if not path.exists():
            make_matrix(path, 300, 20_000, 100 + s)
        A = np.load(path)
        rows = np.sort(np.random.default_rng(s).choice(300, 100, replace=False))
        ev = np.setdiff1d(np.arange(300), rows)
        out.append(("synthetic insert_M", s, A[rows], A[ev], [2**k for k in range(3, 15)]))
    return out


def compare_grids(seeds: int, store: Path | None) -> dict:
    from lifelong_core.sweeping import run_sweep

    rows = []
    for label, s, A_sort, A_eval, budgets in _settings(seeds, store):
        n = A_sort.shape[1]
        for rule in RULES:
            for sampling in SAMPLINGS:
                t = run_sweep(
                    A_sort, A_eval, budgets, sampling=sampling, search=rule, seed=s, ties="stable"
                ).table
                for _, r in t.iterrows():
                    b = int(r["budget"])
                    rows.append(
                        {
                            "data": label,
                            "seed": s,
                            "rule": rule,
                            "sampling": sampling,
                            "budget": b,
                            "unsampled_easy_end": (n - b * (n // b)) / n
                            if sampling == "reference"
                            else 0.0,
                            "mae": r["mae"],
                            "eagg": r["eagg"],
                        }
                    )
    df = pd.DataFrame(rows)
    curves = df.groupby(["data", "rule", "sampling", "budget"], as_index=False)[
        ["mae", "eagg", "unsampled_easy_end"]
    ].mean()
    wide = df.pivot_table(
        index=["data", "rule", "seed", "budget"], columns="sampling", values="mae"
    )
    summary = []
    for (data, rule), g in wide.groupby(level=[0, 1]):
        summary.append(
            {
                "data": data,
                "rule": rule,
                "cases": len(g),
                "mae_reference_grid": round(float(g["reference"].mean()), 5),
                "mae_uniform": round(float(g["uniform"].mean()), 5),
                "mae_random": round(float(g["random"].mean()), 5),
                "uniform_better_worse_same": f"{int((g['uniform'] < g['reference'] - 1e-12).sum())} / "
                f"{int((g['uniform'] > g['reference'] + 1e-12).sum())} / "
                f"{int((abs(g['uniform'] - g['reference']) <= 1e-12).sum())}",
                "max_gain": round(float((g["reference"] - g["uniform"]).max()), 5),
            }
        )
    return {"summary": summary, "curves": curves.round(6).to_dict(orient="records")}


def _print(rows: list[dict]) -> None:
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    args = ap.parse_args(argv)
    res = compare_grids(args.seeds, Path(args.store))
    _print(res["summary"])
    print()
    mid = [r for r in res["curves"] if r["rule"] == "midpoint" and r["data"] == "demo insert_D"]
    if mid:
        wide = pd.DataFrame(mid).pivot(index="budget", columns="sampling", values="mae").round(4)
        print("demo insert_D, midpoint rule, mean MAE by model budget m':")
        _print(wide.reset_index().to_dict(orient="records"))
    out = ROOT / "benchmarks" / "results" / "bench_grids.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
