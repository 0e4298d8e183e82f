"""Timing of the matched-accuracy protocol (Anzaku et al., Algorithms 1 and 2).

1. One model, 50,000 source and 10,000 target datapoints (the ImageNet / ImageNetV2 sizes
   of the paper), 10 runs, eps = 0.005, both criteria, 10 and 1,000 classes
   (target: within 2 s).
2. The plain O(N*M) transcription against the Fenwick-tree matcher on a smaller pair,
   one run, to show what the data structure buys.
3. Every model of the demo store on its replication pair through
   ``workflows.matching.compare_block`` in the page's blocks (nothing kept) (target: within 20 s), wall and CPU.
4. The same models' runs (predictions already read) through the Fenwick tree one pass
   after another and through the stepped matcher all side by side, CPU seconds, both
   criteria; the picks are checked to be identical.

Synthetic inputs are seeded; timings are wall-clock minima and medians over repeats on a
shared machine, so expect noise. Run: ``.venv/bin/python -m benchmarks.bench_matching``.
"""

from __future__ import annotations

import json
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
    read_samples,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "bench_matching.json"


def synthetic(n: int, classes: int, shift: float, rng: np.random.Generator):
    """Calibrated-ish outputs: right with probability p; the target is less confident."""
    y = rng.integers(classes, size=n)
    p = np.clip(rng.beta(5, 1.5, size=n) - shift, 1 / classes, 1.0)
    right = rng.random(n) < p
    y_pred = np.where(right, y, (y + rng.integers(1, classes, size=n)) % classes)
    return make_predictions(y, y_pred, p)


def timed(fn, repeats: int, clock=time.perf_counter):
    times = []
    for _ in range(repeats):
        t0 = clock()
        out = fn()
        times.append(clock() - t0)
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
    from lifelong_core.workflows.matching import comparable_models, compare_block, model_blocks

    with Store.open(path, read_only=True) as store:
        # The page's models and blocks.
        rows = list(
            comparable_models(
                store, (source.dataset, source.domains), (target.dataset, target.domains)
            ).values()
        )

        def all_models():
            pair = read_samples(store, source, target)
            tables = []
            for block in model_blocks(rows, len(pair.source_idx), len(pair.target_idx)):
                table, _ = compare_block(
                    store, pair, block, eps=0.005, criterion="label-prob", runs=10, seed=0
                )
                tables.append(table)
            return tables

        _, cpu_best, _ = timed(all_models, repeats, clock=time.process_time)
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
        "cpu_min_s": cpu_best,
        "mean_acc_gap": float(table["acc_diff"].mean()),
        "mean_matched_gap": float(table["matched_acc_diff"].mean()),
        "mean_fraction_unmatched": float(table["fraction_unmatched"].mean()),
    }


def bench_stepped(repeats: int = 3) -> list[dict]:
    """The demo pair's runs through the Fenwick tree and the stepped matcher, CPU seconds."""
    path = Path(os.environ.get("LBE_STORE", ROOT / "data" / "demo.duckdb"))
    if not path.exists():
        return []
    from lifelong_core.matching.protocol import _draws, _fenwick_run, _stepped_runs, _windows
    from lifelong_core.matching.store_pair import load_pair
    from lifelong_core.store import Store

    source, target = (
        Side(DEMO_DATASET, (DEMO_SOURCE_DOMAIN,)),
        Side(DEMO_DATASET, (DEMO_TARGET_DOMAIN,)),
    )
    with Store.open(path, read_only=True) as store:
        data = load_pair(store, read_samples(store, source, target))
    preds = [data.predictions(m) for m in data.models]
    n_src, n_tgt, runs = len(data.y_source), len(data.y_target), 10
    out = []
    for criterion in ("label-prob", "prob"):
        wins = [_windows(s, t, 0.005, criterion) for s, t in preds]
        lo, hi = np.stack([w.lo for w in wins]), np.stack([w.hi for w in wins])
        u, v = _draws(np.random.default_rng(0), runs, n_tgt)

        def fenwick(lo=lo, hi=hi, u=u, v=v):
            return np.array(
                [
                    [_fenwick_run(n_src, a, b, u[r].tolist(), v[r].tolist()) for r in range(runs)]
                    for a, b in zip(lo.tolist(), hi.tolist())
                ]
            )

        want, fen_s, _ = timed(fenwick, repeats, clock=time.process_time)
        got, step_s, _ = timed(
            lambda lo=lo, hi=hi, u=u, v=v: _stepped_runs(n_src, lo, hi, u, v),
            repeats,
            clock=time.process_time,
        )
        if not np.array_equal(want, got):
            raise AssertionError("the stepped matcher picked differently from the Fenwick tree")
        out.append(
            {
                "case": f"demo pair, {len(preds)} models x {runs} runs, {n_src} x {n_tgt}, eps 0.005",
                "criterion": criterion,
                "fenwick_cpu_s": fen_s,
                "stepped_cpu_s": step_s,
                "widest_window": int((hi - lo).max()),
            }
        )
    return out


def main() -> None:
    one = bench_one_model()
    ref = bench_reference()
    demo = bench_demo_store()
    stepped = bench_stepped()
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
            "| case | min s | median s | CPU s | mean acc gap | mean matched gap | mean fraction unmatched |"
        )
        print("|---|---|---|---|---|---|---|")
        print(
            f"| {demo['case']} | {demo['min_s']:.2f} | {demo['median_s']:.2f} | {demo['cpu_min_s']:.2f} | "
            f"{demo['mean_acc_gap']:.4f} | {demo['mean_matched_gap']:.4f} | {demo['mean_fraction_unmatched']:.4f} |"
        )
        print()
        print("| case | criterion | Fenwick CPU s | stepped CPU s | widest window |")
        print("|---|---|---|---|---|")
        for r in stepped:
            print(
                f"| {r['case']} | {r['criterion']} | {r['fenwick_cpu_s']:.2f} | {r['stepped_cpu_s']:.2f} | "
                f"{r['widest_window']} |"
            )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "one_model": one,
                "reference": ref,
                "demo_store": demo,
                "stepped_vs_fenwick": stepped,
                "note": "wall-clock on a shared 2-core machine; noisy",
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
