"""`python -m lifelong_core rank` and `weights`: the command-line contracts and their errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main

ROOT = Path(__file__).resolve().parents[2]


def write_counts(path: Path, rows) -> Path:
    pd.DataFrame(rows, columns=["model", "task", "category", "correct", "total"]).to_csv(
        path, index=False
    )
    return path


@pytest.fixture()
def three_cats(tmp_path):
    rows = []
    acc = {"P": (0.9, 0.5, 0.5), "Q": (0.5, 0.8, 0.5), "R": (0.5, 0.5, 0.7)}
    for model, accs in acc.items():
        for _k, (cat, a) in enumerate(zip(("nat", "spec", "struct"), accs)):
            for j in range(2):
                rows.append((model, f"{cat}{j}", cat, int(a * 1000), 1000))
    return write_counts(tmp_path / "counts.csv", rows)


def test_rank_writes_the_contract_columns(three_cats, tmp_path):
    out = tmp_path / "ranks.csv"
    assert main(["rank", "--counts", str(three_cats), "--boot", "300", "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert list(df.columns) == [
        "model", "scope", "rank", "mean_pct", "lo_pct", "hi_pct", "level"
    ]  # fmt: skip
    assert set(df["scope"]) == {"overall", "nat", "spec", "struct"}
    # The level is recorded; the rank is each model's place by its mean, worked out here
    # from the accuracies the counts were written with.
    assert (df["level"] == 0.834).all()
    rank = df.set_index(["scope", "model"])["rank"]
    assert [rank["overall", m] for m in "PQR"] == [1, 2, 3]  # 63.3, 60.0, 56.7
    assert (rank["nat", "P"], rank["spec", "Q"], rank["struct", "R"]) == (1, 1, 1)
    for _scope, group in df.groupby("scope"):
        order = group.sort_values("mean_pct", ascending=False)["rank"].tolist()
        assert order == list(range(1, len(group) + 1))
    assert len(df) == 3 * 4
    p = df[(df.model == "P") & (df.scope == "nat")].iloc[0]
    assert p["mean_pct"] == pytest.approx(90.0, abs=0.3)
    assert p["lo_pct"] < p["mean_pct"] < p["hi_pct"]
    overall = df[df.scope == "overall"].set_index("model")["mean_pct"]
    assert overall["P"] == pytest.approx(100 * (0.9 + 0.5 + 0.5) / 3, abs=0.3)
    # Same seed, same numbers; a wider level, a wider interval.
    again = tmp_path / "again.csv"
    main(["rank", "--counts", str(three_cats), "--boot", "300", "--out", str(again)])
    pd.testing.assert_frame_equal(df, pd.read_csv(again))
    wide = tmp_path / "wide.csv"
    main(
        [
            "rank",
            "--counts",
            str(three_cats),
            "--boot",
            "300",
            "--level",
            "0.99",
            "--out",
            str(wide),
        ]
    )
    w = pd.read_csv(wide)
    assert (w["hi_pct"] - w["lo_pct"]).sum() > (df["hi_pct"] - df["lo_pct"]).sum()
    assert (w["level"] == 0.99).all() and w["rank"].tolist() == df["rank"].tolist()


def test_weights_writes_regions_with_named_weight_columns(three_cats, tmp_path):
    out = tmp_path / "regions.csv"
    assert main(["weights", "--counts", str(three_cats), "--step", "0.5", "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert list(df.columns) == [
        "nat",
        "spec",
        "struct",
        "winner",
        "runner_up",
        "diff_pct",
        "se_pct",
    ]
    assert len(df) == 6
    corner = df.set_index(["nat", "spec", "struct"])
    assert corner.loc[(1.0, 0.0, 0.0), "winner"] == "P"
    assert corner.loc[(0.0, 1.0, 0.0), "winner"] == "Q"
    assert corner.loc[(0.0, 0.0, 1.0), "winner"] == "R"
    mid = corner.loc[(0.5, 0.5, 0.0)]
    assert mid["diff_pct"] == pytest.approx(5.0)
    var_p = 0.25 * (0.09 / 2000) + 0.25 * (0.25 / 2000)
    var_q = 0.25 * (0.25 / 2000) + 0.25 * (0.16 / 2000)
    assert mid["se_pct"] == pytest.approx(100 * np.sqrt(var_p + var_q), rel=1e-6)
    big = tmp_path / "big.csv"
    main(
        [
            "weights",
            "--counts",
            str(three_cats),
            "--step",
            "0.5",
            "--se-mult",
            "100",
            "--out",
            str(big),
        ]
    )
    assert (pd.read_csv(big)["winner"] == "indeterminate").all()
    rho = tmp_path / "rho.csv"
    main(
        ["weights", "--counts", str(three_cats), "--step", "0.5", "--rho", "0.9", "--out", str(rho)]
    )
    assert (pd.read_csv(rho)["se_pct"] < df["se_pct"]).all()


BAD = [
    ("missing column", lambda d: d.drop(columns="category"), "missing column(s) 'category'"),
    (
        "correct > total",
        lambda d: d.assign(correct=d["correct"].where(d.index != 2, 5000)),
        "line 4: correct (5000) is larger than total (1000)",
    ),
    (
        "negative",
        lambda d: d.assign(total=d["total"].where(d.index != 0, -3)),
        "line 2, column 'total': '-3' is negative",
    ),
    (
        "non-integer",
        lambda d: d.assign(correct=d["correct"].astype(object).where(d.index != 1, "2.5")),
        "line 3, column 'correct': '2.5' is not a whole number",
    ),
    (
        "duplicate",
        lambda d: pd.concat([d, d.iloc[[0]]]),
        "model 'P' on task 'nat0' appears twice (first at line 2)",
    ),
    ("missing task", lambda d: d.iloc[1:], "model 'P' has no row for task 'nat0'"),
]


@pytest.mark.parametrize("command", ["rank", "weights"])
@pytest.mark.parametrize("name, edit, message", BAD, ids=[b[0] for b in BAD])
def test_bad_counts_exit_2_with_one_line(
    command, name, edit, message, three_cats, tmp_path, capsys
):
    bad = tmp_path / "bad.csv"
    edit(pd.read_csv(three_cats)).to_csv(bad, index=False)
    code = main([command, "--counts", str(bad), "--out", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: bad.csv") and message in err
    assert err.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


def test_weights_needs_exactly_three_categories(three_cats, tmp_path, capsys):
    d = pd.read_csv(three_cats)
    d.loc[d.task == "struct0", "category"] = "extra"
    bad = tmp_path / "four.csv"
    d.to_csv(bad, index=False)
    assert main(["weights", "--counts", str(bad), "--out", str(tmp_path / "r.csv")]) == 2
    assert "exactly three categories, found 4" in capsys.readouterr().err
    # rank has no such restriction.
    assert (
        main(["rank", "--counts", str(bad), "--boot", "50", "--out", str(tmp_path / "r.csv")]) == 0
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["rank", "--level", "1.5"], "strictly between 0 and 1"),
        (["rank", "--boot", "1"], "--boot: the number of bootstrap replicates must be at least 2"),
        (["weights", "--step", "0.3"], "divide 1 evenly"),
        (["weights", "--step", "0.0001"], "at least 0.001"),
        (["rank", "--boot", "100000000"], "at most 1,000,000"),
        (["weights", "--rho", "2"], "between -1 and 1"),
        (["weights", "--se-mult", "-1"], "at least 0"),
        (["weights", "--se-mult", "nan"], "finite number"),
    ],
)
def test_bad_options(args, message, three_cats, tmp_path, capsys):
    argv = [args[0], "--counts", str(three_cats), *args[1:], "--out", str(tmp_path / "o.csv")]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_output_folder_must_exist(three_cats, tmp_path, capsys):
    assert (
        main(["rank", "--counts", str(three_cats), "--out", str(tmp_path / "no" / "ranks.csv")])
        == 2
    )
    assert "does not exist" in capsys.readouterr().err


def test_weights_needs_two_models(tmp_path, capsys):
    one = write_counts(
        tmp_path / "one.csv", [("P", "a", "x", 1, 2), ("P", "b", "y", 1, 2), ("P", "c", "z", 1, 2)]
    )
    assert main(["weights", "--counts", str(one), "--out", str(tmp_path / "r.csv")]) == 2
    assert "at least two models" in capsys.readouterr().err


def test_module_entry_point_exit_code(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core",
            "rank",
            "--counts",
            str(tmp_path / "nope.csv"),
            "--out",
            str(tmp_path / "o.csv"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("error: ")
        and "does not exist" in proc.stderr
        and proc.stderr.count("\n") == 1
    )
