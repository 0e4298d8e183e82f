"""Matched accuracy: compare a model on two similar-but-non-identical test sets (Anzaku et al.).

Widgets -> ui.caches (cached ``lifelong_core.matching``) and
``lifelong_core.workflows.matching`` (which models and data can be compared) ->
ui.matching (the figures). The protocol (Algorithm 1: same predicted label and probability
within epsilon; Algorithm 2: probability only) and every number shown come from
``lifelong_core.matching``; this page only picks inputs and lays them out.
"""

from __future__ import annotations

import math

import streamlit as st

from lifelong_core.limits import MAX_APP_MATCH_RUNS, MAX_SEED, check_match_work
from lifelong_core.matching import accuracy_vs_confidence
from lifelong_core.matching.store_pair import Side
from lifelong_core.workflows.matching import (
    DEFAULT_CRITERION,
    DEFAULT_EPS,
    DEFAULT_RUNS,
    DEFAULT_SEED,
    all_models_table,
    comparable_models,
    default_dataset,
    default_domains,
    missing_columns,
    model_blocks,
    unlabeled_datasets,
)
from ui.caches import match_block, match_one_model, of_store, pair_samples, store_key
from ui.common import (
    NO_DATA,
    get_store,
    input_errors,
    picked,
    plain,
    query_default,
    query_list,
    show_chart,
    show_table,
    store_facts,
    sync_query,
)
from ui.matching import (
    fig_accuracy,
    fig_confidence,
    fig_density,
    fig_gaps,
    fig_gaps_top,
    fig_reliability,
)
from ui.matching import percent_text as _fmt

ALL = "All models"
CRITERIA = {
    "label-prob": "predicted label and probability (Algorithm 1)",
    "prob": "probability only (Algorithm 2)",
}


def show_model_detail(key, src, tgt, row, eps, crit, runs, seed, label_suffix="") -> None:
    with input_errors(stop=False) as box:
        detail = match_one_model(key, src, tgt, row, eps, crit, runs, seed)
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
    same = (key, src, tgt, row, eps, crit, runs, seed)
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
# What the page reads of the store on every view is read once per store version.
key = store_key()
datasets = store_facts(key)["datasets"]["dataset"].tolist()
if not datasets:
    st.info(NO_DATA)
    st.stop()


def side_widgets(role: str, side: str):
    ds_default = query_default(f"{side}_ds", default_dataset(datasets))
    if ds_default not in datasets:
        ds_default = datasets[0]
    ds = st.selectbox(
        f"{role} dataset", datasets, index=datasets.index(ds_default), key=f"match-{side}-ds"
    )
    domains = of_store(key, "domains", (ds,), lambda: store.domains(ds)["domain"].tolist())
    fallback = default_domains(domains, "source" if side == "src" else "target")
    raw = st.query_params.get(f"{side}_dom")
    # An empty value in the URL means "whole dataset", not "use the default domain".
    default = [] if raw == "" else query_list(f"{side}_dom", fallback, allowed=domains)
    chosen = st.multiselect(
        f"{role} domains (none = the whole dataset)",
        domains,
        default=default,
        key=f"match-{side}-dom-{ds}",  # per dataset: a domain list never outlives its dataset
    )
    return ds, chosen


c1, c2 = st.columns(2)
with c1:
    src_ds, src_dom = side_widgets("Source", "src")
with c2:
    tgt_ds, tgt_dom = side_widgets("Target", "tgt")

# A dataset that records only correctness (lm-eval per-item scores, e.g. the bundled Open LLM
# Leaderboard results) has nothing to match on: say so instead of failing on its first sample.
unlabeled = of_store(
    key, "unlabeled", (src_ds, tgt_ds), lambda: unlabeled_datasets(store, (src_ds, tgt_ds))
)
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

# Names over every model, as the comparison names them; only real models recorded on both
# sides are offered (another dataset's models have nothing to compare here).
with input_errors():
    sides = ((src_ds, tuple(src_dom)), (tgt_ds, tuple(tgt_dom)))
    row_of = of_store(key, "comparable", sides, lambda: comparable_models(store, *sides))
names = list(row_of)
if not names:
    st.info(
        "No evaluated model of this store has predictions on both the source and the target samples (rows "
        "inserted as estimated are predictions, not evaluations, and are left out)."
    )
    st.stop()
model_default = query_default("model", ALL)
options = [ALL] + names
model: str = picked(
    st.selectbox(
        "Model",
        options,
        index=options.index(model_default) if model_default in options else 0,
        key="match-model",
    )
)

p1, p2, p3, p4 = st.columns([1, 2, 1, 1])
eps_url = query_default("eps", DEFAULT_EPS, float)
eps_url = min(max(eps_url, 0.0), 1.0) if math.isfinite(eps_url) else DEFAULT_EPS
eps = p1.number_input(
    "ε (probability tolerance)",
    min_value=0.0,
    max_value=1.0,
    step=0.001,
    format="%.4f",
    value=eps_url,
    key="match-eps",
)
crit_default = query_default("crit", DEFAULT_CRITERION)
crit_keys = list(CRITERIA)
crit: str = picked(
    p2.radio(
        "Match by",
        crit_keys,
        format_func=CRITERIA.get,
        horizontal=True,
        index=crit_keys.index(crit_default) if crit_default in crit_keys else 0,
        key="match-crit",
    )
)
runs = int(
    p3.number_input(
        "Runs",
        min_value=1,
        max_value=MAX_APP_MATCH_RUNS,
        step=1,
        value=min(max(query_default("runs", DEFAULT_RUNS, int), 1), MAX_APP_MATCH_RUNS),
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
        value=min(max(query_default("seed", DEFAULT_SEED, int), 0), MAX_SEED),
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
# What an import must carry for this page; a store without it (lm-eval runs, a long table of
# model, sample, correct only) gets the list of missing columns, not an error.
need = of_store(key, "missing", (src, tgt), lambda: missing_columns(store, src, tgt))
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
synthetic = store_facts(key)["datasets"].set_index("dataset")["synthetic"]
if bool(synthetic.get(src_ds, False)) or bool(synthetic.get(tgt_ds, False)):
    st.caption("Data: **synthetic** (seeded generator), not real model predictions.")

if model != ALL:
    show_model_detail(key, src, tgt, row_of[model], eps, crit, runs, seed)
    st.stop()

rows = list(row_of.values())
with input_errors():
    # A bound on one page view's work: a URL with empty domain lists once cost 130 s of CPU.
    check_match_work(len(rows), runs, src_n, tgt_n)
blocks = model_blocks(rows, src_n, tgt_n)
bar = st.progress(0.0, text=f"Matching {len(rows)} models x {runs} runs ...")
tables, skipped = [], []
with input_errors(cleanup=bar.empty):
    for k, block in enumerate(blocks):
        table, skip = match_block(key, src, tgt, block, eps, crit, runs, seed)
        tables.append(table)
        skipped.extend(skip)
        bar.progress(
            (k + 1) / len(blocks),
            text=f"Matched {sum(len(b) for b in blocks[: k + 1])} of {len(rows)} models",
        )
bar.empty()
if skipped:
    st.warning(
        f"{len(skipped)} model(s) left out for lack of predicted labels or confidences "
        f"(e.g. {skipped[0]})."
    )
table = all_models_table(tables)
if table is None:
    st.error(
        "No model has both a predicted label and a confidence (max softmax) on these samples: "
        "the store is missing the columns predicted/confidence that matched accuracy needs."
    )
    st.stop()

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
