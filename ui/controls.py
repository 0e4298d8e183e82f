"""Widgets several pages share: every method picker (the registry's methods), the
integer inputs whose values live in the URL, the Sort & Search sidebar
(:func:`sweep_controls`) and the run of its configuration with a progress bar
(:func:`run_config`), and the kept-state panel.

Values come from and go back to the URL (``ui.common``); reads go through
:mod:`ui.caches`, writes through :func:`ui.stores.write_to_store`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from lifelong_core.methods import available_methods, capabilities, is_threshold_rule
from lifelong_core.methods.registry import (
    BASELINE_METHOD,
    DEFAULT_METHOD,
    PUBLISHED_METHOD,
    describe_methods,
)
from lifelong_core.sortsearch import SORTS
from lifelong_core.sortsearch.search import SAMPLING
from lifelong_core.workflows import (
    large,
    lifelong_state,
)
from lifelong_core.workflows.backtest import BASELINES, EVAL_CAP, interactive_scored
from lifelong_core.workflows.budgets import budget_choices, budgets_within, default_budgets
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.sortsets import (
    DEFAULT_SEED,
    DEFAULT_SORT_MODELS,
    DEFAULT_SORT_SET,
    SORT_SETS,
    default_sort_size,
    sort_rows,
)
from lifelong_core.workflows.sweeps import SweepRequest, capped_eval_rows
from ui.caches import (
    is_large,
    overview,
    selection,
    store_key,
    sweep,
)
from ui.common import (
    NO_DATA,
    get_store,
    input_errors,
    query_default,
    query_list,
    store_facts,
    sync_query,
)
from ui.stores import write_to_store


def method_names() -> list[str]:
    """The search methods every page's method picker offers: the registry's methods that
    estimate a new model (``lifelong_core.methods.registry``), one list for the whole app."""
    return available_methods(kind="model")


def default_method(methods: list[str]) -> str:
    """The product's default estimator if offered, else the first of ``methods``.

    Parameters
    ----------
    methods : list of str
        The methods a picker offers, e.g. :func:`method_names`.

    Returns
    -------
    str
        ``lifelong_core.methods.registry.DEFAULT_METHOD`` when it is among ``methods``,
        else ``methods[0]``.
    """
    return DEFAULT_METHOD if DEFAULT_METHOD in methods else methods[0]


def method_help() -> str:
    """What the registered methods are, for a picker's help (read from the registry)."""
    return describe_methods()


def method_label(name: str) -> str:
    """A picker's text for ``name``: the method and what it is to the product.

    The registry says which method is the default estimator, which is Sort & Search's
    published rule (Prabhu et al., 2024) and which the random baseline; other Sort &
    Search rules say so, and any other method is shown by its name alone.

    Parameters
    ----------
    name : str
        A registered method.

    Returns
    -------
    str
        E.g. ``name (default estimator)``.
    """
    caps = capabilities(name)
    if name == DEFAULT_METHOD:
        what = "default estimator"
    elif name == PUBLISHED_METHOD:
        what = "Sort & Search, the paper's rule (Prabhu et al., 2024)"
    elif caps.family == "sort-search":
        what = "Sort & Search rule"
    elif name == BASELINE_METHOD:
        what = "random sample, the baseline"
    else:
        return name
    return f"{name} ({what})"


def _set_search(url_key: str, name: str) -> None:
    st.session_state[url_key] = name


def pick_search(container, url_key: str = "search", sort_models: int | None = None) -> str:
    """The Sort & Search pages' method picker: opens on the product's default estimator,
    labels every method by what it is (:func:`method_label`), and keeps the paper's method
    one click away: a button switches to Sort & Search's published rule, and back.

    With fewer than two ``sort_models`` a model-based default cannot be fitted; the page
    then opens on the paper's rule and says why."""
    methods = method_names()
    default = default_method(methods)
    if (
        sort_models is not None
        and sort_models < 2
        and not capabilities(default).threshold_rule
        and PUBLISHED_METHOD in methods
    ):
        container.caption(
            f"The default estimator ({default}) is fitted on the Sort models and needs two or more; "
            f"with {sort_models} this page opens on {method_label(PUBLISHED_METHOD)}."
        )
        default = PUBLISHED_METHOD
    raw = query_default(url_key, default)
    value = raw if raw in methods else default
    chosen = container.selectbox(
        "Search rule / estimator",
        methods,
        index=methods.index(value),
        key=url_key,
        format_func=method_label,
        help=method_help(),
    )
    paper = PUBLISHED_METHOD if PUBLISHED_METHOD in methods else None
    if paper is not None and chosen != paper:
        container.button(
            "Use Sort & Search, the paper's method",
            key=f"{url_key}_paper",
            on_click=_set_search,
            args=(url_key, paper),
            help=f"Switch to {method_label(paper)}.",
        )
    elif chosen != default:
        container.button(
            f"Back to the default estimator ({default})",
            key=f"{url_key}_default",
            on_click=_set_search,
            args=(url_key, default),
        )
    return chosen


def pick_method(container, url_key: str) -> str:
    """A "Method" picker of :func:`method_names` whose value lives in the URL.

    By default the product's default estimator (``methods.registry.DEFAULT_METHOD``); a
    URL naming a method that is not offered falls back to the first one.

    Parameters
    ----------
    container : streamlit container
        Where the widget goes (``st.sidebar``, a column, a tab).
    url_key : str
        Name of the URL parameter and of the widget key.

    Returns
    -------
    str
        The chosen method.
    """
    methods = method_names()
    raw = query_default(url_key, default_method(methods))
    return container.selectbox(
        "Method",
        methods,
        index=methods.index(raw) if raw in methods else 0,
        key=url_key,
        help=method_help(),
    )


@dataclass(frozen=True)
class SweepConfig:
    """What the sidebar chose: data, Sort set, Sort method, sampling, search, budgets, seed."""

    dataset: str
    domains: tuple[str, ...]  # () = every domain of the dataset
    sort_set: str
    k: int
    sort: str
    sampling: str
    search: str
    budgets: tuple[int, ...]
    seed: int
    scored: int = large.DEFAULT_SCORED  # evaluated models scored on a large store (a seeded sample)
    repeats: int = 1  # Sort splits with seeds seed, seed + 1, ... (bands on the budget curves)
    baseline: bool = False  # draw the random-sampling baseline beside the chosen method


def int_slider(container, label: str, lo: int, hi: int, url_key: str, default: int) -> int:
    """An integer slider whose value lives in the URL.

    A caption replaces it when only one value exists (Streamlit refuses a slider with
    min == max). The widget key carries the range, so a range that changes with the data
    (another dataset) starts a fresh slider instead of holding a value outside it.

    Parameters
    ----------
    container : streamlit container
        Where the widget goes (``st.sidebar``, a column, a tab).
    label : str
        The slider's label.
    lo, hi : int
        The range, both ends included.
    url_key : str
        Name of the URL parameter.
    default : int
        The value when the URL has none (clipped to the range, like the URL's).

    Returns
    -------
    int
        The chosen value, ``lo`` when ``hi <= lo``.
    """
    if hi <= lo:
        container.caption(f"{label}: {lo}")
        return lo
    value = int(np.clip(query_default(url_key, default, int), lo, hi))
    return int(container.slider(label, lo, hi, value, key=f"{url_key}:{lo}-{hi}"))


def int_input(container, label: str, lo: int, hi: int, url_key: str, default: int = 0) -> int:
    """A whole-number input whose value lives in the URL, clipped to [lo, hi].

    A hand-edited URL outside the range is clipped rather than stopping the page.

    Parameters
    ----------
    container : streamlit container
        Where the widget goes (``st.sidebar``, a column, a tab).
    label : str
        The input's label.
    lo, hi : int
        The range, both ends included.
    url_key : str
        Name of the URL parameter and of the widget key.
    default : int
        The value when the URL has none.

    Returns
    -------
    int
        The chosen value.
    """
    value = int(np.clip(query_default(url_key, default, int), lo, hi))
    return int(container.number_input(label, lo, hi, value, key=url_key))


def url_number(
    container,
    label: str,
    lo: float,
    hi: float,
    url_key: str,
    default: float,
    **kw,
) -> float:
    """A number input whose value lives in the URL, the URL's value clipped to [lo, hi]
    (not a number, or infinite: the default), so a hand-edited link never stops the page.

    Parameters
    ----------
    container : streamlit container
        Where the widget goes.
    label : str
        The input's label.
    lo, hi : float
        The range, both ends included.
    url_key : str
        Name of the URL parameter and of the widget key.
    default : float
        The value when the URL has none or an unusable one.
    **kw
        Passed on to ``number_input`` (``step``, ``format``, ``help``).

    Returns
    -------
    float
    """
    raw = query_default(url_key, default, float)
    value = float(np.clip(raw if np.isfinite(raw) else default, lo, hi))
    return float(container.number_input(label, float(lo), float(hi), value, key=url_key, **kw))


# ------------------------------------------------------------------ the work of a page view
# Every page estimates what its view will cost before it computes, from its URL's
# parameters and the registry's capabilities, and refuses a view over the budget in one
# sentence (a URL is anyone's to write: one such view once took minutes of the server's
# CPU). A unit is about one second of one core of a 2020s laptop (measured: the numbers and
# the command are on the documentation's Benchmarks page); the estimate errs high.
WORK_ENV = "LBE_APP_WORK"
DEFAULT_WORK = 120.0
# Seconds per million cache entries a method reads: fitted on (a fit), and per estimate
# (one model's row at one budget), by what the registry says it is.
_FIT_COST = {"cheap": 0.05, "model": 1.0, "self_tuning": 3.0}
_ESTIMATE_COST = {"cheap": 0.08, "model": 1.0, "self_tuning": 2.5}


def _cost_class(method: str) -> str:
    caps = capabilities(method)
    if caps.cheap:
        return "cheap"
    return "self_tuning" if caps.self_tuning else "model"


# A method that scores a block of models at every budget at once (the registry's
# ``batched``): per million scored models x budgets x items.
_BATCHED_ESTIMATE_COST = 0.03
# A store beyond the dense-read limit is read packed: a model-based method is fitted from
# packed rows, two-stage beyond FIT_COLUMNS items (each further item costs a few Newton
# steps, about a seventh of an item of the alternating fit), and the threshold rules run
# on the packed kernel; per million fitted models x items so counted, and per million
# scored models x budgets x items for a cheap method's estimates. Calibrated on the
# 4,000 x 500,000 store of the Benchmarks page, erring high.
_PACKED_FIT_COST = {"cheap": 0.05, "model": 0.3, "self_tuning": 0.6}
_PACKED_CHEAP_ESTIMATE_COST = 0.004
FIT_COLUMNS = 65_536


def sweep_work(
    method: str,
    fitted: int,
    scored: int,
    n: int,
    budgets: int,
    *,
    packed: bool = False,
    batches: bool = True,
) -> float:
    """Estimated work of one sweep: a fit on ``fitted`` models and ``scored`` models
    estimated at ``budgets`` budgets, on ``n`` items.

    Parameters
    ----------
    method : str
        A registered method (its capabilities set the cost per entry).
    fitted, scored, n, budgets : int
        Models the method is fitted on, models it estimates, items, budgets.
    packed : bool
        The rows are read packed (a store beyond the dense-read limit).
    batches : bool
        The estimates may be made in batches (a sweep); False for estimates made model by
        model on each model's own items (a backtest).

    Returns
    -------
    float
        Units of :data:`WORK_ENV` (about core-seconds).
    """
    kind = _cost_class(method)
    if packed:
        items = min(n, FIT_COLUMNS) + max(n - FIT_COLUMNS, 0) / 7
        fit = _PACKED_FIT_COST[kind] * fitted * items / 1e6
    else:
        fit = _FIT_COST[kind] * fitted * n / 1e6
    if packed and kind == "cheap":  # a cheap method in batches costs no more
        per = _PACKED_CHEAP_ESTIMATE_COST
    elif batches and capabilities(method).batched:
        per = min(_BATCHED_ESTIMATE_COST, _ESTIMATE_COST[kind])
    else:
        per = _ESTIMATE_COST[kind]
    return fit + per * scored * budgets * n / 1e6


def backtest_work(
    methods: list[str],
    m: int,
    n: int,
    holdout: int,
    budgets: int,
    repeats: int,
    scored: int | None = None,
) -> float:
    """Estimated work of a backtest: each method fitted once on the models kept, and per
    repeat estimating every held-out model at every budget (:func:`sweep_work`).

    Parameters
    ----------
    methods : list of str
        The methods run (the baselines included).
    m, n : int
        Models and items of the cache.
    holdout, budgets, repeats : int
        Held-out models, budgets and repeats.
    scored : int, optional
        Held-out models estimated (a seeded subset); all by default.

    Returns
    -------
    float
        Units of :data:`WORK_ENV`.
    """
    kept = max(1, m - holdout)
    run = holdout if scored is None else min(scored, holdout)
    return sum(
        sweep_work(x, kept, 0, n, budgets)
        + repeats * sweep_work(x, 0, run, n, budgets, batches=False)
        for x in methods
    )


def work_budget() -> float:
    """Units one page view may use: ``LBE_APP_WORK``, else 120.

    Returns
    -------
    float

    Raises
    ------
    InputError
        If the variable is not a positive number.
    """
    import os

    from lifelong_core.errors import InputError

    raw = os.environ.get(WORK_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_WORK
    except ValueError:
        raise InputError(f"{WORK_ENV}={raw!r} is not a number.") from None
    if not 0 < value < float("inf"):
        raise InputError(f"{WORK_ENV} must be a positive number, got {raw!r}.")
    return value


def check_work(units: float, fewer: str) -> None:
    """Stop the page with one sentence when its view would cost more than the budget.

    Parameters
    ----------
    units : float
        The view's estimated work (:func:`sweep_work` and the like), computed before any
        of it is done.
    fewer : str
        What to choose less of, for the sentence (``"repeats, methods or budgets"``).
    """
    with input_errors():
        budget = work_budget()
    if units > budget:
        st.error(
            f"This view would take an estimated {units:,.0f} units of work (about core-seconds), "
            f"more than the {budget:,.0f} one page view may use ({WORK_ENV}); choose fewer "
            f"{fewer}, or run it from the command line, which has no such limit."
        )
        st.stop()


def _pick(container, label: str, options: list, url_key: str, default, **kw):
    raw = query_default(url_key, str(default))
    by_text = {str(o): o for o in options}
    value = by_text.get(raw, default if default in options else options[0])
    if kw.pop("radio", False):
        return container.radio(
            label, options, index=options.index(value), key=url_key, horizontal=True, **kw
        )
    return container.selectbox(label, options, index=options.index(value), key=url_key, **kw)


def sweep_controls(
    budgets_default: list[int] | None = None,
    default_k: int = DEFAULT_SORT_MODELS,
    repeats: bool = False,
    comparison: bool = False,
) -> tuple[SweepConfig, Selection]:
    """Render the sidebar shared by the Sort & Search pages; values live in the URL.

    Data (dataset, domains), Sort (Sort set, how many models sort, the Sort method),
    Search (sampling, the method, the random baseline beside it), budgets and seed; on a
    large store also how many evaluated models are scored. Stops the page with one
    sentence when the choice is empty or the store cannot serve it.

    Parameters
    ----------
    budgets_default : list of int, optional
        Budgets chosen when the URL has none (those above the number of samples are
        dropped); default :func:`lifelong_core.workflows.budgets.default_budgets`.
    default_k : int
        Models used for Sort when the URL says none (at most half the models).
    repeats : bool
        Add the number of Sort splits (seeds ``seed, seed + 1, ...``) whose mean and 95%
        band the page's budget curves show.
    comparison : bool
        The page also runs ``lbe backtest``'s comparison with random on the models outside
        the Sort set (the Budget explorer); counted in the view's work.

    Returns
    -------
    tuple of (SweepConfig, Selection)
        What the sidebar chose, and the selection of the chosen dataset and domains.
    """
    key = store_key()
    ov = overview(key)
    datasets = ov["datasets"]["dataset"].tolist()
    if not datasets:
        st.info(NO_DATA)
        st.stop()
    side = st.sidebar
    side.header("Data")
    dataset = _pick(side, "Dataset", datasets, "ds", datasets[0])
    doms_all = ov["domains"].loc[ov["domains"]["dataset"] == dataset, "domain"].tolist()
    # One widget per dataset: domains chosen for another dataset must not leak into this one.
    domains = side.multiselect(
        "Domains", doms_all, default=query_list("dom", doms_all, doms_all), key=f"dom:{dataset}"
    )
    if not domains:
        st.warning("Choose at least one domain.")
        st.stop()
    dom_key = tuple(domains) if len(domains) < len(doms_all) else ()
    with input_errors():
        sel = selection(key, dataset, dom_key)
    m, n = sel.A.shape

    side.header("Sort")
    scored = large.DEFAULT_SCORED
    if is_large(sel):
        scored = int_input(
            side,
            "Models scored (large store)",
            2,
            max(2, m - 1),
            "scored",
            min(large.DEFAULT_SCORED, m - 1),
        )
    how = _pick(side, "Sort set", list(SORT_SETS), "sortset", DEFAULT_SORT_SET, radio=True)
    k_max = max(1, m - 1)
    k = int_slider(side, "Models used for Sort", 1, k_max, "k", default_sort_size(m, default_k))
    # Sorting by confidence needs each model's confidence of the true class: offered only
    # when the store has it (a long table's true_prob column, or --true-prob at import).
    has_true_prob = store_facts(store_key())["true_prob"]
    sorts = [x for x in SORTS if x != "confidence" or has_true_prob]
    sort = _pick(
        side,
        "Sort method",
        sorts,
        "sort",
        "sum",
        help="sum: Sorting by Sum; confidence: by confidence sum; recursive: Recursive Sum (Prabhu et al., 2024, §3.1)"
        + (
            ""
            if "confidence" in sorts
            else ". Sorting by confidence needs the true_prob column at "
            "import, which this store does not have."
        ),
    )
    side.header("Search")
    sampling = _pick(
        side,
        "Sampling",
        list(SAMPLING),
        "sampling",
        "uniform",
        radio=True,
        help="For the threshold rules. uniform: the centre of each of n′ equal strata of the "
        "order; random: uniformly at random; reference: the published code's grid, which skips "
        "the easy end when n′ does not divide n; listing: Listing 1's grid as printed, "
        "arange(0, n, n // n′)[1:], which is not always n′ samples",
    )
    search = pick_search(side, sort_models=k)
    # Every budget curve and scatter answers "better than a random sample?" unless asked not to.
    baseline = search != BASELINE_METHOD and side.toggle(
        "Compare with the baselines",
        value=query_default("baseline", True, bool),
        key="baseline",
        help=f"Draw the baselines beside the chosen method: {method_label(BASELINE_METHOD)} (n′ items drawn "
        "uniformly at random, their share right, and its exact 95% interval) and first-n (the first items "
        "of each task, which is what lm_eval --limit runs; biased).",
    )
    choices = budget_choices(n)
    wanted = budgets_within(budgets_default or (), n) or default_budgets(n)
    budgets = side.multiselect(
        "Budgets n′",
        choices,
        key=f"budgets:{n}",
        default=[
            int(b)
            for b in query_list("budgets", [str(b) for b in wanted], [str(c) for c in choices])
        ],
    )
    seed = int_input(side, "Seed", 0, 2**31 - 1, "seed", DEFAULT_SEED)
    reps = 1
    if repeats:
        reps = int_input(side, "Sort splits (repeats)", 1, 20, "reps", 1)
        side.caption(
            "With more than one, every budget curve shows the mean over splits drawn with seeds "
            f"{seed}…{seed + reps - 1} and the band holding the central 95% of them."
        )
        sync_query(reps=reps)
    sync_query(
        ds=dataset,
        dom=domains,
        sortset=how,
        k=k,
        sort=sort,
        sampling=sampling,
        search=search,
        **({"baseline": bool(baseline)} if search != BASELINE_METHOD else {}),
        budgets=sorted(budgets),
        seed=seed,
        **({"scored": scored} if is_large(sel) else {}),
    )
    if not budgets:
        st.warning("Choose at least one budget.")
        st.stop()
    # The view's work, before any of it: per split, the method's sweep, the baselines
    # beside it and one tab's extra sweep of a threshold rule; once, the comparison with
    # random as lbe backtest makes it (on the models outside the Sort set).
    rest = max(1, m - int(k))
    every = min(rest, scored) if is_large(sel) else rest
    packed = is_large(sel)
    # run_config scores every sweep of the view on the chosen method's models: all of them
    # for a cheap method, a seeded EVAL_CAP of them for any other.
    same = every if capabilities(search).cheap else min(every, EVAL_CAP)
    per_split = (
        sweep_work(search, int(k), same, n, len(budgets), packed=packed)
        + sum(sweep_work(b, int(k), same, n, len(budgets), packed=packed) for b in BASELINES)
        * bool(baseline)
        + sweep_work(PUBLISHED_METHOD, int(k), same, n, len(budgets), packed=packed)
    )
    compared = (
        backtest_work(
            [search, *BASELINES],
            m,
            n,
            rest,
            len(budgets),
            1,
            interactive_scored([search, *BASELINES], rest, EVAL_CAP),
        )
        if comparison and baseline and not is_large(sel)
        else 0.0
    )
    check_work(reps * per_split + compared, "Sort splits, budgets or models, or a cheaper method")
    cfg = SweepConfig(
        dataset,
        dom_key,
        how,
        int(k),
        sort,
        sampling,
        search,
        tuple(sorted(int(b) for b in budgets)),
        seed,
        scored,
        reps,
        bool(baseline),
    )
    return cfg, sel


def run_config(
    cfg: SweepConfig,
    sel: Selection,
    *,
    search: str | None = None,
    eval_cap: int | None = None,
    decompose: bool | None = None,
    label: str = "Running Sort & Search…",
):
    """The sweep of ``cfg`` with a progress bar.

    Model-based estimators cost far more per model than a threshold rule, so they are
    scored on a fixed, seeded subset of ``eval_cap`` evaluated models (the page says so).
    With ``cfg.repeats`` above one, the sweep runs once per Sort split and the table holds
    each metric's mean and 95% band. Stops the page with one sentence on bad input.

    Parameters
    ----------
    cfg : SweepConfig
        The sidebar's choice (:func:`sweep_controls`).
    sel : Selection
        The selection it was made on.
    search : str, optional
        Run this method instead of ``cfg.search`` (e.g. the random baseline beside it),
        scored on the same models.
    eval_cap : int, optional
        Evaluated models a model-based estimator is scored on (default :data:`EVAL_CAP`).
    decompose : bool, optional
        Compute the aleatoric / epistemic decomposition of the error (default: for a
        threshold rule on a store within the dense-read limit).
    label : str
        Text of the progress bar.

    Returns
    -------
    tuple
        (summary table per budget, per-model table, Sort order, Sort rows).
    """
    eval_cap = EVAL_CAP if eval_cap is None else eval_cap
    if cfg.repeats > 1:
        return _run_repeats(
            cfg, sel, search=search, eval_cap=eval_cap, decompose=decompose, label=label
        )
    search = search or cfg.search
    with input_errors():
        rows = sort_rows(sel.models, cfg.k, cfg.sort_set, cfg.seed)
    # The subset depends on the page's main method only, so a baseline drawn beside it
    # is scored on the same models.
    eval_rows = capped_eval_rows(len(sel.models), rows, cfg.search, cfg.seed, eval_cap)
    rest = len(sel.models) - len(rows)
    if eval_rows is not None and search == cfg.search:
        st.caption(
            f"{search} is scored on {eval_cap} of the {rest} other models (a seeded subset) to stay "
            "interactive; the command line scores all of them."
        )
    elif is_large(sel) and rest > cfg.scored and search == cfg.search:
        st.caption(
            f"This store is beyond the app's dense-read limit: its rows are read as packed blocks and "
            f"{cfg.scored:,} of the {rest:,} other models (a seeded sample; the sidebar sets how many) are "
            "scored; the command line scores all of them."
        )
    bar = st.progress(0.0, text=label)
    with input_errors(cleanup=bar.empty):
        request = SweepRequest(
            tuple(int(r) for r in rows),
            cfg.sort,
            cfg.sampling,
            search,
            tuple(cfg.budgets),
            cfg.seed,
            # On a large store the decomposition (a full-row pass per model) waits for its tab.
            decompose=(is_threshold_rule(search) and not is_large(sel))
            if decompose is None
            else decompose,
            eval_rows=None if eval_rows is None else tuple(int(r) for r in eval_rows),
            scored=cfg.scored,
        )
        table, per, order = sweep(
            store_key(),
            cfg.dataset,
            cfg.domains,
            request,
            progress=lambda f: bar.progress(min(float(f), 1.0), text=label),
        )
    bar.empty()
    return table, per, order, rows


def _run_repeats(cfg: SweepConfig, sel: Selection, **kw):
    """``run_config`` once per Sort split (seeds ``cfg.seed + r``); the table holds the mean
    of every metric and its 95% band (``<metric>_lo`` / ``_hi``, ``lifelong_core.studies.bands``);
    per-model rows, order and Sort rows are the first split's."""
    from dataclasses import replace

    from lifelong_core.studies.bands import band_summary, repeat_seeds

    label = kw.pop("label")
    runs = []
    for i, s in enumerate(repeat_seeds(cfg.seed, cfg.repeats)):
        runs.append(
            run_config(
                replace(cfg, seed=s, repeats=1),
                sel,
                label=f"{label} (split {i + 1} of {cfg.repeats})",
                **kw,
            )
        )
    table = band_summary([r[0] for r in runs])
    return (table,) + tuple(runs[0][1:])


def state_panel(
    key: str, dataset: str, method: str | None = None, *, missing: str | None = None
) -> None:
    """Say whether the store's kept lifelong state is current, and offer to refresh it.

    The refresh (Sort order and sums, and the item parameters of a method that keeps
    them) is written through :func:`ui.stores.write_to_store` with a progress bar, and the
    page reruns afterwards; the button says how long it should take. Nothing is offered
    when the state is current.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`ui.caches.store_key`).
    dataset : str
        The dataset whose state is shown.
    method : str, optional
        The method the page uses; its own kept state is included when it keeps one.
    missing : str, optional
        A sentence saying what the page lacked (a :class:`StateMissing`'s), shown as a
        warning in place of the status, with the refresh offered.
    """
    kept = method if method is not None and capabilities(method).kept_state else None
    stat = lifelong_state.status(get_store(), dataset, kept)
    (st.warning if missing else st.caption)(missing or stat.sentence())
    if missing is None and not (stat.sort_stale or stat.models_since_fit or not stat.items_usable):
        return
    if st.button(
        f"Refresh the kept state now (about {lifelong_state.duration(stat.refresh_seconds)})",
        key=f"refresh_state:{dataset}:{method}",
    ):
        bar = st.progress(0.0, text="Refreshing the lifelong state…")
        with input_errors(cleanup=bar.empty):
            write_to_store(
                lambda w: lifelong_state.refresh(
                    w,
                    dataset,
                    stat.method,
                    progress=lambda f, t: bar.progress(min(float(f), 1.0), text=t),
                )
            )
        bar.empty()
        st.rerun()
