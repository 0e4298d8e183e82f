"""Backtest: how well do the estimates work on your own data? Hold models out, estimate them from a few items, and
compare error, interval coverage and width with a random sample of the same size.

Widgets only: the rules are lifelong_core.workflows.backtest, the same as ``lbe backtest``.
"""

from __future__ import annotations

import streamlit as st

from lifelong_core.methods.draws import COMMON, PER_MODEL
from lifelong_core.methods.registry import BASELINE_METHOD
from lifelong_core.workflows import backtest as bt
from lifelong_core.workflows.budgets import budget_choices
from ui import caches, charts, controls
from ui.common import (
    code,
    input_errors,
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
    "held-out model is run on the items the method picks for it, and the estimate is compared with its accuracy "
    "on every item. The **random sample** (n′ items drawn uniformly at random, as `lm_eval --limit` gives) is "
    "always in the comparison: a method worth using has a smaller error and narrower intervals that still hold "
    "the truth about 95% of the time. The command line runs the same: `lbe backtest --store S --dataset D`."
)

key = caches.store_key()
dataset = pick_dataset()
with input_errors():
    sel = caches.selection(key, dataset, ())
m, n = sel.A.shape
sync_query(ds=dataset)
provenance_note(sel.synthetic, dataset)
if caches.is_large(sel):
    st.info(
        f"{plain(dataset)} ({m:,} models × {n:,} items) is beyond the app's dense-read limit, and a backtest reads the "
        f"matrix in memory: run it from the command line, which has no such limit: "
        f"`lbe backtest --store STORE --dataset {code(dataset)}`."
    )
    st.stop()

methods_all = controls.method_names()
with st.form("backtest"):
    c = st.columns([3, 2, 1])
    methods = c[0].multiselect(
        "Methods (the random sample is always added)",
        methods_all,
        default=query_list("methods", bt.default_methods(), methods_all),
        format_func=controls.method_label,
        help=controls.method_help(),
    )
    choices = budget_choices(n)
    wanted = [str(b) for b in bt.DEFAULT_BUDGETS if b < n] or [str(choices[len(choices) // 2])]
    budgets = c[1].multiselect(
        "Budgets n′ (items per held-out model)",
        choices,
        default=[int(b) for b in query_list("budgets", wanted, [str(b) for b in choices])],
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
    split = d[0].radio(
        "Which models",
        list(bt.SPLITS),
        index=url_index("split", bt.SPLITS, bt.RANDOM_SPLIT),
        horizontal=True,
        help="random: a new draw of models per repeat; newest: the last by release order; best: the most "
        "accurate (estimating beyond the cache's range is the hard case).",
    )
    repeats = d[1].number_input(
        "Repeats", 1, 20, int(min(max(query_default("repeats", bt.DEFAULT_REPEATS, int), 1), 20))
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

if submitted:
    sync_query(
        ds=dataset,
        methods=methods,
        budgets=sorted(budgets),
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
if not methods or not budgets:
    st.warning("Choose at least one method and one budget.")
    st.stop()

draws = COMMON if common else PER_MODEL
# The view's work is estimated before any of it is done (a URL is anyone's to write).
controls.check_work(
    controls.backtest_work(
        list(dict.fromkeys([*methods, BASELINE_METHOD])),
        m,
        n,
        int(holdout),
        len(budgets),
        int(repeats),
    ),
    "repeats, methods, budgets or held-out models",
)
result = caches.backtest(
    key,
    dataset,
    tuple(methods),
    tuple(sorted(int(b) for b in budgets)),
    int(holdout),
    split,
    int(repeats),
    int(seed),
    draws,
)
table, summary = result.table, result.summary
cfg = result.config
st.caption(
    f"{cfg['holdout']} held-out models ({cfg['split']} split) × {cfg['repeats']} repeat(s): "
    f"{int(table['estimates'].iloc[0])} estimates per method and budget; "
    + (
        "each held-out model's items are its own random draw, so the estimates' errors are independent."
        if draws == PER_MODEL
        else "every held-out model was run on the same items, so their errors move together."
    )
    + " Coverage error bars are exact 95% intervals of the share (Clopper-Pearson); estimates of the same model "
    "over repeats are not independent, so more held-out models narrow them more honestly than more repeats."
)
show_chart(
    charts.backtest_panels(
        table, title=f"Backtest on {dataset}: error, coverage and width by budget"
    ),
    f"backtest_{dataset}",
)
st.markdown(
    "**Per method and budget** (errors and widths in accuracy points; ratios to the random sample)"
)
show_table(table.round(4), f"backtest_table_{dataset}")
st.markdown(
    f"**Items needed**: the smallest budget tried ({min(cfg['budgets'])}-{max(cfg['budgets'])}) at which the mean "
    "absolute error is within 1 and within 2 accuracy points (empty: none of them)."
)
show_table(summary, f"backtest_summary_{dataset}")
with st.expander("Every estimate"):
    show_table(result.per_model, f"backtest_per_model_{dataset}")
