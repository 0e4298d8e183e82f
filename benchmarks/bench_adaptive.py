"""Adaptive evaluation against a plain random sample and ``mirt``, on real LLM data.

Data: the bundled Open LLM Leaderboard v2 per-item results (IFEval, MuSR, MATH-hard;
Zhang, Dorner & Hardt, 2025, "How Benchmark Prediction from Fewer Data Misses the Mark"),
one task at a time; models with a repeated name (identical rows) are kept once, so a
held-out model never has its twin in the cache. Two splits per task:

- ``random``: Sort (the cache) on a random 80% of the models, evaluate the other 20%; 5 seeds.
- ``extrapolate``: Sort on the 80% least accurate, evaluate the best 20% (every evaluated
  model beats every cached one: the case where benchmark predictors fail); the split is
  fixed, 5 seeds of the random draws.

Methods, each on every held-out model:

- ``random``: a simple random sample without replacement, normal interval with the
  finite-population correction (``p +- 1.96 sqrt(p (1 - p) / n' (1 - n'/n))``).
- ``mirt``: today's default (k = 10, stratified random along the Sort order, difference
  estimator, Student-t interval).
- ``mirt-cv``: the same with k and the ridge cross-validated on the Sort models.
- ``adaptive``: :mod:`lifelong_core.methods.adaptive` with the cross-validated predictor
  (``adaptive-k10``: with mirt's fixed k = 10, to separate the design from the tuning).

Reported per task and split: E_agg (mean |estimate - true accuracy|, points), 95% interval
coverage and mean width (points) at n' = 32, 64, 100, 256; and for the sequential methods
(``random`` and ``adaptive``, both checking the interval after each round of the same
schedule) the evaluations needed until the half-width is <= 1 and <= 2 points (capped at
all items; "never" counts as all items), with the coverage at that stopping time.

``bound``: the ratio of variances no predictor of this kind can beat on these data,
computed with each held-out model's ability fitted on *all* its items (an oracle): the
residual variance ``mean (a - p)^2`` and Neyman's ``(mean sd)^2`` against ``acc (1 - acc)``.

    .venv/bin/python -m benchmarks.bench_adaptive                        # leaderboard, all tasks
    .venv/bin/python -m benchmarks.bench_adaptive --matrix A.npy --name digits --max-traj 1024
    # one task per process, then the tables and criteria over all of them:
    .venv/bin/python -m benchmarks.bench_adaptive --tasks musr --out benchmarks/results/bench_adaptive_musr.json
    .venv/bin/python -m benchmarks.bench_adaptive --merge benchmarks/results/bench_adaptive_*.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from threadpoolctl import threadpool_limits

from lifelong_core.methods.adaptive import AdaptiveSampler, IRTPredictor, round_size, simulate
from lifelong_core.methods.irt import MIRTEstimator, map_ability
from lifelong_core.methods.tuning import TunedEstimator
from lifelong_core.sortsearch.sort import order_from_sums

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "open_llm_leaderboard_v2"
TASKS = ("ifeval", "musr", "math_hard")
BUDGETS = (32, 64, 100, 256)
TARGETS = (0.01, 0.02)
MIN_EVALUATED = 16


def load_task(task: str) -> np.ndarray:
    z = np.load(DATA / f"{task}.npz", allow_pickle=False)
    _, first = np.unique(z["models"], return_index=True)
    return z["correct"][np.sort(first)].astype(np.uint8)


def splits(A: np.ndarray, seeds: int):
    m = A.shape[0]
    cut = round(0.8 * m)
    for s in range(seeds):
        perm = np.random.default_rng(s).permutation(m)
        yield "random", s, perm[:cut], perm[cut:]
    by_acc = np.argsort(A.mean(axis=1), kind="stable")
    for s in range(seeds):
        yield "extrapolate", s, by_acc[:cut], by_acc[cut:]


def random_trajectory(
    row: np.ndarray, rng: np.random.Generator, budgets, targets, max_traj: int
) -> list[dict]:
    """A simple random sample grown round by round on the adaptive method's schedule."""
    n = len(row)
    perm = rng.permutation(n)[:max_traj]
    mu = row.mean()
    out, done, reached = [], 0, {}
    marks = sorted(b for b in budgets if b <= max_traj)
    while done < len(perm):
        size = min(round_size(done), len(perm) - done)
        nxt = [b for b in marks if b > done]
        if nxt:
            size = min(size, nxt[0] - done)
        done += size
        p = row[perm[:done]].mean()
        half = 1.959964 * np.sqrt(p * (1 - p) / done * (1 - done / n)) if done < n else 0.0
        if done in marks:
            out.append(
                dict(
                    kind="budget",
                    budget=done,
                    err=abs(p - mu),
                    covered=abs(p - mu) <= half,
                    width=2 * half,
                )
            )
        for h in targets:
            if h not in reached and done >= MIN_EVALUATED and half <= h:
                reached[h] = (done, abs(p - mu), abs(p - mu) <= half)
    for h in targets:
        done_h, err, cov = reached.get(h, (n, 0.0, True))
        out.append(dict(kind="target", target=h, evaluations=done_h, err=err, covered=cov))
    return out


def adaptive_trajectory(
    sampler: AdaptiveSampler, row: np.ndarray, seed: int, budgets, targets, max_traj
) -> list[dict]:
    n = len(row)
    mu = row.mean()
    reached = {}

    def on_round(rec):
        for h in targets:
            if (
                h not in reached
                and rec.evaluated >= MIN_EVALUATED
                and rec.half is not None
                and rec.half <= h
            ):
                reached[h] = (rec.evaluated, abs(rec.acc - mu), rec.lo <= mu <= rec.hi)

    run = simulate(
        sampler, row, seed, max_budget=min(max_traj, n), checkpoints=budgets, on_round=on_round
    )
    out = [
        dict(
            kind="budget",
            budget=b,
            err=abs(e.acc - mu),
            covered=e.lo <= mu <= e.hi,
            width=e.hi - e.lo,
        )
        for b, e in sorted(run.checkpoints.items())
    ]
    for h in targets:
        done_h, err, cov = reached.get(h, (n, 0.0, True))
        out.append(dict(kind="target", target=h, evaluations=done_h, err=err, covered=cov))
    return out


def oracle_bound(item, rows: np.ndarray) -> dict:
    srs, resid, neyman = [], [], []
    for row in rows:
        theta, _ = map_ability(item, np.arange(len(row)), row)
        p = expit(item.d + item.w @ theta)
        mu = row.mean()
        pc = np.clip(p, 0.02, 0.98)
        srs.append(mu * (1 - mu))
        resid.append(np.mean((row - p) ** 2))
        neyman.append(np.mean(np.sqrt(pc * (1 - pc))) ** 2)
    return dict(
        srs_var=float(np.mean(srs)),
        resid_var=float(np.mean(resid)),
        neyman_var=float(np.mean(neyman)),
    )


def run_task(
    name: str, A: np.ndarray, seeds: int, max_traj: int, log
) -> tuple[list[dict], list[dict]]:
    n = A.shape[1]
    budgets = tuple(b for b in BUDGETS if b < n)
    rows, bounds = [], []
    for split, seed, S, E in splits(A, seeds):
        t0 = time.perf_counter()
        order = order_from_sums(A[S].sum(axis=0))
        mirt = MIRTEstimator().fit(A[S], order)
        tuned = TunedEstimator(seed=seed).fit(A[S], order)
        tn = tuned.tuning_
        if seed == 0:
            bounds.append(dict(task=name, split=split, **oracle_bound(mirt.item_, A[E])))
        rng = np.random.default_rng(1000 + seed)
        preds = {"adaptive": tuned.predictor_, "adaptive-k10": IRTPredictor(mirt.item_)}
        for i in E:
            row = A[i]
            mu = row.mean()
            for rec in random_trajectory(row, rng, budgets, TARGETS, max_traj):
                rows.append(
                    dict(task=name, split=split, seed=seed, model=int(i), method="random", **rec)
                )
            for meth, est in (("mirt", mirt), ("mirt-cv", tuned)):
                for b in budgets:
                    sel = est.select(n, b, rng)
                    e = est.estimate(sel, row[sel])
                    rows.append(
                        dict(
                            task=name,
                            split=split,
                            seed=seed,
                            model=int(i),
                            method=meth,
                            kind="budget",
                            budget=b,
                            err=abs(e.acc - mu),
                            covered=e.lo <= mu <= e.hi,
                            width=e.hi - e.lo,
                        )
                    )
            for meth, pred in preds.items():
                sampler = AdaptiveSampler(pred, n)
                for rec in adaptive_trajectory(
                    sampler, row, int(rng.integers(2**31)), budgets, TARGETS, max_traj
                ):
                    rows.append(
                        dict(task=name, split=split, seed=seed, model=int(i), method=meth, **rec)
                    )
        log(
            f"  {name} {split} seed {seed}: cv chose {tn.kind} k={tn.k} ridge={tn.ridge} ({tn.seconds:.0f} s); "
            f"{len(E)} models in {time.perf_counter() - t0:.0f} s"
        )
    return rows, bounds


def tables(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    b = df[df.kind == "budget"]
    at = (
        b.groupby(["task", "split", "method", "budget"])
        .agg(
            eagg_pts=("err", lambda x: 100 * x.mean()),
            coverage=("covered", "mean"),
            width_pts=("width", lambda x: 100 * x.mean()),
        )
        .reset_index()
    )
    t = df[df.kind == "target"]
    need = (
        t.groupby(["task", "split", "method", "target"])
        .agg(evaluations=("evaluations", "mean"), coverage_at_stop=("covered", "mean"))
        .reset_index()
    )
    need["target_pts"] = (100 * need.pop("target")).round().astype(int)
    return at, need


def criteria(at: pd.DataFrame, need: pd.DataFrame) -> dict:
    a100 = at[at.budget == 100].groupby("method").eagg_pts.mean()
    cov = at[at.method == "adaptive"].groupby(["task", "split"]).coverage
    n2 = need[need.target_pts == 2].groupby("method").evaluations.mean()
    return {
        "adaptive mean E_agg at n'=100 <= 0.7 x mirt": [
            float(a100["adaptive"]),
            float(0.7 * a100["mirt"]),
        ],
        "adaptive mean E_agg at n'=100 <= 0.5 x random": [
            float(a100["adaptive"]),
            float(0.5 * a100["random"]),
        ],
        "adaptive coverage in [0.93, 0.97] in every task and split (min, max over tasks x splits x budgets)": [
            float(cov.min().min()),
            float(cov.max().max()),
        ],
        "adaptive evaluations for +-2 points <= 1/3 random": [
            float(n2["adaptive"]),
            float(n2["random"] / 3),
        ],
    }


def markdown(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append(
            "| " + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in r) + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default=",".join(TASKS))
    p.add_argument("--matrix", help="a 0/1 .npy matrix instead of the leaderboard tasks")
    p.add_argument("--name", default="matrix", help="its name in the tables")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument(
        "--max-traj", type=int, default=100_000, help="cap on a trajectory's evaluations"
    )
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_adaptive.json"))
    p.add_argument(
        "--merge",
        nargs="+",
        metavar="JSON",
        help="combine per-task result files instead of running",
    )
    args = p.parse_args(argv)
    if args.merge:
        return merge(args.merge, Path(args.out))
    data = (
        {args.name: np.load(args.matrix).astype(np.uint8)}
        if args.matrix
        else {t: load_task(t) for t in args.tasks.split(",") if t}
    )
    rows, bounds = [], []
    t0 = time.perf_counter()
    with threadpool_limits(1):
        for name, A in data.items():
            print(f"{name}: {A.shape[0]} models x {A.shape[1]} items", flush=True)
            r, b = run_task(name, A, args.seeds, args.max_traj, lambda s: print(s, flush=True))
            rows += r
            bounds += b
    df = pd.DataFrame(rows)
    at, need = tables(df)
    bound = pd.DataFrame(bounds)
    print("\n## At fixed budgets\n\n" + markdown(at))
    print("\n## Evaluations to reach +-1 and +-2 points\n\n" + markdown(need))
    print("\n## Oracle bound (ability fitted on all items)\n\n" + markdown(bound))
    crit = criteria(at, need) if "random" in set(at.method) and 100 in set(at.budget) else {}
    for k, v in crit.items():
        print(f"- {k}: {v[0]:.3g} vs {v[1]:.3g}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            dict(
                data=list(data),
                seeds=args.seeds,
                seconds=time.perf_counter() - t0,
                at_budget=at.to_dict(orient="records"),
                to_target=need.to_dict(orient="records"),
                oracle_bound=bound.to_dict(orient="records"),
                criteria=crit,
            ),
            indent=1,
        )
    )
    print(f"\nwrote {out}")
    return 0


def merge(paths: list[str], out: Path) -> int:
    parts = [json.loads(Path(f).read_text()) for f in paths]
    at = pd.DataFrame([r for d in parts for r in d["at_budget"]])
    need = pd.DataFrame([r for d in parts for r in d["to_target"]])
    bound = pd.DataFrame([r for d in parts for r in d["oracle_bound"]])
    crit = criteria(at, need)
    for k, v in crit.items():
        print(f"- {k}: {v[0]:.3g} vs {v[1]:.3g}")
    out.write_text(
        json.dumps(
            dict(
                data=[t for d in parts for t in d["data"]],
                seeds=parts[0]["seeds"],
                seconds=sum(d["seconds"] for d in parts),
                merged_from=[Path(f).name for f in paths],
                at_budget=at.to_dict(orient="records"),
                to_target=need.to_dict(orient="records"),
                oracle_bound=bound.to_dict(orient="records"),
                criteria=crit,
            ),
            indent=1,
        )
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
