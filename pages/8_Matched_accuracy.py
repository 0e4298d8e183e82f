"""Matched accuracy: compare a model on two similar-but-non-identical test sets (Anzaku et al.).

Widgets -> lifelong_core.matching -> plotly. The protocol (Algorithm 1: same predicted
label and probability within epsilon; Algorithm 2: probability only) and every number
shown come from ``lifelong_core.matching``; this page only picks inputs and draws.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from lifelong_core import limits
from lifelong_core.limits import MAX_APP_MATCH_RUNS, MAX_SEED, check_match_work
from lifelong_core.matching import (
    accuracy_vs_confidence,
    matched_accuracy,
    subset_density,
    subset_reliability,
)
from lifelong_core.matching.store_pair import (
    DEMO_DATASET,
    DEMO_SOURCE_DOMAIN,
    DEMO_TARGET_DOMAIN,
    Side,
    compare_store_models,
    load_pair,
    model_names,
    read_samples,
)
from lifelong_core.workflows.selection import recorded_models
from ui.common import (
    NO_DATA,
    get_store,
    input_errors,
    plain,
    query_default,
    query_list,
    show_chart,
    show_table,
    store_path,
    sync_query,
)

ALL = "All models"
CRITERIA = {
    "label-prob": "predicted label and probability (Algorithm 1)",
    "prob": "probability only (Algorithm 2)",
}
BLUE, ORANGE, GREY = "#1f77b4", "#ff7f0e", "#7f7f7f"
SUBSET_COLOURS = {
    "source": BLUE,
    "target": ORANGE,
    "matched source": "#17becf",
    "matched target": "#d62728",
    "unmatched target": GREY,
}
BLOCKS = 20  # all-model runs are cached and reported in this many blocks of models


# ------------------------------------------------------------------ cached computations
def _store_key() -> tuple[str, float]:
    path = store_path()
    return str(path), path.stat().st_mtime


@st.cache_data(show_spinner=False, max_entries=32)
def pair_samples(store_key, src: tuple, tgt: tuple):
    return read_samples(get_store(), Side(*src), Side(*tgt))


@st.cache_data(show_spinner=False, max_entries=256)
def block_table(
    store_key, src: tuple, tgt: tuple, rows: tuple, eps: float, crit: str, runs: int, seed: int
):
    """One block of models through the same call the benchmark times."""
    comparison, skipped = compare_store_models(
        get_store(),
        pair_samples(store_key, src, tgt),
        list(rows),
        eps=eps,
        criterion=crit,
        runs=runs,
        seed=seed,
        require_any=False,
    )
    return comparison.table, skipped


@st.cache_data(show_spinner="Matching...", max_entries=64)
def one_model(
    store_key, src: tuple, tgt: tuple, row: int, eps: float, crit: str, runs: int, seed: int
):
    data = load_pair(get_store(), pair_samples(store_key, src, tgt), [row])
    source, target = data.predictions(data.models[0])
    summary = matched_accuracy(source, target, eps=eps, criterion=crit, runs=runs, seed=seed)
    return {
        "model": data.models[0],
        "metrics": summary.to_json_dict(),
        "n_source": summary.n_source,
        "n_target": summary.n_target,
        "per_run": summary.per_run,
        "se": {c: summary.standard_error(c) for c in ("matched_acc_source", "matched_acc_target")},
        "reliability": subset_reliability(source, target, summary.matches, bins=10),
        "density": subset_density(source, target, summary.matches, bins=20),
    }


# ------------------------------------------------------------------ charts
def _pct_axes(fig: go.Figure, x_title: str, y_title: str, x_pct: bool = False) -> go.Figure:
    fig.update_layout(
        xaxis_title=x_title,
        yaxis_title=y_title,
        legend=dict(orientation="h", y=-0.25),
        margin=dict(l=10, r=10, t=40, b=10),
        height=420,
    )
    fig.update_yaxes(tickformat=".0%")
    if x_pct:
        fig.update_xaxes(tickformat=".0%")
    return fig


def _model_lines(table: pd.DataFrame, lines: tuple, title: str, y_title: str) -> go.Figure:
    """One line per ``(column, name, colour, dash)`` over the models in the table's order."""
    x = list(range(1, len(table) + 1))
    fig = go.Figure()
    for col, name, colour, dash in lines:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=table[col],
                name=name,
                mode="lines",
                line=dict(color=colour, dash=dash, width=1.5),
                text=table["model"],
                hovertemplate="%{text}<br>%{y:.1%}<extra>" + name + "</extra>",
            )
        )
    fig.update_layout(title=title)
    return _pct_axes(fig, "model (sorted by increasing source accuracy)", y_title)


def fig_accuracy(table: pd.DataFrame) -> go.Figure:
    return _model_lines(
        table,
        (
            ("acc_source", "accuracy, source", BLUE, "solid"),
            ("acc_target", "accuracy, target", ORANGE, "solid"),
            ("matched_acc_source", "matched accuracy, source", BLUE, "dot"),
            ("matched_acc_target", "matched accuracy, target", ORANGE, "dot"),
        ),
        "Accuracy and matched accuracy",
        "accuracy",
    )


def fig_gaps(table: pd.DataFrame) -> go.Figure:
    return _model_lines(
        table,
        (
            ("acc_diff", "accuracy difference (source - target)", ORANGE, "solid"),
            ("matched_acc_diff", "matched accuracy difference", BLUE, "dot"),
            ("fraction_unmatched", "fraction unmatched", GREY, "dash"),
        ),
        "Gaps and fraction unmatched",
        "difference / fraction",
    )


def fig_gaps_top(table: pd.DataFrame, n: int) -> go.Figure:
    """The ``n`` models with the largest accuracy gap, named, as paired bars: readable where
    hundreds of models make the line chart a band."""
    top = (
        table.reindex(table["acc_diff"].abs().sort_values(ascending=False).index).head(n).iloc[::-1]
    )
    fig = go.Figure()
    for col, name, colour in (
        ("acc_diff", "accuracy difference (source - target)", ORANGE),
        ("matched_acc_diff", "matched accuracy difference", BLUE),
    ):
        fig.add_trace(
            go.Bar(
                y=top["model"],
                x=top[col],
                name=name,
                orientation="h",
                marker_color=colour,
                hovertemplate="%{y}<br>%{x:.1%}<extra>" + name + "</extra>",
            )
        )
    fig.update_layout(
        title=f"The {len(top)} largest accuracy gaps and their matched gaps",
        barmode="group",
        height=max(360, 22 * len(top) + 140),
        legend=dict(orientation="h", y=-0.12),
        margin=dict(l=10, r=10, t=40, b=10),
    )
    fig.update_yaxes(automargin=True)
    fig.update_xaxes(tickformat=".0%", title="difference")
    return fig


def fig_confidence(points: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for side, colour in (("source", BLUE), ("target", ORANGE)):
        part = points[points["dataset"] == side]
        fig.add_trace(
            go.Scatter(
                x=part["confidence"],
                y=part["accuracy"],
                mode="markers",
                name=side,
                marker=dict(color=colour, size=6, opacity=0.7),
                text=part["model"],
                hovertemplate="%{text}<br>confidence %{x:.1%}<br>accuracy %{y:.1%}<extra></extra>",
            )
        )
    lo = float(min(points["confidence"].min(), points["accuracy"].min()))
    fig.add_trace(
        go.Scatter(
            x=[lo, 1],
            y=[lo, 1],
            mode="lines",
            name="accuracy = confidence",
            line=dict(color=GREY, dash="dash"),
        )
    )
    fig.update_layout(title="Accuracy versus mean confidence, one point per model and set")
    return _pct_axes(fig, "mean predicted probability (confidence)", "accuracy", x_pct=True)


def fig_reliability(rel: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for name, part in rel.groupby("subset", sort=False):
        part = part[part["count"] > 0]
        fig.add_trace(
            go.Scatter(
                x=part["confidence"],
                y=part["accuracy"],
                mode="lines+markers",
                name=name,
                line=dict(color=SUBSET_COLOURS.get(name)),
                customdata=part["count"],
                hovertemplate="confidence %{x:.1%}<br>accuracy %{y:.1%}<br>n = %{customdata}"
                "<extra>" + name + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="perfect calibration",
            line=dict(color="black", dash="dash", width=1),
        )
    )
    fig.update_layout(title="Accuracy versus confidence per subset (10 bins)")
    return _pct_axes(
        fig, "confidence (mean predicted probability in the bin)", "accuracy", x_pct=True
    )


def fig_density(den: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for name, part in den.groupby("subset", sort=False):
        fig.add_trace(
            go.Scatter(
                x=part["p"],
                y=part["density"],
                mode="lines",
                name=name,
                line_shape="hvh",
                line=dict(color=SUBSET_COLOURS.get(name)),
            )
        )
    fig.update_layout(title="Density of predicted probabilities per subset")
    fig = _pct_axes(fig, "predicted probability", "density", x_pct=True)
    fig.update_yaxes(tickformat="")
    return fig


def _fmt(value) -> str:
    return (
        "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1%}"
    )


def show_model_detail(store_key, src, tgt, row, eps, crit, runs, seed, label_suffix="") -> None:
    with input_errors(stop=False) as box:
        detail = one_model(store_key, src, tgt, row, eps, crit, runs, seed)
    if not box.ok:
        return
    m = detail["metrics"]
    cols = st.columns(6)
    cols[0].metric("Accuracy, source", _fmt(m["acc_source"]))
    cols[1].metric("Accuracy, target", _fmt(m["acc_target"]))
    cols[2].metric("Matched acc., source", _fmt(m["matched_acc_source"]))
    cols[3].metric("Matched acc., target", _fmt(m["matched_acc_target"]))
    cols[4].metric("Fraction unmatched", _fmt(m["fraction_unmatched"]))
    cols[5].metric("Acc. on unmatched", _fmt(m["acc_unmatched"]))
    se = detail["se"]
    se_text = (
        f" Standard error over runs: ±{se['matched_acc_source']:.2%} (matched source), "
        f"±{se['matched_acc_target']:.2%} (matched target)."
        if not any(math.isnan(v) for v in se.values())
        else ""
    )
    st.caption(
        f"Model **{plain(detail['model'])}**: {detail['n_source']} source and {detail['n_target']} target datapoints; "
        f"on average {m['n_matched']:.1f} targets matched per run.{se_text} Matched and unmatched subsets below "
        f"are pooled over the {runs} runs. Accuracy on the unmatched shows — when every target found a match."
    )
    # Built once per server for these settings, not once per visitor.
    same = (store_key, src, tgt, row, eps, crit, runs, seed)
    left, right = st.columns(2)
    with left:
        show_chart(
            lambda: fig_reliability(detail["reliability"]),
            f"matched-reliability{label_suffix}",
            key=same,
        )
    with right:
        show_chart(
            lambda: fig_density(detail["density"]), f"matched-density{label_suffix}", key=same
        )
    with st.expander("Per-run results"):
        show_table(detail["per_run"], f"matched-per-run{label_suffix}")
    with st.expander("Reliability and density tables"):
        show_table(detail["reliability"], f"matched-reliability-table{label_suffix}")
        show_table(detail["density"], f"matched-density-table{label_suffix}")


# ------------------------------------------------------------------ page
st.set_page_config(page_title="Matched accuracy", layout="wide")
st.title("Matched accuracy")
st.markdown(
    "Is a model really worse on a new, similar test set, or does it *say* it is less sure there? "
    "For every target datapoint in turn, the protocol of *A Principled Evaluation Protocol ... on "
    "Similar-but-non-identical Datasets* (§2, Algorithms 1 and 2) draws at random, without "
    "replacement, a source datapoint with the same predicted label (Algorithm 1 only) and a "
    "predicted probability within ±ε. **Matched accuracy** is the accuracy on the two matched "
    "subsets, averaged over seeded runs; target datapoints without a partner are *unmatched*."
)

store = get_store()
datasets = store.datasets()["dataset"].tolist()
if not datasets:
    st.info(NO_DATA)
    st.stop()


def side_widgets(role: str, key: str, default_domain: str):
    ds_default = query_default(
        f"{key}_ds", DEMO_DATASET if DEMO_DATASET in datasets else datasets[0]
    )
    if ds_default not in datasets:
        ds_default = datasets[0]
    ds = st.selectbox(
        f"{role} dataset", datasets, index=datasets.index(ds_default), key=f"match-{key}-ds"
    )
    domains = store.domains(ds)["domain"].tolist()
    fallback = [default_domain] if default_domain in domains else []
    raw = st.query_params.get(f"{key}_dom")
    # An empty value in the URL means "whole dataset", not "use the default domain".
    default = [] if raw == "" else query_list(f"{key}_dom", fallback, allowed=domains)
    chosen = st.multiselect(
        f"{role} domains (none = the whole dataset)",
        domains,
        default=default,
        key=f"match-{key}-dom-{ds}",  # per dataset: a domain list never outlives its dataset
    )
    return ds, chosen


c1, c2 = st.columns(2)
with c1:
    src_ds, src_dom = side_widgets("Source", "src", DEMO_SOURCE_DOMAIN)
with c2:
    tgt_ds, tgt_dom = side_widgets("Target", "tgt", DEMO_TARGET_DOMAIN)

# A dataset that records only correctness (lm-eval per-item scores, e.g. the bundled Open LLM
# Leaderboard results) has nothing to match on: say so instead of failing on its first sample.
unlabeled = [
    d for d in dict.fromkeys((src_ds, tgt_ds)) if store.samples(dataset=d)["label"].isna().all()
]
if unlabeled:
    sync_query(
        src_ds=src_ds, src_dom=src_dom, tgt_ds=tgt_ds, tgt_dom=tgt_dom
    )  # the choice stays shareable
    st.info(
        f"Dataset {unlabeled[0]!r} records only whether each answer was correct, with no labels, predicted "
        "labels or probabilities; matched accuracy needs all three. Choose a dataset that has them, or import "
        "them: a long table's columns **label** (the true class), **predicted** (the predicted class) and "
        "**confidence** (max-softmax probability); for a matrix import, label in the samples file and "
        "--predicted/--confidence arrays. lm-eval imports carry none of them."
    )
    st.stop()

models_df = store.models()
# Names over every model, as the comparison names them; only real models recorded on both
# sides are offered (another dataset's models have nothing to compare here).
with input_errors():
    both = set(recorded_models(store, src_ds, src_dom or None)["model_idx"].astype(int)) & set(
        recorded_models(store, tgt_ds, tgt_dom or None)["model_idx"].astype(int)
    )
row_of = {
    nm: int(i) for nm, i in zip(model_names(models_df), models_df["model_idx"]) if int(i) in both
}
names = list(row_of)
if not names:
    st.info(
        "No evaluated model of this store has predictions on both the source and the target samples (rows "
        "inserted as estimated are predictions, not evaluations, and are left out)."
    )
    st.stop()
model_default = query_default("model", ALL)
options = [ALL] + names
model = st.selectbox(
    "Model",
    options,
    index=options.index(model_default) if model_default in options else 0,
    key="match-model",
)

p1, p2, p3, p4 = st.columns([1, 2, 1, 1])
eps_url = query_default("eps", 0.005, float)
eps_url = min(max(eps_url, 0.0), 1.0) if math.isfinite(eps_url) else 0.005
eps = p1.number_input(
    "ε (probability tolerance)",
    min_value=0.0,
    max_value=1.0,
    step=0.001,
    format="%.4f",
    value=eps_url,
    key="match-eps",
)
crit_default = query_default("crit", "label-prob")
crit_keys = list(CRITERIA)
crit = p2.radio(
    "Match by",
    crit_keys,
    format_func=CRITERIA.get,
    horizontal=True,
    index=crit_keys.index(crit_default) if crit_default in crit_keys else 0,
    key="match-crit",
)
runs = int(
    p3.number_input(
        "Runs",
        min_value=1,
        max_value=MAX_APP_MATCH_RUNS,
        step=1,
        value=min(max(query_default("runs", 10, int), 1), MAX_APP_MATCH_RUNS),
        key="match-runs",
    )
)
# The URL's seed is clamped to the widget's range: a 100-digit seed once gave a traceback.
seed = int(
    p4.number_input(
        "Seed",
        min_value=0,
        max_value=MAX_SEED,
        step=1,
        value=min(max(query_default("seed", 0, int), 0), MAX_SEED),
        key="match-seed",
    )
)

sync_query(
    src_ds=src_ds,
    src_dom=src_dom,
    tgt_ds=tgt_ds,
    tgt_dom=tgt_dom,
    model=model,
    eps=eps,
    crit=crit,
    runs=runs,
    seed=seed,
)

src = (src_ds, tuple(src_dom) if src_dom else None)
tgt = (tgt_ds, tuple(tgt_dom) if tgt_dom else None)
key = _store_key()
# What an import must carry for this page; a store without it (lm-eval runs, a long table of
# model, sample, correct only) gets the list of missing columns, not an error.
need = []
for ds, doms in (src, tgt):
    smp = store.samples(ds, list(doms) if doms else None)
    if len(smp) and smp["label"].isna().any() and f"label ({ds})" not in need:
        need.append(f"label ({ds})")
need += [f for f in ("predicted", "confidence") if not store.has_extra(f)]
if need:
    st.info(
        "Matched accuracy compares models by what they predicted and how sure they were, so the data must carry "
        f"what this store lacks: {', '.join(need)}. At import: a long table's columns **label** (the true class of "
        "each sample), **predicted** (the model's predicted class) and **confidence** (its max-softmax probability); "
        "for a matrix import, label in the samples file and --predicted/--confidence arrays. lm-eval imports carry "
        "none of them (answers and log-likelihoods mean different things across tasks). Choose other datasets "
        "above, or re-import with these columns on the Data page."
    )
    st.stop()
with input_errors():
    pair = pair_samples(key, src, tgt)
src_n, tgt_n = len(pair.source_idx), len(pair.target_idx)
st.caption(
    f"Source: {plain(Side(*src).describe())}, {src_n} datapoints. "
    f"Target: {plain(Side(*tgt).describe())}, {tgt_n} datapoints."
)
if 0 < src_n < tgt_n:
    st.warning(
        "The source has fewer datapoints than the target. The paper takes the larger set as the source "
        "(§2.2): each source datapoint can be matched once, so here many targets stay unmatched by construction."
    )
synthetic = store.datasets().set_index("dataset")["synthetic"]
if bool(synthetic.get(src_ds, False)) or bool(synthetic.get(tgt_ds, False)):
    st.caption("Data: **synthetic** (seeded generator), not real model predictions.")

if model != ALL:
    show_model_detail(key, src, tgt, row_of[model], eps, crit, runs, seed)
    st.stop()

rows = list(row_of.values())
with input_errors():
    # A bound on one page view's work: a URL with empty domain lists once cost 130 s of CPU.
    check_match_work(len(rows), runs, src_n, tgt_n)
# Blocks of models whose dense extras (3 fields on the larger side) stay within the dense-read limit.
size = max(1, min(math.ceil(len(rows) / BLOCKS), limits.block_rows(max(src_n, tgt_n), 9 * 3)))
blocks = [tuple(rows[i : i + size]) for i in range(0, len(rows), size)]
bar = st.progress(0.0, text=f"Matching {len(rows)} models x {runs} runs ...")
tables, skipped = [], []
with input_errors(cleanup=bar.empty):
    for k, block in enumerate(blocks):
        table, skip = block_table(key, src, tgt, block, eps, crit, runs, seed)
        tables.append(table)
        skipped.extend(skip)
        bar.progress(
            (k + 1) / len(blocks),
            text=f"Matched {min((k + 1) * size, len(rows))} of {len(rows)} models",
        )
bar.empty()
if skipped:
    st.warning(
        f"{len(skipped)} model(s) left out for lack of predicted labels or confidences "
        f"(e.g. {skipped[0]})."
    )
tables = [t for t in tables if len(t)]
if not tables:
    st.error(
        "No model has both a predicted label and a confidence (max softmax) on these samples: "
        "the store is missing the columns predicted/confidence that matched accuracy needs."
    )
    st.stop()
table = (
    pd.concat(tables, ignore_index=True)
    .sort_values(["acc_source", "model"], kind="stable")
    .reset_index(drop=True)
)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Models", len(table))
m2.metric("Mean accuracy gap", _fmt(float(table["acc_diff"].mean())))
m3.metric("Mean matched gap", _fmt(float(table["matched_acc_diff"].mean())))
m4.metric("Mean fraction unmatched", _fmt(float(table["fraction_unmatched"].mean())))

# Every figure below is built once per server for these settings, not once per visitor.
view = (key, src, tgt, model, eps, crit, runs, seed)
left, right = st.columns(2)
with left:
    show_chart(lambda: fig_accuracy(table), "matched-accuracy-by-model", key=view)
with right:
    show_chart(lambda: fig_gaps(table), "matched-gaps-by-model", key=view)
if len(table) > 30:
    top_n = int(
        st.number_input(
            "Models in the named gaps chart (largest accuracy gaps)",
            min_value=5,
            max_value=len(table),
            key="match-topn",
            value=int(min(max(query_default("topn", 25, int), 5), len(table))),
        )
    )
    sync_query(topn=top_n)
    show_chart(lambda: fig_gaps_top(table, top_n), "matched-gaps-top", key=(view, top_n))
show_chart(
    lambda: fig_confidence(accuracy_vs_confidence(table)), "accuracy-vs-confidence", key=view
)
st.subheader("All models")
show_table(table, "matched-accuracy-all-models")

st.subheader("One model in detail")
detail_default = table["model"].iloc[-1]
detail = st.selectbox(
    "Model to inspect",
    table["model"].tolist(),
    index=table["model"].tolist().index(detail_default),
    key="match-detail",
)
show_model_detail(key, src, tgt, row_of[detail], eps, crit, runs, seed, label_suffix="-detail")
