"""One rule for every writer: a store another process holds is never replaced or written.

``build-demo --force`` once replaced a store while an import was writing into it (both
exited 0, the import's 300 million predictions were gone) and replaced stores held by
another writer or served by the app. It now holds the file alone from start to end and
is refused, naming the holder, as ``import`` is. An import holds an existing store from
before it reads its inputs. A build killed outright leaves its temporary file, which the
next build removes (only those whose process is gone).
"""

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

from lifelong_core.cli import main
from lifelong_core.commands import build_demo
from lifelong_core.store import Store
from tests.store_content import content

ROOT = Path(__file__).resolve().parents[2]

HOLD = textwrap.dedent("""
    import sys, time
    from lifelong_core.store import Store
    from lifelong_core.workflows import imports
    if sys.argv[2] == "import":
        ctx = imports.held_store(sys.argv[1])  # what `import` holds while it reads its input
    else:
        ctx = Store.open(sys.argv[1], read_only=sys.argv[2] == "ro")
    with ctx:
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


@pytest.fixture
def small_store(tmp_path) -> Path:
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["x", "y", "z"], dataset="d")
    return path


@pytest.mark.parametrize("holder", ["import", "rw", "ro"])
def test_build_demo_force_refuses_a_store_another_process_holds(small_store, holder, capsys):
    # "import": an import reading its input; "rw": another writer; "ro": the app serving it.
    before = content(small_store)
    proc = _spawn(HOLD, str(small_store), holder)
    try:
        assert "ready" in proc.stdout.readline(), proc.stderr.read()
        assert main(["build-demo", "--store", str(small_store), "--force"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"(process {proc.pid})" in err, err
        assert f"Cannot replace store {small_store}" in err
    finally:
        proc.kill()
        proc.wait()
    assert content(small_store) == before
    assert sorted(p.name for p in small_store.parent.iterdir()) == ["s.duckdb"]


def test_import_is_refused_while_a_build_holds_the_store(small_store, capsys):
    from lifelong_core.store import held_alone

    code = textwrap.dedent("""
        import sys, time
        from lifelong_core.store import held_alone
        with held_alone(sys.argv[1]):
            print("ready", flush=True)
            time.sleep(120)
    """)
    proc = _spawn(code, str(small_store))
    (small_store.parent / "l.csv").write_text("model,sample,correct\nz,x,1\n")
    try:
        assert "ready" in proc.stdout.readline(), proc.stderr.read()
        rc = main(
            ["import", "--store", str(small_store), "--long", str(small_store.parent / "l.csv")]
        )
        err = capsys.readouterr().err
        assert rc == 2 and "locked by another process" in err and str(proc.pid) in err
    finally:
        proc.kill()
        proc.wait()
    with held_alone(small_store):  # the lock went with the process
        pass


def test_a_writer_in_this_process_is_refused_too(small_store):
    from lifelong_core.errors import StoreLockedError
    from lifelong_core.store import held_alone

    with (
        Store.open(small_store, read_only=False),
        pytest.raises(StoreLockedError, match="already has a writer"),
        held_alone(small_store),
    ):
        pass


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporaries_of_dead_builds_are_removed(tmp_path):
    store = tmp_path / "demo.duckdb"
    dead = _dead_pid()
    stale = [
        tmp_path / f".demo.duckdb.building-{dead}",
        tmp_path / f".demo.duckdb.building-{dead}.wal",
    ]
    alive = tmp_path / f".demo.duckdb.building-{os.getppid()}"  # a running build: kept
    other = tmp_path / f".other.duckdb.building-{dead}"  # another store's: kept
    for p in [*stale, alive, other]:
        p.write_bytes(b"x" * 100)
    assert sorted(build_demo.remove_stale_builds(store)) == sorted(stale)
    assert not any(p.exists() for p in stale)
    assert alive.exists() and other.exists()


KILL_POINT = textwrap.dedent("""
    import sys
    from lifelong_core.commands import build_demo
    from lifelong_core.store import Store
    real = Store.insert_matrix

    def stop_here(self, *args, **kwargs):
        print("building", flush=True)  # the temporary file exists now; wait for SIGKILL
        import time
        time.sleep(120)

    Store.insert_matrix = stop_here
    build_demo.build_store(__import__("pathlib").Path(sys.argv[1]), force=True)
""")


def test_sigkilled_build_leaves_a_temporary_the_next_build_removes(tmp_path, small_store):
    target = tmp_path / "s.duckdb"  # small_store's path: an existing store is replaced
    proc = _spawn(KILL_POINT, str(target))
    try:
        assert "building" in proc.stdout.readline(), proc.stderr.read()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    temps = sorted(tmp_path.glob(".s.duckdb.building-*"))
    assert temps, "the killed build left no temporary file"
    # The next build (refused here: the source is missing) first removes them.
    assert (
        main(["build-demo", "--store", str(target), "--force", "--source", str(tmp_path / "no")])
        == 2
    )
    assert not list(tmp_path.glob(".s.duckdb.building-*"))


@pytest.mark.slow
def test_sigterm_mid_build_removes_its_temporary(tmp_path):
    target = tmp_path / "d.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lifelong_core", "build-demo", "--store", str(target)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".d.duckdb.building-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.strip() == "error: interrupted", err
    assert sorted(tmp_path.iterdir()) == []


SLOW_IMPORT = textwrap.dedent("""
    import os, sys, time
    from lifelong_core.cli import main
    from lifelong_core.workflows import imports

    real = imports.read_matrix_source

    def reading(*args, **kwargs):
        # The import holds the store from before it reads its input: pause there until the
        # test has run its competing command (the file sys.argv[2] appears), however slow
        # the machine; at most five minutes.
        print("reading", flush=True)
        deadline = time.monotonic() + 300
        while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
            time.sleep(0.05)
        return real(*args, **kwargs)

    imports.read_matrix_source = reading
    sys.exit(main(["import", "--store", sys.argv[1], "--matrix", sys.argv[3], "--models",
                   sys.argv[4], "--samples", sys.argv[5], "--dataset", "big"]))
""")


@pytest.mark.slow
def test_build_during_an_import_is_refused_and_the_import_survives(tmp_path, small_store):
    # build-demo --force started while an import is under way.
    m, n = 40, 2_000
    A = (np.random.default_rng(3).random((m, n)) < 0.5).astype(np.uint8)
    np.save(tmp_path / "big.npy", A)
    (tmp_path / "m.txt").write_text("".join(f"big{i}\n" for i in range(m)))
    (tmp_path / "s.txt").write_text("".join(f"b{j}\n" for j in range(n)))
    files = [str(tmp_path / f) for f in ("big.npy", "m.txt", "s.txt")]
    go = tmp_path / "go"
    imp = _spawn(SLOW_IMPORT, str(small_store), str(go), *files)
    try:
        assert "reading" in imp.stdout.readline(), imp.stderr.read()
        build = subprocess.run(
            [sys.executable, "-m", "lifelong_core", "build-demo", "--store", str(small_store)]
            + ["--force"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        go.touch()
        _, err = imp.communicate(timeout=300)
    finally:
        imp.kill()
    assert build.returncode == 2 and f"(process {imp.pid})" in build.stderr, build.stderr
    assert imp.returncode == 0, err
    with Store.open(small_store) as st:
        assert st.n_models == 3 + m and "big" in set(st.datasets()["dataset"])
