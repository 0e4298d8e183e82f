"""`build-demo`: the store equals the committed files; no overwrite without --force; no debris."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from lifelong_core.cli import main
from lifelong_core.datasets import demo_files

DEMO = Path(__file__).resolve().parents[1] / "data" / "lifelong_digits"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    assert main(["build-demo", "--store", str(path)]) == 0
    return path


def test_store_matrix_and_extras_equal_the_committed_files(built):
    from lifelong_core.store import Store

    d = demo_files.load_demo(DEMO)
    with Store.open(built) as st:
        assert np.array_equal(st.matrix(), d.correct)
        ex = st.extras()
        assert np.array_equal(ex["confidence"], d.confidence.astype(np.float32))
        assert np.array_equal(ex["true_prob"], d.true_prob.astype(np.float32))
        assert np.array_equal(ex["predicted"], d.predicted.astype(np.int32))
        models = st.models()
        assert models["model_id"].tolist() == d.models["model_id"].tolist()
        assert models["family"].tolist() == d.models["family"].tolist()
        assert models["release_order"].tolist() == d.models["release_order"].tolist()
        samples = st.samples()
        assert samples["sample_id"].tolist() == d.samples["sample_id"].tolist()
        assert samples["category"].tolist() == d.samples["category"].tolist()
        assert samples["label"].astype(int).tolist() == d.samples["label"].tolist()
        ds = st.datasets()
        assert ds["dataset"].tolist() == ["lifelong-digits"] and not ds["synthetic"].any()
        counts = st.counts()
        assert set(counts["category"]) == {"handwriting", "acquisition", "geometric"}
        assert len(st.domains()) == len(d.domains)
    assert sorted(p.name for p in built.parent.iterdir()) == ["demo.duckdb"]


def test_refuses_to_overwrite_without_force(built, capsys):
    before = built.read_bytes()
    assert main(["build-demo", "--store", str(built)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--force" in err and err.count("\n") == 1
    assert built.read_bytes() == before


def test_force_replaces_the_store(tmp_path):
    from lifelong_core.store import Store

    path = tmp_path / "s.duckdb"
    path.write_bytes(b"not a store")
    assert main(["build-demo", "--store", str(path), "--force"]) == 0
    with Store.open(path) as st:
        assert len(st.models()) >= 400
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb"]


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
    assert main(["build-demo", "--store", str(tmp_path / "d.duckdb"), "--source", str(tmp_path / "nope")]) == 2
    assert "MANIFEST.json is missing" in capsys.readouterr().err
    assert main(["build-demo", "--store", str(tmp_path / "no" / "d.duckdb")]) == 2
    assert "does not exist" in capsys.readouterr().err


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
