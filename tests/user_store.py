"""A store built the way a researcher builds one: lm-eval runs through the real importer.

- dataset ``lm-eval``: 14 models' lm-evaluation-harness ``--log_samples`` folders, three
  tasks outside any group (``group_subtasks`` lists none of them, the normal case for
  single tasks), so no sample has a category; the metric is ``acc``;
- dataset ``my-eval``: a long CSV of 9 *other* models on two domains, no category, no
  confidence, no label, no release order.

Every row goes in through ``python -m lifelong_core import`` (``lifelong_core.cli.main``),
the same path a user takes. Right and wrong answers follow a one-parameter logistic model
(model ability minus item difficulty), so the data have the structure Sort & Search needs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TASKS = {"arc_easy": 70, "boolq": 60, "piqa": 50}
LM_MODELS = [f"org/llm-{i:02d}" for i in range(14)]
OWN_MODELS = [f"my-classifier-{c}" for c in "abcdefghi"]
OWN_DOMAINS = {"clean": 80, "noisy": 60}
TS = "2025-01-02T03-04-05.000006"


def _write_lm_eval_run(
    folder: Path,
    model: str,
    rng: np.random.Generator,
    ability: float,
    difficulty: dict[str, np.ndarray],
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for task, diff in difficulty.items():
        p = 1 / (1 + np.exp(-(ability - diff)))
        right = rng.random(len(diff)) < p
        lines = []
        for doc_id, ok in enumerate(right):
            lines.append(
                {
                    "doc_id": doc_id,
                    "doc": {"question": f"{task} question {doc_id}"},
                    "target": "A",
                    "arguments": {},
                    "resps": [],
                    "filtered_resps": [],
                    "filter": "none",
                    "metrics": ["acc"],
                    "doc_hash": f"{task}-{doc_id}",
                    "prompt_hash": "p",
                    "target_hash": "t",
                    "acc": float(ok),
                }
            )
        (folder / f"samples_{task}_{TS}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines)
        )
    results = {
        "results": {t: {"acc,none": 0.0} for t in difficulty},
        "group_subtasks": {t: [] for t in difficulty},  # single tasks: no group lists them
        "n-samples": {t: {"original": len(d), "effective": len(d)} for t, d in difficulty.items()},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
    }
    (folder / f"results_{TS}.json").write_text(json.dumps(results))


def own_eval_csv(path: Path, seed: int = 1) -> Path:
    """The second dataset's long table: model, sample, correct, dataset, domain."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for dom, n in OWN_DOMAINS.items():
        diff = rng.normal(0.3 if dom == "noisy" else -0.5, 1.0, n)
        for i, model in enumerate(OWN_MODELS):
            ability = -1.0 + 0.3 * i
            right = rng.random(n) < 1 / (1 + np.exp(-(ability - diff)))
            rows += [
                {
                    "model": model,
                    "sample": f"{dom}-{j:03d}",
                    "correct": int(r),
                    "dataset": "my-eval",
                    "domain": dom,
                }
                for j, r in enumerate(right)
            ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def lm_eval_runs(root: Path, seed: int = 0) -> dict[str, Path]:
    """One ``--log_samples`` folder per model of :data:`LM_MODELS` under ``root``."""
    rng = np.random.default_rng(seed)
    difficulty = {t: rng.normal(0.0, 1.2, n) for t, n in TASKS.items()}
    out = {}
    for i, model in enumerate(LM_MODELS):
        folder = root / model.replace("/", "__")
        _write_lm_eval_run(folder, model, rng, -1.5 + 0.25 * i, difficulty)
        out[model] = folder
    return out


def build_user_store(store: Path, work: Path) -> Path:
    """Import the lm-eval runs and the second dataset into ``store`` with the command line."""
    from lifelong_core.cli import main

    work.mkdir(parents=True, exist_ok=True)
    for model, folder in lm_eval_runs(work / "runs").items():
        assert (
            main(["import", "--store", str(store), "--lm-eval", str(folder), "--model", model]) == 0
        )
    csv = own_eval_csv(work / "my_eval.csv")
    assert main(["import", "--store", str(store), "--long", str(csv)]) == 0
    return store
