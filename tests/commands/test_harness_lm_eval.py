"""The lifelong loop with the real lm-evaluation-harness, offline, end to end.

``select`` writes ``--samples`` for a store whose dataset holds two local lm-eval tasks
(tests/data/lm_eval_toy: YAML over JSON lines), the real ``lm_eval`` runs its built-in
``dummy`` model on exactly those items with ``--log_samples``, and ``estimate`` reads the
run back, prints the estimates and, with ``--insert``, stores the row marked estimated.
The stored models are simulated (a 2PL item-response model); the harness run is real.
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
from lifelong_core.methods.registry import DEFAULT_METHOD
from tests.shared import needs

needs("lm_eval")

# Runs the real harness (offline): make test-fast leaves it out.
pytestmark = pytest.mark.harness

TASK_DIR = Path(__file__).resolve().parents[1] / "data" / "lm_eval_toy"
TASKS = ("toy_arith", "toy_words")
DATASET = "toy-lm-eval"


def simulated_store(path: Path, n_models: int = 30, seed: int = 0) -> None:
    """Stored models on the toy tasks' items, ids ``<task>/<doc_id>`` as import --lm-eval writes."""
    from lifelong_core.store import Store

    rng = np.random.default_rng(seed)
    items = [
        (t, i)
        for t in TASKS
        for i in range(len((TASK_DIR / f"{t}.jsonl").read_text().splitlines()))
    ]
    theta = rng.normal(0, 1.2, n_models)
    b = rng.normal(0, 1.2, len(items))
    A = (
        rng.random((n_models, len(items))) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
    ).astype(np.uint8)
    long = pd.DataFrame(
        {
            "model": np.repeat([f"sim-{k:02d}" for k in range(n_models)], len(items)),
            "sample": np.tile([f"{t}/{i}" for t, i in items], n_models),
            "correct": A.ravel(),
            "dataset": DATASET,
            "domain": np.tile([t for t, _ in items], n_models),
        }
    )
    with Store.create(path) as st:
        st.add_dataset(
            DATASET,
            description="simulated models on two local lm-eval tasks (test)",
            synthetic=True,
        )
        st.insert_long(long, source="simulated")


# lm_eval's own command line, its task manager told to index the tasks of --include_path
# only: indexing the thousands of built-in task files it would otherwise read first is most
# of a run's time here, and no built-in task is asked for (the toy tasks' names are their own).
LM_EVAL_LOCAL_TASKS = """
import sys
from lm_eval.tasks import TaskManager

index = TaskManager.__init__

def local_tasks_only(self, *args, **kwargs):
    kwargs["include_defaults"] = False
    index(self, *args, **kwargs)

TaskManager.__init__ = local_tasks_only
from lm_eval.__main__ import cli_evaluate

sys.argv[0] = "lm_eval"
cli_evaluate()
"""


def run_lm_eval(samples: Path, out: Path, tmp: Path) -> Path:
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp / "hf-datasets"),
        "HF_HOME": str(tmp / "hf-home"),
    }
    tasks = ",".join(json.loads(samples.read_text()))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            LM_EVAL_LOCAL_TASKS,
            "--model",
            "dummy",
            "--tasks",
            tasks,
            "--include_path",
            ".",
            "--samples",
            str(samples),
            "--log_samples",
            "--output_path",
            str(out),
        ],
        cwd=TASK_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [d for d in out.iterdir() if d.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def per_sample(run: Path) -> dict[str, int]:
    """What the harness logged, read independently of the product: sample id -> acc."""
    out = {}
    for f in run.glob("samples_*.jsonl"):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            task = f.name[len("samples_") :].rsplit("_", 1)[0]
            out[f"{task}/{r['doc_id']}"] = int(r["acc"])
    return out


@pytest.mark.slow
def test_select_run_estimate_insert(tmp_path, capsys):
    from lifelong_core.store import Store

    store = tmp_path / "s.duckdb"
    simulated_store(store)
    samples = tmp_path / "samples.json"
    assert (
        main(
            [
                "select",
                "--store",
                str(store),
                "--budget",
                "16",
                "--method",
                "mirt",
                "--seed",
                "3",
                "--model",
                "new-llm",
                "--format",
                "lm-eval",
                "--out",
                str(samples),
            ]
        )
        == 0
    )
    chosen = json.loads(samples.read_text())
    assert set(chosen) == set(TASKS) and sum(len(v) for v in chosen.values()) == 16
    assert all(v == sorted(set(v)) for v in chosen.values())
    capsys.readouterr()

    run = run_lm_eval(samples, tmp_path / "out", tmp_path)
    logged = per_sample(run)
    # The harness ran exactly the chosen items: doc_id is the index within the task.
    assert sorted(logged) == sorted(f"{t}/{d}" for t, ds in chosen.items() for d in ds)

    assert (
        main(
            [
                "estimate",
                "--store",
                str(store),
                "--lm-eval",
                str(run),
                "--model",
                "dummy-run",
                "--out",
                str(tmp_path / "est.csv"),
                "--insert",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "95% rank interval" in text and "inserted dummy-run" in text
    table = pd.read_csv(tmp_path / "est.csv")
    assert table["scope"].tolist() == [*TASKS, "overall"]
    overall = table.iloc[-1]
    assert overall["evaluated"] == 16 and overall["items"] == 80
    assert overall["observed"] == pytest.approx(np.mean(list(logged.values())))
    assert 0 <= overall["lo"] <= overall["estimate"] <= overall["hi"] <= 1
    for t in TASKS:
        row = table.set_index("scope").loc[t]
        assert row["evaluated"] == len(chosen[t])
        assert row["observed"] == pytest.approx(
            np.mean([v for k, v in logged.items() if k.startswith(t + "/")])
        )

    with Store.open(store) as st:
        models = st.models().set_index("model_id")
        assert bool(models.loc["dummy-run", "estimated"])
        meta = json.loads(models.loc["dummy-run", "metadata"])
        assert meta["method"] == DEFAULT_METHOD and meta["evaluated"] == 16
        assert meta["estimate"]["accuracy"] == pytest.approx(overall["estimate"], abs=1e-6)
        assert sorted(meta["evaluated_samples"]) == sorted(logged)
        idx = st.sample_index(list(logged))
        row = st.matrix([int(models.loc["dummy-run", "model_idx"])], idx)[0]
        assert row.tolist() == list(logged.values())

    # The inserted row is an estimate: a second estimate compares with the same 30 models.
    assert main(["estimate", "--store", str(store), "--lm-eval", str(run), "--model", "again"]) == 0
    assert "among the 30 stored models" in capsys.readouterr().out


@pytest.mark.slow
def test_run_of_another_task_is_refused_in_one_line(tmp_path, capsys):
    samples = tmp_path / "samples.json"
    samples.write_text(json.dumps({"toy_words": [0, 1, 2]}))
    run = run_lm_eval(samples, tmp_path / "out", tmp_path)
    # The dataset calls the task by another name: without --task the run cannot be placed.
    renamed = tmp_path / "renamed.duckdb"
    from lifelong_core.store import Store

    long = pd.DataFrame(
        {
            "model": ["a", "b", "a", "b", "a", "b"],
            "sample": ["words/0", "words/0", "words/1", "words/1", "words/2", "words/2"],
            "correct": [1, 0, 0, 1, 1, 1],
            "dataset": "w",
            "domain": "words",
        }
    )
    with Store.create(renamed) as st:
        st.insert_long(long, source="t")
    before = renamed.read_bytes()
    assert (
        main(
            ["estimate", "--store", str(renamed), "--lm-eval", str(run), "--model", "x", "--insert"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: --task: ") and err.count("\n") == 1 and "TASK=toy_words" in err
    assert renamed.read_bytes() == before
    # With the mapping written out, the same run is read (and the estimate printed).
    assert (
        main(
            [
                "estimate",
                "--store",
                str(renamed),
                "--lm-eval",
                str(run),
                "--model",
                "x",
                "--method",
                "reference",
                "--task",
                "words=toy_words",
            ]
        )
        == 0
    )
    assert "gives no interval" in capsys.readouterr().out
