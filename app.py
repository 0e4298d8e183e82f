"""Entry point: the app's navigation (Home + every file in ``pages/``) and the Home page.

Home shows what the store holds, what is real and what is simulated, and where to go
next. Pages are discovered from ``pages/`` (the numeric prefix orders them; the rest of
the file name is their label and URL), so a new page needs no change here.
"""

from __future__ import annotations

import threading
from pathlib import Path

import streamlit as st

from ui import caches, serve
from ui.common import (
    code,
    page_errors,
    page_files,
    page_label,
    page_summary,
    plain,
    provenance_note,
    show_table,
    shown_path,
    store_path,
)
from ui.glossary import glossary_popover


@st.cache_resource(show_spinner=False)
def _warm_imports() -> threading.Thread:
    # Visitors usually land here first: when the server was started with plain
    # `streamlit run app.py` (not `python -m ui.serve`), import what the other pages need
    # in the background, once per server process, so the next page does not pay for it.
    thread = threading.Thread(target=serve.warm_imports, name="lbe-warm-imports", daemon=True)
    thread.start()
    return thread


# The bundled demo's dataset: only its own notes mention digits and simulated release dates.
DEMO_DATASET = "lifelong-digits"
PAGE_FILES = page_files(Path(__file__).resolve().parent / "pages")


def home() -> None:
    _warm_imports()
    st.title("Lifelong Benchmark Explorer")
    st.markdown(
        "A lifelong benchmark keeps every model's per-sample results in one growing cache (models × samples). "
        "**Sort & Search** uses that cache to estimate a new model from a few hundred evaluations, and a new "
        "sample's difficulty from a few models (Prabhu et al., 2024). The other pages add honest uncertainty to rankings "
        "(LA-UR-24-25289 report, 2024) and compare accuracy across similar datasets (Anzaku et al.)."
    )

    key = caches.store_key()
    ov = caches.overview(key)
    ds = ov["datasets"]
    models = ov["models"]

    c = st.columns(5)
    c[0].metric("datasets", len(ds))
    c[1].metric("domains", len(ov["domains"]))
    c[2].metric("models", f"{ov['n_models']:,}")
    c[3].metric("samples", f"{ov['n_samples']:,}")
    c[4].metric(
        "estimated models",
        int(models["estimated"].astype(bool).sum()) if len(models) else 0,
        help="rows inserted from Sort & Search estimates, not from real evaluations",
    )
    st.caption(f"Store: {code(shown_path(store_path()))}")

    st.subheader("What is real and what is simulated")
    if len(ds):
        # One caption per dataset with its full description and source (the table cuts long
        # text; descriptions carry what an import found irregular, e.g. repeated names).
        provenance_note()
        show_table(
            ds.assign(kind=ds["synthetic"].map({True: "synthetic", False: "real"})), "datasets"
        )
        partial = ov["partial"]
        if len(partial):
            st.caption(
                f"{len(partial)} model(s) marked partial, evaluated on only part of their dataset (pages that "
                "need every domain leave them out): "
                + "; ".join(f"{plain(n)} ({plain(why)})" for n, why in partial)
            )
    st.markdown(
        "- **Recorded:** every prediction of a dataset marked *real* was recorded by an evaluation and imported "
        "as is; each dataset's description and source above come from the store's own metadata.\n"
        "- **Estimated:** rows a user inserted from the *Evaluate something new* page are marked *estimated* and left out "
        "of every score: Sort & Search, rankings, task weighting and matched accuracy.\n"
        "- **Synthetic:** datasets from the seeded generator are marked *synthetic* here and on every page."
    )
    if DEMO_DATASET in set(ds["dataset"]):
        st.markdown(
            "- **The bundled demo:** its classifiers were trained on scikit-learn's handwritten digits and their "
            "predictions recorded once; its domains are shifts (noise, blur, rotation, …) rendered from the real test "
            "digits; its release order is simulated (a plausible timeline used by the Stream page and the "
            '"earliest released" Sort set).'
        )
    st.info(
        "Your own results: the **Data** page opens or creates a store and imports long tables, wide matrices "
        "and lm-evaluation-harness runs; `python -m lifelong_core import` does the same from a shell."
    )

    left, right = st.columns(2)
    with left:
        st.subheader("Domains")
        show_table(ov["domains"], "domains")
    with right:
        st.subheader("Models by family")
        if len(models):
            fam = ov["families"]
            show_table(fam, "model_families")

    st.subheader("Latest insertions")
    log = ov["log"]
    if len(log):
        show_table(log.sort_values("log_id", ascending=False).head(10), "insertion_log")
    else:
        st.caption("The log is empty.")

    st.subheader("Where to go next")
    # Pages are discovered, not listed: a page added by another part of the app shows up here
    # with the first paragraph of its docstring as the description.
    for page in PAGE_FILES:
        label, desc = page_label(page), page_summary(page)
        cols = st.columns([1, 3])
        with cols[0]:
            st.page_link(f"pages/{page.name}", label=label)
        cols[1].caption(desc)


st.set_page_config(page_title="Lifelong Benchmark Explorer", layout="wide")
navigation = st.navigation(
    [st.Page(home, title="Home", default=True)]
    + [st.Page(f"pages/{p.name}", title=page_label(p)) for p in PAGE_FILES]
)
# Drawn here, before the page, so every page has it in its sidebar.
glossary_popover()
# A store whose file is damaged fails only when a lost page is read, which can be any
# read of any page: what a page did not catch itself is one error box (ui.common).
with page_errors():
    navigation.run()
