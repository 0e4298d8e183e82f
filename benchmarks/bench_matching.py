"""Timing of the matched-accuracy protocol (Anzaku et al., Algorithms 1 and 2).

1. One model, 50,000 source and 10,000 target datapoints (the ImageNet / ImageNetV2 sizes
   of the paper), 10 runs, eps = 0.005, both criteria, 10 and 1,000 classes
   (target: within 2 s).
2. The plain O(N*M) transcription against the Fenwick-tree matcher on a smaller pair,
   one run, to show what the data structure buys.
3. Every model of the demo store on its replication pair through
   ``compare_store_models`` in the page's blocks (target: within 20 s).

Synthetic inputs are seeded; timings are wall-clock minima and medians over repeats on a
shared machine, so expect noise. Run: ``.venv/bin/python -m benchmarks.bench_matching``.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
from pathlib import Path

import numpy as np

from lifelong_core.matching import make_predictions, match_reference, match_runs, matched_accuracy
from lifelong_core.matching.store_pair import (
    DEMO_DATASET,
    DEMO_SOURCE_DOMAIN,
    DEMO_TARGET_DOMAIN,
    Side,
    compare_store_models,
    read_samples,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "bench_matching.json"
PAGE_BLOCKS = 20  # as in pages/8_Matched_accuracy.py


def synthetic(n: int, classes: int, shift: float, rng: np.random.Generator):
    """Calibrated-ish outputs: right with probability p; the target is less confident."""
    y = rng.integers(classes, size=n)
    p = np.clip(rng.beta(5, 1.5, size=n) - shift, 1 / classes, 1.0)
    right = rng.random(n) < p
    y_pred = np.where(right, y, (y + rng.integers(1, classes, size=n)) % classes)
    return make_predictions(y, y_pred, p)


def timed(fn, repeats: int):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, min(times), statistics.median(times)


def bench_one_model(repeats: int = 3) -> list[dict]:
    rows = []
    for classes in (10, 1000):
        rng = np.random.default_rng(classes)
        src = synthetic(50_000, classes, 0.0, rng)
        tgt = synthetic(10_000, classes, 0.05, rng)
        for criterion in ("label-prob", "prob"):
            res, best, med = timed(
                lambda src=src, tgt=tgt, criterion=criterion: matched_accuracy(
                    src, tgt, eps=0.005, criterion=criterion, runs=10, seed=0
                ),
                repeats,
            )
            rows.append(
                {
                    "case": f"50,000 x 10,000, {classes} classes",
                    "criterion": criterion,
                    "runs": 10,
                    "min_s": best,
                    "median_s": med,
                    "fraction_unmatched": res.fraction_unmatched,
                    "acc_gap": res.acc_diff,
                    "matched_gap": res.matched_acc_diff,
                }
            )
    return rows


def bench_reference(n_src: int = 5_000, n_tgt: int = 1_000) -> dict:
    rng = np.random.default_rng(7)
    src = synthetic(n_src, 10, 0.0, rng)
    tgt = synthetic(n_tgt, 10, 0.05, rng)
    _, ref_s, _ = timed(
        lambda: match_reference(src, tgt, 0.005, "label-prob", np.random.default_rng(0)), 1
    )
    _, fast_s, _ = timed(lambda: match_runs(src, tgt, eps=0.005, runs=1, seed=0), 3)
    return {
        "case": f"{n_src:,} x {n_tgt:,}, 10 classes, 1 run",
        "reference_s": ref_s,
        "fenwick_s": fast_s,
        "speedup": ref_s / fast_s,
    }


def bench_demo_store(repeats: int = 2) -> dict | None:
    path = Path(os.environ.get("LBE_STORE", ROOT / "data" / "demo.duckdb"))
    if not path.exists():
        return None
    from lifelong_core.store import Store

    source, target = (
        Side(DEMO_DATASET, (DEMO_SOURCE_DOMAIN,)),
        Side(DEMO_DATASET, (DEMO_TARGET_DOMAIN,)),
    )
    with Store.open(path, read_only=True) as store:
        rows = store.models()["model_idx"].astype(int).tolist()
        size = max(1, math.ceil(len(rows) / PAGE_BLOCKS))

        def all_models():
            pair = read_samples(store, source, target)
            tables = []
            for i in range(0, len(rows), size):
                comparison, _ = compare_store_models(
                    store,
                    pair,
                    rows[i : i + size],
                    eps=0.005,
                    criterion="label-prob",
                    runs=10,
                    seed=0,
                    require_any=False,
                )
                tables.append(comparison.table)
            return tables

        tables, best, med = timed(all_models, repeats)
        n_src = len(store.samples(DEMO_DATASET, [DEMO_SOURCE_DOMAIN]))
        n_tgt = len(store.samples(DEMO_DATASET, [DEMO_TARGET_DOMAIN]))
    import pandas as pd

    table = pd.concat(tables, ignore_index=True)
    return {
        "case": f"demo store, {len(table)} models, {n_src} source x {n_tgt} target, 10 runs",
        "models": len(table),
        "min_s": best,
        "median_s": med,
        "mean_acc_gap": float(table["acc_diff"].mean()),
        "mean_matched_gap": float(table["matched_acc_diff"].mean()),
        "mean_fraction_unmatched": float(table["fraction_unmatched"].mean()),
    }


def main() -> None:
    one = bench_one_model()
    ref = bench_reference()
    demo = bench_demo_store()
    print("| case | criterion | min s | median s | fraction unmatched | acc gap | matched gap |")
    print("|---|---|---|---|---|---|---|")
    for r in one:
        print(
            f"| {r['case']} | {r['criterion']} | {r['min_s']:.2f} | {r['median_s']:.2f} | "
            f"{r['fraction_unmatched']:.4f} | {r['acc_gap']:.4f} | {r['matched_gap']:.4f} |"
        )
    print()
    print("| case | reference s | Fenwick s | speed-up |")
    print("|---|---|---|---|")
    print(
        f"| {ref['case']} | {ref['reference_s']:.2f} | {ref['fenwick_s']:.3f} | {ref['speedup']:.0f}x |"
    )
    print()
    if demo is None:
        print("demo store not found (build it with `make store`); all-model timing skipped")
    else:
        print(
            "| case | min s | median s | mean acc gap | mean matched gap | mean fraction unmatched |"
        )
        print("|---|---|---|---|---|---|")
        print(
            f"| {demo['case']} | {demo['min_s']:.2f} | {demo['median_s']:.2f} | {demo['mean_acc_gap']:.4f} | "
            f"{demo['mean_matched_gap']:.4f} | {demo['mean_fraction_unmatched']:.4f} |"
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "one_model": one,
                "reference": ref,
                "demo_store": demo,
                "note": "wall-clock on a shared 2-core machine; noisy",
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
