"""A 13-model cache, leave one out: sample-level MAE of Sort & Search against the estimators.

The target: with a cache of a dozen models the default method's sample-level MAE is no
worse than Sort & Search's at n' = 64 and 1,024. Protocol: draw 13 models at random
(3 draws: seeds 0-2), evaluate each in turn with the other 12 as the cache; every method
runs through the engine's ``run_sweep`` (the path of ``sweep --search NAME``), S&S with its
published ``reference`` rule and uniform grid and with the ``midpoint`` rule.

Data: the demo digits dataset (the store's ``lifelong-digits``, or ``--matrix``) and the
bundled Open LLM Leaderboard v2 items, the three tasks side by side (IFEval + MuSR +
MATH-hard, 2,191 items, models present in all three, repeated names kept once), because no
single task has 1,024 items.

    .venv/bin/python -m benchmarks.bench_small_cache
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lifelong_core.sortsearch.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "open_llm_leaderboard_v2"
METHODS = ("reference", "midpoint", "mirt", "mirt-cv")
BUDGETS = (64, 1024)


def leaderboard() -> np.ndarray:
    parts = {}
    for task in ("ifeval", "musr", "math_hard"):
        z = np.load(DATA / f"{task}.npz", allow_pickle=False)
        names, first = np.unique(z["models"], return_index=True)
        parts[task] = dict(zip(names.tolist(), z["correct"][first]))
    common = sorted(set.intersection(*(set(p) for p in parts.values())))
    return np.vstack([np.concatenate([parts[t][name] for t in parts]) for name in common]).astype(
        np.uint8
    )


def demo(store: str) -> np.ndarray:
    from lifelong_core.store import Store

    with Store.open(store, read_only=True) as st:
        s = st.samples(dataset="lifelong-digits")
        return st.matrix(samples=s["sample_idx"].to_numpy())


def leave_one_out(A: np.ndarray, name: str, draws: int, log) -> pd.DataFrame:
    frames = []
    for seed in range(draws):
        rows = np.sort(np.random.default_rng(seed).choice(A.shape[0], 13, replace=False))
        B = A[rows]
        t0 = time.perf_counter()
        for i in range(13):
            cache = np.delete(B, i, axis=0)
            for method in METHODS:
                res = run_sweep(cache, B[i : i + 1], BUDGETS, search=method, seed=seed * 100 + i)
                pm = res.per_model.assign(data=name, draw=seed, held_out=i, method=method)
                frames.append(pm)
        log(f"  {name} draw {seed}: {time.perf_counter() - t0:.0f} s")
    return pd.concat(frames, ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    p.add_argument("--matrix", help="a 0/1 .npy matrix instead of the demo store's digits")
    p.add_argument("--draws", type=int, default=3)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_small_cache.json"))
    args = p.parse_args(argv)
    data = {
        "demo digits": np.load(args.matrix).astype(np.uint8) if args.matrix else demo(args.store),
        "leaderboard (3 tasks)": leaderboard(),
    }
    with threadpool_limits(1):
        pm = pd.concat([leave_one_out(A, name, args.draws, print) for name, A in data.items()])
    table = (
        pm.groupby(["data", "budget", "method"])
        .agg(mae=("mae", "mean"), eagg=("est_acc", "size"))
        .reset_index()
    )
    pm["abs_err"] = (pm.est_acc - pm.true_acc).abs()
    table["eagg"] = pm.groupby(["data", "budget", "method"]).abs_err.mean().to_numpy()
    wide = table.pivot_table(index=["data", "budget"], columns="method", values="mae").reset_index()
    print(wide.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    verdict = {
        f"{d} n'={b}: mirt-cv MAE <= S&S (reference)": bool(r["mirt-cv"] <= r["reference"])
        for d, b, r in ((r["data"], r["budget"], r) for _, r in wide.iterrows())
    }
    for k, v in verdict.items():
        print(f"- {k}: {'PASS' if v else 'FAIL'}")
    out = Path(args.out)
    out.write_text(
        json.dumps(
            dict(
                shapes={k: list(v.shape) for k, v in data.items()},
                draws=args.draws,
                table=table.to_dict(orient="records"),
                criteria=verdict,
            ),
            indent=1,
        )
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
