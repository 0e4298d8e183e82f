"""``build-demo``: build the demo DuckDB store from the committed files under ``data/``.

    python -m lifelong_core build-demo --store data/demo.duckdb [--source data/lifelong_digits]
        [--llm-source data/open_llm_leaderboard_v2] [--force]

No training and no network: the committed predictions of Lifelong-Digits (see
:mod:`lifelong_core.datasets.digits`) are checked against their MANIFEST and imported with
one :meth:`Store.insert_matrix` call; the committed Open LLM Leaderboard v2 results (see
:mod:`lifelong_core.datasets.leaderboard`) are added as a second dataset through the long
import a user would run, and what is irregular about them is reported.

The store is built in a temporary file beside the target (``.NAME.building-<pid>``) and
renamed into place at the end, so the target is never half-made. A build that fails or
is interrupted (Ctrl+C, SIGTERM) removes its temporary file; one killed outright (SIGKILL,
a power cut) cannot, and the next build removes it. An existing store is replaced only
with ``--force``, and never while another process has it open (an import, a writer, the
app serving it): the build is refused, naming that process, as an import is.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from argparse import Namespace
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.paths import DATA_DIR

DEFAULT_SOURCE = DATA_DIR / "lifelong_digits"
DATASET_DESCRIPTION = (
    "Lifelong-Digits: scikit-learn's real 8x8 handwritten digits (UCI optdigits) in {domains} "
    "domains (the clean test pool, a careful replication, rendered natural shifts), predicted "
    "by {models} real scikit-learn classifiers of {families} families."
)
LLM_SOURCE = DATA_DIR / "open_llm_leaderboard_v2"
DATASET_SOURCE = "sklearn.datasets.load_digits; built by python -m lifelong_core.datasets.digits"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build-demo",
        help="build the demo store from the committed files under data/",
        description="Build the demo store from the files committed under data/ (no network, "
        "no training): the digits, the Open LLM Leaderboard v2 and VTAB-1k datasets.",
        example="lbe build-demo --store demo.duckdb",
    )
    p.add_argument(
        "--store", type=Path, default=Path("data/demo.duckdb"), help="store file to create"
    )
    p.add_argument(
        "--source", type=Path, default=DEFAULT_SOURCE, help="directory of the committed demo files"
    )
    p.add_argument(
        "--llm-source",
        type=Path,
        default=LLM_SOURCE,
        help="directory of the committed Open LLM Leaderboard v2 files (second dataset)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing store")
    p.set_defaults(func=run)


def _stale_paths(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + ".wal")]


def _building(store: Path) -> str:
    """The prefix of the temporary files a build of ``store`` makes beside it."""
    return f".{store.name}.building-"


def remove_stale_builds(store: Path) -> list[Path]:
    """Remove the temporaries of earlier builds of ``store`` whose process is gone.

    A build writes ``.NAME.building-<pid>`` beside the target and renames it into place at
    the end; a build killed before then (SIGKILL, a power cut) cannot clean up after
    itself, so the next build does. A temporary whose process still runs is another build
    at work and is left alone. Returns the files removed.
    """
    store = Path(store)
    prefix = _building(store)
    removed: list[Path] = []
    try:
        candidates = sorted(store.parent.glob(prefix + "*"))
    except OSError:
        return removed
    for p in candidates:
        pid_text = p.name[len(prefix) :].removesuffix(".wal")
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        try:
            p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OverflowError:
        return False
    return True


def ensure_demo_store(store: Path) -> Path:
    """``store``, built from the bundled data first when it does not exist yet.

    What ``lbe app`` without ``--store`` and :func:`lifelong_core.demo_store` serve: a
    missing demo store is built once (about 15 seconds) by :func:`build_store` from the
    default sources (Lifelong-Digits and the Open LLM Leaderboard v2 files under
    ``data/``), with a line on standard output saying so; an existing file is returned as
    is, unchecked.

    Parameters
    ----------
    store : Path
        The store file; its folder is created if missing.

    Returns
    -------
    Path
        ``store``, now an existing file.

    Raises
    ------
    InputError
        If ``store`` is a directory, if the bundled files are missing or do not match
        their MANIFEST, or if another process created the store during the build (left
        as it is); :class:`~lifelong_core.errors.StoreLockedError`, an InputError, if
        another process holds the path.
    """
    if not store.is_file():
        store.parent.mkdir(parents=True, exist_ok=True)
        print(f"building the demo store at {store} (once, about 15 s) ...", flush=True)
        build_store(store)
    return store


def build_store(
    store: Path,
    source: Path = DEFAULT_SOURCE,
    *,
    force: bool = False,
    llm_source: Path | None = LLM_SOURCE,
) -> dict:
    """Build ``store`` from the demo files in ``source`` and, unless ``llm_source`` is None,
    the leaderboard files there; returns the digits import summary, plus ``llm``: the
    leaderboard's (with its duplicated and partial models).

    An existing store is replaced only with ``force``, and never while another process
    holds it (an import, a writer, the app serving it): the build holds the file alone from
    start to end (:func:`lifelong_core.store.held_alone`), so nothing can be written into
    the old store and then lost, and checks again at the rename that the path still names
    the file it holds (:func:`lifelong_core.store.replace_held`).
    """
    from lifelong_core.store import held_alone

    store = Path(store)
    if store.is_dir():
        raise InputError(f"store path {store} is a directory, not a file.")
    if store.exists() and not force:
        raise InputError(f"store {store} already exists; pass --force to rebuild it.")
    if not store.parent.exists():
        raise InputError(f"cannot create store {store}: folder {store.parent} does not exist.")
    remove_stale_builds(store)
    with held_alone(store, "replace") as held:
        return _build(store, source, llm_source, held)


def _build(store: Path, source: Path, llm_source: Path | None, held: Any) -> dict:
    from lifelong_core.datasets import leaderboard
    from lifelong_core.datasets.demo_files import PREDICTIONS, load_demo, verify_manifest
    from lifelong_core.store import Store, replace_held

    verify_manifest(source)
    data = load_demo(source)
    llm = leaderboard.load(llm_source) if llm_source is not None else None
    datasets = data.samples["dataset"].unique()
    if len(datasets) != 1:
        raise InputError(
            f"{source / 'samples.csv'} names {len(datasets)} datasets; a demo directory holds exactly one."
        )
    samples = data.samples[["sample_id", "dataset", "domain", "category", "label", "split"]].copy()
    samples["meta"] = [f'{{"source_index":{int(i)}}}' for i in data.samples["source_index"]]
    models = data.models[["model_id", "name", "family", "release_order", "metadata"]]

    tmp = store.with_name(f"{_building(store)}{os.getpid()}")
    for p in _stale_paths(tmp):
        p.unlink(missing_ok=True)
    try:
        with Store.create(tmp) as st:
            description = DATASET_DESCRIPTION.format(
                domains=len(data.domains),
                models=len(data.models),
                families=data.models["family"].nunique(),
            )
            st.add_dataset(
                str(datasets[0]), description=description, synthetic=False, source=DATASET_SOURCE
            )
            summary = st.insert_matrix(
                data.correct,
                models=models,
                samples=samples,
                source=str(source / PREDICTIONS),
                extras={
                    # float16 -> float32 is exact, so the store holds what is committed.
                    "confidence": data.confidence.astype(np.float32),
                    "true_prob": data.true_prob.astype(np.float32),
                    "predicted": data.predicted.astype(np.int32),
                },
            )
            if llm is not None and llm_source is not None:
                summary = {**summary, "llm": leaderboard.insert(st, llm_source, llm)}
            # The lifelong state (Sort state, mirt item parameters) is kept in the store, as
            # `state --refresh` keeps it, so no page sorts or fits the cache when it opens.
            from lifelong_core.workflows import lifelong_state

            for ds in st.datasets()["dataset"]:
                lifelong_state.refresh(st, str(ds))
        # The store is held from the start; at the rename the path is checked to still
        # name the held file (or, for a new store, nothing).
        replace_held(tmp, store, held)
    finally:
        for p in _stale_paths(tmp):
            p.unlink(missing_ok=True)
    return summary


_TERMINATED: list[int] = []


def _stop_on_sigterm(signum: int, frame: object) -> NoReturn:
    # SIGTERM's default ends the process at once, before the build's clean-up runs; as
    # Ctrl+C's exception it unwinds through build_store's finally (the command line then
    # says "interrupted" and exits 130).
    _TERMINATED.append(signum)
    raise KeyboardInterrupt


def run(args: Namespace) -> int:
    t0 = time.perf_counter()
    try:
        before = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    except ValueError:  # not the main thread: signals stay as they are
        before = None
    try:
        summary = build_store(args.store, args.source, force=args.force, llm_source=args.llm_source)
    except RuntimeError:
        # Interrupted inside a DuckDB query, the signal's exception comes back as DuckDB's
        # "Query interrupted"; the clean-up has run either way.
        if _TERMINATED:
            raise KeyboardInterrupt from None
        raise
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)
    from lifelong_core.store import Store

    with Store.open(args.store) as st:
        n_models, n_samples = len(st.models()), len(st.samples())
    print(
        f"built {args.store}: {n_models} models x {n_samples} samples from {args.source} and {args.llm_source} "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    llm = summary["llm"]
    print(f"dataset {llm['dataset']}: {llm['models']} models, {llm['entries']:,} results")
    if llm["duplicated"]:
        print(
            f"  {len(llm['duplicated'])} model names appear twice in the release with identical rows; each is stored "
            f"once: {', '.join(llm['duplicated'])}"
        )
    for name, tasks in llm["partial"].items():
        print(
            f"  {name} has no results on {', '.join(tasks)}: stored with what it has, marked partial in its metadata"
        )
    return 0
