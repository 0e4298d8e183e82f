"""Held-out language models, two splits: the default estimator against today's ``mirt`` and the baselines.

Data: the demo store's ``open-llm-leaderboard-v2`` dataset (real per-item results of the
Open LLM Leaderboard v2, released with Zhang, Dorner & Hardt, 2025, "How Benchmark
Prediction from Fewer Data Misses the Mark"; models evaluated on all 2,191 items).

Splits (that paper's two settings, §4):

- ``random``: a random fifth of the models is held out (``--splits`` seeds), the rest is
  the cache;
- ``extrapolation``: the best fifth by overall accuracy is held out (the release carries
  no dates, so "newest" is read as "best": new models that beat every cached one).

Each method is fitted once per split on the cache (Sort by sum), then every held-out model
is evaluated ``--draws`` times, each time on the method's own fresh selection of ``n'``
items (``select`` with its own random generator), as a user evaluating one new model
would. Reported per split, method and budget: sample-level MAE, E_agg (mean |estimate -
true accuracy|), and for methods with an interval its 95% coverage and mean width.
Criteria checked: the default's E_agg at n' = 100 no worse than ``mirt``'s, and its
coverage at n' = 100 within 93-97%, in each split (the random splits pooled; the one
extrapolation split gets as many draws as they have together).

    .venv/bin/python -m benchmarks.bench_llm_splits [--store data/demo.duckdb] [--draws 4] [--splits 3]

Writes ``benchmarks/results/bench_llm_splits.json``.
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

from lifelong_core.datasets.leaderboard import DATASET
from lifelong_core.methods.registry import DEFAULT_METHOD, get_method
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.store import Store
from lifelong_core.workflows.selection import select

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_llm_splits.json"
BASELINES = ("mirt", "midpoint", "reference", "copy-nearest")
BUDGETS = (50, 100, 200, 400)
HOLD_OUT = 0.2


def splits(acc: np.ndarray, n_random: int) -> list[tuple[str, np.ndarray]]:
    """(name, held-out rows): ``n_random`` random fifths, then the best fifth."""
    m = len(acc)
    k = round(HOLD_OUT * m)
    out = [
        (f"random (seed {s})", np.sort(np.random.default_rng(s).choice(m, k, replace=False)))
        for s in range(n_random)
    ]
    out.append(("extrapolation (best fifth)", np.sort(np.argsort(-acc, kind="stable")[:k])))
    return out


def run_split(A, held, methods, budgets, draws, seed, log) -> tuple[pd.DataFrame, dict]:
    cache = A[np.setdiff1d(np.arange(len(A)), held)]
    order = order_from_sums(cache.sum(axis=0))
    n = A.shape[1]
    rows, fit_cpu = [], {}
    for name in methods:
        t0 = time.process_time()
        method = get_method(name).fit(cache, order)
        fit_cpu[name] = time.process_time() - t0
        rng = np.random.default_rng(seed)
        for r in held:
            truth = A[r]
            true_acc = float(truth.mean())
            for b in budgets:
                for d in range(draws):
                    cols = method.select(n, b, rng)
                    est = method.estimate(cols, truth[cols])
                    rows.append(
                        dict(
                            method=name,
                            model_row=int(r),
                            budget=b,
                            draw=d,
                            true=true_acc,
                            est=float(est.acc),
                            lo=np.nan if est.lo is None else float(est.lo),
                            hi=np.nan if est.hi is None else float(est.hi),
                            mae=float(np.mean(est.per_sample != truth)),
                        )
                    )
        log(f"    {name:14s} fit {fit_cpu[name]:6.1f} CPU s")
    return pd.DataFrame(rows), fit_cpu


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    df = df.assign(
        err=(df["est"] - df["true"]).abs(),
        covered=(df["lo"] <= df["true"]) & (df["true"] <= df["hi"]),
        width=df["hi"] - df["lo"],
    )
    g = df.groupby(["split", "method", "budget"])
    out = g.agg(mae=("mae", "mean"), eagg=("err", "mean"), trials=("err", "size")).reset_index()
    has = df[df["lo"].notna()].groupby(["split", "method", "budget"])
    cov = has.agg(coverage=("covered", "mean"), width=("width", "mean")).reset_index()
    return out.merge(cov, on=["split", "method", "budget"], how="left")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--draws", type=int, default=4, help="fresh selections per held-out model")
    ap.add_argument("--splits", type=int, default=3, help="random splits (seeds 0, 1, ...)")
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    budgets = tuple(int(b) for b in args.budgets.split(","))
    methods = (DEFAULT_METHOD, *[m for m in BASELINES if m != DEFAULT_METHOD])
    with Store.open(args.store, read_only=True) as st:
        A = np.asarray(select(st, DATASET).A)
    acc = A.mean(axis=1)
    frames, fits = [], {}
    t0 = time.perf_counter()
    with threadpool_limits(1):
        for i, (name, held) in enumerate(splits(acc, args.splits)):
            print(f"{name}: {len(held)} held out, cache {len(A) - len(held)} models", flush=True)
            # The one extrapolation split gets as many trials as the random splits together.
            draws = args.draws * (args.splits if name.startswith("extrapolation") else 1)
            df, fit_cpu = run_split(A, held, methods, budgets, draws, 1000 + i, print)
            frames.append(df.assign(split=name))
            fits[name] = fit_cpu
    per = pd.concat(frames, ignore_index=True)
    per["kind"] = np.where(per["split"].str.startswith("random"), "random", "extrapolation")
    table = summarise(per.assign(split=per["kind"]))
    pd.set_option("display.width", 200)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    at100 = table[table["budget"] == 100].set_index(["split", "method"])
    criteria = {}
    for split in table["split"].unique():
        d, m = at100.loc[(split, DEFAULT_METHOD)], at100.loc[(split, "mirt")]
        criteria[f"{split}: {DEFAULT_METHOD} E_agg at n'=100 <= mirt's"] = bool(
            d["eagg"] <= m["eagg"]
        )
        criteria[f"{split}: {DEFAULT_METHOD} 95% coverage at n'=100 within 93-97%"] = bool(
            0.93 <= d["coverage"] <= 0.97
        )
    for k, v in criteria.items():
        print(f"- {k}: {'PASS' if v else 'FAIL'}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "data": f"{args.store} ({DATASET}), {A.shape[0]} models x {A.shape[1]} items",
                "protocol": __doc__.split("\n\n")[2:4],
                "default": DEFAULT_METHOD,
                "draws": args.draws,
                "random_splits": args.splits,
                "fit_cpu_seconds": fits,
                "seconds": round(time.perf_counter() - t0, 1),
                "load_average": os.getloadavg(),
                "table": table.to_dict(orient="records"),
                "criteria": criteria,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
