"""Benchmark: Sort & Search at the paper's scale on one machine.

Prabhu et al. (2024) §4: 6,000 Sort models + 25,250 evaluated models x 1,697,682 samples
(Lifelong-CIFAR10), 13 budgets 8 ... 32,768, uniform sampling, Sorting by Sum. Phases,
each a separate process so that its wall time and peak RSS (``ru_maxrss`` from
``os.wait4``) are its own:

1. ``generate``  seeded synthetic cache (``lifelong_core.datasets.synthetic``, packed rows)
                 into a packed ``.npy`` -- timed separately, not part of the targets;
2. ``import``    that file into a new DuckDB store with ``store.packed_bulk`` (target
                 <= 15 min for 31,250 x 1,697,682);
3. ``read``      any 1,000 models (random sets and a contiguous range) into packed rows
                 (target <= 3 s each);
4. ``sweep``     ``python -m lifelong_core sweep --store ... --kernel packed`` (target <= 10 min wall,
                 <= 12 GB peak);
5. ``compare``   the engine issue's 2,000 x 200,000 sweep (Sort on 400 rows) against the
                 naive dense reference (``benchmarks.naive_reference``), both as whole
                 processes: identical MAE, speed-up (target >= 10x).

    .venv/bin/python -m benchmarks.bench_paper_scale [--scale 1.0] [--workdir /work/scratch-scale/paper]
        [--phases generate,import,read,sweep,compare] [--keep]

``--scale`` multiplies the number of models (rows) only; n stays 1,697,682, so smaller
runs exercise the same code path. The store and the matrix live in ``--workdir`` (tens
of GB at full scale; outside the repository) and are deleted at the end unless
``--keep``. The machine is shared with other jobs: timings are noisy, one run each.
Prints a markdown table; writes ``benchmarks/results/bench_paper_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
N_SAMPLES = 1_697_682
N_SORT = 6_000
N_EVAL = 25_250
BUDGETS = ",".join(str(2**k) for k in range(3, 16))
DATASET = "synthetic-cifar10-shape"


def spec_for(models: int, samples: int):
    from lifelong_core.datasets.synthetic import SyntheticSpec

    # Model cliques with their own offsets and a little label noise, so one Sort order
    # fits every model only approximately, as for real classifiers (Prabhu et al., 2024, App. E).
    return SyntheticSpec(
        n_models=models,
        n_samples=samples,
        seed=0,
        ability_mean=1.5,
        ability_sd=1.0,
        n_clusters=4,
        cluster_spread=0.3,
        label_noise=0.01,
    )


# ---------------------------------------------------------------- phases (child processes)
def phase_generate(a) -> dict:
    from lifelong_core.datasets.synthetic import iter_blocks, params

    spec = spec_for(a.models, a.samples)
    latent = params(spec)
    out = np.lib.format.open_memmap(
        a.matrix, mode="w+", dtype=np.uint8, shape=(a.models, (a.samples + 7) // 8)
    )
    step = 64

    def work(start: int) -> None:
        for block in iter_blocks(
            spec, step, packed=True, start=start, stop=min(start + step, a.models), latent=latent
        ):
            out[block.start : block.start + len(block.correct)] = block.correct

    # Rows are seeded one by one, so any split of them gives the same bits.
    with ThreadPoolExecutor(max_workers=a.threads) as pool:
        list(pool.map(work, range(0, a.models, step)))
    out.flush()
    return {"rows": a.models, "bytes": int(out.nbytes)}


def phase_import(a) -> dict:
    from lifelong_core.datasets.synthetic import models_table, params, samples_table
    from lifelong_core.store import Store
    from lifelong_core.store.packed_bulk import insert_packed_rows

    spec = spec_for(a.models, a.samples)
    latent = params(spec)
    packed = np.load(a.matrix, mmap_mode="r")
    Path(a.store).unlink(missing_ok=True)
    batches = []
    with Store.create(a.store) as st:
        st.add_dataset(
            DATASET,
            description=f"Synthetic cache of Lifelong-CIFAR10's shape ({a.models} x {a.samples}); "
            "not real predictions.",
            synthetic=True,
            source="benchmarks.bench_paper_scale",
        )
        batch = a.batch or a.models
        for s in range(0, a.models, batch):
            e = min(s + batch, a.models)
            t = time.perf_counter()
            insert_packed_rows(
                st,
                packed[s:e],
                a.samples,
                models_table(spec, DATASET, s, e, latent),
                samples_table(spec, DATASET) if s == 0 else None,
                source=f"{Path(a.matrix).name} rows {s}..{e - 1}",
            )
            batches.append(round(time.perf_counter() - t, 2))
    size = os.path.getsize(a.store)
    return {
        "batches": len(batches),
        "batch_rows": batch,
        "first_batch_s": batches[0],
        "slowest_other_batch_s": max(batches[1:], default=0.0),
        "store_bytes": size,
        "store_over_packed_bits": round(size / (a.models * a.samples / 8), 3),
    }


def phase_read(a) -> dict:
    from lifelong_core.store import Store
    from lifelong_core.store.packed_bulk import read_packed_rows

    out, warm = {}, {}
    truth = np.load(a.matrix, mmap_mode="r")
    with Store.open(a.store, read_only=True) as st:
        m = st.n_models
    k = min(1000, m)
    sets = {
        f"random {k} (seed {s})": np.random.default_rng(s).choice(m, k, replace=False)
        for s in (1, 2, 3)
    }
    sets[f"contiguous {k}"] = np.arange(m // 2 - k // 2, m // 2 - k // 2 + k)
    cold = True
    for name, models in sets.items():
        # The first read after opening, with the page cache dropped where this machine
        # lets us (root); then the same read again, warm.
        cold = cold and _drop_page_cache()
        with Store.open(a.store, read_only=True) as st:
            t = time.perf_counter()
            rows, _ = read_packed_rows(st, models)
            out[name] = round(time.perf_counter() - t, 3)
            t = time.perf_counter()
            read_packed_rows(st, models)
            warm[name] = round(time.perf_counter() - t, 3)
        if not np.array_equal(rows, truth[models]):
            raise SystemExit(f"read of {name} does not match the imported rows")
    return {"seconds": out, "warm_seconds": warm, "page_cache_dropped": cold}


def _drop_page_cache() -> bool:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return True
    except OSError:
        return False


PHASES = {"generate": phase_generate, "import": phase_import, "read": phase_read}


# ---------------------------------------------------------------- orchestration
def timed(cmd: list[str]) -> dict:
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, problems = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{problems}")
    return {
        "cmd": " ".join(cmd),
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "stdout": text,
    }


def child(phase: str, a, extra: list[str]) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.bench_paper_scale",
        "--child",
        phase,
        "--models",
        str(a.models),
        "--samples",
        str(a.samples),
        "--matrix",
        str(a.matrix),
        "--store",
        str(a.store),
        "--threads",
        str(a.threads),
        "--batch",
        str(a.batch),
        *extra,
    ]
    r = timed(cmd)
    r["result"] = json.loads(r.pop("stdout").strip().splitlines()[-1])
    return r


def compare(a) -> dict:
    from benchmarks.bench_sweep import ensure_matrix

    work = Path(a.compare_dir)
    work.mkdir(parents=True, exist_ok=True)
    matrix = work / "A_2000x200000_seed0.npy"
    ensure_matrix(matrix, 2000, 200_000, 0)
    common = ["--matrix", str(matrix), "--sort-models", "400", "--seed", "0", "--budgets", BUDGETS]
    py = sys.executable
    naive = timed(
        [py, "-m", "benchmarks.naive_reference", *common, "--out", str(work / "naive.csv")]
    )
    ours = timed(
        [
            py,
            "-m",
            "lifelong_core",
            "sweep",
            *common,
            "--method",
            "reference",
            "--kernel",
            "packed",
            "--out",
            str(work / "packed.csv"),
        ]
    )
    dask = timed(
        [
            py,
            "-m",
            "lifelong_core",
            "sweep",
            *common,
            "--method",
            "reference",
            "--engine",
            "dask",
            "--out",
            str(work / "packed_dask.csv"),
        ]
    )
    import pandas as pd

    ref = pd.read_csv(work / "naive.csv")
    diffs = [
        float(np.abs(ref["mae"].to_numpy() - pd.read_csv(work / f)["mae"].to_numpy()).max())
        for f in ("packed.csv", "packed_dask.csv")
    ]
    for r in (naive, ours, dask):
        r.pop("stdout")
    return {
        "naive": naive,
        "packed": ours,
        "packed_dask": dask,
        "mae_max_abs_diff": max(diffs),
        "speedup": round(naive["wall_s"] / ours["wall_s"], 1),
        "memory_ratio": round(naive["peak_rss_mb"] / ours["peak_rss_mb"], 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the paper's models (rows)"
    )
    ap.add_argument("--samples", type=int, default=N_SAMPLES)
    ap.add_argument("--workdir", default="/work/scratch-scale/paper")
    ap.add_argument("--compare-dir", default="/tmp/lbe_bench_sweep")
    ap.add_argument("--phases", default="generate,import,read,sweep,compare")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--batch", type=int, default=0, help="models per import transaction (0: all in one)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the matrix and the store")
    ap.add_argument("--child", choices=sorted(PHASES), help=argparse.SUPPRESS)
    ap.add_argument("--models", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--matrix", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.child:
        print(json.dumps(PHASES[a.child](a)))
        return 0

    n_sort = max(1, round(N_SORT * a.scale))
    n_eval = max(1, round(N_EVAL * a.scale))
    a.models = n_sort + n_eval
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    a.matrix = str(work / f"packed_{a.models}x{a.samples}.npy")
    a.store = str(work / f"store_{a.models}x{a.samples}.duckdb")
    phases = [p.strip() for p in a.phases.split(",") if p.strip()]
    res: dict = {
        "shape": {"sort_models": n_sort, "eval_models": n_eval, "samples": a.samples},
        "entries": a.models * a.samples,
        "budgets": [int(b) for b in BUDGETS.split(",")],
        "note": "one run each on a 2-core machine; read: first read after opening with the page "
        "cache dropped (see read.page_cache_dropped), then warm",
    }
    rows = []

    def log(name, shape, r):
        rows.append((name, shape, r["wall_s"], r["peak_rss_mb"]))
        print(f"{name}: {r['wall_s']} s, {r['peak_rss_mb']} MB", file=sys.stderr, flush=True)

    shape = f"{a.models:,} x {a.samples:,}"
    try:
        if "generate" in phases:
            res["generate"] = child("generate", a, [])
            log("generate (synthetic, packed .npy; not a target)", shape, res["generate"])
        if "import" in phases:
            res["import"] = child("import", a, [])
            res["import"]["entries_per_s"] = round(a.models * a.samples / res["import"]["wall_s"])
            log("import (store.packed_bulk)", shape, res["import"])
        if "read" in phases:
            res["read"] = child("read", a, [])
            log("read any 1,000 models (4 sets, total)", shape, res["read"])
        if "sweep" in phases:
            out = work / "sweep.csv"
            cmd = [
                sys.executable,
                "-m",
                "lifelong_core",
                "sweep",
                "--store",
                a.store,
                "--kernel",
                "packed",
                "--method",
                "midpoint",
                "--sort-models",
                str(n_sort),
                "--seed",
                "0",
                "--budgets",
                BUDGETS,
                "--threads",
                str(a.threads),
                "--out",
                str(out),
            ]
            res["sweep"] = timed(cmd)
            res["sweep"].pop("stdout")
            import pandas as pd

            res["sweep"]["table"] = pd.read_csv(out).round(5).to_dict(orient="records")
            log(
                "sweep (python -m lifelong_core sweep --store --kernel packed)",
                f"{n_sort:,} + {n_eval:,} x {a.samples:,}",
                res["sweep"],
            )
        if "compare" in phases:
            res["compare"] = compare(a)
            c = res["compare"]
            log("compare: naive dense reference", "400 + 1,600 x 200,000", c["naive"])
            log(
                "compare: sweep --kernel packed --method reference",
                "400 + 1,600 x 200,000",
                c["packed"],
            )
            log("compare: same, --engine dask", "400 + 1,600 x 200,000", c["packed_dask"])
    finally:
        if not a.keep:
            for p in (a.matrix, a.store, a.store + ".wal"):
                Path(p).unlink(missing_ok=True)
    print("| step | shape | wall (s) | peak RSS (MB) |\n|---|---|---:|---:|")
    for name, shp, wall, mem in rows:
        print(f"| {name} | {shp} | {wall} | {mem} |")
    if "read" in res:
        print("\nread seconds:", res["read"]["result"]["seconds"])
    if "import" in res:
        print("import:", {k: res["import"][k] for k in ("entries_per_s",)}, res["import"]["result"])
    if "compare" in res:
        c = res["compare"]
        print(
            f"\ncompare 2,000 x 200,000: MAE max |diff| {c['mae_max_abs_diff']:.3g}, speed-up {c['speedup']}x, "
            f"memory {c['memory_ratio']}x less"
        )
    name = "bench_paper_scale" if a.scale == 1.0 else f"bench_paper_scale_{a.scale:g}"
    out = ROOT / "benchmarks" / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    # Phases may run in separate invocations (generation first, the rest later on the
    # kept files): results of earlier phases of the same shape are kept.
    if out.exists():
        old = json.loads(out.read_text())
        if old.get("shape") == res["shape"]:
            res = {**old, **res}
    out.write_text(json.dumps(res, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
