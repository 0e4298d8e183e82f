"""How long ``lbe estimate`` takes on a warm store: what a user waits for after each run.

A store the size of a user's own lm-eval collection, 73 models x 437 items, is built from
real results (a seeded draw of 74 models and 437 items of the bundled Open LLM Leaderboard
v2, ids ``<lm-eval task>/<doc_id>``, imported as lm-eval runs would be); its default
estimator's fitted state is kept in the store (``lbe state --refresh``); the 74th model
plays a new one: ``lbe select --budget 100`` chooses its items and its real results on
them are written as an lm-eval ``--log_samples`` run. Then ``lbe estimate --lm-eval RUN``
is timed as separate processes, process start included (the median of ``--repeats``
runs), once with the kept state (warm) and once after dropping it (``--cold``: the fit
made by the command itself, with the remembered cross-validated choice turned off).

    .venv/bin/python -m benchmarks.bench_estimate_warm [--repeats 7] [--cold]

Writes ``benchmarks/results/bench_estimate_warm.json``; the load average is recorded at
the start and the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_estimate_warm.json"
MODELS, ITEMS, BUDGET = 73, 437, 100
DATASET = "bench-llm"
TS = "2026-01-01T00-00-00.000001"


def build(folder: Path, seed: int = 0) -> tuple[Path, dict[str, int]]:
    """The 73 x 437 store and the new model's results (sample id -> 0/1) on every item."""
    from lifelong_core.datasets import leaderboard
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    with Store.open(ROOT / "data" / "demo.duckdb") as st:
        full = select(st, leaderboard.DATASET)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(full.A.shape[0], MODELS + 1, replace=False))
    cols = np.sort(rng.choice(full.A.shape[1], ITEMS, replace=False))
    A = np.asarray(full.A)[np.ix_(rows, cols)]
    ids = full.samples["sample_id"].to_numpy()[cols]
    names = full.models["model_id"].to_numpy()[rows]
    store = folder / "bench.duckdb"
    long = pd.DataFrame(
        {
            "model": np.repeat(names[:MODELS], ITEMS),
            "sample": np.tile(ids, MODELS),
            "correct": A[:MODELS].ravel(),
            "dataset": DATASET,
            "domain": np.tile([i.split("/")[0] for i in ids], MODELS),
        }
    )
    with Store.create(store) as st:
        st.add_dataset(
            DATASET, description="73 x 437 leaderboard results (benchmark)", synthetic=False
        )
        st.insert_long(long, source="benchmark")
    return store, dict(zip(ids.tolist(), A[MODELS].tolist()))


def write_run(folder: Path, chosen: dict[str, list[int]], truth: dict[str, int]) -> Path:
    """The new model's results on the chosen items as an lm-eval ``--log_samples`` run."""
    run = folder / "out" / "new__model"
    run.mkdir(parents=True)
    for task, docs in chosen.items():
        lines = [
            json.dumps(
                {"doc_id": d, "filter": "none", "metrics": ["acc"], "acc": truth[f"{task}/{d}"]}
            )
            for d in docs
        ]
        (run / f"samples_{task}_{TS}.jsonl").write_text("\n".join(lines) + "\n")
    return run


def lbe(*args: str, env: dict | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "lifelong_core", *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    return proc.stdout


def timed(args: list[str], repeats: int, env: dict) -> list[float]:
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        lbe(*args, env=env)
        walls.append(time.perf_counter() - t0)
    return walls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--cold", action="store_true", help="also time it without the kept state")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    load_start = [round(x, 2) for x in os.getloadavg()]
    out: dict = {"shape": [MODELS, ITEMS], "budget": BUDGET, "repeats": args.repeats}
    with tempfile.TemporaryDirectory(prefix="lbe-bench-") as tmp:
        folder = Path(tmp)
        store, truth = build(folder)
        env = {**os.environ, "LBE_TUNING_CACHE": str(folder / "tuning")}
        lbe("state", "--store", str(store), "--refresh", DATASET, env=env)
        samples = folder / "samples.json"
        lbe(
            "select",
            "--store",
            str(store),
            "--budget",
            str(BUDGET),
            "--model",
            "new/model",
            "--out",
            str(samples),
            env=env,
        )
        run = write_run(folder, json.loads(samples.read_text()), truth)
        argv_est = [
            "estimate",
            "--store",
            str(store),
            "--lm-eval",
            str(run),
            "--model",
            "new/model",
        ]
        print(lbe(*argv_est, env=env))
        warm = timed(argv_est, args.repeats, env)
        out["warm_s"] = {
            "median": round(statistics.median(warm), 3),
            "all": [round(w, 3) for w in warm],
        }
        print(f"warm lbe estimate: median {statistics.median(warm):.3f} s of {args.repeats}")
        if args.cold:
            # The same store without its kept state, and no remembered cross-validation:
            # the command fits the default itself.
            bare, _ = build_bare(folder)
            argv_cold = [
                "estimate",
                "--store",
                str(bare),
                "--lm-eval",
                str(run),
                "--model",
                "new/model",
            ]
            cold = timed(argv_cold, max(1, args.repeats // 2), {**env, "LBE_TUNING_CACHE": ""})
            out["cold_s"] = {
                "median": round(statistics.median(cold), 3),
                "all": [round(w, 3) for w in cold],
            }
            print(f"cold lbe estimate: median {statistics.median(cold):.3f} s")
    out["load_start"] = load_start
    out["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"load average: start {load_start}, end {out['load_end']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


def build_bare(folder: Path) -> tuple[Path, dict[str, int]]:
    """The same store built again in its own folder, without a kept state."""
    sub = folder / "bare"
    sub.mkdir()
    return build(sub)


if __name__ == "__main__":
    raise SystemExit(main())
