"""Store: lock story across processes, and a SIGKILL in the middle of a large import."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from lifelong_core.errors import StoreLockedError
from lifelong_core.store import Store
from tests.store.test_errors import store_digest

ROOT = Path(__file__).resolve().parents[2]

HOLD = textwrap.dedent("""
    import sys, time
    from lifelong_core.store import Store
    st = Store.open(sys.argv[1], read_only=sys.argv[2] == "ro")
    print("ready", flush=True)
    time.sleep(120)
""")


def _spawn(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _wait_for(proc: subprocess.Popen, word: str) -> None:
    line = proc.stdout.readline()
    if word not in line:
        proc.kill()
        raise AssertionError(f"helper process said {line!r}; stderr: {proc.stderr.read()}")


@pytest.fixture
def small_store(tmp_path) -> Path:
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["x", "y", "z"], dataset="d")
    return path


@pytest.mark.slow
def test_writer_in_another_process_locks_out_writers_and_readers(small_store):
    holder = _spawn(HOLD, str(small_store), "rw")
    try:
        _wait_for(holder, "ready")
        with pytest.raises(
            StoreLockedError,
            match=r"Cannot write to store .* locked by another process \(process \d+\)",
        ):
            Store.open(small_store, read_only=False)
        with pytest.raises(StoreLockedError, match="locked by another process"):
            Store.open(small_store, read_only=True)
        cli = subprocess.run(
            [sys.executable, "-m", "lifelong_core", "info", "--store", str(small_store)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert cli.returncode == 2
        assert (
            cli.stderr.count("\n") == 1
            and cli.stderr.startswith("error: Cannot read store")
            and "locked" in cli.stderr
        )
    finally:
        holder.kill()
        holder.wait()
    with Store.open(small_store, read_only=False) as st:  # the lock goes with the process
        assert st.n_models == 3


def test_readers_share_but_block_a_writer(small_store):
    holder = _spawn(HOLD, str(small_store), "ro")
    try:
        _wait_for(holder, "ready")
        with Store.open(small_store, read_only=True) as st:
            assert np.array_equal(st.matrix(), np.eye(3, dtype=np.uint8))
        with pytest.raises(StoreLockedError, match="Cannot write to store"):
            Store.open(small_store, read_only=False)
    finally:
        holder.kill()
        holder.wait()


def test_same_process_other_mode_is_a_clear_error(small_store):
    with (
        Store.open(small_store, read_only=True),
        pytest.raises(StoreLockedError, match="already has it open in the other mode"),
    ):
        Store.open(small_store, read_only=False)


KILLED_IMPORT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from lifelong_core.store import Store
    m, n = 150, 300_000
    A = (np.random.default_rng(1).random((m, n), dtype=np.float32) < 0.5).view(np.uint8)
    def progress(fraction):
        # Mid-transaction: some blocks are written, the commit has not happened.
        print(f"writing {fraction:.2f}", flush=True)
        time.sleep(120)
    with Store.open(sys.argv[1], read_only=False) as st:
        st.insert_matrix(A, [f"k{i}" for i in range(m)], [f"q{j}" for j in range(n)], dataset="big",
                         progress=progress)
""")


@pytest.mark.slow
def test_sigkill_mid_import_leaves_store_unchanged(small_store):
    before = store_digest(small_store)
    proc = _spawn(KILLED_IMPORT, str(small_store))
    try:
        _wait_for(proc, "writing")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert store_digest(small_store) == before
    with Store.open(small_store, read_only=False) as st:
        assert st.n_models == 3 and st.n_samples == 3
        assert np.array_equal(st.matrix(), np.eye(3, dtype=np.uint8))
        st.insert_matrix(np.ones((1, 3), np.uint8), ["after"], ["x", "y", "z"])  # still writable
        assert len(st.log()) == 2


@pytest.mark.slow
def test_cli_import_killed_at_random_moments_is_all_or_nothing(small_store, tmp_path):
    """No hook: kill a real CLI import after various delays; each time the store holds
    either nothing of it or all of it."""
    m, n = 60, 200_000
    A = (np.random.default_rng(2).random((m, n), dtype=np.float32) < 0.5).view(np.uint8)
    np.save(tmp_path / "A.npy", A)
    (tmp_path / "m.txt").write_text("".join(f"k{i}\n" for i in range(m)))
    (tmp_path / "s.txt").write_text("".join(f"q{j}\n" for j in range(n)))
    before = store_digest(small_store)
    outcomes = set()
    for delay in (0.7, 1.5, 2.5):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lifelong_core",
                "import",
                "--store",
                str(small_store),
                "--matrix",
                str(tmp_path / "A.npy"),
                "--models",
                str(tmp_path / "m.txt"),
                "--samples",
                str(tmp_path / "s.txt"),
                "--dataset",
                "big",
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with Store.open(small_store, read_only=True) as st:
            if st.n_models == 3:
                outcomes.add("nothing")
                assert st.n_samples == 3 and store_digest(small_store) == before
            else:
                outcomes.add("all")
                assert (st.n_models, st.n_samples) == (63, n + 3)
                assert np.array_equal(st.matrix(range(3, 63), range(3, n + 3)), A)
                return
    assert outcomes == {"nothing"}


def test_one_writer_per_process_too(small_store):
    with (
        Store.open(small_store, read_only=False),
        pytest.raises(StoreLockedError, match="already has a writer open"),
    ):
        Store.open(small_store, read_only=False)
    with Store.open(small_store, read_only=False) as st:  # released on close
        assert st.n_models == 3
