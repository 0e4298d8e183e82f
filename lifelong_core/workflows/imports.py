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

import dataclasses
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
    run: object = None  # inspect: the read log (InspectRun); lm-eval: the runs read (LmEvalRun)
    runs: int = 0  # lm-eval: run folders found
    skipped: tuple = ()  # lm-eval: SkippedRun of each run left out


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
    model: str | None = None,
    metric: str | None = None,
    filter: str | None = None,
    dataset: str | None = None,
    *,
    strict: bool = False,
    progress: Callable[[float, str], None] | None = None,
) -> Source:
    """lm-evaluation-harness ``--log_samples`` output, read and validated before the store
    is touched: one model's run (a folder, its results file or one samples file), a folder
    of run folders (lm-eval's ``OUT/<org>__<model>/``, one per model), or a ``.zip`` of
    either.

    Parameters
    ----------
    path : str or Path
        The run, the folder of runs or the zip.
    model : str, optional
        The model's name, for one run only; by default each run is named by its results
        file (``model_name``, else ``pretrained=`` of its model arguments), else by its
        folder as lm-eval writes it (``org__model`` -> ``org/model``).
    metric, filter : str, optional
        As for one run (:func:`lifelong_core.store.lm_eval.read_lm_eval`), for every run.
    dataset : str, optional
        The dataset of the items; by default (:func:`insert`) the dataset the store already
        keeps them in, else the runs' one group or one task, else ``lm-eval``.
    strict : bool
        A run that cannot be read rejects the whole import (store unchanged); by default
        it is skipped and named with its reason in ``Source.skipped``, and the other runs
        are imported.
    progress : callable, optional
        ``progress(fraction, text)`` as runs are read.

    Returns
    -------
    Source
        Of kind ``"lm-eval"``, holding every readable run put together (one transaction
        at :func:`insert`).

    Raises
    ------
    InputError
        On a path that holds no run, ``model`` given with several runs, no readable run,
        or (``strict``) the first bad run.
    """
    import tempfile

    from lifelong_core.errors import few

    path = Path(path)
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise InputError("An lm-eval import needs a non-empty model name.", param="model")
    if path.is_file() and path.suffix.lower() == ".zip":
        with tempfile.TemporaryDirectory(prefix="lbe-lm-eval-") as tmp:
            root = extract_zip(path, Path(tmp) / path.stem)
            src = _read_runs(root, path, model, metric, filter, dataset, strict, progress)
        return src
    if not path.exists():
        raise InputError(f"lm-eval path {path} does not exist.")
    if path.is_file():
        # One run's results file or one task's samples file: the reader finds the rest.
        return _read_runs(path, path, model, metric, filter, dataset, strict, progress, [path])
    runs = run_folders(path)
    if not runs:
        raise InputError(
            f"lm-eval path {path} holds no run (no results_<timestamp>.json or "
            "samples_<task>_<timestamp>.jsonl file in it or its folders)."
        )
    if model is not None and len(runs) > 1:
        raise InputError(
            f"a model name names one run, but {path} holds {len(runs)} runs "
            f"({few([_rel(r, path) for r in runs])}); leave it out: each run is named by its results file.",
            param="model",
        )
    return _read_runs(path, path, model, metric, filter, dataset, strict, progress, runs)


def _rel(run: Path, root: Path) -> str:
    try:
        rel = run.relative_to(root)
    except ValueError:
        return run.name
    return str(rel) if str(rel) != "." else run.name


@dataclass(frozen=True)
class SkippedRun:
    """A run left out of an import, and why (one sentence)."""

    run: str
    reason: str


def _read_runs(root, shown, model, metric, filter, dataset, strict, progress, runs=None) -> Source:
    """Read every run under ``root`` (``runs``: the run paths, default every run folder);
    ``shown`` is the path the user gave (messages and the source name use it)."""
    import hashlib

    from lifelong_core.errors import few
    from lifelong_core.store.lm_eval import LmEvalRun, read_lm_eval

    root, shown = Path(root), Path(shown)
    metric, filter = metric or None, filter or None
    runs = run_folders(root) if runs is None else runs
    if not runs:
        raise InputError(f"{shown} holds no lm-eval run.")
    if len(runs) == 1:
        progress = None  # one run reads in a moment: no report
    read: list = []
    names: dict[str, str] = {}
    hashes: dict[str, str] = {}
    skipped: list[SkippedRun] = []
    for i, run in enumerate(runs):
        label = _rel(run, root) if run != root else shown.name
        if progress is not None:
            progress(i / len(runs), f"Reading run {label} ({i + 1} of {len(runs)})…")
        # lm-eval names a model's folder org__model; a loose folder says nothing.
        folder = run if run.is_dir() else run.parent
        fallback = model_name_from_folder(folder) if "__" in folder.name else None
        try:
            got = read_lm_eval(
                run, model, metric=metric, dataset=dataset, filter=filter, default_name=fallback
            )
            name = str(got.models["model_id"].iloc[0])
            if name in names:
                raise InputError(
                    f"its model {name!r} is also the model of run {names[name]}; import one of them"
                )
            meta = got.sample_meta.dropna()
            clash = [sid for sid, h in meta.items() if hashes.get(sid, h) != h]
            if clash:
                raise InputError(
                    f"its item {clash[0]!r} differs from the same item in the runs before it "
                    f"(doc_hash; {len(clash)} such items): a different version of the task"
                )
        except InputError as exc:
            reason = str(exc).rstrip(".")
            if strict or len(runs) == 1:
                if len(runs) == 1:
                    raise
                raise InputError(
                    f"run {label} of {shown} cannot be imported: {reason}; nothing was imported.",
                    param=getattr(exc, "param", None),
                ) from None
            skipped.append(SkippedRun(label, reason))
            continue
        names[name] = label
        hashes.update(meta.to_dict())
        read.append(got)
    if progress is not None:
        progress(1.0, f"Read {len(read)} of {len(runs)} runs.")
    if not read:
        first = skipped[0]
        raise InputError(
            f"none of the {len(runs)} runs in {shown} could be read ({few([s.run for s in skipped])}); "
            f"the first, {first.run}: {first.reason}."
        )
    if len(read) == 1 and not skipped:
        combined = read[0]
    else:
        h = hashlib.sha256()
        for r in read:
            h.update(r.checksum.encode())
        table = pd.concat([r.table for r in read], ignore_index=True)
        meta = pd.concat([r.sample_meta for r in read])
        metrics: dict = {}
        for r in read:
            for task, used in r.metrics.items():
                metrics.setdefault(task, {}).setdefault(used, 0)
                metrics[task][used] += 1
        combined = LmEvalRun(
            table,
            pd.concat([r.models for r in read], ignore_index=True),
            meta[~meta.index.duplicated()],
            f"lm-eval:{shown}",
            "sha256:" + h.hexdigest(),
            {t: max(c, key=c.get) for t, c in metrics.items()},
        )
        mixed = {t: c for t, c in metrics.items() if len(c) > 1}
        if mixed:
            combined = dataclasses.replace(combined, metrics={**combined.metrics, **_mixed(mixed)})
    return Source(
        "lm-eval",
        combined.source,
        combined.checksum,
        dataset or None,
        path=shown,
        model=model,
        metric=metric or None,
        filter=filter or None,
        run=combined,
        runs=len(runs),
        skipped=tuple(skipped),
    )


def _mixed(mixed: dict) -> dict:
    """Tasks scored by different metrics in different runs: (metric list, filter list) text."""
    out = {}
    for task, counts in mixed.items():
        parts = [f"{m} in {k} run(s)" for (m, _), k in sorted(counts.items(), key=lambda x: -x[1])]
        filters = sorted({f for _, f in counts})
        out[task] = ("; ".join(parts), ", ".join(filters))
    return out


def default_lm_eval_dataset(run) -> str:
    """The dataset lm-eval items go to when none is named: the one group that lists every
    task of the runs, else their one task, else ``lm-eval``."""
    tasks = pd.unique(run.table["domain"])
    groups = pd.unique(run.table["category"].dropna()) if "category" in run.table else []
    if len(groups) == 1 and run.table["category"].notna().all():
        return str(groups[0])
    if len(tasks) == 1:
        return str(tasks[0])
    return "lm-eval"


def lm_eval_datasets(store, run, dataset: str | None) -> pd.Series:
    """Each row's dataset for an lm-eval import: ``dataset`` if named; else the dataset the
    store already keeps the item in, and for new items the dataset the store keeps the
    import's other items in (when that is one) or :func:`default_lm_eval_dataset`."""
    if dataset:
        return pd.Series(dataset, index=run.table.index)
    ids = run.table["sample"].astype(str)
    known = store.datasets_of_samples(pd.unique(ids))
    held = set(known.values())
    fresh = next(iter(held)) if len(held) == 1 else default_lm_eval_dataset(run)
    return pd.Series([known.get(i, fresh) for i in ids], index=ids.index, dtype=object)


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
        run = src.run
        table = run.table.assign(dataset=lm_eval_datasets(store, run, src.dataset).to_numpy())
        # The family is the importer's guess (the organisation of org/model): a model the
        # store already holds keeps the family it has.
        held = store.models().set_index("model_id")["family"]
        models = run.models.copy()
        known = models["model_id"].isin(held.index)
        models.loc[known, "family"] = held.reindex(models.loc[known, "model_id"]).to_numpy()
        run = dataclasses.replace(run, table=table, models=models)
        summary = store.insert_lm_eval_run(run, progress)
        return {**summary, "runs": src.runs, "skipped": [(s.run, s.reason) for s in src.skipped]}
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
    from lifelong_core.errors import few

    runs, skipped = summary.get("runs", 0), summary.get("skipped") or []
    of_runs = f" from {runs - len(skipped)} of {runs} runs" if runs > 1 or skipped else ""
    left = f"; {len(skipped)} run(s) skipped ({few([s[0] for s in skipped])})" if skipped else ""
    return (
        f"imported {summary['entries']} predictions{of_runs} into {path}: {summary['new_models']} new models, "
        f"{summary['new_samples']} new samples (log entry {summary['log_id']}){left}."
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
