"""The bundled Open LLM Leaderboard v2 through the real lm-evaluation-harness, offline.

``select --format lm-eval`` on the bundled data writes only lm-eval task names that
lm-eval's own task manager knows, covering every chosen item with a doc_id inside its
subtask. The tutorial's commands (docs/tutorials/new-llm.md) then run as printed, with two
substitutions for the step that needs a real model and the leaderboard's datasets: lm-eval's
built-in ``dummy`` model, and local copies of the nine subtasks under the same names (items
of placeholder text, as many as each subtask has, scored with the metrics the leaderboard
logs), which lm-eval's ``--include_path`` puts in place of the originals.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from tests.shared import needs

needs("lm_eval")

pytestmark = pytest.mark.harness

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorials" / "new-llm.md"
ITEMS = ROOT / "data" / "open_llm_leaderboard_v2" / "lm_eval_tasks.csv"
OFFLINE = {
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}

# Local copies: IFEval and MATH-hard score generations through process_results (the
# leaderboard's metrics by name, each 0/1 from the item's own number), MuSR is multiple
# choice scored by acc_norm as on the leaderboard.
UTILS = """
def process_ifeval(doc, results):
    right = int(doc["n"] % 3 == 0)
    return {"prompt_level_strict_acc": right, "prompt_level_loose_acc": 1}


def process_math(doc, results):
    return {"exact_match": int(doc["n"] % 4 == 0), "exact_match_original": 0}
"""


def _yaml(task: str, file: str, metric: str) -> str:
    head = (
        f"task: {task}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {file}\n"
        "test_split: test\n"
    )
    if metric == "acc_norm":
        return head + (
            "output_type: multiple_choice\n"
            'doc_to_text: "{{question}}"\n'
            'doc_to_choice: ["a", "b", "c"]\n'
            "doc_to_target: 0\n"
            "metric_list:\n  - metric: acc_norm\n"
        )
    fn, names = (
        ("process_ifeval", ("prompt_level_strict_acc", "prompt_level_loose_acc"))
        if metric == "prompt_level_strict_acc"
        else ("process_math", ("exact_match", "exact_match_original"))
    )
    return head + (
        "output_type: generate_until\n"
        'doc_to_text: "{{question}}"\n'
        'doc_to_target: "x"\n'
        "generation_kwargs:\n  until: []\n  max_gen_toks: 4\n"
        f"process_results: !function utils.{fn}\n"
        "metric_list:\n"
        + "".join(
            f"  - metric: {n}\n    aggregation: mean\n    higher_is_better: true\n" for n in names
        )
    )


def local_tasks(folder: Path) -> Path:
    """The nine subtasks of lm_eval_tasks.csv as local lm-eval tasks of the same names."""
    folder.mkdir()
    (folder / "utils.py").write_text(UTILS)
    for row in pd.read_csv(ITEMS).itertuples():
        data = folder / f"{row.lm_eval_task}.jsonl"
        data.write_text(
            "".join(json.dumps({"question": f"item {i}", "n": i}) + "\n" for i in range(row.items))
        )
        (folder / f"{row.lm_eval_task}.yaml").write_text(
            _yaml(row.lm_eval_task, str(data), row.metric)
        )
    return folder


def test_select_writes_only_tasks_lm_evals_task_manager_knows(llm_store_path, tmp_path, capsys):
    import lm_eval.tasks
    from lm_eval.tasks import TaskManager

    out = tmp_path / "samples.json"
    argv = ["select", "--store", str(llm_store_path), "--budget", "200", "--model", "me/new"]
    assert main([*argv, "--out", str(out)]) == 0
    capsys.readouterr()
    chosen = json.loads(out.read_text())
    # lm-eval's task manager on the leaderboard's task files it ships: the names it knows
    # there are the ones it knows with all its built-in tasks indexed (seconds of YAML).
    shipped = Path(lm_eval.tasks.__file__).parent / "leaderboard"
    known = set(TaskManager(include_path=str(shipped), include_defaults=False).all_tasks)
    assert "leaderboard_musr_team_allocation" in known
    sizes = dict(zip(*pd.read_csv(ITEMS)[["lm_eval_task", "items"]].to_numpy().T))
    assert set(chosen) <= known, sorted(set(chosen) - known)
    assert set(chosen) <= set(sizes) and sum(map(len, chosen.values())) == 200
    for task, docs in chosen.items():
        assert docs == sorted(set(docs)) and docs[0] >= 0 and docs[-1] < sizes[task], task
    # The two MATH-hard subtasks the release leaves out are never asked for.
    assert not {"leaderboard_math_algebra_hard", "leaderboard_math_counting_and_prob_hard"} & set(
        chosen
    )


def _bash_blocks(page: Path) -> list[str]:
    from docs.outputs import blocks

    return [b.body for b in blocks(page.read_text(encoding="utf-8")) if b.lang == "bash"]


@pytest.mark.slow
def test_the_tutorials_commands_run_with_a_dummy_model(llm_store_path, tmp_path):
    """Select, run all three tasks' subtasks, estimate: the tutorial's blocks, in order."""
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    shutil.copy2(llm_store_path, work / "data" / "demo.duckdb")
    tasks = local_tasks(tmp_path / "tasks")
    loop = [
        b
        for b in _bash_blocks(TUTORIAL)
        if "lbe select" in b or "lm_eval " in b or "lbe estimate" in b
    ]
    select, run, estimate = loop[:3]
    assert "lbe select" in select and "lm_eval " in run and "lbe estimate" in estimate
    run = run.replace(
        "--model hf --model_args pretrained=YOUR/MODEL", f"--model dummy --include_path {tasks}"
    )
    assert "--model dummy" in run
    env = {
        **os.environ,
        **OFFLINE,
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }

    def sh(code: str) -> str:
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, (code, proc.stdout[-2000:], proc.stderr[-3000:])
        return proc.stdout

    said = sh(select)
    chosen = json.loads((work / "samples.json").read_text())
    assert {t.split("_")[1] for t in chosen} == {"ifeval", "musr", "math"}, sorted(chosen)
    assert "200 of 2191 items" in said
    sh(run)
    runs = [d for d in (work / "out").iterdir() if d.is_dir()]
    assert len(runs) == 1, runs
    # The run folder is named after the model; the tutorial's placeholder names it so.
    os.rename(runs[0], work / "out" / "YOUR__MODEL")
    logged = {}
    for f in (work / "out" / "YOUR__MODEL").glob("samples_*.jsonl"):
        task = re.match(r"samples_(.+)_\d{4}-", f.name).group(1)
        metric = {"leaderboard_ifeval": "prompt_level_strict_acc"}.get(
            task, "acc_norm" if "musr" in task else "exact_match"
        )
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            logged[f"{task}/{rec['doc_id']}"] = int(rec[metric])
    # The harness ran exactly the chosen items of every subtask.
    assert sorted(logged) == sorted(f"{t}/{d}" for t, ds in chosen.items() for d in ds)
    text = sh(estimate)
    # Without --metric: each subtask is read with the metric the leaderboard scored it by.
    lines = {ln.split()[0]: ln.split() for ln in text.splitlines() if ln.split()}
    assert lines["overall"][1:3] == ["2191", "200"]
    assert float(lines["overall"][3]) == pytest.approx(np.mean(list(logged.values())), abs=5e-4)
    for domain, prefix in (
        ("ifeval", "leaderboard_ifeval"),
        ("musr", "leaderboard_musr"),
        ("math_hard", "leaderboard_math"),
    ):
        mine = [v for k, v in logged.items() if k.startswith(prefix)]
        assert int(lines[domain][2]) == len(mine)
        assert float(lines[domain][3]) == pytest.approx(np.mean(mine), abs=5e-4)
