"""`python -m lifelong_core match`: the command-line contract (docs/reference/cli.md), end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "acc_source",
    "acc_target",
    "matched_acc_source",
    "matched_acc_target",
    "fraction_unmatched",
    "acc_unmatched",
    "n_matched",
}
# The forced case of tests/engine/test_matching_protocol.py, worked out by hand there.
SOURCE = "y,y_pred,p\n0,0,0.90\n1,0,0.50\n1,1,0.70\n2,1,0.95\n3,3,0.80\n"
TARGET = "y,y_pred,p\n0,0,0.905\n1,1,0.69\n0,1,0.948\n0,0,0.50\n2,2,0.90\n1,0,0.90\n3,0,0.80\n"


@pytest.fixture
def files(tmp_path):
    s, t = tmp_path / "S.csv", tmp_path / "T.csv"
    s.write_text(SOURCE)
    t.write_text(TARGET)
    return s, t, tmp_path / "match.json"


def test_contract_by_hand(files):
    s, t, out = files
    assert (
        main(["match", "--source", str(s), "--target", str(t), "--eps", "0.01", "--out", str(out)])
        == 0
    )
    got = json.loads(out.read_text())
    assert set(got) == KEYS
    want = {
        "acc_source": 3 / 5,
        "acc_target": 4 / 7,
        "matched_acc_source": 1 / 2,
        "matched_acc_target": 3 / 4,
        "fraction_unmatched": 3 / 7,
        "acc_unmatched": 1 / 3,
        "n_matched": 4.0,
    }
    assert got == pytest.approx(want)
    assert (
        main(
            [
                "match",
                "--source",
                str(s),
                "--target",
                str(t),
                "--eps",
                "0.01",
                "--criterion",
                "prob",
                "--runs",
                "3",
                "--seed",
                "5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    got = json.loads(out.read_text())
    assert got["n_matched"] == 5.0 and got["fraction_unmatched"] == pytest.approx(2 / 7)


def test_nothing_unmatched_writes_null(tmp_path):
    s = tmp_path / "S.csv"
    s.write_text("y,y_pred,p\n0,0,0.9\n1,1,0.6\n1,0,0.3\n")
    out = tmp_path / "m.json"
    assert (
        main(["match", "--source", str(s), "--target", str(s), "--eps", "0", "--out", str(out)])
        == 0
    )
    text = out.read_text()
    assert '"acc_unmatched": null' in text
    got = json.loads(text)
    assert got["fraction_unmatched"] == 0.0
    assert got["matched_acc_source"] == got["matched_acc_target"] == pytest.approx(2 / 3)


def test_default_eps_and_seed_are_reproducible(tmp_path):
    rng = np.random.default_rng(0)
    for name, n in (("S.csv", 400), ("T.csv", 150)):
        y = rng.integers(4, size=n)
        pd.DataFrame(
            {"y": y, "y_pred": np.where(rng.random(n) < 0.7, y, 0), "p": rng.random(n).round(3)}
        ).to_csv(tmp_path / name, index=False)
    args = ["match", "--source", str(tmp_path / "S.csv"), "--target", str(tmp_path / "T.csv")]
    assert main(args + ["--out", str(tmp_path / "a.json")]) == 0
    assert (
        main(
            args
            + ["--seed", "0", "--runs", "10", "--eps", "0.005", "--out", str(tmp_path / "b.json")]
        )
        == 0
    )
    assert main(args + ["--seed", "1", "--out", str(tmp_path / "c.json")]) == 0
    a, b, c = (json.loads((tmp_path / f"{k}.json").read_text()) for k in "abc")
    assert a == b
    assert a != c  # another seed, other random draws
    assert 0 < a["fraction_unmatched"] < 1


@pytest.mark.parametrize(
    "extra, pieces",
    [
        (["--eps", "-0.1"], ["--eps", "between 0 and 1"]),
        (["--eps", "nan"], ["--eps"]),
        (["--runs", "0"], ["--runs", "at least 1"]),
        (["--runs", "two"], ["--runs", "invalid integer"]),
        (["--criterion", "label"], ["--criterion", "invalid choice"]),
    ],
)
def test_bad_arguments(files, capsys, extra, pieces):
    s, t, out = files
    code = main_code(["match", "--source", str(s), "--target", str(t), "--out", str(out)] + extra)
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err
    for piece in pieces:
        assert piece in err
    assert not out.exists()


def main_code(argv):
    try:
        return main(argv)
    except SystemExit as exc:  # argparse usage errors exit from inside parse_args
        return exc.code


@pytest.mark.parametrize(
    "content, pieces",
    [
        ("", ["T.csv is empty"]),
        ("y,y_pred\n1,1\n", ["T.csv is missing column p"]),
        ("y,y_pred,p\n1,1,0.5\n1,1,2\n", ["T.csv, row 2, column p", "outside [0, 1]"]),
        ("y,y_pred,p\n1,1,NaN\n", ["T.csv, row 1, column p", "missing"]),
        ("y,y_pred,p\n1,x,0.5\n", ["T.csv, row 1, column y_pred", "not an integer label"]),
    ],
)
def test_bad_files(files, capsys, content, pieces):
    s, t, out = files
    t.write_text(content)
    assert main(["match", "--source", str(s), "--target", str(t), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err
    for piece in pieces:
        assert piece in err


def test_missing_output_folder(files, capsys):
    s, t, _ = files
    assert (
        main(
            [
                "match",
                "--source",
                str(s),
                "--target",
                str(t),
                "--out",
                str(s.parent / "no" / "m.json"),
            ]
        )
        == 2
    )
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_subprocess_entry_point(files):
    s, t, out = files
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core",
            "match",
            "--source",
            str(s),
            "--target",
            str(t),
            "--eps",
            "0.01",
            "--runs",
            "2",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["n_matched"] == 4.0
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core",
            "match",
            "--source",
            str(s),
            "--target",
            str(t),
            "--eps",
            "-1",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2 and res.stderr.startswith("error: ") and res.stderr.count("\n") == 1
