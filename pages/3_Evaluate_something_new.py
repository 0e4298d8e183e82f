"""Evaluate something new: a new model from a few samples (insert_M), new samples from a few models (insert_D),
a new model in rounds until its 95% interval is as narrow as asked (adaptive), a language model through
lm-evaluation-harness."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.io.limits import MAX_TEXT_CHARS
from lifelong_core.methods import capabilities
from lifelong_core.sortsearch import RULES
from lifelong_core.workflows import arrivals, item_choice, new_model
from lifelong_core.workflows.budgets import single_budget_choices
from ui import caches, charts, controls, stores
from ui.common import (
    download_table,
    input_errors,
    picked,
    plain,
    provenance_note,
    query_default,
    show_chart,
    show_table,
    sync_query,
)
from ui.harness import harness_section, pick_new_model, show_estimate
from ui.store_dataset import pick_dataset

SAMPLINGS = ["uniform", "random"]  # insert_D's sampling of models: grid or at random

st.set_page_config(page_title="Evaluate something new", layout="wide")
st.title("Evaluate something new")
st.markdown(
    "The lifelong workflow of Prabhu et al. (2024) (§2, §3.2-3.3). **A new model:** download the short list of samples to run "
    "it on, upload its results, and get its estimated accuracy, its predicted result on every other sample and "
    "where it would rank. **New samples:** download the short list of models to run on them, upload their results, "
    "and get each sample's predicted result for every model and its place in the difficulty order."
)

key = caches.store_key()
dataset = pick_dataset()
with input_errors():
    sel = caches.selection(key, dataset, ())
m, n = sel.A.shape
provenance_note(sel.synthetic, dataset)
seed = controls.int_input(st.sidebar, "Seed", 0, 2**31 - 1, "seed")
sync_query(ds=dataset, seed=seed)

TABS = [
    "A new model (insert_M)",
    "New samples (insert_D)",
    "Until sure (adaptive)",
    "A new model with lm-eval or Inspect",
]
tabs = st.tabs(TABS, key="tab", bind="query-params")

# ------------------------------------------------------------------ insert_M
with tabs[0]:
    if tabs[0].open:
        search, budget, name = pick_new_model(
            st.columns(3),
            n,
            search_key="search",
            budget_key="budget",
            name_key="new_name",
            budget_label="Budget n′ (samples to run the new model on)",
            default_name="new-model",
        )
        if not name.strip():
            st.warning("Name the new model: its samples are drawn for it.")
            st.stop()
        with input_errors():
            # Model-based methods fit on the whole cache once per store version; say why the
            # page waits and for how long it has (the spinner's clock).
            with st.spinner(
                f"Fitting {search} on the {m} models × {n:,} samples of {plain(dataset)} (once per store "
                "version; on large stores a model-based method takes up to a minute)…",
                show_time=True,
            ):
                try:
                    method = caches.fitted_method(key, dataset, search)
                except (
                    caches.StateMissing
                ) as exc:  # a large store without its kept state: offer the refresh
                    controls.state_panel(key, dataset, search, missing=str(exc))
                    st.stop()
            cols = item_choice.select_items(
                sel, budget, search, seed, fitted=method, model=name
            ).columns
        if caches.is_large(sel) and capabilities(search).kept_state:
            controls.state_panel(key, dataset, search)
        ids = sel.samples["sample_id"].to_numpy(dtype=object)[cols].tolist()
        st.markdown(
            f"**1. Run the new model on these {budget} of the {n:,} samples** ({n / budget:.0f}× less compute than a "
            "full evaluation). The sort order comes from all "
            f"{m} models in the store."
        )
        todo = arrivals.samples_to_run(sel, cols)
        download_table(
            todo,
            f"samples_to_evaluate_{dataset}_{budget}",
            label=f"Download the {budget} sample ids (CSV)",
        )
        with st.expander("Preview the list"):
            st.dataframe(todo.head(50), hide_index=True, width="stretch")

        with st.expander("No new model at hand? Take the results of one in the store"):
            ids_m = sel.models["model_id"].astype(str).tolist()
            raw_dm = query_default("demo_model", ids_m[0])
            demo_row: int = picked(
                st.selectbox(
                    "Model",
                    list(range(m)),
                    format_func=lambda i: sel.names[i],
                    key="demo_model",
                    index=ids_m.index(raw_dm) if raw_dm in ids_m else 0,
                )
            )
            sync_query(demo_model=ids_m[demo_row])
            download_table(
                pd.DataFrame(
                    {"sample_id": ids, "correct": caches.row_values(key, dataset, demo_row, cols)}
                ),
                f"results_{sel.models['model_id'].iloc[demo_row]}_{budget}",
                label="Download its results on these samples (CSV)",
            )
            st.caption(
                "A demonstration only: that model is part of the cache the method learned from, so its "
                "estimate is better than a truly new model's would be."
            )
        st.markdown(
            "**2. Upload its results**: a CSV with columns `sample_id, correct` (correct is 0/1, true/false or "
            "yes/no). The downloaded list with its `correct` column filled in works as it is."
        )
        up = st.file_uploader("Results of the new model", type=["csv"], key="upload_model")
        if up is not None:
            with input_errors(stop=False) as upload:
                results = arrivals.read_results(
                    up.getvalue(),
                    up.name,
                    arrivals.NEW_MODEL_COLUMNS,
                    known=arrivals.NEW_MODEL_LIST_COLUMNS,
                )
                observed, extra = arrivals.match_observations(results, ids, "sample_id", up.name)
            if upload.ok:
                if results.attrs.get("ignored"):
                    st.info(
                        f"Columns not needed here were ignored: {', '.join(results.attrs['ignored'])}."
                    )
                if extra:
                    st.info(
                        f"{extra} rows of the file name samples that were not on the list; they are ignored."
                    )
                new = new_model.estimate_new_model(
                    sel,
                    dict(zip(ids, observed.tolist())),
                    search,
                    fitted=method,
                    per_task=False,
                    accuracies=caches.accuracies(key, dataset),
                )
                show_estimate(new, name)

                if not new.predicts_samples:
                    st.caption(
                        f"{search} predicts no sample it was not run on: the per-domain figures are the share "
                        "right among each domain's evaluated samples, and there is no estimated row to insert."
                    )
                    st.stop()
                st.markdown(
                    "**4. Optionally insert it into the store, marked as estimated.** Its row holds the "
                    "observed results on the evaluated samples and the predictions elsewhere; every score in "
                    "the app (Sort & Search, rankings, task weighting, matched accuracy) leaves estimated rows "
                    "out."
                )
                if st.button("Insert into the store", key="insert_model"):
                    with input_errors(stop=False) as written:
                        stores.check_new_model_name(name)
                        summary = stores.write_to_store(
                            lambda w: new_model.insert_estimated(
                                w,
                                sel,
                                name,
                                new,
                                source=f"app upload {up.name}",
                                extra_meta={"budget": int(budget), "seed": seed},
                            )
                        )
                    if written.ok:
                        st.success(
                            f"Inserted model {plain(repr(name))} as estimated ({summary.get('entries', n)} entries)."
                        )

# ------------------------------------------------------------------ insert_D
with tabs[1]:
    if tabs[1].open:
        c = st.columns(3)
        raw_r = query_default("rule", RULES[0])
        rule: str = picked(
            c[0].selectbox(
                "Threshold rule",
                list(RULES),
                index=list(RULES).index(raw_r) if raw_r in RULES else 0,
                key="rule",
            )
        )
        raw_s = query_default("d_sampling", "uniform")
        sampling: str = picked(
            c[1].radio(
                "Sampling",
                SAMPLINGS,
                index=SAMPLINGS.index(raw_s) if raw_s in SAMPLINGS else 0,
                key="d_sampling",
                horizontal=True,
            )
        )
        mchoices = single_budget_choices(m)
        raw_mb = query_default(
            "models_budget", 32 if 32 in mchoices else mchoices[len(mchoices) // 2], int
        )
        m_budget: int = picked(
            c[2].selectbox(
                "Budget m′ (models to run on each new sample)",
                mchoices,
                index=mchoices.index(raw_mb) if raw_mb in mchoices else 0,
                key="models_budget",
            )
        )
        sync_query(rule=rule, d_sampling=sampling, models_budget=m_budget)
        try:
            ins = caches.fitted_insert_d(key, dataset, rule, sampling)
        except caches.StateMissing as exc:
            controls.state_panel(key, dataset, missing=str(exc))
            st.stop()
        rows = ins.select(m, m_budget, np.random.default_rng(seed))
        run = sel.models.iloc[rows][["model_id", "name", "family"]].reset_index(drop=True)
        st.markdown(
            f"**1. Run these {m_budget} of the {m} models on the new samples.** Models are ordered best first "
            "by their accuracy on the store's samples (Sort on the transpose)."
        )
        download_table(
            run,
            f"models_to_run_{dataset}_{m_budget}",
            label=f"Download the {m_budget} model ids (CSV)",
        )
        st.markdown(
            "**2. Upload their results**: a CSV with columns `model_id, sample_id, correct`, one row per model "
            "and new sample (correct is 0/1, true/false or yes/no; other columns are ignored)."
        )
        up = st.file_uploader("Results on the new samples", type=["csv"], key="upload_samples")
        if up is not None:
            want = run["model_id"].astype(str).tolist()
            with input_errors(stop=False) as upload:
                results = arrivals.read_results(up.getvalue(), up.name, arrivals.NEW_SAMPLE_COLUMNS)
                per_sample = arrivals.new_sample_observations(results, sel, want, up.name)
            if upload.ok:
                if results.attrs.get("ignored"):
                    st.info(
                        f"Columns not needed here were ignored: {', '.join(results.attrs['ignored'])}."
                    )
                table, P = arrivals.estimate_new_samples(ins, rows, per_sample, n)
                st.markdown(
                    f"**3. The estimates** for {len(table)} new sample(s). *difficulty_position* is where the "
                    f"sample slots into the easy → hard order of the {n:,} stored samples; *harder_than* the "
                    "share of stored samples it is at least as hard as."
                )
                show_table(table, "new_samples")
                matrix = pd.DataFrame(P.T, columns=[s for s, _ in per_sample])
                matrix.insert(0, "model_id", sel.models["model_id"].to_numpy(dtype=object))
                with st.expander("Predicted correctness of every model on every new sample"):
                    show_table(matrix, "new_samples_per_model")
                st.markdown(
                    f"**4. Optionally insert the evaluations into the store.** Only the {m_budget} real results per "
                    "sample are written (the store marks estimates per model, not per entry, so predictions are not "
                    "stored). They go to a dataset of their own: the pages score a dataset on the models evaluated on "
                    "every one of its samples, and a few models' results would otherwise shrink that set."
                )
                # Chosen from a list or created new, never typed over an existing name: typing the
                # main dataset's name once folded new samples into it for every page.
                earlier = stores.insert_d_datasets()
                how: str = picked(
                    st.radio(
                        "Dataset for the new samples",
                        ["Create a new dataset", "Add to a dataset made here"],
                        horizontal=True,
                        key="new_dataset_how",
                        disabled=not earlier,
                        help="Only datasets created on this page can take more samples.",
                    )
                )
                create = how == "Create a new dataset" or not earlier
                if create:
                    target = st.text_input(
                        "Name of the new dataset",
                        value=stores.free_dataset_name(f"{dataset}-new"),
                        key="new_dataset",
                        max_chars=MAX_TEXT_CHARS,
                    )
                else:
                    target = picked(
                        st.selectbox("Dataset made on this page", earlier, key="new_dataset_pick")
                    )
                if st.button("Insert the evaluations", key="insert_samples"):
                    with input_errors(stop=False) as written:
                        if create:
                            stores.check_new_dataset_name(target)
                        long = arrivals.new_sample_entries(results, want, target)
                        summary = stores.write_to_store(
                            lambda w: w.insert_long(long, source=f"app upload {up.name}")
                        )
                    if written.ok:
                        st.success(
                            f"Inserted {summary.get('entries', len(long))} evaluations of "
                            f"{len(per_sample)} new sample(s) into dataset {plain(repr(target))}."
                        )

# ------------------------------------------------------------------ adaptive, until sure
with tabs[2]:
    if tabs[2].open:
        from lifelong_core.workflows import adaptive

        st.markdown(
            "Evaluate a new model **in rounds until its 95% interval is ± the target**, by the active item "
            "choice: a stratified pilot first, then after each round the model's ability is refitted and the next "
            "samples are drawn where its predicted result is least certain. Each round's Horvitz-Thompson "
            "difference estimate (cross-fitted predictions) is unbiased given the rounds before it, so the "
            "estimate and its interval stay honest however the rounds adapted, also for a model better than every "
            "one in the store (see the Adaptive evaluation guide of the documentation). The stop is checked after "
            "each round: the 95% holds at each look, not exactly at the stopping time."
        )
        c = st.columns(3)
        target_pts = controls.url_number(
            c[0], "Target: ± points (95% half-width)", 0.1, 50.0, "target", 2.0, step=0.5
        )
        max_b = c[1].number_input(
            "Maximum budget (samples)",
            2,
            n,
            max(2, min(query_default("max_budget", min(n, 1024), int), n)),
            key="max_budget",
        )
        mode: str = picked(
            c[2].radio(
                "Model",
                ["simulate a stored model", "my model, round by round"],
                key="adaptive_mode",
            )
        )
        sync_query(target=target_pts, max_budget=int(max_b))
        h = float(target_pts) / 100.0
        if mode == "simulate a stored model":
            stored_row: int = picked(
                st.selectbox(
                    "Stored model (its stored results stand in for real evaluations)",
                    list(range(m)),
                    format_func=lambda i: sel.names[i],
                    key="adaptive_model",
                )
            )
            st.caption(
                "Simulated: the method is fitted on the other models of the store, and each round's results "
                "are read from this model's stored row instead of running it."
            )
            with input_errors():
                method = caches.fitted_adaptive(key, dataset, int(stored_row))
                run = adaptive.simulate_stored(method, sel, int(stored_row), seed, h, int(max_b))
            rounds = adaptive.rounds_table(run.rounds)
            true = float(sel.A[stored_row].mean())
            k = st.columns(4)
            k[0].metric("estimated accuracy", f"{run.estimate.acc:.3f}")
            if run.estimate.lo is not None:
                k[1].metric("95% interval", f"{run.estimate.lo:.3f} – {run.estimate.hi:.3f}")
            k[2].metric(
                "samples evaluated",
                f"{len(run.columns):,} of {n:,}",
                help={
                    "target": "stopped: target reached",
                    "budget": "stopped: maximum budget",
                    "exhausted": "every sample evaluated",
                }[run.stopped],
            )
            k[3].metric("true accuracy (stored)", f"{true:.3f}")
            show_chart(
                charts.interval_rounds(
                    rounds,
                    target=h,
                    true_acc=true,
                    title="the interval narrowing round by round (simulated)",
                ),
                "adaptive_rounds",
            )
            show_table(rounds, "adaptive_rounds_table")
        else:
            with input_errors():
                method = caches.fitted_adaptive(key, dataset, None)
            st.markdown(
                "**Each round:** download the list, run your model on it, then upload **all** its results so "
                "far (one CSV with columns `sample_id, correct`, every round's rows). The page replays the "
                f"rounds from the seed ({seed}) and the results, so nothing is kept between visits."
            )
            up = st.file_uploader(
                "All results so far (nothing yet for the first round)",
                type=["csv"],
                key="upload_adaptive",
            )
            so_far: dict[int, int] = {}
            with input_errors():
                if up is not None:
                    got = arrivals.read_results(up.getvalue(), up.name, arrivals.NEW_MODEL_COLUMNS)
                    so_far = adaptive.results_by_column(sel, got, f"uploaded file {up.name}")
                prog = adaptive.next_round(method, so_far, seed, h, int(max_b))
            if prog.unused:
                st.info(
                    f"{prog.unused} uploaded results are for samples outside every round so far; they are ignored."
                )
            if prog.rounds:
                rounds = adaptive.rounds_table(prog.rounds)
                last = prog.rounds[-1]
                k3 = st.columns(3)
                k3[0].metric("estimated accuracy", f"{last.acc:.3f}")
                if last.lo is not None:
                    k3[1].metric("95% interval", f"{last.lo:.3f} – {last.hi:.3f}")
                k3[2].metric("samples evaluated", f"{last.evaluated:,} of {n:,}")
                show_chart(
                    charts.interval_rounds(
                        rounds, target=h, title="the interval narrowing round by round"
                    ),
                    "adaptive_rounds_real",
                )
                show_table(rounds, "adaptive_rounds_real_table")
            if prog.next_columns is None:
                st.success(
                    {
                        "target": f"Done: the 95% interval is within ±{target_pts:g} points.",
                        "budget": "Stopped at the maximum budget.",
                        "exhausted": "Every sample is evaluated: the accuracy is exact.",
                    }[str(prog.stopped)]
                )
            else:
                r = len(prog.rounds) + 1
                todo = pd.DataFrame(
                    {
                        "sample_id": sel.samples["sample_id"].to_numpy(dtype=object)[
                            prog.next_columns
                        ]
                    }
                )
                st.markdown(
                    f"**Round {r}: run the model on these {len(todo)} samples**, then upload all results."
                )
                download_table(
                    todo,
                    f"adaptive_round_{r}_{dataset}_seed{seed}",
                    label=f"Download round {r}'s {len(todo)} sample ids (CSV)",
                )

# ------------------------------------------------------------------ lm-evaluation-harness round trip
with tabs[3]:
    if tabs[3].open:
        harness_section(key, dataset, seed)
