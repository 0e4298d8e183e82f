"""`import --inspect LOG`: real Inspect AI logs, written offline by Inspect's mockllm/model.

tests/data/inspect_toy/write_logs.py runs one tiny task (8 sums; the scripted mock model
answers the even ones right) under three scorers: match (C/I), a 0/1 scorer and a
partial-credit one (0.5 for a wrong answer), each into its own log in a temporary
INSPECT_LOG_DIR. The logs are read back through inspect_ai.log.read_eval_log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lifelong_core.cli import main

pytest.importorskip("inspect_ai")

WRITER = Path(__file__).resolve().parents[1] / "data" / "inspect_toy" / "write_logs.py"


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    log_dir = tmp_path_factory.mktemp("inspect-logs")
    env = {
        **os.environ,
        "INSPECT_LOG_DIR": str(log_dir),
        "INSPECT_LOG_LEVEL": "warning",
        "HF_HUB_OFFLINE": "1",
        "INSPECT_DISPLAY": "none",
    }
    proc = subprocess.run(
        [sys.executable, str(WRITER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=log_dir,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {}
    for p in log_dir.iterdir():
        for task in ("toy-match", "toy-binary", "toy-partial"):
            if f"_{task}_" in p.name:
                found[task] = p
    assert set(found) == {"toy-match", "toy-binary", "toy-partial"}, sorted(
        p.name for p in log_dir.iterdir()
    )
    return found


def test_c_i_and_zero_one_scores_become_correct(logs, tmp_path, capsys):
    from lifelong_core.store import Store

    store = tmp_path / "s.duckdb"
    assert main(["import", "--store", str(store), "--inspect", str(logs["toy-match"])]) == 0
    assert "scorer 'match'" in capsys.readouterr().out
    assert main(["import", "--store", str(store), "--inspect", str(logs["toy-binary"])]) == 0
    with Store.open(store) as st:
        models = st.models()
        assert models["model_id"].tolist() == ["mockllm/model"]
        smp = st.samples("inspect")
        assert sorted(set(smp["domain"])) == ["toy_binary", "toy_match"]
        for task in ("toy_match", "toy_binary"):
            ids = [f"{task}/q{i}" for i in range(8)]
            row = st.matrix([0], st.sample_index(ids))[0]
            assert row.tolist() == [1, 0] * 4  # the mock model answers the even sums right


def test_other_scores_are_refused_naming_the_scorer_and_the_store_is_unchanged(
    logs, tmp_path, capsys
):
    store = tmp_path / "s.duckdb"
    assert main(["import", "--store", str(store), "--inspect", str(logs["toy-match"])]) == 0
    capsys.readouterr()
    before = store.read_bytes()
    assert (
        main(
            [
                "import",
                "--store",
                str(store),
                "--inspect",
                str(logs["toy-partial"]),
                "--model",
                "other",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: Scorer 'partial' gave 0.5") and err.count("\n") == 1
    assert store.read_bytes() == before


def test_model_name_scorer_and_bad_files(logs, tmp_path, capsys):
    from lifelong_core.store import Store

    store = tmp_path / "s.duckdb"
    assert (
        main(
            [
                "import",
                "--store",
                str(store),
                "--inspect",
                str(logs["toy-binary"]),
                "--model",
                "my-model",
                "--scorer",
                "zero_one",
                "--dataset",
                "sums",
            ]
        )
        == 0
    )
    with Store.open(store) as st:
        assert st.models()["model_id"].tolist() == ["my-model"]
        assert st.datasets()["dataset"].tolist() == ["sums"]
    capsys.readouterr()
    junk = tmp_path / "junk.eval"
    junk.write_bytes(b"not a log")
    cases = [
        (["--inspect", str(logs["toy-binary"]), "--scorer", "nope"], "has no scorer 'nope'"),
        (["--inspect", str(logs["toy-binary"]), "--epoch", "3"], "has no epoch 3"),
        (["--inspect", str(tmp_path / "missing.eval")], "does not exist"),
        (["--inspect", str(junk)], "is not an Inspect evaluation log"),
        (["--long", str(junk), "--scorer", "x"], "only go with --inspect"),
    ]
    for extra, words in cases:
        assert main(["import", "--store", str(store), *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and words in err, (extra, err)
