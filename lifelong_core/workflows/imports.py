"""Getting predictions into a store: one path for ``python -m lifelong_core import`` and
the app's Data page.

A source is read and validated before the store is touched (:func:`read_long_source`,
:func:`read_matrix_source`, :func:`lm_eval_source`, :func:`inspect_source`), then written in one transaction by
:func:`insert`. :func:`import_into` adds the command line's rule for a store that does
not exist yet: create it, and remove it again if the import fails. Uploaded lm-eval
runs arrive as a zip or as loose files; :func:`extract_zip` unpacks a zip safely and
:func:`run_folders` finds the runs inside (one folder per model, as lm-eval writes them).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError

KINDS = ("long", "matrix", "lm-eval", "inspect")
# A zip that unpacks to more than this is refused (a "zip bomb" must not fill the disk).
MAX_UNZIPPED_BYTES = 4 * 1024**3


@dataclass(frozen=True)
class Source:
    """A validated input, ready for :func:`insert`."""

    kind: str
    source: str
    checksum: str | None = None
    dataset: str | None = None
    table: pd.DataFrame | None = None  # long
    matrix: np.ndarray | None = None  # matrix
    models: object = None
    samples: object = None
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)
    path: Path | None = None  # lm-eval
    model: str | None = None
    metric: str | None = None
    filter: str | None = None
    run: object = None  # inspect: the read log (InspectRun)


def read_long_source(path, dataset: str | None = None) -> Source:
    """A long ``.csv``/``.parquet`` table (model, sample, correct[, ...])."""
    from lifelong_core.store import file_checksum
    from lifelong_core.store.files import read_long

    table = read_long(path)  # validates the path first: the checksum needs a readable file
    return Source("long", str(path), file_checksum(path), dataset or None, table=table)


def read_matrix_source(
    matrix, models, samples, extras: Mapping[str, object] | None = None, dataset: str | None = None
) -> Source:
    """A wide 0/1 matrix with its model-id and sample-id files and optional extras
    (``confidence``, ``predicted``, ``true_prob``: .npy/.npz of the same shape)."""
    from lifelong_core.io.matrix import load_matrix
    from lifelong_core.store import file_checksum
    from lifelong_core.store.files import read_extra_matrix, read_ids

    extras = {f: v for f, v in (extras or {}).items() if v is not None}
    ids_m = read_ids(models, "model")
    ids_s = read_ids(samples, "sample")
    A = load_matrix(matrix, what="--matrix")
    ext = {f: read_extra_matrix(v, "--" + f.replace("_", "-")) for f, v in extras.items()}
    return Source(
        "matrix",
        str(matrix),
        file_checksum(matrix, models, samples, *extras.values()),
        dataset or None,
        matrix=A,
        models=ids_m,
        samples=ids_s,
        extras=ext,
    )


def lm_eval_source(
    path,
    model: str,
    metric: str | None = None,
    filter: str | None = None,
    dataset: str | None = None,
) -> Source:
    """One model's lm-evaluation-harness ``--log_samples`` run (folder, results file or one
    samples file); read and validated by the store's lm-eval reader at :func:`insert`."""
    if not isinstance(model, str) or not model.strip():
        raise InputError("An lm-eval import needs a model name (--model NAME).")
    return Source(
        "lm-eval",
        str(path),
        dataset=dataset or None,
        path=Path(path),
        model=model.strip(),
        metric=metric or None,
        filter=filter or None,
    )


def inspect_source(
    path,
    model: str | None = None,
    scorer: str | None = None,
    epoch: int | None = None,
    dataset: str | None = None,
) -> Source:
    """One Inspect AI log (``.eval`` or ``.json``), read through Inspect's own reader."""
    from lifelong_core.store.inspect_log import read_inspect_log

    run = read_inspect_log(
        path, model or None, scorer=scorer or None, epoch=epoch, dataset=dataset or None
    )
    return Source("inspect", run.source, run.checksum, table=run.table, models=run.models, run=run)


def insert(store, src: Source, progress: Callable[[float], None] | None = None) -> dict:
    """Write ``src`` into an open writable store in one transaction; the store's summary."""
    if src.kind == "long":
        return store.insert_long(
            src.table,
            source=src.source,
            dataset=src.dataset,
            checksum=src.checksum,
            progress=progress,
        )
    if src.kind == "matrix":
        return store.insert_matrix(
            src.matrix,
            src.models,
            src.samples,
            source=src.source,
            dataset=src.dataset,
            checksum=src.checksum,
            extras=dict(src.extras) or None,
            progress=progress,
        )
    if src.kind == "lm-eval":
        return store.insert_lm_eval(
            src.path,
            src.model,
            metric=src.metric,
            dataset=src.dataset,
            filter=src.filter,
            progress=progress,
        )
    if src.kind == "inspect":
        return store.insert_long(
            src.table,
            source=src.source,
            models=src.models,
            checksum=src.checksum,
            progress=progress,
        )
    raise InputError(f"unknown import kind {src.kind!r}; expected one of {', '.join(KINDS)}.")


def import_into(path, src: Source, progress=None) -> dict:
    """:func:`insert` into the store file ``path``, created if missing and removed again
    when the import into a new store fails (the command line's rule)."""
    from lifelong_core.store import Store
    from lifelong_core.store.maintenance import check_sound

    path = Path(path)
    created = not path.exists()
    store = Store.create(path) if created else Store.open(path, read_only=False)
    ok = False
    try:
        if not created:
            check_sound(store)  # never add to a store that fails its integrity check
        summary = insert(store, src, progress)
        ok = True
    finally:
        store.close()
        if created and not ok:
            for p in (path, Path(str(path) + ".wal")):
                if p.exists():
                    p.unlink()
    return summary


def summary_text(summary: Mapping, path) -> str:
    """The one line the command line prints after an import (and the Data page shows)."""
    return (
        f"imported {summary['entries']} predictions into {path}: {summary['new_models']} new models, "
        f"{summary['new_samples']} new samples (log entry {summary['log_id']})."
    )


# ------------------------------------------------------------------ uploaded lm-eval runs
def extract_zip(archive, dest) -> Path:
    """Unpack ``archive`` under ``dest`` and return ``dest``; refuses members that would
    land outside ``dest`` and archives that unpack to more than 4 GiB."""
    archive, dest = Path(archive), Path(dest)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError):
        raise InputError(f"{archive.name} is not a readable zip archive.") from None
    with zf:
        infos = zf.infolist()
        if sum(i.file_size for i in infos) > MAX_UNZIPPED_BYTES:
            raise InputError(
                f"{archive.name} unpacks to more than {MAX_UNZIPPED_BYTES // 1024**3} GiB; "
                "import its runs from the command line instead."
            )
        root = dest.resolve()
        for info in infos:
            target = (dest / info.filename).resolve()
            if root != target and root not in target.parents:
                raise InputError(
                    f"{archive.name} holds {info.filename!r}, a path outside the archive; it is not unpacked."
                )
        try:
            zf.extractall(dest)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise InputError(f"{archive.name} could not be unpacked ({exc}).") from None
    return dest


def run_folders(root) -> list[Path]:
    """Every folder under ``root`` (itself included) that holds an lm-eval run
    (``results_<ts>.json`` or ``samples_<task>_<ts>.jsonl``), in path order."""
    from lifelong_core.store.lm_eval import is_run_file

    root = Path(root)
    found = set()
    for p in root.rglob("*"):
        if (
            p.is_file()
            and not any(part.startswith(("__MACOSX", ".")) for part in p.relative_to(root).parts)
            and is_run_file(p.name)
        ):
            found.add(p.parent)
    return sorted(found)


def model_name_from_folder(folder: Path) -> str:
    """The model id lm-eval's folder name stands for: it writes ``org/name`` as ``org__name``."""
    return folder.name.replace("__", "/")
