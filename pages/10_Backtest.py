"""Backtest: how well do the estimates work on your own data? Hold models out, estimate them from a few items, and
compare the error with a random sample's and with the first items of each task, with how sure each number is.

Widgets only: the rules are lifelong_core.workflows.backtest, the same as ``lbe backtest``.
"""

from __future__ import annotations

import streamlit as st

from lifelong_core.methods.draws import COMMON, PER_MODEL
from lifelong_core.workflows import backtest as bt
from lifelong_core.workflows.budgets import parse_budgets
from ui import caches, charts, controls
from ui.common import (
    code,
    input_errors,
    picked,
    plain,
    provenance_note,
    query_default,
    query_list,
    show_chart,
    show_table,
    sync_query,
    url_index,
)
from ui.store_dataset import pick_dataset

st.set_page_config(page_title="Backtest", layout="wide")
st.title("Backtest")
st.markdown(
    "Before trusting an estimate, check it on models whose full results you already have. Some models are held "
    "out of the cache; every method is fitted on the rest exactly as `lbe select` / `lbe estimate` fit it, each "
    "held-out model is run several times on the items the method picks for it, and every estimate is compared "
    "with its accuracy on every item. Two baselines are always in the comparison: a **random sample** (n′ items "
    "drawn uniformly at random, with its exact interval) and **first-n** (the first items of each task, which "
    "is what `lm_eval --limit` runs; biased). The error is read against a random sample's exact expected error "
    "on the same models, and as the *equivalent random budget*: how many random items give the same error. "
    "The command line runs the same: `lbe backtest --store S --dataset D`."
)

key = caches.store_key()
dataset = pick_dataset()
overview = caches.overview(key)
doms_all = overview["domains"].loc[overview["domains"]["dataset"] == dataset, "domain"].tolist()
domains = st.multiselect(
    "Tasks (domains)",
    doms_all,
    default=query_list("dom", doms_all, doms_all),
    key=f"bt_dom:{dataset}",
    help="The backtest runs on the items of these tasks (all by default).",
)
if not domains:
    st.warning("Choose at least one task.")
    st.stop()
dom_key = tuple(domains) if len(domains) < len(doms_all) else ()
with input_errors():
    sel = caches.selection(key, dataset, dom_key)
m, n = sel.A.shape
sync_query(ds=dataset, dom=domains)
provenance_note(sel.synthetic, dataset)
if caches.is_large(sel):
    st.info(
        f"{plain(dataset)} ({m:,} models × {n:,} items) is beyond the app's dense-read limit, and a backtest reads the "
        f"matrix in memory: run it from the command line, which has no such limit: "
        f"`lbe backtest --store STORE --dataset {code(dataset)}`."
    )
    st.stop()

methods_all = controls.method_names()
budget_text = query_default(
    "budgets", ",".join(str(b) for b in bt.DEFAULT_BUDGETS if b < n) or str(max(1, n // 2))
)
with st.form("backtest"):
    c = st.columns([3, 2, 1])
    methods = c[0].multiselect(
        "Methods (the random sample and first-n are always added)",
        methods_all,
        default=query_list("methods", bt.default_methods(), methods_all),
        format_func=controls.method_label,
        help=controls.method_help(),
    )
    budgets_raw = c[1].text_input(
        "Budgets n′ (items per held-out model)",
        value=budget_text,
        help=f"Whole numbers from 1 to {n:,}, separated by commas.",
    )
    holdout_max = max(1, m - 2)
    holdout = c[2].number_input(
        "Models held out",
        1,
        holdout_max,
        int(
            min(
                max(query_default("holdout", min(bt.DEFAULT_HOLDOUT, holdout_max), int), 1),
                holdout_max,
            )
        ),
    )
    d = st.columns(4)
    split: str = picked(
        d[0].radio(
            "Which models",
            list(bt.SPLITS),
            index=url_index(
                "split",
                bt.SPLITS,
                bt.SPLIT_ALIASES.get(query_default("split", ""), bt.RANDOM_SPLIT),
            ),
            format_func=lambda s: f"{s}: {bt.SPLIT_WORDS[s]}",
            help="random: models like your cache's, drawn with the seed (the models a random Sort set of the "
            "others leaves out); newest: the last by release order; beyond-cache: the most accurate, none below a "
            "cached model (estimating beyond the cache's range is the hard case).",
        )
    )
    repeats = d[1].number_input(
        "Draws per model (repeats)",
        1,
        100,
        int(min(max(query_default("repeats", bt.DEFAULT_REPEATS, int), 1), 100)),
        help="Each held-out model is run this many times on fresh items: per-model coverage needs at least 2, "
        "and 20 tell a model its interval misses from noise.",
    )
    seed = d[2].number_input(
        "Seed", 0, 2**31 - 1, min(max(0, query_default("seed", 0, int)), 2**31 - 1)
    )
    common = d[3].toggle(
        "Same items for every model",
        value=query_default("common", False, bool),
        help="Off: each held-out model's items are its own random draw, so errors are independent and the "
        "coverage counts are honest. On: one item set for all (their errors then move together).",
    )
    submitted = st.form_submit_button("Run the backtest", type="primary")

with input_errors():
    budgets = parse_budgets(budgets_raw, n)
if submitted:
    sync_query(
        ds=dataset,
        dom=domains,
        methods=methods,
        budgets=budgets,
        holdout=int(holdout),
        split=split,
        repeats=int(repeats),
        seed=int(seed),
        common=bool(common),
        run=True,
    )
if not (submitted or query_default("run", False, bool)):
    st.info(
        f"Choose the methods and budgets and run the backtest ({m} models × {n:,} items of {plain(dataset)}; on "
        "the demo data it takes seconds to a minute, most of it fitting the model-based methods)."
    )
    st.stop()
if not methods:
    st.warning("Choose at least one method.")
    st.stop()

draws = COMMON if common else PER_MODEL
run = list(dict.fromkeys([*methods, *controls.BASELINES]))
# A model-based estimator is scored on a seeded subset of many held-out models, as the sweep
# pages score it, to stay interactive; lbe backtest --scored gives the same numbers.
scored = bt.interactive_scored(run, int(holdout), controls.EVAL_CAP)
# The view's work is estimated before any of it is done (a URL is anyone's to write).
controls.check_work(
    controls.backtest_work(run, m, n, int(holdout), len(budgets), int(repeats), scored),
    "repeats, methods, budgets or held-out models",
)
result = caches.backtest(
    key,
    dataset,
    tuple(methods),
    tuple(budgets),
    int(holdout),
    split,
    int(repeats),
    int(seed),
    draws,
    domains=dom_key,
    scored=scored,
)
table, summary, cfg = result.table, result.summary, result.config
st.caption(
    f"{cfg['holdout']} held-out models ({bt.SPLIT_WORDS[cfg['split']]}) × {cfg['repeats']} draw(s) each, a "
    f"cache of {cfg['models'] - cfg['holdout']} models: {int(table['estimates'].iloc[0])} estimates per method "
    "and budget; "
    + (
        f"{scored} of the held-out models are scored (a seeded subset, to stay interactive; the command "
        "line scores all of them unless given --scored); "
        if scored is not None
        else ""
    )
    + (
        "each held-out model's items are its own random draw, so the estimates' errors are independent."
        if draws == PER_MODEL
        else "every held-out model was run on the same items, so their errors move together."
    )
    + " Error bars: 95% intervals, bootstrap over the held-out models for the ratio to random, exact "
    "(Clopper-Pearson) for the coverage."
)
st.markdown("**Verdict**")
st.markdown("\n".join(f"- {v}" for v in result.verdicts()))
left, right = st.columns([3, 2])
with left:
    show_chart(
        charts.backtest_panels(
            table, title=f"Backtest on {dataset}: error, coverage and width by budget"
        ),
        f"backtest_{dataset}",
    )
with right:
    show_chart(
        charts.backtest_ratio(table, title="Error against a random sample's (1 = as good)"),
        f"backtest_ratio_{dataset}",
    )
st.markdown(
    "**Per method and budget**: errors and widths in accuracy points; `random_pts` a random sample's exact "
    "expected error on the same models; `mae_vs_random` the error over it; `equivalent_budget` the random "
    "sample size with the same error and `saving` that over n′ (each with its 95% bootstrap interval)."
)
show_table(table.round(4), f"backtest_table_{dataset}")
if len(result.coverage):
    first = result.coverage.iloc[0]
    low, reps = int(first["low_count"]), int(first["repeats"])
    st.markdown("**Coverage per held-out model**")
    if low < 0:
        st.caption(
            "One draw per model says nothing about a model's own coverage: run at least two (20 tell a "
            "model the interval misses from noise)."
        )
    else:
        st.caption(
            f"Over each model's {reps} draws: the worst model's coverage with its exact 95% interval, and the "
            f"share of models covered in {low} of {reps} draws or fewer, beside the {first['expected_share']:.1%} "
            "that binomial noise alone gives a well-calibrated 95% interval. Coverage averaged over models can hide "
            "a model the interval misses again and again."
        )
    show_table(result.coverage.round(4), f"backtest_coverage_{dataset}")
st.markdown(
    "**By accuracy range** (quintiles of the held-out models' accuracy): where the error and the coverage come from."
)
show_table(result.by_range.round(4), f"backtest_by_range_{dataset}")
st.markdown(
    f"**Items needed**: the smallest budget tried ({min(cfg['budgets'])}-{max(cfg['budgets'])}) at which the mean "
    "absolute error is within 1 and within 2 accuracy points (empty: none of them)."
)
show_table(summary, f"backtest_summary_{dataset}")
st.caption("The same numbers from the command line:")
st.code(
    bt.command(
        dataset,
        list(methods),
        budgets,
        domains=dom_key,
        holdout=int(holdout),
        split=split,
        repeats=int(repeats),
        seed=int(seed),
        draws=draws,
        scored=scored,
    ),
    language="bash",
    wrap_lines=True,
)
with st.expander("Every estimate"):
    show_table(result.per_model, f"backtest_per_model_{dataset}")
