"""Bands over repeated Sort splits: engine summary and `sweep --repeats`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.sortsearch import choose_sort_rows
from lifelong_core.studies.bands import band_summary, repeat_seeds
from lifelong_core.sweeping import run_sweep


def test_band_summary_hand_checked():
    t = [
        pd.DataFrame({"budget": [8, 16], "mae": [0.1, 0.2], "eagg": [0.0, 0.1]}),
        pd.DataFrame({"budget": [8, 16], "mae": [0.3, 0.2], "eagg": [0.2, 0.1]}),
        pd.DataFrame({"budget": [8, 16], "mae": [0.2, 0.2], "eagg": [0.1, 0.1]}),
    ]
    b = band_summary(t, level=0.5)
    assert list(b.columns) == [
        "budget",
        "mae",
        "mae_lo",
        "mae_hi",
        "eagg",
        "eagg_lo",
        "eagg_hi",
        "repeats",
    ]
    r8 = b.iloc[0]
    # values 0.1, 0.2, 0.3: mean 0.2, 25th / 75th percentiles 0.15 / 0.25 (linear)
    assert (
        r8["mae"] == pytest.approx(0.2)
        and r8["mae_lo"] == pytest.approx(0.15)
        and r8["mae_hi"] == pytest.approx(0.25)
    )
    assert b.iloc[1]["mae_lo"] == pytest.approx(0.2) == b.iloc[1]["mae_hi"]
    assert b["repeats"].tolist() == [3, 3]
    one = band_summary(t[:1])
    assert (one["mae_lo"] == one["mae"]).all() and (one["mae_hi"] == one["mae"]).all()
    with pytest.raises(InputError):
        band_summary([])
    assert repeat_seeds(5, 3) == [5, 6, 7]
    for bad in (0, -1, 1.5):
        with pytest.raises(InputError):
            repeat_seeds(0, bad)


@pytest.fixture
def mat(tmp_path):
    rng = np.random.default_rng(0)
    A = (rng.random((40, 300)) < np.linspace(0.9, 0.2, 300)).astype(np.uint8)
    np.save(tmp_path / "A.npy", A)
    return tmp_path, A


def _sweep(tmp, *extra):
    return main(
        [
            "sweep",
            "--matrix",
            str(tmp / "A.npy"),
            "--sort-models",
            "10",
            "--seed",
            "3",
            "--budgets",
            "8,32,100",
            "--method",
            "midpoint",
            "--out",
            str(tmp / "s.csv"),
            "--per-model",
            str(tmp / "p.csv"),
            *extra,
        ]
    )


def test_repeats_one_is_todays_output(mat):
    tmp, _ = mat
    assert _sweep(tmp) == 0
    plain = (tmp / "s.csv").read_bytes(), (tmp / "p.csv").read_bytes()
    assert _sweep(tmp, "--repeats", "1") == 0
    assert ((tmp / "s.csv").read_bytes(), (tmp / "p.csv").read_bytes()) == plain
    assert list(pd.read_csv(tmp / "s.csv").columns) == [
        "budget",
        "mae",
        "eagg",
        "kappa",
        "pearson",
        "spearman",
    ]


def test_repeats_rows_are_the_single_runs_of_each_seed(mat):
    tmp, A = mat
    assert _sweep(tmp, "--repeats", "3", "--sampling", "random") == 0
    out = pd.read_csv(tmp / "s.csv")
    assert list(out.columns) == ["budget", "mae", "eagg", "kappa", "pearson", "spearman", "repeat"]
    assert out["repeat"].tolist() == [0] * 3 + [1] * 3 + [2] * 3
    per = pd.read_csv(tmp / "p.csv")
    assert list(per.columns) == ["model_row", "budget", "est_acc", "true_acc", "mae", "repeat"]
    for r in range(3):
        rows = choose_sort_rows(40, 10, 3 + r)
        ev = np.setdiff1d(np.arange(40), rows)
        want = run_sweep(
            A[rows], A[ev], [8, 32, 100], search="midpoint", sampling="random", seed=3 + r
        ).table
        np.testing.assert_allclose(
            out.loc[out["repeat"] == r, "mae"].to_numpy(), want["mae"].to_numpy()
        )
    # repeat 0 equals a plain run with the same seed
    assert _sweep(tmp, "--sampling", "random") == 0
    np.testing.assert_allclose(
        pd.read_csv(tmp / "s.csv")["mae"], out.loc[out["repeat"] == 0, "mae"]
    )


@pytest.mark.parametrize(
    "extra,msg",
    [
        (["--repeats", "0"], "--repeats: the number of repeats must be at least 1"),
        (["--repeats", "100000000"], "at most 1,000"),
    ],
)
def test_repeats_bad_input(mat, capsys, extra, msg):
    tmp, _ = mat
    assert _sweep(tmp, *extra) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_repeats_need_drawn_sort_sets(mat, capsys):
    tmp, _ = mat
    (tmp / "rows.txt").write_text("0\n1\n2\n")
    code = main(
        [
            "sweep",
            "--matrix",
            str(tmp / "A.npy"),
            "--sort-rows",
            str(tmp / "rows.txt"),
            "--repeats",
            "2",
            "--budgets",
            "8",
            "--method",
            "midpoint",
            "--out",
            str(tmp / "s.csv"),
        ]
    )
    assert code == 2 and "use --sort-models" in capsys.readouterr().err


def test_decompose_and_ties_flags(mat, capsys):
    from lifelong_core.sortsearch.metrics import kappa
    from lifelong_core.sortsearch.search import rule_thresholds, stratum_positions

    tmp, A = mat
    assert _sweep(tmp, "--decompose") == 0
    out = pd.read_csv(tmp / "s.csv")
    assert list(out.columns) == [
        "budget",
        "mae",
        "eagg",
        "kappa",
        "pearson",
        "spearman",
        "aleatoric",
        "epistemic",
        "kappa_aleatoric",
        "kappa_epistemic",
    ]
    per = pd.read_csv(tmp / "p.csv")
    assert list(per.columns)[:5] == ["model_row", "budget", "est_acc", "true_acc", "mae"]
    # One model by hand: kappa(a, y*) and kappa(y*, y) on the sorted row (Prabhu et al., 2024, Lifelong Benchmarks, §6).
    rows = choose_sort_rows(40, 10, 3)
    ev = np.setdiff1d(np.arange(40), rows)
    order = np.argsort(-A[rows].sum(axis=0), kind="stable")
    a = A[ev[0]][order].astype(int)
    run = np.concatenate([[0], np.cumsum(2 * a - 1)])
    t_star = int(np.argmax(run))
    p = stratum_positions(300, 32)
    t = int(rule_thresholds("midpoint", p, a[p][None, :], 300)[0])
    y_star = (np.arange(300) < t_star).astype(int)
    y = (np.arange(300) < t).astype(int)
    row = per[(per["model_row"] == ev[0]) & (per["budget"] == 32)].iloc[0]
    assert row["aleatoric"] == pytest.approx(np.abs(a - y_star).mean())
    assert row["kappa_aleatoric"] == pytest.approx(kappa(a, y_star))
    assert row["kappa_epistemic"] == pytest.approx(kappa(y_star, y))
    # --ties stable with --method reference: the published rule and grid on the stable order
    # (argparse keeps the last --method), so rules can be compared on one order.
    assert _sweep(tmp, "--method", "reference", "--ties", "stable") == 0
    want = run_sweep(A[rows], A[ev], [8, 32, 100], search="reference", ties="stable", seed=3).table
    np.testing.assert_allclose(pd.read_csv(tmp / "s.csv")["mae"], want["mae"])
    code = main(
        [
            "sweep",
            "--matrix",
            str(tmp / "A.npy"),
            "--sort-models",
            "10",
            "--budgets",
            "8",
            "--method",
            "copy-nearest",
            "--decompose",
            "--out",
            str(tmp / "x.csv"),
        ]
    )
    assert code == 2 and "--decompose applies to the threshold rules" in capsys.readouterr().err
