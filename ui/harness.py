"""The lm-evaluation-harness round trip on the "Evaluate something new" page.

Presentation only: every rule is :mod:`lifelong_core.workflows.harness`, the same
functions ``select`` and ``estimate`` run on the command line. Download ``samples.json``,
run ``lm_eval ... --samples samples.json --log_samples``, upload the run's
``samples_*.jsonl`` files (or a zip of its folder), read the estimate, optionally insert.
"""

from __future__ import annotations

import json

import numpy as np
import streamlit as st

from lifelong_core.errors import InputError
from lifelong_core.workflows import harness
from ui import caches, charts, controls, stores
from ui.common import (
    download_table,
    input_errors,
    picked,
    plain,
    query_default,
    show_chart,
    show_table,
    sync_query,
)


# ``_tuning`` is not part of the cache key: it comes from the whole dataset's fit, which
# the same (key, dataset, search) determine.
@st.cache_resource(show_spinner="Fitting the method on one task…", max_entries=12)
def _fitted_domain(key: str, dataset: str, search: str, domain: str, _tuning=None):
    return harness.fit(caches.selection(key, dataset, ()), search, domain, _tuning)


def _fitter(key: str, dataset: str, search: str):
    """Cached fits: the whole dataset (shared with the page's new-model tab) and per task."""
    return lambda d, tuning: (
        caches.fitted_method(key, dataset, search)
        if d is None
        else _fitted_domain(key, dataset, search, d, tuning)
    )


def lm_eval_section(key: str, dataset: str, seed: int) -> None:
    """Render the lm-evaluation-harness round trip for ``dataset``.

    Four steps, each a rule of :mod:`lifelong_core.workflows.harness` shared with
    ``lbe select --format lm-eval`` and ``lbe estimate --lm-eval``: choose the items and
    download them as ``samples.json``; upload the run's ``--log_samples`` output; read the
    estimate and where the model would rank; optionally insert it as an estimated row.
    Bad input (task names, uploads, a name) is one error box and the section stops there;
    a dataset whose items cannot be named to lm-eval gets a note instead.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`ui.caches.store_key`).
    dataset : str
        Name of a dataset of the store.
    seed : int
        Seed of the items chosen (with the new model's name: each model draws its own).
    """
    sel = caches.selection(key, dataset, ())
    m, n = sel.A.shape
    st.markdown(
        "For language models evaluated with **lm-evaluation-harness** (0.4.13 or later): the harness runs exactly the "
        "chosen items through its `--samples` option, and its `--log_samples` output comes back here. The command "
        "line does the same: `lbe select ... --format lm-eval` and `lbe estimate --lm-eval OUT/<model dir>`."
    )
    c = st.columns(4)
    search = controls.pick_method(c[0], "lm_search")
    from lifelong_core.workflows.budgets import default_single_budget, single_budget_choices

    choices = single_budget_choices(n)
    raw_b = query_default("lm_budget", default_single_budget(n), int)
    budget: int = picked(
        c[1].selectbox(
            "Items to run",
            choices,
            index=choices.index(raw_b if raw_b in choices else default_single_budget(n)),
            key="lm_budget",
        )
    )
    mapping = c[2].text_input(
        "lm-eval task names (optional)",
        value=query_default("lm_tasks", ""),
        key="lm_tasks",
        placeholder="ifeval=leaderboard_ifeval, ...",
        help="DOMAIN=TASK pairs, comma-separated, for domains whose lm-eval task has another name",
    )
    # The name comes first: the items are the model's own draw (from its name and the seed).
    name = c[3].text_input(
        "Name of the new model",
        value=query_default("lm_name", "new-llm"),
        key="lm_name",
        help="Its items are its own random draw, from this name and the seed, so several new models' "
        "errors are independent.",
    )
    sync_query(lm_search=search, lm_budget=budget, lm_tasks=mapping, lm_name=name)
    with input_errors(stop=False) as ids_ok:
        names = harness.parse_task_names([p for p in (x.strip() for x in mapping.split(",")) if p])
        harness.doc_ids(sel.samples, names)
    if not ids_ok.ok:
        st.info(
            "This dataset's items cannot be named to lm-eval; the *A new model* tab works with any dataset."
        )
        return
    if dataset.startswith("open-llm-leaderboard"):
        st.caption(
            "The bundled leaderboard's item numbers are positions in the release, not necessarily the "
            "harness's doc_id, and its MuSR and MATH-hard domains each span several lm-eval tasks: check the "
            "item order before running a real model against it."
        )
    with input_errors(stop=False) as chosen:
        choice = harness.select_items(
            sel, budget, search, seed, fitted=caches.fitted_method(key, dataset, search), model=name
        )
        samples = harness.lm_eval_samples(choice, names)
    if not chosen.ok:
        return
    st.markdown(
        f"**1. Download the {budget} items** (of {n:,}; chosen by {search}, fitted on the {m} stored models; "
        f"{plain(choice.describe())}) and run your model on them:"
    )
    st.download_button(
        "Download samples.json",
        json.dumps(samples, indent=1),
        file_name="samples.json",
        mime="application/json",
        key="lm_samples_json",
    )
    st.code(
        f"lm_eval --model hf --model_args pretrained=YOUR/MODEL --tasks {','.join(samples)} \\\n"
        "    --samples samples.json --log_samples --output_path out",
        language="bash",
    )
    download_table(
        choice.items,
        f"items_{dataset}_{budget}",
        label="Download the items as CSV (sample_id, domain)",
    )

    st.markdown(
        "**2. Upload the run**: its `samples_<task>_<timestamp>.jsonl` files (with `results_*.json` if you "
        "like), or one zip of the run folder `out/<model dir>`."
    )
    ups = st.file_uploader(
        "lm-eval output",
        type=["jsonl", "gz", "json", "zip"],
        accept_multiple_files=True,
        key="lm_upload",
    )
    metric = st.text_input(
        "Metric (if a task records several)", value="", key="lm_metric", placeholder="acc_norm,acc"
    )
    if not ups:
        return
    from ui.stores import upload_folder

    with input_errors(stop=False) as read, upload_folder() as space:
        # The upload's files and a zip's content take their share of the server's disk
        # budget for uploads before they are written.
        obs = harness.observations_from_uploads(
            [(u.name, u.getvalue()) for u in ups],
            sel,
            names,
            metric=metric.strip() or None,
            reserve=space.reserve,
        )
        est = harness.estimate_new_model(
            sel, obs.values, search, fitter=_fitter(key, dataset, search)
        )
    if not read.ok:
        return
    o = est.overall
    st.markdown("**3. The estimate**")
    mc = st.columns(4)
    mc[0].metric("estimated accuracy", f"{o['estimate']:.3f}")
    if not np.isnan(o["lo"]):
        mc[1].metric("95% interval", f"{o['lo']:.3f} – {o['hi']:.3f}")
    mc[2].metric("items evaluated", f"{int(o['evaluated'])} of {int(o['items']):,}")
    rank = f"{est.rank} of {est.m + 1}"
    mc[3].metric(
        "would rank",
        rank,
        help=None if est.rank_lo is None else f"95% rank interval {est.rank_lo} – {est.rank_hi}",
    )
    if est.rank_lo is not None:
        st.caption(
            f"Rank interval {est.rank_lo} – {est.rank_hi} (from the accuracy interval; the stored models' "
            "accuracies are exact)."
        )
    show_table(est.table, "lm_eval_estimate")
    show_chart(
        charts.rank_position(
            est.new.accuracies,
            new_name=name,
            new_acc=float(o["estimate"]),
            lo=None if np.isnan(o["lo"]) else float(o["lo"]),
            hi=None if np.isnan(o["hi"]) else float(o["hi"]),
            title="where the new model would rank among the store's models",
        ),
        "lm_eval_rank",
    )
    if not est.new.predicts_samples:
        st.caption(
            f"{search} predicts no item it was not run on, so there is no estimated row to insert."
        )
        return
    st.markdown(
        "**4. Optionally insert it, marked as estimated** (real results on the evaluated items, the method's "
        "predictions elsewhere; every score in the app leaves estimated rows out)."
    )
    if st.button("Insert into the store", key="lm_insert"):
        with input_errors(stop=False) as written:
            if not name.strip():
                raise InputError("the new model needs a name.")
            summary = stores.write_to_store(
                lambda w: harness.insert_estimated(
                    w,
                    sel,
                    name.strip(),
                    est,
                    source=obs.source,
                    extra_meta={"lm_eval_metrics": {t: list(v) for t, v in obs.metrics.items()}},
                )
            )
        if written.ok:
            st.success(
                f"Inserted {plain(repr(name.strip()))} as estimated ({summary.get('entries', n)} entries, "
                f"{int(o['evaluated'])} of them real results)."
            )
