"""The Data page's uploads, served beyond this computer and as archives that lie about
their size.

Beyond loopback with writes off, a 580 KB zip (a samples ``.jsonl.gz`` of 3.1 million
identical lines) took the server from 354 MB to 2.65 GB for 42 s before the refusal, and a
3 MB zip wrote 3 GB into the upload's temporary folder: the page unpacked and parsed
before it checked that writes were off, and the reader held every line. Now the page
offers no upload when writes are off; with writes on, uploads share a disk budget,
archives go through the one extraction with its limits, lines are validated as they
stream, and messages name the upload, never the folder it was saved in.
"""

from __future__ import annotations

import gzip
import io
import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from lifelong_core.store import Store
from tests.store_content import content
from tests.user_store import TS

ROOT = Path(__file__).resolve().parents[2]
DATA = str(ROOT / "pages" / "9_Data.py")


@pytest.fixture
def served(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "served.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["x", "y", "z"], dataset="d")
    monkeypatch.setenv("LBE_STORE", str(path))
    monkeypatch.delenv("LBE_STORES_DIR", raising=False)
    return path


@pytest.fixture
def address():
    before = st_config.get_option("server.address")
    yield lambda value: st_config.set_option("server.address", value)
    st_config.set_option("server.address", before)


def _page() -> AppTest:
    at = AppTest.from_file(DATA, default_timeout=240)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _import_lm_eval(at: AppTest, name: str, data: bytes) -> AppTest:
    at.radio(key="fmt").set_value("lm-eval")
    at.run()
    at.file_uploader(key="up_lm-eval").set_value((name, data, "application/zip"))
    at.run()
    at.button(key="import_btn").click()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _zipped(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _identical_lines_gz(lines: int) -> bytes:
    """A samples .jsonl.gz of ``lines`` identical lines, made cheaply: gzip members of one
    block each, repeated (a gzip file may hold many members)."""
    line = json.dumps({"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1}) + "\n"
    per = 20_000
    block = gzip.compress((line * per).encode(), compresslevel=9)
    return block * (lines // per)


def _leftover_uploads() -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob("lbe-upload-*"))


@pytest.fixture(autouse=True)
def _own_temporary_folder(tmp_path_factory, monkeypatch):
    # The page's upload folders are made here, so another test's upload running at the
    # same time is not counted as this one's leftover.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("uploads")))


def test_beyond_loopback_with_writes_off_nothing_can_be_uploaded(served, address, monkeypatch):
    monkeypatch.delenv("LBE_APP_WRITES", raising=False)
    address("0.0.0.0")
    at = _page()
    assert not at.get("file_uploader"), "an uploader is offered although writes are off"
    assert not [b for b in at.button if b.key == "import_btn"]
    assert any("Importing is off as well" in i.value for i in at.info)


@pytest.mark.parametrize("writes", ["loopback", "LBE_APP_WRITES=1"])
def test_a_zip_bomb_is_refused_before_it_is_unpacked(served, address, monkeypatch, writes):
    # 64 MiB of zeros in a zip of about 64 KB, against an upload budget of 8 MiB.
    monkeypatch.setenv("LBE_APP_UPLOAD_MB", "8")
    if writes == "loopback":
        address("127.0.0.1")
    else:
        address("0.0.0.0")
        monkeypatch.setenv("LBE_APP_WRITES", "1")
    before, leftovers = content(served), set(_leftover_uploads())
    bomb = _zipped({f"out/org__m/samples_t_{TS}.jsonl": b"\0" * (64 << 20)})
    assert len(bomb) < 200_000
    at = _import_lm_eval(_page(), "bomb.zip", bomb)
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and "LBE_APP_UPLOAD_MB" in errors[0], errors
    assert "/tmp" not in errors[0] and "lbe-upload-" not in errors[0]
    assert content(served) == before
    assert set(_leftover_uploads()) == leftovers  # the upload's folder is gone


def test_an_archive_of_too_many_files_is_refused(served, address, monkeypatch):
    monkeypatch.setenv("LBE_MAX_ARCHIVE_FILES", "100")
    address("127.0.0.1")
    many = _zipped({f"out/org__m/f{i}.txt": b"" for i in range(150)})
    at = _import_lm_eval(_page(), "many.zip", many)
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and "150 files" in errors[0] and "LBE_MAX_ARCHIVE_FILES" in errors[0]


def test_millions_of_identical_lines_are_refused_at_the_second(served, address):
    # A 580 KB zip: one samples .jsonl.gz of 3.1 million identical lines (once 2.65 GB). The
    # lines are validated as they stream, so the duplicate doc_id stops the read at line 2.
    address("127.0.0.1")
    gz = _identical_lines_gz(3_100_000)
    upload = _zipped({f"out/org__m/samples_t_{TS}.jsonl.gz": gz})
    assert len(upload) < 1_000_000
    at = _import_lm_eval(_page(), "lines.zip", upload)
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1, errors
    assert "lines 1 and 2 both hold doc_id 0" in errors[0], errors


def test_upload_errors_name_the_upload_never_a_server_path(served, address, monkeypatch):
    address("0.0.0.0")
    monkeypatch.setenv("LBE_APP_WRITES", "1")
    bad = _zipped(
        {
            f"out/org__m/samples_t_{TS}.jsonl": b'{"doc_id": 0, "acc": 1}\nnot json\n',
            f"out/org__m/results_{TS}.json": b'{"model_name": "org/m"}',
        }
    )
    at = _import_lm_eval(_page(), "bad.zip", bad)
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and "line 2 is not valid JSON" in errors[0], errors
    assert "the upload/" in errors[0] and "/tmp" not in errors[0], errors
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert str(served.parent) not in shown.replace("\\", "")


@pytest.mark.parametrize(
    "typed,said",
    [
        ("new\nname.duckdb", "a line break"),
        ("new\tname.duckdb", "a tab"),
        ("new\x00name.duckdb", "a NUL character"),
        ("n" * 300 + ".duckdb", "bytes long"),
    ],
)
@pytest.mark.parametrize("button", ["create", "open"])
def test_store_names_the_file_system_cannot_hold_are_one_sentence(
    served, address, typed, said, button
):
    address("127.0.0.1")
    at = _page()
    at.text_input(key=f"{button}_path").set_value(typed)
    at.button(key=f"{button}_btn").click()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 1 and said in errors[0], errors
    assert sorted(p.name for p in served.parent.iterdir()) == ["served.duckdb"]
