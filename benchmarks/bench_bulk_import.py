"""One import of a folder of lm-eval runs against one import per run.

The runs are real: the bundled Open LLM Leaderboard v2 release (Zhang, Dorner & Hardt,
2025; data/open_llm_leaderboard_v2, MIT licence) written out as lm-evaluation-harness
``--log_samples`` runs, one folder per model (``OUT/<org>__<model>/results_<ts>.json`` and
``samples_<task>_<ts>.jsonl``), the first ``--models`` distinct model names of one task.
Measured, on fresh stores:

- ``bulk``: ``import --lm-eval OUT`` (``workflows.imports.lm_eval_source`` + ``import_into``,
  the command's code, in process): every run read, then one transaction;
- ``separate``: ``import --lm-eval OUT/<run> --model NAME`` once per run (in process, so
  without the command's start-up, which only adds to each separate import), for the first
  ``--separate`` runs;
- ``separate_cli``: the same as ``python -m lifelong_core import`` processes (what a shell
  loop over the runs costs, start-up included), for the first ``--cli`` runs; wall seconds.

Reported: wall and CPU seconds of each, seconds per run, the ratio, and the load average.

    .venv/bin/python -m benchmarks.bench_bulk_import [--models 200] [--separate 200] [--task musr]

Writes ``benchmarks/results/bench_bulk_import.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "data" / "open_llm_leaderboard_v2"
RESULTS = ROOT / "benchmarks" / "results" / "bench_bulk_import.json"
TS = "2025-01-01T00-00-00.000000"


def write_release_runs(out: Path, task: str = "musr", n_models: int = 200) -> dict[str, Path]:
    """The release's first ``n_models`` distinct models on ``task`` as lm-eval run folders
    under ``out`` (task name ``leaderboard_<task>``, doc_id = the item's position)."""
    with np.load(RELEASE / f"{task}.npz", allow_pickle=False) as z:
        A, names = z["correct"], [str(s) for s in z["models"]]
    lm_task = f"leaderboard_{task}"
    runs: dict[str, Path] = {}
    for row, name in zip(A, names):
        if name in runs:
            continue  # the release repeats some names with identical rows
        folder = out / name.replace("/", "__")
        folder.mkdir(parents=True)
        lines = [
            json.dumps(
                {
                    "doc_id": j,
                    "filter": "none",
                    "metrics": ["acc_norm"],
                    "doc_hash": f"{lm_task}-{j}",
                    "acc_norm": float(v),
                }
            )
            for j, v in enumerate(row)
        ]
        (folder / f"samples_{lm_task}_{TS}.jsonl").write_text("\n".join(lines) + "\n")
        results = {
            "results": {lm_task: {"acc_norm,none": float(row.mean())}},
            "group_subtasks": {lm_task: []},
            "n-samples": {lm_task: {"original": len(row), "effective": len(row)}},
            "config": {"model": "hf", "model_args": f"pretrained={name}"},
            "model_name": name,
        }
        (folder / f"results_{TS}.json").write_text(json.dumps(results))
        runs[name] = folder
        if len(runs) == n_models:
            break
    return runs


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv: list[str] | None = None) -> dict:
    from lifelong_core.workflows import imports

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--separate", type=int, default=200, help="runs imported one by one")
    ap.add_argument("--cli", type=int, default=10, help="runs imported by separate processes")
    ap.add_argument("--task", default="musr", choices=("ifeval", "musr", "math_hard"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_bulk_") as tmp:
        tmp = Path(tmp)
        runs = write_release_runs(tmp / "out", args.task, args.models)
        load_before = os.getloadavg()
        summary, bulk_wall, bulk_cpu = _timed(
            lambda: imports.import_into(tmp / "bulk.duckdb", imports.lm_eval_source(tmp / "out"))
        )
        k = min(args.separate, len(runs))

        def separate():
            for name, folder in list(runs.items())[:k]:
                imports.import_into(tmp / "one.duckdb", imports.lm_eval_source(folder, name))

        _, sep_wall, sep_cpu = _timed(separate)
        cli = min(args.cli, len(runs))

        def processes():
            for name, folder in list(runs.items())[:cli]:
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "lifelong_core",
                        "import",
                        "--store",
                        str(tmp / "cli.duckdb"),
                        "--lm-eval",
                        str(folder),
                        "--model",
                        name,
                    ],
                    check=True,
                    cwd=ROOT,
                    capture_output=True,
                )

        _, cli_wall, _ = _timed(processes)
        load_after = os.getloadavg()
    n = len(runs)
    out = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "task": f"leaderboard_{args.task}",
        "runs": n,
        "items": int(summary["new_samples"]),
        "entries": int(summary["entries"]),
        "bulk": {"wall_s": round(bulk_wall, 2), "cpu_s": round(bulk_cpu, 2), "runs": n},
        "separate": {"wall_s": round(sep_wall, 2), "cpu_s": round(sep_cpu, 2), "runs": k},
        "separate_cli": {"wall_s": round(cli_wall, 2), "runs": cli},
        "wall_s_per_run": {
            "bulk": round(bulk_wall / n, 4),
            "separate": round(sep_wall / k, 4),
            "separate_cli": round(cli_wall / cli, 4) if cli else None,
        },
        "cpu_s_per_run": {
            "bulk": round(bulk_cpu / n, 4),
            "separate": round(sep_cpu / k, 4),
        },
        "separate_over_bulk_cpu_per_run": round((sep_cpu / k) / (bulk_cpu / n), 1),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
