"""Getting predictions into a store: one path for ``python -m lifelong_core import``, the
app's Data page and the Python API.

A source is read and validated before the store is touched, by the reader the registry
names for its format (:mod:`lifelong_core.io.readers`: :func:`source`, with the options
the reader declares; :func:`lm_eval_source` and :func:`inspect_source` name two readers
directly), then written in one transaction by :func:`insert`.
:func:`import_into` adds the command line's rule for a store that does not exist yet:
create it, and remove it again if the import fails. Uploaded lm-eval runs arrive as a zip
or as loose files; :func:`extract_zip` unpacks a zip safely and :func:`run_folders` finds
the runs inside (one folder per model, as lm-eval writes them).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.lm_eval import LmEvalRun, SkippedRun, model_name_from_folder, run_folders
from lifelong_core.io.readers import WRITES, Source, read, reader, readers
from lifelong_core.io.text import extract_zip

if TYPE_CHECKING:
    from lifelong_core.store import Store

__all__ = [
    "SkippedRun",
    "Source",
    "default_lm_eval_dataset",
    "extract_zip",
    "held_store",
    "import_into",
    "import_kinds",
    "insert",
    "inspect_source",
    "lm_eval_datasets",
    "lm_eval_source",
    "model_name_from_folder",
    "option_values",
    "run_folders",
    "source",
    "summary_text",
]


def import_kinds() -> list[str]:
    """The formats an import reads, in the registry's order (what the ``import`` command's
    flags and the Data page offer)."""
    return [r.name for r in readers(importable=True)]


def source(
    kind: str,
    path: str | Path,
    dataset: str | None = None,
    *,
    progress: Callable[[float, str], object] | None = None,
    **options: Any,
) -> Source:
    """Read and validate an input with the reader registered for ``kind``; nothing is
    written. The one import path of the command line, the Data page and the Python API.

    Parameters
    ----------
    kind : str
        A registered importable format (:func:`import_kinds`).
    path : str or Path
        Its file (or folder, for a format that reads one).
    dataset : str, optional
        The dataset of samples that name none.
    progress : callable, optional
        ``progress(fraction, text)``, passed to a reader that reports it.
    **options
        The options the reader declares (:attr:`~lifelong_core.io.readers.Reader.options`);
        None values are left out.

    Returns
    -------
    Source

    Raises
    ------
    InputError
        On an unknown format, an option the format does not take or a required one
        missing (named by the option), or the first thing wrong with the input (named by
        file, row and column).
    """
    if kind not in import_kinds():
        raise InputError(
            f"unknown import format {kind!r}; use one of {', '.join(import_kinds())}.",
            param="kind",
        )
    fmt = reader(kind)
    given = {k: v for k, v in options.items() if v is not None and v is not False}
    for name in given:
        if fmt.option(name) is None:
            takes = ", ".join(o.name for o in fmt.options) or "none"
            raise InputError(
                f"the {kind} format takes no option {name!r} (its options: {takes}).",
                param=name,
            )
    for opt in fmt.options:
        if opt.required and opt.name not in given:
            raise InputError(f"a {kind} import needs {opt.name} too.", param=opt.name)
    if progress is not None and fmt.progress:
        given["progress"] = progress
    return read(kind, path, dataset=dataset, **given)


def option_values(kind: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """A form's or a command line's values of the format's options, typed: empty text is
    no value, an ``int`` option's text a whole number.

    Parameters
    ----------
    kind : str
        A registered format.
    raw : mapping
        Option name -> value as entered (text, a path, a bool or None); names the format
        does not declare are left out.

    Returns
    -------
    dict
        Option name -> value, for :func:`source`.

    Raises
    ------
    InputError
        If an ``int`` option's text is not a whole number (naming the option).
    """
    out: dict[str, Any] = {}
    for opt in reader(kind).options:
        value = raw.get(opt.name)
        if isinstance(value, str):
            value = value.strip() or None
        if value is None or value is False:
            continue
        if opt.kind == "int" and isinstance(value, str):
            if not value.lstrip("-").isdigit():
                raise InputError(f"{opt.name} {value!r} is not a whole number.", param=opt.name)
            value = int(value)
        out[opt.name] = value
    return out


def _reader(kind: str, reads: str) -> Callable[..., Source]:
    """``source`` bound to the reader ``kind``, with a docstring of its own (``reads``
    says what it reads): each module-level name below is one of these."""

    def read_source(*args: Any, **options: Any) -> Source:
        return read(kind, *args, **options)

    target = reader(kind).target.replace(":", ".")
    read_source.__doc__ = f"""{reads}, read and validated; nothing is written.

    The {kind!r} reader, :func:`{target}`.

    Parameters
    ----------
    *args
        The reader's positional arguments, its file(s) first.
    **options
        The reader's keyword options (e.g. ``dataset``).

    Returns
    -------
    Source
        The input read and validated, ready for :func:`insert`.

    Raises
    ------
    InputError
        On the first thing wrong with the input (named by file, row and column).
    """
    return read_source


# The lm-eval and Inspect readers by name, for the lm-eval upload path and the harness.
lm_eval_source = _reader(
    "lm-eval", "lm-evaluation-harness --log_samples output: a run, a folder or zip of runs"
)
inspect_source = _reader("inspect", "One Inspect AI log (.eval or .json)")


def default_lm_eval_dataset(run: LmEvalRun) -> str:
    """The dataset lm-eval items go to when none is named: the one group that lists every
    task of the runs, else their one task, else ``lm-eval``.

    Parameters
    ----------
    run : lifelong_core.io.lm_eval.LmEvalRun
        The runs read; its ``table`` has a ``domain`` (the lm-eval task) and, when the
        results name groups, a ``category`` (the task's group) column.

    Returns
    -------
    str
        The dataset name.
    """
    tasks = pd.unique(run.table["domain"])
    groups: Sequence[object] = (
        list(pd.unique(run.table["category"].dropna())) if "category" in run.table else []
    )
    if len(groups) == 1 and run.table["category"].notna().all():
        return str(groups[0])
    if len(tasks) == 1:
        return str(tasks[0])
    return "lm-eval"


def lm_eval_datasets(store: Store, run: LmEvalRun, dataset: str | None) -> pd.Series:
    """Each row's dataset for an lm-eval import: ``dataset`` if named; else the dataset the
    store already keeps the item in, and for new items the dataset the store keeps the
    import's other items in (when that is one) or :func:`default_lm_eval_dataset`.

    So a second run of the same tasks lands beside the first, whatever it is called.

    Parameters
    ----------
    store : Store
        The open store the runs go into.
    run : lifelong_core.io.lm_eval.LmEvalRun
        The runs read; ``run.table`` has one row per (model, item) with a ``sample`` id.
    dataset : str or None
        The dataset the user named (``import --dataset``), or None.

    Returns
    -------
    pandas.Series
        The dataset of each row of ``run.table``, on its index.
    """
    if dataset:
        return pd.Series(dataset, index=run.table.index)
    ids = run.table["sample"].astype(str)
    known = store.datasets_of_samples(pd.unique(ids))
    held = set(known.values())
    fresh = next(iter(held)) if len(held) == 1 else default_lm_eval_dataset(run)
    return pd.Series([known.get(i, fresh) for i in ids], index=ids.index, dtype=object)


def insert(store: Store, src: Source, progress: Callable[[float], object] | None = None) -> dict:
    """Write ``src`` into an open writable store in one transaction, by its ``write``
    form (``insert_long``, ``insert_matrix`` or ``insert_lm_eval_run``).

    For lm-eval runs each item's dataset follows :func:`lm_eval_datasets`, and a model
    the store already holds keeps its family (the importer's is only a guess from the
    organisation in ``org/model``).

    Parameters
    ----------
    store : Store
        A store opened for writing.
    src : Source
        The validated input (:func:`source`).
    progress : callable, optional
        Called with the fraction written, from 0 to 1.

    Returns
    -------
    dict
        The store's summary of the import (entries, new_models, new_samples, log_id, ...);
        for lm-eval also ``runs`` (run folders found) and ``skipped`` ((run, reason) of
        each run left out).

    Raises
    ------
    InputError
        On an unknown ``write`` form, or anything the store refuses (entries that conflict
        with what it holds, a read-only handle); the store is then unchanged.
    """
    if src.write == "long":
        if src.table is None:
            raise InputError(f"{src.source}: the reader gave no table to write.")
        return store.insert_long(
            src.table,
            source=src.source,
            models=src.models,
            dataset=src.dataset,
            checksum=src.checksum,
            progress=progress,
        )
    if src.write == "matrix":
        if src.matrix is None:
            raise InputError(f"{src.source}: the reader gave no matrix to write.")
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
    if src.write == "lm-eval":
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
    raise InputError(f"unknown import form {src.write!r}; expected one of {', '.join(WRITES)}.")


@contextmanager
def held_store(path: str | os.PathLike[str]) -> Iterator[Any]:
    """The writer of the existing store ``path``, held while an import reads its inputs.

    Opened (and checked sound) before the inputs are read, so another process cannot
    replace or write the store meanwhile (``build-demo --force`` is refused, naming this
    one), and a store that is locked is refused before minutes of reading. A store that
    does not exist yet gives ``None``: it is created only once the input is valid.

    Parameters
    ----------
    path : str or Path
        The store file.

    Yields
    ------
    Store or None
        The open writer (closed when the block ends), or None if ``path`` does not exist.

    Raises
    ------
    InputError
        If ``path`` is not a sound store (not a store, another format version, damaged, or
        failing its integrity check).
    StoreLockedError
        If another process holds the store.
    """
    path = Path(path)
    if not path.exists():
        yield None
        return
    from lifelong_core.store import Store
    from lifelong_core.store.maintenance import check_sound

    with Store.open(path, read_only=False) as store:
        check_sound(store)  # never add to a store that fails its integrity check
        yield store


def import_into(
    path: str | os.PathLike[str],
    src: Source,
    progress: Callable[[float], object] | None = None,
    store: Store | None = None,
) -> dict:
    """:func:`insert` into the store file ``path``, created if missing and removed again
    when the import into a new store fails (the command line's rule).

    An existing store is checked sound first: nothing is added to a store that fails its
    integrity check.

    Parameters
    ----------
    path : str or Path
        The store file.
    src : Source
        The validated input (:func:`source`).
    progress : callable, optional
        Called with the fraction written, from 0 to 1.
    store : Store, optional
        The writer :func:`held_store` holds on ``path``, used as it is (not closed).

    Returns
    -------
    dict
        The summary of :func:`insert`.

    Raises
    ------
    InputError
        If the existing store is not sound, its folder does not exist, or the store
        refuses the input; a store created for the import is then removed, an existing one
        is unchanged.
    StoreLockedError
        If another process holds the store.
    """
    from lifelong_core.store import Store
    from lifelong_core.store.maintenance import check_sound

    if store is not None:
        return insert(store, src, progress)
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


def summary_text(summary: Mapping, path: str | os.PathLike[str]) -> str:
    """The one line the command line prints after an import (and the Data page shows).

    Parameters
    ----------
    summary : mapping
        The summary of :func:`insert` (entries, new_models, new_samples, log_id, and for
        lm-eval runs and skipped).
    path : str or Path
        The store, as the line names it.

    Returns
    -------
    str
        E.g. ``imported 1200 predictions into demo.duckdb: 3 new models, 400 new samples
        (log entry 7).``, with the runs read and skipped for lm-eval.
    """
    from lifelong_core.errors import few

    runs, skipped = summary.get("runs", 0), summary.get("skipped") or []
    of_runs = f" from {runs - len(skipped)} of {runs} runs" if runs > 1 or skipped else ""
    left = f"; {len(skipped)} run(s) skipped ({few([s[0] for s in skipped])})" if skipped else ""
    return (
        f"imported {summary['entries']} predictions{of_runs} into {path}: {summary['new_models']} new models, "
        f"{summary['new_samples']} new samples (log entry {summary['log_id']}){left}."
    )
