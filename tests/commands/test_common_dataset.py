"""Every command that reads a store, on a copy of the shipped demo store (two datasets).

One rule (``workflows.selection.resolve_dataset`` through ``commands._common``): a store
with one dataset needs no ``--dataset``; with several, a command that reads one dataset
stops with exit 2 and one sentence naming them; a dataset is read with the models
evaluated on it (for a matrix, those evaluated on every one of its samples, and a line
says which were left out and why).
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main

DIGITS, LLM = "lifelong-digits", "open-llm-leaderboard-v2"
SHAPES = {DIGITS: (440, 10700), LLM: (428, 2191)}


@pytest.fixture(scope="module")
def demo(demo_store_path, tmp_path_factory):
    """A copy of the shipped demo store (commands may take write locks on their store)."""
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    shutil.copy(demo_store_path, path)
    return path


def lbe(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_names_both(code: int, err: str) -> None:
    assert code == 2, err
    assert err.startswith("error: --dataset: the store holds 2 datasets")
    assert DIGITS in err and LLM in err and err.count("\n") == 1


# Each command's store path, with what it needs besides the store and the dataset.
def _sweep(tmp):
    return ["sweep", "--sort-models", "40", "--budgets", "64", "--method", "midpoint",
            "--out", tmp / "s.csv"]  # fmt: skip


def _matrix(tmp):
    return ["export", "--matrix", tmp / "A.npy", "--models", tmp / "m.txt"]


def _counts(tmp):
    return ["export", "--counts", tmp / "c.csv"]


def _samples(tmp):
    return ["sweep-samples", "--budgets", "8,32", "--out", tmp / "curve.csv"]


def _stream(tmp):
    return ["stream", "--budgets", "16,64", "--method", "midpoint", "--out", tmp / "cfg.csv"]


def _adaptive(tmp):
    return ["adaptive", "--row", "0", "--max-budget", "32", "--no-tune", "--out", tmp / "r.csv"]


def _select(tmp):
    return ["select", "--budget", "16", "--method", "midpoint", "--format", "csv",
            "--model", "new-model", "--out", tmp / "pick.csv"]  # fmt: skip


ONE_DATASET = {
    "sweep": _sweep,
    "export --matrix": _matrix,
    "export --counts": _counts,
    "sweep-samples": _samples,
    "stream": _stream,
    "adaptive": _adaptive,
    "select": _select,
}


@pytest.mark.parametrize("command", list(ONE_DATASET))
def test_without_dataset_exits_2_naming_both(demo, tmp_path, capsys, command):
    args = ONE_DATASET[command](tmp_path)
    code, _, err = lbe(capsys, *args[:1], "--store", demo, *args[1:])
    assert_names_both(code, err)
    assert not any(tmp_path.iterdir())  # nothing written


def test_estimate_without_dataset_exits_2_naming_both(demo, tmp_path, capsys):
    code, _, err = lbe(capsys, "estimate", "--store", demo, "--lm-eval", tmp_path, "--model", "new")
    assert_names_both(code, err)


@pytest.mark.slow
@pytest.mark.parametrize("dataset", [DIGITS, LLM])
@pytest.mark.parametrize("command", list(ONE_DATASET))
def test_each_command_runs_on_each_dataset(demo, tmp_path, capsys, command, dataset):
    args = ONE_DATASET[command](tmp_path)
    code, out, err = lbe(capsys, *args[:1], "--store", demo, "--dataset", dataset, *args[1:])
    assert code == 0, err
    written = [p for p in tmp_path.iterdir() if p.stat().st_size > 0]
    assert written, out


@pytest.mark.parametrize("dataset", [DIGITS, LLM])
def test_sweep_rows_are_the_datasets_complete_models(demo, tmp_path, capsys, dataset):
    code, out, err = lbe(
        capsys, "sweep", "--store", demo, "--dataset", dataset, *_sweep(tmp_path)[1:],
        "--per-model", tmp_path / "pm.csv",
    )  # fmt: skip
    assert code == 0, err
    m, n = SHAPES[dataset]
    assert f"dataset {dataset}: {m:,} models evaluated on all {n:,} of its samples" in out
    if dataset == LLM:  # Qwen2-VL has no MATH-hard results
        assert "left out: 1 evaluated on only some of them." in out
    pm = pd.read_csv(tmp_path / "pm.csv")
    assert pm["model_row"].max() < m and pm["model_row"].nunique() == m - 40


@pytest.mark.parametrize("dataset", [DIGITS, LLM])
def test_export_matrix_is_the_dataset_with_its_complete_models(demo, tmp_path, capsys, dataset):
    code, out, err = lbe(
        capsys, "export", "--store", demo, "--dataset", dataset, *_matrix(tmp_path)[1:]
    )
    assert code == 0, err
    A = np.load(tmp_path / "A.npy")
    assert A.shape == SHAPES[dataset] and set(np.unique(A)) <= {0, 1}
    ids = (tmp_path / "m.txt").read_text().split("\n")
    assert len([i for i in ids if i]) == SHAPES[dataset][0]
    assert "left out" in out if dataset == LLM else "left out" not in out
    # The same matrix a sweep reads: its rows are the sweep's model_row numbers.
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    with Store.open(demo, read_only=True) as st:
        np.testing.assert_array_equal(A, np.asarray(select(st, dataset).A))


def test_export_counts_feed_rank_on_the_llm_dataset(demo, tmp_path, capsys):
    # The partial model would make rank refuse the file: counts hold complete models only.
    code, out, err = lbe(
        capsys, "export", "--store", demo, "--dataset", LLM, *_counts(tmp_path)[1:]
    )
    assert code == 0, err
    assert "left out: 1 not evaluated on every domain (Qwen/Qwen2-VL-7B-Instruct)" in out
    code, _, err = lbe(capsys, "rank", "--counts", tmp_path / "c.csv", "--boot", "50",
                       "--out", tmp_path / "r.csv")  # fmt: skip
    assert code == 0, err


def test_export_long_reads_every_dataset_unless_one_is_named(user_store_path, tmp_path, capsys):
    # A user's store of two small datasets: the rule is the demo's, the export seconds less.
    store = tmp_path / "user.duckdb"
    shutil.copy(user_store_path, store)
    code, _, err = lbe(capsys, "export", "--store", store, "--long", tmp_path / "all.parquet")
    assert code == 0, err
    code, _, err = lbe(
        capsys,
        "export",
        "--store",
        store,
        "--dataset",
        "my-eval",
        "--long",
        tmp_path / "my.parquet",
    )
    assert code == 0, err
    assert set(pd.read_parquet(tmp_path / "my.parquet")["dataset"]) == {"my-eval"}
    assert set(pd.read_parquet(tmp_path / "all.parquet")["dataset"]) == {"lm-eval", "my-eval"}
    code, _, err = lbe(
        capsys, "export", "--store", store, "--dataset", "nope", "--long", tmp_path / "x.parquet"
    )
    assert code == 2 and "the store holds no dataset 'nope'" in err


@pytest.mark.parametrize("dataset", [None, DIGITS, LLM])
def test_info_and_state_describe_the_store_or_one_dataset(demo, capsys, dataset):
    pick = [] if dataset is None else ["--dataset", dataset]
    code, out, err = lbe(capsys, "info", "--store", demo, *pick)
    assert code == 0, err
    assert "Dataset and domain rows count evaluated models only" in out
    shown = out.split("models:")[0]
    for ds in (DIGITS, LLM):
        assert (ds in shown) == (dataset in (None, ds))
    code, out, err = lbe(capsys, "state", "--store", demo, *pick)
    assert code == 0, err
    for ds in (DIGITS, LLM):
        assert (f"{ds}:" in out) == (dataset in (None, ds))


def test_info_models_of_one_dataset_are_counted_on_it(demo, capsys):
    code, out, _ = lbe(capsys, "info", "--store", demo, "--dataset", LLM, "--models")
    assert code == 0
    models = out.split("models:")[1]
    assert "lifelong-digits/" not in models and "01-ai/Yi-1.5-34B" in models
    code, out, _ = lbe(capsys, "info", "--store", demo, "--dataset", LLM, "--summary")
    assert code == 0 and "models: 429 in" in out  # the dataset's models, counted per family


@pytest.mark.slow
def test_one_dataset_store_needs_no_flag(llm_store_path, tmp_path, capsys):
    # The session's store of the bundled leaderboard alone, as build-demo imports it.
    path = tmp_path / "llm.duckdb"
    shutil.copy(llm_store_path, path)
    code, out, err = lbe(capsys, "sweep", "--store", path, *_sweep(tmp_path)[1:])
    assert code == 0, err and f"dataset {LLM}" in out
    code, out, err = lbe(capsys, "export", "--store", path, *_matrix(tmp_path)[1:])
    assert code == 0, err
    assert np.load(tmp_path / "A.npy").shape == SHAPES[LLM]


def test_dataset_with_a_matrix_is_refused(tmp_path, capsys):
    np.save(tmp_path / "A.npy", np.eye(6, dtype=np.uint8))
    code, _, err = lbe(capsys, "sweep", "--matrix", tmp_path / "A.npy", "--dataset", DIGITS,
                       "--sort-models", "3", "--out", tmp_path / "s.csv")  # fmt: skip
    assert code == 2 and "--dataset goes with --store" in err


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_dataset_exported_long_imports_again_as_it_was(demo, tmp_path, capsys, suffix):
    # The LLM dataset has no confidences while the digits beside it do: the export's blank
    # column is read as not recorded, and the new store holds the same entries.
    out = tmp_path / f"llm{suffix}"
    code, _, err = lbe(capsys, "export", "--store", demo, "--dataset", LLM, "--long", out)
    assert code == 0, err
    new = tmp_path / "new.duckdb"
    code, _, err = lbe(capsys, "import", "--store", new, "--long", out)
    assert code == 0, err
    from lifelong_core.store import Store

    with Store.open(demo) as a, Store.open(new) as b:
        mb = b.models()
        ia = a.models().set_index("model_id").loc[mb["model_id"], "model_idx"].to_numpy()
        sa, sb = a.samples(LLM), b.samples(LLM)
        assert sa["sample_id"].tolist() == sb["sample_id"].tolist()
        va, ka = a.values_and_known(ia, sa["sample_idx"].to_numpy())
        vb, kb = b.values_and_known(mb["model_idx"].to_numpy(), sb["sample_idx"].to_numpy())
        assert (ka == kb).all() and (va[ka] == vb[kb]).all()
        assert not b.has_extra("confidence")


def test_an_extra_column_blank_on_every_row_is_not_recorded(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("model,sample,correct,confidence,predicted\nm0,s0,1,,\nm0,s1,0,nan,\n")
    code, _, err = lbe(
        capsys, "import", "--store", tmp_path / "s.duckdb", "--long", src, "--dataset", "d"
    )
    assert code == 0, err
    from lifelong_core.store import Store

    with Store.open(tmp_path / "s.duckdb") as st:
        assert not st.has_extra("confidence") and not st.has_extra("predicted")
        assert st.matrix(np.array([0]), np.array([0, 1])).tolist() == [[1, 0]]
