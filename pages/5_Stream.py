"""Stream: replay the store in release order; evaluations spent, error of the estimates, Pareto front (Bornschein et al. (2023)'s view)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from lifelong_core.sortsearch import RULES
from lifelong_core.workflows.budgets import single_budget_choices
from lifelong_core.workflows.stream import (
    DEFAULT_SEED,
    SAMPLINGS,
    config_grid,
    default_budget,
    default_pool,
    pareto_front,
)
from ui import caches, charts, controls, studies
from ui.common import (
    input_errors,
    picked,
    provenance_note,
    query_default,
    show_chart,
    show_table,
    sync_query,
)
from ui.store_dataset import pick_dataset

st.set_page_config(page_title="Stream", layout="wide")
st.title("Stream")
st.markdown(
    "Models arrive one by one in release order, as in a lifelong benchmark. The first few are evaluated on every "
    "sample; each later one is estimated by Sort & Search from **n′** evaluations, and its predicted row joins the "
    "cache (serial additions, Prabhu et al. (2024) App. G). Like Nevis'22 (Bornschein et al., 2023, §3), configurations are compared by the "
    "Pareto front of error against compute over the whole stream."
)

key = caches.store_key()
side = st.sidebar
dataset = pick_dataset()
with input_errors():
    sel, note = caches.bounded(key, dataset, ())
m, n = sel.A.shape
provenance_note(sel.synthetic, dataset)
if note:
    st.caption(note)
if sel.models["release_order"].isna().all():
    st.caption("The models carry no release order; they arrive in insertion order.")
else:
    st.caption(
        "Models arrive by the store's release_order. In the bundled demo store that order is simulated (a "
        "plausible timeline, older model families first): its classifiers were all trained at build time."
    )

pool = controls.int_slider(
    side, "Models evaluated in full at the start", 1, m - 1, "pool", default_pool(m)
)
choices = single_budget_choices(n)
raw_b = query_default("budget", default_budget(n), int)
budget: int = picked(
    side.selectbox(
        "Budget n′ per new model",
        choices,
        index=choices.index(raw_b) if raw_b in choices else 0,
        key="budget",
    )
)
raw_s = query_default("sampling", SAMPLINGS[0])
sampling: str = picked(
    side.radio(
        "Sampling",
        list(SAMPLINGS),
        index=SAMPLINGS.index(raw_s) if raw_s in SAMPLINGS else 0,
        key="sampling",
        horizontal=True,
    )
)
raw_r = query_default("rule", RULES[0])
rule: str = picked(
    side.selectbox(
        "Threshold rule",
        list(RULES),
        index=list(RULES).index(raw_r) if raw_r in RULES else 0,
        key="rule",
    )
)
seed = controls.int_input(side, "Seed", 0, 2**31 - 1, "seed", DEFAULT_SEED)
window = side.slider(
    "Rolling window (models)",
    1,
    100,
    int(np.clip(query_default("window", 20, int), 1, 100)),
    key="window",
)
sync_query(
    ds=dataset, pool=pool, budget=budget, sampling=sampling, rule=rule, seed=seed, window=window
)

with input_errors():
    steps = caches.stream_replay(key, dataset, pool, budget, sampling, rule, seed)
last = steps.iloc[-1]
c = st.columns(4)
c[0].metric("models in the stream", m)
c[1].metric("evaluations spent", f"{int(last['evaluations_ss']):,}")
c[2].metric("full evaluation", f"{int(last['evaluations_full']):,}")
c[3].metric(
    "n / n′ (the paper's figure)",
    f"{last['evaluations_full'] / last['evaluations_ss']:.1f}×",
    help="A saving against evaluating every model on every sample (Prabhu et al., 2024, footnote "
    "4), not against a random sample of the same size, which costs the same evaluations: the "
    "Budget explorer and Backtest compare the two.",
)

st.subheader("Evaluations spent over time")
show_chart(
    charts.stream_lines(
        steps,
        x="models_seen",
        ys=["evaluations_full", "evaluations_ss"],
        names=["evaluate every model in full", f"Sort & Search, n′ = {budget}"],
        x_title="models released so far",
        y_title="evaluations (model × sample)",
        log_y=True,
        title="Cumulative evaluations",
    ),
    "stream_evaluations",
)

st.subheader("Error of the estimates as the pool grows")
roll = steps[["models_seen", "mae", "eagg"]].copy()
roll["mae_rolling"] = roll["mae"].rolling(window, min_periods=1).mean()
roll["eagg_rolling"] = roll["eagg"].rolling(window, min_periods=1).mean()
show_chart(
    charts.stream_lines(
        roll,
        x="models_seen",
        ys=["mae_rolling", "eagg_rolling"],
        names=[
            f"MAE (rolling mean of {window})",
            f"|estimated − true accuracy| (rolling mean of {window})",
        ],
        x_title="models released so far",
        y_title="error",
        title="Error of each new model's estimate",
    ),
    "stream_error",
)
unchanged = steps["order_unchanged"].mean()
st.caption(
    f"After adding each prediction the Sort order was re-computed: it stayed the same in {unchanged:.0%} of the "
    "steps (App. G argues it never changes, so no error accumulates)."
)
with st.expander("Every arriving model"):
    show_table(
        steps[
            [
                "models_seen",
                "name",
                "threshold",
                "est_acc",
                "true_acc",
                "eagg",
                "mae",
                "order_unchanged",
                "evaluations_ss",
                "evaluations_full",
            ]
        ],
        "stream_steps",
    )

st.subheader("Pareto front: error against evaluations over the whole stream")
st.caption(
    "Every configuration here is scored on the whole stream, so picking the best of them looks at models that "
    "arrive later; the Nevis'22 protocol below chooses on the early stream and scores on the later one."
)
metric: str = picked(
    side.radio(
        "Pareto error",
        ["mae", "eagg"],
        index=1 if query_default("perr", "mae") == "eagg" else 0,
        key="perr",
        horizontal=True,
        format_func=lambda v: {"mae": "MAE", "eagg": "E_agg"}[v],
    )
)
sync_query(perr=metric)
pools, budgets = config_grid(m, n, pool)
bar = st.progress(0.0, text="Scoring configurations…")
with input_errors(cleanup=bar.empty):
    configs = caches.stream_configs(
        key,
        dataset,
        pools,
        budgets,
        seed,
        progress=lambda f: bar.progress(min(float(f), 1.0), text="Scoring configurations…"),
    )
bar.empty()
front = pareto_front(configs, "evaluations", metric)
configs = configs.assign(setting=configs["sampling"] + ", " + configs["rule"])
show_chart(
    lambda: charts.pareto(
        configs,
        x="evaluations",
        y=metric,
        label="config",
        front=front,
        colour="setting",
        x_title="evaluations over the stream",
        y_title={"mae": "mean MAE", "eagg": "mean E_agg"}[metric],
        title=f"{len(configs)} configurations (pool sizes {', '.join(map(str, pools))})",
    ),
    "stream_pareto",
    key=(key, dataset, pools, budgets, seed, metric),  # built once per server for these settings
)
st.caption(
    "Each point is one configuration: how many models are evaluated in full first, the budget n′ for every "
    "later model, sampling and threshold rule. Error is averaged over every model of the stream, those "
    "evaluated in full counting as exact. Points on the black line are not beaten on both axes at once."
)
show_table(front.drop(columns=["full_evaluations"]), "pareto_front")
with st.expander("All configurations"):
    show_table(configs.drop(columns=["setting"]), "stream_configurations")

studies.stream_protocol_section(dataset, sel, seed)
