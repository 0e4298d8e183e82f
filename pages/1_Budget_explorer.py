"""Budget explorer: how many evaluations does a new model need? (seed 001 §4, seed 000 §5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.errors import InputError
from lifelong_core.sortsearch import available_methods
from lifelong_core.sortsearch.methods import SORTS, is_threshold_rule
from ui import charts, data
from ui.common import download_table, provenance_note, query_default, query_list, show_chart, show_table, sync_query

st.set_page_config(page_title="Budget explorer", layout="wide")
st.title("Budget explorer")
st.markdown(
    "Sort the samples from easy to hard using a few models (**Sort**), then estimate every other "
    "model from only **n′** evaluations (**Search**) and compare with its full evaluation "
    "(seed 001 §3-4). Every view is in the URL: copy it to share."
)

key = data.store_key()
ov = data.overview(key)
datasets = ov["datasets"]["dataset"].tolist()
if not datasets:
    st.info("The store holds no dataset yet; import one with `python -m lifelong_core import`.")
    st.stop()

side = st.sidebar
side.header("Data")
ds_default = query_default("ds", datasets[0])
dataset = side.selectbox("Dataset", datasets, index=datasets.index(ds_default) if ds_default in datasets else 0, key="ds")
doms_all = ov["domains"].query("dataset == @dataset")["domain"].tolist()
domains = side.multiselect("Domains", doms_all, default=query_list("dom", doms_all, doms_all), key="dom")
if not domains:
    st.warning("Choose at least one domain.")
    st.stop()
dom_key = tuple(domains) if len(domains) < len(doms_all) else ()

try:
    sel = data.selection(key, dataset, dom_key)
except InputError as exc:
    st.error(str(exc))
    st.stop()
m, n = sel.A.shape

side.header("Sort")
how = side.radio("Sort set", data.SORT_SETS, index=data.SORT_SETS.index(query_default("sortset", "random"))
                 if query_default("sortset", "random") in data.SORT_SETS else 0, key="sortset", horizontal=True)
k_max = max(1, m - 1)
k = side.slider("Models used for Sort", 1, k_max, int(np.clip(query_default("k", min(100, m // 2), int), 1, k_max)), key="k")
sort = side.selectbox("Sort method", SORTS, index=SORTS.index(query_default("sort", "sum")) if query_default("sort", "sum") in SORTS else 0,
                      key="sort", help="sum: Sorting by Sum; confidence: by confidence sum; recursive: Recursive Sum (seed 001 §3.1)")
side.header("Search")
samplings = ("uniform", "random")
sampling = side.radio("Sampling", samplings, index=samplings.index(query_default("sampling", "uniform"))
                      if query_default("sampling", "uniform") in samplings else 0, key="sampling", horizontal=True)
methods = available_methods()
search = side.selectbox("Search rule / estimator", methods, index=methods.index(query_default("search", methods[0]))
                        if query_default("search", methods[0]) in methods else 0, key="search",
                        help="midpoint and reference are threshold rules (§3.2); copy-nearest is the baseline; "
                             "the others estimate with a 95% interval (issue 8)")
choices = data.budget_choices(n)
budgets = side.multiselect("Budgets n′", choices, default=[int(b) for b in query_list("budgets", [str(b) for b in data.default_budgets(n)],
                                                                                   [str(c) for c in choices])], key="budgets")
seed = int(side.number_input("Seed", 0, 2**31 - 1, query_default("seed", 0, int), key="seed"))
sync_query(ds=dataset, dom=domains, sortset=how, k=k, sort=sort, sampling=sampling, search=search,
           budgets=sorted(budgets), seed=seed)
if not budgets:
    st.warning("Choose at least one budget.")
    st.stop()
budgets = tuple(sorted(int(b) for b in budgets))

provenance_note(sel.synthetic)
try:
    rows = data.sort_rows(sel.models, k, how, seed)
except InputError as exc:
    st.error(str(exc))
    st.stop()

threshold = is_threshold_rule(search)
eval_rows = None
if not threshold:
    # Model-based estimators cost far more per model than a threshold; a fixed, seeded
    # subset of evaluated models keeps the page interactive (the CLI runs all of them).
    rest = np.setdiff1d(np.arange(m), rows)
    cap = 40
    if len(rest) > cap:
        eval_rows = tuple(int(r) for r in np.sort(np.random.default_rng(seed).choice(rest, cap, replace=False)))
        st.caption(f"{search} is evaluated on {cap} of the {len(rest)} other models (seeded subset) to stay interactive.")

bar = st.progress(0.0, text="Running Sort & Search…")
try:
    table, per_model, order = data.sweep(key, dataset, dom_key, tuple(int(r) for r in rows), sort, sampling, search, budgets,
                                         seed, decompose=threshold, eval_rows=eval_rows,
                                         _progress=lambda f: bar.progress(min(float(f), 1.0), text="Running Sort & Search…"))
except InputError as exc:
    bar.empty()
    st.error(str(exc))
    st.stop()
bar.empty()

n_eval = per_model["model_row"].nunique()
c = st.columns(5)
c[0].metric("samples n", f"{n:,}")
c[1].metric("Sort models", f"{len(rows)}")
c[2].metric("evaluated models", f"{n_eval}")
best = table.iloc[-1]
c[3].metric(f"MAE at n′={int(best['budget'])}", f"{best['mae']:.4f}")
c[4].metric("compute saved", f"{n / best['budget']:.1f}×", help="n / n′ at the largest chosen budget (seed 001 footnote 4)")

TABS = ["Budget curves", "vs CopyNearest&Expand", "Aleatoric vs epistemic", "Number of Sort models", "Model correlation"]
tabs = st.tabs(TABS, key="tab", bind="query-params")

with tabs[0]:
    if tabs[0].open:
        mae_fit, eagg_fit = data.fits(table)
        left, right = st.columns(2)
        with left:
            show_chart(charts.budget_lines(table, "mae", n_total=n, fits={"": mae_fit}, y_title="MAE",
                                           title="Sample-level error (MAE) vs budget"), "mae_vs_budget")
            if mae_fit.ok:
                p = mae_fit.params
                st.caption(f"Fitted E = a·exp(−b·n′) + c: a = {p['a']:.4g}, b = {p['b']:.4g}, c = {p['c']:.4g} "
                           f"(R² {mae_fit.r2:.3f}); c is the error that more samples cannot remove (seed 001 §4.2).")
            else:
                st.caption(f"No exponential fit: {mae_fit.message}.")
        with right:
            show_chart(charts.budget_lines(table, "eagg", n_total=n, fits={"": eagg_fit}, y_title="E_agg",
                                           title="Aggregate accuracy error E_agg vs budget"), "eagg_vs_budget")
            if eagg_fit.ok:
                p = eagg_fit.params
                st.caption(f"Fitted E_agg = c·n′^p: c = {p['c']:.4g}, p = {p['p']:.3f} (R² {eagg_fit.r2:.3f}; seed 000 §5).")
            else:
                st.caption(f"No power-law fit: {eagg_fit.message}.")
        show_chart(charts.budget_lines(table, "kappa", n_total=n, y_title="κ", title="Normalized agreement κ vs budget (seed 000 Eq. 4)"),
                   "kappa_vs_budget")
        show_table(table, "sweep_table")
        with st.expander("Per-model estimates"):
            show_table(per_model, "per_model")

with tabs[1]:
    if tabs[1].open:
        st.markdown("CopyNearest&Expand samples n′ points at random *without* the Sort order and copies the rest from the "
                    "Sort model that agrees most on them (seed 001 §4.2, Key Result 3).")
        bar2 = st.progress(0.0, text="Running CopyNearest&Expand…")
        t_cn, _, _ = data.sweep(key, dataset, dom_key, tuple(int(r) for r in rows), sort, sampling, "copy-nearest",
                                budgets, seed, eval_rows=eval_rows,
                                _progress=lambda f: bar2.progress(min(float(f), 1.0), text="Running CopyNearest&Expand…"))
        bar2.empty()
        both = pd.concat([table.assign(method=f"Sort & Search ({search})"), t_cn.assign(method="CopyNearest&Expand")],
                         ignore_index=True)
        show_chart(charts.budget_lines(both, "mae", series="method", n_total=n, y_title="MAE",
                                       title="Sort & Search vs CopyNearest&Expand"), "ss_vs_copynearest")
        show_table(both[["method", "budget", "mae", "eagg", "kappa", "pearson", "spearman"]], "ss_vs_copynearest")

with tabs[2]:
    if tabs[2].open:
        if "aleatoric" not in table:
            st.info("The error decomposition applies to threshold rules (midpoint, reference); choose one in the sidebar.")
        else:
            st.markdown("**Aleatoric** error is what the best threshold on the full sorted row still gets wrong (the order "
                        "is imperfect); **epistemic** is the distance of the chosen threshold from that best one, which "
                        "more samples remove (seed 001 §4.5).")
            long = table.melt(id_vars="budget", value_vars=["mae", "aleatoric", "epistemic"], var_name="error",
                              value_name="value")
            show_chart(charts.budget_lines(long, "value", series="error", n_total=n, y_title="error (fraction of n)",
                                           title="Error decomposition vs budget"), "error_decomposition")
            show_table(table[["budget", "mae", "aleatoric", "epistemic"]], "error_decomposition")

with tabs[3]:
    if tabs[3].open:
        rule = search if threshold else "midpoint"
        sizes = [s for s in (5, 10, 25, 50, 100, 200) if s < m * 2 // 3]
        st.markdown(f"Nested Sort sets ({how}) of {', '.join(map(str, sizes))} models; every curve is scored on the same "
                    f"models, those outside the largest set (seed 001 Fig. 4b). Search rule: {rule}.")
        if not sizes:
            st.info("Too few models in the store for this comparison.")
        else:
            bar3 = st.progress(0.0, text="Sweeping Sort set sizes…")
            pool = data.nested_pool(sel.models, max(sizes), how, seed)
            ev = tuple(int(r) for r in np.setdiff1d(np.arange(m), pool))
            parts = []
            for i, s in enumerate(sizes):
                t_s, _, _ = data.sweep(key, dataset, dom_key, tuple(sorted(int(r) for r in pool[:s])), sort, sampling,
                                       rule, budgets, seed, eval_rows=ev)
                parts.append(t_s.assign(sort_models=f"{s} models"))
                bar3.progress((i + 1) / len(sizes), text="Sweeping Sort set sizes…")
            bar3.empty()
            effect = pd.concat(parts, ignore_index=True)
            show_chart(charts.budget_lines(effect, "mae", series="sort_models", n_total=n, y_title="MAE",
                                           title="Effect of the number of Sort models"), "sort_set_size")
            show_table(effect, "sort_set_size")

with tabs[4]:
    if tabs[4].open:
        st.markdown("How far the data obeys one difficulty order: correlation between every pair of models' correctness "
                    "vectors, models sorted by accuracy (seed 001 App. E, Fig. 7). Where families disagree (low or negative "
                    "correlations), one global Sort order fits badly and CopyNearest&Expand can win.")
        corr = data.correlation(key, dataset, dom_key)
        names = [sel.names[i] for i in corr.order]
        pairs = corr.corr[np.triu_indices(len(names), 1)]
        cc = st.columns(4)
        cc[0].metric("model pairs", f"{len(pairs):,}")
        cc[1].metric("median correlation", f"{np.nanmedian(pairs):.3f}")
        cc[2].metric("negative pairs", f"{np.mean(pairs < 0):.1%}")
        cc[3].metric("undefined (constant rows)", f"{int(np.isnan(pairs).sum())}")
        left, right = st.columns([3, 2])
        with left:
            show_chart(charts.correlation_heatmap(corr.corr, names, corr.accuracy, title="Model-by-model correlation"),
                       "model_correlation")
        with right:
            show_chart(charts.histogram(pairs, title="Distribution of the pairwise correlations", x_title="correlation",
                                        vline=0.0), "correlation_distribution")
        st.markdown("**Mean correlation within and between model families**")
        show_table(data.family_correlation(corr, sel.models), "family_correlation")
        download_table(corr.frame(names).reset_index(names="model"), "correlation_matrix")
