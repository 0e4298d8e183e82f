"""Hostile and careless input at the command line and in the readers.

Each test names what it guards (a silent column shift, unbounded lengths, tracebacks
instead of one sentence, unbounded work); the app's findings are in
tests/app/test_ui_hostile_use.py. Every refusal must be one line on stderr, exit 2, store unchanged.
"""

from __future__ import annotations

import errno
import io
import os

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.io.limits import MAX_TEXT_CHARS
from tests.store_content import content


def fail(argv, capsys) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert (
        rc == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    ), err
    return err


def ok(argv, capsys) -> str:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out


@pytest.fixture
def small_store(tmp_path, capsys):
    """A real store with 3 models x 4 samples, made by the importer."""
    rows = [
        (m, s, (i + j) % 2)
        for i, m in enumerate(("m-a", "m-b", "m-c"))
        for j, s in enumerate("wxyz")
    ]
    src = tmp_path / "seed.csv"
    pd.DataFrame(rows, columns=["model", "sample", "correct"]).assign(dataset="d").to_csv(
        src, index=False
    )
    db = tmp_path / "s.duckdb"
    ok(["import", "--store", db, "--long", src], capsys)
    return db


# ------------------------------------------------------------------ finding 1: CSV shift
def test_every_row_one_field_longer_is_refused_not_shifted(tmp_path, small_store, capsys):
    # The fuzz case: an unquoted comma inside a model id; read_csv used to take the first
    # column as the index and import every column shifted, with exit 0.
    bad = tmp_path / "shift.csv"
    bad.write_text("model,sample,correct\nnb[prep=raw,var=0.01],w,1\nnb[prep=raw,var=0.02],x,0\n")
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--long", bad], capsys)
    assert "data row 1 (line 2) has 4 fields but the header has 3" in err
    assert content(small_store) == before


@pytest.mark.parametrize(
    "body, row, line, fields",
    [
        ("a,w,1,EXTRA\nb,x,0\n", 1, 2, 4),  # only the first row long: named, not row 2
        ("a,w,1\nb,x,0\nc,y,1,EXTRA\n", 3, 4, 4),
        ("a,w,1\nb,x\n", 2, 3, 2),  # short rows were padded with missing values
        ("a,w,1\n\nb,x\n", 2, 4, 2),  # blank lines are skipped but counted as lines
    ],
)
def test_ragged_row_named_by_data_row_and_line(tmp_path, body, row, line, fields):
    from lifelong_core.io.tables import read_csv_table

    p = tmp_path / "t.csv"
    p.write_text("model,sample,correct\n" + body)
    with pytest.raises(
        InputError,
        match=rf"data row {row} \(line {line}\) has {fields} fields but the header has 3",
    ):
        read_csv_table(p, "t.csv")


def test_quoted_commas_and_newlines_are_fine(tmp_path):
    from lifelong_core.io.tables import read_csv_table

    p = tmp_path / "t.csv"
    p.write_text('model,sample,correct\n"nb[a=1,b=2]","two\nlines",1\n')
    df = read_csv_table(p, "t.csv")
    assert df.to_dict("list") == {
        "model": ["nb[a=1,b=2]"],
        "sample": ["two\nlines"],
        "correct": ["1"],
    }


def _counts(data):
    from lifelong_core.stats import read_counts_csv

    return read_counts_csv(io.BytesIO(data), name="counts.csv")


def _predictions(data, tmp_path):
    from lifelong_core.matching.data import read_predictions_csv

    p = tmp_path / "p.csv"
    p.write_bytes(data)
    return read_predictions_csv(p)


def _upload(data):
    from lifelong_core.workflows.arrivals import read_results

    return read_results(data, "up.csv", ("sample_id", "correct"))


@pytest.mark.parametrize(
    "reader, text",
    [
        (lambda d, t: _counts(d), b"model,task,category,correct,total\nm,a,b,1,2,3\nn,a,b,1,2,3\n"),
        (_predictions, b"y,y_pred,p\n1,1,0.5,9\n0,1,0.2,9\n"),
        (lambda d, t: _upload(d), b"sample_id,correct\nx,1,0\ny,0,1\n"),
    ],
)
def test_every_csv_reader_refuses_the_shift(tmp_path, reader, text):
    with pytest.raises(InputError, match="data row 1 \\(line 2\\)"):
        reader(text, tmp_path)


# ------------------------------------------------------------------ finding 2: lengths
def test_long_model_id_refused_with_one_sentence(tmp_path, small_store, capsys):
    p = tmp_path / "long.csv"
    pd.DataFrame({"model": ["x" * 20_000], "sample": ["w"], "correct": [1]}).to_csv(p, index=False)
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--long", p], capsys)
    assert "20,000 characters" in err and f"at most {MAX_TEXT_CHARS}" in err and len(err) < 400
    assert content(small_store) == before


def test_long_dataset_name_and_metadata_refused(tmp_path, small_store, capsys):
    p = tmp_path / "ok.csv"
    pd.DataFrame({"model": ["new"], "sample": ["w2"], "correct": [1]}).to_csv(p, index=False)
    err = fail(["import", "--store", small_store, "--long", p, "--dataset", "d" * 600], capsys)
    assert "dataset name is 600 characters" in err
    np.save(tmp_path / "A.npy", np.ones((1, 1), np.uint8))
    (tmp_path / "s.txt").write_text("w9\n")
    meta = pd.DataFrame({"model_id": ["mm"], "metadata": ['{"k": "' + "v" * 70_000 + '"}']})
    meta.to_csv(tmp_path / "m.csv", index=False)
    err = fail(
        [
            "import",
            "--store",
            small_store,
            "--matrix",
            tmp_path / "A.npy",
            "--models",
            tmp_path / "m.csv",
            "--samples",
            tmp_path / "s.txt",
        ],
        capsys,
    )
    assert "metadata" in err and "at most" in err


def test_info_stays_small_after_limits(small_store, capsys):
    out = ok(["info", "--store", small_store], capsys)
    assert len(out) < 5_000


# ------------------------------------------------------------------ finding 6: tracebacks
@pytest.mark.parametrize(
    "cmd",
    [
        ["sweep", "--matrix", "{A}", "--sort-models", "2", "--seed", "-1", "--out", "{o}"],
        ["rank", "--counts", "{c}", "--seed", "-1", "--out", "{o}"],
        ["match", "--source", "{p}", "--target", "{p}", "--seed", "-1", "--out", "{o}"],
        ["match", "--source", "{p}", "--target", "{p}", "--seed", str(10**30), "--out", "{o}"],
    ],
)
def test_negative_or_huge_seed(tmp_path, capsys, cmd):
    np.save(tmp_path / "A.npy", (np.arange(40).reshape(4, 10) % 3 == 0).astype(np.uint8))
    (tmp_path / "c.csv").write_text("model,task,category,correct,total\nm,t,c,1,2\nn,t,c,2,2\n")
    (tmp_path / "p.csv").write_text("y,y_pred,p\n1,1,0.9\n0,1,0.6\n")
    paths = {
        "A": tmp_path / "A.npy",
        "c": tmp_path / "c.csv",
        "p": tmp_path / "p.csv",
        "o": tmp_path / "out.csv",
    }
    err = fail([a.format(**paths) for a in cmd], capsys)
    assert "--seed: the seed must be a whole number from 0" in err


def test_match_runs_bounded(tmp_path, capsys):
    (tmp_path / "p.csv").write_text("y,y_pred,p\n1,1,0.9\n0,1,0.6\n")
    err = fail(
        [
            "match",
            "--source",
            tmp_path / "p.csv",
            "--target",
            tmp_path / "p.csv",
            "--runs",
            "1000000000",
            "--out",
            tmp_path / "o.json",
        ],
        capsys,
    )
    assert "--runs: the number of runs must be at most 1,000" in err


def test_rank_on_a_directory(tmp_path, capsys):
    err = fail(["rank", "--counts", tmp_path, "--out", tmp_path / "r.csv"], capsys)
    assert "is a directory" in err


def test_counts_of_1e300(tmp_path, capsys):
    p = tmp_path / "c.csv"
    p.write_text("model,task,category,correct,total\nm,t,c,1e300,1e300\nn,t,c,1,2\n")
    err = fail(["rank", "--counts", p, "--out", tmp_path / "r.csv"], capsys)
    assert "column 'correct': '1e300' is larger than" in err


def test_unreadable_inputs(tmp_path, small_store, capsys, monkeypatch):
    # Root ignores file modes, so the OS refusal is simulated where the file is read.
    p = tmp_path / "x.csv"
    p.write_text("model,sample,correct\na,w,1\n")
    ids = tmp_path / "ids.txt"
    ids.write_text("a\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "samples_t_2024-01-01T00-00-00.jsonl").write_text('{"doc_id": 0, "acc": 1}\n')
    real_open = open

    def deny(path, *a, **k):
        if str(path).startswith(str(tmp_path)) and not str(path).endswith(".duckdb"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *a, **k)

    real_os_open = os.open

    def deny_fd(path, *a, **k):
        if str(path).startswith(str(tmp_path)) and not str(path).endswith(".duckdb"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr("pathlib.Path.read_bytes", lambda self: deny(self).read())
    monkeypatch.setattr("pathlib.Path.read_text", lambda self, **k: deny(self).read())
    monkeypatch.setattr("builtins.open", deny)
    monkeypatch.setattr("os.open", deny_fd)
    before = content(small_store)
    assert "permission denied" in fail(["import", "--store", small_store, "--long", p], capsys)
    assert "permission denied" in fail(
        ["import", "--store", small_store, "--lm-eval", run, "--model", "z"], capsys
    )
    monkeypatch.undo()
    assert content(small_store) == before


def test_oversized_npy_header(tmp_path, small_store, capsys):
    # A 100-byte file whose header claims 10^13 elements: np.load would try to allocate it.
    p = tmp_path / "huge.npy"
    with open(p, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "|u1", "fortran_order": False, "shape": (10**13,)}
        )
        f.write(b"\x01" * 16)
    np.save(tmp_path / "A.npy", np.ones((1, 1), np.uint8))
    (tmp_path / "m.txt").write_text("a\n")
    (tmp_path / "s.txt").write_text("w\n")
    err = fail(
        [
            "import",
            "--store",
            small_store,
            "--matrix",
            tmp_path / "A.npy",
            "--models",
            tmp_path / "m.txt",
            "--samples",
            tmp_path / "s.txt",
            "--confidence",
            p,
        ],
        capsys,
    )
    assert "claims shape (10000000000000,)" in err and "truncated or corrupt" in err
    err = fail(
        [
            "import",
            "--store",
            small_store,
            "--matrix",
            p,
            "--models",
            tmp_path / "m.txt",
            "--samples",
            tmp_path / "s.txt",
        ],
        capsys,
    )
    assert "truncated or corrupt" in err or "claims" in err


@pytest.mark.parametrize("flag, name", [("--matrix", "a.npy"), ("--long", "a.csv")])
def test_export_into_missing_folder_or_onto_directory(tmp_path, small_store, capsys, flag, name):
    err = fail(["export", "--store", small_store, flag, tmp_path / "nope" / name], capsys)
    assert "does not exist" in err
    d = tmp_path / name
    d.mkdir()
    assert "is a directory" in fail(["export", "--store", small_store, flag, d], capsys)


def test_full_disk_leaves_no_partial_export(tmp_path, small_store, capsys, monkeypatch):
    real_save = np.save

    def full(path, arr, **k):
        real_save(path, arr[:1], **k)  # some bytes reach the disk, then it is full
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(np, "save", full)
    out = tmp_path / "A.npy"
    err = fail(
        ["export", "--store", small_store, "--matrix", out, "--models", tmp_path / "m.txt"], capsys
    )
    assert "the disk is full" in err
    assert sorted(os.listdir(tmp_path)) == sorted(["s.duckdb", "seed.csv"]), os.listdir(tmp_path)


def test_export_long_full_disk(tmp_path, small_store, capsys, monkeypatch):
    def full(self, path, *a, **k):
        with open(path, "w") as f:
            f.write("model,sample")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    assert "the disk is full" in fail(
        ["export", "--store", small_store, "--long", tmp_path / "x.csv"], capsys
    )
    assert not (tmp_path / "x.csv").exists() and not [f for f in os.listdir(tmp_path) if "tmp" in f]
