"""A real Streamlit server for the browser tests: ``python -m ui.serve`` (the launcher
``make run`` uses) on a free localhost port, reading one store; its log goes to
``test-artifacts/``."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.shared import free_port

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextlib.contextmanager
def serve(store: Path, log_name: str):
    """``python -m ui.serve`` (the launcher ``make run`` uses) on a free port, reading ``store``."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (apt-get install -y chromium)")
    port = free_port()
    env = dict(os.environ, LBE_STORE=str(store))
    log = ARTIFACTS / log_name
    ARTIFACTS.mkdir(exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [
                # The launcher `make run` uses: `streamlit run app.py` after warm imports.
                sys.executable,
                "-m",
                "ui.serve",
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
                "--server.fileWatcherType",
                "none",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with code {proc.returncode}; see {log}")
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer /_stcore/health within 90 s; see {log}")
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
