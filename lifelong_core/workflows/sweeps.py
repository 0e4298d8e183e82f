"""A Sort & Search sweep on a :class:`~lifelong_core.workflows.selection.Selection`, and
the tables read off its per-model results.

Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*:
Sort on the Sort set, estimate every other model at each budget (§3-4); rank agreement
(App. F) and model correlation by family (App. E).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lifelong_core.errors import InputError
from lifelong_core.methods import DEFAULT_METHOD, capabilities, is_threshold_rule
from lifelong_core.methods.memory import FitMemory
from lifelong_core.rows import RowSource
from lifelong_core.sortsearch import ModelCorrelation
from lifelong_core.sortsearch.sort import choose_sort_rows
from lifelong_core.sweeping import SweepResult, run_sweep
from lifelong_core.workflows.selection import DatasetModels, Selection, dataset_models

if TYPE_CHECKING:
    from lifelong_core.store import Store

# Model-based estimators take long per row: small blocks let a progress bar move.
MODEL_BLOCK_ROWS = 4


def complement(m: int, rows: ArrayLike) -> np.ndarray:
    """The rows of ``range(m)`` not in ``rows``, ascending."""
    mask = np.ones(m, dtype=bool)
    mask[np.asarray(rows, dtype=np.int64)] = False
    return np.flatnonzero(mask)


def capped_eval_rows(
    m: int, sort_set: ArrayLike, search: str, seed: int, cap: int
) -> tuple[int, ...] | None:
    """A fixed, seeded subset of ``cap`` models to score ``search`` on, or None for all.

    Model-based estimators cost far more per model than a threshold rule or the
    CopyNearest&Expand baseline; an interactive front end scores them on a subset (and
    says so), the command line on every model.

    Parameters
    ----------
    m : int
        Models of the selection.
    sort_set : array_like of int
        Row numbers of the Sort set (the other rows are the ones scored).
    search : str
        A registered search method; one the registry marks ``cheap`` is never capped.
    seed : int
        Seed of the subset (the same seed gives the same models).
    cap : int
        The most models to score.

    Returns
    -------
    tuple of int or None
        Row numbers of the scored models, ascending; None when every model outside the
        Sort set is scored.

    Raises
    ------
    InputError
        If ``search`` is not registered.
    """
    rest = complement(m, sort_set)
    if capabilities(search).cheap or len(rest) <= cap:
        return None
    return tuple(
        int(r) for r in np.sort(np.random.default_rng(seed).choice(rest, cap, replace=False))
    )


@dataclass(frozen=True)
class SweepRequest:
    """What a page asks of a budget sweep on a data choice: hashable, so a memo can key on
    it, and one value instead of a dozen positional parameters.

    Attributes
    ----------
    sort_set : tuple of int
        Row numbers of the Sort set.
    sort : {"sum", "confidence", "recursive"}
        How the samples are ordered from easy to hard.
    sampling : str
        How the budget's samples are chosen (``"uniform"``, ``"random"``, ...).
    search : str
        A registered search method.
    budgets : tuple of int
        Evaluations per model, n′.
    seed : int
        Seeds the random draws (and the sample of scored rows on a large store).
    decompose : bool
        Add the aleatoric/epistemic split of the error (§4.5; threshold rules only).
    eval_rows : tuple of int, optional
        The rows to estimate (e.g. :func:`capped_eval_rows`); default every row outside
        the Sort set.
    scored : int, optional
        On a large selection, the most evaluated rows to score (default
        ``large.DEFAULT_SCORED``).
    """

    sort_set: tuple[int, ...]
    sort: str
    sampling: str
    search: str
    budgets: tuple[int, ...]
    seed: int
    decompose: bool = False
    eval_rows: tuple[int, ...] | None = None
    scored: int | None = None

    def memo_key(self) -> SweepRequest:
        """The request as a memo keys it: the sampling grid only for a threshold rule (every
        other method brings its own design, so a change of the grid finds its sweep made).

        Returns
        -------
        SweepRequest
        """
        if capabilities(self.search).threshold_rule:
            return self
        return replace(self, sampling="")


class SelectionSweep(NamedTuple):
    """A page's sweep: the per-budget table, the per-model table and the Sort order.

    Attributes
    ----------
    table : pandas.DataFrame
        budget, mae, eagg, kappa, pearson, spearman.
    per_model : pandas.DataFrame
        model_row, budget, est_acc, true_acc, mae, eagg, kappa (est_lo/est_hi for a
        method with intervals), name and family.
    order : numpy.ndarray
        The Sort order (columns easiest first).
    """

    table: pd.DataFrame
    per_model: pd.DataFrame
    order: np.ndarray


def sweep_selection(
    sel: Selection,
    request: SweepRequest,
    *,
    confidence: np.ndarray | None = None,
    progress: Callable[[float], object] | None = None,
    store: Any = None,
    memory: FitMemory | None = None,
) -> SelectionSweep:
    """The budget sweep of a page on a data choice: :func:`~lifelong_core.sweeping.run_sweep`
    on ``sel``, Sort on rows ``request.sort_set``, estimate every other row (or
    ``request.eval_rows``) at each budget (Prabhu et al., 2024, §3-4).

    A large selection (``sel.A`` a ``PackedCache``) is read from ``store`` as packed rows
    (``run_sweep(..., bounded=True)``) and at most ``request.scored`` of the evaluated
    rows, a seeded sample, are scored. Model-based estimators run in small blocks so a
    progress bar moves.

    Parameters
    ----------
    sel : Selection
        The data choice.
    request : SweepRequest
        The Sort set, Sort, sampling, method, budgets, seed and options.
    confidence : numpy.ndarray, optional
        True-class confidences of the Sort rows (:func:`selection_confidence`), needed by
        ``sort="confidence"``.
    progress : callable, optional
        Called with the fraction done, from 0 to 1.
    store : Store, optional
        The open store ``sel`` was selected from; needed for a large selection.
    memory : FitMemory, optional
        Where the method's fit is kept for the page's other sweeps on the same Sort rows
        (:func:`~lifelong_core.sweeping.run_sweep`).

    Returns
    -------
    SelectionSweep
        ``(table, per_model, order)``.

    Raises
    ------
    InputError
        If ``sort="confidence"`` without confidences (or on a large store), or for
        anything :func:`~lifelong_core.sweeping.run_sweep` refuses (unknown method, sort or
        sampling; budgets outside [1, n]).
    """
    from lifelong_core.workflows import large

    rows = np.asarray(request.sort_set, dtype=np.int64)
    ev = (
        complement(len(sel.models), rows)
        if request.eval_rows is None
        else np.asarray(request.eval_rows, dtype=np.int64)
    )
    sort, search, budgets = request.sort, request.search, list(request.budgets)
    options: dict[str, Any] = dict(
        sort=sort,
        sampling=request.sampling,
        search=search,
        seed=request.seed,
        decompose=request.decompose,
        progress=progress,
        # Each sample's task, for a method that reads them (on a large store, a column of
        # strings as long as the samples).
        groups=sel.tasks if capabilities(search).groups else None,
        memory=memory,
    )
    if isinstance(sel.A, large.PackedCache):
        scored = request.scored or large.DEFAULT_SCORED
        res = large.sweep(store, sel.A, rows, ev, budgets, scored=scored, **options)
    else:
        if sort == "confidence" and confidence is None:
            raise InputError(
                "the store has no confidences (true_prob) for these models; choose another Sort method."
            )
        res = run_sweep(
            sel.A[rows],
            sel.A[ev],
            budgets,
            confidence=confidence,
            eval_row_ids=ev,
            chunk_rows=None if is_threshold_rule(search) else MODEL_BLOCK_ROWS,
            **options,
        )
    per = res.per_model.copy()
    per["name"] = np.asarray(sel.names, dtype=object)[per["model_row"].to_numpy()]
    per["family"] = sel.models["family"].to_numpy(dtype=object)[per["model_row"].to_numpy()]
    return SelectionSweep(res.table.copy(), per, res.order)


@dataclass(frozen=True)
class StoreSweepRows:
    """The rows ``lbe sweep --store`` sweeps: the real models of one dataset evaluated on
    every one of its samples, in model_idx order, labelled by their position in that list
    (as ``--sort-rows`` counts them and ``export --matrix`` writes them), read from the
    store's file as packed chunks."""

    found: DatasetModels
    path: str
    model_idx: np.ndarray
    sidx: np.ndarray

    @property
    def m(self) -> int:
        return len(self.model_idx)

    def rows(self, ids: Sequence[int] | np.ndarray) -> RowSource:
        """Rows ``ids`` (positions in the model list) as a row source."""
        from lifelong_core.store import StoreRows

        ids = np.asarray(ids, dtype=np.int64)
        return StoreRows(self.path, self.model_idx[ids], self.sidx, row_ids=ids)


def store_sweep_rows(store: Store, dataset: str) -> StoreSweepRows:
    """The complete real models of ``dataset`` as rows to sweep (``lbe sweep --store``),
    read from the store's file as packed chunks, never whole.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.

    Returns
    -------
    StoreSweepRows
        The models found, the store's path, and the ``model_idx`` and ``sample_idx`` of
        the rows and columns.

    Raises
    ------
    InputError
        When fewer than two models were evaluated on every sample (the sentence says how
        many were, and which were left out).
    """
    found = dataset_models(store, dataset)
    if len(found.complete) < 2:
        raise InputError(found.note().rstrip(".") + "; a sweep needs at least two.")
    return StoreSweepRows(
        found,
        str(store.path),
        found.complete["model_idx"].to_numpy(dtype=np.int64),
        found.samples["sample_idx"].to_numpy(dtype=np.int64),
    )


def sweep_store(
    store: Store,
    dataset: str,
    *,
    sort_models: int | None = None,
    sort_rows: Sequence[int] | np.ndarray | None = None,
    budgets: Sequence[int] | None = None,
    search: str = DEFAULT_METHOD,
    seed: int = 0,
    **options: Any,
) -> SweepResult:
    """A budget sweep on a store's dataset: Sort on ``sort_rows`` (positions in the
    dataset's complete models) or on ``sort_models`` of them drawn with ``seed``
    (:func:`~lifelong_core.sortsearch.choose_sort_rows`, the rule of ``--sort-models K
    --seed S``; default half of them), estimate every other one at each budget.

    The rows are read from the store as packed chunks (:func:`store_sweep_rows`), so the
    store's size is not bounded by memory.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.
    sort_models : int, optional
        Size of a random Sort set; default half the complete models. Not with
        ``sort_rows``.
    sort_rows : sequence of int, optional
        The Sort set as positions in the dataset's complete models (as ``--sort-rows``
        counts them and ``export --matrix`` writes them).
    budgets : sequence of int, optional
        Evaluations per model, n′; default the sweep's power-of-two budgets.
    search : str
        A registered search method; default the product's ``DEFAULT_METHOD``.
    seed : int
        Seeds the Sort set and the sweep's random draws.
    **options
        More arguments of :func:`~lifelong_core.sweeping.run_sweep` (``sort``, ``sampling``,
        ``decompose``, ``kernel``, ``executor``, ``progress``, ...).

    Returns
    -------
    SweepResult
        ``table``, ``per_model`` (rows labelled by their position among the complete
        models), ``order`` and ``config``.

    Raises
    ------
    InputError
        If fewer than two models were evaluated on every sample, both or bad Sort rows are
        given (outside the complete models, or all of them), the Sort set size is out of
        range, or :func:`~lifelong_core.sweeping.run_sweep` refuses an option.
    """
    rows = store_sweep_rows(store, dataset)
    if sort_rows is not None and sort_models is not None:
        raise InputError("give the Sort set as sort_rows or as sort_models, not both.")
    if sort_rows is not None:
        chosen = np.sort(np.asarray(sort_rows, dtype=np.int64))
        if chosen.ndim != 1 or (chosen.size and (chosen[0] < 0 or chosen[-1] >= rows.m)):
            raise InputError(
                f"Sort rows must lie in [0, {rows.m}), the dataset's complete models.",
                param="sort_rows",
            )
        if len(np.unique(chosen)) == rows.m:
            raise InputError(
                f"the Sort rows name all {rows.m} models; leave at least one to evaluate.",
                param="sort_rows",
            )
    else:
        chosen = choose_sort_rows(rows.m, rows.m // 2 if sort_models is None else sort_models, seed)
    evaluated = np.setdiff1d(np.arange(rows.m, dtype=np.int64), chosen)
    options.setdefault("groups", rows.found.samples["domain"].astype(str).to_numpy(dtype=object))
    return run_sweep(
        rows.rows(chosen), rows.rows(evaluated), budgets, search=search, seed=seed, **options
    )


def rank_agreement(per_model: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """Agreement of the ranking induced by the estimates with the true ranking, per budget
    (Prabhu et al., 2024, App. F): Spearman and Kendall correlation of the two, and how
    many of the true top ``top`` models the estimated top ``top`` holds.

    Parameters
    ----------
    per_model : pandas.DataFrame
        A sweep's per-model table (budget, model_row, est_acc, true_acc).
    top : int
        Size of the top set compared.

    Returns
    -------
    pandas.DataFrame
        One row per budget, ascending: ``budget``, ``spearman``, ``kendall`` (NaN when a
        side is constant or there is one model) and ``top<top>_overlap`` (the share of the
        true top ``top`` in the estimated one, of at most ``top`` models).
    """
    # scipy.stats takes about a second to import; only this table needs it.
    from scipy import stats

    rows = []
    for _, g in per_model.groupby("budget", sort=True):
        est, true = g["est_acc"].to_numpy(), g["true_acc"].to_numpy()
        defined = len(g) > 1 and np.ptp(est) > 0 and np.ptp(true) > 0
        k = min(top, len(g))
        top_true = set(g.nlargest(k, "true_acc")["model_row"])
        top_est = set(g.nlargest(k, "est_acc")["model_row"])
        rows.append(
            {
                "budget": int(g["budget"].iloc[0]),
                "spearman": float(stats.spearmanr(est, true).statistic) if defined else np.nan,
                "kendall": float(stats.kendalltau(est, true).statistic) if defined else np.nan,
                f"top{top}_overlap": len(top_true & top_est) / k,
            }
        )
    return pd.DataFrame(rows)


def interval_coverage(per_model: pd.DataFrame) -> pd.DataFrame:
    """Per budget, how many of the evaluated models' 95% intervals hold their true
    accuracy, with an exact interval on that share
    (:func:`lifelong_core.stats.coverage.coverage_of`, Clopper-Pearson), and the mean
    width; empty for a method without intervals (no ``est_lo``/``est_hi``).

    Parameters
    ----------
    per_model : pandas.DataFrame
        A sweep's per-model table (budget, true_acc, and est_lo/est_hi where the method
        gives intervals).

    Returns
    -------
    pandas.DataFrame
        One row per budget with intervals, ascending: ``budget``, ``models`` (with an
        interval), ``covered``, ``coverage`` (the share), ``coverage_lo``,
        ``coverage_hi`` (its exact 95% interval) and ``mean_width`` (in accuracy, a
        fraction).
    """
    from lifelong_core.stats.coverage import coverage_of

    cols = ["budget", "models", "covered", "coverage", "coverage_lo", "coverage_hi", "mean_width"]
    if not {"est_lo", "est_hi"} <= set(per_model.columns):
        return pd.DataFrame(columns=cols)
    rows = []
    for _, g in per_model.groupby("budget", sort=True):
        g = g.dropna(subset=["est_lo", "est_hi"])
        if not len(g):
            continue
        c = coverage_of(g["true_acc"], g["est_lo"], g["est_hi"])
        rows.append(
            {
                "budget": int(g["budget"].iloc[0]),
                "models": c.total,
                "covered": c.covered,
                "coverage": c.share,
                "coverage_lo": c.lo,
                "coverage_hi": c.hi,
                "mean_width": float((g["est_hi"] - g["est_lo"]).mean()),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def ranks(per_model: pd.DataFrame, budget: int) -> pd.DataFrame:
    """True and estimated rank (1 = best, ties share the best rank) of every model at one budget.

    Parameters
    ----------
    per_model : pandas.DataFrame
        A sweep's per-model table (budget, est_acc, true_acc, ...).
    budget : int
        The budget to read; a budget the sweep did not run gives an empty table.

    Returns
    -------
    pandas.DataFrame
        The budget's rows with ``true_rank`` and ``est_rank`` added, by true rank.
    """
    g = per_model[per_model["budget"] == budget].copy()
    g["true_rank"] = g["true_acc"].rank(ascending=False, method="min").astype(int)
    g["est_rank"] = g["est_acc"].rank(ascending=False, method="min").astype(int)
    return g.sort_values("true_rank")


def family_correlation(corr: ModelCorrelation, models: pd.DataFrame) -> pd.DataFrame:
    """Mean off-diagonal correlation for every pair of model families (Prabhu et al.,
    2024, App. E, by family): whether models of one family fail on the same samples.

    Parameters
    ----------
    corr : ModelCorrelation
        The model-by-model correlation of the rows of ``models``
        (:class:`~lifelong_core.sortsearch.ModelCorrelation`).
    models : pandas.DataFrame
        The model rows, with ``family`` (missing = ``"(none)"``).

    Returns
    -------
    pandas.DataFrame
        One row per unordered pair of families (a family with itself included):
        ``family_a``, ``family_b``, ``models_a``, ``models_b`` and ``mean_correlation``
        (NaN when no pair of distinct models has a finite correlation).
    """
    fam = models["family"].fillna("(none)").astype(str).to_numpy()[corr.order]
    c = corr.corr.copy()
    np.fill_diagonal(c, np.nan)
    names = sorted(set(fam))
    rows = []
    for a in names:
        ia = fam == a
        for b in names:
            if b < a:
                continue
            block = c[np.ix_(ia, fam == b)]
            rows.append(
                {
                    "family_a": a,
                    "family_b": b,
                    "models_a": int(ia.sum()),
                    "models_b": int((fam == b).sum()),
                    "mean_correlation": float(np.nanmean(block))
                    if np.isfinite(block).any()
                    else np.nan,
                }
            )
    return pd.DataFrame(rows)
