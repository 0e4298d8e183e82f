"""The stream as Nevis'22 runs it: choose on meta-train, score on meta-test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.studies.stream_protocol import (
    CONFIG_COLUMNS,
    pareto_front,
    regret,
    stream_protocol,
)
from lifelong_core.sweeping import run_sweep


def guttman(m: int, n: int, seed: int = 0) -> np.ndarray:
    """Model i is right on the first k_i samples of one fixed order: one Sort order fits every row."""
    rng = np.random.default_rng(seed)
    k = rng.integers(1, n, size=m)
    return (np.arange(n)[None, :] < k[:, None]).astype(np.uint8)


def test_pareto_front_hand_checked():
    df = pd.DataFrame({"cost": [1, 2, 2, 3, 4], "err": [0.5, 0.4, 0.6, 0.45, 0.1]})
    assert pareto_front(df, "cost", "err")["cost"].tolist() == [1, 2, 4]


def test_protocol_split_cost_and_choice():
    A = guttman(8, 40)
    res = stream_protocol(
        A,
        np.arange(8)[::-1],
        methods=["midpoint", "reference"],
        budgets=[4, 40],
        samplings=["uniform", "random"],
    )
    assert res.split == {
        "models": 8,
        "samples": 40,
        "cache": 2,
        "meta_train": 4,
        "meta_test": 4,
        "full_evaluations": 320,
    }
    assert list(res.configs.columns) == CONFIG_COLUMNS
    assert len(res.configs) == 2 * 2 * 2
    chosen = res.configs[res.configs["chosen"]]
    assert len(chosen) == 4  # one per (method, budget)
    for (_meth, _b), g in res.configs.groupby(["method", "budget"]):
        assert g.loc[g["train_error"].idxmin(), "chosen"]
    np.testing.assert_array_equal(chosen["evaluations"], 4 * 40 + 4 * chosen["budget"])
    # n' = n on a perfect order: the midpoint rule is exact (DP optimum), the reference one position short at most
    full = chosen[(chosen["budget"] == 40) & (chosen["method"] == "midpoint")]
    assert full["test_mae"].item() == 0.0
    # meta-test = rows 3, 2, 1, 0 (release order reversed); the cache of the test phase = rows 7..4
    pm = res.per_model[(res.per_model["method"] == "midpoint") & (res.per_model["budget"] == 4)]
    assert pm["model_row"].tolist() == [3, 2, 1, 0] and pm["position"].tolist() == [0, 1, 2, 3]
    smp = chosen[(chosen["method"] == "midpoint") & (chosen["budget"] == 4)]["sampling"].item()
    want = run_sweep(
        A[[7, 6, 5, 4]],
        A[[3, 2, 1, 0]],
        [4],
        sampling=smp,
        search="midpoint",
        seed=0,
        eval_row_ids=np.array([3, 2, 1, 0]),
    )
    assert smp in ("uniform", "random")
    np.testing.assert_allclose(
        pm["mae"].to_numpy(), want.per_model.set_index("model_row").loc[[3, 2, 1, 0], "mae"]
    )


def test_regret_hand_checked():
    pm = pd.DataFrame(
        {
            "method": ["a"] * 3 + ["ref"] * 3,
            "budget": 8,
            "sampling": "uniform",
            "position": [0, 1, 2] * 2,
            "model_row": [5, 6, 7] * 2,
            "mae": [0.1, 0.2, 0.1, 0.2, 0.2, 0.3],
            "eagg": 0.0,
        }
    )
    r = regret(pm, 8, "ref")
    np.testing.assert_allclose(r[r["method"] == "a"]["regret"], [-0.1, -0.1, -0.3])
    np.testing.assert_allclose(r[r["method"] == "ref"]["regret"], [0, 0, 0])
    with pytest.raises(InputError, match="not run"):
        regret(pm, 8, "other")
    with pytest.raises(InputError, match="budget 9"):
        regret(pm, 9, "ref")


def test_protocol_bad_input():
    A = guttman(6, 20)
    with pytest.raises(InputError, match="release order"):
        stream_protocol(A, [0, 1, 2], budgets=[4])
    with pytest.raises(InputError, match="strictly between"):
        stream_protocol(A, np.arange(6), budgets=[4], train_fraction=1.0)
    with pytest.raises(InputError, match="cannot be split"):
        stream_protocol(guttman(2, 20), np.arange(2), budgets=[4])


def test_cli_matrix_and_release_order(tmp_path, capsys):
    A = guttman(12, 50, seed=3)
    np.save(tmp_path / "A.npy", A)
    order = np.random.default_rng(1).permutation(12)
    (tmp_path / "rel.txt").write_text("\n".join(map(str, order)) + "\n")
    code = main(
        [
            "stream",
            "--matrix",
            str(tmp_path / "A.npy"),
            "--release-order",
            str(tmp_path / "rel.txt"),
            "--budgets",
            "4,16",
            "--out",
            str(tmp_path / "c.csv"),
            "--front",
            str(tmp_path / "f.csv"),
            "--regret",
            str(tmp_path / "r.csv"),
            "--per-model",
            str(tmp_path / "p.csv"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    configs = pd.read_csv(tmp_path / "c.csv")
    want = stream_protocol(
        A, order, methods=["midpoint", "reference", "copy-nearest"], budgets=[4, 16]
    )
    np.testing.assert_allclose(configs["train_error"], want.configs["train_error"])
    r = pd.read_csv(tmp_path / "r.csv")
    assert set(r["method"]) == {"midpoint", "reference", "copy-nearest"}
    assert (r[r["method"] == "reference"]["regret"] == 0).all()
    assert set(pd.read_csv(tmp_path / "p.csv")["model_row"]) == set(order[6:].tolist())


@pytest.mark.parametrize(
    "extra,msg",
    [
        (["--method", "midpoint,oracle"], "'oracle' is not a search method"),
        (["--samplings", "grid"], "'grid' is not one of"),
        (["--reference", "copy-nearest", "--method", "midpoint"], "not among --method"),
        (["--train-fraction", "0"], "strictly between"),
    ],
)
def test_cli_bad_input_one_sentence(tmp_path, capsys, extra, msg):
    np.save(tmp_path / "A.npy", guttman(10, 30))
    code = main(
        ["stream", "--matrix", str(tmp_path / "A.npy"), "--out", str(tmp_path / "c.csv"), *extra]
    )
    err = capsys.readouterr().err
    assert code == 2 and msg in err and err.count("\n") == 1
    assert not (tmp_path / "c.csv").exists()
