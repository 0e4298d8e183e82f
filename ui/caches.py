"""Cached reads and derived tables for the pages (``st.cache_data`` /
``st.cache_resource``, and the memo that computes a sweep once for every session asking).

Every function here is a thin wrapper: the rules (which models count, Sort sets, budgets,
the new-model and stream flows) live in ``lifelong_core.workflows``, shared with the
command line; this module caches their results. Every cached function takes ``key``
(store path and modification time, from :func:`store_key`) so a store grown by another
process is re-read; ``ui.common.refresh_store`` clears everything after this app writes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.methods import capabilities
from lifelong_core.methods.draws import PER_MODEL
from lifelong_core.sortsearch import fit_exponential, fit_power_law, model_correlation
from lifelong_core.workflows import (
    arrivals,
    large,
    lifelong_state,
    rankings,
    stream,
    teaching,
)
from lifelong_core.workflows import (
    selection as _selection,
)
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.sweeps import sweep_selection
from ui.common import Memo as _Memo
from ui.common import (
    get_store,
    input_errors,
    store_path,
)


@st.cache_resource(show_spinner=False)
def _memo() -> _Memo:
    return _Memo(64)


def store_key() -> str:
    """Cache key of the store file: path and modification time."""
    get_store()  # stops the page with one sentence when there is no usable store
    p = store_path()
    return f"{p}:{p.stat().st_mtime_ns}"


@st.cache_data(show_spinner=False, max_entries=8)
def complete_counts(key: str, dataset: str) -> tuple[pd.DataFrame, list[str]]:
    """:func:`lifelong_core.workflows.selection.complete_counts` of the store."""
    return _selection.complete_counts(get_store(), dataset)


@st.cache_data(show_spinner=False, max_entries=4)
def overview(key: str) -> dict:
    """What the store holds: datasets, domains, models, log and counts."""
    s = get_store()
    return {
        "datasets": s.datasets(),
        "domains": s.domains(),
        "models": s.models(),
        "log": s.log(),
        "n_models": s.n_models,
        "n_samples": s.n_samples,
    }


@st.cache_resource(show_spinner="Reading the cache from the store…", max_entries=6)
def selection(key: str, dataset: str, domains: tuple[str, ...]) -> Selection:
    """:func:`lifelong_core.workflows.selection.select`: every real model's 0/1 row on the
    samples of ``dataset`` restricted to ``domains``.

    One shared object per key, not a copy per call: copying (pickling) the sample table
    cost more than reading it on a 500,000-sample store, on every re-run. Pages only read
    it; the matrix is made read-only so that an accidental write fails instead of leaking
    into other sessions.
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


def sweep(
    key: str,
    dataset: str,
    domains: tuple[str, ...],
    sort_set: tuple[int, ...],
    sort: str,
    sampling: str,
    search: str,
    budgets: tuple[int, ...],
    seed: int,
    decompose: bool = False,
    eval_rows: tuple[int, ...] | None = None,
    progress=None,
    scored: int = large.DEFAULT_SCORED,
):
    """:func:`lifelong_core.workflows.sweeps.sweep_selection` on the selection: Sort on
    ``sort_set``, evaluate every other row (or ``eval_rows``; on a large store a seeded
    sample of ``scored`` of them). Memoised."""
    args = (
        key,
        dataset,
        domains,
        sort_set,
        sort,
        sampling,
        search,
        budgets,
        seed,
        decompose,
        eval_rows,
        scored,
    )
    return _memo().get_or_compute(("sweep",) + args, lambda: _sweep(*args, progress=progress))


def _sweep(
    key,
    dataset,
    domains,
    sort_set,
    sort,
    sampling,
    search,
    budgets,
    seed,
    decompose,
    eval_rows,
    scored,
    progress,
):
    sel = selection(key, dataset, domains)
    conf = (
        confidence(key, dataset, domains, sort_set)
        if sort == "confidence" and not is_large(sel)
        else None
    )
    return sweep_selection(
        sel,
        sort_set,
        sort,
        sampling,
        search,
        budgets,
        seed,
        decompose=decompose,
        eval_rows=eval_rows,
        confidence=conf,
        progress=progress,
        store=get_store(),
        scored=scored,
    )


@st.cache_data(show_spinner=False, max_entries=8)
def fits(table: pd.DataFrame):
    """Exponential fit of MAE and power-law fit of E_agg against the budget."""
    return fit_exponential(table["budget"], table["mae"]), fit_power_law(
        table["budget"], table["eagg"]
    )


def is_large(sel: Selection) -> bool:
    """Whether the selection is read as packed blocks (beyond the dense-read limit)."""
    return isinstance(sel.A, large.PackedCache)


@st.cache_data(show_spinner=False, max_entries=4)
def correlation(key: str, dataset: str, domains: tuple[str, ...]):
    """The model-by-model correlation matrix sorted by accuracy (Prabhu et al. 2024, App. E),
    and a note (empty unless a large store is shown on a bounded sample; ``order`` then
    indexes the selection's rows)."""
    import dataclasses

    sel = selection(key, dataset, domains)
    if not is_large(sel):
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
    """The selection itself, or on a large store a dense bounded block of it (a seeded
    sample of models in store order and of samples) with a note saying so."""
    sel = selection(key, dataset, domains)
    if not is_large(sel):
        return sel, ""
    block = large.bounded_block(get_store(), sel.A, max_models, seed)
    small = Selection(
        block.A,
        sel.models.iloc[block.rows].reset_index(drop=True),
        sel.samples.iloc[block.cols].reset_index(drop=True),
        sel.synthetic,
    )
    return small, block.note(sel.A.shape)


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
):
    """:func:`lifelong_core.workflows.backtest.backtest` on the dataset's selection, with a
    progress bar; memoised like the sweeps. Stops the page with one sentence on bad input."""
    from lifelong_core.workflows import backtest as bt

    args = (key, dataset, methods, budgets, holdout, split, repeats, seed, draws)
    bar = st.progress(0.0, text=label)
    with input_errors(cleanup=bar.empty):
        result = _memo().get_or_compute(
            ("backtest",) + args,
            lambda: bt.backtest(
                selection(key, dataset, ()),
                list(methods),
                list(budgets),
                holdout=holdout,
                split=split,
                repeats=repeats,
                seed=seed,
                draws=draws,
                progress=lambda f, text: bar.progress(min(float(f), 1.0), text=text),
            ),
        )
    bar.empty()
    return result


@st.cache_data(show_spinner=False, max_entries=8)
def teaching_slice(key: str, dataset: str, n_models: int, n_samples: int, seed: int):
    """:func:`lifelong_core.workflows.teaching.teaching_slice` of the dataset's selection."""
    return teaching.teaching_slice(bounded(key, dataset, ())[0], n_models, n_samples, seed)


StateMissing = lifelong_state.StateMissing


@st.cache_resource(show_spinner=False, max_entries=4)
def fitted_method(key: str, dataset: str, search: str):
    """``search`` fitted on every real model's row of ``dataset`` (Sort by sum).

    The store's kept state (Sort order, ``mirt``/``irt`` item parameters; ``state``
    command) is used whenever it is current, so nothing is re-sorted or refitted; a small
    store without it is fitted here, a large one raises :class:`StateMissing`.
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
        return get_method(search).fit(None, _kept_sort(store, dataset, sel).order)
    return arrivals.fit_new_model_method(sel, search)


def _kept_sort(store, dataset: str, sel: Selection):
    """The kept Sort state covering exactly this selection, else StateMissing."""
    return lifelong_state.current_sort(
        store, dataset, sel.models["model_idx"].to_numpy(), sel.samples["sample_idx"].to_numpy()
    )


@st.cache_resource(
    show_spinner="Fitting the adaptive method on the cache (cross-validated)…", max_entries=4
)
def fitted_adaptive(key: str, dataset: str, leave_out: int | None = None):
    """The adaptive method fitted on every real model of ``dataset``, or on all but row
    ``leave_out`` for a simulation (reusing the whole store's cross-validated settings, so
    only the item model is refitted)."""
    from lifelong_core.workflows import adaptive

    sel = selection(key, dataset, ())
    tuning = None if leave_out is None else fitted_adaptive(key, dataset, None).tuning_
    return adaptive.fit_adaptive(sel, leave_out, tuning)


@st.cache_resource(show_spinner=False, max_entries=4)
def fitted_insert_d(key: str, dataset: str, rule: str, sampling: str):
    """insert_D fitted on every real model's row of ``dataset`` (on a large store from the
    kept row and column sums)."""
    from lifelong_core.methods import InsertD

    sel = selection(key, dataset, ())
    if is_large(sel):
        s = _kept_sort(get_store(), dataset, sel)
        return InsertD(rule=rule, sampling=sampling).fit_sums(s.row_sums, s.sums)
    return arrivals.fit_new_sample_method(sel, rule, sampling)


@st.cache_data(show_spinner=False, max_entries=4)
def accuracies(key: str, dataset: str) -> np.ndarray:
    """Accuracy of every row of the dataset's selection (kept row sums on a large store)."""
    sel = selection(key, dataset, ())
    if not is_large(sel):
        return sel.A.mean(axis=1)
    return _kept_sort(get_store(), dataset, sel).row_sums / sel.A.shape[1]


def row_values(key: str, dataset: str, row: int, cols: np.ndarray) -> np.ndarray:
    """One model's 0/1 results on some samples of the dataset's selection."""
    sel = selection(key, dataset, ())
    if not is_large(sel):
        return sel.A[row, cols]
    return large.dense_rows(get_store(), sel.A, [row], cols)[0]


@st.cache_data(show_spinner=False, max_entries=16)
def stream_replay(
    key: str, dataset: str, pool: int, budget: int, sampling: str, rule: str, seed: int
) -> pd.DataFrame:
    """:func:`lifelong_core.workflows.stream.stream_replay` of the dataset's selection."""
    return stream.stream_replay(bounded(key, dataset, ())[0], pool, budget, sampling, rule, seed)


def stream_configs(
    key: str,
    dataset: str,
    pools: tuple[int, ...],
    budgets: tuple[int, ...],
    seed: int,
    progress=None,
) -> pd.DataFrame:
    """:func:`lifelong_core.workflows.stream.stream_configs` of the dataset's selection. Memoised."""
    args = (key, dataset, pools, budgets, seed)
    return _memo().get_or_compute(
        ("stream",) + args,
        lambda: stream.stream_configs(
            bounded(key, dataset, ())[0], pools, budgets, seed, progress=progress
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
    """:func:`lifelong_core.workflows.rankings.newest_estimated_counts` on the dataset's
    selection."""
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
# normalisation bounds are the source's, so nothing shown changes with the choice.
@st.cache_data(show_spinner="Bootstrapping…", max_entries=16)
def replicates(
    counts: pd.DataFrame, chosen: tuple[str, ...], n_boot: int, seed: int, normalized: bool
):
    """The bootstrap replicates of the ``chosen`` models (LA-UR-24-25289 report, §2.1),
    normalised with the source's bounds when asked (§2.4)."""
    from lifelong_core.stats import bootstrap, from_frame, normalize

    boot = bootstrap(from_frame(counts).subset(models=list(chosen)), n_boot=n_boot, seed=seed)
    if not normalized:
        return boot
    return normalize(boot, bounds=normalization_bounds(counts, n_boot, seed))


@st.cache_data(show_spinner=False, max_entries=16)
def board_table(
    counts: pd.DataFrame,
    chosen: tuple[str, ...],
    n_boot: int,
    seed: int,
    level: float,
    normalized: bool,
) -> pd.DataFrame:
    """The bootstrap leaderboard of the chosen models at ``level``."""
    from lifelong_core.stats import leaderboard

    return leaderboard(replicates(counts, chosen, n_boot, seed, normalized), level=level)


@st.cache_data(show_spinner="Ranking the replicates…", max_entries=16)
def rank_table(
    counts: pd.DataFrame, chosen: tuple[str, ...], n_boot: int, seed: int, normalized: bool
) -> pd.DataFrame:
    """Bootstrap rank intervals of the chosen models under every scheme (§3.2)."""
    from lifelong_core.stats import DIFFERENCE_LEVEL, rank_intervals

    boot = replicates(counts, chosen, n_boot, seed, normalized)
    return rank_intervals(boot.scores, boot.table.models, level=DIFFERENCE_LEVEL, seed=seed)


@st.cache_data(show_spinner=False, max_entries=16)
def differences(
    counts: pd.DataFrame,
    chosen: tuple[str, ...],
    n_boot: int,
    seed: int,
    normalized: bool,
    models: tuple[str, ...],
):
    """Bootstrap pairwise differences of ``models`` (Bonferroni over their pairs)."""
    from lifelong_core.stats import pairwise_differences

    boot = replicates(counts, chosen, n_boot, seed, normalized)
    return pairwise_differences(boot, models=list(models))


@st.cache_data(show_spinner="Sampling the hierarchical model…", max_entries=8)
def hierarchical(
    counts: pd.DataFrame, chains: int, draws: int, seed: int, prior: tuple, level: float
) -> dict:
    """:func:`lifelong_core.workflows.rankings.hierarchical_views` of the counts."""
    from lifelong_core.stats import from_frame

    return rankings.hierarchical_views(
        from_frame(counts), chains=chains, draws=draws, seed=seed, prior=prior, level=level
    )


# ------------------------------------------------------------------ matched accuracy
@st.cache_data(show_spinner=False, max_entries=32)
def pair_samples(key, src: tuple, tgt: tuple):
    """The samples of a source and a target side (each ``(dataset, domains or None)``)."""
    from lifelong_core.matching.store_pair import Side, read_samples

    return read_samples(get_store(), Side(*src), Side(*tgt))


@st.cache_data(show_spinner=False, max_entries=256)
def match_block(
    key, src: tuple, tgt: tuple, rows: tuple, eps: float, crit: str, runs: int, seed: int
):
    """One block of models through the same call the benchmark times: (table, skipped)."""
    from lifelong_core.matching.store_pair import compare_store_models

    comparison, skipped = compare_store_models(
        get_store(),
        pair_samples(key, src, tgt),
        list(rows),
        eps=eps,
        criterion=crit,
        runs=runs,
        seed=seed,
        require_any=False,
    )
    return comparison.table, skipped


@st.cache_data(show_spinner="Matching...", max_entries=64)
def match_one_model(
    key, src: tuple, tgt: tuple, row: int, eps: float, crit: str, runs: int, seed: int
) -> dict:
    """:func:`lifelong_core.workflows.matching.model_detail` of one model."""
    from lifelong_core.workflows.matching import model_detail

    return model_detail(
        get_store(),
        pair_samples(key, src, tgt),
        row,
        eps=eps,
        criterion=crit,
        runs=runs,
        seed=seed,
    )
