"""How Sort & Search works: a small real slice of the store, step by step (Prabhu et al., 2024, §3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.sortsearch import RULES, dp_search
from lifelong_core.workflows.teaching import prediction_after, walkthrough
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

st.set_page_config(page_title="How Sort & Search works", layout="wide")
st.title("How Sort & Search works")

key = caches.store_key()


def pick(label, options, url_key, default, radio=False):
    raw = query_default(url_key, str(default))
    by_text = {str(o): o for o in options}
    value = by_text.get(raw, default)
    if radio:
        return st.sidebar.radio(
            label, options, index=options.index(value), key=url_key, horizontal=True
        )
    return st.sidebar.selectbox(label, options, index=options.index(value), key=url_key)


dataset = pick_dataset()
MODES = ["new model (insert_M)", "new sample (insert_D)"]
mode = pick("What arrives", MODES, "mode", MODES[0], radio=True)
transpose = mode == MODES[1]
n_models = controls.int_slider(st.sidebar, "Models in the slice", 4, 30, "m", 12)
n_samples = controls.int_slider(st.sidebar, "Samples in the slice", 10, 120, "n", 60)
slice_seed = controls.int_input(st.sidebar, "Slice seed", 0, 10**6, "slice")
rule = pick("Threshold rule", list(RULES), "rule", RULES[0])
sampling = pick("Sampling", ["uniform", "random"], "sampling", "uniform", radio=True)

with input_errors():
    A, names, sample_ids = caches.teaching_slice(key, dataset, n_models, n_samples, slice_seed)
    synthetic = caches.selection(key, dataset, ()).synthetic
    note = caches.bounded(key, dataset, ())[1]
if note:
    st.caption(note)
rows_label, cols_label = (sample_ids, names) if transpose else (names, sample_ids)
what_new, what_other = ("sample", "model") if transpose else ("model", "sample")
count_new = A.shape[1] if transpose else A.shape[0]
n_other = A.shape[0] if transpose else A.shape[1]

held_raw = query_default("new", 0, int)
# One widget per mode: a model's name must not stay in the box once samples arrive instead.
held: int = picked(
    st.sidebar.selectbox(
        f"New {what_new}",
        list(range(count_new)),
        index=int(np.clip(held_raw, 0, count_new - 1)),
        format_func=lambda i: rows_label[i],
        key=f"new:{'sample' if transpose else 'model'}",
    )
)
budget = controls.int_slider(
    st.sidebar, f"Budget n′ ({what_other}s evaluated)", 1, n_other, "b", min(8, n_other)
)
seed = controls.int_input(st.sidebar, "Sampling seed", 0, 10**6, "seed")
sync_query(
    ds=dataset,
    mode=mode,
    m=n_models,
    n=n_samples,
    slice=slice_seed,
    rule=rule,
    sampling=sampling,
    new=held,
    b=budget,
    seed=seed,
)

provenance_note(synthetic, dataset)
# Everything the figures depend on: each is built once per server for it, not per visitor.
view = (key, dataset, mode, n_models, n_samples, slice_seed, rule, sampling, held, budget, seed)
w = walkthrough(A, held, budget, rule, sampling, seed, transpose)
M = A.T if transpose else A
others = [i for i in range(M.shape[0]) if i != held]
other_labels = [rows_label[i] for i in others]
sorted_labels = [cols_label[j] for j in w.order]

if transpose:
    st.markdown(
        f"A **new sample** arrives. Which of the {n_other} models get it right? Sort the models from best to worst "
        "by how many of the other samples they solve, run only **n′** of them on the new sample, and find the "
        "split point: the best models above it are predicted right, the rest wrong (Prabhu et al., 2024, §3.3, the transpose "
        "of insert_M)."
    )
else:
    st.markdown(
        f"A **new model** arrives. Instead of running it on all {n_other} samples, sort the samples from easy to "
        "hard by how many of the other models solve them (**Sort**), run the new model on only **n′** of them, "
        "and find the split point between *mostly right* and *mostly wrong* (**Search**): everything easier is "
        "predicted right, everything harder wrong (Prabhu et al., 2024, §3.1-3.2)."
    )

st.subheader(f"1. Sort: the other {what_new}s' results before and after sorting")
left, right = st.columns(2)
with left:
    show_chart(
        lambda: charts.matrix_heatmap(
            np.delete(M, held, axis=0),
            row_labels=other_labels,
            col_labels=list(cols_label),
            title="before Sort (columns as stored)",
            x_title=what_other,
            y_title=what_new,
        ),
        "slice_before_sort",
        key=view,
    )
with right:
    show_chart(
        lambda: charts.matrix_heatmap(
            np.delete(M, held, axis=0)[:, w.order],
            row_labels=other_labels,
            col_labels=sorted_labels,
            title="after Sort: easy → hard" if not transpose else "after Sort: best → worst model",
            highlight_cols=w.positions.tolist(),
            x_title=f"{what_other} (sorted)",
            y_title=what_new,
        ),
        "slice_after_sort",
        key=view,
    )
st.caption(
    f"Blue = correct, light = wrong. Red boxes: the n′ = {budget} sorted positions the new {what_new} is evaluated "
    f"on ({sampling} sampling)."
)

st.subheader("2. Search: walk through the evaluations")
step = controls.int_slider(st, "Evaluations seen", 0, budget, "step", budget)
sync_query(step=step)
final = step == budget
# Everything below follows the slider: what the rule knows after `step` evaluations.
now = prediction_after(w, step, rule)
shown_t = w.threshold if final else dp_search(w.observed[:step])
show_chart(
    lambda: charts.observed_strip(
        n_other,
        w.positions,
        w.observed,
        upto=step,
        title=f"the new {what_new} so far: blue = right, light = wrong, red circles = still to evaluate",
        x_title=f"sorted {what_other} position",
    ),
    "evaluated_so_far",
    key=(view, step),
)
show_chart(
    lambda: charts.running_sum(
        w.positions,
        w.observed,
        upto=step,
        threshold=now[0] if now else None,
        n=n_other,
        title="running sum of +1 (right) / −1 (wrong) along the sorted order",
    ),
    "running_sum",
    key=(view, step),
)
if final:
    st.markdown(
        f"All n′ = {budget} evaluations are in. The **{rule}** rule puts the threshold at **t = {w.threshold}** of "
        f"{n_other}: the {w.threshold} easiest {what_other}s are predicted right."
    )
elif now is None:
    st.markdown(
        f"No evaluation yet: move the slider to run the new {what_new} on the first of its {budget} "
        f"{what_other}s."
    )
else:
    st.markdown(
        f"After {step} of {budget} evaluations the running sum peaks after observation {shown_t}; with only "
        f"these, the **{rule}** rule would put the threshold at **t = {now[0]}**. More evaluations can move it."
    )

st.subheader(f"3. Predicted vs true after {step} of {budget} evaluations")
if now is None:
    st.info("Nothing is predicted before the first evaluation.")
else:
    t_now, pred_now = now
    mae = float(np.mean(pred_now != w.true))
    c = st.columns(4)
    c[0].metric("threshold t", t_now)
    c[1].metric(
        "estimated accuracy" if not transpose else "predicted share of models right",
        f"{pred_now.mean():.3f}",
    )
    c[2].metric("true", f"{w.true.mean():.3f}")
    c[3].metric(
        "sample-level error (MAE)",
        f"{mae:.3f}",
        help="fraction of entries predicted wrongly (Prabhu et al., 2024, Eq. 2)",
    )
    show_chart(
        lambda: charts.predicted_vs_true(
            pred_now,
            w.true,
            title=f"the new {what_new}'s row in sorted order (× = wrong prediction)",
            x_title=f"sorted {what_other} position",
        ),
        "predicted_vs_true",
        key=(view, step),
    )
# Only the evaluations made so far: later steps' results are not shown before the slider gets there.
steps = pd.DataFrame(
    {
        "step": np.arange(1, step + 1),
        "sorted_position": w.positions[:step],
        what_other: [sorted_labels[p] for p in w.positions[:step]],
        "observed": w.observed[:step],
        "running_sum": np.cumsum(2 * w.observed[:step].astype(int) - 1),
    }
)
show_table(steps, "search_steps")

studies.theorem21_section()
studies.simulation_section()
