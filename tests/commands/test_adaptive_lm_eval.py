"""Adaptive evaluation in rounds with the real lm-evaluation-harness, offline.

Each round: ``adaptive --store ... --next samples.json`` writes the round's items, the real
``lm_eval`` runs its ``dummy`` model on exactly them with ``--log_samples``, and the next
call gets every round's run back (``--lm-eval`` once per round). The stored models are
simulated (tests/commands/test_harness_lm_eval.py's store); the harness runs are real.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lifelong_core.cli import main
from tests.commands.test_harness_lm_eval import per_sample, run_lm_eval, simulated_store
from tests.shared import needs

needs("lm_eval")

# Runs the real harness (offline): make test-fast leaves it out.
pytestmark = pytest.mark.harness


@pytest.mark.slow
def test_rounds_through_lm_eval(tmp_path, capsys):
    store = tmp_path / "s.duckdb"
    simulated_store(store)
    common = [
        "adaptive",
        "--store",
        str(store),
        "--until-halfwidth",
        "0.01",
        "--max-budget",
        "40",
        "--seed",
        "5",
        "--no-tune",
        "--out",
        str(tmp_path / "rounds.csv"),
    ]
    runs, seen = [], set()
    # The pilot takes a quarter of the 40 (10), the next round the smallest size (8).
    for r, size in enumerate((10, 8)):
        samples = tmp_path / f"round{r + 1}.json"
        extra = [a for run in runs for a in ("--lm-eval", str(run))]
        assert main([*common, *extra, "--next", str(samples)]) == 0
        chosen = json.loads(samples.read_text())
        items = {f"{t}/{d}" for t, ds in chosen.items() for d in ds}
        assert len(items) == size and not items & seen  # a new round, nothing run twice
        seen |= items
        run = run_lm_eval(samples, tmp_path / f"out{r + 1}", tmp_path)
        assert set(per_sample(run)) == items
        runs.append(run)
    capsys.readouterr()
    assert (
        main(
            [
                *common,
                *[a for run in runs for a in ("--lm-eval", str(run))],
                "--next",
                str(tmp_path / "round3.json"),
            ]
        )
        == 0
    )
    assert "2 rounds done, 18 samples" in capsys.readouterr().out
    rounds = pd.read_csv(tmp_path / "rounds.csv")
    assert rounds["evaluated"].tolist() == [10, 18]
    assert 0 <= rounds["lo"].iloc[-1] <= rounds["acc"].iloc[-1] <= rounds["hi"].iloc[-1] <= 1
