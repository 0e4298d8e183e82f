"""The new-model picker of the "Evaluate something new" page, and its harness round trip.

Presentation only: the rules are :mod:`lifelong_core.workflows.item_choice` (which items),
:mod:`lifelong_core.io.harness_items` (the harness's item list),
:mod:`lifelong_core.io.lm_eval` and :mod:`lifelong_core.io.inspect_log` (reading the run
back) and :mod:`lifelong_core.workflows.new_model` (the estimate and the row to store),
the same functions ``select`` and ``estimate`` run on the command line. Download the item
list, run lm-evaluation-harness or Inspect AI on it, upload the run, read the estimate,
optionally insert.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lifelong_core.errors import InputError
from lifelong_core.io import harness_items
from lifelong_core.io.limits import MAX_TEXT_CHARS
from lifelong_core.workflows import item_choice, new_model
from lifelong_core.workflows.budgets import default_single_budget, single_budget_choices
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

HARNESSES = ("lm-eval", "inspect")
HARNESS_LABELS = {"lm-eval": "lm-evaluation-harness", "inspect": "Inspect AI"}


def pick_new_model(
    columns,
    n: int,
    *,
    search_key: str,
    budget_key: str,
    name_key: str,
    budget_label: str,
    default_name: str,
) -> tuple[str, int, str]:
    """The new model's method, budget and name: the one picker of the page's new-model
    tabs, each value kept in the URL under its key.

    The name comes first in meaning: a model's items are its own random draw, from its
    name and the seed.

    Parameters
    ----------
    columns : sequence
        Three Streamlit containers (method, budget, name).
    n : int
        The dataset's number of items (the budgets offered).
    search_key, budget_key, name_key : str
        Widget and URL keys of the three values.
    budget_label : str
        The budget widget's label.
    default_name : str
        The name offered first.

    Returns
    -------
    tuple of (str, int, str)
        The registered method, the budget and the name as typed (possibly empty).
    """
    search = controls.pick_method(columns[0], search_key)
    choices = single_budget_choices(n)
    raw = query_default(budget_key, default_single_budget(n), int)
    budget = columns[1].selectbox(
        budget_label,
        choices,
        index=choices.index(raw if raw in choices else default_single_budget(n)),
        key=budget_key,
    )
    name = columns[2].text_input(
        "Name of the new model",
        value=query_default(name_key, default_name),
        key=name_key,
        max_chars=MAX_TEXT_CHARS,
        help="Its items are its own random draw, from this name and the seed, so several new "
        "models' errors are independent.",
    )
    sync_query(**{search_key: search, budget_key: budget, name_key: name})
    return search, int(budget), name


# ``_whole`` is not part of the cache key: it is the whole dataset's fit, which the same
# (key, dataset, search) determine.
@st.cache_resource(show_spinner="Fitting the method on one task…", max_entries=12)
def _fitted_domain(key: str, dataset: str, search: str, domain: str, _whole=None):
    return item_choice.fit(caches.selection(key, dataset, ()), search, domain, _whole)


def _fitter(key: str, dataset: str, search: str):
    """Cached fits: the whole dataset (shared with the page's new-model tab) and per task."""
    return lambda d, whole: (
        caches.fitted_method(key, dataset, search)
        if d is None
        else _fitted_domain(key, dataset, search, d, whole)
    )


def _read_upload(
    ups, sel, names, harness: str, metric: str, space, recorded: dict
) -> new_model.Observations:
    """The uploaded run as the new model's results on the dataset's ids; an lm-eval run's
    metric is the one each task was imported with (``recorded``) unless one is typed."""
    if harness == "lm-eval":
        from lifelong_core.io.lm_eval import read_uploaded_run

        chosen, flt = new_model.metric_and_filter(recorded, metric.strip() or None)
        run = read_uploaded_run(
            [(u.name, u.getvalue()) for u in ups], chosen, flt, reserve=space.reserve
        )
        values = new_model.results_from_run(run.table, sel, names, "lm-eval", "the upload")
        return new_model.Observations(
            values, "app upload " + ", ".join(u.name for u in ups), dict(run.metrics)
        )
    paths = stores.save_uploads(ups, space.path, space)
    obs = new_model.inspect_observations(paths, sel, names, shown=[u.name for u in ups])
    return new_model.Observations(
        obs.values, "app upload " + ", ".join(u.name for u in ups), obs.metrics
    )


def harness_section(key: str, dataset: str, seed: int) -> None:
    """Render the harness round trip for ``dataset``: lm-evaluation-harness or Inspect AI.

    Four steps, each a rule shared with ``lbe select --format lm-eval|inspect`` and
    ``lbe estimate --lm-eval|--inspect``: choose the items and download their list; upload
    the run (lm-eval's ``--log_samples`` output, or Inspect logs); read the estimate and
    where the model would rank; optionally insert it as an estimated row. Bad input (task
    names, uploads, a name) is one error box and the section stops there; a dataset whose
    items cannot be named to the harness gets a note instead.

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
    raw_h = query_default("harness", "lm-eval")
    harness: str = picked(
        st.radio(
            "Harness",
            list(HARNESSES),
            index=HARNESSES.index(raw_h) if raw_h in HARNESSES else 0,
            format_func=HARNESS_LABELS.get,
            horizontal=True,
            key="harness",
        )
    )
    st.markdown(
        "For language models evaluated with **lm-evaluation-harness** (0.4.13 or later: its `--samples` option runs "
        "exactly the chosen items) or **Inspect AI** (its `--sample-id` option), whose output comes back here. The "
        "command line does the same: `lbe select ... --format lm-eval|inspect` and `lbe estimate --lm-eval "
        "OUT/<model dir>` or `--inspect LOG`."
    )
    c = st.columns(4)
    search, budget, name = pick_new_model(
        c[:3],
        n,
        search_key="lm_search",
        budget_key="lm_budget",
        name_key="lm_name",
        budget_label="Items to run",
        default_name="new-llm",
    )
    mapping = c[3].text_input(
        "Harness task names (optional)",
        value=query_default("lm_tasks", ""),
        key="lm_tasks",
        placeholder="arith=toy_arith, ...",
        help="TASK=HARNESS_TASK pairs, comma-separated, for tasks of the sample ids that the harness names otherwise",
    )
    sync_query(lm_tasks=mapping, harness=harness)
    with input_errors(stop=False) as ids_ok:
        names = harness_items.parse_task_names(
            [p for p in (x.strip() for x in mapping.split(",")) if p]
        )
        harness_items.item_ids(sel.samples, names, harness)
    if not ids_ok.ok:
        st.info(
            f"This dataset's items cannot be named to {HARNESS_LABELS[harness]}; the *A new model* tab works "
            "with any dataset."
        )
        return
    with input_errors(stop=False) as chosen:
        choice = item_choice.select_items(
            sel, budget, search, seed, fitted=caches.fitted_method(key, dataset, search), model=name
        )
        if harness == "lm-eval":
            tasks = list(harness_items.lm_eval_samples(choice.items, names))
        else:
            ids = harness_items.inspect_sample_ids(choice.items, names)
    if not chosen.ok:
        return
    st.markdown(
        f"**1. Download the {budget} items** (of {n:,}; chosen by {search}, fitted on the {m} stored models; "
        f"{plain(choice.describe())}) and run your model on them:"
    )
    if harness == "lm-eval":
        import json

        samples = harness_items.lm_eval_samples(choice.items, names)
        st.download_button(
            "Download samples.json",
            json.dumps(samples, indent=1),
            file_name="samples.json",
            mime="application/json",
            key="lm_samples_json",
        )
        st.code(
            f"lm_eval --model hf --model_args pretrained=YOUR/MODEL --tasks {','.join(tasks)} \\\n"
            "    --samples samples.json --log_samples --output_path out",
            language="bash",
        )
    else:
        st.download_button(
            "Download sample_ids.txt",
            ids + "\n",
            file_name="sample_ids.txt",
            mime="text/plain",
            key="inspect_sample_ids",
        )
        st.code(
            'inspect eval YOUR_TASK.py --model YOUR/MODEL --sample-id "$(cat sample_ids.txt)"',
            language="bash",
        )
    download_table(
        choice.items,
        f"items_{dataset}_{budget}",
        label="Download the items as CSV (sample_id, domain)",
    )

    if harness == "lm-eval":
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
            "Metric (default: the one each task was imported with)",
            value="",
            key="lm_metric",
            placeholder="acc_norm,acc",
        )
    else:
        st.markdown(
            "**2. Upload the run**: its Inspect log files (`.eval` or `.json`), one per task."
        )
        ups = st.file_uploader(
            "Inspect logs", type=["eval", "json"], accept_multiple_files=True, key="inspect_upload"
        )
        metric = ""
    if not ups:
        return
    from ui.stores import upload_folder

    with input_errors(stop=False) as read, upload_folder() as space:
        # The upload's files and a zip's content take their share of the server's disk
        # budget for uploads before they are written.
        obs = _read_upload(
            ups, sel, names, harness, metric, space, caches.harness_metrics(key, dataset)
        )
        est = new_model.estimate_new_model(
            sel,
            obs.values,
            search,
            fitter=_fitter(key, dataset, search),
            accuracies=caches.accuracies(key, dataset),
        )
    if not read.ok:
        return
    show_estimate(est, name)
    if not est.predicts_samples:
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
                lambda w: new_model.insert_estimated(
                    w,
                    sel,
                    name.strip(),
                    est,
                    source=obs.source,
                    extra_meta={
                        "harness": harness,
                        "metrics": {
                            t: list(v) if isinstance(v, tuple) else v
                            for t, v in obs.metrics.items()
                        },
                    },
                )
            )
        if written.ok:
            st.success(
                f"Inserted {plain(repr(name.strip()))} as estimated ({summary.get('entries', n)} entries, "
                f"{len(est.cols)} of them real results)."
            )


def show_estimate(est: new_model.NewModelEstimate, name: str) -> None:
    """The estimate as both new-model tabs show it: the figures, the rank chart and the
    tables.

    Parameters
    ----------
    est : NewModelEstimate
        The new model's estimate.
    name : str
        The new model's name, as the chart labels it.
    """
    o = est.overall
    pct = f"{est.level:.0%}"
    st.markdown("**3. The estimate**")
    mc = st.columns(4)
    mc[0].metric("estimated accuracy", f"{o['estimate']:.3f}")
    if not np.isnan(o["lo"]):
        mc[1].metric(f"{pct} interval", f"{o['lo']:.3f} – {o['hi']:.3f}")
    mc[2].metric("items evaluated", f"{int(o['evaluated'])} of {int(o['items']):,}")
    mc[3].metric(
        "would rank",
        f"{est.rank} of {est.m + 1}",
        help=None if est.rank_lo is None else f"{pct} rank interval {est.rank_lo} – {est.rank_hi}",
    )
    if est.rank_lo is not None:
        st.caption(
            f"Rank interval {est.rank_lo} – {est.rank_hi} (from the accuracy interval; the stored models' "
            "accuracies are exact)."
        )
    show_table(est.table, "new_model_estimate")
    show_chart(
        charts.rank_position(
            est.accuracies,
            new_name=name,
            new_acc=float(o["estimate"]),
            lo=None if np.isnan(o["lo"]) else float(o["lo"]),
            hi=None if np.isnan(o["hi"]) else float(o["hi"]),
            title="where the new model would rank among the store's models",
        ),
        "new_model_rank",
    )
    st.markdown("Predicted accuracy per domain (from the per-item predictions):")
    show_table(est.by_domain, "new_model_by_domain")
    with st.expander("Predicted correctness of every item"):
        show_table(est.per_sample, "new_model_per_sample")
