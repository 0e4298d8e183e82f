"""The Data page's file-system surface: stores are opened and created in one folder only.

Served beyond this computer with writes off, the page once still created a store at any
path ending in ``.duckdb`` the server could write, answered whether server paths exist and
what they are (``/etc/hostname`` "is not a DuckDB store file", ``/root`` "is a
directory"), and opened any DuckDB file the server could read. Now: with writes off it
offers none of it; with writes on it works in the stores folder only (the served store's
folder, or ``$LBE_STORES_DIR``), and every path leading elsewhere gets the same sentence,
whatever is there.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from lifelong_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
DATA = str(ROOT / "pages" / "9_Data.py")


def _store(path: Path) -> Path:
    with Store.create(path) as st:
        st.insert_matrix(np.eye(2, dtype=np.uint8), ["a", "b"], ["x", "y"], dataset="d")
    return path


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """A stores folder holding the served store, and an outside folder with a store."""
    stores, outside = tmp_path / "stores", tmp_path / "outside"
    stores.mkdir()
    outside.mkdir()
    served = _store(stores / "served.duckdb")
    secret = _store(outside / "secret.duckdb")
    (outside / "hostname").write_text("host\n")
    (stores / "link.duckdb").symlink_to(secret)
    monkeypatch.setenv("LBE_STORE", str(served))
    monkeypatch.delenv("LBE_STORES_DIR", raising=False)
    monkeypatch.delenv("LBE_APP_WRITES", raising=False)
    return {"stores": stores, "outside": outside, "served": served, "secret": secret}


@pytest.fixture
def address():
    """Set the server's listening address for the page, restored afterwards."""
    before = st_config.get_option("server.address")
    yield lambda value: st_config.set_option("server.address", value)
    st_config.set_option("server.address", before)


def _page() -> AppTest:
    at = AppTest.from_file(DATA, default_timeout=240)
    at.run()
    assert not at.exception
    return at


def _errors(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]


def test_beyond_loopback_with_writes_off_the_page_offers_no_paths(layout, address):
    address("0.0.0.0")
    at = _page()
    keys = {w.key for w in at.text_input} | {w.key for w in at.selectbox}
    assert not keys & {"open_path", "create_path", "open_pick"}
    assert not [b for b in at.button if b.key in ("open_btn", "create_btn")]
    assert any("Opening and creating stores is off" in i.value for i in at.info)
    assert sorted(p.name for p in layout["stores"].iterdir()) == ["link.duckdb", "served.duckdb"]


def test_beyond_loopback_with_writes_on_the_folder_rule_still_holds(layout, address, monkeypatch):
    address("0.0.0.0")
    monkeypatch.setenv("LBE_APP_WRITES", "1")
    at = _page()
    at.text_input(key="create_path").set_value(str(layout["outside"] / "new.duckdb"))
    at.button(key="create_btn").click()
    at.run()
    assert not at.exception and len(at.error) == 1
    assert "stores folder only" in _errors(at)[0]
    assert not (layout["outside"] / "new.duckdb").exists()


@pytest.mark.parametrize(
    "typed",
    [
        "{outside}/secret.duckdb",  # a readable store outside
        "{outside}/hostname",  # a file outside that is not a store
        "{outside}",  # a folder outside
        "{outside}/missing.duckdb",  # nothing there
        "../outside/secret.duckdb",  # out of the folder by a relative path
        "link.duckdb",  # a link in the folder to a store outside
        "/etc/hostname",
        "/root",
    ],
)
def test_outside_paths_are_refused_alike_and_nothing_is_opened(layout, typed):
    at = _page()
    at.text_input(key="open_path").set_value(typed.format(outside=layout["outside"]))
    at.button(key="open_btn").click()
    at.run()
    assert not at.exception
    errors = _errors(at)
    assert len(errors) == 1
    # The same sentence whatever the path is or holds: it names only the stores folder.
    assert errors[0] == (
        f"Stores are opened and created in the stores folder only ({layout['stores']}); give the "
        "name of a .duckdb file there."
    )
    assert "lbe_store_path" not in at.session_state


@pytest.mark.parametrize("typed", ["{outside}/new.duckdb", "../new.duckdb", "sub/new.duckdb"])
def test_stores_are_not_created_outside_the_folder(layout, typed):
    at = _page()
    at.text_input(key="create_path").set_value(typed.format(outside=layout["outside"]))
    at.button(key="create_btn").click()
    at.run()
    assert not at.exception and len(at.error) == 1 and "stores folder only" in _errors(at)[0]
    assert list(layout["stores"].parent.rglob("new.duckdb")) == []


def test_in_the_folder_create_open_and_switch(layout):
    at = _page()
    # The link to a store outside is not listed: only files that are in the folder.
    assert at.selectbox(key="open_pick").options == ["served.duckdb"]
    at.text_input(key="create_path").set_value("mine.duckdb")
    at.button(key="create_btn").click()
    at.run()
    assert not at.exception and not at.error
    assert (layout["stores"] / "mine.duckdb").is_file()
    assert at.session_state["lbe_store_path"] == str(layout["stores"] / "mine.duckdb")
    at.text_input(key="open_path").set_value("served.duckdb")
    at.button(key="open_btn").click()
    at.run()
    assert not at.exception and not at.error
    assert at.session_state["lbe_store_path"] == str(layout["stores"] / "served.duckdb")


def test_stores_dir_chooses_the_folder(layout, monkeypatch):
    monkeypatch.setenv("LBE_STORES_DIR", str(layout["outside"]))
    at = _page()
    assert at.selectbox(key="open_pick").options == ["secret.duckdb"]
    at.text_input(key="open_path").set_value("secret.duckdb")
    at.button(key="open_btn").click()
    at.run()
    assert not at.exception and not at.error
    assert at.session_state["lbe_store_path"] == str(layout["outside"] / "secret.duckdb")


def test_a_truncated_store_in_the_folder_is_one_sentence(layout):
    cut = layout["stores"] / "cut.duckdb"
    data = layout["served"].read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    at = _page()
    at.text_input(key="open_path").set_value("cut.duckdb")
    at.button(key="open_btn").click()
    at.run()
    assert not at.exception and len(at.error) == 1
    assert "cannot be read" in _errors(at)[0] and "cut short" in _errors(at)[0]
    assert "lbe_store_path" not in at.session_state


def test_app_command_checks_the_stores_folder(tmp_path, capsys):
    from lifelong_core.cli import main

    store = _store(tmp_path / "s.duckdb")
    rc = main(["app", "--store", str(store), "--stores-dir", str(tmp_path / "none")])
    assert rc == 2 and "--stores-dir" in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["s.duckdb"]
