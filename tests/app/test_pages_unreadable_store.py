"""The app with a store it cannot read, and ``lbe app`` checking what it will serve.

A store cut short once opened without a word on the Data page and then gave an exception
box on Home and the Budget explorer; ``lbe app --store <random bytes>`` started serving,
and ``lbe app --port <in use>`` printed "serving ... at" and then exited 1. Now every page
stops at its first read with one sentence, and the command refuses (exit 2, one line)
before it prints an address or starts a server.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py"))


def _cut(demo: Path, folder: Path, keep: float) -> Path:
    path = folder / f"cut-{keep}.duckdb"
    data = demo.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


@pytest.fixture(scope="module")
def cut_store(demo_store_path, tmp_path_factory) -> Path:
    """The demo store cut in half: DuckDB cannot read its tables."""
    return _cut(demo_store_path, tmp_path_factory.mktemp("cut"), 0.5)


@pytest.fixture(scope="module")
def tail_cut_store(demo_store_path, tmp_path_factory) -> Path:
    """The demo store without its last 1%: it opens; some pages' reads hit the lost blocks."""
    return _cut(demo_store_path, tmp_path_factory.mktemp("cut"), 0.99)


ALL_PAGES = ["app.py", *(f"pages/{p.name}" for p in PAGES)]


def _run(page: str, store: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("LBE_STORE", str(store))
    at = AppTest.from_file(str(ROOT / page), default_timeout=240)
    # Pages whose default source is not the store (published leaderboards) read it.
    at.query_params.update({"source": "store", "wsource": "store"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_says_the_store_cannot_be_read(cut_store, monkeypatch, page):
    at = _run(page, cut_store, monkeypatch)
    assert len(at.error) == 1, [e.value for e in at.error]
    assert "cannot be read" in at.error[0].value and "\n" not in at.error[0].value


@pytest.mark.parametrize("page", ALL_PAGES)
def test_a_store_missing_its_tail_is_a_sentence_where_it_is_read(tail_cut_store, monkeypatch, page):
    at = _run(page, tail_cut_store, monkeypatch)
    assert all("cannot be read" in e.value for e in at.error), [e.value for e in at.error]


@pytest.fixture
def no_server(monkeypatch):
    """Fail the test if the command would start the server."""

    def refuse(*args, **kwargs):
        raise AssertionError("the server was started")

    monkeypatch.setattr("subprocess.call", refuse)


def test_app_port_in_use_is_refused_before_any_address_is_printed(
    demo_store_path, capsys, no_server
):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        rc = main(["app", "--store", str(demo_store_path), "--port", str(port)])
    out = capsys.readouterr()
    assert rc == 2 and out.out == ""
    assert (
        out.err
        == f"error: --port: cannot listen on 127.0.0.1 port {port}: it is in use; choose another with --port.\n"
    )


@pytest.mark.parametrize("content", ["random", "cut"])
def test_app_store_is_checked_before_serving(tmp_path, capsys, no_server, cut_store, content):
    import os

    path = tmp_path / "s.duckdb"
    path.write_bytes(os.urandom(100_000) if content == "random" else cut_store.read_bytes())
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    rc = main(["app", "--store", str(path), "--port", str(port)])
    out = capsys.readouterr()
    assert rc == 2 and out.out == "" and out.err.count("\n") == 1
    assert ("not a DuckDB store file" if content == "random" else "cannot be read") in out.err
