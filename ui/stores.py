"""Which store a session reads, creating one, and importing into it (the Data page).

Writes go through ``ui.data.write_to_store`` (the app's one write path); reading and
validating a source is ``lifelong_core.workflows.imports``, the command line's own code.
The chosen store is per session (``st.session_state``); ``$LBE_STORE`` stays the default.

Opening and creating stores is confined to one folder on the server, the *stores folder*:
``$LBE_STORES_DIR`` (``lbe app --stores-dir``), else the served store's own folder. A
store is named by its file name there; a path that leads anywhere else (``..``, an
absolute path, a symbolic link out of the folder) is refused with one sentence that says
nothing about what is there, so the page cannot be used to create files elsewhere, to
learn whether a server path exists or what it is, or to show another file. When the app
does not allow writes (a server listening beyond this computer without
``LBE_APP_WRITES=1``), none of it is offered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from lifelong_core.errors import InputError
from ui.common import DEFAULT_STORE, STORE_CHOICE, refresh_store

STORES_DIR_ENV = "LBE_STORES_DIR"


def served_store() -> Path:
    """The store the server was started on (``$LBE_STORE``, else the bundled demo)."""
    return Path(os.environ.get("LBE_STORE") or DEFAULT_STORE)


def stores_dir() -> Path:
    """The one folder the Data page opens and creates stores in (resolved)."""
    raw = os.environ.get(STORES_DIR_ENV, "").strip()
    return Path(raw).expanduser().resolve() if raw else served_store().resolve().parent


def store_in_folder(name: str | Path) -> Path:
    """The file ``name`` names inside the stores folder, or one sentence.

    ``name`` is a file name there (``mine.duckdb``); a path is accepted only when it leads
    straight into the folder. Nothing outside the folder is looked at, so the refusal is
    the same whatever is there.
    """
    text = str(name).strip()
    if not text:
        raise InputError("Give the name of a store file (.duckdb) in the stores folder.")
    folder = stores_dir()
    target = Path(text).expanduser()
    if not target.is_absolute():
        target = folder / target
    # resolve() follows symbolic links, so a link in the folder pointing out of it is
    # refused like a path written out of it.
    if target.resolve().parent != folder:
        raise InputError(
            f"Stores are opened and created in the stores folder only ({folder}); give the name of "
            "a .duckdb file there."
        )
    return folder / target.name


def known_stores() -> list[Path]:
    """The ``*.duckdb`` files in the stores folder (a session switches between them)."""
    folder = stores_dir()
    try:
        found = sorted(p for p in folder.glob("*.duckdb") if p.resolve().parent == folder)
    except OSError:
        return []
    return [p for p in found if p.is_file()]


def open_store(name: str | Path) -> Path:
    """Make the store ``name`` (in the stores folder) this session's store after checking
    that it opens as a complete store."""
    from lifelong_core.store import check_readable

    p = store_in_folder(name)
    if not p.exists():
        raise InputError(f"There is no store named {p.name} in the stores folder.")
    check_readable(p)
    st.session_state[STORE_CHOICE] = str(p)
    refresh_store()
    return p


def use_default_store() -> None:
    st.session_state.pop(STORE_CHOICE, None)
    refresh_store()


def create_store(name: str | Path) -> Path:
    """Create an empty store ``name`` (a new ``.duckdb`` file in the stores folder) and open it."""
    from lifelong_core.store import Store

    p = store_in_folder(name)
    if p.suffix != ".duckdb":
        raise InputError(f"The new store's name {p.name} must end in .duckdb.")
    Store.create(p).close()
    return open_store(p)


def _safe_name(name: str) -> str:
    # Only the base name of an upload is kept, and only ordinary characters: an upload
    # must not name a path outside the folder it is saved to.
    base = Path(name.replace("\\", "/")).name
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", base) or "upload"


def save_uploads(files: Sequence, folder: Path) -> list[Path]:
    """Write uploaded files (``st.file_uploader`` results) into ``folder`` under their own
    names (lm-eval's file names carry the task and the run's timestamp)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for f in files:
        p = folder / _safe_name(f.name)
        p.write_bytes(f.getvalue())
        out.append(p)
    return out


def import_sources(
    sources: Sequence, progress: Callable[[float, str], None] | None = None
) -> list[dict]:
    """Insert each prepared source (``workflows.imports.Source``) into this session's store
    through the app's write path; one transaction per source. Returns the summaries."""
    from lifelong_core.workflows import imports
    from ui.data import write_to_store

    def write(store):
        done = []
        for i, src in enumerate(sources):
            label = f"Importing {Path(src.source).name} ({i + 1} of {len(sources)})…"
            step = (
                (lambda f, i=i, label=label: progress((i + float(f)) / len(sources), label))
                if progress
                else None
            )
            if progress:
                progress(i / len(sources), label)
            try:
                done.append(imports.insert(store, src, step))
            except InputError as exc:
                if done:
                    raise InputError(
                        f"{exc} (the {len(done)} source(s) before it were imported; nothing of this one "
                        "was written.)"
                    ) from None
                raise
        return done

    return write_to_store(write)
