"""`pip install .` and `pip install -e .` from a copy of the checkout, then `lbe` from elsewhere.

The copy holds what a clone would (tracked files plus new, not ignored ones). Fresh
virtualenvs get the shared environment's site-packages through a .pth file, so the
installs take ``--no-deps --no-build-isolation --no-index`` and download nothing; what is
tested is this package: its files, its console script, its data and the app it serves.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

from tests.shared import free_port

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def checkout_copy(dest: Path) -> Path:
    files = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def fresh_venv(path: Path) -> Path:
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(path)], check=True)
    py = path / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # Dependencies (and pip, setuptools, wheel) come from the environment running the tests.
    Path(site, "_shared_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return py


def clean_env() -> dict:
    return {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LBE_STORE", "VIRTUAL_ENV")
    }


def pip_install(py: Path, *args: str) -> None:
    proc = subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            *args,
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def lbe(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "lbe"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )


def test_pip_install_gives_lbe_with_every_command_the_data_and_the_app(tmp_path):
    clone = checkout_copy(tmp_path / "clone")
    venv = tmp_path / "venv"
    py = fresh_venv(venv)
    pip_install(py, str(clone))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    # Installed, not read from the copy: the package lives in the venv.
    where = subprocess.run(
        [
            str(py),
            "-c",
            (
                "import lifelong_core, lifelong_core.paths as p; "
                "print(lifelong_core.__file__); print(p.APP_DIR)"
            ),
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env=clean_env(),
        check=True,
    ).stdout.split()
    assert all(str(venv) in w for w in where), where

    # Every subcommand of python -m lifelong_core, plus app.
    from lifelong_core.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    out = lbe(venv, "--help", cwd=elsewhere)
    assert out.returncode == 0 and out.stdout.startswith("usage: lbe")
    for name in sub.choices:
        assert name in out.stdout, name
    assert "app" in sub.choices

    # The committed data travels with the package: build-demo works from any folder.
    out = lbe(venv, "build-demo", "--store", "demo.duckdb", cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    out = lbe(venv, "info", "--store", str(elsewhere / "demo.duckdb"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "lifelong-digits" in out.stdout and "open-llm-leaderboard-v2" in out.stdout
    bad = lbe(venv, "info", "--store", "nope.duckdb", cwd=elsewhere)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1

    # lbe app serves the dashboard from the installed files.
    port = free_port()
    server = subprocess.Popen(
        [
            str(venv / "bin" / "lbe"),
            "app",
            "--store",
            str(elsewhere / "demo.duckdb"),
            "--port",
            str(port),
        ],
        cwd=elsewhere,
        env=clean_env(),
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline, body = time.monotonic() + 180, ""
        while time.monotonic() < deadline and server.poll() is None:
            try:
                body = (
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5)
                    .read()
                    .decode()
                )
                break
            except OSError:
                time.sleep(1)
        assert body == "ok", server.stdout.read() if server.poll() is not None else "no answer"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def test_editable_install_runs_from_the_checkout(tmp_path):
    clone = checkout_copy(tmp_path / "clone")
    venv = tmp_path / "venv"
    py = fresh_venv(venv)
    pip_install(py, "-e", str(clone))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(py), "-c", "import lifelong_core.paths as p; print(p.APP_DIR); print(p.IN_CHECKOUT)"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env=clean_env(),
        check=True,
    ).stdout.split()
    assert where == [str(clone.resolve()), "True"]
    out = lbe(venv, "info", "--store", str(ROOT / "tests" / "missing.duckdb"), cwd=elsewhere)
    assert out.returncode == 2 and "missing.duckdb" in out.stderr
    out = lbe(venv, "select", "--help", cwd=elsewhere)
    assert out.returncode == 0 and "--budget" in out.stdout
