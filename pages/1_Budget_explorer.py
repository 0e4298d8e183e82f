"""Budget explorer: how many evaluations does a new model need? (Prabhu et al., 2024, §4, Prabhu et al. (2024, *Lifelong Benchmarks*) §5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.methods import capabilities, is_threshold_rule
from lifelong_core.methods.registry import BASELINE_METHOD, LIMIT_METHOD
from lifelong_core.sortsearch.search import resolve_sampling
from lifelong_core.workflows import backtest as bt
from lifelong_core.workflows.design import design_rule, design_runs
from lifelong_core.workflows.sweeps import family_correlation
from ui import caches, charts, controls, studies
from ui.common import (
    download_table,
    picked,
    provenance_note,
    show_chart,
    show_table,
    sync_query,
    url_index,
)

st.set_page_config(page_title="Budget explorer", layout="wide")
st.title("Budget explorer")
st.markdown(
    "Sort the samples from easy to hard using a few models (**Sort**), then estimate every other "
    "model from only **n′** evaluations (**Search**) and compare with its full evaluation "
    "(Prabhu et al., 2024, §3-4). The headline is the *equivalent random budget*: how many items drawn "
    "uniformly at random give the same accuracy error. Every view is in the URL: copy it to share."
)

cfg, sel = controls.sweep_controls(repeats=True, comparison=True)
key = caches.store_key()
m, n = sel.A.shape
dataset, dom_key, how, sort, sampling, search, budgets, seed = (
    cfg.dataset,
    cfg.domains,
    cfg.sort_set,
    cfg.sort,
    cfg.sampling,
    cfg.search,
    cfg.budgets,
    cfg.seed,
)
provenance_note(sel.synthetic, cfg.dataset)
predicts = capabilities(search).per_sample
table, per_model, _, rows = controls.run_config(cfg, sel)
# The baselines on the same Sort split and models, for the curves: a random sample's exact
# expected error and the first items of each task (what lm_eval --limit runs).
t_first: pd.DataFrame | None = None
curves_vs: pd.DataFrame | None = None
if cfg.baseline:
    t_first, _, _, _ = controls.run_config(
        cfg, sel, search=LIMIT_METHOD, label="Running the first-n baseline…"
    )
    curves_vs = caches.of_sweep(
        "baselines", (key, cfg), lambda: bt.sweep_baselines(per_model, n, t_first)
    )
# The comparison with random is lbe backtest's (each of the other models its own item draw),
# so this page, the Backtest page and the command line give one verdict.
verdict = verdict_note = verdict_command = None
k = len(rows)
if cfg.baseline and not caches.is_large(sel) and k >= 2:
    # A model-based estimator is scored on the curves' seeded subset of the models, as the
    # sweep does, to stay interactive; lbe backtest --scored gives the same.
    req = bt.sort_split_comparison(search, budgets, m, k, how, seed)
    scored = req.scored
    result = caches.backtest(
        key,
        dataset,
        req.methods,
        req.budgets,
        req.holdout,
        req.split,
        req.repeats,
        req.seed,
        req.draws,
        label="Comparing with a random sample as lbe backtest does…",
        domains=dom_key,
        scored=scored,
        baselines=req.baselines,
    )
    verdict = result.against_random(search)
    differs = [
        "each of them its own item draw, where the curves below use one common draw per budget"
    ]
    if scored is not None:
        differs.insert(0, f"{scored} of them scored (the curves' seeded subset)")
    if sort != "sum":
        differs.append(f"Sort by Sum as `lbe select` does, where the curves Sort by {sort}")
    if is_threshold_rule(search) and sampling != resolve_sampling(None, search):
        differs.append(f"{search}'s own item choice, where the curves use the {sampling} grid")
    if cfg.repeats > 1:
        differs.append(f"the first Sort split (seed {seed}) only")
    verdict_note = (
        f"The comparison with random is `lbe backtest`'s on the {m - k} models outside the Sort set, "
        f"with {'; '.join(differs)} (the command is under *Against the baselines*)."
    )
    verdict_command = bt.command(
        dataset,
        req.methods,
        req.budgets,
        domains=dom_key,
        holdout=req.holdout,
        split=req.split,
        repeats=req.repeats,
        seed=req.seed,
        scored=scored,
    )
elif cfg.baseline and curves_vs is not None:
    verdict_note = (
        "The comparison with random uses the curves' models and their common draw per budget, without an "
        "interval: "
        + (
            "this store is beyond the app's dense-read limit, and `lbe backtest` (each model its own "
            "draws, with intervals) reads the matrix in memory."
            if caches.is_large(sel)
            else "a Sort set of one model leaves too few for `lbe backtest`'s cache."
        )
    )

n_eval = per_model["model_row"].nunique()
top = st.columns(3)
top[0].metric("samples n", f"{n:,}")
top[1].metric("Sort models", f"{len(rows)}")
top[2].metric("evaluated models", f"{n_eval}")
# The headline row: the method's error, then what it saves against a random sample.
head = st.columns(4)
# Headline figures at a budget the user picks (in the URL). Default: the smallest chosen budget
# whose E_agg is at most one accuracy point, else the largest: the largest budget alone would
# report the least saving.
b_opts = [int(b) for b in table["budget"]]
within = [int(b) for b in table.loc[table["eagg"] <= 0.01, "budget"]]
hb_default = within[0] if within else b_opts[-1]
hb: int = picked(
    st.sidebar.selectbox(
        "Headline budget n′",
        b_opts,
        index=url_index("hb", b_opts, hb_default),
        key="hb",
        help="The budget the figures at the top are read at. Default: the smallest chosen budget "
        "with E_agg ≤ 1 point, else the largest.",
    )
)
sync_query(hb=hb)
best = table[table["budget"] == hb].iloc[0]
if predicts:
    head[0].metric(
        f"MAE at n′={int(best['budget'])}",
        f"{best['mae']:.4f}",
        help=f"E_agg there: {best['eagg']:.4f} (aggregate accuracy error)",
    )
else:
    head[0].metric(
        f"E_agg at n′={int(best['budget'])}",
        f"{best['eagg']:.4f}",
        help=f"{search} predicts no single sample, so it has no sample-level MAE.",
    )
if verdict is not None:
    v = verdict.set_index("budget").loc[hb]
    head[1].metric(
        "equivalent random budget",
        f"{int(v['equivalent_budget']):,} items",
        help=f"A uniform random sample of this many items has the same expected accuracy error as {search} "
        f"at n′ = {hb} on the same models (95% interval {int(v['equivalent_lo']):,}-"
        f"{int(v['equivalent_hi']):,}, bootstrap over the models). {search}'s error is "
        f"{v['mae_vs_random']:.2f}× a random sample's ({v['ratio_lo']:.2f}-{v['ratio_hi']:.2f}).",
    )
    head[2].metric(
        "saving against random",
        f"{v['saving']:.1f}×",
        help=f"The equivalent random budget over n′ = {hb}: 95% interval {v['saving_lo']:.1f}-"
        f"{v['saving_hi']:.1f}×. Below 1, a random sample of n′ items does better.",
    )
elif curves_vs is not None:
    v = curves_vs.set_index("budget").loc[hb]
    head[1].metric(
        "equivalent random budget",
        f"{int(v['equivalent_budget']):,} items",
        help="A uniform random sample of this many items has the same expected accuracy error on the "
        "curves' models (no interval: one common draw per budget).",
    )
    head[2].metric("saving against random", f"{v['saving']:.1f}×")
head[3].metric(
    "n / n′ (the paper's figure)",
    f"{n / hb:.1f}×",
    help="The papers' “compute saved” (Prabhu et al., 2024, footnote 4): a saving against running every "
    "item, not against a random sample of the same error (the equivalent random budget).",
)
if not cfg.baseline:
    st.caption(
        "Turn on the comparison with the baselines in the sidebar for the equivalent random budget: how many "
        "items drawn uniformly at random give the same error."
    )
if verdict_note:
    st.caption(verdict_note)

TABS = [
    "Budget curves",
    "vs CopyNearest&Expand",
    "Aleatoric vs epistemic",
    "Design choices",
    "Model correlation",
    "New samples (insert_D)",
]
tabs = st.tabs(TABS, key="tab", bind="query-params")

if cfg.repeats > 1:
    st.caption(
        f"Every budget curve below is the mean over {cfg.repeats} Sort splits (seeds {seed}…{seed + cfg.repeats - 1}) "
        "with a band holding the central 95% of them; fits are to the mean; per-model rows are the first split's."
    )

with tabs[0]:
    if tabs[0].open:
        mae_fit, eagg_fit = caches.fits(table)
        left, right = st.columns(2)
        with left:
            if predicts:
                show_chart(
                    lambda: charts.budget_lines(
                        table,
                        "mae",
                        n_total=n,
                        fits={"": mae_fit},
                        y_title="MAE",
                        title="Sample-level error (MAE) vs budget",
                    ),
                    "mae_vs_budget",
                    key=(key, cfg),  # built once per server for these settings
                )
                if mae_fit.ok:
                    p = mae_fit.params
                    st.caption(
                        f"Fitted E = a·exp(−b·n′) + c: a = {p['a']:.4g}, b = {p['b']:.4g}, c = {p['c']:.4g} "
                        f"(R² {mae_fit.r2:.3f}); c is the error that more samples cannot remove (Prabhu et al., 2024, §4.2)."
                    )
                else:
                    st.caption(f"No exponential fit: {mae_fit.message}.")
            else:
                st.info(
                    f"{search} predicts no sample it was not run on, so it has no sample-level error (MAE): "
                    "its accuracy error E_agg is on the right."
                )
        with right:
            if curves_vs is None or t_first is None:
                eagg_table, series, eagg_fits = table, None, {"": eagg_fit}
            else:
                names = {
                    search: controls.method_label(search),
                    BASELINE_METHOD: "random sample (exact expected error)",
                    LIMIT_METHOD: controls.method_label(LIMIT_METHOD),
                }
                eagg_table = pd.concat(
                    [
                        table.assign(method=names[search]),
                        # An exact expectation: no band of its own.
                        curves_vs[["budget"]]
                        .assign(eagg=curves_vs["random_eagg"])
                        .assign(method=names[BASELINE_METHOD]),
                        t_first.assign(method=names[LIMIT_METHOD]),
                    ],
                    ignore_index=True,
                )
                series, eagg_fits = "method", {names[search]: eagg_fit}
            show_chart(
                lambda: charts.budget_lines(
                    eagg_table,
                    "eagg",
                    series=series,
                    n_total=n,
                    fits=eagg_fits,
                    y_title="E_agg",
                    title="Aggregate accuracy error E_agg vs budget"
                    + (" (against the baselines)" if curves_vs is not None else ""),
                ),
                "eagg_vs_budget",
                key=(key, cfg),  # built once per server for these settings
            )
            if eagg_fit.ok:
                p = eagg_fit.params
                st.caption(
                    f"Fitted E_agg = c·n′^p: c = {p['c']:.4g}, p = {p['p']:.3f} (R² {eagg_fit.r2:.3f}; Prabhu et al. (2024, *Lifelong Benchmarks*) §5)."
                )
            else:
                st.caption(f"No power-law fit: {eagg_fit.message}.")
        if predicts:
            show_chart(
                lambda: charts.budget_lines(
                    table,
                    "kappa",
                    n_total=n,
                    y_title="κ",
                    title="Normalized agreement κ vs budget (Prabhu et al., 2024, *Lifelong Benchmarks*, Eq. 4)",
                ),
                "kappa_vs_budget",
                key=(key, cfg),  # built once per server for these settings
            )
        show_table(table, "sweep_table")
        if verdict is not None or curves_vs is not None:
            st.markdown("**Against the baselines**")
            st.caption(
                "The baselines: a random sample (n′ items drawn uniformly at random: `random_pts` is its exact "
                "expected error) and first-n (the first items of each task, which is what `lm_eval --limit` runs; "
                "biased). `mae_vs_random` below 1: the chosen method's accuracy error is smaller than a random "
                "sample's at the same budget; `equivalent_budget`: the random sample size with the same error; "
                "`paper_saving`: n / n′, the paper's figure, a saving against running every item."
            )
            if verdict is not None:
                show_table(verdict, "eagg_vs_random")
            elif curves_vs is not None:
                show_table(curves_vs, "eagg_vs_random")
            if verdict_note:
                st.caption(verdict_note)
            if verdict_command:
                st.code(verdict_command, language="bash", wrap_lines=True)
        with st.expander("Per-model estimates"):
            show_table(per_model, "per_model")

with tabs[1]:
    if tabs[1].open:
        st.markdown(
            "CopyNearest&Expand samples n′ points at random *without* the Sort order and copies the rest from the "
            "Sort model that agrees most on them (Prabhu et al., 2024, §4.2, Key Result 3)."
        )
        t_cn, _, _, _ = controls.run_config(
            cfg, sel, search="copy-nearest", label="Running CopyNearest&Expand…"
        )
        both = pd.concat(
            [
                table.assign(method=f"Sort & Search ({search})"),
                t_cn.assign(method="CopyNearest&Expand"),
            ],
            ignore_index=True,
        )
        show_chart(
            charts.budget_lines(
                both,
                "mae",
                series="method",
                n_total=n,
                y_title="MAE",
                title="Sort & Search vs CopyNearest&Expand",
            ),
            "ss_vs_copynearest",
        )
        show_table(
            both[["method", "budget", "mae", "eagg", "kappa", "pearson", "spearman"]],
            "ss_vs_copynearest",
        )

with tabs[2]:
    if tabs[2].open:
        # The decomposition is of a threshold rule: the sidebar's, or the default rule when
        # the sidebar's method is an estimator (as the design study does).
        rule = design_rule(search)
        if "aleatoric" not in table:  # a large store computes it only here
            table, _, _, _ = controls.run_config(
                cfg, sel, search=rule, decompose=True, label="Decomposing the error…"
            )
        if rule != search:
            st.caption(
                f"The error decomposition is of a threshold rule; shown for {rule}, since {search} "
                "is not one."
            )
        if "aleatoric" not in table:
            st.info(
                "The error decomposition applies to threshold rules (midpoint, reference); choose one in the sidebar."
            )
        else:
            st.markdown(
                "**Aleatoric** error is what the best threshold on the full sorted row still gets wrong (the order "
                "is imperfect); **epistemic** is the distance of the chosen threshold from that best one, which "
                "more samples remove (Prabhu et al., 2024, §4.5)."
            )
            long = studies.long_with_bands(table, ["mae", "aleatoric", "epistemic"], "error")
            show_chart(
                charts.budget_lines(
                    long,
                    "value",
                    series="error",
                    n_total=n,
                    y_title="error (fraction of n)",
                    title="Error decomposition vs budget",
                ),
                "error_decomposition",
            )
            st.caption(
                "κ splits the same way (Prabhu et al., 2024, Lifelong Benchmarks, §6): κ_aleatoric = κ(a, y*) is "
                "the agreement the best threshold reaches, κ_epistemic = κ(y*, y) how far the chosen threshold "
                "agrees with it."
            )
            show_table(
                table[
                    [
                        "budget",
                        "mae",
                        "aleatoric",
                        "epistemic",
                        "kappa",
                        "kappa_aleatoric",
                        "kappa_epistemic",
                    ]
                ],
                "error_decomposition",
            )

with tabs[3]:
    if tabs[3].open:
        rule = design_rule(search)
        st.markdown(
            f"Three design choices of Prabhu et al. (2024) Fig. 4b-d, each varied with the others as in the sidebar "
            f"(search rule: {rule})."
        )
        runs = design_runs(sel.models, rows, how, seed, sort, sampling)
        if not runs:
            st.info("Too few models in the store for this comparison.")
        else:
            bar3 = st.progress(0.0, text="Sweeping design choices…")
            parts, left_out = studies.design_choice_tables(
                cfg, sel, rule, progress=lambda f: bar3.progress(f, text="Sweeping design choices…")
            )
            bar3.empty()
            for note in left_out:
                st.caption(note)
            titles = {
                "sort_models": (
                    "Number of Sort models (Fig. 4b)",
                    (
                        "Nested Sort sets; every curve is scored on the same "
                        "models, those outside the largest set."
                    ),
                ),
                "sort_method": (
                    "Sort method (Fig. 4c)",
                    "Sorting by Sum, by confidence sum, by Recursive Sum.",
                ),
                "sampling": (
                    "Sampling (Fig. 4d)",
                    "Uniform vs random positions along the sorted order.",
                ),
            }
            for what, (title, note) in titles.items():
                if not parts[what]:
                    continue
                effect = pd.concat(parts[what], ignore_index=True)
                show_chart(
                    charts.budget_lines(
                        effect, "mae", series=what, n_total=n, y_title="MAE", title=title
                    ),
                    what,
                )
                st.caption(note)
                show_table(effect, what)

with tabs[4]:
    if tabs[4].open:
        st.markdown(
            "How far the data obeys one difficulty order: correlation between every pair of models' correctness "
            "vectors, models sorted by accuracy (Prabhu et al., 2024, App. E, Fig. 7). Where families disagree (low or negative "
            "correlations), one global Sort order fits badly and CopyNearest&Expand can win."
        )
        corr, note = caches.correlation(key, dataset, dom_key)
        if note:
            st.caption(note)
        ordered = [sel.names[i] for i in corr.order]
        pairs = corr.corr[np.triu_indices(len(ordered), 1)]
        cc = st.columns(4)
        cc[0].metric("model pairs", f"{len(pairs):,}")
        cc[1].metric("median correlation", f"{np.nanmedian(pairs):.3f}")
        cc[2].metric("negative pairs", f"{np.mean(pairs < 0):.1%}")
        cc[3].metric("undefined (constant rows)", f"{int(np.isnan(pairs).sum())}")
        left, right = st.columns([3, 2])
        with left:
            show_chart(
                charts.correlation_heatmap(
                    corr.corr, ordered, corr.accuracy, title="Model-by-model correlation"
                ),
                "model_correlation",
            )
        with right:
            show_chart(
                charts.histogram(
                    pairs,
                    title="Distribution of the pairwise correlations",
                    x_title="correlation",
                    vline=0.0,
                ),
                "correlation_distribution",
            )
        with st.expander("Models by accuracy rank (the heatmap's axes)"):
            show_table(
                pd.DataFrame(
                    {
                        "rank": np.arange(1, len(ordered) + 1),
                        "model": ordered,
                        "family": sel.models["family"].to_numpy(dtype=object)[corr.order],
                        "accuracy": corr.accuracy,
                    }
                ),
                "models_by_accuracy",
            )
        st.markdown("**Mean correlation within and between model families**")
        show_table(family_correlation(corr, sel.models), "family_correlation")
        download_table(corr.frame(ordered).reset_index(names="model"), "correlation_matrix")

with tabs[5]:
    if tabs[5].open:
        studies.new_samples_tab(cfg, sel)
