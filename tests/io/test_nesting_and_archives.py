"""JSON nested too deeply, archives of too many files, zips named as the user named them.

``"[" * 100000 + "]" * 100000`` as an lm-eval results file, a samples line or a metadata
cell raised ``RecursionError`` in ``import`` (a folder of 200 runs crashed instead of
skipping the one run), ``estimate`` and the API. Archives were unpacked by two
extractions, one without the limits; ``estimate --lm-eval x.zip`` was refused although
``import`` takes zips; messages and the store's log named the temporary folder a zip had
been unpacked into, which no longer existed. A Parquet long table whose ``model`` column
is a list type imported ids such as ``"['a']"``.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lifelong_core as lbe
from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.io.limits import MAX_JSON_DEPTH
from lifelong_core.store import Store
from tests.store_content import content
from tests.user_store import TS, lm_eval_runs

DEEP = "[" * 100_000 + "]" * 100_000


def fail(argv, capsys) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    # A folder of runs reports its progress on stderr first; the error is the last line.
    err = err.splitlines(keepends=True)[-1] if err.startswith("[") else err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1, (rc, err)
    assert "Traceback" not in err and "RecursionError" not in err
    return err


@pytest.fixture
def small_store(tmp_path) -> Path:
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["x", "y", "z"], dataset="d")
    return path


@pytest.fixture
def runs(tmp_path) -> dict[str, Path]:
    return lm_eval_runs(tmp_path / "runs")


def _deepen(run: Path, where: str) -> None:
    if where == "results":
        (run / f"results_{TS}.json").write_text(DEEP)
    else:
        samples = sorted(run.glob("samples_*.jsonl"))[0]
        lines = samples.read_text().splitlines()
        lines[1] = json.dumps({**json.loads(lines[1]), "extra": 0})[:-1] + ', "deep": ' + DEEP + "}"
        samples.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("where", ["results", "samples line"])
def test_deep_json_in_one_run_is_one_sentence(runs, small_store, where, capsys):
    run = sorted(runs.values())[0]
    _deepen(run, where)
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--lm-eval", run], capsys)
    assert f"more than {MAX_JSON_DEPTH} levels deep" in err, err
    assert content(small_store) == before
    with pytest.raises(InputError, match="levels deep"):
        lbe.import_lm_eval(small_store, run)


@pytest.mark.parametrize("where", ["results", "samples line"])
def test_deep_json_in_a_folder_of_runs_skips_that_run_unless_strict(
    runs, small_store, where, capsys
):
    bad = sorted(runs.values())[0]
    _deepen(bad, where)
    folder = bad.parent
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--lm-eval", folder, "--strict"], capsys)
    assert f"run {bad.name} of" in err and "levels deep" in err, err
    assert content(small_store) == before
    assert main(["import", "--store", str(small_store), "--lm-eval", str(folder)]) == 0
    out = capsys.readouterr()
    assert f"skipped run {bad.name}:" in out.err and "levels deep" in out.err
    assert f"from {len(runs) - 1} of {len(runs)} runs" in out.out


def test_deep_json_in_a_metadata_cell(tmp_path, small_store, capsys):
    np.save(tmp_path / "one.npy", np.ones((1, 1), np.uint8))
    deep = "[" * 30_000 + "]" * 30_000  # within the cell limit, far beyond any real metadata
    pd.DataFrame({"model_id": ["m"], "metadata": [deep]}).to_csv(tmp_path / "m.csv", index=False)
    (tmp_path / "s.txt").write_text("x\n")
    argv = ["import", "--store", small_store, "--matrix", tmp_path / "one.npy"]
    argv += ["--models", tmp_path / "m.csv", "--samples", tmp_path / "s.txt"]
    err = fail(argv, capsys)
    assert "row 1 column 'metadata' nests arrays or objects" in err, err


def test_deep_results_in_estimate(runs, small_store, tmp_path, capsys):
    run = sorted(runs.values())[0]
    _deepen(run, "results")
    err = fail(["estimate", "--store", small_store, "--lm-eval", run, "--model", "n"], capsys)
    assert "levels deep" in err


# ------------------------------------------------------------------ archives
def _zip(folder: Path, out: Path, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(folder.parent))
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return out


def test_an_archive_of_too_many_files_is_refused_before_anything_is_unpacked(
    runs, small_store, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("LBE_MAX_ARCHIVE_FILES", "50")
    many = {f"runs/empty/{i}.txt": b"" for i in range(60)}
    z = _zip(sorted(runs.values())[0], tmp_path / "many.zip", many)
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--lm-eval", z], capsys)
    assert "holds" in err and "more than the limit of 50 on the files in one archive" in err
    assert "LBE_MAX_ARCHIVE_FILES" in err
    assert content(small_store) == before


def test_a_zip_is_named_as_the_user_named_it_never_by_its_temporary_folder(
    runs, small_store, tmp_path, capsys
):
    bad = sorted(runs.values())[0]
    samples = sorted(bad.glob("samples_*.jsonl"))[0]
    samples.write_text(samples.read_text() + "not json\n")
    z = _zip(bad.parent, tmp_path / "all.zip")
    assert main(["import", "--store", str(small_store), "--lm-eval", str(z)]) == 0
    out = capsys.readouterr()
    reason = next(line for line in out.err.splitlines() if line.startswith("skipped run"))
    assert f"{z}/runs/{bad.name}/{samples.name} line" in reason, reason
    assert "lbe-lm-eval-" not in out.err + out.out
    with Store.open(small_store) as st:
        sources = st.log()["source"].tolist()
    assert sources[-1] == f"lm-eval:{z}" and not any("lbe-lm-eval-" in s for s in sources)


def test_one_run_zipped_keeps_the_zip_in_its_log_entry(runs, small_store, tmp_path):
    run = sorted(runs.values())[1]
    z = _zip(run, tmp_path / "one.zip")
    assert main(["import", "--store", str(small_store), "--lm-eval", str(z)]) == 0
    with Store.open(small_store) as st:
        source = st.log()["source"].tolist()[-1]
    assert source.startswith(f"lm-eval:{z}") and "lbe-lm-eval-" not in source, source


def test_estimate_takes_a_zip_of_the_run_as_import_does(runs, tmp_path, capsys):
    names = sorted(runs)
    store = tmp_path / "cache.duckdb"
    for name in names[1:]:
        assert main(["import", "--store", str(store), "--lm-eval", str(runs[name])]) == 0
    capsys.readouterr()
    z = _zip(runs[names[0]], tmp_path / "new.zip")
    argv = ["estimate", "--store", str(store), "--lm-eval", str(z), "--model", "new"]
    assert main(argv) == 0, capsys.readouterr().err
    zipped = capsys.readouterr().out
    assert main(argv[:4] + [str(runs[names[0]])] + argv[5:]) == 0
    assert capsys.readouterr().out == zipped  # the same estimate as from the folder


def test_parquet_model_column_of_lists_is_refused(tmp_path, small_store, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"model": pa.array([["a"], ["b"]]), "sample": ["x", "y"], "correct": [1, 0]})
    pq.write_table(table, tmp_path / "l.parquet")
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--long", tmp_path / "l.parquet"], capsys)
    assert "row 1 column 'model' holds a list, not a single value" in err, err
    assert content(small_store) == before
