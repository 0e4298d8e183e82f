"""A folder of lm-evaluation-harness ``--log_samples`` runs, one per model, written by a
test into its own temporary folder (nothing is committed): what ``lm_eval --output_path
OUT`` leaves after a model zoo was evaluated on one task.

Each run is ``OUT/<org>__<model>/`` with ``results_<ts>.json`` (``model_name``,
``config.model_args``, ``n-samples``) and ``samples_<task>_<ts>.jsonl`` (one line per
item: ``doc_id``, ``doc_hash``, ``metrics``, ``acc``). Right and wrong answers follow a
two-parameter logistic model (ability, item difficulty and discrimination), so the data
have the structure the estimators need; organisations repeat so families exist.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TASK = "arc_challenge"
TS = "2025-03-04T05-06-07.000008"
ORGS = ("meta-llama", "mistralai", "Qwen", "google", "EleutherAI", "allenai", "tiiuae")


def model_names(n_models: int) -> list[str]:
    return [f"{ORGS[i % len(ORGS)]}/model-{i:03d}" for i in range(n_models)]


def correctness(n_models: int, n_items: int, seed: int = 0) -> np.ndarray:
    """The models x items 0/1 matrix the runs record."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.0, 1.2, n_models)
    difficulty = rng.normal(0.0, 1.2, n_items)
    slope = rng.uniform(0.5, 2.0, n_items)
    p = 1 / (1 + np.exp(-slope * (ability[:, None] - difficulty[None, :])))
    return (rng.random((n_models, n_items)) < p).astype(np.uint8)


def write_run(folder: Path, model: str, row: np.ndarray, task: str = TASK) -> Path:
    """One model's run folder, as lm-eval writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "doc_id": j,
                "doc": {"question": f"{task} question {j}"},
                "target": "A",
                "arguments": {},
                "resps": [],
                "filtered_resps": [],
                "filter": "none",
                "metrics": ["acc"],
                "doc_hash": f"{task}-{j}",
                "prompt_hash": "p",
                "target_hash": "t",
                "acc": float(v),
            }
        )
        for j, v in enumerate(row)
    ]
    (folder / f"samples_{task}_{TS}.jsonl").write_text("\n".join(lines) + "\n")
    results = {
        "results": {task: {"acc,none": float(np.mean(row))}},
        "group_subtasks": {task: []},
        "n-samples": {task: {"original": len(row), "effective": len(row)}},
        "config": {"model": "hf", "model_args": f"pretrained={model},dtype=bfloat16"},
        "model_name": model,
        "model_name_sanitized": model.replace("/", "__"),
    }
    (folder / f"results_{TS}.json").write_text(json.dumps(results))
    return folder


def write_runs(
    out: Path, n_models: int = 200, n_items: int = 120, seed: int = 0
) -> dict[str, Path]:
    """``n_models`` run folders under ``out``; returns model name -> run folder."""
    A = correctness(n_models, n_items, seed)
    return {
        name: write_run(out / name.replace("/", "__"), name, A[i])
        for i, name in enumerate(model_names(n_models))
    }
