"""What several test folders share: data built once per session, and a free port.

Test data built once per test session, whichever ``pytest-xdist`` worker asks first.

Session fixtures are per worker: with several workers, a store or log folder that takes
seconds to build was built by each of them. :func:`built_once` builds it once, under a
file lock in the session's shared temporary folder, and hands each caller a private copy
(a DuckDB file is locked by whoever opens it for writing, so workers must not share one).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def session_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test session's folder that every ``pytest-xdist`` worker sees: the parent of the
    workers' base folders, or the base folder itself without workers.

    Parameters
    ----------
    tmp_path_factory : pytest.TempPathFactory
        The session's factory.

    Returns
    -------
    pathlib.Path
    """
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """A private copy of the folder ``build`` fills, built once per test session.

    Parameters
    ----------
    tmp_path_factory : pytest.TempPathFactory
        The session's factory (its base folder's parent is shared by the workers).
    name : str
        A name for the build, unique in the test suite.
    build : callable
        ``build(folder)`` writes into the empty ``folder``.

    Returns
    -------
    pathlib.Path
        A new folder holding a copy of what ``build`` wrote.
    """
    shared = session_folder(tmp_path_factory)
    master, done = shared / f"built-{name}", shared / f"built-{name}.done"
    with FileLock(str(shared / f"built-{name}.lock")):
        if not done.exists():
            shutil.rmtree(master, ignore_errors=True)
            master.mkdir()
            build(master)
            done.touch()
    mine = tmp_path_factory.mktemp(name)
    shutil.copytree(master, mine, dirs_exist_ok=True)
    return mine


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a server a test starts.

    Returns
    -------
    int
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def needs(module: str) -> None:
    """Skip the calling test module when ``module`` is not installed, without importing it.

    Every worker imports every test module to collect it; ``pytest.importorskip`` at module
    level would import the harness there (Inspect AI: a second or more), in every worker,
    whether or not the worker runs one of the module's tests.

    Parameters
    ----------
    module : str
        A dotted module name.
    """
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        found = False
    if not found:
        pytest.skip(f"{module} is not installed", allow_module_level=True)


def count_calls(monkeypatch: pytest.MonkeyPatch, seen: dict, key: str, owner, *names: str) -> None:
    """Replace each of ``owner``'s ``names`` by a wrapper that adds one to ``seen[key]``
    per call and then calls the original (a function of a module, or a method of a class).

    Parameters
    ----------
    monkeypatch : pytest.MonkeyPatch
        Undoes the replacement after the test.
    seen : dict
        The counts; ``seen[key]`` must exist.
    key : str
        Which count the calls add to.
    owner : module or class
        Where the functions are looked up (as the code under test looks them up).
    *names : str
        The functions to count.
    """
    for name in names:
        real = getattr(owner, name)

        def counted(*args, _real=real, **kwargs):
            seen[key] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
