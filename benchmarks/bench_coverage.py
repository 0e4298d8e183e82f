"""Per-model coverage of the 95% intervals on the demo leaderboard, and the comparison with
random, as ``lbe backtest`` reports them.

On the Open LLM Leaderboard v2 items of ``data/demo.duckdb``, for each task (IFEval, MuSR,
MATH-hard) and the three together: ``--holdout`` models held out at random (the random
split), the rest the cache; each held-out model run ``--repeats`` times on its own item
draw of ``--budget`` items with every method (the product's default estimator, and the
baselines ``random`` and ``first-n``). Reported per set and method: the mean absolute error,
its ratio to a random sample's exact expected error with the bootstrap interval, the
equivalent random budget, the coverage over all estimates, the mean width, and per model:
the worst model's coverage over its repeats and the share of models covered in at most
16 of 20 draws (binomial noise alone: 1.6% of well-calibrated 95% intervals).

With ``--textbook`` the same runs are repeated with the design-based estimators' textbook
t-interval (``guard=False`` of :func:`lifelong_core.methods.design.difference_estimate_at`,
the interval before the guard), to show what the guard changes.

    .venv/bin/python -m benchmarks.bench_coverage [--holdout 100] [--repeats 20] [--budget 100]
        [--sets ifeval,musr,math_hard,all] [--method auto] [--textbook] [--boot 2000]

Writes ``benchmarks/results/bench_coverage.json``; every set's timing comes with the load
average, CPU seconds beside wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from lifelong_core.datasets.leaderboard import DATASET
from lifelong_core.methods.registry import DEFAULT_METHOD
from lifelong_core.store import Store
from lifelong_core.workflows.backtest import backtest
from lifelong_core.workflows.selection import select

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_coverage.json"
SETS = ("ifeval", "musr", "math_hard", "all")


@contextmanager
def textbook_interval():
    """The design-based estimators with the textbook t-interval (no guard), for the runs
    inside the block: :func:`~lifelong_core.methods.irt.finish` reads the difference
    estimator from its own module, so that name is the one replaced."""
    from lifelong_core.methods import design, irt

    original = irt.difference_estimate_at
    irt.difference_estimate_at = partial(design.difference_estimate_at, guard=False)
    try:
        yield
    finally:
        irt.difference_estimate_at = original


def one_set(sel, args) -> dict:
    load = os.getloadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    bt = backtest(
        sel,
        args.method.split(","),
        [args.budget],
        holdout=args.holdout,
        split="random",
        repeats=args.repeats,
        seed=args.seed,
        boot=args.boot,
    )
    timing = {
        "wall_s": round(time.perf_counter() - wall, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "load_average": [round(x, 2) for x in load],
    }
    table = bt.table.set_index("method")
    cov = bt.coverage.set_index("method")
    out: dict = {"models": bt.config["models"], "items": bt.config["items"], "timing": timing}
    for method in table.index:
        t = table.loc[method]
        row = {
            "mae_pts": round(float(t["mae_pts"]), 3),
            "random_pts": round(float(t["random_pts"]), 3),
            "mae_vs_random": [
                round(float(t[c]), 3) for c in ("mae_vs_random", "ratio_lo", "ratio_hi")
            ],
            "equivalent_budget": [
                int(t[c]) for c in ("equivalent_budget", "equivalent_lo", "equivalent_hi")
            ],
            "coverage": round(float(t["coverage"]), 4),
            "width_pts": round(float(t["width_pts"]), 3),
        }
        if method in cov.index:
            c = cov.loc[method]
            row |= {
                "worst_model": str(c["worst_model"]),
                "worst_covered": f"{int(c['worst_covered'])}/{int(c['repeats'])}",
                "low_count": int(c["low_count"]),
                "models_at_or_below_low_count": int(c["low_models"]),
                "share_at_or_below_low_count": round(float(c["low_share"]), 4),
                "share_expected_from_noise": round(float(c["expected_share"]), 4),
            }
        out[method] = row
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--holdout", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--boot", type=int, default=2000)
    ap.add_argument("--method", default=DEFAULT_METHOD)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--textbook", action="store_true")
    ap.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    with Store.open(args.store) as st:
        sels = {s: select(st, DATASET, () if s == "all" else (s,)) for s in sets}
    out: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "config": {k: v for k, v in vars(args).items() if k not in ("store", "out")},
        "guarded": {},
    }
    for name, sel in sels.items():
        out["guarded"][name] = one_set(sel, args)
        print(name, "guarded", json.dumps(out["guarded"][name]), flush=True)
    if args.textbook:
        out["textbook"] = {}
        with textbook_interval():
            for name, sel in sels.items():
                out["textbook"][name] = one_set(sel, args)
                print(name, "textbook", json.dumps(out["textbook"][name]), flush=True)
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=float) + "\n")
    return out


if __name__ == "__main__":
    main()
