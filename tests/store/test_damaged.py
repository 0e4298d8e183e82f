"""Regression tests of finding 5 (damaged stores) and finding 4's missing way back
(``check`` and ``undo``), on real DuckDB files."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.store import Store
from lifelong_core.store.maintenance import undo, verify


def run(argv, capsys) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return rc, out.out, out.err


def matrix_content(path):
    with Store.open(path) as st:
        return (
            st.models().drop(columns="added_at").to_csv(),
            st.samples().drop(columns="added_at").to_csv(),
            st.datasets().drop(columns="added_at", errors="ignore").to_csv(),
            st.known().tobytes(),
            np.where(st.known(), st.values_and_known(None, None)[0], 0).tobytes(),
        )


@pytest.fixture
def store(tmp_path):
    p = tmp_path / "s.duckdb"
    with Store.create(p) as st:
        A = (np.add.outer(np.arange(5), np.arange(70_000)) % 3 == 0).astype(np.uint8)  # two blocks
        st.insert_matrix(
            A, [f"m{i}" for i in range(5)], [f"s{j}" for j in range(70_000)], dataset="d"
        )
    return p


def test_check_passes_on_a_sound_store(store, capsys):
    rc, out, _ = run(["check", "--store", store], capsys)
    assert rc == 0 and "ok" in out


def _damage(path, fraction=0.5, nbytes=16_384):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(int(size * fraction))
        f.write(np.random.default_rng(0).integers(0, 256, nbytes, dtype=np.uint8).tobytes())


def test_corrupted_store_fails_check_and_refuses_imports(store, tmp_path, capsys):
    _damage(store)
    rc, out, _ = run(["check", "--store", store], capsys)
    assert rc == 1 and "damaged" in out
    src = tmp_path / "n.csv"
    pd.DataFrame({"model": ["new"], "sample": ["s0"], "correct": [1]}).to_csv(src, index=False)
    rc, _, err = run(["import", "--store", store, "--long", src], capsys)
    assert (
        rc == 2
        and "fails its integrity check, so nothing is written" in err
        and err.count("\n") == 1
    )


def test_truncated_store_gives_one_sentence_everywhere(store, tmp_path, capsys):
    os.truncate(store, os.path.getsize(store) // 3)
    for argv in (
        ["info", "--store", store],
        ["export", "--store", store, "--matrix", tmp_path / "A.npy"],
        ["check", "--store", store],
    ):
        rc, out, err = run(argv, capsys)
        assert rc in (1, 2), (argv, rc)
        text = err if rc == 2 else out
        assert "damaged" in text or "truncated" in text or "not a DuckDB" in text, text
        if rc == 2:
            assert err.count("\n") == 1
    assert not (tmp_path / "A.npy").exists()


def test_check_names_a_broken_rule(store, capsys):
    import duckdb

    con = duckdb.connect(str(store))
    con.execute(
        "UPDATE bits SET correct = correct || '\\x00'::BLOB WHERE model_idx = 1 AND block_id = 0"
    )
    con.execute("DELETE FROM samples WHERE sample_idx = 3")
    con.close()
    with Store.open(store) as st:
        problems = verify(st)
    assert any("'correct' blob whose length does not fit" in p for p in problems)
    assert any("samples.sample_idx is not 0..69998" in p for p in problems)


def test_undo_removes_exactly_one_import(store, tmp_path, capsys):
    before = matrix_content(store)
    # Import 1: a new model on the old samples plus two new samples in a new dataset.
    src = tmp_path / "n.csv"
    pd.DataFrame(
        {
            "model": ["new", "new", "m0"],
            "sample": ["s5", "q1", "q2"],
            "correct": [1, 0, 1],
            "dataset": ["d", "nd", "nd"],
        }
    ).to_csv(src, index=False)
    rc, out, err = run(["import", "--store", store, "--long", src], capsys)
    assert rc == 0, err
    log_id = int(out.split("log entry ")[1].split(")")[0])
    rc, out, err = run(["undo", "--store", store, log_id], capsys)
    assert rc == 0, err
    assert "removed 1 models, 2 samples and 3 entries" in out
    assert matrix_content(store) == before
    rc, out, _ = run(["check", "--store", store], capsys)
    assert rc == 0, out
    rc, _, err = run(["undo", "--store", store, log_id], capsys)
    assert rc == 2 and "already undone" in err


def test_undo_refuses_what_it_cannot_do_exactly(store, tmp_path, capsys):
    a = tmp_path / "a.csv"
    pd.DataFrame({"model": ["x"], "sample": ["s0"], "correct": [1]}).to_csv(a, index=False)
    b = tmp_path / "b.csv"
    pd.DataFrame({"model": ["y"], "sample": ["s0"], "correct": [0]}).to_csv(b, index=False)
    run(["import", "--store", store, "--long", a], capsys)
    run(["import", "--store", store, "--long", b], capsys)
    rc, _, err = run(["undo", "--store", store, 1], capsys)
    assert rc == 2 and "Models were added after log entry 1 (log 2)" in err
    # An import that only fills in entries of existing models and samples.
    c = tmp_path / "c.csv"
    pd.DataFrame({"model": ["y"], "sample": ["s1"], "correct": [1]}).to_csv(c, index=False)
    run(["import", "--store", store, "--long", c], capsys)
    rc, _, err = run(["undo", "--store", store, 3], capsys)
    assert rc == 2 and "cannot be told apart" in err
    before = matrix_content(store)
    with Store.open(store, read_only=False) as st, pytest.raises(InputError, match="no entry 99"):
        undo(st, 99)
    assert matrix_content(store) == before


def test_app_undo_goes_through_the_write_path(store, monkeypatch):
    from ui.shared_store import write
    from ui.stores import undo_import

    monkeypatch.setenv("LBE_STORE", str(store))
    before = matrix_content(store)
    row = write(
        store,
        lambda w: w.insert_matrix(
            np.ones((1, 70_000), np.uint8), ["app-model"], [f"s{j}" for j in range(70_000)]
        ),
        "127.0.0.1",
    )
    summary = undo_import(row["log_id"])
    assert summary["new_models"] == -1
    assert matrix_content(store) == before


@pytest.mark.slow
def test_full_disk_during_an_import_names_the_cause(tmp_path, store):
    """A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes DuckDB's writes fail the way
    a full disk does; the sentence names the write failure, and the content is unchanged."""
    import subprocess
    import sys

    from tests.store_content import content

    db = store  # freshly written: no free pages inside the file to absorb the import
    np.save(
        tmp_path / "big.npy",
        (np.random.default_rng(0).random((50, 200_000)) < 0.5).astype(np.uint8),
    )
    (tmp_path / "m.txt").write_text("".join(f"bm{i}\n" for i in range(50)))
    (tmp_path / "s.txt").write_text("".join(f"bs{i}\n" for i in range(200_000)))
    limit = os.path.getsize(db)
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from lifelong_core.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    before = content(db)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "import",
            "--store",
            str(db),
            "--matrix",
            str(tmp_path / "big.npy"),
            "--models",
            str(tmp_path / "m.txt"),
            "--samples",
            str(tmp_path / "s.txt"),
            "--dataset",
            "big",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        proc.stderr.count("\n") == 1
        and "Cannot write to store" in proc.stderr
        and "rollback" not in proc.stderr
    )
    assert content(db) == before


@pytest.mark.parametrize("fraction", [0.36, 0.5, 0.74, 0.96])
def test_opening_a_store_damaged_anywhere_is_one_sentence(store, fraction):
    """The first read of a store (what every page and command does on opening it) decodes
    every column of its tables: damage in any of them is the one sentence, never another
    error escaping from the read."""
    from lifelong_core.store import check_readable

    _damage(store, fraction=fraction, nbytes=4096)
    with pytest.raises(InputError, match=r"damaged|truncated|not a DuckDB"):
        check_readable(store)
