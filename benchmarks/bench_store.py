"""Store benchmark: a 2,000 x 500,000 0/1 matrix through the DuckDB store.

Measures, on a seeded synthetic matrix (Bernoulli of model ability minus sample
difficulty, so rows and columns have realistic spread; bits of such data barely compress):

- import from NPY: ``load_matrix`` + ``Store.insert_matrix`` + close, entries per second
  (target >= 50M/s), and the same import as a ``python -m lifelong_core import`` process;
- loading any 1,000 models (a random subset) into numpy with ``Store.matrix`` (target
  <= 2 s), and the packed form with ``Store.read_packed``;
- store file size versus the packed bits (target <= 1.3x).

Run: ``.venv/bin/python -m benchmarks.bench_store [--models 2000 --samples 500000]``.
Writes ``benchmarks/results/bench_store.json``, including peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lifelong_core.io.matrix import load_matrix
from lifelong_core.store import Store

RESULTS = Path(__file__).resolve().parent / "results"


def synthetic(models: int, samples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.0, 1.0, models).astype(np.float32)
    difficulty = rng.normal(0.0, 1.5, samples).astype(np.float32)
    out = np.empty((models, samples), dtype=np.uint8)
    for a in range(0, models, 64):
        logit = ability[a : a + 64, None] - difficulty[None, :]
        p = 1.0 / (1.0 + np.exp(-logit))
        out[a : a + 64] = rng.random(p.shape, dtype=np.float32) < p
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=500_000)
    ap.add_argument("--load", type=int, default=1000, help="models to load in the read test")
    ap.add_argument("--repeats", type=int, default=3, help="read repeats (best is reported)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    m, n = args.models, args.samples
    with tempfile.TemporaryDirectory(prefix="bench_store_") as tmp:
        tmp = Path(tmp)
        A = synthetic(m, n, args.seed)
        np.save(tmp / "A.npy", A)
        model_ids = [f"model-{i:05d}" for i in range(m)]
        sample_ids = [f"sample-{j:07d}" for j in range(n)]
        del A

        db = tmp / "store.duckdb"
        t0 = time.perf_counter()
        A = load_matrix(tmp / "A.npy")
        t_load = time.perf_counter() - t0
        with Store.create(db) as st:
            st.insert_matrix(A, model_ids, sample_ids, source="A.npy", dataset="bench")
        t_import = time.perf_counter() - t0

        # The same import through the command line: interpreter start, io.matrix's full
        # validation and the sha256 of the input file for the log come on top.
        (tmp / "models.txt").write_text("".join(f"{i}\n" for i in model_ids))
        (tmp / "samples.txt").write_text("".join(f"{j}\n" for j in sample_ids))
        t0 = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "lifelong_core",
                "import",
                "--store",
                str(tmp / "cli.duckdb"),
                "--matrix",
                str(tmp / "A.npy"),
                "--models",
                str(tmp / "models.txt"),
                "--samples",
                str(tmp / "samples.txt"),
                "--dataset",
                "bench",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=Path(__file__).resolve().parents[1],
        )
        t_cli = time.perf_counter() - t0

        rng = np.random.default_rng(args.seed + 1)
        pick = np.sort(rng.choice(m, size=min(args.load, m), replace=False))
        t_matrix, t_packed = [], []
        with Store.open(db, read_only=True) as st:
            for _ in range(args.repeats):
                t = time.perf_counter()
                M = st.matrix(pick)
                t_matrix.append(time.perf_counter() - t)
                t = time.perf_counter()
                P, _ = st.read_packed(pick)
                t_packed.append(time.perf_counter() - t)
            ok = bool(np.array_equal(M, A[pick])) and bool(
                np.array_equal(P, np.packbits(A[pick], axis=1, bitorder="little"))
            )
        del M, P
        size = db.stat().st_size + (
            os.path.getsize(str(db) + ".wal") if os.path.exists(str(db) + ".wal") else 0
        )
        packed_bytes = m * ((n + 7) // 8)

    res = {
        "models": m,
        "samples": n,
        "entries": m * n,
        "import_seconds": round(t_import, 3),
        "npy_load_seconds": round(t_load, 3),
        "import_entries_per_second": round(m * n / t_import),
        "cli_import_seconds": round(t_cli, 3),
        "cli_import_entries_per_second": round(m * n / t_cli),
        "load_models": len(pick),
        "matrix_seconds_best": round(min(t_matrix), 3),
        "read_packed_seconds_best": round(min(t_packed), 3),
        "file_bytes": size,
        "packed_bytes": packed_bytes,
        "size_ratio": round(size / packed_bytes, 3),
        "round_trip_identical": ok,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "cli_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared with other jobs; timings are noisy)",
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_store.json").write_text(json.dumps(res, indent=2) + "\n")
    print(f"| store benchmark ({m:,} x {n:,}) | value | target |")
    print("|---|---|---|")
    print(
        f"| import from NPY | {t_import:.2f} s = {m * n / t_import / 1e6:.0f}M entries/s | >= 50M entries/s |"
    )
    print(
        f"| same through `python -m lifelong_core import` | {t_cli:.2f} s = {m * n / t_cli / 1e6:.0f}M entries/s | |"
    )
    print(f"| load {len(pick):,} models (matrix, uint8) | {min(t_matrix):.2f} s | <= 2 s |")
    print(f"| load {len(pick):,} models (read_packed) | {min(t_packed):.2f} s | |")
    print(
        f"| file size / packed bits | {size / 1e6:.1f} MB / {packed_bytes / 1e6:.1f} MB = {size / packed_bytes:.3f}x | <= 1.3x |"
    )
    print(f"| read back identical | {ok} | True |")
    print(
        f"| peak memory (this process / CLI import) | {res['peak_rss_mb']} MB / {res['cli_peak_rss_mb']} MB | <= 8 GB |"
    )
    return res


if __name__ == "__main__":
    main()
