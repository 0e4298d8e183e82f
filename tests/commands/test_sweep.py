"""`python -m lifelong_core sweep`: the command-line contract (docs/reference/cli.md), in-process and as a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.methods.registry import DEFAULT_METHOD, capabilities
from lifelong_core.sortsearch.sort import choose_sort_rows
from lifelong_core.sweeping import run_sweep

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    rng = np.random.default_rng(0)
    m, n = 30, 700
    logit = rng.normal(0.3, 1, (m, 1)) - rng.normal(0, 1.5, (1, n)) + rng.normal(0, 0.7, (m, n))
    A = (rng.random((m, n)) < 1 / (1 + np.exp(-logit))).astype(np.uint8)
    np.save(d / "A.npy", A)
    np.savetxt(d / "A.csv", A, fmt="%d", delimiter=",")
    C = np.clip(A * 0.6 + rng.random((m, n)) * 0.4, 0, 1).astype(np.float32)
    np.save(d / "C.npy", C)
    (d / "rows.txt").write_text("\n".join(str(i) for i in range(0, 30, 3)) + "\n")
    return d, A, C


def run_main(capsys, *args):
    code = main(["sweep", *map(str, args)])
    return code, capsys.readouterr().err


def test_sort_rows_contract_and_per_model(data, capsys):
    d, A, _ = data
    code, err = run_main(
        capsys,
        "--matrix",
        d / "A.npy",
        "--sort-rows",
        d / "rows.txt",
        "--budgets",
        "8,16,700",
        "--method",
        "midpoint",
        "--out",
        d / "s.csv",
        "--per-model",
        d / "pm.csv",
    )
    assert code == 0, err
    table = pd.read_csv(d / "s.csv")
    pm = pd.read_csv(d / "pm.csv")
    assert list(table.columns) == ["budget", "mae", "eagg", "kappa", "pearson", "spearman"]
    assert list(pm.columns) == ["model_row", "budget", "est_acc", "true_acc", "mae"]
    assert table["budget"].tolist() == [8, 16, 700]
    sort_rows = np.arange(0, 30, 3)
    eval_rows = np.setdiff1d(np.arange(30), sort_rows)
    assert sorted(pm["model_row"].unique().tolist()) == eval_rows.tolist()
    expected = run_sweep(A[sort_rows], A[eval_rows], [8, 16, 700], eval_row_ids=eval_rows)
    assert np.allclose(table["mae"], expected.table["mae"])
    assert np.allclose(pm["true_acc"], expected.per_model["true_acc"])
    assert ((table[["mae", "eagg"]] >= 0) & (table[["mae", "eagg"]] <= 1)).all().all()


def test_default_search_is_the_registry_default_with_intervals(data, capsys):
    d, A, _ = data
    code, err = run_main(
        capsys,
        "--matrix",
        d / "A.npy",
        "--sort-rows",
        d / "rows.txt",
        "--budgets",
        "16,64",
        "--out",
        d / "dm.csv",
        "--per-model",
        d / "dpm.csv",
    )
    assert code == 0, err
    sort_rows = np.arange(0, 30, 3)
    eval_rows = np.setdiff1d(np.arange(30), sort_rows)
    expected = run_sweep(
        A[sort_rows], A[eval_rows], [16, 64], search=DEFAULT_METHOD, eval_row_ids=eval_rows
    )
    assert expected.config["search"] == DEFAULT_METHOD == "auto"
    assert capabilities(DEFAULT_METHOD).interval
    assert np.allclose(pd.read_csv(d / "dm.csv")["mae"], expected.table["mae"])
    pm = pd.read_csv(d / "dpm.csv")
    assert list(pm.columns) == [
        "model_row",
        "budget",
        "est_acc",
        "true_acc",
        "mae",
        "est_lo",
        "est_hi",
    ]
    assert ((pm["est_lo"] <= pm["est_acc"]) & (pm["est_acc"] <= pm["est_hi"])).all()


@pytest.mark.parametrize("search,sampling", [("midpoint", "uniform"), ("reference", "random")])
def test_dask_engine_matches_numpy_engine(data, capsys, search, sampling):
    pytest.importorskip("dask.distributed")
    d, _, _ = data
    common = [
        "--matrix",
        d / "A.npy",
        "--sort-models",
        7,
        "--seed",
        3,
        "--budgets",
        "8,32,128",
        "--method",
        search,
        "--sampling",
        sampling,
    ]
    code, err = run_main(capsys, *common, "--out", d / "np.csv", "--per-model", d / "np_pm.csv")
    assert code == 0, err
    code, err = run_main(
        capsys, *common, "--engine", "dask", "--out", d / "dk.csv", "--per-model", d / "dk_pm.csv"
    )
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(d / "np.csv"), pd.read_csv(d / "dk.csv"))
    key = ["budget", "model_row"]
    a = pd.read_csv(d / "np_pm.csv").sort_values(key, ignore_index=True)
    b = pd.read_csv(d / "dk_pm.csv").sort_values(key, ignore_index=True)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "extra,needle",
    [
        ([], "threshold rules only; add --method midpoint"),
        (["--method", "midpoint", "--sort", "recursive"], "sorts by sum only"),
    ],
)
def test_dask_engine_refuses_what_it_cannot_run(data, capsys, extra, needle):
    d, _, _ = data
    code, err = run_main(
        capsys,
        "--matrix",
        d / "A.npy",
        "--sort-models",
        5,
        "--engine",
        "dask",
        *extra,
        "--out",
        d / "never.csv",
    )
    assert code == 2 and needle in err and "\n" not in err.strip()
    assert not (d / "never.csv").exists()


def test_sort_models_seed_and_options(data, capsys):
    d, A, _ = data
    code, err = run_main(
        capsys,
        "--matrix",
        d / "A.csv",
        "--sort-models",
        8,
        "--seed",
        4,
        "--budgets",
        "8,32",
        "--sampling",
        "random",
        "--method",
        "reference",
        "--out",
        d / "r.csv",
    )
    assert code == 0, err
    rows = choose_sort_rows(30, 8, 4)
    ev = np.setdiff1d(np.arange(30), rows)
    expected = run_sweep(A[rows], A[ev], [8, 32], sampling="random", search="reference", seed=4)
    assert np.allclose(pd.read_csv(d / "r.csv")["mae"], expected.table["mae"])


@pytest.mark.parametrize(
    "extra",
    [
        ["--sort", "recursive"],
        ["--sort", "confidence", "--confidence", "C.npy"],
        ["--method", "copy-nearest"],
    ],
)
def test_other_sorts_and_methods_run(data, capsys, extra):
    d, _, _ = data
    extra = [str(d / e) if e.endswith(".npy") else e for e in extra]
    code, err = run_main(
        capsys,
        "--matrix",
        d / "A.npy",
        "--sort-models",
        10,
        "--budgets",
        "8,64",
        *extra,
        "--out",
        d / "o.csv",
    )
    assert code == 0, err
    assert len(pd.read_csv(d / "o.csv")) == 2


def test_default_budgets_are_powers_of_two(data, capsys):
    d, _, _ = data
    code, _ = run_main(capsys, "--matrix", d / "A.npy", "--sort-models", 10, "--out", d / "p.csv")
    assert code == 0
    assert pd.read_csv(d / "p.csv")["budget"].tolist() == [8, 16, 32, 64, 128, 256, 512]


def bad_files(d: Path) -> None:
    (d / "ragged.csv").write_text("1,0,1\n1,0\n")
    (d / "nonbin.csv").write_text("1,0\n0,3\n")
    (d / "nan.csv").write_text("1,0\n0,nan\n")
    (d / "out_of_range.txt").write_text("0\n30\n")
    (d / "all.txt").write_text("\n".join(map(str, range(30))))


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--matrix", "ragged.csv", "--sort-models", "1"], "ragged: line 2"),
        (
            ["--matrix", "nonbin.csv", "--sort-models", "1"],
            "non-binary value 3.0 at line 2, column 2",
        ),
        (["--matrix", "nan.csv", "--sort-models", "1"], "missing value (NaN) at line 2, column 2"),
        (
            ["--matrix", "A.npy", "--sort-rows", "out_of_range.txt"],
            "holds index 30, outside [0, 29]",
        ),
        (["--matrix", "A.npy", "--sort-rows", "all.txt"], "names all 30 rows"),
        (
            ["--matrix", "A.npy", "--sort-models", "30"],
            "--sort-models: the number of Sort models, 30, must be between 1 and 29",
        ),
        (
            ["--matrix", "A.npy", "--sort-models", "5", "--budgets", "8,701"],
            "budget 701 must be between 1 and",
        ),
        (
            ["--matrix", "A.npy", "--sort-models", "5", "--budgets", "0"],
            "budget 0 must be between 1 and",
        ),
        (
            ["--matrix", "A.npy", "--sort-models", "5", "--budgets", "8,x"],
            "'x' is not a whole number",
        ),
        (["--matrix", "missing.npy", "--sort-models", "5"], "does not exist"),
        (
            ["--matrix", "A.npy", "--sort-models", "5", "--method", "bogus"],
            "unknown --method 'bogus'",
        ),
        (["--matrix", "A.npy", "--sort-models", "5", "--sort", "confidence"], "needs --confidence"),
        (["--matrix", "A.npy", "--sort-models", "5", "--confidence", "ragged.csv"], "ragged"),
    ],
)
def test_bad_input_exits_2_with_one_sentence(data, capsys, args, needle):
    d, _, _ = data
    bad_files(d)
    args = [str(d / a) if a.endswith((".csv", ".npy", ".txt")) else a for a in args]
    code, err = run_main(capsys, *args, "--out", d / "never.csv")
    assert code == 2
    line = err.strip()
    assert line.startswith("error: ") and "\n" not in line and needle in line
    assert "Traceback" not in err


def test_unwritable_output(data, capsys):
    d, _, _ = data
    code, err = run_main(
        capsys, "--matrix", d / "A.npy", "--sort-models", 5, "--out", d / "no" / "such" / "dir.csv"
    )
    assert code == 2 and "does not exist" in err


@pytest.mark.slow
def test_as_a_process(data):
    d, _, _ = data
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core",
            "sweep",
            "--matrix",
            str(d / "A.npy"),
            "--sort-models",
            "6",
            "--budgets",
            "8,16",
            "--out",
            str(d / "proc.csv"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert pd.read_csv(d / "proc.csv")["budget"].tolist() == [8, 16]
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core",
            "sweep",
            "--matrix",
            str(d / "ragged.csv"),
            "--sort-models",
            "1",
            "--out",
            str(d / "x.csv"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("error: ")


def test_baselines_are_reported_on_the_same_models(data, capsys, tmp_path):
    """After the sweep: the method's E_agg beside a random sample's exact expected E_agg
    (scipy's hypergeometric pmf here) and first-n's (the first columns of a matrix), the
    equivalent random budget, and n / n' as the paper's figure."""
    from scipy.stats import hypergeom

    d, A, _ = data
    out = tmp_path / "b.csv"
    argv = ["--matrix", d / "A.npy", "--sort-models", "10", "--budgets", "16,70"]
    argv += ["--method", "midpoint", "--out", tmp_path / "s.csv"]
    code = main(["sweep", *map(str, argv), "--per-model", str(tmp_path / "pm.csv")])
    assert code == 0
    said = capsys.readouterr().out
    assert "against the baselines" in said and "n/n′ (paper)" in said
    assert main(["sweep", *map(str, argv), "--baselines", str(out)]) == 0
    b = pd.read_csv(out).set_index("budget")
    pm = pd.read_csv(tmp_path / "pm.csv")
    ev = np.setdiff1d(np.arange(30), choose_sort_rows(30, 10, 0))
    n = A.shape[1]
    for budget in (16, 70):
        k = np.arange(budget + 1)
        rnd = np.mean(
            [
                (hypergeom.pmf(k, n, a, budget) * np.abs(k / budget - a / n)).sum()
                for a in A[ev].sum(axis=1)
            ]
        )
        assert b.loc[budget, "random_eagg"] == pytest.approx(rnd, rel=1e-9)
        first = np.abs(A[ev, :budget].mean(axis=1) - A[ev].mean(axis=1)).mean()
        assert b.loc[budget, "first_n_eagg"] == pytest.approx(first)
        at = pm[pm["budget"] == budget]
        mine = (at["est_acc"] - at["true_acc"]).abs().mean()
        assert b.loc[budget, "eagg"] == pytest.approx(mine)
        assert b.loc[budget, "eagg_vs_random"] == pytest.approx(mine / rnd)
        assert b.loc[budget, "paper_saving"] == pytest.approx(n / budget)
    capsys.readouterr()
    assert main(["sweep", *map(str, argv), "--no-baselines"]) == 0
    assert "against the baselines" not in capsys.readouterr().out


def test_store_sweep_baselines_take_the_first_items_of_each_task(demo_store_path, tmp_path):
    out = tmp_path / "b.csv"
    argv = ["sweep", "--store", str(demo_store_path), "--dataset", "open-llm-leaderboard-v2"]
    argv += ["--sort-models", "400", "--budgets", "30", "--method", "midpoint"]
    assert main([*argv, "--out", str(tmp_path / "s.csv"), "--baselines", str(out)]) == 0
    from lifelong_core.store import Store
    from lifelong_core.workflows.sweeps import store_sweep_rows

    with Store.open(demo_store_path) as st:
        rows = store_sweep_rows(st, "open-llm-leaderboard-v2")
        ev = np.setdiff1d(np.arange(rows.m), choose_sort_rows(rows.m, 400, 0))
        A = rows.rows(ev).read_dense(0, len(ev))
        tasks = rows.found.samples["domain"].to_numpy()
    # 30 = 10 per task, each task's first ten items in the store's order.
    cols = np.concatenate([np.flatnonzero(tasks == t)[:10] for t in pd.unique(tasks)])
    want = np.abs(A[:, cols].mean(axis=1) - A.mean(axis=1)).mean()
    assert pd.read_csv(out)["first_n_eagg"].iloc[0] == pytest.approx(want)
