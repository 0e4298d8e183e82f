"""Cached reads and derived tables for the Sort & Search pages (``st.cache_data``).

Every function here is a thin wrapper: it reads the store through
``lifelong_core.store`` and calls ``lifelong_core.sortsearch`` /
``lifelong_core.estimators``; the only logic of its own is choosing which rows play the
Sort set (the same rules as the command line) and gluing results into tables. Every
cached function takes ``key`` (store path and modification time, from :func:`store_key`)
so a store grown by another process is re-read; ``ui.common.refresh_store`` clears
everything after this app writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.errors import InputError
from ui.common import get_store, query_default, query_list, store_path, sync_query

SORT_SETS = ("random", "earliest released")


class _Memo:
    """A small thread-safe LRU of results that are slow to compute and need a progress bar.

    ``st.cache_data`` records every element a cached function touches and replays it on a
    hit, which fails for a progress bar created outside the function; sweeps are memoised
    here instead (keys include the store's modification time, like every cache here).
    Results are returned as deep copies so a page cannot alter the memo.
    """

    def __init__(self, size: int) -> None:
        import threading
        from collections import OrderedDict

        self.size = size
        self.items: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get_or_compute(self, key, compute):
        import copy

        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return copy.deepcopy(self.items[key])
        value = compute()
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return copy.deepcopy(value)


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
    """Per-task counts (tasks = domains) of the models recorded on every domain, named by
    model name, and the names of the models left out for missing a domain."""
    store = get_store()
    counts = store.counts(dataset=dataset)
    names = store.models().set_index("model_id")["name"]
    counts["model"] = counts["model"].map(names).fillna(counts["model"])
    per_model = counts.groupby("model")["task"].nunique()
    dropped = sorted(per_model[per_model < counts["task"].nunique()].index)
    return counts[~counts["model"].isin(dropped)].reset_index(drop=True), dropped


@dataclass(frozen=True)
class Selection:
    """The matrix of a data choice: rows = every real (not estimated) model evaluated on
    all chosen samples, in store order; columns = the chosen samples, in store order."""

    A: np.ndarray
    models: pd.DataFrame
    samples: pd.DataFrame
    synthetic: bool

    @property
    def names(self) -> list[str]:
        return self.models["name"].fillna(self.models["model_id"]).astype(str).tolist()


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


@st.cache_data(show_spinner="Reading the cache from the store…", max_entries=6)
def selection(key: str, dataset: str, domains: tuple[str, ...]) -> Selection:
    """Every model's 0/1 row on the samples of ``dataset`` restricted to ``domains``."""
    s = get_store()
    smp = s.samples(dataset, list(domains) if domains else None)
    if len(smp) == 0:
        raise InputError(f"dataset {dataset!r} has no samples in the chosen domains.")
    models = s.models()
    # Rows inserted from estimates are predictions, not evaluations: scoring Sort & Search
    # against them would flatter it. Models not run on every chosen sample cannot be rows.
    models = models[~models["estimated"].astype(bool)]
    sidx = smp["sample_idx"].to_numpy()
    complete = s.known(models["model_idx"].to_numpy(), sidx).all(axis=1)
    models = models[complete]
    if len(models) < 2:
        raise InputError(f"fewer than two models were evaluated on every chosen sample of {dataset!r}.")
    A = s.matrix(models["model_idx"].to_numpy(), sidx)
    ds = s.datasets().set_index("dataset")
    synthetic = bool(ds.loc[dataset, "synthetic"]) if dataset in ds.index else False
    return Selection(A, models.reset_index(drop=True), smp.reset_index(drop=True), synthetic)


@st.cache_data(show_spinner=False, max_entries=4)
def confidence(key: str, dataset: str, domains: tuple[str, ...], rows: tuple[int, ...]) -> np.ndarray | None:
    """Confidence of the true class (``true_prob``) of the given rows, or None if not recorded."""
    sel = selection(key, dataset, domains)
    s = get_store()
    try:
        return s.extras(sel.models["model_idx"].to_numpy()[list(rows)], sel.samples["sample_idx"].to_numpy(),
                        fields=("true_prob",))["true_prob"]
    except InputError:
        return None


def sort_rows(models: pd.DataFrame, k: int, how: str, seed: int) -> np.ndarray:
    """Row numbers of the Sort set: ``k`` rows at random or the ``k`` earliest released.

    Random uses the command line's ``--sort-models K --seed S`` rule
    (``sortsearch.choose_sort_rows``) so a view can be reproduced there. Earliest released
    orders by ``release_order`` (models without one last, then by insertion).
    """
    from lifelong_core.sortsearch import choose_sort_rows

    m = len(models)
    if how == "random":
        return choose_sort_rows(m, k, seed)
    if not 1 <= k < m:
        raise InputError(f"the Sort set needs between 1 and {m - 1} models, got {k}.")
    rel = models["release_order"].astype("Float64").fillna(np.inf).to_numpy(dtype=float)
    first = np.lexsort((np.arange(m), rel))[:k]
    return np.sort(first).astype(np.int64)


def nested_pool(models: pd.DataFrame, k_max: int, how: str, seed: int) -> np.ndarray:
    """A candidate order for nested Sort sets: its first ``k`` rows are the Sort set of size k.

    Nested sets with one fixed evaluation set (the rows outside the first ``k_max``) make
    the curves for different Sort sizes comparable, as in seed 001 Fig. 4b.
    """
    m = len(models)
    if how == "random":
        return np.random.default_rng(seed).permutation(m)[:k_max].astype(np.int64)
    rel = models["release_order"].astype("Float64").fillna(np.inf).to_numpy(dtype=float)
    return np.lexsort((np.arange(m), rel))[:k_max].astype(np.int64)


def _split(m: int, rows: np.ndarray) -> np.ndarray:
    mask = np.ones(m, dtype=bool)
    mask[rows] = False
    return np.flatnonzero(mask)


def sweep(
    key: str, dataset: str, domains: tuple[str, ...], sort_set: tuple[int, ...], sort: str, sampling: str,
    search: str, budgets: tuple[int, ...], seed: int, decompose: bool = False,
    eval_rows: tuple[int, ...] | None = None, progress=None,
):
    """``run_sweep`` on the selection: Sort on ``sort_set``, evaluate every other row
    (or ``eval_rows``). ``per_model`` gains ``name`` and ``family``. Memoised."""
    args = (key, dataset, domains, sort_set, sort, sampling, search, budgets, seed, decompose, eval_rows)
    return _memo().get_or_compute(("sweep",) + args, lambda: _sweep(*args, progress=progress))


def _sweep(key, dataset, domains, sort_set, sort, sampling, search, budgets, seed, decompose, eval_rows, progress):
    from lifelong_core.sortsearch import run_sweep
    from lifelong_core.sortsearch.methods import is_threshold_rule

    sel = selection(key, dataset, domains)
    rows = np.asarray(sort_set, dtype=np.int64)
    ev = _split(len(sel.models), rows) if eval_rows is None else np.asarray(eval_rows, dtype=np.int64)
    conf = confidence(key, dataset, domains, sort_set) if sort == "confidence" else None
    if sort == "confidence" and conf is None:
        raise InputError("the store has no confidences (true_prob) for these models; choose another Sort method.")
    res = run_sweep(
        sel.A[rows], sel.A[ev], budgets, sort=sort, sampling=sampling, search=search, confidence=conf,
        seed=seed, decompose=decompose, eval_row_ids=ev, progress=progress,
        # Model-based methods take long per row: small blocks let the progress bar move.
        block_rows=None if is_threshold_rule(search) else 4,
    )
    per = res.per_model.copy()
    per["name"] = np.asarray(sel.names, dtype=object)[per["model_row"].to_numpy()]
    per["family"] = sel.models["family"].to_numpy(dtype=object)[per["model_row"].to_numpy()]
    return res.table.copy(), per, res.order


@st.cache_data(show_spinner=False, max_entries=8)
def fits(table: pd.DataFrame):
    """Exponential fit of MAE and power-law fit of E_agg against the budget."""
    from lifelong_core.sortsearch import fit_exponential, fit_power_law

    return fit_exponential(table["budget"], table["mae"]), fit_power_law(table["budget"], table["eagg"])


@st.cache_data(show_spinner=False, max_entries=4)
def correlation(key: str, dataset: str, domains: tuple[str, ...]):
    """Seed 001 App. E: the model-by-model correlation matrix sorted by accuracy."""
    from lifelong_core.sortsearch import model_correlation

    return model_correlation(selection(key, dataset, domains).A)


def budget_choices(n: int) -> list[int]:
    """Budgets offered in the selector: powers of two up to ``n`` and ``n`` itself."""
    from lifelong_core.sortsearch import power_budgets

    b = list(power_budgets(n, lo=1, hi=n))
    if b[-1] != n:
        b.append(n)
    return b


def default_budgets(n: int) -> list[int]:
    """The paper's 8, 16, ... (seed 001 §4.2) up to ``n / 2``; on tiny data, all of ``n``."""
    wanted = [b for b in budget_choices(n) if 8 <= b <= max(8, n // 2)]
    return wanted or [n]


def family_correlation(corr, models: pd.DataFrame) -> pd.DataFrame:
    """Mean off-diagonal correlation for every pair of model families (App. E by family)."""
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
            rows.append({"family_a": a, "family_b": b, "models_a": int(ia.sum()), "models_b": int((fam == b).sum()),
                         "mean_correlation": float(np.nanmean(block)) if np.isfinite(block).any() else np.nan})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ shared sidebar controls
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


def int_slider(container, label: str, lo: int, hi: int, url_key: str, default: int) -> int:
    """An integer slider whose value lives in the URL; a caption when only one value exists
    (Streamlit refuses a slider with min == max).

    The widget key carries the range, so a range that changes with the data (another
    dataset) starts a fresh slider instead of holding a value outside it.
    """
    if hi <= lo:
        container.caption(f"{label}: {lo}")
        return lo
    value = int(np.clip(query_default(url_key, default, int), lo, hi))
    return int(container.slider(label, lo, hi, value, key=f"{url_key}:{lo}-{hi}"))


def int_input(container, label: str, lo: int, hi: int, url_key: str, default: int = 0) -> int:
    """A whole-number input whose value lives in the URL, clipped to [lo, hi] (a hand-edited
    URL must not stop the page)."""
    value = int(np.clip(query_default(url_key, default, int), lo, hi))
    return int(container.number_input(label, lo, hi, value, key=url_key))


def _pick(container, label: str, options: list, url_key: str, default, **kw):
    raw = query_default(url_key, str(default))
    by_text = {str(o): o for o in options}
    value = by_text.get(raw, default if default in options else options[0])
    if kw.pop("radio", False):
        return container.radio(label, options, index=options.index(value), key=url_key, horizontal=True, **kw)
    return container.selectbox(label, options, index=options.index(value), key=url_key, **kw)


def sweep_controls(budgets_default: list[int] | None = None, search_methods: list[str] | None = None,
                   default_k: int = 100) -> tuple[SweepConfig, Selection]:
    """Render the sidebar shared by the Sort & Search pages; values live in the URL.

    Stops the page with one sentence when the choice is empty or the store cannot serve it.
    """
    from lifelong_core.sortsearch import available_methods
    from lifelong_core.sortsearch.methods import SORTS

    key = store_key()
    ov = overview(key)
    datasets = ov["datasets"]["dataset"].tolist()
    if not datasets:
        st.info("The store holds no dataset yet; import one with `python -m lifelong_core import`.")
        st.stop()
    side = st.sidebar
    side.header("Data")
    dataset = _pick(side, "Dataset", datasets, "ds", datasets[0])
    doms_all = ov["domains"].loc[ov["domains"]["dataset"] == dataset, "domain"].tolist()
    # One widget per dataset: domains chosen for another dataset must not leak into this one.
    domains = side.multiselect("Domains", doms_all, default=query_list("dom", doms_all, doms_all), key=f"dom:{dataset}")
    if not domains:
        st.warning("Choose at least one domain.")
        st.stop()
    dom_key = tuple(domains) if len(domains) < len(doms_all) else ()
    try:
        sel = selection(key, dataset, dom_key)
    except InputError as exc:
        st.error(str(exc))
        st.stop()
    m, n = sel.A.shape

    side.header("Sort")
    how = _pick(side, "Sort set", list(SORT_SETS), "sortset", "random", radio=True)
    k_max = max(1, m - 1)
    k = int_slider(side, "Models used for Sort", 1, k_max, "k", min(default_k, m // 2))
    sort = _pick(side, "Sort method", list(SORTS), "sort", "sum",
                 help="sum: Sorting by Sum; confidence: by confidence sum; recursive: Recursive Sum (seed 001 §3.1)")
    side.header("Search")
    sampling = _pick(side, "Sampling", ["uniform", "random"], "sampling", "uniform", radio=True)
    methods = search_methods or available_methods()
    search = _pick(side, "Search rule / estimator", methods, "search", methods[0],
                   help="midpoint and reference are threshold rules (§3.2); copy-nearest is the baseline; "
                        "the others estimate with a 95% interval (issue 8)")
    choices = budget_choices(n)
    wanted = [b for b in (budgets_default or []) if b <= n] or default_budgets(n)
    budgets = side.multiselect(
        "Budgets n′", choices, key=f"budgets:{n}",
        default=[int(b) for b in query_list("budgets", [str(b) for b in wanted], [str(c) for c in choices])],
    )
    seed = int_input(side, "Seed", 0, 2**31 - 1, "seed")
    sync_query(ds=dataset, dom=domains, sortset=how, k=k, sort=sort, sampling=sampling, search=search,
               budgets=sorted(budgets), seed=seed)
    if not budgets:
        st.warning("Choose at least one budget.")
        st.stop()
    cfg = SweepConfig(dataset, dom_key, how, int(k), sort, sampling, search, tuple(sorted(int(b) for b in budgets)), seed)
    return cfg, sel


def run_config(cfg: SweepConfig, sel: Selection, *, search: str | None = None, eval_cap: int = 40,
               decompose: bool | None = None, label: str = "Running Sort & Search…"):
    """The sweep of ``cfg`` with a progress bar; returns (table, per_model, order, sort rows).

    Model-based estimators cost far more per model than a threshold rule, so they are
    scored on a fixed, seeded subset of ``eval_cap`` evaluated models (the page says so).
    Stops the page with one sentence on bad input.
    """
    from lifelong_core.sortsearch.methods import is_threshold_rule

    search = search or cfg.search
    m = len(sel.models)
    try:
        rows = sort_rows(sel.models, cfg.k, cfg.sort_set, cfg.seed)
    except InputError as exc:
        st.error(str(exc))
        st.stop()
    threshold = is_threshold_rule(search)
    eval_rows = None
    rest = np.setdiff1d(np.arange(m), rows)
    # The subset depends on the page's main method only, so a baseline drawn beside it
    # is scored on the same models.
    if not is_threshold_rule(cfg.search) and cfg.search != "copy-nearest" and len(rest) > eval_cap:
        eval_rows = tuple(int(r) for r in np.sort(np.random.default_rng(cfg.seed).choice(rest, eval_cap, replace=False)))
        if search == cfg.search:
            st.caption(f"{search} is scored on {eval_cap} of the {len(rest)} other models (a seeded subset) to stay "
                       "interactive; the command line scores all of them.")
    bar = st.progress(0.0, text=label)
    try:
        table, per, order = sweep(
            store_key(), cfg.dataset, cfg.domains, tuple(int(r) for r in rows), cfg.sort, cfg.sampling, search,
            cfg.budgets, cfg.seed, decompose=threshold if decompose is None else decompose, eval_rows=eval_rows,
            progress=lambda f: bar.progress(min(float(f), 1.0), text=label),
        )
    except InputError as exc:
        bar.empty()
        st.error(str(exc))
        st.stop()
    bar.empty()
    return table, per, order, rows


def rank_agreement(per_model: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """Agreement of the ranking induced by the estimates with the true ranking, per budget
    (seed 001 App. F): Spearman and Kendall correlation of the two, and how many of the
    true top ``top`` models the estimated top ``top`` holds."""
    from scipy import stats

    rows = []
    for b, g in per_model.groupby("budget", sort=True):
        est, true = g["est_acc"].to_numpy(), g["true_acc"].to_numpy()
        defined = len(g) > 1 and np.ptp(est) > 0 and np.ptp(true) > 0
        k = min(top, len(g))
        top_true = set(g.nlargest(k, "true_acc")["model_row"])
        top_est = set(g.nlargest(k, "est_acc")["model_row"])
        rows.append({
            "budget": int(b),
            "spearman": float(stats.spearmanr(est, true).statistic) if defined else np.nan,
            "kendall": float(stats.kendalltau(est, true).statistic) if defined else np.nan,
            f"top{top}_overlap": len(top_true & top_est) / k,
        })
    return pd.DataFrame(rows)


def ranks(per_model: pd.DataFrame, budget: int) -> pd.DataFrame:
    """True and estimated rank (1 = best, ties share the best rank) of every model at one budget."""
    g = per_model[per_model["budget"] == budget].copy()
    g["true_rank"] = g["true_acc"].rank(ascending=False, method="min").astype(int)
    g["est_rank"] = g["est_acc"].rank(ascending=False, method="min").astype(int)
    return g.sort_values("true_rank")


# ------------------------------------------------------------------ teaching slice
@st.cache_data(show_spinner=False, max_entries=8)
def teaching_slice(key: str, dataset: str, n_models: int, n_samples: int, seed: int):
    """A small real slice: ``n_models`` models spread over the accuracy range and
    ``n_samples`` random samples, drawn with ``seed``. Returns (A, model names, sample ids)."""
    sel = selection(key, dataset, ())
    m, n = sel.A.shape
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.choice(n, size=min(n_samples, n), replace=False))
    by_acc = np.argsort(-sel.A.mean(axis=1), kind="stable")
    # Evenly spaced accuracy ranks, jittered by the seed, so the slice shows easy and hard rows.
    picks = np.unique(np.linspace(0, m - 1, min(n_models, m)).round().astype(int))
    jitter = rng.integers(-2, 3, size=len(picks))
    picks = np.unique(np.clip(picks + jitter, 0, m - 1))
    rows = np.sort(by_acc[picks])
    return sel.A[np.ix_(rows, cols)], [sel.names[i] for i in rows], sel.samples["sample_id"].to_numpy(dtype=object)[cols].tolist()


@dataclass(frozen=True)
class Walkthrough:
    """One insert_M (or, on the transpose, insert_D) run on a slice, for the teaching page.

    ``order``: the other rows' easy -> hard order of the columns; ``positions``: sampled
    sorted positions; ``observed``: the new row's values there; ``threshold``: the rule's
    t; ``pred`` / ``true``: predicted and true new row in sorted order.
    """

    order: np.ndarray
    positions: np.ndarray
    observed: np.ndarray
    threshold: int
    pred: np.ndarray
    true: np.ndarray


def walkthrough(A: np.ndarray, held_out: int, budget: int, rule: str, sampling: str, seed: int,
                transpose: bool = False) -> Walkthrough:
    """Sort & Search for one held-out row of ``A`` (or column, with ``transpose``).

    insert_M (§3.2): Sort the columns by the other rows' sums, evaluate the held-out row at
    ``budget`` positions, threshold. insert_D (§3.3): the same on ``A.T``, with the rows
    (models) ordered best first by ``sort_models``.
    """
    from lifelong_core.sortsearch import InsertM, rule_thresholds, sort_models

    M = A.T if transpose else A
    rest = np.delete(M, held_out, axis=0)
    new = M[held_out]
    if transpose:
        est = InsertM(rule=rule, sampling=sampling).fit(rest, order=sort_models(rest.T))
    else:
        est = InsertM(rule=rule, sampling=sampling).fit(rest)
    pos = est.select_positions(budget, np.random.default_rng(seed))
    observed = new[est.order_[pos]].astype(np.uint8)
    t = int(rule_thresholds(rule, pos, observed[None, :], M.shape[1])[0])
    pred = np.zeros(M.shape[1], dtype=np.uint8)
    pred[:t] = 1
    return Walkthrough(est.order_, pos, observed, t, pred, new[est.order_].astype(np.uint8))


# ------------------------------------------------------------------ evaluate something new
@st.cache_resource(show_spinner="Fitting the method on the cache…", max_entries=4)
def fitted_method(key: str, dataset: str, search: str):
    """``search`` fitted on every real model's row of ``dataset`` (Sort by sum)."""
    from lifelong_core.sortsearch import compute_order, get_method

    sel = selection(key, dataset, ())
    order = compute_order(sel.A, "sum")
    return get_method(search).fit(sel.A, order)


@st.cache_resource(show_spinner=False, max_entries=4)
def fitted_insert_d(key: str, dataset: str, rule: str, sampling: str):
    """insert_D (seed 001 §3.3) fitted on every real model's row of ``dataset``."""
    from lifelong_core.sortsearch import InsertD

    return InsertD(rule=rule, sampling=sampling).fit(selection(key, dataset, ()).A)


def read_upload(data: bytes, name: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """An uploaded CSV with exactly the named columns, validated like a store import.

    Ids go through the store's text validation and ``correct`` through its 0/1 check, so
    a bad file gets the same one sentence (file, row, column) as ``import`` would give.
    """
    import io

    from lifelong_core.store._validate import binary_values, numeric_column, text_column

    source = f"uploaded file {name}"
    if not name.lower().endswith(".csv"):
        raise InputError(f"{source} is not a .csv file; upload a CSV table with columns {', '.join(columns)}.")
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, na_values=[])
    except pd.errors.EmptyDataError:
        raise InputError(f"{source} is empty.") from None
    except pd.errors.ParserError as exc:
        raise InputError(f"{source} is not a well-formed CSV table ({str(exc).strip().splitlines()[-1]}).") from None
    except UnicodeDecodeError:
        raise InputError(f"{source} is not UTF-8 text.") from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{source} has no column {missing[0]!r} (columns found: {', '.join(df.columns) or 'none'}); "
                         f"expected {', '.join(columns)}.")
    extra = [c for c in df.columns if c not in columns]
    if extra:
        raise InputError(f"{source} has unknown column {extra[0]!r}; expected exactly {', '.join(columns)}.")
    if len(df) == 0:
        raise InputError(f"{source} has no data rows.")
    out = pd.DataFrame({c: text_column(df[c], c, source) for c in columns if c != "correct"})
    out["correct"] = binary_values(numeric_column(df["correct"], "correct", source), "correct", source)
    keys = [c for c in columns if c != "correct"]
    dup = out.duplicated(keys, keep=False)
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        same = out[dup].groupby(keys)["correct"].nunique()
        if (same > 1).any():
            raise InputError(f"{source} row {i + 1} repeats {', '.join(keys)} {tuple(out.loc[i, keys])} with a different "
                             "'correct' value.")
        out = out.drop_duplicates(keys).reset_index(drop=True)
    return out


def match_observations(results: pd.DataFrame, wanted_ids: list[str], id_col: str, name: str) -> tuple[np.ndarray, int]:
    """Observed 0/1 values in the order of ``wanted_ids``; InputError naming the first id
    the file lacks. Returns the values and how many rows of the file were not asked for."""
    by_id = dict(zip(results[id_col], results["correct"]))
    missing = [i for i in wanted_ids if i not in by_id]
    if missing:
        raise InputError(f"uploaded file {name} has no result for {id_col} {missing[0]!r} ({len(missing)} of the "
                         f"{len(wanted_ids)} requested are missing).")
    extra = len(set(by_id) - set(wanted_ids))
    return np.array([by_id[i] for i in wanted_ids], dtype=np.uint8), extra


def write_to_store(write):
    """Run ``write(store)`` on a short-lived writer and return its result.

    DuckDB lets a writer in only when no other handle is open, so the app's shared
    read-only handle is closed first; every session reopens it on its next read. Another
    process holding the file gives ``StoreLockedError`` (an ``InputError``: one sentence).
    """
    from lifelong_core.store import Store
    from ui.common import refresh_store

    get_store().close()
    refresh_store()
    try:
        with Store.open(store_path(), read_only=False) as writer:
            return write(writer)
    finally:
        refresh_store()


# ------------------------------------------------------------------ stream (seed 003's view)
def release_rows(models: pd.DataFrame) -> np.ndarray:
    """Row numbers in release order (models without a release_order last, by insertion)."""
    rel = models["release_order"].astype("Float64").fillna(np.inf).to_numpy(dtype=float)
    return np.lexsort((np.arange(len(models)), rel)).astype(np.int64)


@st.cache_data(show_spinner=False, max_entries=16)
def stream_replay(key: str, dataset: str, pool: int, budget: int, sampling: str, rule: str, seed: int) -> pd.DataFrame:
    """Replay ``dataset`` in release order (seed 001 App. G, serial additions).

    The first ``pool`` released models are evaluated in full; each later model is
    estimated by Sort & Search from ``budget`` evaluations and its predicted row joins the
    Sort sums. One row per arriving model with its error and the running evaluation counts
    of this scheme and of evaluating everything in full.
    """
    from lifelong_core.sortsearch import serial_additions

    sel = selection(key, dataset, ())
    m, n = sel.A.shape
    order = release_rows(sel.models)
    if not 1 <= pool < m:
        raise InputError(f"the initial pool needs between 1 and {m - 1} models, got {pool}.")
    steps, _ = serial_additions(sel.A[order[:pool]], sel.A[order[pool:]], budget, sampling=sampling, rule=rule, seed=seed)
    steps["model_row"] = order[pool:][steps["step"].to_numpy()]
    steps["name"] = np.asarray(sel.names, dtype=object)[steps["model_row"].to_numpy()]
    steps["models_seen"] = pool + steps["step"] + 1
    steps["eagg"] = (steps["est_acc"] - steps["true_acc"]).abs()
    steps["evaluations_ss"] = pool * n + (steps["step"] + 1) * budget
    steps["evaluations_full"] = steps["models_seen"] * n
    return steps


def stream_configs(key: str, dataset: str, pools: tuple[int, ...], budgets: tuple[int, ...], seed: int,
                   progress=None) -> pd.DataFrame:
    """Cost and error over the whole stream for every S&S configuration (seed 003 §3).

    Configuration = (initial pool evaluated in full, budget n', sampling, threshold rule).
    Cost: evaluations spent on all m models (pool x n + rest x n'). Error: mean over all m
    models, the pool counting as exact, so every configuration is scored on the same set.
    """
    args = (key, dataset, pools, budgets, seed)
    return _memo().get_or_compute(("stream",) + args, lambda: _stream_configs(*args, progress=progress))


def _stream_configs(key, dataset, pools, budgets, seed, progress) -> pd.DataFrame:
    from lifelong_core.sortsearch import RULES, run_sweep

    sel = selection(key, dataset, ())
    m, n = sel.A.shape
    order = release_rows(sel.models)
    recs = []
    grid = [(p, s, r) for p in pools if 1 <= p < m for s in ("uniform", "random") for r in RULES]
    for i, (p, s, r) in enumerate(grid):
        res = run_sweep(sel.A[order[:p]], sel.A[order[p:]], [b for b in budgets if b <= n], sampling=s, search=r, seed=seed)
        for row in res.table.itertuples():
            recs.append({
                "pool": p, "budget": int(row.budget), "sampling": s, "rule": r,
                "config": f"pool {p}, n′={int(row.budget)}, {s}, {r}",
                "evaluations": p * n + (m - p) * int(row.budget),
                "mae": row.mae * (m - p) / m, "eagg": row.eagg * (m - p) / m,
            })
        if progress is not None:
            progress((i + 1) / len(grid))
    out = pd.DataFrame(recs)
    out["full_evaluations"] = m * n
    return out


def pareto_front(df: pd.DataFrame, cost: str, error: str) -> pd.DataFrame:
    """Rows not dominated in (cost, error): no other row is at most as costly and strictly
    better, or strictly cheaper and at most as bad."""
    d = df.sort_values([cost, error], kind="stable")
    best = np.inf
    keep = []
    for idx, e in zip(d.index, d[error].to_numpy()):
        if e < best:
            keep.append(idx)
            best = e
    return d.loc[keep]
