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
from lifelong_core.workflows import imports
from ui import stores
from ui.common import (
    STORE_CHOICE,
    app_writes_enabled,
    get_store,
    input_errors,
    picked,
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


def _lm_eval_sources(
    files: list, space: stores.UploadFolder, ds: str | None, options: dict
) -> list:
    """An lm-eval upload (a zip of run folders, or one run's loose files) as one source:
    the runs it holds found as the command line finds them, named by their place in the
    upload."""
    folder = space.path
    for f in stores.save_uploads(files, folder / "upload", space):
        if f.suffix == ".zip":
            stores.unpack_upload(f, folder / "upload" / f.stem, space)
            f.unlink()
    runs = imports.run_folders(folder / "upload")
    if not runs:
        raise InputError(
            "The upload holds no lm-eval results_<timestamp>.json or samples_<task>_<timestamp>.jsonl file."
        )
    model_name = options.pop("model", None)
    if len(runs) == 1:
        # Files uploaded one by one: no folder names the model.
        loose = runs[0] == folder / "upload"
        name = model_name or ("" if loose else imports.model_name_from_folder(runs[0]))
        if not name:
            raise InputError("Give the model name: loose files do not say which model made them.")
        shown = _upload_name(runs[0], folder / "upload")
        return [imports.lm_eval_source(runs[0], name, dataset=ds, shown_as=shown, **options)]
    # Several runs are one import (one transaction), as on the command line: each run named
    # by its results file (else its folder), a run that cannot be read skipped and named.
    # Messages and the store's log name the upload, never the folder it was saved in.
    return [
        imports.lm_eval_source(
            folder / "upload", None, dataset=ds, shown_as="the upload", **options
        )
    ]


if not writes_ok:
    # Refused before anything is uploaded or unpacked: with writes off nothing would be
    # imported, and reading an upload costs the server memory, disk and time.
    st.info(f"{writes_off_why} Importing is off as well.")
else:
    fmt_keys = list(FORMATS)
    url_fmt = query_default("fmt", "long")
    fmt: str = picked(
        st.radio(
            "Format",
            fmt_keys,
            index=fmt_keys.index(url_fmt) if url_fmt in FORMATS else 0,
            format_func=FORMATS.get,
            horizontal=True,
            key="fmt",
        )
    )
    dataset = st.text_input(
        "Dataset of new samples",
        key="imp_dataset",
        value=query_default("dataset", ""),
        placeholder="lm-eval" if fmt == "lm-eval" else "(the file's dataset column)",
        help="Long tables may carry a dataset column instead; lm-eval runs default to 'lm-eval'.",
    )
    sync_query(fmt=fmt, dataset=dataset)

    # The format's uploader and one field per option it declares (lifelong_core.io.readers):
    # a format registered later gets its form with no edit here.
    fmt_reader = reader(fmt)
    if fmt_reader.about:
        st.caption(fmt_reader.about)
    files = st.file_uploader(
        fmt_reader.label,
        type=fmt_reader.types,
        accept_multiple_files=fmt_reader.many,
        key=f"up_{fmt}",
    )
    entered: dict = {}
    needed = [o for o in fmt_reader.options if o.kind == "path" and o.required]
    if needed:
        for col, opt in zip(st.columns(len(needed)), needed):
            entered[opt.name] = col.file_uploader(
                opt.label or opt.name, type=list(opt.types), key=f"up_{fmt}_{opt.name}"
            )
    optional_files = [o for o in fmt_reader.options if o.kind == "path" and not o.required]
    if optional_files:
        with st.expander("Optional files"):
            for col, opt in zip(st.columns(len(optional_files)), optional_files):
                entered[opt.name] = col.file_uploader(
                    opt.label or opt.name,
                    type=list(opt.types),
                    key=f"up_{fmt}_{opt.name}",
                    help=opt.help,
                )
    fields = [o for o in fmt_reader.options if o.kind != "path"]
    if fields:
        for col, opt in zip(st.columns(len(fields)), fields):
            if opt.kind == "flag":
                entered[opt.name] = col.checkbox(
                    opt.label or opt.name, key=f"in_{fmt}_{opt.name}", help=opt.help
                )
            else:
                entered[opt.name] = col.text_input(
                    opt.label or opt.name, key=f"in_{fmt}_{opt.name}", help=opt.help
                )

    def prepare(space: stores.UploadFolder) -> list:
        """The uploads as validated sources (nothing is written yet), each file taking its
        share of the server's disk budget for uploads before it is written."""
        folder = space.path
        ds = dataset.strip() or None
        if not files:
            raise InputError(f"Choose the {fmt_reader.label} to import.")
        options = {
            name: (
                stores.save_uploads([value], folder / name, space)[0]
                if hasattr(value, "getvalue")
                else value
            )
            for name, value in entered.items()
            if value is not None
        }
        options = imports.option_values(fmt, options)
        chosen = files if isinstance(files, list) else [files]
        if fmt == "lm-eval":
            return _lm_eval_sources(chosen, space, ds, options)
        uploads = stores.save_uploads(chosen, folder / fmt, space)
        return [imports.source(fmt, f, ds, **options) for f in uploads]

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
    xds: str = picked(
        st.selectbox(
            "Dataset to export",
            ds_all,
            index=ds_all.index(url_x) if url_x in ds_all else 0,
            key="xds",
        )
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
