"""Which store a session reads, creating one, importing into it (the Data page), and the
app's one write path (:func:`write_to_store`) with the checks of what a page may write.

Every write goes through :func:`write_to_store`; reading and validating a source is
``lifelong_core.workflows.imports``, the command line's own code.
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
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from lifelong_core.errors import InputError
from lifelong_core.workflows import arrivals
from ui.common import DEFAULT_STORE, STORE_CHOICE, get_store, refresh_store, store_path

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
    from lifelong_core.io.limits import check_name

    text = str(name).strip()
    if not text:
        raise InputError("Give the name of a store file (.duckdb) in the stores folder.")
    # A line break, tab or NUL, or a name the file system cannot hold: one sentence, before
    # any path is built (a NUL made the path functions raise, an over-long name an OS error
    # that showed the server's path).
    check_name(text, "store name")
    if len(Path(text).name.encode("utf-8")) > 255:
        raise InputError(
            f"The store name is {len(Path(text).name.encode('utf-8')):,} bytes long; a file name "
            "may hold at most 255."
        )
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
    """Make the store ``name`` in the stores folder this browser session's store.

    The file is checked first to open as a complete store, so a damaged file is one
    sentence here rather than a failure halfway through a page; cached tables are then
    cleared.

    Parameters
    ----------
    name : str or pathlib.Path
        The store's file name in the stores folder (:func:`store_in_folder`).

    Returns
    -------
    pathlib.Path
        The store's path, now this browser session's store.

    Raises
    ------
    InputError
        If the name leads out of the stores folder, no such store exists there, or the
        file is not a readable store (:class:`~lifelong_core.errors.StoreLockedError`
        when another process holds it for writing).
    """
    from lifelong_core.store import check_readable

    p = store_in_folder(name)
    if not p.exists():
        raise InputError(f"There is no store named {p.name} in the stores folder.")
    check_readable(p)
    st.session_state[STORE_CHOICE] = str(p)
    refresh_store()
    return p


def use_default_store() -> None:
    """Go back to the served store (``$LBE_STORE``, else the bundled demo) for this browser session.

    Forgets the store opened on the Data page and clears the cached tables.
    """
    st.session_state.pop(STORE_CHOICE, None)
    refresh_store()


def create_store(name: str | Path) -> Path:
    """Create an empty store ``name`` (a new ``.duckdb`` file in the stores folder) and open it.

    Parameters
    ----------
    name : str or pathlib.Path
        The new file's name in the stores folder; it must end in ``.duckdb``.

    Returns
    -------
    pathlib.Path
        The new store's path, now this browser session's store.

    Raises
    ------
    InputError
        If the name leads out of the stores folder, does not end in ``.duckdb``, or names
        a file that already exists (never overwritten).
    """
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
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", base).strip(".") or "upload"


# ------------------------------------------------------------------ the disk budget of uploads
UPLOAD_ENV = "LBE_APP_UPLOAD_MB"
DEFAULT_UPLOAD_MB = 1024


def upload_budget() -> int:
    """Bytes the uploads being processed by this server may take on its disk at once, all
    sessions together: ``LBE_APP_UPLOAD_MB`` (MiB), else 1024 MiB.

    Returns
    -------
    int

    Raises
    ------
    InputError
        If the variable is not a positive number of megabytes.
    """
    raw = os.environ.get(UPLOAD_ENV, "").strip()
    try:
        mib = float(raw) if raw else float(DEFAULT_UPLOAD_MB)
    except ValueError:
        raise InputError(f"{UPLOAD_ENV}={raw!r} is not a number of megabytes.") from None
    if not 0 < mib < float("inf"):
        raise InputError(f"{UPLOAD_ENV} must be a positive number of megabytes, got {raw!r}.")
    return max(1, int(mib * (1 << 20)))


def upload_rule() -> str:
    """How a sentence names the upload budget."""
    return f"the limit of {upload_budget() / (1 << 20):,.0f} MiB on uploads being processed ({UPLOAD_ENV})"


_UPLOADS_LOCK = threading.Lock()
_UPLOADS_USED = [0]  # bytes reserved by every session's upload folder


class UploadFolder:
    """A session's temporary folder for uploads, and the share of the server's upload
    budget it holds (:func:`upload_folder`).

    Parameters
    ----------
    path : pathlib.Path
        The folder (removed when the upload is done).
    """

    def __init__(self, path: Path):
        self.path = path
        self.held = 0

    def reserve(self, nbytes: int, what: str) -> int:
        """Take ``nbytes`` of the budget before writing them, or refuse in one sentence.

        Parameters
        ----------
        nbytes : int
            What is about to be written (an upload, or what an archive unpacks to).
        what : str
            The upload, for the sentence.

        Returns
        -------
        int
            ``nbytes``.

        Raises
        ------
        InputError
            When the server's uploads would take more than the budget.
        """
        budget = upload_budget()
        with _UPLOADS_LOCK:
            if _UPLOADS_USED[0] + nbytes > budget:
                raise InputError(
                    f"{what} would take the uploads being processed on this server past "
                    f"{upload_rule()}; upload less, or try again when other uploads are done."
                )
            _UPLOADS_USED[0] += nbytes
            self.held += nbytes
        return nbytes

    def release(self) -> None:
        """Give the folder's share back (the folder is removed by :func:`upload_folder`)."""
        with _UPLOADS_LOCK:
            _UPLOADS_USED[0] -= self.held
            self.held = 0


@contextmanager
def upload_folder() -> Iterator[UploadFolder]:
    """A temporary folder for one session's uploads, under the server's disk budget for
    uploads (:func:`upload_budget`); removed, and its share given back, when the block ends.

    Yields
    ------
    UploadFolder
    """
    path = Path(tempfile.mkdtemp(prefix="lbe-upload-"))
    folder = UploadFolder(path)
    try:
        yield folder
    finally:
        shutil.rmtree(path, ignore_errors=True)
        folder.release()


def save_uploads(files: Sequence, folder: Path, space: UploadFolder | None = None) -> list[Path]:
    """Write uploaded files into ``folder`` under their own names.

    The names are kept because lm-eval's file names carry the task and the run's
    timestamp; only the base name is kept, with ordinary characters, so that an upload
    cannot name a path outside ``folder``.

    Parameters
    ----------
    files : sequence
        ``st.file_uploader`` results (each with ``name``, ``size`` and ``getvalue()``).
    folder : pathlib.Path
        Where to write them; made if missing.
    space : UploadFolder, optional
        The upload folder whose share of the disk budget each file takes first.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of ``files``.

    Raises
    ------
    InputError
        When a file would take the server's uploads past their disk budget.
    """
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for f in files:
        p = folder / _safe_name(f.name)
        data = f.getvalue()
        if space is not None:
            space.reserve(len(data), f"Uploaded file {_safe_name(f.name)}")
        p.write_bytes(data)
        out.append(p)
    return out


def unpack_upload(archive: Path, dest: Path, space: UploadFolder) -> Path:
    """Unpack an uploaded zip by the one extraction (:func:`lifelong_core.io.text.extract_zip`:
    paths, unpacked-size and file-count limits), its unpacked size first taken from the
    server's upload budget.

    Parameters
    ----------
    archive : pathlib.Path
        The saved upload.
    dest : pathlib.Path
        Where to unpack it.
    space : UploadFolder
        The session's upload folder.

    Returns
    -------
    pathlib.Path
        ``dest``.

    Raises
    ------
    InputError
        If the archive is refused by a limit or the budget, or cannot be unpacked.
    """
    from lifelong_core.io.text import check_archive, extract_zip

    declared = sum(i.file_size for i in check_archive(archive, archive.name))
    space.reserve(declared, f"{archive.name}, unpacked,")
    return extract_zip(archive, dest, limit=max(declared, 1), limit_rule=upload_rule())


def import_sources(
    sources: Sequence, progress: Callable[[float, str], object] | None = None
) -> list[dict]:
    """Insert each prepared source into this browser session's store through the app's write path.

    One transaction per source: when a source is refused, the sources before it stay
    imported, nothing of it is written, and the sentence says so.

    Parameters
    ----------
    sources : sequence of Source
        Sources read and checked by ``lifelong_core.workflows.imports``.
    progress : callable, optional
        ``progress(fraction, text)`` over all the sources.

    Returns
    -------
    list of dict
        The store's summary of each import.

    Raises
    ------
    InputError
        When writes are off, another process holds the store, or a source is refused
        (see :func:`write_to_store`).
    """
    from lifelong_core.workflows import imports

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


# ------------------------------------------------------------------ the one write path
def insert_d_datasets() -> list[str]:
    """Datasets made by the insert_D tab (every domain is ``new``): the only ones it may add to."""
    dom = get_store().domains()
    only_new = dom.groupby("dataset")["domain"].agg(
        lambda d: set(d) == {arrivals.NEW_SAMPLE_DOMAIN}
    )
    return [d for d in get_store().datasets()["dataset"] if bool(only_new.get(d, False))]


def free_dataset_name(base: str) -> str:
    """``base``, or ``base-2``, ``base-3`` ... whichever the store does not hold yet.

    Parameters
    ----------
    base : str
        The name wanted.

    Returns
    -------
    str
        A dataset name free in this browser session's store.
    """
    taken = set(get_store().datasets()["dataset"])
    name, k = base, 2
    while name in taken:
        name, k = f"{base}-{k}", k + 1
    return name


def check_new_dataset_name(name: str) -> None:
    """Refuse a name for a new dataset unless it is usable and no dataset of the store has it.

    New samples go to a new dataset, never into an existing one by name.

    Parameters
    ----------
    name : str
        The name typed (surrounding spaces ignored).

    Raises
    ------
    InputError
        If the name is empty, too long, holds a control character, or is taken.
    """
    from lifelong_core.io.limits import check_name

    name = name.strip()
    if not name:
        raise InputError("Give the new dataset a name.")
    check_name(name, "dataset name")
    if name in set(get_store().datasets()["dataset"]):
        raise InputError(
            f"The store already has a dataset {name!r}; new samples go to a new dataset (or to one "
            "made on this page, chosen from the list), never into an existing one by name."
        )


def check_new_model_name(name: str) -> None:
    """Refuse an id for a new model unless it is usable and no model of the store has it.

    Parameters
    ----------
    name : str
        The id typed (surrounding spaces ignored).

    Raises
    ------
    InputError
        If the id is empty, too long, holds a control character, or is taken.
    """
    from lifelong_core.io.limits import check_name

    name = name.strip()
    if not name:
        raise InputError("Give the new model a name.")
    check_name(name, "model name")
    if name in set(get_store().models()["model_id"]):
        raise InputError(f"The store already has a model {name!r}; choose another name.")


def write_to_store(fn):
    """THE way a page writes to the store: ``fn(writer)`` runs on a short-lived writer.

    Other sessions keep reading meanwhile: the write waits for their running store calls,
    and they go on with a fresh handle afterwards (``ui.shared_store``). Cached tables are
    cleared afterwards, whether the write succeeded or not.

    Parameters
    ----------
    fn : callable
        ``fn(writer)`` with an open writable :class:`~lifelong_core.store.Store`; it must
        use only that writer.

    Returns
    -------
    object
        What ``fn`` returns.

    Raises
    ------
    InputError
        When writes are off on a server reachable from a network, when another process
        holds the store (:class:`~lifelong_core.errors.StoreLockedError`), or when ``fn``
        refuses the data; the store is then unchanged. Show it with
        :func:`ui.common.input_errors`.
    """
    from ui.shared_store import write

    try:
        return write(store_path(), fn, st.get_option("server.address"))
    finally:
        refresh_store()


def undo_import(log_id: int) -> dict:
    """Remove exactly what import ``log_id`` added (``lifelong_core.store.maintenance.undo``)
    through :func:`write_to_store`; returns the undo's own log row. InputError (one
    sentence, store unchanged) when that cannot be done exactly."""
    from lifelong_core.store.maintenance import undo

    return write_to_store(lambda w: undo(w, int(log_id)))
