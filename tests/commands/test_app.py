"""``lbe app`` owns its server: stopping the command stops the server it started.

A real server (``python -m lifelong_core app``) on a free port against a copy of the demo
store; the command is stopped with SIGTERM (a plain ``kill``), with SIGINT (Ctrl+C) and,
on Linux, with SIGKILL; afterwards no server process is left and the port is free.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.shared import free_port

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.read() == b"ok"
    except OSError:
        return False


@pytest.fixture
def store(tmp_path, demo_store_path) -> Path:
    return Path(shutil.copy2(demo_store_path, tmp_path / "demo.duckdb"))


def _terminal_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(store: Path, port: int) -> tuple[subprocess.Popen, list[psutil.Process]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "lifelong_core", "app", "--store", str(store), "--port", str(port)],
        cwd=store.parent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # As started from a terminal: a suite run as a background job inherits SIGINT
        # ignored, and Ctrl+C would then reach nothing.
        preexec_fn=_terminal_signals,
    )
    deadline = time.monotonic() + 120
    while not _healthy(port):
        assert proc.poll() is None, "lbe app exited before serving"
        assert time.monotonic() < deadline, "the server did not come up"
        time.sleep(0.5)
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children, "the server runs as a child of lbe app"
    return proc, children


def _gone(children: list[psutil.Process], port: int) -> None:
    _, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, f"server processes left behind: {[p.pid for p in alive]}"
    assert not _healthy(port)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_stopping_lbe_app_stops_its_server(store, sig):
    port = free_port()
    proc, children = _start(store, port)
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == 0
    _gone(children, port)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux's")
def test_a_killed_lbe_app_takes_its_server_with_it(store):
    port = free_port()
    proc, children = _start(store, port)
    proc.kill()
    proc.wait(timeout=30)
    _gone(children, port)


def test_a_server_that_ignores_the_stop_is_killed_after_the_grace(tmp_path):
    """A server that does not end on SIGTERM is killed ``grace`` seconds later, and the
    command still exits 0 (it was asked to stop)."""
    ready = tmp_path / "ready"
    child = (
        "import pathlib, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"pathlib.Path({str(ready)!r}).write_text('x'); time.sleep(120)"
    )
    parent = (
        "import os, sys; from lifelong_core.commands.app import serve; "
        f"sys.exit(serve([sys.executable, '-c', {child!r}], dict(os.environ), grace=1.0))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", parent], env=env)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    children = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive
