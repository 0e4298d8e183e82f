"""Cached reads and derived tables for the pages (``st.cache_data`` /
``st.cache_resource``, and the memo that computes a sweep once for every session asking).

Every function here is a thin wrapper: the rules (which models count, Sort sets, budgets,
the new-model and stream flows) live in ``lifelong_core.workflows``, shared with the
command line; this module caches their results. Every cached function takes ``key``
(store path and modification time, from :func:`store_key`) so a store grown by another
process is re-read; ``ui.common.refresh_store`` clears everything after this app writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.methods import capabilities
from lifelong_core.methods.draws import PER_MODEL
from lifelong_core.methods.memory import FitMemory
from lifelong_core.sortsearch import fit_exponential, fit_power_law, model_correlation
from lifelong_core.workflows import (
    arrivals,
    item_choice,
    large,
    lifelong_state,
    rankings,
    stream,
    teaching,
)
from lifelong_core.workflows import (
    selection as _selection,
)
from lifelong_core.workflows.rankings import RankingOptions
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.sweeps import SelectionSweep, SweepRequest, sweep_selection
from ui.common import Memo as _Memo
from ui.common import (
    get_store,
    input_errors,
    store_facts,
)
from ui.common import store_key as store_key


@st.cache_resource(show_spinner=False)
def _memo() -> _Memo:
    return _Memo(64)


@st.cache_data(show_spinner=False, max_entries=8)
def complete_counts(key: str, dataset: str) -> tuple[pd.DataFrame, list[str]]:
    """:func:`lifelong_core.workflows.selection.complete_counts` of the store."""
    return _selection.complete_counts(get_store(), dataset)


@st.cache_data(show_spinner=False, max_entries=4)
def overview(key: str) -> dict:
    """What the store holds: datasets, domains, models, log and counts.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`).

    Returns
    -------
    dict
        ``datasets``, ``domains``, ``models`` and ``log`` (tables of the store),
        ``n_models``, ``n_samples`` (ints), ``families`` (models per family, with their
        estimated count and first and last release) and ``partial`` ((name, reason) of the
        models whose metadata marks them partial, as imports do).
    """
    s = get_store()
    models = s.models()
    families = (
        models.assign(family=models["family"].fillna("(none)"))
        .groupby("family", as_index=False)
        .agg(
            models=("model_idx", "size"),
            estimated=("estimated", "sum"),
            first_release=("release_order", "min"),
            last_release=("release_order", "max"),
        )
    )
    return {
        "datasets": store_facts(key)["datasets"],
        "domains": s.domains(),
        "models": models,
        "log": s.log(),
        "n_models": s.n_models,
        "n_samples": s.n_samples,
        "families": families,
        "partial": _partial_models(models),
    }


def _partial_models(models: pd.DataFrame) -> list[tuple[str, str]]:
    """(name, reason) of models whose metadata says ``partial`` (as imports mark them)."""
    import json

    out = []
    for name, meta in zip(models["name"].fillna(models["model_id"]), models["metadata"]):
        try:
            why = json.loads(meta or "{}").get("partial")
        except (ValueError, AttributeError):
            why = None
        if why:
            out.append((str(name), str(why)))
    return out


@st.cache_resource(show_spinner="Reading the cache from the store…", max_entries=6)
def selection(key: str, dataset: str, domains: tuple[str, ...]) -> Selection:
    """Every real model's 0/1 row on the samples of ``dataset`` in ``domains``.

    :func:`lifelong_core.workflows.selection.select`; models not run on every chosen
    sample are left out.

    One shared object per key, not a copy per call: copying (pickling) the sample table
    cost more than reading it on a 500,000-sample store, on every re-run. Pages only read
    it; the matrix is made read-only so that an accidental write fails instead of leaking
    into other sessions.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    domains : tuple of str
        Domains of ``dataset`` to keep; ``()`` keeps every domain.

    Returns
    -------
    Selection
        The 0/1 matrix (dense, or packed on a large store), its models and its samples.

    Raises
    ------
    InputError
        If ``dataset`` has no samples in ``domains``, or fewer than two real models were
        evaluated on every one of them.
    """
    sel = _selection.select(get_store(), dataset, domains)
    if isinstance(sel.A, np.ndarray):
        sel.A.flags.writeable = False
    return sel


@st.cache_data(show_spinner=False, max_entries=4)
def confidence(
    key: str, dataset: str, domains: tuple[str, ...], rows: tuple[int, ...]
) -> np.ndarray | None:
    """Confidence of the true class (``true_prob``) of the given rows, or None if not recorded."""
    return _selection.selection_confidence(get_store(), selection(key, dataset, domains), rows)


@st.cache_resource(show_spinner=False)
def _fits() -> FitMemory:
    return FitMemory(entries=4)


def fit_memory() -> FitMemory:
    """The server's kept fits (:class:`~lifelong_core.methods.memory.FitMemory`), backed by
    the fits the open store keeps (:mod:`lifelong_core.store.kept_fits`, made by ``lbe state
    --refresh``): the Budget explorer and Estimated vs true ask for other budgets on the
    same Sort rows, and fit the method once; a few fits are kept, the least recently used
    dropped first.

    Returns
    -------
    FitMemory
    """
    from lifelong_core.store.kept_fits import KeptFits

    return _fits().backed_by(KeptFits(get_store()))


def sweep(
    key: str,
    dataset: str,
    domains: tuple[str, ...],
    request: SweepRequest,
    progress: Callable[[float], object] | None = None,
) -> SelectionSweep:
    """:func:`lifelong_core.workflows.sweeps.sweep_selection` on the selection, memoised
    for every session asking (keyed on :meth:`SweepRequest.memo_key`).

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`).
    dataset : str
        Name of a dataset of the store.
    domains : tuple of str
        Domains of ``dataset`` to keep; ``()`` keeps every domain.
    request : SweepRequest
        What to sweep.
    progress : callable, optional
        Called with the fraction done, when this session computes it.

    Returns
    -------
    SelectionSweep
    """

    def compute() -> SelectionSweep:
        sel = selection(key, dataset, domains)
        conf = (
            confidence(key, dataset, domains, request.sort_set)
            if request.sort == "confidence" and not is_large(sel)
            else None
        )
        return sweep_selection(
            sel,
            request,
            confidence=conf,
            progress=progress,
            store=get_store(),
            memory=fit_memory(),
        )

    memo_key = ("sweep", key, dataset, domains, request.memo_key())
    return _memo().get_or_compute(memo_key, compute)


@st.cache_data(show_spinner=False, max_entries=8)
def fits(table: pd.DataFrame):
    """Exponential fit of MAE and power-law fit of E_agg against the budget.

    MAE = a exp(-b n′) + c as Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in
    an Era of Rapid Progress*, §4.2, Key Result 2, and E_agg = c n′^p as Prabhu et al.
    (2024), *Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid Progress*,
    §5, Key Result 2; the pages draw them dashed over the budget curves.

    Parameters
    ----------
    table : pandas.DataFrame
        A sweep's summary with the columns budget, mae and eagg.

    Returns
    -------
    tuple of FitResult
        :func:`lifelong_core.sortsearch.fit_exponential` of MAE and
        :func:`lifelong_core.sortsearch.fit_power_law` of E_agg (each says whether it
        succeeded in ``ok``).
    """
    return fit_exponential(table["budget"], table["mae"]), fit_power_law(
        table["budget"], table["eagg"]
    )


def is_large(sel: Selection) -> bool:
    """Whether the selection is read as packed blocks (beyond the dense-read limit).

    Parameters
    ----------
    sel : Selection
        A selection from :func:`selection`.

    Returns
    -------
    bool
        True when ``sel.A`` is a packed cache rather than a dense 0/1 matrix.
    """
    return isinstance(sel.A, large.PackedCache)


@st.cache_data(show_spinner=False, max_entries=4)
def correlation(key: str, dataset: str, domains: tuple[str, ...]):
    """The model-by-model correlation matrix, sorted by accuracy.

    As Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, App. E, Fig. 7b. On a large store it is computed on a bounded sample of
    the selection (models and samples); ``order`` then indexes the selection's rows, and
    the note says so.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    domains : tuple of str
        Domains of ``dataset`` to keep; ``()`` keeps every domain.

    Returns
    -------
    tuple
        The correlation result of :func:`lifelong_core.sortsearch.model_correlation`
        and a note, empty unless a bounded sample was used.
    """
    import dataclasses

    sel = selection(key, dataset, domains)
    if not isinstance(sel.A, large.PackedCache):
        return model_correlation(sel.A), ""
    block = large.bounded_block(get_store(), sel.A, large.DEFAULT_SCORED, 0)
    corr = model_correlation(block.A)
    return dataclasses.replace(corr, order=block.rows[corr.order]), block.note(sel.A.shape)


@st.cache_data(show_spinner="Reading a bounded sample of the cache…", max_entries=4)
def bounded(
    key: str,
    dataset: str,
    domains: tuple[str, ...],
    max_models: int = large.DEFAULT_SCORED,
    seed: int = 0,
) -> tuple[Selection, str]:
    """The selection itself, or on a large store a dense bounded block of it.

    On a store beyond the dense-read limit the block is a seeded sample of models (kept
    in store order) and as many seeded samples as fit within the limit
    (:func:`lifelong_core.workflows.large.bounded_block`); the note says so on the page.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    domains : tuple of str
        Domains of ``dataset`` to keep; ``()`` keeps every domain.
    max_models : int
        Most models the block keeps.
    seed : int
        Seed of the sample of models and samples.

    Returns
    -------
    tuple of (Selection, str)
        The (possibly reduced) selection and a note, empty when nothing was left out.
    """
    return _selection.bounded_selection(
        get_store(), selection(key, dataset, domains), max_models, seed
    )


def of_sweep(what: str, view: tuple, compute: Callable[[], Any]) -> Any:
    """A table a page works out from its sweep, worked out once per sweep and shared by
    every session that views it (a copy each time).

    Parameters
    ----------
    what : str
        Which table (a page may derive several from one sweep).
    view : tuple
        What decides the sweep: the store's cache key (:func:`store_key`) and the page's
        settings (``ui.controls.SweepConfig``, hashable).
    compute : callable
        Works the table out from the sweep the page holds.

    Returns
    -------
    object
        What ``compute`` returns.
    """
    return _memo().get_or_compute(("of-sweep", what, view), compute)


@st.cache_resource(show_spinner=False)
def _store_reads() -> _Memo:
    return _Memo(256)


def of_store(key: str, what: str, args: tuple, compute: Callable[[], Any]) -> Any:
    """A small table or list a page reads from the store on every view, read once per
    store version and arguments and shared by every session (a copy each time).

    Kept apart from the sweeps' memo, so that these small reads neither push a sweep out
    nor are pushed out by one.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    what : str
        What is read.
    args : tuple
        What the read depends on besides the store (hashable).
    compute : callable
        Reads it.

    Returns
    -------
    object
        What ``compute`` returns.
    """
    return _store_reads().get_or_compute((key, what, args), compute)


def backtest(
    key: str,
    dataset: str,
    methods: tuple[str, ...],
    budgets: tuple[int, ...],
    holdout: int,
    split: str,
    repeats: int,
    seed: int,
    draws: str,
    label: str = "Backtesting…",
    domains: tuple[str, ...] = (),
    scored: int | None = None,
    baselines: tuple[str, ...] | None = None,
):
    """Backtest the methods on the dataset's selection with a progress bar.

    Runs :func:`lifelong_core.workflows.backtest.backtest` (models held out of the cache,
    estimated with each method, scored against their true rows), memoised like the sweeps
    so that every session asking for the same settings shares one run. Bad input stops the
    page with one error box (:func:`ui.common.input_errors`).

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    methods : tuple of str
        Registered methods to compare (the random baseline is added when missing).
    budgets : tuple of int
        Items evaluated per held-out model.
    holdout : int
        Models held out per repeat.
    split : {"random", "newest", "best"}
        Which models are held out.
    repeats : int
        Repeats with seeds ``seed, seed + 1, ...``.
    seed : int
        The first repeat's seed.
    draws : {"per-model", "common"}
        Each held-out model's own item draw, or one item set for all.
    label : str
        Text of the progress bar.
    domains : tuple of str
        Domains of ``dataset`` to keep; ``()`` keeps every domain.
    scored : int, optional
        Estimate a seeded subset of this many held-out models; all by default.
    baselines : tuple of str, optional
        The baselines estimated beside ``methods`` (default
        :data:`lifelong_core.workflows.backtest.BASELINES`, both).

    Returns
    -------
    lifelong_core.workflows.backtest.Backtest
        The backtest's tables (a copy: a page cannot alter the shared result).
    """
    from lifelong_core.store.kept_results import KeptResults
    from lifelong_core.workflows import backtest as bt

    chosen = bt.BASELINES if baselines is None else baselines
    args = (
        key,
        dataset,
        domains,
        methods,
        budgets,
        holdout,
        split,
        repeats,
        seed,
        draws,
        scored,
        chosen,
    )
    bar = st.progress(0.0, text=label)
    with input_errors(cleanup=bar.empty):
        result = _memo().get_or_compute(
            ("backtest",) + args,
            lambda: bt.backtest(
                selection(key, dataset, domains),
                list(methods),
                list(budgets),
                holdout=holdout,
                split=split,
                repeats=repeats,
                seed=seed,
                draws=draws,
                scored=scored,
                progress=lambda f, text: bar.progress(min(float(f), 1.0), text=text),
                memory=fit_memory(),
                baselines=chosen,
                # The Budget explorer's default view, kept by lbe state --refresh.
                kept=KeptResults(get_store()),
            ),
        )
    bar.empty()
    return result


@st.cache_data(show_spinner=False, max_entries=8)
def teaching_slice(key: str, dataset: str, n_models: int, n_samples: int, seed: int):
    """A small slice of the dataset's matrix to show Sort & Search on.

    :func:`lifelong_core.workflows.teaching.teaching_slice` of the dataset's (bounded)
    selection.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    n_models : int
        Models in the slice, spread over the accuracy range.
    n_samples : int
        Samples in the slice, drawn at random.
    seed : int
        Seed of the draw.

    Returns
    -------
    tuple
        The 0/1 matrix, the model names and the sample ids.
    """
    return teaching.teaching_slice(bounded(key, dataset, ())[0], n_models, n_samples, seed)


StateMissing = lifelong_state.StateMissing


@st.cache_resource(show_spinner=False, max_entries=4)
def fitted_method(key: str, dataset: str, search: str):
    """``search`` fitted on every real model's row of ``dataset`` (Sort by sum).

    The store's kept state (Sort order, ``mirt``/``irt`` item parameters; ``state``
    command) is used whenever it is current, so nothing is re-sorted or refitted; a small
    store without it is fitted here, a large one raises :class:`StateMissing`.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    search : str
        Registered search method.

    Returns
    -------
    SearchMethod
        The fitted method, one shared object per key.

    Raises
    ------
    StateMissing
        On a large store without a current kept state for ``search`` (an
        :class:`~lifelong_core.errors.InputError` whose sentence says what to refresh).
    """
    from lifelong_core.methods.registry import get_method

    sel = selection(key, dataset, ())
    store = get_store()
    if capabilities(search).kept_state:
        est, stat = lifelong_state.fitted(store, dataset, search)
        if est is not None:
            return est
        if is_large(sel):
            raise StateMissing(stat.sentence())
    elif is_large(sel):
        return get_method(search, groups=sel.tasks).fit(None, _kept_sort(store, dataset, sel).order)
    return item_choice.fit_method(sel, search)


def _kept_sort(store, dataset: str, sel: Selection):
    """The kept Sort state covering exactly this selection, else StateMissing."""
    return lifelong_state.current_sort(
        store, dataset, sel.models["model_idx"].to_numpy(), sel.samples["sample_idx"].to_numpy()
    )


@st.cache_resource(
    show_spinner="Fitting the adaptive method on the cache (cross-validated)…", max_entries=4
)
def fitted_adaptive(key: str, dataset: str, leave_out: int | None = None):
    """The adaptive method fitted on every real model of ``dataset``, or on all but one.

    For a simulation, ``leave_out`` keeps one model out of its own cache; the fit then
    reuses the whole store's cross-validated settings, so only the item model is refitted.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    leave_out : int, optional
        Row of the selection to leave out (None: fit on every row).

    Returns
    -------
    AdaptiveMethod
        :func:`lifelong_core.workflows.adaptive.fit_adaptive`, one shared object per key.
    """
    from lifelong_core.workflows import adaptive

    sel = selection(key, dataset, ())
    tuning = None if leave_out is None else fitted_adaptive(key, dataset, None).tuning_
    return adaptive.fit_adaptive(sel, leave_out, tuning)


@st.cache_resource(show_spinner=False, max_entries=4)
def fitted_insert_d(key: str, dataset: str, rule: str, sampling: str):
    """insert_D fitted on every real model's row of ``dataset``.

    Sort & Search on the transposed matrix, for new samples (Prabhu et al. 2024,
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.3). On a large
    store it is fitted from the kept row and column sums of the store's lifelong state
    instead of the rows.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    rule : str
        Threshold rule of the search.
    sampling : str
        How the models a new sample is run on are spread over the models' ranking.

    Returns
    -------
    InsertD
        The fitted method, one shared object per key.

    Raises
    ------
    StateMissing
        On a large store whose kept Sort state is missing or does not cover the selection
        (an :class:`~lifelong_core.errors.InputError`).
    """
    from lifelong_core.methods import InsertD

    sel = selection(key, dataset, ())
    if is_large(sel):
        s = _kept_sort(get_store(), dataset, sel)
        return InsertD(rule=rule, sampling=sampling).fit_sums(s.row_sums, s.sums)
    return arrivals.fit_new_sample_method(sel, rule, sampling)


@st.cache_data(show_spinner=False, max_entries=4)
def accuracies(key: str, dataset: str) -> np.ndarray:
    """Accuracy of every model of the dataset's selection, in the selection's row order.

    On a large store (read as packed blocks) the rows are not read: the kept row sums of
    the store's lifelong state give the accuracies.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.

    Returns
    -------
    numpy.ndarray
        One accuracy (a fraction) per row of :func:`selection` with every domain.

    Raises
    ------
    StateMissing
        On a large store whose kept Sort state is missing or does not cover the selection
        (an :class:`~lifelong_core.errors.InputError`).
    """
    sel = selection(key, dataset, ())
    if isinstance(sel.A, np.ndarray):
        return sel.A.mean(axis=1)
    return _kept_sort(get_store(), dataset, sel).row_sums / sel.A.shape[1]


@st.cache_data(show_spinner=False, max_entries=8)
def harness_metrics(key: str, dataset: str) -> dict[str, tuple[str, str | None]]:
    """The metric (and filter) each harness task of ``dataset`` was imported with
    (:meth:`~lifelong_core.store.reading.StoreReader.harness_metrics`).

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.

    Returns
    -------
    dict of str to (str, str or None)
        Task -> (metric, filter).
    """
    return get_store().harness_metrics(dataset)


def row_values(key: str, dataset: str, row: int, cols: np.ndarray) -> np.ndarray:
    """One model's 0/1 results on some samples of the dataset's selection.

    On a large store only that row's cells are read from the packed blocks.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    row : int
        Row of the model in the selection.
    cols : numpy.ndarray
        Column positions of the samples in the selection.

    Returns
    -------
    numpy.ndarray
        The model's 0/1 result on each of ``cols``.
    """
    sel = selection(key, dataset, ())
    if not isinstance(sel.A, large.PackedCache):
        return sel.A[row, cols]
    return large.dense_rows(get_store(), sel.A, [row], cols)[0]


@st.cache_data(show_spinner=False, max_entries=16)
def stream_replay(
    key: str, dataset: str, pool: int, budget: int, sampling: str, rule: str, seed: int
) -> pd.DataFrame:
    """Replay the dataset's models in release order, estimating each as it arrives.

    Serial additions as in Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in
    an Era of Rapid Progress*, App. G, by
    :func:`lifelong_core.workflows.stream.stream_replay` on the dataset's (bounded)
    selection: the first ``pool`` models are evaluated in full; each later one is
    estimated from ``budget`` evaluations and its predicted row joins the Sort sums.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    pool : int
        Models evaluated in full before the stream starts.
    budget : int
        Samples each arriving model is evaluated on (n′).
    sampling : str
        Where on the sorted samples the evaluations fall.
    rule : str
        Threshold rule of the search.
    seed : int
        Seed of the sampling.

    Returns
    -------
    pandas.DataFrame
        One row per arriving model: its error, and the running evaluation counts of this
        scheme and of evaluating everything in full.

    Raises
    ------
    InputError
        If ``pool`` is not between 1 and the number of models minus one.
    """
    from lifelong_core.store.kept_results import KeptResults

    return stream.stream_replay(
        bounded(key, dataset, ())[0],
        pool,
        budget,
        sampling,
        rule,
        seed,
        kept=KeptResults(get_store()),
    )


def stream_configs(
    key: str,
    dataset: str,
    pools: tuple[int, ...],
    budgets: tuple[int, ...],
    seed: int,
    progress=None,
) -> pd.DataFrame:
    """Cost and error over the whole stream of every Sort & Search configuration.

    Memoised: :func:`lifelong_core.workflows.stream.stream_configs` of the dataset's (bounded)
    selection: each configuration is an initial pool evaluated in full, a budget n′, a
    sampling and a threshold rule; its cost is the evaluations spent on every model, its
    error the mean over every model (the pool counting as exact). Pools outside
    ``[1, m)`` and budgets above the number of samples are skipped.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    pools : tuple of int
        Sizes of the initial pool (models evaluated in full, in release order).
    budgets : tuple of int
        Samples each later model is evaluated on (n′).
    seed : int
        Seed of the sampling.
    progress : callable, optional
        ``progress(fraction)`` as configurations finish.

    Returns
    -------
    pandas.DataFrame
        One row per configuration: pool, budget, sampling, rule, config, evaluations,
        mae, eagg.
    """
    from lifelong_core.store.kept_results import KeptResults

    args = (key, dataset, pools, budgets, seed)
    return _memo().get_or_compute(
        ("stream",) + args,
        lambda: stream.stream_configs(
            bounded(key, dataset, ())[0],
            pools,
            budgets,
            seed,
            progress=progress,
            kept=KeptResults(get_store()),
        ),
    )


# ------------------------------------------------------------------ rankings
@st.cache_data(show_spinner="Estimating counts with Sort & Search…", max_entries=16)
def estimated_counts(
    key,
    dataset: str,
    n_new: int,
    budget: int,
    method: str,
    seed: int,
    models: tuple[str, ...],
    draws: str = PER_MODEL,
):
    """Estimated and true counts of the newest models of the dataset.

    :func:`lifelong_core.workflows.rankings.newest_estimated_counts` on the dataset's
    selection: the ``n_new`` newest of ``models`` are estimated from ``budget`` samples
    each, the older ones being the cache.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.
    dataset : str
        Name of a dataset of the store.
    n_new : int
        How many of the newest models are estimated.
    budget : int
        Samples each new model is evaluated on (n′).
    method : str
        Registered search method.
    seed : int
        Seed of the samples drawn.
    models : tuple of str
        Names of the models taken into account (the cache and the new ones).
    draws : {"per-model", "common"}
        Each new model's own draw of samples, or one common set from the seed.

    Returns
    -------
    EstimatedCounts
        Estimated counts and true counts (``counts.csv`` frames), and a frame of the
        method's own interval of each new model's accuracy in percent (model, mean, lo,
        hi, true), or None when the method gives none.

    Raises
    ------
    InputError
        If ``n_new`` would leave fewer than two models in the cache, or the method or
        budget is refused.
    """
    return rankings.newest_estimated_counts(
        get_store(),
        dataset,
        n_new,
        budget,
        method,
        seed,
        models=models,
        sel=selection(key, dataset, ()),
        draws=draws,
    )


@st.cache_data(show_spinner="Normalisation bounds over every model…", max_entries=16)
def normalization_bounds(
    counts: pd.DataFrame, n_boot: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """§2.4's bounds over every model of the source, whichever are shown."""
    from lifelong_core.stats import from_frame
    from lifelong_core.stats import normalization_bounds as bounds

    return bounds(from_frame(counts), n_boot, seed)


# The three bootstrap views read the same replicates: the tables below call this cached
# draw, so a run draws them once whichever tab is open. ``counts`` is the whole source,
# ``chosen`` the models shown: a model's replicates do not depend on the others, and the
# normalisation bounds are the source's, so nothing shown changes with the choice. The
# bootstrap's settings are one RankingOptions (boot, seed, normalize), as ``lbe rank``'s.
@st.cache_data(show_spinner="Bootstrapping…", max_entries=16)
def replicates(counts: pd.DataFrame, chosen: tuple[str, ...], options: RankingOptions) -> Any:
    """The bootstrap replicates of the ``chosen`` models (LA-UR-24-25289 report, §2.1),
    normalised with the source's bounds when asked (§2.4)."""
    from lifelong_core.stats import bootstrap, from_frame, normalize

    table = from_frame(counts).subset(models=list(chosen))
    boot = bootstrap(table, n_boot=options.boot, seed=options.seed)
    if not options.normalize:
        return boot
    return normalize(boot, bounds=normalization_bounds(counts, options.boot, options.seed))


_BOOT_PARAMETERS = """counts : pandas.DataFrame
        The whole source's counts (``counts.csv`` layout: model, task, category, correct,
        total), whichever models are shown.
    chosen : tuple of str
        The models shown; their replicates do not depend on the others.
    options : RankingOptions
        The bootstrap's replicates (``boot``), seed (each model draws from its own
        stream, from the seed and its name) and whether each task's scores are rescaled
        between the source's normalisation bounds before aggregating (``normalize``,
        §2.4)."""


def _boot_doc(f: Callable[..., Any]) -> Callable[..., Any]:
    """The bootstrap tables' shared parameters, written once into each docstring."""
    f.__doc__ = (f.__doc__ or "").replace("{params}", _BOOT_PARAMETERS)
    return f


@st.cache_data(show_spinner=False, max_entries=16)
@_boot_doc
def board_table(
    counts: pd.DataFrame, chosen: tuple[str, ...], options: RankingOptions, level: float
) -> pd.DataFrame:
    """Bootstrap leaderboard of the chosen models, overall and per category.

    Percentile intervals of the replicate scores (LA-UR-24-25289 report, 2024, §2.1).

    Parameters
    ----------
    {params}
    level : float
        Coverage of the intervals, e.g. 0.834 for the 83.4% display level.

    Returns
    -------
    pandas.DataFrame
        model, scope, mean, lo, hi (fractions).
    """
    from lifelong_core.stats import leaderboard

    return leaderboard(replicates(counts, chosen, options), level=level)


@st.cache_data(show_spinner=False, max_entries=16)
@_boot_doc
def rank_table(
    counts: pd.DataFrame, chosen: tuple[str, ...], options: RankingOptions
) -> pd.DataFrame:
    """Bootstrap rank intervals of the chosen models under every scheme.

    Intervals at 95% (LA-UR-24-25289 report, 2024, §3.2, Tables 4 and 5).

    Parameters
    ----------
    {params}

    Returns
    -------
    pandas.DataFrame
        model, scheme, mean, lo, hi (ranks, 1 = best).
    """
    from lifelong_core.stats import DIFFERENCE_LEVEL, rank_intervals

    boot = replicates(counts, chosen, options)
    return rank_intervals(boot.scores, boot.table.models, level=DIFFERENCE_LEVEL, seed=options.seed)


@st.cache_data(show_spinner=False, max_entries=16)
@_boot_doc
def differences(
    counts: pd.DataFrame,
    chosen: tuple[str, ...],
    options: RankingOptions,
    models: tuple[str, ...],
) -> pd.DataFrame:
    """Bootstrap pairwise differences of ``models``, Bonferroni-corrected.

    Intervals at 95% for the family of pairs (LA-UR-24-25289 report, 2024, §2.1,
    Table 3).

    Parameters
    ----------
    {params}
    models : tuple of str
        The models compared, in the order the pairs are formed.

    Returns
    -------
    pandas.DataFrame
        model_a, model_b, diff, lo, hi (fractions), level (per comparison) and
        excludes_zero.

    Raises
    ------
    InputError
        If a model of ``models`` is not in the replicates.
    """
    from lifelong_core.stats import pairwise_differences

    boot = replicates(counts, chosen, options)
    return pairwise_differences(boot, models=list(models))


@st.cache_data(show_spinner="Sampling the hierarchical model…", max_entries=8)
def hierarchical(
    counts: pd.DataFrame, chains: int, draws: int, seed: int, prior: tuple, level: float
) -> dict:
    """What the Rankings page shows of the hierarchical model of the counts.

    The beta-binomial model of the LA-UR-24-25289 report (2024, §2.2):
    :func:`lifelong_core.workflows.rankings.hierarchical_views`, warm-up half the draws.

    Parameters
    ----------
    counts : pandas.DataFrame
        Counts of the models shown (``counts.csv`` layout).
    chains : int
        MCMC chains.
    draws : int
        Draws per chain, warm-up included.
    seed : int
        Seed of the sampler.
    prior : tuple
        ``("normal", mean, sd)`` or ``("uniform", low, high)`` on the model's a and b.
    level : float
        Coverage of the credible intervals.

    Returns
    -------
    dict
        Diagnostics, intervals at ``level``, rank probabilities, the draws of a, b and
        the mean accuracy, pairwise differences and rank intervals.

    Raises
    ------
    InputError
        On a prior that is not normal or uniform, or whose parameters are out of range.
    """
    from lifelong_core.stats import from_frame

    return rankings.hierarchical_views(
        from_frame(counts), chains=chains, draws=draws, seed=seed, prior=prior, level=level
    )


# ------------------------------------------------------------------ matched accuracy
@st.cache_data(show_spinner=False, max_entries=32)
def pair_samples(key, src: tuple, tgt: tuple):
    """The samples of a source and a target side, and the store's model names.

    Parameters
    ----------
    key
        The store's cache key (:func:`store_key`).
    src, tgt : tuple
        The source and the target side, each ``(dataset, domains or None)``, as
        :class:`lifelong_core.matching.store_pair.Side` takes them.

    Returns
    -------
    PairSamples
        :func:`lifelong_core.matching.store_pair.read_samples`.

    Raises
    ------
    InputError
        If a side names an unknown dataset or domain, is empty, or has unlabelled samples.
    """
    from lifelong_core.matching.store_pair import Side, read_samples

    return read_samples(get_store(), Side(*src), Side(*tgt))


@st.cache_data(show_spinner=False, max_entries=256)
def match_block(
    key, src: tuple, tgt: tuple, rows: tuple, eps: float, crit: str, runs: int, seed: int
):
    """One block of models through the matched-accuracy protocol,
    :func:`lifelong_core.workflows.matching.compare_block` (the protocol of Anzaku et al.
    (2022), *A Principled Evaluation Protocol for Comparative Investigation of the
    Effectiveness of DNN Classification Models on Similar-but-non-identical Datasets*),
    with the tables ``lbe state --refresh`` keeps in the store found there. The page runs
    it block by block to move its progress bar and to cache each block.

    Parameters
    ----------
    key
        The store's cache key (:func:`store_key`).
    src, tgt : tuple
        The source and the target side, each ``(dataset, domains or None)``, as
        :class:`lifelong_core.matching.store_pair.Side` takes them.
    rows : tuple of int
        ``model_idx`` of the block's models.
    eps : float
        Match a source and a target sample when their confidences differ by at most ``eps``.
    crit : {"label-prob", "prob"}
        Matching criterion: Algorithm 1 (same predicted label and close confidence) or
        Algorithm 2 (close confidence only).
    runs : int
        Seeded matching runs per model.
    seed : int
        Seed of the first run.

    Returns
    -------
    tuple
        The comparison table (one row per model) and the names of the models skipped
        for lack of predicted labels or confidences.

    Raises
    ------
    InputError
        If a matching parameter is invalid.
    """
    from lifelong_core.store.kept_results import KeptResults
    from lifelong_core.workflows.matching import compare_block

    store = get_store()
    return compare_block(
        store,
        pair_samples(key, src, tgt),
        list(rows),
        eps=eps,
        criterion=crit,
        runs=runs,
        seed=seed,
        kept=KeptResults(store),
    )


@st.cache_data(show_spinner="Matching...", max_entries=64)
def match_one_model(
    key, src: tuple, tgt: tuple, row: int, eps: float, crit: str, runs: int, seed: int
) -> dict:
    """One model's matched accuracy with everything the page shows of it.

    :func:`lifelong_core.workflows.matching.model_detail`.

    Parameters
    ----------
    key
        The store's cache key (:func:`store_key`).
    src, tgt : tuple
        The source and the target side, each ``(dataset, domains or None)``, as
        :class:`lifelong_core.matching.store_pair.Side` takes them.
    row : int
        ``model_idx`` of the model.
    eps : float
        Match a source and a target sample when their confidences differ by at most ``eps``.
    crit : {"label-prob", "prob"}
        Matching criterion: Algorithm 1 (same predicted label and close confidence) or
        Algorithm 2 (close confidence only).
    runs : int
        Seeded matching runs per model.
    seed : int
        Seed of the first run.

    Returns
    -------
    dict
        The metrics, the number of datapoints on each side, the per-run table, the
        standard errors of the matched accuracies, and the reliability and density of
        every subset.

    Raises
    ------
    InputError
        If the model lacks the predictions needed or a parameter is invalid.
    """
    from lifelong_core.matching import check_params
    from lifelong_core.workflows.matching import model_detail

    return model_detail(
        get_store(),
        pair_samples(key, src, tgt),
        row,
        eps=eps,
        criterion=check_params(eps, crit),
        runs=runs,
        seed=seed,
    )
