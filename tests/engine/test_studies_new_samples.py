"""insert_D studies: engine on hand-checked cases and `sweep-samples`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.studies.new_samples import (
    CURVE_COLUMNS,
    SampleSplit,
    domain_splits,
    new_sample_study,
    random_split,
    sweep_new_samples,
)
from lifelong_core.sweeping import run_sweep

# Four models, best first by accuracy on the cache columns 0-5; column 6 is the new sample,
# right for the two best models only.
A4 = np.array(
    [
        [1, 1, 1, 1, 1, 0, 1],
        [1, 1, 1, 1, 0, 0, 1],
        [1, 1, 1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0, 0],
    ],
    dtype=np.uint8,
)
SPLIT = SampleSplit("hand", np.arange(6), np.array([6]))


def test_hand_checked_insert_d_rules_and_grids():
    # m' = 2 of 4 models. Strata {0,1}, {2,3}: models at ranks 1 and 3 -> observed [1, 0];
    # midpoint puts the boundary at (1 + 1 + 3) // 2 = 2: both best models right, MAE 0.
    mid = sweep_new_samples(A4, SPLIT, [2], search="midpoint")
    assert mid.per_model["est_acc"].tolist() == [0.5] and mid.per_model["mae"].tolist() == [0.0]
    assert mid.per_model["model_row"].tolist() == [6]
    # The published code: same positions (2 divides 4), threshold p[argmax] = 1: one model right.
    ref = sweep_new_samples(A4, SPLIT, [2], search="reference")
    assert ref.per_model["est_acc"].tolist() == [0.25] and ref.per_model["mae"].tolist() == [0.25]
    # m' = m sees every model: exact
    assert sweep_new_samples(A4, SPLIT, [4]).per_model["mae"].tolist() == [0.0]


def test_insert_d_is_the_engine_on_the_transpose():
    rng = np.random.default_rng(3)
    A = (rng.random((40, 90)) < np.linspace(0.9, 0.2, 40)[:, None]).astype(np.uint8)
    split = random_split(90, 0.3, seed=5)
    got = sweep_new_samples(A, split, [4, 8, 16], search="midpoint", seed=2)
    want = run_sweep(
        A[:, split.old].T.copy(),
        A[:, split.new].T.copy(),
        [4, 8, 16],
        search="midpoint",
        seed=2,
        eval_row_ids=split.new,
    )
    pd.testing.assert_frame_equal(got.table, want.table)
    # Sorting by Sum on the transpose = models by accuracy on the cache, best first (stable ties).
    acc = A[:, split.old].sum(axis=1)
    assert np.array_equal(got.order, np.argsort(-acc, kind="stable"))


def test_confidence_ranking_orders_models_by_confidence_sum():
    C = np.tile(
        np.array([[0.1], [0.9], [0.5], [0.7]]), (1, 7)
    )  # model 1 most confident, then 3, 2, 0
    res = sweep_new_samples(A4, SPLIT, [4], sort="confidence", confidence=C)
    assert res.order.tolist() == [1, 3, 2, 0]
    with pytest.raises(InputError, match="confidence"):
        sweep_new_samples(A4, SPLIT, [4], sort="confidence")


def test_splits():
    s = random_split(10, 0.3, seed=1)
    assert (
        len(s.new) == 3
        and len(s.old) == 7
        and np.array_equal(np.sort(np.r_[s.old, s.new]), np.arange(10))
    )
    assert np.array_equal(s.new, random_split(10, 0.3, seed=1).new)
    for bad in (0.0, 1.0, 0.01):
        with pytest.raises(InputError):
            random_split(10, bad, seed=1)
    doms = ["a", "b", "a", "c", "b"]
    splits = domain_splits(doms)
    assert [x.name for x in splits] == ["domain:a", "domain:b", "domain:c"]
    assert splits[0].new.tolist() == [0, 2] and splits[0].old.tolist() == [1, 3, 4]
    assert [x.name for x in domain_splits(doms, ["c"])] == ["domain:c"]
    with pytest.raises(InputError, match="not among"):
        domain_splits(doms, ["z"])
    with pytest.raises(InputError, match="two domains"):
        domain_splits(["a", "a"])


def test_study_tables():
    rng = np.random.default_rng(0)
    A = (rng.random((30, 60)) < np.linspace(0.9, 0.3, 30)[:, None]).astype(np.uint8)
    C = np.clip(A * 0.5 + rng.random(A.shape) * 0.5, 0, 1)
    doms = ["x"] * 30 + ["y"] * 30
    st = new_sample_study(
        A,
        [random_split(60, 0.25, 0)] + domain_splits(doms),
        [4, 8, 16, 29],
        sorts=("sum", "confidence"),
        confidence=C,
    )
    assert list(st.curves.columns) == CURVE_COLUMNS
    assert len(st.curves) == 3 * 2 * 4 and set(st.curves["split"]) == {
        "random",
        "domain:x",
        "domain:y",
    }
    assert len(st.fits) == 6 and len(st.agreement) == 3
    assert len(st.rankings) == 3 * 2 * 30
    sub = st.per_sample[(st.per_sample["split"] == "domain:x") & (st.per_sample["sort"] == "sum")]
    assert sorted(sub["sample_col"].unique()) == list(range(30))
    # the curve is the mean over the new samples of the per-sample rows
    for (split, sort, b), g in st.per_sample.groupby(["split", "sort", "budget"]):
        row = st.curves[
            (st.curves["split"] == split) & (st.curves["sort"] == sort) & (st.curves["budget"] == b)
        ]
        assert row["mae"].item() == pytest.approx(g["mae"].mean())


# ------------------------------------------------------------------ command line
def test_cli_matrix_with_domains(tmp_path, capsys):
    rng = np.random.default_rng(1)
    A = (rng.random((20, 50)) < np.linspace(0.9, 0.3, 20)[:, None]).astype(np.uint8)
    np.save(tmp_path / "A.npy", A)
    doms = ["p"] * 20 + ["q"] * 30
    (tmp_path / "d.txt").write_text("\n".join(doms) + "\n")
    code = main(
        [
            "sweep-samples",
            "--matrix",
            str(tmp_path / "A.npy"),
            "--sample-domains",
            str(tmp_path / "d.txt"),
            "--split",
            "random,domain",
            "--held-out",
            "q",
            "--budgets",
            "4,8,19",
            "--seed",
            "2",
            "--out",
            str(tmp_path / "c.csv"),
            "--fits",
            str(tmp_path / "f.csv"),
            "--per-sample",
            str(tmp_path / "p.csv"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    curve = pd.read_csv(tmp_path / "c.csv")
    assert list(curve.columns) == CURVE_COLUMNS
    assert curve["split"].tolist() == ["random"] * 3 + ["domain:q"] * 3
    want = new_sample_study(
        A, [random_split(50, 0.2, 2)] + domain_splits(doms, ["q"]), [4, 8, 19], seed=2
    ).curves
    np.testing.assert_allclose(curve["mae"], want["mae"])
    assert set(pd.read_csv(tmp_path / "f.csv")["split"]) == {"random", "domain:q"}


@pytest.mark.parametrize(
    "extra,msg",
    [
        (["--split", "domain"], "needs the samples' domains"),
        (["--split", "cluster"], "--split entry 'cluster'"),
        (["--rank", "confidence"], "needs --confidence"),
        (["--new-fraction", "1.5"], "strictly between 0 and 1"),
        (["--budgets", "4,999"], "between 1 and"),
    ],
)
def test_cli_bad_input_one_sentence(tmp_path, capsys, extra, msg):
    np.save(tmp_path / "A.npy", (np.random.default_rng(0).random((10, 20)) < 0.5).astype(np.uint8))
    code = main(
        [
            "sweep-samples",
            "--matrix",
            str(tmp_path / "A.npy"),
            "--out",
            str(tmp_path / "c.csv"),
            *extra,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and msg in err and err.count("\n") == 1
    assert not (tmp_path / "c.csv").exists()


def test_cli_store(tmp_path, capsys):
    from lifelong_core.store import Store

    rng = np.random.default_rng(4)
    A = (rng.random((12, 40)) < np.linspace(0.9, 0.3, 12)[:, None]).astype(np.uint8)
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(
            A,
            [f"m{i}" for i in range(12)],
            pd.DataFrame(
                {"sample_id": [f"s{j}" for j in range(40)], "domain": ["u"] * 20 + ["v"] * 20}
            ),
            dataset="toy",
        )
    code = main(
        [
            "sweep-samples",
            "--store",
            str(path),
            "--split",
            "domain",
            "--budgets",
            "2,4,11",
            "--out",
            str(tmp_path / "c.csv"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    curve = pd.read_csv(tmp_path / "c.csv")
    want = new_sample_study(A, domain_splits(["u"] * 20 + ["v"] * 20), [2, 4, 11]).curves
    np.testing.assert_allclose(curve["mae"], want["mae"])
    code = main(
        [
            "sweep-samples",
            "--store",
            str(path),
            "--rank",
            "confidence",
            "--out",
            str(tmp_path / "d.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "holds no confidences" in err and err.count("\n") == 1
