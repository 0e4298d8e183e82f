"""mirt at the paper's scale: what the fit's subsample costs, and what it takes.

    python -m benchmarks.bench_mirt_scale --part demo      # subsample effect on the demo data
    python -m benchmarks.bench_mirt_scale --part fit --store BIG.duckdb --dataset synthetic
                                                           # refresh the kept state of a store: wall time, peak memory
    python -m benchmarks.bench_mirt_scale --part fit-shape # mirt fit at the paper shape, rows generated in memory
    python -m benchmarks.bench_mirt_scale --part estimate  # CPU time per estimate at n = 1,697,682

``demo``: held-out measurement as in ``bench_estimators`` (Sort on a random third of the
440 demo models, the other 294 scored, a fresh stratified draw per model, seeds 0-2) of
``mirt`` fitted (a) in memory, (b) by the chunked packed fit (same algorithm), and (c) with
the subsample used at scale made active on this small cache: the fit on half the Sort
models and the two-stage fit with ``max_columns`` = 2,048 of the 10,700 samples. MAE,
E_agg and 95% interval coverage per budget.

``fit`` runs ``lifelong_core.workflows.lifelong_state.refresh`` (Sort state + mirt item
parameters from packed blocks, persisted in the store) in this process and reports wall
time and peak RSS (``ru_maxrss``). ``fit-shape`` does what that refresh does for mirt at
the paper's shape (Prabhu et al. 2024, §4: 6,000 Sort models x 1,697,682 samples) without writing a
53-billion-entry store: the synthetic generator makes every row from its own seed, so the
``MAX_FIT_MODELS`` rows the refresh would read (the same seeded subset of the 6,000) are
generated directly as packed rows; then the same ``fit_packed`` call, and the time per
estimate of the fitted model on a held-out row. Results:
``benchmarks/results/bench_mirt_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "bench_mirt_scale.json"
BUDGETS = (64, 256, 1024)


def _cpu_s() -> float:
    """CPU seconds of this process so far (user + system): on a shared machine a steadier
    measure of the work than wall time."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _save(key: str, value) -> None:
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[key] = value
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


def _heldout(fitted, A: np.ndarray, rows: np.ndarray, seed: int) -> dict:
    out = {}
    n = A.shape[1]
    for b in BUDGETS:
        mae, eagg, cov = [], [], []
        for i in rows:
            cols = fitted.select(n, b, np.random.default_rng([seed, b, int(i)]))
            est = fitted.estimate(cols, A[i, cols])
            true = A[i].mean()
            mae.append(np.mean(est.per_sample != A[i]))
            eagg.append(abs(est.acc - true))
            cov.append(est.lo <= true <= est.hi)
        out[b] = (np.mean(mae), np.mean(eagg), np.mean(cov))
    return out


def part_demo(store: str, seeds: int) -> dict:
    from threadpoolctl import threadpool_limits

    from lifelong_core.methods.irt import MIRTEstimator
    from lifelong_core.sortsearch import choose_sort_rows, compute_order
    from lifelong_core.store import Store

    with Store.open(store) as st:
        smp = st.samples("lifelong-digits")
        mdl = st.models()
        mdl = mdl[~mdl["estimated"].astype(bool)]
        A = st.matrix(mdl["model_idx"].to_numpy(), smp["sample_idx"].to_numpy())
    variants = {}
    with threadpool_limits(1):
        for seed in range(seeds):
            rows = choose_sort_rows(len(A), 146, seed)
            rest = np.setdiff1d(np.arange(len(A)), rows)
            As = A[rows]
            order = compute_order(As, "sum")
            P = np.packbits(As, axis=1, bitorder="little")
            half = np.sort(
                np.random.default_rng(seed).choice(len(rows), len(rows) // 2, replace=False)
            )
            fits = {
                "in-memory": lambda As=As, order=order: MIRTEstimator().fit(As, order),
                "packed chunks": lambda P=P, order=order: MIRTEstimator().fit_packed(
                    P, A.shape[1], order
                ),
                "half the Sort models": lambda P=P, half=half, order=order: (
                    MIRTEstimator().fit_packed(P[half], A.shape[1], order)
                ),
                "two-stage, 2,048 columns": lambda P=P, order=order: MIRTEstimator().fit_packed(
                    P, A.shape[1], order, max_columns=2048
                ),
                "both": lambda P=P, half=half, order=order: MIRTEstimator().fit_packed(
                    P[half], A.shape[1], order, max_columns=2048
                ),
            }
            for name, fit in fits.items():
                t = time.perf_counter()
                est = fit()
                secs = time.perf_counter() - t
                res = _heldout(est, A, rest, seed)
                v = variants.setdefault(name, {"fit_s": [], **{str(b): [] for b in BUDGETS}})
                v["fit_s"].append(secs)
                for b in BUDGETS:
                    v[str(b)].append(res[b])
                print(
                    name,
                    seed,
                    round(secs, 2),
                    {b: tuple(round(x, 4) for x in res[b]) for b in BUDGETS},
                    flush=True,
                )
    table = {
        name: {
            "fit_s": float(np.median(v["fit_s"])),
            **{
                b: dict(
                    zip(("mae", "eagg", "coverage"), np.mean(v[str(b)], axis=0).round(4).tolist())
                )
                for b in map(str, BUDGETS)
            },
        }
        for name, v in variants.items()
    }
    return {
        "seeds": seeds,
        "heldout_models": int(len(A) - 146),
        "budgets": list(BUDGETS),
        "variants": table,
    }


def part_estimate(n: int, repeats: int) -> dict:
    """CPU and wall time of ``estimate`` (and of ``select``) at ``n`` samples, one thread.

    Item parameters are random float32 (what the packed fit keeps): the cost does not
    depend on their values. CPU time is reported because wall time on the shared machine
    mostly measures the other jobs."""
    from threadpoolctl import threadpool_limits

    from lifelong_core.methods.irt import ItemModel, MIRTEstimator

    k = 10
    rng = np.random.default_rng(0)
    item = ItemModel(
        d=rng.normal(size=n).astype(np.float32),
        w=rng.normal(size=(n, k)).astype(np.float32),
        prior_mean=np.zeros(k),
        prior_prec=np.eye(k),
        theta=rng.normal(size=(100, k)),
    )
    est = MIRTEstimator(k=k).with_items(item, rng.permutation(n))
    truth = (rng.random(n) < 0.7).astype(np.uint8)
    out = {}
    with threadpool_limits(1):
        for b in (64, 1024, 32768):
            cols = [est.select(n, b, np.random.default_rng(r)) for r in range(repeats)]
            cpu, wall = [], []
            for c in cols:
                t0, c0 = time.perf_counter(), time.process_time()
                est.estimate(c, truth[c])
                cpu.append(time.process_time() - c0)
                wall.append(time.perf_counter() - t0)
            c0 = time.process_time()
            est.select(n, b, np.random.default_rng(0))
            out[str(b)] = {
                "estimate_cpu_ms_median": 1000 * float(np.median(cpu)),
                "estimate_wall_ms_median": 1000 * float(np.median(wall)),
                "select_cpu_ms": 1000 * (time.process_time() - c0),
            }
            print(b, out[str(b)], flush=True)
    return {"n": n, "k": k, "repeats": repeats, "threads": 1, "timing": out}


def part_fit(store: str, dataset: str, max_models: int | None) -> dict:
    from lifelong_core.store import Store
    from lifelong_core.workflows import lifelong_state

    t = time.perf_counter()
    last = [0.0]

    def progress(f: float, text: str = "") -> None:
        if f - last[0] >= 0.05 or f >= 1.0:
            last[0] = f
            print(f"{time.perf_counter() - t:8.1f} s  {100 * f:5.1f}%  {text}", flush=True)

    with Store.open(store, read_only=False) as st:
        kw = {} if max_models is None else {"max_models": max_models}
        sort, item = lifelong_state.refresh(st, dataset, progress=progress, **kw)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    out = {
        "store": store,
        "dataset": dataset,
        "sort_models": len(sort.members),
        "samples": len(sort.samples),
        "fit_models": len(item.fit_models),
        "params": item.params,
        "sort_state_s": sort.seconds,
        "item_fit_s": item.seconds,
        "wall_s": wall,
        "cpu_s": _cpu_s(),
        "peak_rss_gb": peak,
    }
    print(out, flush=True)
    return out


def part_fit_shape(sort_models: int, n: int, repeats: int) -> dict:
    from lifelong_core.datasets.synthetic import SyntheticSpec, _row_prob, params
    from lifelong_core.methods.irt import MIRTEstimator
    from lifelong_core.sortsearch.sort import order_from_sums
    from lifelong_core.workflows.lifelong_state import MAX_FIT_COLUMNS, MAX_FIT_MODELS, fit_models

    spec = SyntheticSpec(n_models=31_250, n_samples=n, n_clusters=4)
    latent = params(spec)

    def row(i: int) -> np.ndarray:
        u = np.random.default_rng([spec.seed, 2, i]).random(n, dtype=np.float32)
        return np.packbits(u < _row_prob(spec, latent, i), bitorder="little")

    t = time.perf_counter()
    rows = fit_models(np.arange(sort_models), MAX_FIT_MODELS, 0)
    P = np.stack([row(int(i)) for i in rows])
    gen_s = time.perf_counter() - t
    sums = (
        np.unpackbits(P, axis=1, count=n, bitorder="little").sum(axis=0, dtype=np.int64)
        if n < 200_000
        else None
    )
    if sums is None:
        from lifelong_core.bits import column_sums_packed

        sums = column_sums_packed(P, n)
    order = order_from_sums(sums)
    last = [0.0]
    t = time.perf_counter()

    def progress(f: float) -> None:
        if f - last[0] >= 0.05 or f >= 1.0:
            last[0] = f
            print(f"{time.perf_counter() - t:8.1f} s  {100 * f:5.1f}%", flush=True)

    cpu0 = _cpu_s()
    est = MIRTEstimator().fit_packed(P, n, order, progress=progress, max_columns=MAX_FIT_COLUMNS)
    fit_s = time.perf_counter() - t
    fit_cpu_s = _cpu_s() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    truth = np.unpackbits(row(sort_models + 1), count=n, bitorder="little")
    timing = {}
    for b in (64, 1024, 32768):
        times = []
        for r in range(repeats):
            cols = est.select(n, b, np.random.default_rng(r))
            t0 = time.perf_counter()
            e = est.estimate(cols, truth[cols])
            times.append(time.perf_counter() - t0)
        timing[str(b)] = {
            "median_ms": 1000 * float(np.median(times)),
            "p90_ms": 1000 * float(np.quantile(times, 0.9)),
            "last_abs_error": abs(e.acc - truth.mean()),
        }
        print(b, timing[str(b)], flush=True)
    out = {
        "shape": f"{sort_models} Sort models x {n} samples",
        "fit_models": len(rows),
        "max_columns": MAX_FIT_COLUMNS,
        "generate_s": gen_s,
        "fit_s": fit_s,
        "fit_cpu_s": fit_cpu_s,
        "peak_rss_gb": peak,
        "estimate": timing,
    }
    print(out, flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("demo", "estimate", "fit", "fit-shape"), required=True)
    ap.add_argument("--sort-models", type=int, default=6000)
    ap.add_argument("--store", default="data/demo.duckdb")
    ap.add_argument("--dataset", default="synthetic")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n", type=int, default=1_697_682)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--max-models", type=int, default=None)
    ap.add_argument("--label", default=None, help="key in the results file (default: the part)")
    args = ap.parse_args(argv)
    if args.part == "demo":
        res = part_demo(args.store, args.seeds)
    elif args.part == "estimate":
        res = part_estimate(args.n, args.repeats)
    elif args.part == "fit-shape":
        res = part_fit_shape(args.sort_models, args.n, args.repeats)
    else:
        res = part_fit(args.store, args.dataset, args.max_models)
    _save(args.label or args.part, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
