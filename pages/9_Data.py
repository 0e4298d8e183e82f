"""Data: open another store, create one, import your own results into it (long tables,
wide matrices, lm-evaluation-harness runs, Inspect AI logs) and export counts.csv or the
long table.

Widgets -> ui.stores (session's store, the app's one write path) ->
lifelong_core.workflows.imports / exports, the same code as ``python -m lifelong_core
import`` and ``export``. The chosen store holds for this browser session; every other
page reads it at once, without restarting the server.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from lifelong_core.errors import InputError
from lifelong_core.io.readers import reader, readers
from lifelong_core.io.wide import EXTRA_TYPES, ID_TYPES
from lifelong_core.workflows import imports
from ui import stores
from ui.common import (
    STORE_CHOICE,
    app_writes_enabled,
    get_store,
    input_errors,
    plain,
    query_default,
    shown_path,
    store_path,
    sync_query,
)

# Every format the reader registry can import, as the command line's ``import`` offers it.
FORMATS = {r.name: r.label for r in readers(importable=True)}

st.title("Data")
st.caption(
    "Open or create a store and import your own per-sample results with the command line's importer: the same "
    "validation, the same one-sentence errors, one transaction per file (a failed import writes nothing). "
    "The store you choose here is the one every page of this browser session reads."
)

# ------------------------------------------------------------------ which store
st.header("Store")
current = store_path()
chosen = STORE_CHOICE in st.session_state
st.markdown(
    f"This browser session reads **{plain(shown_path(current))}**"
    + (" (opened here)." if chosen else " (the default).")
)
if not current.exists():
    st.warning("That file does not exist yet: open another store or create one below.")

writes_ok, writes_off_why = app_writes_enabled()
if not writes_ok:
    # Opening or creating a store by name would let whoever reaches the server look at
    # (and make) files on it; with writes off, the served store is all this page offers.
    st.info(f"{writes_off_why} Opening and creating stores is off as well.")
else:
    folder = stores.stores_dir()
    st.caption(
        f"Stores are opened and created in the stores folder, {plain(shown_path(folder))} "
        "(the served store's folder unless the server was started with `lbe app --stores-dir`)."
    )
    open_tab, create_tab = st.columns(2)
    with open_tab:
        st.subheader("Open a store")
        options = [p.name for p in stores.known_stores()]
        pick = (
            st.selectbox(
                "Store files in the stores folder",
                options,
                index=options.index(current.name) if current.name in options else 0,
                key="open_pick",
            )
            if options
            else None
        )
        typed = st.text_input(
            "…or the name of another store file there", key="open_path", placeholder="other.duckdb"
        )
        if st.button("Open", key="open_btn"):
            with input_errors(stop=False):
                opened = stores.open_store(typed or pick or "")
                st.success(f"Opened {opened.name}.")
                st.rerun()
        if chosen and st.button("Back to the default store", key="default_btn"):
            stores.use_default_store()
            st.rerun()
    with create_tab:
        st.subheader("Create a store")
        new_path = st.text_input(
            "Name of the new store file",
            key="create_path",
            placeholder="new.duckdb",
            help="A new, empty .duckdb file in the stores folder.",
        )
        if st.button("Create and open", key="create_btn"):
            with input_errors(stop=False):
                created = stores.create_store(new_path)
                st.success(f"Created and opened {created.name}; import your results below.")

# ------------------------------------------------------------------ import
st.header("Import")


def _upload_name(run: Path, root: Path) -> str:
    """How messages name a run of an upload: its path inside the upload."""
    rel = run.relative_to(root)
    return f"the upload/{rel}" if str(rel) != "." else "the upload"


if not writes_ok:
    # Refused before anything is uploaded or unpacked: with writes off nothing would be
    # imported, and reading an upload costs the server memory, disk and time.
    st.info(f"{writes_off_why} Importing is off as well.")
else:
    fmt_keys = list(FORMATS)
    url_fmt = query_default("fmt", "long")
    fmt = st.radio(
        "Format",
        fmt_keys,
        index=fmt_keys.index(url_fmt) if url_fmt in FORMATS else 0,
        format_func=FORMATS.get,
        horizontal=True,
        key="fmt",
    )
    dataset = st.text_input(
        "Dataset of new samples",
        key="imp_dataset",
        value=query_default("dataset", ""),
        placeholder="lm-eval" if fmt == "lm-eval" else "(the file's dataset column)",
        help="Long tables may carry a dataset column instead; lm-eval runs default to 'lm-eval'.",
    )
    sync_query(fmt=fmt, dataset=dataset)

    if fmt == "long":
        st.caption(
            "Columns: **model, sample, correct** (0/1; true/false and yes/no are refused here as on the command line) and "
            "optionally **dataset, domain, category** (what the Rankings and Task weighting pages group by), "
            "**confidence, true_prob** (the confidence Sort and the Evaluate page's confidence views), "
            "**predicted, label** (Matched accuracy), **split**."
        )
        files = st.file_uploader("Long table", type=reader("long").types, key="up_long")
    elif fmt == "matrix":
        st.caption(
            "Rows = models, columns = samples. Id files: one id per line, or a .csv/.parquet table with "
            "model_id (resp. sample_id) and optional metadata columns (samples: dataset, domain, category, label)."
        )
        c1, c2, c3 = st.columns(3)
        files = {
            "matrix": c1.file_uploader("0/1 matrix", type=reader("matrix").types, key="up_matrix"),
            "models": c2.file_uploader("Model ids", type=list(ID_TYPES), key="up_models"),
            "samples": c3.file_uploader("Sample ids", type=list(ID_TYPES), key="up_samples"),
        }
        with st.expander("Optional per-entry extras (.npy/.npz, same shape as the matrix)"):
            e1, e2, e3 = st.columns(3)
            files["confidence"] = e1.file_uploader(
                "confidence", type=list(EXTRA_TYPES), key="up_conf"
            )
            files["predicted"] = e2.file_uploader(
                "predicted", type=list(EXTRA_TYPES), key="up_pred"
            )
            files["true_prob"] = e3.file_uploader("true_prob", type=list(EXTRA_TYPES), key="up_tp")
    elif fmt == "inspect":
        st.caption(
            "One or more logs written by `inspect eval` (one task run by one model each). Each sample's score must be "
            "C/I or 0/1; the task becomes the domain, the log's model the model (unless named below)."
        )
        files = st.file_uploader(
            "Inspect logs",
            type=reader("inspect").types,
            accept_multiple_files=True,
            key="up_inspect",
        )
        i1, i2, i3 = st.columns(3)
        model_name = i1.text_input("Model name (default: the log's model)", key="in_model")
        scorer = i2.text_input(
            "Scorer", key="in_scorer", help="Only when the log has several scorers."
        )
        epoch_text = i3.text_input(
            "Epoch", key="in_epoch", help="Only when the log has several epochs."
        )
    elif fmt == "lm-eval":
        st.caption(
            "Upload a **zip** of one or more run folders (lm-eval writes one folder per model under --output_path), "
            "or one run's **results_<timestamp>.json** with its **samples_<task>_<timestamp>.jsonl** files. Tasks become "
            "domains; a task's group (from group_subtasks) becomes its category, tasks outside any group have none."
        )
        files = st.file_uploader(
            "lm-eval output",
            type=reader("lm-eval").types,
            accept_multiple_files=True,
            key="up_lm",
        )
        l1, l2, l3 = st.columns(3)
        model_name = l1.text_input(
            "Model name (one run)",
            key="lm_model",
            help="A zip with several run folders names each model after its folder "
            "(org__name becomes org/name).",
        )
        metric = l2.text_input(
            "Metric",
            key="lm_metric",
            placeholder="acc_norm,acc",
            help="The 0/1 metric when a task records several; a list picks per task.",
        )
        flt = l3.text_input(
            "Filter", key="lm_filter", help="Only when a task was logged under several filters."
        )

    else:
        # A format registered beyond these: its file and the dataset, as on the command line.
        files = st.file_uploader(FORMATS[fmt], type=reader(fmt).types, key=f"up_{fmt}")

    def prepare(space: stores.UploadFolder) -> list:
        """The uploads as validated sources (nothing is written yet), each file taking its
        share of the server's disk budget for uploads before it is written."""
        folder = space.path
        ds = dataset.strip() or None
        if fmt == "long":
            if files is None:
                raise InputError("Choose a long table to import.")
            return [imports.read_long_source(stores.save_uploads([files], folder, space)[0], ds)]
        if fmt == "matrix":
            for need in ("matrix", "models", "samples"):
                if files[need] is None:
                    raise InputError(f"A matrix import needs the {need} file too.")
            saved = {
                k: (stores.save_uploads([f], folder / k, space)[0] if f is not None else None)
                for k, f in files.items()
            }
            return [
                imports.read_matrix_source(
                    saved["matrix"],
                    saved["models"],
                    saved["samples"],
                    {k: saved[k] for k in ("confidence", "predicted", "true_prob")},
                    ds,
                )
            ]
        if fmt == "inspect":
            if not files:
                raise InputError("Choose the Inspect log(s) to import.")
            epoch = None
            if epoch_text.strip():
                if not epoch_text.strip().isdigit():
                    raise InputError(f"Epoch {epoch_text.strip()!r} is not a whole number.")
                epoch = int(epoch_text)
            return [
                imports.inspect_source(
                    f, model_name.strip() or None, scorer.strip() or None, epoch, ds
                )
                for f in stores.save_uploads(files, folder / "inspect", space)
            ]
        if fmt != "lm-eval":
            if files is None:
                raise InputError(f"Choose the {FORMATS[fmt]} file to import.")
            return [imports.source(fmt, stores.save_uploads([files], folder / fmt, space)[0], ds)]
        if not files:
            raise InputError(
                "Choose the lm-eval output to import (a zip, or a results file with its samples files)."
            )
        for f in stores.save_uploads(files, folder / "upload", space):
            if f.suffix == ".zip":
                stores.unpack_upload(f, folder / "upload" / f.stem, space)
                f.unlink()
        # Messages and the store's log name the upload, never the folder it was saved in.
        shown = "the upload"
        runs = imports.run_folders(folder / "upload")
        if not runs:
            raise InputError(
                "The upload holds no lm-eval results_<timestamp>.json or samples_<task>_<timestamp>.jsonl file."
            )
        if len(runs) == 1:
            loose = (
                runs[0] == folder / "upload"
            )  # files uploaded one by one: no folder names the model
            name = model_name.strip() or ("" if loose else imports.model_name_from_folder(runs[0]))
            if not name:
                raise InputError(
                    "Give the model name: loose files do not say which model made them."
                )
            return [
                imports.lm_eval_source(
                    runs[0],
                    name,
                    metric,
                    flt,
                    ds,
                    shown_as=_upload_name(runs[0], folder / "upload"),
                )
            ]
        # Several runs are one import (one transaction), as on the command line: each run named
        # by its results file (else its folder), a run that cannot be read skipped and named.
        return [imports.lm_eval_source(folder / "upload", None, metric, flt, ds, shown_as=shown)]

    if st.button(
        f"Import into {plain(current.name)}",
        type="primary",
        key="import_btn",
        disabled=not current.exists(),
    ):
        bar = st.progress(0.0, text="Reading and validating the upload…")
        with (
            input_errors(stop=False, cleanup=bar.empty) as imported,
            stores.upload_folder() as space,
        ):
            sources = prepare(space)
            summaries = stores.import_sources(
                sources, lambda f, text: bar.progress(min(float(f), 1.0), text=text)
            )
        if imported.ok:
            bar.empty()
            for s in summaries:
                st.success(plain(imports.summary_text(s, current.name)))
                # The command line names each skipped run with its reason; so does the page.
                for run, reason in s.get("skipped") or []:
                    st.warning(plain(f"Skipped run {run}: {reason}."))
            st.page_link("pages/1_Budget_explorer.py", label="See it on the Budget explorer")

# ------------------------------------------------------------------ export
st.header("Export")
# An unreadable store stops the page here with its one sentence, after the controls to
# open or create another.
ds_all = get_store().datasets()["dataset"].tolist() if current.exists() else []
if not ds_all:
    st.caption("The store holds no dataset yet.")
else:
    url_x = query_default("xds", ds_all[0])
    xds = st.selectbox(
        "Dataset to export", ds_all, index=ds_all.index(url_x) if url_x in ds_all else 0, key="xds"
    )
    sync_query(xds=xds)
    from ui.caches import store_key
    from ui.exports import counts_csv, long_csv

    key = store_key()
    st.caption(
        "counts.csv is what `rank` and `weights` read (task = domain; tasks without a category are "
        "'uncategorised'); the long table is one row per recorded prediction, as `export --long` writes it."
    )
    # Both files are produced on click: counting a paper-scale dataset reads every row.
    st.download_button(
        "Download counts.csv",
        lambda: counts_csv(key, xds).to_csv(index=False).encode(),
        file_name=f"{xds}-counts.csv",
        mime="text/csv",
        key="dl-counts",
        on_click="ignore",
    )
    st.download_button(
        "Download the long table (CSV)",
        lambda: long_csv(xds),
        file_name=f"{xds}-long.csv",
        mime="text/csv",
        key="dl-long",
        on_click="ignore",
    )
