"""benchmarks.reproduce_uncertainty rebuilds Table A.3, the simulation study and the VTAB
ternary finding from the repository's files and the VTAB-1k leaderboard beside it."""

from __future__ import annotations

import json

from benchmarks.reproduce_uncertainty import main


def test_reproduce_from_repository_files(tmp_path, capsys, vtab_csv):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "--leaderboard",
                str(vtab_csv),
                "--boot",
                "400",
                "--draws",
                "150",
                "--chains",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "Table A.3" in text and "Simulation study" in text and "Task weighting" in text
    res = json.loads(out.read_text())
    blocks = res["table_a3"]["blocks"]
    assert set(blocks) == {"bootstrap", "bayesian", "bootstrap normalised"}
    assert len(blocks["bootstrap"]["rows"]) == 64
    # Bootstrap means are within a quarter of a point of the published ones even with 400 replicates.
    assert blocks["bootstrap"]["max_abs_gap_points"]["mean"] <= 0.25
    # The published finding: Rotation wins the structured corner, from every source.
    assert all(t["corner_winner"]["structured"] == "Rotation" for t in res["ternary"])
    boot, hier = res["simulation"]["bootstrap"], res["simulation"]["hierarchical"]
    assert boot[1] < 0 < boot[2] and hier[2] < 0


def test_missing_leaderboard_is_one_sentence(tmp_path, capsys):
    assert main(["--leaderboard", str(tmp_path / "absent.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the VTAB-1k leaderboard file") and err.count("\n") == 1
