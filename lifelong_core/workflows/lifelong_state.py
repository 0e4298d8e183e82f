"""Refreshing and reading the lifelong state kept in the store.

``lifelong_core.store.state`` keeps, per dataset, the Sort set's column sums and order
(updated by every import) and the fitted item parameters of ``mirt``. This module is what
the command line (``python -m lifelong_core state``) and the app share:

- :func:`refresh`: bring the Sort state up to date and fit ``mirt`` from packed blocks of
  the cache, then keep both in the store (a writer handle); progress is reported.
- :func:`fitted`: ``mirt`` rebuilt from the kept parameters, without refitting, and a
  :class:`Status` saying whether the state is stale and how long a refresh takes.

At scale the fit uses a documented subsample: at most ``MAX_FIT_MODELS`` Sort models
(seeded random subset of the Sort set) and, for caches wider than ``MAX_FIT_COLUMNS``
samples, the two-stage fit of ``methods.irt_fit`` (abilities from ``MAX_FIT_COLUMNS``
random columns, then every column's items given them). Their measured effect on the demo
data is on the documentation's Benchmarks page ("The ``mirt`` fit on a subsample") and in
``benchmarks/results/bench_mirt_scale.json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.methods.irt_fit import DEFAULT_MAX_COLUMNS
from lifelong_core.methods.registry import kept_method, kept_methods
from lifelong_core.store import state as kept
from lifelong_core.store.dataset_rows import read_rows

if TYPE_CHECKING:
    from lifelong_core.methods.base import KeptStateMethod
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import Selection

MAX_FIT_MODELS = 500
MAX_FIT_COLUMNS = DEFAULT_MAX_COLUMNS
# Seconds per (model x sample x pass) of the chunked fit on the 2-core machine of the
# Benchmarks page, with other work running: an order of magnitude for the first refresh only
# (later ones scale the last measured fit time).
FIT_SECONDS_PER_ENTRY_PASS = 1.2e-7
SORT_SECONDS_PER_ENTRY = 8e-9  # Sort sums from the store (4,000 x 500,000 in ~16 s, same machine)

Progress = Callable[[float, str], object]


def fit_models(members: np.ndarray, max_models: int, seed: int) -> np.ndarray:
    """The Sort models the item fit uses: all of them, or a seeded random ``max_models``."""
    if len(members) <= max_models:
        return np.asarray(members, dtype=np.int64)
    return np.sort(np.random.default_rng(seed).choice(members, max_models, replace=False)).astype(
        np.int64
    )


def _estimator(method: str) -> KeptStateMethod:
    from lifelong_core.methods.base import is_kept_state_method
    from lifelong_core.methods.registry import get_method

    est = get_method(method) if method in kept_methods() else None
    if not is_kept_state_method(est):
        raise InputError(
            f"the kept item parameters are for {', '.join(kept_methods())}, not {method!r}."
        )
    return est


def refresh(
    st: Store,
    dataset: str,
    method: str | None = None,
    *,
    max_models: int = MAX_FIT_MODELS,
    max_columns: int = MAX_FIT_COLUMNS,
    seed: int = 0,
    progress: Progress | None = None,
) -> tuple[kept.SortState, kept.ItemState]:
    """Update the Sort state of ``dataset``, fit ``method`` on it and keep both in the store.

    What ``lbe state --refresh`` and the app's refresh button run. The Sort state (column
    sums and order over the Sort set, Prabhu et al. (2024), *Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress*, §3.1) is brought up to date first; then the
    kept method's item parameters are fitted from packed rows of at most ``max_models``
    Sort models (a seeded random subset) and, for a cache wider than ``max_columns``, by
    the two-stage fit of :mod:`lifelong_core.methods.irt_fit`.

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset : str
        A dataset the store holds.
    method : str, optional
        A method whose parameters can be kept (``kept_methods()`` of the registry);
        default the product's default estimator when it can be kept.
    max_models : int
        The most Sort models the fit uses (2 to ``limits.MAX_STATE_FIT_MODELS``).
    max_columns : int
        The most columns of the first stage (2 to ``limits.MAX_STATE_FIT_COLUMNS``).
    seed : int
        Seeds the subsample of models and columns and the fit.
    progress : callable, optional
        ``progress(fraction, text)``: the fraction done (0 to 1) and what is being done.

    Returns
    -------
    tuple of (SortState, ItemState)
        The kept Sort state and the item parameters just saved (with the fit's settings
        and its time in seconds).

    Raises
    ------
    InputError
        If the handle is read-only, a size or the seed is out of range, ``method``'s
        parameters cannot be kept, or fewer than two real models were evaluated on every
        sample of ``dataset``.
    """
    method = kept_method(method)
    limits.check_count(
        max_models, "the models of the fit", 2, limits.MAX_STATE_FIT_MODELS, "max_models"
    )
    limits.check_count(
        max_columns, "the columns of the fit", 2, limits.MAX_STATE_FIT_COLUMNS, "max_columns"
    )
    limits.check_seed(seed)
    report = progress or (lambda f, text: None)
    est = _estimator(method)
    report(0.0, "Sort state: column sums over the cache")
    sort = kept.update_sort_state(
        st, dataset, progress=lambda f: report(0.1 * f, "Sort state: column sums over the cache")
    )
    if len(sort.members) < 2:
        raise InputError(
            f"fewer than two real models were evaluated on every sample of {dataset!r}; nothing to fit."
        )
    t0 = time.perf_counter()
    rows = fit_models(sort.members, max_models, seed)
    n = len(sort.samples)
    report(0.1, f"reading {len(rows):,} Sort models' packed rows")
    P = read_rows(st, rows, sort.samples)
    report(0.15, f"fitting {method} on {len(rows):,} models x {n:,} samples")
    est.fit_packed(
        P,
        n,
        sort.order,
        max_columns=max_columns,
        seed=seed,
        progress=lambda f: report(
            0.15 + 0.6 * f, f"fitting {method} on {len(rows):,} models x {n:,} samples"
        ),
    )
    del P
    params = {
        **est.kept_params(),
        "max_models": max_models,
        "max_columns": max_columns,
        "seed": seed,
        "members_at_fit": len(sort.members),
    }
    item = kept.ItemState(
        dataset,
        method,
        sort.log_id,
        params,
        rows,
        sort.samples,
        est.item_.d,
        est.item_.w,
        est.item_.theta,
        kept.utc_now(),
        time.perf_counter() - t0,
    )
    kept.save_item_state(st, item)
    report(0.75, f"fitting {method} on the default Sort split, as the sweep pages open")
    # Both read the dataset as the app does: read once for the two.
    sel = _app_selection(st, dataset)
    keep_default_fit(
        st,
        dataset,
        method,
        progress=lambda f: report(
            0.75 + 0.15 * f, f"fitting {method} on the default Sort split, as the sweep pages open"
        ),
        sel=sel,
    )
    report(0.9, f"comparing {method} with a random sample, as the Budget explorer opens")
    keep_default_comparison(st, dataset, method, sel=sel)
    report(0.93, "replaying the stream, as the Stream page opens")
    keep_default_stream(st, dataset, sel=sel)
    report(0.96, "matched accuracy of every model, as the Matched accuracy page opens")
    keep_default_matching(st, dataset)
    report(1.0, "done")
    return sort, item


def _app_selection(st: Store, dataset: str) -> Selection:
    """Every domain of ``dataset``, read as the app reads it (its dense-read limit)."""
    from lifelong_core.workflows.selection import select

    with limits.dense_limit_set(limits.app_limit_bytes()):
        return select(st, dataset, ())


def keep_default_fit(
    st: Store,
    dataset: str,
    method: str,
    *,
    progress: Callable[[float], object] | None = None,
    sel: Selection | None = None,
) -> bool:
    """Fit ``method`` on the default Sort split of ``dataset``, as the sweep pages fit it when
    they open, and keep the fit in the store (:mod:`lifelong_core.store.kept_fits`).

    The split is the pages' default (:data:`~.sortsets.DEFAULT_SORT_SET` of
    :func:`~.sortsets.default_sort_size` models drawn with :data:`~.sortsets.DEFAULT_SEED`,
    every domain, Sorting by Sum), read as the app reads it (its dense-read limit). The
    fit is made by the sweep's own fitting step, so a page that opens on this split finds
    exactly it; fits kept earlier for the dataset and method are dropped first.

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset : str
        A dataset the store holds.
    method : str
        A method whose fits can be kept.
    progress : callable, optional
        ``progress(fraction)``.
    sel : Selection, optional
        The dataset as the app reads it, when the caller has read it already.

    Returns
    -------
    bool
        Whether a fit was kept (not when the dataset has too few models for a split, or
        the fit chose no item model).
    """
    from lifelong_core.methods.memory import FitMemory
    from lifelong_core.sortsearch.search import resolve_sampling
    from lifelong_core.store.kept_fits import KeptFits, forget_kept_fits, kept_fit_count
    from lifelong_core.workflows.sortsets import (
        DEFAULT_SEED,
        DEFAULT_SORT_SET,
        default_sort_size,
        sort_rows,
    )
    from lifelong_core.workflows.sweeps import SweepRequest, sweep_selection

    st.require_writer()
    forget_kept_fits(st, dataset, method)
    sel = _app_selection(st, dataset) if sel is None else sel
    with limits.dense_limit_set(limits.app_limit_bytes()):
        m, n = len(sel.models), len(sel.samples)
        k = default_sort_size(m)
        if k < 3 or n < 4:
            return False
        rows = sort_rows(sel.models, k, DEFAULT_SORT_SET, DEFAULT_SEED)
        other = int(np.setdiff1d(np.arange(m), rows)[0])
        # One model scored at one budget: only the fit is wanted, and it does not depend
        # on which models are scored.
        request = SweepRequest(
            tuple(int(r) for r in rows),
            "sum",
            resolve_sampling(None, method),
            method,
            (min(n, 16),),
            DEFAULT_SEED,
            eval_rows=(other,),
            scored=1,
        )
        sweep_selection(
            sel,
            request,
            progress=progress,
            store=st,
            memory=FitMemory(entries=1).backed_by(KeptFits(st, dataset)),
        )
    return kept_fit_count(st, dataset) > 0


def keep_default_comparison(
    st: Store, dataset: str, method: str, *, sel: Selection | None = None
) -> bool:
    """Run the Budget explorer's comparison with random for its default view of
    ``dataset`` with ``method``, and keep its tables in the store
    (:mod:`lifelong_core.store.kept_results`).

    The view is the page's default: the Sort split of :func:`keep_default_fit`, every
    domain, the default budgets (:func:`~.budgets.default_budgets`), read within the app's
    dense-read limit; the backtest is :func:`~.backtest.sort_split_comparison`'s, so the
    page finds exactly it. The fit kept by :func:`keep_default_fit` is used. Results kept
    earlier for the dataset are dropped first.

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset : str
        A dataset the store holds.
    method : str
        The method the page sweeps.
    sel : Selection, optional
        The dataset as the app reads it, when the caller has read it already.

    Returns
    -------
    bool
        Whether a result was kept (not for a store beyond the dense-read limit, where the
        page compares without a backtest, nor for too few models).
    """
    from lifelong_core.methods.memory import FitMemory
    from lifelong_core.store.kept_fits import KeptFits
    from lifelong_core.store.kept_results import (
        KeptResults,
        forget_kept_results,
        kept_result_count,
    )
    from lifelong_core.workflows import backtest as bt
    from lifelong_core.workflows.budgets import default_budgets
    from lifelong_core.workflows.sortsets import DEFAULT_SEED, DEFAULT_SORT_SET, default_sort_size

    st.require_writer()
    forget_kept_results(st, dataset, bt.KEPT_KIND)
    sel = _app_selection(st, dataset) if sel is None else sel
    m, n = len(sel.models), len(sel.samples)
    k = default_sort_size(m)
    if not isinstance(sel.A, np.ndarray) or k < 2 or m - k < 1 or n < 2:
        return False
    req = bt.sort_split_comparison(method, default_budgets(n), m, k, DEFAULT_SORT_SET, DEFAULT_SEED)
    req.run(sel, memory=FitMemory(entries=1).backed_by(KeptFits(st)), kept=KeptResults(st, dataset))
    return kept_result_count(st, dataset, bt.KEPT_KIND) > 0


def keep_default_stream(st: Store, dataset: str, *, sel: Selection | None = None) -> bool:
    """Run the Stream page's replay and Pareto grid for its first view of ``dataset`` and
    keep their tables in the store (:mod:`lifelong_core.store.kept_results`).

    The view is the page's default: the dataset's every domain read as the app reads it,
    a bounded block of it on a large store (:func:`~.selection.bounded_selection`), the
    default pool, budget, sampling, rule and seed (:mod:`~.stream`), through
    :func:`~.stream.stream_replay` and :func:`~.stream.stream_configs`, so the page
    finds exactly these tables. Results kept earlier for the dataset are dropped first.

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset : str
        A dataset the store holds.
    sel : Selection, optional
        The dataset as the app reads it, when the caller has read it already.

    Returns
    -------
    bool
        Whether the tables were kept (not for a stream of fewer than two models, nor one
        the page cannot replay).
    """
    from lifelong_core.sortsearch import RULES
    from lifelong_core.store.kept_results import (
        KeptResults,
        forget_kept_results,
        kept_result_count,
    )
    from lifelong_core.workflows import stream
    from lifelong_core.workflows.selection import bounded_selection

    st.require_writer()
    forget_kept_results(st, dataset, stream.KEPT_KIND)
    sel = _app_selection(st, dataset) if sel is None else sel
    with limits.dense_limit_set(limits.app_limit_bytes()):
        block, _ = bounded_selection(st, sel)
    m, n = block.A.shape
    if m < 2 or n < 1:
        return False
    kept = KeptResults(st, dataset)
    pool = stream.default_pool(m)
    try:
        stream.stream_replay(
            block,
            pool,
            stream.default_budget(n),
            stream.SAMPLINGS[0],
            RULES[0],
            stream.DEFAULT_SEED,
            kept=kept,
        )
        stream.stream_configs(
            block, *stream.config_grid(m, n, pool), stream.DEFAULT_SEED, kept=kept
        )
    except InputError:
        # The page says why it cannot replay this stream; the refresh's fits stand.
        return False
    return kept_result_count(st, dataset, stream.KEPT_KIND) == 2


def keep_default_matching(st: Store, dataset: str) -> bool:
    """Run the Matched accuracy page's all-model comparison for its first view of
    ``dataset`` and keep its tables in the store (:mod:`lifelong_core.store.kept_results`).

    The view is the page's default (:func:`~.matching.default_sides`, every comparable
    model in the page's blocks, the default settings), matched by
    :func:`~.matching.compare_block`, so the page finds exactly these tables. Results
    kept earlier for the dataset are dropped first.

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset : str
        A dataset the store holds.

    Returns
    -------
    bool
        Whether a comparison was kept (not when the page shows none: samples without
        labels, no predicted labels or confidences, no comparable model, or more work
        than a page view may do).
    """
    from lifelong_core.store.kept_results import (
        KeptResults,
        forget_kept_results,
        kept_result_count,
    )
    from lifelong_core.workflows import matching

    st.require_writer()
    forget_kept_results(st, dataset, matching.KEPT_KIND)
    view = matching.default_view_blocks(st, dataset)
    if view is None:
        return False
    pair, blocks = view
    kept = KeptResults(st, dataset)
    for block in blocks:
        matching.compare_block(
            st,
            pair,
            block,
            eps=matching.DEFAULT_EPS,
            criterion=matching.DEFAULT_CRITERION,
            runs=matching.DEFAULT_RUNS,
            seed=matching.DEFAULT_SEED,
            kept=kept,
        )
    return kept_result_count(st, dataset, matching.KEPT_KIND) > 0


@dataclass(frozen=True)
class Status:
    """What the app and the CLI say about the kept state of one dataset and method."""

    dataset: str
    method: str
    has_sort: bool
    sort_stale: (
        bool  # imports the kept sums do not reflect (e.g. a store written by an older version)
    )
    has_items: bool
    items_usable: bool  # fitted on the dataset's current samples (new samples need a refit)
    models_since_fit: int  # Sort models added since the fit (net)
    fitted_on: int  # Sort models the fit used
    refresh_seconds: float  # expected time of a refresh

    def sentence(self) -> str:
        """What the app and ``lbe state`` say: missing, predating new samples, stale or up
        to date, with how long a refresh takes."""
        t = duration(self.refresh_seconds)
        if not self.has_items:
            return (
                f"No {self.method} parameters are kept for {self.dataset!r} yet; fitting them takes about {t} "
                "(once; later visits read them from the store)."
            )
        if not self.items_usable:
            return (
                f"The kept {self.method} parameters of {self.dataset!r} predate samples added since; "
                f"a refresh takes about {t}."
            )
        if self.models_since_fit or self.sort_stale:
            return (
                f"{self.method} was fitted on {self.fitted_on:,} Sort models; {self.models_since_fit:,} models "
                f"were added since (stale, still usable); a refresh takes about {t}."
            )
        return f"{self.method} parameters of {self.dataset!r} are up to date ({self.fitted_on:,} Sort models)."


def duration(s: float) -> str:
    """A duration as a person reads it: whole seconds under two minutes, else minutes.

    Parameters
    ----------
    s : float
        Seconds.

    Returns
    -------
    str
        ``"45 s"`` or ``"3 min"``.

    Examples
    --------
    >>> duration(45.2), duration(600)
    ('45 s', '10 min')
    """
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min"


def _fit_work(m: int, n: int, iters: int = 25, item_iters: int = 6) -> float:
    """Entry-passes of a fit on ``m`` models x ``n`` samples (a stage-2 item step costs
    about 0.6 of an alternating pass)."""
    m = min(m, MAX_FIT_MODELS)
    return m * min(n, MAX_FIT_COLUMNS) * (iters + 1) + (
        m * n * item_iters * 0.6 if n > MAX_FIT_COLUMNS else 0
    )


def _expected_seconds(members: int, n: int, item: kept.ItemState | None, sort_kept: bool) -> float:
    """Expected time of a refresh: the last fit's time scaled by the work, or a measured
    rate for a first fit; plus the Sort sums when no Sort state is kept."""
    work = _fit_work(members, n)
    if item is not None and item.seconds > 0:
        fit = item.seconds * work / max(_fit_work(len(item.fit_models), len(item.samples)), 1.0)
    else:
        fit = work * FIT_SECONDS_PER_ENTRY_PASS
    return fit + (0.0 if sort_kept else members * n * SORT_SECONDS_PER_ENTRY)


def status(st: Store, dataset: str, method: str | None = None) -> Status:
    """The kept state of ``dataset`` without computing anything (a read-only handle will do).

    Parameters
    ----------
    st : Store
        An open store.
    dataset : str
        A dataset the store holds.
    method : str, optional
        The method whose kept parameters are asked about; default as :func:`refresh`.

    Returns
    -------
    Status
        Whether a Sort state and item parameters are kept, whether they are stale or
        still usable, how many Sort models were added since the fit, and the expected time
        of a refresh (scaled from the last fit, else from a measured rate).
    """
    method = kept_method(method)
    sort = kept.load_sort_state(st, dataset)
    item = kept.load_item_state(st, dataset, method)
    latest = kept.latest_log_id(st)
    if sort is None:
        members, n = st.n_models, len(st.samples(dataset))
        sort_stale = True
    else:
        members, n = len(sort.members), len(sort.samples)
        sort_stale = sort.log_id < latest
    usable = item is not None and sort is not None and np.array_equal(item.samples, sort.samples)
    since = 0
    if item is not None and sort is not None:
        since = max(
            0, len(sort.members) - int(item.params.get("members_at_fit", len(sort.members)))
        )
    return Status(
        dataset,
        method,
        sort is not None,
        sort_stale,
        item is not None,
        usable,
        since,
        0 if item is None else len(item.fit_models),
        _expected_seconds(members, n, item, sort is not None),
    )


class StateMissing(InputError):
    """The kept state a large store needs is missing or does not cover the selection."""


def current_sort(
    st: Store, dataset: str, members: np.ndarray, samples: np.ndarray
) -> kept.SortState | None:
    """The kept Sort state of ``dataset`` if it covers exactly these members and samples.

    A large store's views read the Sort order from it instead of summing the cache.

    Parameters
    ----------
    st : Store
        An open store.
    dataset : str
        A dataset the store holds.
    members : array_like of int
        ``model_idx`` of the Sort set, ascending (as the state keeps them).
    samples : array_like of int
        ``sample_idx`` of the selection's samples, in any order.

    Returns
    -------
    SortState

    Raises
    ------
    StateMissing
        If no Sort state is kept or it covers other models or samples; the sentence is
        :meth:`Status.sentence`.
    """
    s = kept.load_sort_state(st, dataset)
    if (
        s is None
        or not np.array_equal(s.members, np.asarray(members))
        or not np.array_equal(s.samples, np.sort(np.asarray(samples)))
    ):
        raise StateMissing(status(st, dataset).sentence())
    return s


def fitted(
    st: Store, dataset: str, method: str | None = None
) -> tuple[KeptStateMethod | None, Status]:
    """``method`` rebuilt from the kept parameters, without refitting.

    Parameters
    ----------
    st : Store
        An open store (a read-only handle will do).
    dataset : str
        A dataset the store holds.
    method : str, optional
        A method whose parameters can be kept; default as :func:`refresh`.

    Returns
    -------
    tuple of (estimator or None, Status)
        The fitted estimator, on the kept item model and Sort order; None when no usable
        parameters are kept (none yet, or fitted before samples were added). The status
        says which, and how long a refresh takes.
    """
    method = kept_method(method)
    from lifelong_core.methods.irt import item_model

    stat = status(st, dataset, method)
    if not stat.items_usable:
        return None, stat
    sort = kept.load_sort_state(st, dataset)
    item = kept.load_item_state(st, dataset, method)
    if sort is None or item is None:  # status said usable: only a concurrent delete gets here
        return None, stat
    model = item_model(item.d, item.w, item.theta)
    return _estimator(method).with_items(model, sort.order, params=item.params), stat


def fitted_on(
    st: Store, dataset: str, method: str, sample_idx: np.ndarray
) -> tuple[object | None, Status | None]:
    """``method`` from the kept parameters when they cover exactly these samples, without
    refitting; what ``lbe select`` and ``lbe estimate`` load before fitting anything.

    Parameters
    ----------
    st : Store
        An open store (a read-only handle will do).
    dataset : str
        A dataset the store holds.
    method : str
        The method asked for; only one whose parameters can be kept is looked up.
    sample_idx : array_like of int
        ``sample_idx`` of the columns the caller estimates over, in its column order.

    Returns
    -------
    tuple of (estimator or None, Status or None)
        The kept estimator and its status (which says whether models were added since the
        fit); None and the status when nothing usable is kept for these samples (the
        caller fits as before); None and None for a method whose parameters are never
        kept.
    """
    if method not in kept_methods():
        return None, None
    est, stat = fitted(st, dataset, method)
    if est is None:
        return None, stat
    item = kept.load_item_state(st, dataset, method)
    if item is None or not np.array_equal(item.samples, np.asarray(sample_idx, dtype=np.int64)):
        return None, stat
    return est, stat
