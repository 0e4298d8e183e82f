"""Which items a new model should run: the cache it is compared with, the method fitted on
it, and the items that method chooses.

Shared by ``select`` on the command line, the Python API's ``select_items`` and the
"Evaluate something new" page, so a new model is always compared with the same models and
items, and its items are chosen by one rule. How the chosen items are written for an
evaluation harness is :mod:`lifelong_core.io.harness_items`; what their results say is
:mod:`lifelong_core.workflows.new_model`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.methods.draws import COMMON, PER_MODEL, check_draws, model_rng
from lifelong_core.methods.registry import DEFAULT_METHOD, capabilities, get_method, plays_rounds
from lifelong_core.sortsearch import compute_order
from lifelong_core.workflows.selection import Selection, resolve_dataset, select

if TYPE_CHECKING:
    from lifelong_core.methods.base import SearchMethod
    from lifelong_core.methods.memory import FitMemory
    from lifelong_core.store import Store


def cache_of(store: Store, dataset: str | None) -> Selection:
    """The matrix a new model is compared with: :func:`workflows.selection.select` on the
    whole dataset (every real model evaluated on all of its samples).

    Parameters
    ----------
    store : Store
        An open store (read-only will do).
    dataset : str or None
        The dataset to compare with; None for the store's only dataset
        (:func:`~lifelong_core.workflows.selection.resolve_dataset`).

    Returns
    -------
    Selection
        Every real model evaluated on all of the dataset's samples (rows) x those samples
        (columns), in store order.

    Raises
    ------
    InputError
        If the store does not hold ``dataset`` (or holds several and none is named), or
        fewer than two models were evaluated on every one of its samples.
    """
    return select(store, resolve_dataset(store, dataset))


def dataset_of(sel: Selection) -> str:
    """The dataset of a selection's samples.

    Parameters
    ----------
    sel : Selection
        A selection of one dataset's samples.

    Returns
    -------
    str
        Its name; ``the dataset`` for a selection built without a dataset column.
    """
    if "dataset" not in sel.samples or not len(sel.samples):
        return "the dataset"
    return str(sel.samples["dataset"].iloc[0])


def fit_method(
    sel: Selection,
    method: str = DEFAULT_METHOD,
    tuning: Any = None,
    memory: FitMemory | None = None,
) -> SearchMethod:
    """A registered method fitted on a selection, as every new-model flow fits it.

    Parameters
    ----------
    sel : Selection
        The data choice; every row is in the cache.
    method : str
        A registered method name.
    tuning : object, optional
        For a self-tuning method (:attr:`Capabilities.self_tuning`), the settings a fit
        chose before (its ``tuning_``): the cross-validation is skipped.
    memory : FitMemory, optional
        Where fits are kept: the fit a sweep made on the same rows (the Budget explorer's
        comparison with random backtests on its Sort set) is the same fit, and is shared
        (:func:`lifelong_core.sweeping.protocol.fitted_method`). None fits afresh.

    Returns
    -------
    SearchMethod
        ``method`` fitted on ``sel``'s matrix with its easy -> hard order by Sorting by
        Sum (Prabhu et al., 2024, *Efficient Lifelong Model Evaluation in an Era of
        Rapid Progress*, §3.1); a method that uses the items' tasks is given ``sel``'s
        (:attr:`Selection.tasks`).

    Raises
    ------
    InputError
        For an unknown method, or a cache the method cannot fit on.
    lifelong_core.limits.DenseReadError
        If ``sel.A`` is a packed cache beyond the dense-read limit.
    """
    A = sel.dense()
    order = compute_order(A, "sum")
    if tuning is None and memory is not None:
        from lifelong_core.rows import DenseRows
        from lifelong_core.sweeping.protocol import fitted_method

        return fitted_method(
            method, "dense", DenseRows(A), A, order, groups=sel.tasks, memory=memory
        )
    settings = {} if tuning is None else {"tuning": tuning}
    return get_method(method, groups=sel.tasks, **settings).fit(A, order)


def fit(
    cache: Selection,
    method: str = DEFAULT_METHOD,
    domain: str | None = None,
    whole: SearchMethod | None = None,
) -> SearchMethod:
    """``method`` fitted on the cache (:func:`fit_method`), or for one domain's columns only
    (the per-task estimates of :func:`lifelong_core.workflows.new_model.estimate_new_model`).

    A task's method is built from ``whole``, the method fitted on every column, where it
    can be: a method whose fitted item model the store can keep
    (:attr:`~lifelong_core.methods.registry.Capabilities.kept_state`) takes that model's
    parameters of the task's items and the whole fit's settings (no refit: the items'
    parameters were estimated from every item, the ability is the task's own); any other
    is fitted on the task's columns, a self-tuning one with the whole fit's choice
    (:func:`shared_tuning`).

    Parameters
    ----------
    cache : Selection
        The dataset's cache (:func:`cache_of`).
    method : str
        A registered search method; default the product's ``DEFAULT_METHOD``.
    domain : str, optional
        Fit for the columns of this domain only; None fits on every column.
    whole : object, optional
        ``method`` fitted on every column, for a domain's method to start from.

    Returns
    -------
    SearchMethod
        The fitted method.

    Raises
    ------
    InputError
        If ``method`` is not registered.
    lifelong_core.limits.DenseReadError
        If the cache is a packed cache beyond the dense-read limit.
    """
    if domain is None:
        return fit_method(cache, method)
    cols = (cache.samples["domain"] == domain).to_numpy()
    sub = Selection(
        cache.A[:, cols], cache.models, cache.samples[cols].reset_index(drop=True), cache.synthetic
    )
    if whole is not None and capabilities(method).kept_state:
        derived = _restricted(method, whole, sub, np.flatnonzero(cols))
        if derived is not None:
            return derived
    return fit_method(sub, method, shared_tuning(method, whole) if whole is not None else None)


def _restricted(method: str, whole: Any, sub: Selection, cols: np.ndarray) -> SearchMethod | None:
    """``whole``'s item model restricted to the columns ``cols`` (its order: the task's own
    Sort by Sum), or None where the fit keeps no item model it can be rebuilt from."""
    from typing import cast

    from lifelong_core.methods.base import ItemModel, KeptStateMethod

    try:
        item = whole.item_
        params = whole.kept_params()
        part = ItemModel(item.d[cols], item.w[cols], item.prior_mean, item.prior_prec, item.theta)
        # A kept-state method (the registry says so) has with_items.
        fresh = cast(KeptStateMethod, get_method(method, groups=sub.tasks))
        return fresh.with_items(part, compute_order(sub.dense(), "sum"), params)
    except InputError:
        return None  # e.g. a choice that uses the cache's rows, which no item model holds


def shared_tuning(method: str, fitted: SearchMethod) -> Any:
    """The settings a self-tuning method's fit on the whole dataset chose, for its per-task
    fits to reuse.

    A self-tuning method would cross-validate again on each task's items; its choice on
    the whole dataset (same models, a superset of the items) is reused instead: the
    intervals stay design-based whatever predictor the choice makes, so reusing it changes
    at most how narrow a task's interval is, not whether it holds.

    Parameters
    ----------
    method : str
        A registered search method.
    fitted : object
        ``method`` fitted on the whole dataset.

    Returns
    -------
    object or None
        The fit's ``tuning_`` for a self-tuning method
        (:attr:`~lifelong_core.methods.registry.Capabilities.self_tuning`), else None.
    """
    if not capabilities(method).self_tuning:
        return None
    return getattr(fitted, "tuning_", None)


def observed_columns(
    cache: Selection, observed: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Columns and 0/1 values (column order) of results given by sample id.

    Parameters
    ----------
    cache : Selection
        The dataset's cache.
    observed : mapping of str to int
        Sample id -> 0/1.

    Returns
    -------
    columns : numpy.ndarray
        int64 columns of ``cache``, ascending.
    values : numpy.ndarray
        uint8 0/1 results, in the same order.

    Raises
    ------
    InputError
        If a result names a sample the dataset does not have, or is not 0 or 1.
    """
    if not len(observed):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    pos = pd.Series(
        np.arange(len(cache.samples)), index=cache.samples["sample_id"].astype(str).to_numpy()
    )
    ids = pd.Index([str(s) for s in observed])
    missing = ~ids.isin(pos.index)
    if missing.any():
        raise InputError(
            f"sample {ids[missing][0]!r} is not in dataset {dataset_of(cache)!r} "
            f"({int(missing.sum())} of {len(ids)} results name samples it does not have)."
        )
    cols = pos.loc[ids].to_numpy(dtype=np.int64)
    vals = np.asarray([int(v) for v in observed.values()], dtype=np.int64)
    if ((vals != 0) & (vals != 1)).any():
        raise InputError("results must be 0 or 1.")
    order = np.argsort(cols)
    return cols[order], vals[order].astype(np.uint8)


@dataclass(frozen=True)
class ItemChoice:
    """The items to run and how they were chosen.

    Attributes
    ----------
    dataset : str
        The dataset of the cache.
    method : str
        The registered method that chose.
    budget : int
        How many items were asked for.
    seed : int
        The user's seed.
    columns : numpy.ndarray
        int64 columns of the cache, ascending.
    items : pandas.DataFrame
        ``sample_id`` and ``domain`` of the chosen items, in column order.
    n, m : int
        The cache's items and models.
    model : str or None
        The model they were drawn for; None for a common item set.
    draws : str
        Which draw it was (:mod:`lifelong_core.methods.draws`).
    """

    dataset: str
    method: str
    budget: int
    seed: int
    columns: np.ndarray
    items: pd.DataFrame
    n: int
    m: int
    model: str | None = None
    draws: str = PER_MODEL
    plan: tuple[int, ...] = ()
    round: int = 1

    def describe(self) -> str:
        """Whose draw the items are (and which round of how many), for a front end's message.

        Returns
        -------
        str
        """
        if self.draws == COMMON:
            text = f"the common item set of seed {self.seed} (every model named with it gets these items)"
        else:
            text = f"items drawn for model {self.model!r} alone (seed {self.seed})"
        if len(self.plan) > 1:
            text += (
                f"; round {self.round} of {len(self.plan)} of the {self.budget} items "
                f"({' + '.join(map(str, self.plan))})"
            )
        return text


def select_items(
    cache: Selection,
    budget: int,
    method: str = DEFAULT_METHOD,
    seed: int = 0,
    evaluated: Mapping[str, int] | None = None,
    fitted: SearchMethod | None = None,
    *,
    model: str | None = None,
    draws: str = PER_MODEL,
    rounds: bool = False,
) -> ItemChoice:
    """The ``budget`` items a new model should run next, or with ``rounds`` the next round
    of the method's rounds for ``budget`` items.

    Parameters
    ----------
    cache : Selection
        The dataset's cache (:func:`cache_of`).
    budget : int
        How many items to run.
    method : str
        A registered search method.
    seed : int
        The user's seed.
    evaluated : mapping, optional
        Sample id -> 0/1 results already in hand: with ``rounds``, those of the rounds
        before; else the method's selection at the combined budget is taken and the items
        not yet evaluated are returned (at most ``budget``, a random subset when more
        remain).
    fitted : object, optional
        A method already fitted by :func:`fit`.
    model : str, optional
        The new model's name: with ``draws="per-model"`` (the default) its items are its
        own random draw (:func:`lifelong_core.methods.draws.model_rng`), so the errors of
        several new models are independent.
    draws : {"per-model", "common"}
        ``"common"``: the seed's item set, the same for every model (to compare models on
        identical items).
    rounds : bool
        Play the method's rounds for ``budget`` items where it has them
        (:func:`~lifelong_core.methods.registry.plays_rounds`: ``active``, and the default
        where its cross-validation chose the active design): ``budget`` is then the total,
        the items are the round that follows the results in ``evaluated`` (the pilot when
        there are none), and :attr:`ItemChoice.plan` says the rounds.

    Returns
    -------
    ItemChoice

    Raises
    ------
    InputError
        On a bad budget, an unknown draw, a per-model draw without a model name, or (with
        ``rounds``) results in hand that are not whole rounds of the plan.
    """
    n, m = cache.A.shape[1], cache.A.shape[0]
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise InputError(
            f"the budget must be a positive whole number, got {budget!r}.", param="budget"
        )
    check_draws(draws)
    if draws == PER_MODEL and (not isinstance(model, str) or not model.strip()):
        raise InputError(
            "name the new model (its items are its own random draw) or ask for the common item "
            "set shared by every model.",
            param="model",
        )
    cols_done, obs_done = observed_columns(cache, evaluated or {})
    left = n - len(cols_done)
    fitted = fitted if fitted is not None else fit(cache, method)
    if rounds and plays_rounds(fitted, n, budget):
        return _next_round(cache, budget, method, seed, fitted, model, draws, cols_done, obs_done)
    if budget > left:
        raise InputError(
            f"budget {budget} exceeds the {left} items of {dataset_of(cache)!r} not yet evaluated.",
            param="budget",
        )
    model = model.strip() if draws == PER_MODEL and model is not None else None
    rng = model_rng(model or "", limits.check_seed(seed), draws)
    cols = np.asarray(fitted.select(n, min(len(cols_done) + budget, n), rng), dtype=np.int64)
    cols = np.setdiff1d(cols, cols_done)
    if len(cols) > budget:
        cols = np.sort(rng.choice(cols, size=budget, replace=False))
    cols = np.sort(cols)
    items = cache.samples.iloc[cols][["sample_id", "domain"]].reset_index(drop=True)
    return ItemChoice(
        dataset_of(cache), method, int(budget), int(seed), cols, items, n, m, model, draws
    )


def _next_round(
    cache: Selection,
    budget: int,
    method: str,
    seed: int,
    fitted: Any,
    model: str | None,
    draws: str,
    cols_done: np.ndarray,
    obs_done: np.ndarray,
) -> ItemChoice:
    """The round of the method's plan for ``budget`` that follows the results in hand."""
    n, m = cache.A.shape[1], cache.A.shape[0]
    plan = tuple(int(x) for x in fitted.rounds(n, budget))
    ends = np.cumsum(plan)
    done = len(cols_done)
    if done >= budget:
        raise InputError(
            f"the {done} results in hand already make up the {budget} items of every round "
            f"({' + '.join(map(str, plan))}); estimate from them.",
            param="budget",
        )
    if done and done not in ends:
        raise InputError(
            f"the {done} results in hand are not whole rounds of {method}'s plan for {budget} "
            f"items ({' + '.join(map(str, plan))}); give every result of the rounds before.",
            param="evaluated",
        )
    k = int(np.searchsorted(ends, done, side="right"))
    model = model.strip() if draws == PER_MODEL and model is not None else None
    rng = model_rng(model or "", limits.check_seed(seed), draws)
    cols = np.sort(
        np.asarray(fitted.select_next(n, plan[k], rng, cols_done, obs_done), dtype=np.int64)
    )
    items = cache.samples.iloc[cols][["sample_id", "domain"]].reset_index(drop=True)
    return ItemChoice(
        dataset_of(cache),
        method,
        int(budget),
        int(seed),
        cols,
        items,
        n,
        m,
        model,
        draws,
        plan,
        k + 1,
    )
