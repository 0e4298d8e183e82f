"""The public Python API: the researcher's loop in a notebook.

Every name here is re-exported at the top of the package (``import lifelong_core as
lbe``; ``lbe.open_store``, ``lbe.estimate_new_model``, ...), lazily, so importing the package
loads neither Streamlit nor DuckDB. Each function is the one the command line and the app
call for the same job (the workflows of :mod:`lifelong_core.workflows`, the engine of
:mod:`lifelong_core.methods`, :mod:`lifelong_core.sweeping`, :mod:`lifelong_core.stats` and
:mod:`lifelong_core.matching`); this module adds only the store-level conveniences a
notebook wants: a dataset by name, a model left out of the cache to play a new one.

The loop:

>>> import lifelong_core as lbe
>>> store = lbe.open_store(lbe.demo_store())
>>> data, new = "open-llm-leaderboard-v2", "meta-llama/Llama-3.2-3B-Instruct"
>>> items = lbe.select_items(store, 100, dataset=data, model=new, leave_out=new)
>>> truth = lbe.results(store, new, dataset=data)  # a stored model plays the new one
>>> est = lbe.estimate_new_model(store, {i: truth[i] for i in items}, dataset=data, leave_out=new)
>>> overall = est.estimate  # accuracy over every item, with its 95% interval
>>> bool(overall.lo <= truth.mean() <= overall.hi)
True
>>> store.close()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.methods.memory import FitMemory
from lifelong_core.methods.registry import (
    DEFAULT_METHOD,
    Capabilities,
    available_methods,
    capabilities,
    get_method,
    register,
)
from lifelong_core.sweeping import SweepResult, run_sweep

if TYPE_CHECKING:
    from lifelong_core.matching import MatchSummary, Predictions
    from lifelong_core.stats import CountTable, WeightRegions
    from lifelong_core.store import Store
    from lifelong_core.workflows.backtest import Backtest
    from lifelong_core.workflows.imports import Source
    from lifelong_core.workflows.new_model import NewModelEstimate
    from lifelong_core.workflows.rankings import RankingOptions
    from lifelong_core.workflows.selection import Selection

__all__ = [
    "DEFAULT_METHOD",
    "Capabilities",
    "FitMemory",
    "SweepResult",
    "available_methods",
    "backtest",
    "cache",
    "capabilities",
    "counts",
    "create_store",
    "demo_store",
    "estimate_new_model",
    "get_method",
    "import_file",
    "import_inspect",
    "import_lm_eval",
    "import_long",
    "import_matrix",
    "matched_accuracy",
    "matched_accuracy_in_store",
    "open_store",
    "pairwise_differences",
    "rank_intervals",
    "rank_models",
    "register",
    "results",
    "run_sweep",
    "select_items",
    "sweep",
    "task_weighting",
    "vtab_counts",
]


# ------------------------------------------------------------------ arguments at the boundary
# Every public function checks its arguments here, before any work, as the command line
# checks its flags: a value of the wrong type is a TypeError, a value of the right type but
# outside what the function takes (NaN, a range, an unknown name, nothing) an InputError,
# each one sentence naming the parameter, with the same rules as the command line
# (lifelong_core.limits). Without them a path given for a store, ``budgets="32"`` (budgets 3
# and 2), ``0.5`` as a result (read as 0) or ``seed=nan`` reached the engine.
def _kind(value: object) -> str:
    return type(value).__name__


def _store(store: object, param: str = "store") -> Store:
    from lifelong_core.store import Store

    if not isinstance(store, Store):
        raise TypeError(
            f"{param} must be an open Store (from lbe.open_store(path)), got {_kind(store)}."
        )
    return store


def _text(value: object, param: str, *, optional: bool = False) -> str | None:
    from lifelong_core.io.limits import check_name

    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{param} must be text, got {_kind(value)}.")
    if not value.strip():
        raise InputError(f"{param} is empty; give a name.", param=param)
    try:
        check_name(value, param)
    except InputError as exc:
        raise InputError(str(exc), param=param) from None
    return value


def _path(value: object, param: str) -> str | os.PathLike:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{param} must be a path (str or pathlib.Path), got {_kind(value)}.")
    if not str(value).strip():
        raise InputError(f"{param} is empty; give a file.", param=param)
    if "\x00" in str(value):
        raise InputError(f"{param} holds a NUL character; no file is named so.", param=param)
    return value


def _flag(value: object, param: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{param} must be True or False, got {_kind(value)}.")
    return bool(value)


def _whole(value: object, param: str, lo: int, hi: int, *, optional: bool = False) -> int | None:
    from lifelong_core.limits import check_count

    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{param} must be a whole number, got {_kind(value)} {_short(value)}.")
    return check_count(value, param, lo, hi, param=param)


def _seed(value: object, param: str = "seed") -> int:
    from lifelong_core.limits import check_seed

    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{param} must be a whole number, got {_kind(value)} {_short(value)}.")
    return check_seed(value, param=param, what=param)


def _real(
    value: object,
    param: str,
    lo: float | None = None,
    hi: float | None = None,
    **open_ends: bool,
) -> float:
    from lifelong_core.limits import check_real

    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{param} must be a number, got {_kind(value)}.")
    return check_real(value, param, lo, hi, param=param, **open_ends)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _names(value: object, param: str, *, optional: bool = True) -> list[str] | None:
    """A list of names: one text is refused (a str is a sequence of letters)."""
    if value is None and optional:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{param} must be a list of names, got {_kind(value)}.")
    names = list(value)
    if not names:
        raise InputError(f"{param} is empty; give at least one name.", param=param)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{param} must hold names (text), got {_kind(name)}.")
        _text(name, param)
    return names


def _wholes(value: object, param: str, lo: int = 1, *, optional: bool = True) -> list[int] | None:
    """A list of whole numbers: one text or one number is refused."""
    from lifelong_core.limits import check_count

    if value is None and optional:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{param} must be a list of whole numbers, got {_kind(value)}.")
    items = list(value.tolist() if isinstance(value, np.ndarray) else value)
    if not items:
        raise InputError(f"{param} is empty; give at least one number.", param=param)
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise TypeError(f"{param} must hold whole numbers, got {_kind(item)} {_short(item)}.")
        out.append(check_count(item, f"every value of {param}", lo, 2**62, param=param))
    return out


def _method_name(value: object, param: str) -> str:
    from lifelong_core.methods.registry import method_spec

    name = _text(value, param)
    assert name is not None
    try:
        method_spec(name)
    except InputError as exc:
        raise InputError(str(exc), param=param) from None
    return name


def _leave_out(value: object) -> str | list[str] | None:
    if value is None or isinstance(value, str):
        return _text(value, "leave_out", optional=True)
    return _names(value, "leave_out")


def _results(value: object, param: str = "results", *, allow_empty: bool = False) -> dict[str, int]:
    """Sample id -> 0/1; anything but 0 and 1 (0.5, NaN, 2, "yes") is refused, not rounded."""
    if isinstance(value, pd.Series):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{param} must map sample ids to 0/1 (a dict or Series), got {_kind(value)}."
        )
    if not value and not allow_empty:
        raise InputError(f"{param} is empty; give the results of at least one item.", param=param)
    out: dict[str, int] = {}
    for key, v in value.items():
        if isinstance(key, (float, np.floating)) or not isinstance(key, (str, int, np.integer)):
            raise TypeError(f"{param} must be keyed by sample ids (text), got {_kind(key)}.")
        if isinstance(v, (bool, np.bool_)):
            out[str(key)] = int(v)
            continue
        if not isinstance(v, (int, float, np.integer, np.floating)) or v not in (0, 1):
            raise InputError(
                f"{param} for sample {str(key)[:60]!r} is {_short(v)}; results must be 0 or 1.",
                param=param,
            )
        out[str(key)] = int(v)
    return out


def _counts_arg(value: object, param: str = "counts") -> object:
    from lifelong_core.stats import CountTable

    if not isinstance(value, (CountTable, pd.DataFrame, str, os.PathLike)):
        raise TypeError(
            f"{param} must be a CountTable, a DataFrame of counts or the path of a counts.csv, "
            f"got {_kind(value)}."
        )
    if isinstance(value, (str, os.PathLike)):
        _path(value, param)
    return value


def _ranking_options(
    level: float,
    method: str,
    boot: int,
    normalize: bool,
    seed: int,
    chains: int,
    draws: int,
    warmup: int,
) -> RankingOptions:
    """The ranking functions' shared options, checked at the boundary, as one value."""
    from lifelong_core import limits
    from lifelong_core.workflows.rankings import RankingOptions

    _text(method, "method")
    _real(level, "level", 0, 1, open_lo=True, open_hi=True)
    _whole(boot, "boot", 1, limits.MAX_BOOT)
    _flag(normalize, "normalize")
    _seed(seed)
    _whole(chains, "chains", 1, limits.MAX_CHAINS)
    _whole(draws, "draws", 1, limits.MAX_DRAWS)
    _whole(warmup, "warmup", 0, limits.MAX_WARMUP)
    return RankingOptions(method, boot, normalize, seed, chains, draws, warmup)


# ------------------------------------------------------------------ the store
def open_store(path: str | Path, *, read_only: bool = True) -> Store:
    """Open a store of cached predictions.

    Parameters
    ----------
    path : str or Path
        A DuckDB file written by this package (``lbe import``, :func:`import_long`, ...).
    read_only : bool
        Read-only handles can be many at once; a writer needs the file alone.

    Returns
    -------
    Store
        Its reads (``datasets()``, ``models()``, ``samples()``, ``matrix()``,
        ``counts()``, ...) are listed in the store guide. Use it as a context manager, or
        call ``close()``, to release the file.

    Raises
    ------
    InputError
        If the file is missing, is not a store, is damaged, or is held by a writer.

    Examples
    --------
    >>> store = open_store(demo_store())
    >>> store.datasets()["dataset"].tolist()
    ['lifelong-digits', 'open-llm-leaderboard-v2']
    """
    _path(path, "path")
    _flag(read_only, "read_only")
    from lifelong_core.store import Store

    return Store.open(path, read_only=read_only)


def create_store(path: str | Path) -> Store:
    """Create a new, empty store and return it open for writing.

    Parameters
    ----------
    path : str or Path
        Where the DuckDB file goes; it must not exist yet.

    Returns
    -------
    Store

    Raises
    ------
    InputError
        If the path exists or its folder cannot be written.
    """
    _path(path, "path")
    from lifelong_core.store import Store

    return Store.create(path)


def demo_store() -> Path:
    """The path of the demo store, built from the bundled data on first use.

    In a clone it is ``data/demo.duckdb`` (what ``make store`` builds); installed, the
    user's cache folder (``$XDG_CACHE_HOME/lbe``, default ``~/.cache/lbe``); ``$LBE_STORE``
    overrides both. Building takes about 15 seconds, once.

    Returns
    -------
    Path
    """
    from lifelong_core.commands.build_demo import ensure_demo_store
    from lifelong_core.paths import default_store

    return ensure_demo_store(default_store())


def _dataset(store: Store, dataset: str | None) -> str:
    # The command line's one rule: the store's only dataset, else the one named.
    from lifelong_core.workflows.selection import resolve_dataset

    return resolve_dataset(store, dataset)


def _fitter(
    store: Store,
    cache: Selection,
    dataset: str | None,
    leave_out: Any,
    method: str,
    memory: FitMemory | None,
) -> Callable[..., Any]:
    """Fit ``method`` on ``cache`` for a task (None: the whole dataset), kept in ``memory``
    when one is given: a notebook that selects items, estimates, then selects again passes
    one and does not refit. Kept per (store file, its latest import, dataset, models left
    out, method, task), so an import into the store is seen."""
    from lifelong_core.store.state import latest_log_id
    from lifelong_core.workflows.item_choice import fit

    left = (leave_out,) if isinstance(leave_out, str) else tuple(sorted(leave_out or ()))
    base = (
        str(Path(store.path).resolve()),
        latest_log_id(store),
        _dataset(store, dataset),
        left,
        method,
    )

    # A task's method starts from the whole dataset's fit (item_choice.fit), itself kept
    # under the same base key, so the task alone keys it.
    def fitted(domain: str | None, whole: Any = None) -> Any:
        if memory is None:
            return fit(cache, method, domain, whole)
        return memory.get((*base, domain), lambda: fit(cache, method, domain, whole))

    return fitted


def _cache(store: Store, dataset: str | None, leave_out: str | Iterable[str] | None) -> Selection:
    from lifelong_core.workflows.item_choice import cache_of
    from lifelong_core.workflows.selection import without_models

    sel = cache_of(store, _dataset(store, dataset))
    if leave_out is None:
        return sel
    names = [leave_out] if isinstance(leave_out, str) else list(leave_out)
    return without_models(sel, names)


def cache(
    store: Store, *, dataset: str | None = None, leave_out: str | Iterable[str] | None = None
) -> Selection:
    """A dataset's cache: every real model evaluated on all of its samples, as a matrix.

    The matrix every estimate of a new model is fitted on (rows inserted as *estimated*
    are left out: they are predictions, not evaluations).

    Parameters
    ----------
    store : Store
        An open store (:func:`open_store`).
    dataset : str, optional
        Needed when the store holds several datasets.
    leave_out : str or iterable of str, optional
        Models to leave out, e.g. one that will play a new model.

    Returns
    -------
    Selection
        ``A`` (uint8, models x samples), ``models`` and ``samples`` (tables in row and
        column order), ``names``.
    """
    _store(store)
    _text(dataset, "dataset", optional=True)
    leave_out = _leave_out(leave_out)
    return _cache(store, dataset, leave_out)


def results(store: Store, model: str, *, dataset: str | None = None) -> pd.Series:
    """One stored model's 0/1 results on a dataset, indexed by sample id.

    Parameters
    ----------
    store : Store
        An open store (:func:`open_store`).
    model : str
        The model's id.
    dataset : str, optional
        Needed when the store holds several datasets.

    Returns
    -------
    pandas.Series
        ``uint8`` values indexed by sample id, in the dataset's sample order.

    Raises
    ------
    InputError
        If the model is unknown or was not evaluated on every sample of the dataset.
    """
    _store(store)
    _text(model, "model")
    _text(dataset, "dataset", optional=True)
    ds = _dataset(store, dataset)
    models = store.models()
    hit = models.loc[models["model_id"] == model, "model_idx"]
    if hit.empty:
        raise InputError(f"the store has no model {model!r}.", param="model")
    smp = store.samples(ds)
    row = store.matrix([int(hit.iloc[0])], smp["sample_idx"].to_numpy())[0]
    return pd.Series(row, index=smp["sample_id"].astype(str).to_numpy(), name=model)


# ------------------------------------------------------------------ importing
def _import(path: str | Path, src: Source) -> dict:
    from lifelong_core.workflows import imports

    return imports.import_into(path, src)


def import_file(
    store_path: str | Path,
    kind: str,
    path: str | Path,
    *,
    dataset: str | None = None,
    **options: Any,
) -> dict:
    """Import a file of any registered format in one transaction, creating the store if it
    does not exist: what ``lbe import --<kind> PATH`` runs.

    Parameters
    ----------
    store_path : str or Path
        The store's file (opened for writing for the import only).
    kind : str
        A registered importable format (``long``, ``matrix``, ``lm-eval``, ``inspect``
        or one registered later: :func:`lifelong_core.io.readers.readers`).
    path : str or Path
        Its file.
    dataset : str, optional
        The dataset of samples that do not name one.
    **options
        The options the format declares (``models=``, ``samples=``, ``model=``, ...).

    Returns
    -------
    dict
        The import's log row: new models, new samples, entries.

    Raises
    ------
    InputError
        On an unknown format or option, a required option missing, or any invalid row
        (named by row and column); the store is unchanged.

    Examples
    --------
    >>> import lifelong_core as lbe
    >>> lbe.import_file("my.duckdb", "long", "results.csv", dataset="bench")  # doctest: +SKIP
    """
    _path(store_path, "store_path")
    _text(kind, "kind")
    _path(path, "path")
    _text(dataset, "dataset", optional=True)
    from lifelong_core.workflows import imports

    return _import(store_path, imports.source(kind, path, dataset, **options))


def import_long(store_path: str | Path, table: str | Path, *, dataset: str | None = None) -> dict:
    """Import a long table (``model, sample, correct`` and optional columns) in one
    transaction, creating the store if it does not exist: :func:`import_file` with
    ``kind="long"``.

    Parameters
    ----------
    store_path : str or Path
        The store's file (opened for writing for the import only).
    table : str or Path
        A ``.csv`` or ``.parquet`` file (columns in the file-formats reference).
    dataset : str, optional
        The dataset of samples that do not name one.

    Returns
    -------
    dict
        The import's log row: new models, new samples, entries.

    Raises
    ------
    InputError
        On any invalid row (named by row and column); the store is unchanged.
    """
    _path(table, "table")
    return import_file(store_path, "long", table, dataset=dataset)


def import_matrix(
    store_path: str | Path,
    matrix: str | Path,
    models: str | Path,
    samples: str | Path,
    *,
    dataset: str | None = None,
    extras: Mapping[str, str | Path] | None = None,
) -> dict:
    """Import a 0/1 matrix (rows = models, columns = samples) with its id files:
    :func:`import_file` with ``kind="matrix"``.

    Parameters
    ----------
    store_path : str or Path
        The store file; it is created if it does not exist.
    matrix : str or Path
        ``.npy``, ``.npz``, ``.csv`` or ``.parquet``.
    models, samples : str or Path
        One id per line, or tables with ``model_id`` / ``sample_id`` and metadata.
    dataset : str, optional
        The dataset of samples that do not name one (as for :func:`import_file`).
    extras : mapping, optional
        ``confidence``, ``predicted``, ``true_prob``: arrays of the same shape.

    Returns
    -------
    dict
        The import's log row.
    """
    for value, param in ((matrix, "matrix"), (models, "models")):
        _path(value, param)
    _path(samples, "samples")
    if extras is not None:
        if not isinstance(extras, Mapping):
            raise TypeError(f"extras must map a field to its file, got {_kind(extras)}.")
        for field_name, file in extras.items():
            if field_name not in ("confidence", "predicted", "true_prob"):
                raise InputError(
                    f"extras has {_short(field_name)}; the fields are confidence, predicted and "
                    "true_prob.",
                    param="extras",
                )
            _path(file, f"extras[{field_name!r}]")
    return import_file(
        store_path,
        "matrix",
        matrix,
        dataset=dataset,
        models=models,
        samples=samples,
        **(extras or {}),
    )


def import_lm_eval(
    store_path: str | Path,
    path: str | Path,
    *,
    model: str | None = None,
    dataset: str | None = None,
    metric: str | None = None,
    filter: str | None = None,
    strict: bool = False,
) -> dict:
    """Import lm-evaluation-harness ``--log_samples`` output: one run, a folder of run
    folders (one model each), or a zip of either, in one transaction.

    Parameters
    ----------
    store_path : str or Path
        The store file; it is created if it does not exist.
    path : str or Path
        The run folder, its ``results_*.json``, one ``samples_*.jsonl``, a folder of runs
        or a ``.zip``.
    model : str, optional
        The model's name, for a single run (default: from its results file).
    dataset, metric, filter : str, optional
        As for ``lbe import --lm-eval``.
    strict : bool
        Refuse the whole import when a run cannot be read (default: skip it).

    Returns
    -------
    dict
        The import's log row, with ``skipped``: the runs left out and why.
    """
    _path(store_path, "store_path")
    _path(path, "path")
    for value, param in ((model, "model"), (dataset, "dataset"), (metric, "metric")):
        _text(value, param, optional=True)
    _text(filter, "filter", optional=True)
    _flag(strict, "strict")
    from lifelong_core.workflows import imports

    src = imports.lm_eval_source(
        path, model, metric=metric, filter=filter, dataset=dataset, strict=strict
    )
    summary = _import(store_path, src)
    return {**summary, "skipped": [(s.run, s.reason) for s in src.skipped]}


def import_inspect(
    store_path: str | Path,
    log: str | Path,
    *,
    model: str | None = None,
    scorer: str | None = None,
    epoch: int | None = None,
    dataset: str | None = None,
) -> dict:
    """Import an Inspect AI evaluation log (``.eval`` or ``.json``) in one transaction.

    Scores ``C``/``I`` or 1/0 become ``correct``; any other value is refused, naming the
    scorer. Needs the ``harness`` extra (``inspect_ai``).

    Parameters
    ----------
    store_path : str or Path
        The store to import into (opened for writing).
    log : str or Path
        The Inspect log file.
    model : str, optional
        The model's name (default: the one the log records).
    scorer : str, optional
        The scorer to read, when the log has several.
    epoch : int, optional
        The epoch to read, when the log has several.
    dataset : str, optional
        The dataset the samples join (default: the log's task).

    Returns
    -------
    dict
        The import's log row.

    Raises
    ------
    InputError
        If the log cannot be read, holds scores that are not 0/1, or conflicts with what the
        store records; the store is then unchanged.
    """
    _path(store_path, "store_path")
    _path(log, "log")
    for value, param in ((model, "model"), (scorer, "scorer"), (dataset, "dataset")):
        _text(value, param, optional=True)
    _whole(epoch, "epoch", 1, 2**31, optional=True)
    from lifelong_core.workflows import imports

    return _import(
        store_path,
        imports.inspect_source(log, model, scorer=scorer, epoch=epoch, dataset=dataset),
    )


# ------------------------------------------------------------------ the budget sweep
def sweep(
    store: Store,
    *,
    dataset: str | None = None,
    sort_models: int | None = None,
    sort_rows: Sequence[int] | np.ndarray | None = None,
    budgets: Sequence[int] | None = None,
    search: str = DEFAULT_METHOD,
    seed: int = 0,
    **options: Any,
) -> SweepResult:
    """Budget sweep on a store's dataset: what ``lbe sweep --store`` runs.

    Sort & Search's sweep (Prabhu et al., 2024, *Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress*, §3-4), and the same sweep for every registered method: Sort on
    some of the dataset's models, estimate every other one from ``n'`` evaluations at each
    budget and score it against its full results. The rows are the real models evaluated
    on every sample of the dataset, in the store's order, read from the file as packed
    chunks (:func:`run_sweep` on the store's rows).

    Parameters
    ----------
    store : Store
        An open store (:func:`open_store`).
    dataset : str, optional
        Needed when the store holds several datasets.
    sort_models : int, optional
        Sort on this many models drawn with ``seed`` (the rule of ``--sort-models K --seed
        S``); default half of the dataset's complete models.
    sort_rows : sequence of int, optional
        Or Sort on these positions in the dataset's model list (``--sort-rows``).
    budgets : sequence of int, optional
        Evaluations per model, n′ (default 8, 16, ... up to the number of samples).
    search : str
        A registered method (default: the product's default estimator).
    seed : int
        Seeds the Sort-set draw and the samples drawn at each budget.
    **options
        ``sort``, ``sampling``, ``ties``, ``depth``, ``decompose``, ``kernel``,
        ``executor``, ``threads``, ``chunk_rows``, ``progress``: as for :func:`run_sweep`.

    Returns
    -------
    SweepResult
        ``table`` (one row per budget), ``per_model`` (one row per model and budget,
        ``model_row`` = position in the dataset's model list) and ``order``.

    Raises
    ------
    InputError
        On an unknown dataset or method, fewer than two complete models, a Sort set that
        leaves no model to evaluate, or budgets outside ``[1, n]``.

    Examples
    --------
    >>> store = open_store(demo_store())
    >>> res = sweep(store, dataset="lifelong-digits", sort_models=10, budgets=[16, 256],
    ...             search="midpoint")
    >>> res.table[["budget", "mae"]].round(3)
       budget    mae
    0      16  0.233
    1     256  0.209
    """
    _store(store)
    _text(dataset, "dataset", optional=True)
    _whole(sort_models, "sort_models", 1, 2**31, optional=True)
    sort_rows = _wholes(sort_rows, "sort_rows", lo=0)
    budgets = _wholes(budgets, "budgets")
    _method_name(search, "search")
    _seed(seed)
    from lifelong_core.workflows.sweeps import sweep_store

    return sweep_store(
        store,
        _dataset(store, dataset),
        sort_models=sort_models,
        sort_rows=sort_rows,
        budgets=budgets,
        search=search,
        seed=seed,
        **options,
    )


# ------------------------------------------------------------------ a new model
def select_items(
    store: Store,
    budget: int,
    *,
    dataset: str | None = None,
    method: str = DEFAULT_METHOD,
    model: str | None = None,
    seed: int = 0,
    common_items: bool = False,
    exclude: Mapping[str, int] | None = None,
    leave_out: str | Iterable[str] | None = None,
    rounds: bool = False,
    memory: FitMemory | None = None,
) -> list[str]:
    """The items a new model should run next (Prabhu et al., 2024, §3: insert_M).

    Parameters
    ----------
    store : Store
        An open store (:func:`open_store`).
    budget : int
        How many items to run now.
    dataset : str, optional
        Needed when the store holds several datasets.
    method : str
        A registered method (default: the product's default estimator).
    model : str, optional
        The new model's name: its items are its own random draw (from the name and the
        seed), so several new models' errors are independent. Without it, or with
        ``common_items``, every model gets the seed's one item set.
    seed : int
        Seed of the random choices (the same seed gives the same result).
    common_items : bool
        One item set for every new model (to compare models on identical items).
    exclude : mapping, optional
        Results already in hand (sample id -> 0/1); the next items are chosen among the
        others, adaptively for methods that use the answers.
    leave_out : str or iterable of str, optional
        Stored models to leave out of the cache, e.g. a stored model playing the new one.
    rounds : bool
        Play the method's rounds for ``budget`` items where it has them (the active
        design): ``budget`` is then the total, ``exclude`` the results of the rounds so
        far, and the items are the next round's; give each round's results to
        :func:`estimate_new_model` as its own mapping.
    memory : FitMemory, optional
        Keeps the method's fit for later calls on the same store, dataset and cache
        (:class:`~lifelong_core.methods.memory.FitMemory`); None fits afresh.

    Returns
    -------
    list of str
        Sample ids, in the dataset's order.

    Raises
    ------
    InputError
        On an unknown dataset, method or model, or a budget beyond the items left.

    Examples
    --------
    >>> store = open_store(demo_store())
    >>> items = select_items(store, 100, dataset="open-llm-leaderboard-v2", model="me/new")
    >>> len(items), items[0]
    (100, 'leaderboard_ifeval/16')
    """
    _store(store)
    _whole(budget, "budget", 1, 2**62)
    _text(dataset, "dataset", optional=True)
    _method_name(method, "method")
    _text(model, "model", optional=True)
    _seed(seed)
    _flag(common_items, "common_items")
    _flag(rounds, "rounds")
    exclude = None if exclude is None else _results(exclude, "exclude", allow_empty=True)
    leave_out = _leave_out(leave_out)
    from lifelong_core.methods.draws import COMMON, PER_MODEL
    from lifelong_core.workflows.item_choice import select_items as select

    cache = _cache(store, dataset, leave_out)
    done = {str(k): int(v) for k, v in (exclude or {}).items()}
    per_model = model is not None and not common_items
    choice = select(
        cache,
        budget,
        method,
        seed,
        evaluated=done,
        fitted=_fitter(store, cache, dataset, leave_out, method, memory)(None, None),
        model=model if per_model else None,
        draws=PER_MODEL if per_model else COMMON,
        rounds=rounds,
    )
    return choice.items["sample_id"].astype(str).tolist()


def estimate_new_model(
    store: Store,
    results: Mapping[str, int] | pd.Series | Sequence[Mapping[str, int] | pd.Series],
    *,
    dataset: str | None = None,
    method: str = DEFAULT_METHOD,
    leave_out: str | Iterable[str] | None = None,
    memory: FitMemory | None = None,
) -> NewModelEstimate:
    """A new model's accuracy, per task and overall, with intervals, and its rank.

    The method is fitted on every real model evaluated on the whole dataset (less
    ``leave_out``) and estimates from the new model's results on some of its items
    (Prabhu et al., 2024, §3; the model-based estimators' difference estimator: Särndal,
    Swensson & Wretman, 1992, §6.3); results that came in rounds (``select_items(...,
    rounds=True)``) are given one mapping per round and estimated by the method's rounds
    estimator (:mod:`lifelong_core.methods.active`). The same function as ``lbe estimate``
    and the app's (:func:`lifelong_core.workflows.new_model.estimate_new_model`).

    Parameters
    ----------
    store : Store
        An open store (:func:`open_store`).
    results : mapping or Series, or a list of them
        Sample id -> 0/1 for the items the new model ran; or one such mapping per round,
        in order.
    dataset : str, optional
        The dataset to read; needed only when the store holds several.
    method : str
        A registered method; the interval exists when it declares one.
    leave_out : str or iterable of str, optional
        Stored models to leave out of the cache (a stored model playing the new one).
    memory : FitMemory, optional
        As for :func:`select_items`: the fit made there is reused here.

    Returns
    -------
    NewModelEstimate
        ``table`` (scope, items, evaluated, observed, estimate, lo, hi), ``level``,
        ``rank``, ``rank_lo``, ``rank_hi``; ``print(est)`` a short summary, ``summary()``
        the table.

    Raises
    ------
    InputError
        On results for items the dataset does not have, values other than 0/1, no
        results, or rounds that are not the method's.
    """
    _store(store)
    checked: dict[str, int] | list[dict[str, int]]
    if isinstance(results, (Mapping, pd.Series)):
        checked = _results(results)
    elif isinstance(results, (list, tuple)) and results:
        checked = [_results(r, f"results[{i}]") for i, r in enumerate(results)]
    else:
        raise TypeError(
            "results must map sample ids to 0/1 (a dict or Series), or be a list of such "
            f"mappings (one per round), got {_kind(results)}."
        )
    _text(dataset, "dataset", optional=True)
    _method_name(method, "method")
    leave_out = _leave_out(leave_out)
    from lifelong_core.workflows import new_model

    cache = _cache(store, dataset, leave_out)
    return new_model.estimate_new_model(
        cache,
        checked,
        method,
        fitter=_fitter(store, cache, dataset, leave_out, method, memory),
    )


def backtest(
    store: Store,
    *,
    dataset: str | None = None,
    domains: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    budgets: Sequence[int] | None = None,
    holdout: int = 10,
    split: str = "random",
    repeats: int = 10,
    seed: int = 0,
    common_items: bool = False,
    scored: int | None = None,
) -> Backtest:
    """How well each method works on this cache, against a random sample: what ``lbe
    backtest`` runs.

    Holds ``holdout`` models out, estimates each with every method from the items it would
    pick for that model (``repeats`` item draws each), and scores against the model's full
    results: the error of the accuracy against a random sample's exact expected error and
    the equivalent random budget (with bootstrap intervals), the coverage of the 95%
    intervals overall, per model and by accuracy range, and their width. The baselines
    ``random`` and ``first-n`` (what ``lm_eval --limit`` runs) are always included.

    Parameters
    ----------
    store : Store
        An open store (:func:`open_store`).
    dataset : str, optional
        The dataset to read; needed only when the store holds several.
    domains : sequence of str, optional
        Keep these domains (tasks) of the dataset; default all.
    methods : sequence of str, optional
        Default: the default estimator, Sort & Search's published rule and the baselines.
    budgets : sequence of int, optional
        Items per held-out model (default 32, 64, 100, 128, 256 below the number of items).
    holdout : int
        Models held out of the cache and estimated in each repeat.
    split : {"random", "newest", "beyond-cache"}
        Which models are held out: models like the cache's drawn at random, the newest,
        or the most accurate (beyond the cache).
    repeats, seed : int
        Item draws per held-out model, and the seed of the random split and first draw.
    common_items : bool
        One item set for every held-out model instead of each model's own draw.
    scored : int, optional
        Estimate a seeded subset of this many held-out models (``--scored``); all by
        default.

    Returns
    -------
    Backtest
        ``table`` (method x budget), ``coverage``, ``by_range``, ``summary``,
        ``per_model``; ``text()`` prints them, ``verdicts()`` says them in words.
    """
    from lifelong_core import limits

    _store(store)
    _text(dataset, "dataset", optional=True)
    methods = _names(methods, "methods")
    for name in methods or ():
        _method_name(name, "methods")
    budgets = _wholes(budgets, "budgets")
    _whole(holdout, "holdout", 1, 2**31)
    _text(split, "split")
    _whole(repeats, "repeats", 1, limits.MAX_REPEATS)
    _seed(seed)
    _flag(common_items, "common_items")
    domains = _names(domains, "domains")
    _whole(scored, "scored", 1, 2**31, optional=True)
    from lifelong_core.methods.draws import COMMON, PER_MODEL
    from lifelong_core.workflows.backtest import backtest as run
    from lifelong_core.workflows.selection import check_domains, select

    name = _dataset(store, dataset)
    return run(
        select(store, name, check_domains(store, name, domains)),
        methods,
        budgets,
        holdout=holdout,
        split=split,
        repeats=repeats,
        seed=seed,
        draws=COMMON if common_items else PER_MODEL,
        scored=scored,
    )


# ------------------------------------------------------------------ rankings
def counts(store: Store, *, dataset: str | None = None) -> CountTable:
    """Per-model, per-task counts of a store's dataset (task = domain).

    The input of the rankings and of task weighting: the ``counts.csv`` of
    ``lbe export --counts``.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str, optional
        The dataset to count; may be left out when the store holds one.

    Returns
    -------
    CountTable
        Correct and recorded predictions per model and task.

    Raises
    ------
    InputError
        If ``dataset`` is not in the store, or is left out while the store holds several.
    """
    _store(store)
    _text(dataset, "dataset", optional=True)
    from lifelong_core.stats import from_frame
    from lifelong_core.workflows.exports import counts_table

    return from_frame(counts_table(store, _dataset(store, dataset)))


def _ranking_source(counts: Any, options: RankingOptions) -> Any:
    from lifelong_core.workflows import rankings

    return rankings.ranking_source(rankings.count_table(counts), options)


def rank_models(
    counts: CountTable | pd.DataFrame | str | Path,
    *,
    method: str = "bootstrap",
    level: float = 0.834,
    boot: int = 2000,
    normalize: bool = False,
    seed: int = 0,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 500,
) -> pd.DataFrame:
    """Every model's score with an interval, overall and per category: ``lbe rank``'s
    ``ranks.csv``.

    The score is the unweighted mean accuracy over a scope's tasks. Following the
    LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for Aggregate
    Performance Metrics in Machine Learning Benchmarks*: the bootstrap of test items
    within each task (§2.1) with its mean and percentile interval, optionally on the
    BigBench scale (§2.4, bounds over every model of ``counts``), or the beta-binomial
    hierarchical model's posterior predictive mean and interval (§2.2, Table A.3's
    Bayesian block). 83.4% intervals by default (the report's §2.3, after Goldstein &
    Healy, 1995, *The graphical presentation of a collection of means*, JRSS A): when two
    models' 83.4% intervals do not overlap, their difference is significant at about the
    5% level, so the table can be read by eye; :func:`pairwise_differences` tests the
    differences themselves. The level is recorded in the table's ``level`` column.

    Parameters
    ----------
    counts : CountTable, DataFrame, str or Path
        Per-model, per-task counts (:func:`counts`), a frame with the ``counts.csv``
        columns (model, task, category, correct, total) or the path of a ``counts.csv``.
    method : {"bootstrap", "hierarchical"}
        The bootstrap of test items within each task (§2.1) or the beta-binomial
        hierarchical model (§2.2).
    level : float
        Interval level, strictly between 0 and 1.
    boot : int
        Bootstrap replicates.
    normalize : bool
        Rescale every task to [0, 1] first (bootstrap only).
    seed : int
        Seed of the random choices (the same seed gives the same result).
    chains, draws, warmup : int
        The hierarchical model's chains, kept draws and warm-up iterations per chain.

    Returns
    -------
    pandas.DataFrame
        model, scope (``overall`` or a category), rank (the model's place in the scope by
        its mean, 1 = best; equal means share the better place), mean_pct, lo_pct, hi_pct,
        level (the interval level, a fraction).

    Raises
    ------
    InputError
        On invalid counts, an unknown method, ``normalize`` with the hierarchical model,
        or a level, seed or work size out of bounds.

    Examples
    --------
    >>> rank_models(vtab_counts(), boot=200).head(1).columns.tolist()
    ['model', 'scope', 'rank', 'mean_pct', 'lo_pct', 'hi_pct', 'level']
    """
    _counts_arg(counts)
    options = _ranking_options(level, method, boot, normalize, seed, chains, draws, warmup)
    from lifelong_core.workflows import rankings

    source = _ranking_source(counts, options)
    return rankings.leaderboard_table(source, level=level, seed=seed)


def pairwise_differences(
    counts: CountTable | pd.DataFrame | str | Path,
    *,
    models: Sequence[str] | None = None,
    level: float = 0.95,
    method: str = "bootstrap",
    boot: int = 2000,
    normalize: bool = False,
    seed: int = 0,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 500,
) -> pd.DataFrame:
    """The difference of every pair of models, per scope, with family-wise intervals:
    ``lbe rank --pairwise``'s ``pairwise.csv``.

    LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for Aggregate
    Performance Metrics in Machine Learning Benchmarks*, §2.1 and Table 3: differences of
    the unweighted mean over each scope's tasks, from the same bootstrap replicates or
    hierarchical posterior as :func:`rank_models` (posterior predictive scores, as Table
    3's Bayesian column), each interval Bonferroni-corrected so that all pairs compared
    hold together at ``level``.

    Parameters
    ----------
    counts : CountTable, DataFrame, str or Path
        As for :func:`rank_models`.
    models : sequence of str, optional
        Compare only these (at least two; pairs in this order), the correction over their
        pairs only (Table 3: three models, three comparisons); default every model.
    level : float
        Family level of the intervals.
    method, boot, normalize, seed, chains, draws, warmup
        As for :func:`rank_models`.

    Returns
    -------
    pandas.DataFrame
        scope, model_a, model_b, diff_pct, lo_pct, hi_pct, level (each interval's own),
        excludes_zero.

    Raises
    ------
    InputError
        As :func:`rank_models`, and on a model ``counts`` does not hold or fewer than two.
    """
    _counts_arg(counts)
    options = _ranking_options(level, method, boot, normalize, seed, chains, draws, warmup)
    models = _names(models, "models")
    from lifelong_core.workflows import rankings

    source = _ranking_source(counts, options)
    return rankings.pairwise_table(
        source, level=level, models=None if models is None else list(models), seed=seed
    )


def rank_intervals(
    counts: CountTable | pd.DataFrame | str | Path,
    *,
    schemes: Sequence[str] | None = None,
    level: float = 0.95,
    method: str = "bootstrap",
    boot: int = 2000,
    normalize: bool = False,
    seed: int = 0,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 500,
) -> pd.DataFrame:
    """Every model's rank interval per scope under each aggregation scheme:
    ``lbe rank --rank-intervals``'s ``rank_intervals.csv``.

    LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for Aggregate
    Performance Metrics in Machine Learning Benchmarks*, §3.2 (Tables 4 and 5; with the
    hierarchical model's posterior predictive draws, Table 11): the rank of the mean or
    geometric mean of task accuracies, or the average over tasks of the per-task rank
    (raw, with N(0, 1) noise in points, or with 1-point bins), in every replicate.

    Parameters
    ----------
    counts : CountTable, DataFrame, str or Path
        As for :func:`rank_models`.
    schemes : sequence of str, optional
        Among ``mean``, ``geometric``, ``avg_rank``, ``avg_rank_noise``,
        ``avg_rank_bins``; default all five.
    level : float
        Interval level.
    method, boot, normalize, seed, chains, draws, warmup
        As for :func:`rank_models`.

    Returns
    -------
    pandas.DataFrame
        scope, model, scheme, mean, lo, hi (ranks; 1 = best).

    Raises
    ------
    InputError
        As :func:`rank_models`, and on an unknown scheme.
    """
    _counts_arg(counts)
    options = _ranking_options(level, method, boot, normalize, seed, chains, draws, warmup)
    schemes = _names(schemes, "schemes")
    from lifelong_core.workflows import rankings

    source = _ranking_source(counts, options)
    return rankings.rank_interval_table(source, level=level, schemes=schemes, seed=seed)


def vtab_counts() -> CountTable:
    """The bundled VTAB-1k leaderboard as counts: accuracy x test-set size, rounded, as the
    LA-UR-24-25289 report (2024, §3) does.

    Returns
    -------
    CountTable
    """
    from lifelong_core.stats.vtab import counts_from_leaderboard

    return counts_from_leaderboard()


def task_weighting(
    table: CountTable, *, step: float = 0.05, se_mult: float = 1.0, rho: float = 0.0
) -> WeightRegions:
    """For every weighting of three task categories, the best model, or indeterminate
    where the top two are within ``se_mult`` standard errors (LA-UR-24-25289 report,
    2024, §2.3, §3.3, Appendix A.2).

    Parameters
    ----------
    table : CountTable
        Counts with exactly three categories.
    step : float
        Grid step on the simplex.
    se_mult : float
        The gray zone's width in standard errors (k).
    rho : float
        Correlation between the top two models' results (Eq. 3).

    Returns
    -------
    WeightRegions
        ``to_frame()`` gives the ``regions.csv`` of ``lbe weights``.
    """
    from lifelong_core.stats import CountTable

    if not isinstance(table, CountTable):
        raise TypeError(
            f"table must be a CountTable (lbe.counts or lbe.vtab_counts), got {_kind(table)}."
        )
    _real(step, "step", 0, 1, open_lo=True)
    _real(se_mult, "se_mult", 0, None)
    _real(rho, "rho", -1, 1, open_lo=True, open_hi=True)
    from lifelong_core.stats import category_stats, weight_regions

    return weight_regions(category_stats(table), step=step, se_mult=se_mult, rho=rho)


# ------------------------------------------------------------------ matched accuracy
def matched_accuracy(
    source: Predictions,
    target: Predictions,
    *,
    eps: float = 0.005,
    criterion: Literal["label-prob", "prob"] = "label-prob",
    runs: int = 10,
    seed: int = 0,
) -> MatchSummary:
    """Matched accuracy of one model on a source and a target set (Anzaku et al.,
    Algorithms 1 and 2).

    Parameters
    ----------
    source, target : Predictions
        Each ``(y, y_pred, p)`` of one model, from
        :func:`lifelong_core.matching.make_predictions` or
        :func:`lifelong_core.matching.read_predictions_csv`.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 (same predicted label and confidence) or 2 (confidence only).
    runs, seed : int
        Means over ``runs`` seeded runs.

    Returns
    -------
    MatchSummary
        Accuracies on each set, matched accuracies, the fraction unmatched.
    """
    from lifelong_core.matching import Predictions

    for value, param in ((source, "source"), (target, "target")):
        if not isinstance(value, Predictions):
            raise TypeError(
                f"{param} must be Predictions (lifelong_core.matching.make_predictions), got "
                f"{_kind(value)}."
            )
    _real(eps, "eps", 0, 1)
    _text(criterion, "criterion")
    _whole(runs, "runs", 1, 2**31)
    _seed(seed)
    from lifelong_core.matching import check_params
    from lifelong_core.matching import matched_accuracy as run

    crit = check_params(eps, criterion, runs, seed)
    return run(source, target, eps=eps, criterion=crit, runs=runs, seed=seed)


def matched_accuracy_in_store(
    store: Store,
    dataset: str,
    *,
    source: str,
    target: str,
    model: str | int,
    eps: float = 0.005,
    criterion: Literal["label-prob", "prob"] = "label-prob",
    runs: int = 10,
    seed: int = 0,
) -> MatchSummary:
    """Matched accuracy of one stored model on two domains of a dataset (Anzaku et al.).

    Parameters
    ----------
    store : Store
        An open store (:func:`open_store`).
    dataset : str
        The dataset whose two domains are compared.
    source, target : str
        Two domains of the dataset (the source is usually the larger).
    model : str or int
        The model's id (or display name), or its ``model_idx`` in the store.
    eps : float
        Confidence window.
    criterion : {"label-prob", "prob"}
        Algorithm 1 (same predicted label and confidence) or 2 (confidence only).
    runs, seed : int
        Matching runs averaged (the paper uses 10), and their seed.

    Returns
    -------
    MatchSummary
        Accuracies on each side, matched accuracies, fraction unmatched.
    """
    _store(store)
    _text(dataset, "dataset")
    _text(source, "source")
    _text(target, "target")
    if isinstance(model, str):
        _text(model, "model")
    else:
        _whole(model, "model", 0, 2**62)
    _real(eps, "eps", 0, 1)
    _text(criterion, "criterion")
    _whole(runs, "runs", 1, 2**31)
    _seed(seed)
    from lifelong_core.matching.store_pair import Side, compare_pair, load_pair, read_samples

    pair = read_samples(store, Side(dataset, (source,)), Side(dataset, (target,)))
    if isinstance(model, str):
        rows = [i for i, name in pair.model_names.items() if name == model]
        models = store.models()
        rows += models.loc[models["model_id"] == model, "model_idx"].astype(int).tolist()
        if not rows:
            raise InputError(f"the store has no model {model!r}.", param="model")
        idx = int(rows[0])
    else:
        idx = int(model)
    data = load_pair(store, pair, [idx])
    comparison = compare_pair(data, eps=eps, criterion=criterion, runs=runs, seed=seed)
    return comparison.summary(data.models[0])
