"""`import --inspect LOG`: real Inspect AI logs, written offline by Inspect's mockllm/model.

tests/data/inspect_toy/write_logs.py runs one tiny task (8 sums; the scripted mock model
answers the even ones right) under three scorers: match (C/I), a 0/1 scorer and a
partial-credit one (0.5 for a wrong answer), each into its own log in a temporary
INSPECT_LOG_DIR. The logs are read back through inspect_ai.log.read_eval_log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lifelong_core.cli import main
from tests.shared import needs

needs("inspect_ai")

# Runs the real harness (offline): make test-fast leaves it out.
pytestmark = pytest.mark.harness


@pytest.fixture(scope="module")
def logs(inspect_logs) -> dict[str, Path]:
    """The three logs of tests/data/inspect_toy/write_logs.py (written once per worker by the
    ``inspect_logs`` fixture of tests/conftest.py), by task."""
    return inspect_logs


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
        (["--long", str(junk), "--scorer", "x"], "only goes with --inspect"),
    ]
    for extra, words in cases:
        assert main(["import", "--store", str(store), *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and words in err, (extra, err)
