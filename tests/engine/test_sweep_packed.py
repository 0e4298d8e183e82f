"""The packed sweep engines give the engine's numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.bits import pack_rows
from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.rows import MatrixRows, PackedArray
from lifelong_core.sortsearch.sort import choose_sort_rows
from lifelong_core.sweeping import run_sweep


def run_sweep_packed(A_sort, A_eval, budgets=None, **kwargs):
    """The packed kernel on a thread pool (what ``run_sweep_packed`` was before the one front door)."""
    return run_sweep(A_sort, A_eval, budgets, kernel="packed", executor="threads", **kwargs)


def packed_main(argv: list[str]) -> int:
    """``sweep`` with the packed kernel (what ``python -m lifelong_core.packed`` offered)."""
    return main(["sweep", "--kernel", "packed", "--method", "midpoint", *argv])


def _matrix(m: int, n: int, seed: int) -> np.ndarray:
    """Difficulty x ability data with noise and many tied column sums."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.5, 1.0, size=(m, 1))
    difficulty = rng.normal(0.0, 1.5, size=(1, n))
    return (rng.random((m, n)) < 1 / (1 + np.exp(-(ability - difficulty)))).astype(np.uint8)


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.per_model[b.per_model.columns], b.per_model)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert np.array_equal(a.order, b.order)


@pytest.mark.parametrize("search", ["midpoint", "reference"])
@pytest.mark.parametrize("sampling", ["uniform", "random"])
def test_identical_to_engine(search, sampling):
    A = _matrix(90, 1_237, seed=1)  # n not a multiple of 8 or 64
    S, E = A[:30], A[30:]
    budgets = [1, 8, 13, 64, 500, 1_237]
    want = run_sweep(S, E, budgets, search=search, sampling=sampling, seed=4)
    got = run_sweep_packed(
        S, E, budgets, search=search, sampling=sampling, seed=4, chunk_rows=7, threads=2
    )
    _same(want, got)


def test_sources_rows_and_chunking_do_not_change_results():
    A = _matrix(70, 640, seed=2)
    P = pack_rows(A)
    sort_rows = np.array([3, 9, 40, 41, 42, 69])
    eval_rows = np.setdiff1d(np.arange(70), sort_rows)
    want = run_sweep(A[sort_rows], A[eval_rows], [8, 32, 640], eval_row_ids=eval_rows)
    for chunk, threads in ((1, 1), (16, 2), (1000, 3)):
        got = run_sweep_packed(
            PackedArray(P, 640, sort_rows),
            PackedArray(P, 640, eval_rows),
            [8, 32, 640],
            chunk_rows=chunk,
            threads=threads,
        )
        _same(want, got)
        assert np.array_equal(np.unique(got.per_model["model_row"]), eval_rows)


def test_matrix_file_source_and_command_line(tmp_path, capsys):
    A = _matrix(40, 333, seed=3)
    path = tmp_path / "A.npy"
    np.save(path, A)
    sort_rows = choose_sort_rows(40, 10, 0)
    eval_rows = np.setdiff1d(np.arange(40), sort_rows)
    want = run_sweep(A[sort_rows], A[eval_rows], [8, 16, 333], eval_row_ids=eval_rows)
    got = run_sweep_packed(MatrixRows(path, sort_rows), MatrixRows(path, eval_rows), [8, 16, 333])
    _same(want, got)
    out, per = tmp_path / "sweep.csv", tmp_path / "per.csv"
    code = packed_main(
        [
            "--matrix",
            str(path),
            "--sort-models",
            "10",
            "--seed",
            "0",
            "--budgets",
            "8,16,333",
            "--out",
            str(out),
            "--per-model",
            str(per),
        ]
    )
    assert code == 0
    table = pd.read_csv(out)
    assert list(table.columns) == ["budget", "mae", "eagg", "kappa", "pearson", "spearman"]
    np.testing.assert_allclose(table["mae"], want.table["mae"], rtol=0, atol=1e-12)
    assert list(pd.read_csv(per).columns) == ["model_row", "budget", "est_acc", "true_acc", "mae"]


def test_command_line_bad_input_exits_2(tmp_path, capsys):
    A = _matrix(5, 20, seed=4)
    A[2, 3] = 2
    path = tmp_path / "bad.npy"
    np.save(path, A)
    code = packed_main(
        [
            "--matrix",
            str(path),
            "--sort-models",
            "2",
            "--budgets",
            "8",
            "--out",
            str(tmp_path / "o.csv"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and err.count("\n") == 0
    code = packed_main(
        [
            "--matrix",
            str(tmp_path / "missing.npy"),
            "--sort-models",
            "2",
            "--out",
            str(tmp_path / "o.csv"),
        ]
    )
    assert code == 2


def test_bad_configurations_are_refused():
    A = _matrix(10, 50, seed=5)
    with pytest.raises(InputError, match="sorts by sum only"):
        run_sweep_packed(A[:3], A[3:], [8], sort="confidence")
    with pytest.raises(InputError, match="threshold rules only"):
        run_sweep_packed(A[:3], A[3:], [8], search="copy-nearest")
    with pytest.raises(InputError, match="samples"):
        run_sweep_packed(A[:3, :40], A[3:], [8])
    with pytest.raises(InputError, match="between 1 and"):
        run_sweep_packed(A[:3], A[3:], [51])
    with pytest.raises(InputError, match="only 0 and 1"):
        run_sweep_packed(A[:3] * 2, A[3:], [8])
    with pytest.raises(InputError, match="bytes"):
        PackedArray(pack_rows(A), 70)
