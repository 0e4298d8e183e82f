"""A 13-model cache, leave one out: the default estimator against Sort & Search and CopyNearest&Expand.

With a cache of a dozen models the default method's sample-level MAE must be no worse than
the better of Sort & Search's and CopyNearest&Expand's at n' = 64 and 1,024, on both demo
datasets. Protocol: draw 13 models of a dataset at random (``--draws`` draws: seeds 0, 1,
...), evaluate each in turn with the other 12 as the cache; every method runs through the
engine's ``run_sweep`` (the path of ``sweep --method NAME``), each held-out model with its
own seed (so its own random selection): S&S with its published ``reference`` rule and grid
and with the ``midpoint`` rule, CopyNearest&Expand (``copy-nearest``), ``mirt``,
``mirt-cv`` and the default (``methods.registry.DEFAULT_METHOD``). Reported per dataset,
budget and method: sample-level MAE, E_agg, the 95% interval's coverage and width (methods
with one), and the CPU seconds of a whole run (fit + both budgets) per held-out model.

Data: the demo store's two datasets, each with its models evaluated on every sample:
``lifelong-digits`` (440 x 10,700) and ``open-llm-leaderboard-v2`` (428 x 2,191: IFEval,
MuSR and MATH-hard side by side, since no single task has 1,024 items).

    .venv/bin/python -m benchmarks.bench_small_cache [--store data/demo.duckdb] [--draws 3]

Writes ``benchmarks/results/bench_small_cache.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lifelong_core.methods.registry import DEFAULT_METHOD
from lifelong_core.store import Store
from lifelong_core.sweeping import run_sweep
from lifelong_core.workflows.selection import select

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("lifelong-digits", "open-llm-leaderboard-v2")
BASELINES = ("reference", "midpoint", "copy-nearest")
METHODS = (*BASELINES, "mirt", "mirt-cv")
BUDGETS = (64, 1024)
CACHE = 12


def leave_one_out(A: np.ndarray, name: str, methods, draws: int, log) -> pd.DataFrame:
    frames = []
    for seed in range(draws):
        rows = np.sort(np.random.default_rng(seed).choice(A.shape[0], CACHE + 1, replace=False))
        B = A[rows]
        t0 = time.perf_counter()
        for i in range(CACHE + 1):
            cache = np.delete(B, i, axis=0)
            for method in methods:
                c0 = time.process_time()
                res = run_sweep(cache, B[i : i + 1], BUDGETS, search=method, seed=seed * 100 + i)
                cpu = time.process_time() - c0
                frames.append(
                    res.per_model.assign(data=name, draw=seed, held_out=i, method=method, cpu=cpu)
                )
        log(f"  {name} draw {seed}: {time.perf_counter() - t0:.0f} s")
    return pd.concat(frames, ignore_index=True)


def summarise(pm: pd.DataFrame) -> pd.DataFrame:
    pm = pm.assign(err=(pm["est_acc"] - pm["true_acc"]).abs())
    if "est_lo" in pm:
        pm["covered"] = np.where(
            pm["est_lo"].notna(),
            (pm["est_lo"] <= pm["true_acc"]) & (pm["true_acc"] <= pm["est_hi"]),
            np.nan,
        )
        pm["width"] = pm["est_hi"] - pm["est_lo"]
    g = pm.groupby(["data", "budget", "method"])
    out = g.agg(mae=("mae", "mean"), eagg=("err", "mean"), trials=("err", "size")).reset_index()
    if "covered" in pm:
        cov = g.agg(coverage=("covered", "mean"), width=("width", "mean")).reset_index()
        out = out.merge(cov, on=["data", "budget", "method"])
    # One run per held-out model covers both budgets: its CPU time is counted once.
    cpu = pm.drop_duplicates(["data", "draw", "held_out", "method"])
    cpu = cpu.groupby(["data", "method"])["cpu"].mean().rename("cpu_s_per_model").reset_index()
    return out.merge(cpu, on=["data", "method"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    p.add_argument("--draws", type=int, default=3)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_small_cache.json"))
    args = p.parse_args(argv)
    methods = (*METHODS, *([DEFAULT_METHOD] if DEFAULT_METHOD not in METHODS else []))
    with Store.open(args.store, read_only=True) as st:
        data = {d: np.asarray(select(st, d).A) for d in DATASETS}
    t0 = time.perf_counter()
    with threadpool_limits(1):
        pm = pd.concat(
            [leave_one_out(A, name, methods, args.draws, print) for name, A in data.items()]
        )
    table = summarise(pm)
    pd.set_option("display.width", 200)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    wide = table.pivot_table(index=["data", "budget"], columns="method", values="mae")
    criteria = {}
    for (d, b), r in wide.iterrows():
        best = min(r[m] for m in BASELINES)
        criteria[
            f"{d} n'={b}: {DEFAULT_METHOD} MAE {r[DEFAULT_METHOD]:.4f} <= best of S&S and "
            f"CopyNearest&Expand {best:.4f}"
        ] = bool(r[DEFAULT_METHOD] <= best)
    for k, v in criteria.items():
        print(f"- {k}: {'PASS' if v else 'FAIL'}")
    out = Path(args.out)
    out.write_text(
        json.dumps(
            dict(
                shapes={k: list(v.shape) for k, v in data.items()},
                cache_models=CACHE,
                draws=args.draws,
                default=DEFAULT_METHOD,
                seconds=round(time.perf_counter() - t0, 1),
                load_average=os.getloadavg(),
                table=table.to_dict(orient="records"),
                criteria=criteria,
            ),
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
