"""`build-demo`: the store equals the committed files; no overwrite without --force; no debris."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from lifelong_core.cli import main
from lifelong_core.datasets import demo_files

DEMO = Path(__file__).resolve().parents[2] / "data" / "lifelong_digits"


@pytest.fixture(scope="module")
def built_output(tmp_path_factory):
    """One full build for the test session, with ``--force`` over a file that is not a
    store: the tests below check what it wrote, and that it replaced the file (the build
    without ``--force`` onto a new path is the one ``make store`` and the install test
    run). Each worker gets a copy of the store and of what the build printed."""
    import contextlib
    import io

    from tests.shared import built_once

    def build(folder: Path) -> None:
        path = folder / "demo.duckdb"
        path.write_bytes(b"not a store")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["build-demo", "--store", str(path), "--force"]) == 0
        (folder / "printed.txt").write_text(out.getvalue())

    shared = built_once(tmp_path_factory, "build-demo", build)
    printed = (shared / "printed.txt").read_text()
    (shared / "printed.txt").unlink()  # the folder holds the store alone, as the build left it
    return shared / "demo.duckdb", printed


@pytest.fixture(scope="module")
def built(built_output):
    return built_output[0]


@pytest.mark.slow
def test_store_matrix_and_extras_equal_the_committed_files(built):
    from lifelong_core.store import Store

    d = demo_files.load_demo(DEMO)
    with Store.open(built) as st:
        rows = np.arange(len(d.models))
        cols = st.samples("lifelong-digits")["sample_idx"].to_numpy()
        assert np.array_equal(cols, np.arange(len(d.samples)))
        assert np.array_equal(st.matrix(rows, cols), d.correct)
        ex = st.extras(rows, cols)
        assert np.array_equal(ex["confidence"], d.confidence.astype(np.float32))
        assert np.array_equal(ex["true_prob"], d.true_prob.astype(np.float32))
        assert np.array_equal(ex["predicted"], d.predicted.astype(np.int32))
        models = st.models().iloc[: len(d.models)]
        assert models["model_id"].tolist() == d.models["model_id"].tolist()
        assert models["family"].tolist() == d.models["family"].tolist()
        assert models["release_order"].tolist() == d.models["release_order"].tolist()
        samples = st.samples("lifelong-digits")
        assert samples["sample_id"].tolist() == d.samples["sample_id"].tolist()
        assert samples["category"].tolist() == d.samples["category"].tolist()
        assert samples["label"].astype(int).tolist() == d.samples["label"].tolist()
        ds = st.datasets()
        assert (
            ds["dataset"].tolist() == ["lifelong-digits", "open-llm-leaderboard-v2"]
            and not ds["synthetic"].any()
        )
        counts = st.counts("lifelong-digits")
        assert set(counts["category"]) == {"handwriting", "acquisition", "geometric"}
        assert len(st.domains("lifelong-digits")) == len(d.domains)
    assert sorted(p.name for p in built.parent.iterdir()) == ["demo.duckdb"]


@pytest.mark.slow
def test_the_lifelong_state_is_kept_for_every_dataset(built):
    """No page sorts or fits the demo when it opens: build-demo keeps the Sort state and the
    default estimator's parameters of each dataset, current at the last import."""
    from lifelong_core.methods.registry import kept_method
    from lifelong_core.store import Store
    from lifelong_core.workflows import lifelong_state

    with Store.open(built) as st:
        for ds in st.datasets()["dataset"]:
            stat = lifelong_state.status(st, ds, kept_method())
            assert stat.items_usable and not stat.sort_stale and not stat.models_since_fit, (
                stat.sentence()
            )
            est, _ = lifelong_state.fitted(st, ds, kept_method())
            assert est is not None


@pytest.mark.slow
def test_refuses_to_overwrite_without_force(built, capsys):
    before = built.read_bytes()
    assert main(["build-demo", "--store", str(built)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--force" in err and err.count("\n") == 1
    assert built.read_bytes() == before


@pytest.mark.slow
def test_force_replaces_the_store(built):
    # The module's build ran with --force over a file holding b"not a store".
    from lifelong_core.store import Store

    with Store.open(built) as st:
        assert len(st.models()) >= 400
    assert sorted(p.name for p in built.parent.iterdir()) == ["demo.duckdb"]


def test_damaged_source_leaves_nothing_behind(tmp_path, capsys):
    src = tmp_path / "src"
    shutil.copytree(DEMO, src)
    (src / "domains.csv").write_text("dataset,domain\n")
    out = tmp_path / "out"
    out.mkdir()
    assert main(["build-demo", "--store", str(out / "d.duckdb"), "--source", str(src)]) == 2
    assert "domains.csv does not match its checksum" in capsys.readouterr().err
    assert list(out.iterdir()) == []


def test_missing_source_and_folder_are_one_line_errors(tmp_path, capsys):
    assert (
        main(
            [
                "build-demo",
                "--store",
                str(tmp_path / "d.duckdb"),
                "--source",
                str(tmp_path / "nope"),
            ]
        )
        == 2
    )
    assert "MANIFEST.json is missing" in capsys.readouterr().err
    assert main(["build-demo", "--store", str(tmp_path / "no" / "d.duckdb")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_failed_rebuild_keeps_the_old_store_and_leaves_no_temp_file(built, tmp_path, monkeypatch):
    from lifelong_core.commands import build_demo
    from lifelong_core.store import Store

    target = tmp_path / "keep.duckdb"
    shutil.copyfile(built, target)
    before = target.read_bytes()

    def boom(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "insert_matrix", boom)
    with pytest.raises(KeyboardInterrupt):
        build_demo.build_store(target, force=True)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.duckdb"]


def test_store_path_that_is_a_directory_is_an_input_error(tmp_path, capsys):
    assert main(["build-demo", "--store", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.slow
def test_leaderboard_is_the_second_dataset_as_the_importer_stores_it(built_output):
    """Real LLM results: sample ids <task>/<index>, one row per model name (the release
    lists 19 names twice with identical rows), the model without MATH-hard kept partial."""
    import json

    from lifelong_core.datasets import leaderboard
    from lifelong_core.store import Store

    path, out = built_output
    lb = leaderboard.load()
    assert len(lb.duplicated) == 19 and list(lb.partial) == ["Qwen/Qwen2-VL-7B-Instruct"]
    assert "19 model names appear twice in the release with identical rows" in out
    assert "Qwen/Qwen2-VL-7B-Instruct has no results on math_hard" in out
    with Store.open(path) as st:
        smp = st.samples(leaderboard.DATASET)
        assert smp["domain"].value_counts().to_dict() == {
            "ifeval": 541,
            "musr": 756,
            "math_hard": 894,
        }
        # Sample ids are the leaderboard's lm-eval items: column 523 of musr.npz is doc 17 of
        # its third subtask (250 + 256 columns before it), the last MATH-hard column doc 134
        # of the fifth.
        ids = smp["sample_id"].tolist()
        assert ids[0] == "leaderboard_ifeval/0" and ids[540] == "leaderboard_ifeval/540"
        assert ids[541 + 523] == "leaderboard_musr_team_allocation/17"
        assert ids[-1] == "leaderboard_math_precalculus_hard/134"
        assert st.harness_metrics(leaderboard.DATASET)["leaderboard_musr_object_placements"] == (
            "acc_norm",
            None,
        )
        models = st.models().set_index("model_id")
        names = lb.names
        assert len(names) == 429 and set(names) <= set(models.index)
        meta = json.loads(models.loc["Qwen/Qwen2-VL-7B-Instruct", "metadata"])
        assert meta["partial"] == "no results on MATH-hard"
        assert "partial" not in json.loads(models.loc[names[0], "metadata"])
        # Every stored row equals the release's row for that name (first listing).
        for task in leaderboard.TASKS:
            correct, listed = lb.tables[task]
            cols = smp.loc[smp["domain"] == task, "sample_idx"].to_numpy()
            for name in (listed[0], lb.duplicated[0], listed[-1]):
                row = int(np.flatnonzero(listed == name)[0])
                idx = int(models.loc[name, "model_idx"])
                assert np.array_equal(st.matrix([idx], cols)[0], correct[row])
        qwen = int(models.loc["Qwen/Qwen2-VL-7B-Instruct", "model_idx"])
        math_cols = smp.loc[smp["domain"] == "math_hard", "sample_idx"].to_numpy()
        assert not st.known([qwen], math_cols).any()
        desc = st.datasets().set_index("dataset").loc[leaderboard.DATASET, "description"]
        assert "<lm-eval task>/<doc_id>" in desc and "ascending doc_id" in desc
        assert "marked partial" in desc


def test_unusable_leaderboard_file_is_one_line_and_leaves_nothing(tmp_path, capsys):
    src = tmp_path / "lb"
    src.mkdir()
    for t in ("ifeval", "musr"):
        shutil.copy(
            Path(__file__).resolve().parents[2] / "data" / "open_llm_leaderboard_v2" / f"{t}.npz",
            src,
        )
    (src / "math_hard.npz").write_bytes(b"not an npz")
    out = tmp_path / "out"
    out.mkdir()
    assert main(["build-demo", "--store", str(out / "d.duckdb"), "--llm-source", str(src)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "math_hard.npz" in err and err.count("\n") == 1
    assert list(out.iterdir()) == []
