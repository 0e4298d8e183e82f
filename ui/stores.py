"""Which store a session reads, creating one, and importing into it (the Data page).

Writes go through ``ui.data.write_to_store`` (the app's one write path); reading and
validating a source is ``lifelong_core.workflows.imports``, the command line's own code.
The chosen store is per session (``st.session_state``); ``$LBE_STORE`` stays the default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from lifelong_core.errors import InputError
from ui.common import DEFAULT_STORE, ROOT, STORE_CHOICE, refresh_store, store_path


def known_stores() -> list[Path]:
    """Store files the session can switch to without typing a path: the current one, the
    bundled demo, ``$LBE_STORE``, and ``*.duckdb`` files beside them."""
    import os

    seen: dict[Path, None] = {}
    anchors = [
        store_path(),
        DEFAULT_STORE,
        Path(os.environ.get("LBE_STORE", DEFAULT_STORE)),
        ROOT / "data",
    ]
    for a in anchors:
        folder = a if a.is_dir() else a.parent
        for p in ([a] if a.suffix == ".duckdb" and a.exists() else []) + (
            sorted(folder.glob("*.duckdb")) if folder.is_dir() else []
        ):
            seen.setdefault(p.resolve(), None)
    return list(seen)


def open_store(path: str | Path) -> Path:
    """Make ``path`` this session's store after checking that it opens as a store."""
    from lifelong_core.store import Store

    p = Path(str(path).strip()).expanduser()
    if not str(path).strip():
        raise InputError("Give the path of a store file (.duckdb).")
    with Store.open(p, read_only=True):
        pass
    st.session_state[STORE_CHOICE] = str(p.resolve())
    refresh_store()
    return p


def use_default_store() -> None:
    st.session_state.pop(STORE_CHOICE, None)
    refresh_store()


def create_store(path: str | Path) -> Path:
    """Create an empty store at ``path`` (a new ``.duckdb`` file) and open it."""
    from lifelong_core.store import Store

    p = Path(str(path).strip()).expanduser()
    if not str(path).strip():
        raise InputError("Give a path for the new store file, ending in .duckdb.")
    if p.suffix != ".duckdb":
        raise InputError(f"New store path {p} must end in .duckdb.")
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
