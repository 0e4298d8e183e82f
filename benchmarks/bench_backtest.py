"""``backtest`` on the shipped demo store and on a store of 200 lm-eval runs, and what a
common item set does to coverage counted over a handful of models.

1. ``demo``: both datasets of ``data/demo.duckdb`` (real scikit-learn classifiers on
   digits; real language models of the Open LLM Leaderboard v2), the default methods
   (the product's default estimator, Sort & Search's published rule and the baselines,
   the random sample and first-n) at 32-256 items, 10 held-out models x 3 item draws,
   each model its own draws.
2. ``lm_eval``: 200 models of the leaderboard release written out as lm-eval runs
   (``benchmarks.bench_bulk_import.write_release_runs``: MuSR, 756 items, a task the
   estimators were not tuned on), imported with one ``import --lm-eval OUT``, then the
   same backtest with the ``random`` and the ``beyond-cache`` split (the 10 most accurate
   held out: estimating beyond the cache's range).
3. ``draws``: on that store, 10 held-out models run ``--draw-repeats`` times, the
   default estimator at 128 items, once with each model's own item draws and once with
   one common set per repeat; per repeat the share of the 10 intervals holding the truth
   and the share of estimates above it. With a common set the ten errors move together,
   so these shares swing far more from repeat to repeat (what a user sees as "8 of 10
   above the truth", "67% coverage"), although the coverage over all repeats is about
   the same. Per-model coverage over many draws, on the leaderboard's tasks:
   :mod:`benchmarks.bench_coverage`.

Every timing comes with the load average; CPU seconds are reported beside wall seconds.

    .venv/bin/python -m benchmarks.bench_backtest [--draw-repeats 40] [--only demo,lm_eval,draws]

Writes ``benchmarks/results/bench_backtest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from lifelong_core.methods.registry import DEFAULT_METHOD
from lifelong_core.store import Store
from lifelong_core.workflows import imports
from lifelong_core.workflows.backtest import backtest, default_methods
from lifelong_core.workflows.selection import select

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_backtest.json"
BUDGETS = (32, 64, 128, 256)


def _timed(fn):
    load = os.getloadavg()
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, {
        "wall_s": round(time.perf_counter() - w, 1),
        "cpu_s": round(time.process_time() - c, 1),
        "load_average": [round(x, 2) for x in load],
    }


def _report(bt) -> dict:
    cols = [
        "method",
        "budget",
        "estimates",
        "mae_pts",
        "bias_pts",
        "above_truth",
        "coverage",
        "coverage_lo",
        "coverage_hi",
        "width_pts",
        "random_pts",
        "mae_vs_random",
        "ratio_lo",
        "ratio_hi",
        "equivalent_budget",
        "width_vs_random",
    ]
    table = bt.table[cols].round(4)
    return {
        "config": dict(bt.config),
        "table": table.to_dict(orient="records"),
        "summary": bt.summary.round(1).to_dict(orient="records"),
    }


def _run(sel, **kw) -> dict:
    bt, timing = _timed(lambda: backtest(sel, default_methods(), BUDGETS, **kw))
    print(bt.text(), f"\n[{timing}]\n", flush=True)
    return {**_report(bt), "timing": timing}


def demo() -> dict:
    out = {}
    with Store.open(ROOT / "data" / "demo.duckdb") as st:
        names = st.datasets()["dataset"].tolist()
        sels = {d: select(st, d) for d in names}
    for d, sel in sels.items():
        out[d] = _run(sel, holdout=10, split="random", repeats=3)
    return out


def lm_eval_store(tmp: Path):
    from benchmarks.bench_bulk_import import write_release_runs

    write_release_runs(tmp / "out", "musr", 200)
    summary, timing = _timed(
        lambda: imports.import_into(tmp / "lm.duckdb", imports.lm_eval_source(tmp / "out"))
    )
    with Store.open(tmp / "lm.duckdb") as st:
        sel = select(st, st.datasets()["dataset"].iloc[0])
    return sel, {"runs": 200, "entries": int(summary["entries"]), "import": timing}


def lm_eval(sel) -> dict:
    return {
        "random": _run(sel, holdout=10, split="random", repeats=3),
        "beyond-cache": _run(sel, holdout=10, split="beyond-cache", repeats=3),
    }


def draws(sel, repeats: int) -> dict:
    out: dict = {}
    for design in ("per-model", "common"):
        bt, timing = _timed(
            lambda design=design: backtest(
                sel,
                [DEFAULT_METHOD],
                [128],
                holdout=10,
                split="random",
                repeats=repeats,
                draws=design,
            )
        )
        out[design] = {"timing": timing}
        # The random baseline is always in a backtest: both methods on the same splits.
        for method, per in bt.per_model.groupby("method", sort=False):
            by = per.groupby("repeat").agg(
                coverage=("covered", "mean"), above=("error", lambda e: float((e > 0).mean()))
            )
            err = per.pivot(index="repeat", columns="model", values="error")
            # How much the ten errors of a split move together: the mean pairwise
            # correlation of errors across splits would need the same models; instead the
            # share of the variance of a split's mean error beyond what independence gives.
            split_mean_var = float(per.groupby("repeat")["error"].mean().var(ddof=1))
            indep_var = float(per["error"].var(ddof=1)) / 10
            out[design][method] = {
                "splits": repeats,
                "coverage_overall": round(float(per["covered"].mean()), 4),
                "coverage_per_split": by["coverage"].round(2).tolist(),
                "coverage_per_split_sd": round(float(by["coverage"].std(ddof=1)), 4),
                "splits_with_coverage_at_most_70pct": int((by["coverage"] <= 0.7).sum()),
                "above_truth_per_split": by["above"].round(2).tolist(),
                "splits_with_8_or_more_of_10_on_one_side": int(
                    ((by["above"] >= 0.8) | (by["above"] <= 0.2)).sum()
                ),
                "split_mean_error_variance_over_independent": round(split_mean_var / indep_var, 2),
                "mae_pts": round(100 * float(per["error"].abs().mean()), 3),
                "models_per_split": int(err.notna().sum(axis=1).iloc[0]),
            }
            print(
                design,
                method,
                json.dumps({k: v for k, v in out[design][method].items() if "per_split" not in k}),
                flush=True,
            )
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draw-repeats", type=int, default=40)
    ap.add_argument("--only", default="demo,lm_eval,draws")
    args = ap.parse_args(argv)
    parts = set(args.only.split(","))
    out: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "default_method": DEFAULT_METHOD,
        "methods": default_methods(),
        "budgets": list(BUDGETS),
    }
    if "demo" in parts:
        out["demo"] = demo()
    if parts & {"lm_eval", "draws"}:
        with tempfile.TemporaryDirectory(prefix="bench_backtest_") as tmp:
            sel, built = lm_eval_store(Path(tmp))
            out["lm_eval_store"] = built
            if "lm_eval" in parts:
                out["lm_eval"] = lm_eval(sel)
            if "draws" in parts:
                out["draws"] = draws(sel, args.draw_repeats)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1, default=float) + "\n")
    return out


if __name__ == "__main__":
    main()
