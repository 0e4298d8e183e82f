"""`sweep --method NAME` runs the estimators end to end and writes their intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main


def _matrix(tmp_path):
    rng = np.random.default_rng(0)
    ability = rng.normal(size=(60, 1))
    easiness = rng.normal(size=(1, 300))
    A = (rng.random((60, 300)) < 1 / (1 + np.exp(-(ability + easiness) * 2))).astype(np.uint8)
    path = tmp_path / "A.npy"
    np.save(path, A)
    return path, A


@pytest.mark.parametrize("name", ["irt", "mirt", "neighbours"])
def test_sweep_search_name_writes_intervals(tmp_path, name):
    path, _A = _matrix(tmp_path)
    out, per = tmp_path / "s.csv", tmp_path / "pm.csv"
    assert (
        main(
            [
                "sweep",
                "--matrix",
                str(path),
                "--sort-models",
                "20",
                "--seed",
                "1",
                "--budgets",
                "16,64,300",
                "--method",
                name,
                "--out",
                str(out),
                "--per-model",
                str(per),
            ]
        )
        == 0
    )
    table, pm = pd.read_csv(out), pd.read_csv(per)
    assert table["budget"].tolist() == [16, 64, 300]
    assert {"est_lo", "est_hi"} <= set(pm.columns)
    assert len(pm) == 3 * 40
    assert ((pm.est_lo <= pm.est_acc) & (pm.est_acc <= pm.est_hi)).all()
    full = pm[pm.budget == 300]
    # Every sample evaluated: exact accuracy, zero-width interval, no sample-level error.
    assert np.allclose(full.est_acc, full.true_acc) and np.allclose(full.est_lo, full.est_hi)
    assert (full.mae == 0).all()
    assert table.set_index("budget").loc[300, "mae"] == 0


def test_sweep_rejects_a_budget_larger_than_the_benchmark(tmp_path, capsys):
    path, _ = _matrix(tmp_path)
    rc = main(
        [
            "sweep",
            "--matrix",
            str(path),
            "--sort-models",
            "20",
            "--seed",
            "1",
            "--budgets",
            "301",
            "--method",
            "mirt",
            "--out",
            str(tmp_path / "s.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1
