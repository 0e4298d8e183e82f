"""The lifelong loop with the real Inspect AI, offline, end to end.

``select --format inspect`` writes the value of ``inspect eval --sample-id`` for a store
whose dataset holds a local Inspect task's samples (ids ``<task>/<sample id>``, as
``import --inspect`` writes them); Inspect runs exactly those samples with its mockllm
model (tests/data/inspect_toy/rounds_task.py, whose scorer gives known results); ``estimate
--inspect LOG`` reads the log back and, with ``--insert``, stores the row marked estimated.
The stored models are simulated (a 2PL item-response model); the Inspect run is real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from tests.shared import needs

needs("inspect_ai")

pytestmark = pytest.mark.harness

TASK_FILE = Path(__file__).resolve().parents[1] / "data" / "inspect_toy" / "rounds_task.py"
TASK, N = "toy_rounds", 40


def known_result(i: int) -> int:
    """The rounds task's scorer, transcribed (a sample is right unless its number is a
    multiple of three)."""
    return int(i % 3 != 0)


def simulated_store(path: Path, n_models: int = 30, seed: int = 2) -> None:
    from lifelong_core.store import Store

    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1.2, n_models), rng.normal(0, 1.2, N)
    A = (rng.random((n_models, N)) < 1 / (1 + np.exp(-(theta[:, None] - b)))).astype(np.uint8)
    long = pd.DataFrame(
        {
            "model": np.repeat([f"sim-{k:02d}" for k in range(n_models)], N),
            "sample": np.tile([f"{TASK}/s{i}" for i in range(N)], n_models),
            "correct": A.ravel(),
            "dataset": "inspect-toy",
            "domain": TASK,
        }
    )
    with Store.create(path) as st:
        st.add_dataset(
            "inspect-toy",
            description="simulated models on a local Inspect task (test)",
            synthetic=True,
        )
        st.insert_long(long, source="simulated")


def run_inspect(ids_file: Path, log_dir: Path) -> Path:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "INSPECT_LOG_LEVEL": "warning",
        "INSPECT_DISPLAY": "none",
    }
    proc = subprocess.run(
        [sys.executable, str(TASK_FILE), str(ids_file), str(log_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=log_dir.parent,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    logs = list(log_dir.iterdir())
    assert len(logs) == 1, logs
    return logs[0]


@pytest.mark.slow
def test_select_inspect_run_estimate_insert(tmp_path, capsys):
    from inspect_ai.log import read_eval_log

    from lifelong_core.store import Store

    store = tmp_path / "s.duckdb"
    simulated_store(store)
    ids = tmp_path / "ids.txt"
    argv = ["select", "--store", str(store), "--budget", "12", "--method", "mirt"]
    assert main([*argv, "--model", "new-llm", "--format", "inspect", "--out", str(ids)]) == 0
    text = ids.read_text()
    assert text.endswith("\n") and text.count("\n") == 1
    chosen = text.strip().split(",")
    assert len(chosen) == 12 and all(c.startswith(f"{TASK}:s") for c in chosen)
    capsys.readouterr()

    log = run_inspect(ids, tmp_path / "logs")
    got = read_eval_log(str(log))
    # Inspect ran exactly the chosen samples: the task: prefix scopes each id to its task.
    assert got.status == "success"
    assert sorted(str(s.id) for s in got.samples) == sorted(c.split(":", 1)[1] for c in chosen)
    truth = {f"{TASK}/{s.id}": known_result(int(str(s.id)[1:])) for s in got.samples}
    assert {k: int(s.scores["by_number"].value == "C") for k, s in zip(truth, got.samples)} == truth

    out = tmp_path / "est.csv"
    argv = ["estimate", "--store", str(store), "--inspect", str(log), "--model", "new-llm"]
    assert main([*argv, "--out", str(out), "--insert"]) == 0
    said = capsys.readouterr().out
    assert "95% rank interval" in said and "inserted new-llm" in said
    overall = pd.read_csv(out).iloc[-1]
    assert overall["evaluated"] == 12 and overall["items"] == N
    assert overall["observed"] == pytest.approx(np.mean(list(truth.values())))
    assert 0 <= overall["lo"] <= overall["estimate"] <= overall["hi"] <= 1
    with Store.open(store) as st:
        models = st.models().set_index("model_id")
        meta = json.loads(models.loc["new-llm", "metadata"])
        assert bool(models.loc["new-llm", "estimated"]) and meta["evaluated"] == 12
        assert meta["inspect_scorers"] == {TASK: "by_number"}
        row = st.matrix([int(models.loc["new-llm", "model_idx"])], st.sample_index(list(truth)))[0]
        assert row.tolist() == list(truth.values())


@pytest.mark.slow
def test_inspect_log_of_items_the_dataset_lacks_is_one_line(tmp_path, capsys):
    store = tmp_path / "s.duckdb"
    simulated_store(store)
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{TASK}:s1,{TASK}:s2\n")
    log = run_inspect(ids, tmp_path / "logs")
    # The dataset names the task otherwise: without a task name the log cannot be placed.
    renamed = tmp_path / "renamed.duckdb"
    from lifelong_core.store import Store

    with Store.open(store) as src:
        A = src.matrix()
    with Store.create(renamed) as st:
        st.insert_matrix(
            A,
            [f"m{k}" for k in range(len(A))],
            pd.DataFrame(
                {
                    "sample_id": [f"rounds/s{i}" for i in range(N)],
                    "dataset": "r",
                    "domain": "rounds",
                }
            ),
        )
    before = renamed.read_bytes()
    argv = ["estimate", "--store", str(renamed), "--inspect", str(log), "--model", "x"]
    assert main([*argv, "--insert"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --task: ") and "TASK=toy_rounds" in err and err.count("\n") == 1
    assert renamed.read_bytes() == before
    assert main([*argv, "--task", f"rounds={TASK}", "--method", "reference"]) == 0
    assert "2 of 40 items" in capsys.readouterr().out
    assert main([*argv, "--metric", "acc"]) == 2
    assert "--metric and --filter go with --lm-eval" in capsys.readouterr().err
