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

    real = imports.source

    def reading(*args, **kwargs):
        # The import holds the store from before it reads its input: pause there until the
        # test has run its competing command (the file sys.argv[2] appears), however slow
        # the machine; at most five minutes.
        print("reading", flush=True)
        deadline = time.monotonic() + 300
        while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
            time.sleep(0.05)
        return real(*args, **kwargs)

    imports.source = reading
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


# ------------------------------------------------------------------ races, in both orders
# Each writer runs as a user runs it (the command line's main) with one addition: it says
# on stdout when it takes and when it gives up the store's exclusive lock, so the test can
# tell a refusal from a replacement that came after the other writer's commit.
TRACED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from lifelong_core.store import locking

    target = Path(sys.argv[1]).name
    init, release = locking.Hold.__init__, locking.Hold.release

    def traced_init(self, path, identity, exclusive):
        init(self, path, identity, exclusive)
        if exclusive and Path(path).name == target:
            print(f"held {time.time():.6f}", flush=True)

    def traced_release(self):
        mine = self.exclusive and not self._released and Path(self.path).name == target
        release(self)
        if mine:
            print(f"released {time.time():.6f}", flush=True)

    locking.Hold.__init__, locking.Hold.release = traced_init, traced_release
    if sys.argv[2] == "synthetic":
        from lifelong_core.datasets.synthetic import main
    else:
        from lifelong_core.cli import main
    sys.exit(main(sys.argv[3:]))
""")


def _traced(store: Path, tool: str, *argv: str) -> subprocess.Popen:
    return _spawn(TRACED, str(store), tool, *argv)


def _times(out: str, what: str) -> list[float]:
    return [float(line.split()[1]) for line in out.splitlines() if line.startswith(what + " ")]


def _race(tmp_path: Path, small_store: Path, first: str, delay: float, build, imp) -> None:
    """Start ``first`` ("import" or "build"), the other ``delay`` seconds later; check the
    one writer rule held: one refused naming the lock, or the second ran after the first
    released the store, and the store holds exactly what the last successful writer left."""
    starts = {"import": imp, "build": build}
    order = [first, "build" if first == "import" else "import"]
    procs = {}
    procs[order[0]] = starts[order[0]]()
    time.sleep(delay)
    procs[order[1]] = starts[order[1]]()
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        out[name] = (proc.returncode, stdout, stderr)
    (irc, iout, ierr), (brc, bout, berr) = out["import"], out["build"]
    assert {irc, brc} <= {0, 2}, (ierr, berr)
    with Store.open(small_store) as st:
        models = set(st.models()["model_id"])
    if irc == 0 and brc == 0:
        # Both ran: one strictly after the other gave the store up.
        ih, ir = _times(iout, "held")[0], _times(iout, "released")[-1]
        bh, br = _times(bout, "held")[0], _times(bout, "released")[-1]
        assert ir < bh or br < ih, (iout, bout)
        assert ("imported-0" in models) == (br < ih), "the last writer's result must be the store"
    elif brc == 2:
        # (The holder is named when it still holds the file as the sentence is written.)
        assert "Cannot replace store" in berr and "open in another process" in berr, berr
        assert irc == 0 and "imported-0" in models, ierr
    else:
        assert "locked by another process" in ierr, ierr
        assert brc == 0 and "imported-0" not in models


def _race_writers(tmp_path: Path, store: Path):
    (tmp_path / "l.csv").write_text(
        "model,sample,correct,dataset\n" + "".join(f"imported-{i},x,1,d\n" for i in range(3))
    )
    build = lambda: _traced(  # noqa: E731
        store, "synthetic", "--models", "30", "--samples", "200", "--store", str(store), "--force"
    )
    imp = lambda: _traced(  # noqa: E731
        store, "cli", "import", "--store", str(store), "--long", str(tmp_path / "l.csv")
    )
    return build, imp


@pytest.mark.parametrize("first", ["import", "build"])
@pytest.mark.parametrize("delay", [0.0, 0.4])
def test_a_replacing_build_and_an_import_race_in_both_orders(tmp_path, small_store, first, delay):
    # The replacing build here is the synthetic generator's --force, which replaces a store
    # through the same held_alone + replace_held as build-demo (fast enough for every run).
    build, imp = _race_writers(tmp_path, small_store)
    _race(tmp_path, small_store, first, delay, build, imp)


@pytest.mark.slow
@pytest.mark.parametrize(
    "first,delay", [("build", 0.8), ("import", 0.15), ("import", 2.5)], ids=lambda v: str(v)
)
def test_build_demo_and_an_import_race_at_several_delays(tmp_path, small_store, first, delay):
    """The real build-demo (seconds of work under its hold) against an import of a
    300 x 20,000 matrix. Three cases reach the three ways the race can end with this build:
    an import started 0.8 s into the build arrives while the build holds the store and is
    refused (any later start until the build ends is the same case); a build started 0.15 s
    after the import arrives while the import holds it and is refused naming the lock; a
    build started 2.5 s after the import runs once the import has given the store up and
    leaves its own store. Each case accepts every ending the rule allows (a loaded machine
    may move a start across a boundary) and checks that ending; the fast test above covers
    the other interleavings (both writers starting together, either order) with the
    synthetic build."""
    m, n = 300, 20_000
    A = (np.random.default_rng(5).random((m, n)) < 0.5).astype(np.uint8)
    np.save(tmp_path / "big.npy", A)
    (tmp_path / "m.txt").write_text("".join(f"imported-{i}\n" for i in range(m)))
    (tmp_path / "s.txt").write_text("".join(f"b{j}\n" for j in range(n)))
    files = ["--matrix", "big.npy", "--models", "m.txt", "--samples", "s.txt"]
    files = [str(tmp_path / f) if not f.startswith("--") else f for f in files]
    build = lambda: _traced(  # noqa: E731
        small_store, "cli", "build-demo", "--store", str(small_store), "--force"
    )
    imp = lambda: _traced(  # noqa: E731
        small_store, "cli", "import", "--store", str(small_store), *files, "--dataset", "big"
    )
    _race(tmp_path, small_store, first, delay, build, imp)


PAUSED_BUILD = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from lifelong_core.store import store as store_module
    from lifelong_core.datasets import synthetic

    real = store_module.replace_held

    def paused(tmp, target, held):
        # Everything is built; hold still just before the rename until the test says go.
        print("built", flush=True)
        deadline = time.monotonic() + 300
        while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
            time.sleep(0.05)
        return real(tmp, target, held)

    synthetic.replace_held = paused
    sys.exit(synthetic.main(["--models", "20", "--samples", "50", "--store", sys.argv[1], "--force"]))
""")


def test_an_import_is_refused_while_a_build_is_about_to_replace_the_store(tmp_path, small_store):
    from lifelong_core.errors import StoreLockedError

    go = tmp_path / "go"
    build = _spawn(PAUSED_BUILD, str(small_store), str(go))
    (tmp_path / "l.csv").write_text("model,sample,correct\nlate,x,1\n")
    try:
        assert "built" in build.stdout.readline(), build.stderr.read()
        with pytest.raises(StoreLockedError, match="locked by another process"):
            content(small_store)  # held alone: no reader either
        rc = main(["import", "--store", str(small_store), "--long", str(tmp_path / "l.csv")])
        go.touch()
        _, err = build.communicate(timeout=300)
    finally:
        build.kill()
    assert rc == 2
    assert build.returncode == 0, err
    with Store.open(small_store) as st:
        assert "late" not in set(st.models()["model_id"]) and st.n_models == 20


@pytest.mark.parametrize("meanwhile", ["created", "replaced"])
def test_the_build_looks_again_when_it_replaces_the_file(tmp_path, small_store, meanwhile):
    # A file put at the path during the build (by a program that takes no lock) is kept.
    target = tmp_path / "t.duckdb" if meanwhile == "created" else small_store
    other = tmp_path / "other.duckdb"
    with Store.create(other) as st:
        st.insert_matrix(np.ones((1, 1), np.uint8), ["keep-me"], ["k"], dataset="k")
    go = tmp_path / "go"
    build = _spawn(PAUSED_BUILD, str(target), str(go))
    try:
        assert "built" in build.stdout.readline(), build.stderr.read()
        os.rename(other, target)
        go.touch()
        _, err = build.communicate(timeout=300)
    finally:
        build.kill()
    assert build.returncode == 2 and f"was {meanwhile} by another process during the build" in err
    with Store.open(target) as st:
        assert list(st.models()["model_id"]) == ["keep-me"]
    assert not list(tmp_path.glob(".t.duckdb.partial-*")) and not list(
        tmp_path.glob(".s.duckdb.partial-*")
    )


SERVING = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ui.shared_store import hold_served_store
    hold_served_store(Path(sys.argv[1]))  # what the server does at start-up, before any view
    print("ready", flush=True)
    time.sleep(120)
""")


def test_a_server_that_has_shown_no_page_yet_keeps_its_store(small_store, capsys):
    before = content(small_store)
    proc = _spawn(SERVING, str(small_store))
    try:
        assert "ready" in proc.stdout.readline(), proc.stderr.read()
        assert main(["build-demo", "--store", str(small_store), "--force"]) == 2
        err = capsys.readouterr().err
        assert f"(process {proc.pid})" in err, err
        (small_store.parent / "l.csv").write_text("model,sample,correct\nz,x,1\n")
        assert (
            main(
                ["import", "--store", str(small_store), "--long", str(small_store.parent / "l.csv")]
            )
            == 2
        )
        assert f"(process {proc.pid})" in capsys.readouterr().err
    finally:
        proc.kill()
        proc.wait()
    assert content(small_store) == before


TRY_WRITE = textwrap.dedent("""
    import sys
    from lifelong_core.errors import StoreLockedError
    from lifelong_core.store import hold
    try:
        hold(sys.argv[1], exclusive=True).release()
        print("taken")
    except StoreLockedError:
        print("refused")
""")


def _other_process_can_write(path: Path) -> bool:
    out = subprocess.run(
        [sys.executable, "-c", TRY_WRITE, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.stdout.strip() in ("taken", "refused"), out.stderr
    return out.stdout.strip() == "taken"


def test_the_lock_survives_any_other_open_and_close_of_the_file(small_store):
    # A POSIX record lock (DuckDB's) is dropped by the first close() of any descriptor the
    # process has on the file; the writer rule's lock is not.
    from lifelong_core.store import hold

    with hold(small_store, exclusive=True):
        for _ in range(3):
            open(small_store, "rb").close()
        with Store.open(small_store, read_only=True) as st:  # a reader of this process, closed
            st.probe()
        assert not _other_process_can_write(small_store)
    assert _other_process_can_write(small_store)


def test_a_reader_of_this_process_upgrades_to_write_and_back(small_store):
    from lifelong_core.errors import StoreLockedError
    from lifelong_core.store import hold

    served = hold(small_store, exclusive=False)  # what a server holds from start-up
    try:
        assert not _other_process_can_write(small_store)
        with Store.open(small_store, read_only=False) as w:  # the app's own write
            w.add_dataset("e", description="", synthetic=False, source="test")
            with pytest.raises(StoreLockedError, match="already has a writer"):
                hold(small_store, exclusive=True)
        assert not _other_process_can_write(small_store)  # shared again, still held
    finally:
        served.release()
    assert _other_process_can_write(small_store)


@pytest.mark.slow
def test_build_demo_is_refused_by_a_real_server_before_any_page_is_viewed(small_store, capsys):
    import urllib.request

    from tests.shared import free_port

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "ui.serve", "--server.headless", "true", "--server.port", str(port)],
        cwd=ROOT,
        env={**os.environ, "LBE_STORE": str(small_store), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    before = content(small_store)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.25)
        assert main(["build-demo", "--store", str(small_store), "--force"]) == 2
        err = capsys.readouterr().err
        assert "Cannot replace store" in err and f"(process {server.pid})" in err, err
    finally:
        server.terminate()
        server.wait(30)
    assert content(small_store) == before
