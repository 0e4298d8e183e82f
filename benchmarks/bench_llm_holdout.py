"""A new language model, estimated from a few items: held-out leaderboard models.

The numbers of the Benchmarks page's language-model section. Each held-out model of the bundled Open LLM
Leaderboard v2 data (Zhang, Dorner & Hardt 2025) is removed from the cache; the workflow
the command line runs (``select`` then ``estimate``, :mod:`lifelong_core.workflows.item_choice` and :mod:`lifelong_core.workflows.new_model`)
picks ``budget`` items, is given the model's real results on them, and estimates its
accuracy per task and overall with a 95% interval and its rank among the other models.
Reported: estimate, interval, true accuracy, rank and rank interval, per model and budget,
and over all of them the mean absolute error and the interval coverage.

    .venv/bin/python -m benchmarks.bench_llm_holdout [--store data/demo.duckdb] [--models 8] [--budgets 100,200]

Held-out models are spread over the accuracy range (evenly spaced quantiles of the
overall accuracy, fixed by ``--seed``), so the numbers are not tuned to one model.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lifelong_core.datasets.leaderboard import DATASET
from lifelong_core.methods.registry import DEFAULT_METHOD
from lifelong_core.store import Store
from lifelong_core.workflows import item_choice, new_model
from lifelong_core.workflows.selection import Selection

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_llm_holdout.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--models", type=int, default=8)
    ap.add_argument("--budgets", default="100,200")
    ap.add_argument("--method", default=DEFAULT_METHOD)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    with Store.open(args.store) as st:
        full = item_choice.cache_of(st, DATASET)
    acc = full.A.mean(axis=1)
    by_acc = np.argsort(acc, kind="stable")
    picks = by_acc[np.linspace(0, len(acc) - 1, args.models + 2).round().astype(int)[1:-1]]
    rows = []
    t0 = time.perf_counter()
    for r in picks:
        keep = np.setdiff1d(np.arange(len(acc)), [r])
        cache = Selection(
            full.A[keep],
            full.models.iloc[keep].reset_index(drop=True),
            full.samples,
            full.synthetic,
        )
        fits = {}

        def fitter(d, whole=None, cache=cache, fits=fits):
            if d not in fits:
                fits[d] = item_choice.fit(cache, args.method, d, whole)
            return fits[d]

        for b in budgets:
            choice = item_choice.select_items(
                cache, b, args.method, args.seed, fitted=fitter(None), model=full.names[r]
            )
            observed = dict(zip(choice.items["sample_id"], full.A[r, choice.columns].tolist()))
            est = new_model.estimate_new_model(cache, observed, args.method, fitter=fitter)
            o = est.overall
            true_rank = int((cache.A.mean(axis=1) > acc[r]).sum()) + 1
            rows.append(
                {
                    "model": full.names[r],
                    "budget": b,
                    "true": round(float(acc[r]), 4),
                    "estimate": round(float(o["estimate"]), 4),
                    "lo": round(float(o["lo"]), 4),
                    "hi": round(float(o["hi"]), 4),
                    "rank": est.rank,
                    "rank_lo": est.rank_lo,
                    "rank_hi": est.rank_hi,
                    "true_rank": true_rank,
                    "of": est.m + 1,
                    **{
                        f"{t}_est": round(float(v), 4)
                        for t, v in zip(est.table["scope"][:-1], est.table["estimate"][:-1])
                    },
                    **{
                        f"{t}_true": round(
                            float(full.A[r, (full.samples["domain"] == t).to_numpy()].mean()), 4
                        )
                        for t in est.table["scope"][:-1]
                    },
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    table = pd.DataFrame(rows)
    summary = (
        table.assign(
            err=(table["estimate"] - table["true"]).abs(),
            covered=(table["lo"] <= table["true"]) & (table["true"] <= table["hi"]),
            width=table["hi"] - table["lo"],
        )
        .groupby("budget")
        .agg(mae=("err", "mean"), coverage=("covered", "mean"), width=("width", "mean"))
        .round(4)
        .reset_index()
    )
    print(summary.to_string(index=False))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "method": args.method,
                "seed": args.seed,
                "models": len(acc),
                "items": int(full.A.shape[1]),
                "seconds": round(time.perf_counter() - t0, 1),
                "per_model": rows,
                "summary": summary.to_dict("records"),
            },
            indent=1,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
