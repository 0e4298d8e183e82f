"""The active design (two rounds) against the stratified difference estimator and random, on
held-out language models of the bundled Open LLM Leaderboard v2, per task and split.

Data: the demo store's ``open-llm-leaderboard-v2`` dataset (real per-item results released
with Zhang, Dorner & Hardt, 2025, "How Benchmark Prediction from Fewer Data Misses the
Mark"), one task at a time (IFEval 541 items, MuSR 756, MATH-hard 894).

Splits, as ``benchmarks/bench_llm_splits.py`` draws them: ``random``, a random fifth of the
models held out (``--splits`` seeds, pooled), and ``extrapolation``, the best fifth by
overall accuracy held out (models better than every cached one; as many draws as the random
splits together). Per split and task each method is fitted once on the cache (the other
models, Sort by sum), then every held-out model is evaluated ``--draws`` times at each budget
``n'``, each time on the method's own fresh items:

- ``active``: the registered method in its two rounds (``methods/active.py``: a stratified
  pilot of a quarter, then one item per zone where the prediction is least sure; the
  held-out model's stored results are read between the rounds);
- ``stratified``: ``mirt``'s stratified sample along the order and its difference estimator
  (what ``active`` is in one round);
- ``random``: a uniform random sample and its exact interval.

Reported per task, split, method and budget: E_agg (mean |estimate - true accuracy|, in
points) and the 95% interval's coverage and mean width.

    .venv/bin/python -m benchmarks.bench_active [--draws 2] [--splits 3] [--budgets 50,100,200]

Writes ``benchmarks/results/bench_active.json`` (with the load average at start and end).
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

from benchmarks.bench_llm_splits import splits
from lifelong_core.datasets.leaderboard import DATASET, TASKS
from lifelong_core.methods.active import play_rounds
from lifelong_core.methods.registry import get_method
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.store import Store
from lifelong_core.workflows.selection import select

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_active.json"
BUDGETS = (50, 100, 200)
METHODS = {"active": "active", "stratified": "mirt", "random": "random"}


def run_task(A, held, budgets, draws, seed) -> list[dict]:
    """Every method on one task's columns ``A`` with the models ``held`` held out."""
    cache = A[np.setdiff1d(np.arange(len(A)), held)]
    order = order_from_sums(cache.sum(axis=0))
    n = A.shape[1]
    rows = []
    for label, name in METHODS.items():
        method = get_method(name).fit(cache, order)
        for r in held:
            truth = A[r]
            true = float(truth.mean())
            for b in budgets:
                for d in range(draws):
                    rng = np.random.default_rng([seed, int(r), b, d])
                    if label == "active":
                        _, est = play_rounds(method, n, b, rng, truth.__getitem__)
                    else:
                        cols = method.select(n, b, rng)
                        est = method.estimate(cols, truth[cols])
                    rows.append(
                        dict(
                            method=label,
                            model_row=int(r),
                            budget=b,
                            draw=d,
                            true=true,
                            est=float(est.acc),
                            lo=np.nan if est.lo is None else float(est.lo),
                            hi=np.nan if est.hi is None else float(est.hi),
                        )
                    )
    return rows


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    df = df.assign(
        err=(df["est"] - df["true"]).abs() * 100,
        covered=(df["lo"] <= df["true"]) & (df["true"] <= df["hi"]),
        width=(df["hi"] - df["lo"]) * 100,
    )
    keys = ["task", "split", "method", "budget"]
    return (
        df.groupby(keys)
        .agg(
            eagg=("err", "mean"),
            coverage=("covered", "mean"),
            width=("width", "mean"),
            trials=("err", "size"),
        )
        .reset_index()
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--draws", type=int, default=2, help="fresh item draws per held-out model")
    ap.add_argument("--splits", type=int, default=3, help="random splits (seeds 0, 1, ...)")
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    budgets = tuple(int(b) for b in args.budgets.split(","))
    tasks = [t for t in args.tasks.split(",") if t]
    load_start = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    with Store.open(args.store, read_only=True) as st:
        sel = select(st, DATASET)
    A_all = np.asarray(sel.A)
    domains = sel.samples["domain"].to_numpy()
    frames = []
    with threadpool_limits(1):
        for i, (name, held) in enumerate(splits(A_all.mean(axis=1), args.splits)):
            kind = "random" if name.startswith("random") else "extrapolation"
            draws = args.draws * (args.splits if kind == "extrapolation" else 1)
            for task in tasks:
                A = A_all[:, domains == task]
                rows = run_task(A, held, budgets, draws, 1000 + i)
                frames.append(pd.DataFrame(rows).assign(task=task, split=kind))
                print(
                    f"{name} {task}: {len(held)} held out, {time.perf_counter() - t0:.0f} s",
                    flush=True,
                )
    per = pd.concat(frames, ignore_index=True)
    table = summarise(per)
    pd.set_option("display.width", 200)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    mean = table.groupby(["split", "method", "budget"])["eagg"].mean().unstack("method")
    print(
        "\nE_agg in points, mean over tasks:\n" + mean.to_string(float_format=lambda v: f"{v:.2f}")
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "data": f"{args.store} ({DATASET}), {A_all.shape[0]} models, tasks {', '.join(tasks)}",
                "draws": args.draws,
                "random_splits": args.splits,
                "seconds": round(time.perf_counter() - t0, 1),
                "load_start": load_start,
                "load_end": [round(x, 2) for x in os.getloadavg()],
                "table": table.to_dict(orient="records"),
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
