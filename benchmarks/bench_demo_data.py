"""Time the demo-data paths: build-demo, the synthetic generator, optionally the full builder.

    .venv/bin/python -m benchmarks.bench_demo_data [--with-builder]

Prints a markdown table and writes benchmarks/results/bench_demo_data.json. Wall and CPU times
are both reported because the machine may be shared (wall time then overstates cost).
``--with-builder`` also retrains the whole Lifelong-Digits zoo into a temporary folder
(minutes; both cores) and checks that the output is byte-identical to the committed files.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "bench_demo_data.json"


def _timed(fn):
    t0, c0, ch0 = time.perf_counter(), time.process_time(), os.times()
    out = fn()
    ch1 = os.times()
    children = (ch1.children_user - ch0.children_user) + (ch1.children_system - ch0.children_system)
    return out, time.perf_counter() - t0, time.process_time() - c0 + children


def bench_build_demo(repeats: int = 3) -> dict:
    from lifelong_core.commands.build_demo import build_store

    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            _, wall, cpu = _timed(lambda i=i: build_store(Path(tmp) / f"d{i}.duckdb"))
            walls.append(wall)
            cpus.append(cpu)
        size = (Path(tmp) / "d0.duckdb").stat().st_size
    return {
        "wall_s_median": float(np.median(walls)),
        "cpu_s_median": float(np.median(cpus)),
        "store_bytes": size,
        "repeats": repeats,
    }


def bench_synthetic(rows: int = 16, samples: int = 1_700_000) -> dict:
    from lifelong_core.datasets.synthetic import SyntheticSpec, iter_blocks, params

    spec = SyntheticSpec(
        n_models=31_250, n_samples=samples, seed=0, n_clusters=4, cluster_spread=0.5
    )
    latent, t_params, _ = _timed(lambda: params(spec))
    _, wall, cpu = _timed(
        lambda: list(iter_blocks(spec, rows, packed=True, stop=rows, latent=latent))
    )
    per_row = wall / rows
    return {
        "samples": samples,
        "rows_timed": rows,
        "params_s": t_params,
        "wall_s_per_row": per_row,
        "cpu_s_per_row": cpu / rows,
        "entries_per_s": samples / per_row,
        "paper_scale_extrapolated_min": per_row * spec.n_models / 60.0,
    }


def bench_synthetic_npy(models: int = 2000, samples: int = 500_000) -> dict:
    from lifelong_core.datasets.synthetic import SyntheticSpec, write_npy

    spec = SyntheticSpec(n_models=models, n_samples=samples, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        path, wall, cpu = _timed(lambda: write_npy(spec, Path(tmp) / "A.npy", packed=True))
        size = path.stat().st_size
    return {
        "models": models,
        "samples": samples,
        "wall_s": wall,
        "cpu_s": cpu,
        "file_bytes": size,
        "entries_per_s": models * samples / wall,
    }


def bench_builder() -> dict:
    from lifelong_core.datasets import digits
    from lifelong_core.datasets.demo_files import MANIFEST

    committed = json.loads(
        (
            Path(digits.__file__).resolve().parents[2] / "data" / "lifelong_digits" / MANIFEST
        ).read_text()
    )
    with tempfile.TemporaryDirectory() as tmp:
        manifest, wall, cpu = _timed(lambda: digits.build(Path(tmp) / "d", jobs=2))
    same = {k: v["sha256"] for k, v in manifest["files"].items()} == {
        k: v["sha256"] for k, v in committed["files"].items()
    }
    return {
        "models": manifest["n_models"],
        "samples": manifest["n_samples"],
        "wall_s": wall,
        "cpu_s": cpu,
        "identical_to_committed": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-builder", action="store_true")
    args = parser.parse_args()
    results = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_1m": os.getloadavg()[0],
        },
        "build_demo": bench_build_demo(),
        "synthetic_rows_paper_width": bench_synthetic(),
        "synthetic_npy_2000x500k_packed": bench_synthetic_npy(),
    }
    if args.with_builder:
        results["builder"] = bench_builder()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    b, s, n = (
        results["build_demo"],
        results["synthetic_rows_paper_width"],
        results["synthetic_npy_2000x500k_packed"],
    )
    print("| what | wall | CPU | notes |")
    print("|---|---|---|---|")
    print(
        f"| build-demo (440 x 10,700 + extras) | {b['wall_s_median']:.1f} s | {b['cpu_s_median']:.1f} s | store {b['store_bytes'] / 1e6:.1f} MB, median of {b['repeats']} |"
    )
    print(
        f"| synthetic row, 1.7M samples, packed | {s['wall_s_per_row'] * 1e3:.1f} ms | {s['cpu_s_per_row'] * 1e3:.1f} ms | {s['entries_per_s'] / 1e6:.0f}M entries/s; 31,250 rows ~ {s['paper_scale_extrapolated_min']:.0f} min |"
    )
    print(
        f"| synthetic 2,000 x 500,000 to packed .npy | {n['wall_s']:.1f} s | {n['cpu_s']:.1f} s | {n['entries_per_s'] / 1e6:.0f}M entries/s, {n['file_bytes'] / 1e6:.0f} MB |"
    )
    if "builder" in results:
        r = results["builder"]
        print(
            f"| Lifelong-Digits builder, {r['models']} models | {r['wall_s']:.0f} s | {r['cpu_s']:.0f} s | byte-identical to committed: {r['identical_to_committed']} |"
        )
    print(
        f"\n(load average {results['machine']['load_avg_1m']:.1f} on {results['machine']['cpus']} cores: wall times are noisy on a shared machine)"
    )


if __name__ == "__main__":
    main()
