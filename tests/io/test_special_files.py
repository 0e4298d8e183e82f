"""Readers open regular files only, and bound what they read before any limit applies.

A samples file of an lm-eval run that was a link to ``/dev/zero``, ``/dev/urandom`` or a
pipe made ``import --lm-eval`` and ``estimate`` hang (the file was hashed whole before
any line was read; a pipe waits for a writer); a 20 GB sparse file was read for 37 s
before the line limit refused it; ``/dev/zero`` given as an input was "empty" or "did not
exist". Every such input is now one sentence within seconds, the store unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from lifelong_core.cli import main
from lifelong_core.store import Store
from tests.store_content import content
from tests.user_store import lm_eval_runs

MIB = 1 << 20


def fail(argv, capsys) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1, (rc, err)
    return err


@pytest.fixture
def small_store(tmp_path) -> Path:
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["x", "y", "z"], dataset="d")
    return path


def _special(kind: str, where: Path) -> Path:
    """A path of ``kind`` at ``where``: a pipe, or a link to a device."""
    if kind == "fifo":
        os.mkfifo(where)
    else:
        where.symlink_to(f"/dev/{kind}")
    return where


SPECIAL = ["fifo", "zero", "urandom"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_samples_file_that_is_a_pipe_or_a_device_is_refused(tmp_path, small_store, kind, capsys):
    run = next(iter(lm_eval_runs(tmp_path / "runs").values()))
    samples = sorted(run.glob("samples_*.jsonl"))[0]
    samples.unlink()
    _special(kind, samples)
    before = content(small_store)
    argv = ["import", "--store", small_store, "--lm-eval", run, "--model", "new"]
    err = fail(argv, capsys)
    assert samples.name in err and "not a regular file" in err, err
    assert content(small_store) == before


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_run_with_such_a_file_in_a_folder_of_runs_is_skipped_with_its_reason(
    tmp_path, small_store, kind, capsys
):
    runs = lm_eval_runs(tmp_path / "runs")
    bad = sorted(runs.values())[0]
    samples = sorted(bad.glob("samples_*.jsonl"))[0]
    samples.unlink()
    _special(kind, samples)
    assert main(["import", "--store", str(small_store), "--lm-eval", str(tmp_path / "runs")]) == 0
    err = capsys.readouterr().err
    assert f"skipped run {bad.name}:" in err and "not a regular file" in err, err


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", SPECIAL)
def test_every_input_flag_refuses_a_pipe_or_a_device(tmp_path, small_store, kind, capsys):
    special = _special(kind, tmp_path / f"in-{kind}.csv")
    before = content(small_store)
    for argv in (
        ["import", "--store", small_store, "--long", special],
        ["import", "--store", small_store, "--lm-eval", special, "--model", "m"],
        [
            "import",
            "--store",
            small_store,
            "--matrix",
            special,
            "--models",
            special,
            "--samples",
            special,
        ],
        ["import", "--store", small_store, "--inspect", special],
        ["info", "--store", special],
    ):
        err = fail(argv, capsys)
        # Never "empty" or "does not exist": it is there, and it is not a file to read.
        assert "not a regular file" in err and "empty" not in err, err
    assert content(small_store) == before


@pytest.mark.timeout(60)
def test_a_huge_sparse_samples_file_is_refused_at_the_line_limit(
    tmp_path, small_store, capsys, monkeypatch
):
    # 20 GB of holes, no line end in it: the line limit stops the read after 1 MiB, and the
    # checksum is taken from the same bytes (never a whole pass over the file first).
    monkeypatch.setenv("LBE_MAX_LINE_MB", "1")
    run = next(iter(lm_eval_runs(tmp_path / "runs").values()))
    samples = sorted(run.glob("samples_*.jsonl"))[0]
    with open(samples, "r+b") as fh:
        fh.truncate(20 << 30)
    seen = []

    import hashlib

    real = hashlib.sha256

    class Counting:
        def __init__(self):
            self.h = real()

        def update(self, data):
            seen.append(len(data))
            self.h.update(data)

        def hexdigest(self):
            return self.h.hexdigest()

    monkeypatch.setattr("lifelong_core.io.lm_eval.hashlib.sha256", Counting)
    err = fail(["import", "--store", small_store, "--lm-eval", run, "--model", "new"], capsys)
    assert "line 71 is longer than the limit of 1 MiB" in err, err  # after its 70 items
    assert sum(seen) < 8 * MIB, sum(seen)  # a few buffers, not 20 GB


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", SPECIAL)
def test_estimate_refuses_a_pipe_or_a_device_as_the_run(tmp_path, kind, capsys):
    link = _special(kind, tmp_path / "samples_arc_2025-03-04T05-06-07.000008.jsonl")
    store = tmp_path / "s.duckdb"
    with Store.create(store) as st:
        st.insert_matrix(
            np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["arc/0", "arc/1", "arc/2"], dataset="d"
        )
    err = fail(["estimate", "--store", store, "--lm-eval", link, "--model", "n"], capsys)
    assert "not a regular file" in err, err
