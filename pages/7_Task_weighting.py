"""Task weighting with uncertainty (LA-UR-24-25289 report, 2024, §2.3, §3.3, Appendix A.2; Figures 3-4).

Widgets -> lifelong_core.stats.weighting -> ui.ternary. For every weighting of three
task categories on a simplex grid, the best model, or gray where the top two are within
k standard errors of each other (correlation rho between them, Eq. 3).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import streamlit as st

from lifelong_core.stats import (
    bootstrap,
    category_stats,
    category_stats_from_bootstrap,
    category_stats_from_intervals,
    fit_hierarchical,
    from_frame,
    normalize,
    read_counts_csv,
    weight_regions,
)
from lifelong_core.stats.hierarchical_views import category_stats_from_hierarchical
from lifelong_core.stats.vtab import (
    CATEGORIES,
    counts_from_leaderboard,
    load_published,
    published_table,
)
from lifelong_core.workflows.rankings import DEFAULT_TOP, default_models
from ui.categories import category_control
from ui.common import (
    input_errors,
    picked,
    plain,
    provenance_note,
    query_default,
    query_list,
    show_chart,
    show_table,
    sync_query,
    url_index,
    url_sync_keys,
)
from ui.store_dataset import complete_counts, pick_dataset
from ui.ternary import matplotlib_ternary, plotly_ternary

SOURCES = {
    "published": "VTAB-1k published figures",
    "vtab": "VTAB-1k per-task leaderboard",
    "store": "This store",
    "upload": "Upload counts.csv",
}
STATS = {
    "binomial": "binomial standard errors (Appendix A.2)",
    "hierarchical": "hierarchical model (Appendix Fig. 5)",
}
STEPS = [0.1, 0.05, 0.025, 0.02, 0.01]


@st.cache_data(show_spinner="Computing the weight map…", max_entries=32)
def regions_for(
    source_id: str,
    counts: pd.DataFrame | None,
    cats: tuple[str, ...],
    normalized: bool,
    step: float,
    k: float,
    rho: float,
    models: tuple[str, ...] | None,
    method: str = "binomial",
):
    if counts is None:
        pub = published_table(load_published(), "bootstrap", normalized=normalized)
        stats = category_stats_from_intervals(
            list(pub["model"]),
            CATEGORIES,
            pub[list(CATEGORIES)].to_numpy() / 100,
            pub[[f"{c}_lo" for c in CATEGORIES]].to_numpy() / 100,
            pub[[f"{c}_hi" for c in CATEGORIES]].to_numpy() / 100,
            level=0.834,
        )
    else:
        whole = from_frame(counts)
        table = whole if models is None else whole.subset(models=list(models))
        if method == "hierarchical":
            # Category means and variances from posterior predictive draws (Appendix Fig. 5).
            fit = fit_hierarchical(table, chains=2, draws=500, warmup=250, seed=0)
            stats = category_stats_from_hierarchical(fit, cats)
        elif normalized:
            # Bounds over every model of the source (§2.4), whichever are weighed here.
            stats = category_stats_from_bootstrap(
                normalize(bootstrap(table, n_boot=1000, seed=0), source=whole), cats
            )
        else:
            stats = category_stats(table, cats)
    return weight_regions(stats, step=step, se_mult=k, rho=rho)


@st.cache_data(show_spinner="Drawing the ternary map…", max_entries=32)
def static_figure(_regions, key: tuple, title: str, fmt: str = "png") -> bytes:
    """The static map's bytes in ``fmt`` (the figure itself is not cacheable)."""
    import io

    fig = matplotlib_ternary(_regions, title)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, bbox_inches="tight", dpi=160)
    plt.close(fig)
    return buf.getvalue()


st.title("Task weighting with uncertainty")
st.caption(
    "The LA-UR-24-25289 report (2024) §2.3 and §3.3: weight three task categories, find the best model at every weighting, and paint the "
    "point gray where the top two differ by at most k standard errors of their difference. Standard errors are "
    "binomial with independent tasks (Appendix A.2); rho is the correlation between the top two models (Eq. 3), "
    "which shrinks the SE. A picture drawn with uncertainty, not a significance test."
)

keys = list(SOURCES)
url_source = query_default("wsource", "published")
source: str = picked(
    st.radio(
        "Data source",
        keys,
        index=keys.index(url_source) if url_source in SOURCES else 0,
        format_func=SOURCES.get,
        horizontal=True,
        key="wsource",
    )
)
source_name = SOURCES[source]

counts: pd.DataFrame | None = None
models = None
if source == "published":
    st.caption(
        "Table A.3 category figures for the 16 VTAB-1k models; each category's standard error is recovered from its "
        "published 83.4% interval (width / 2.77), so it is approximate: the figures are rounded to 0.1 point."
    )
    available = list(CATEGORIES)
elif source == "vtab":
    st.caption(
        "The 16 VTAB-1k models' per-task accuracies from the public leaderboard (bundled in data/vtab1k/; "
        "$LBE_VTAB_LEADERBOARD names another copy), turned into counts as the paper does: accuracy x "
        "test-set size, rounded. Simulated per-item data, published accuracies."
    )
    with input_errors():
        counts = counts_from_leaderboard().to_frame()
    available = list(dict.fromkeys(counts["category"]))
elif source == "store":
    dataset = pick_dataset("wdataset", st)
    url_sync_keys("wdataset")
    source_name = dataset
    provenance_note(dataset=dataset)
    counts = category_control(complete_counts(dataset), "wcatmap", need=3)
    available = list(dict.fromkeys(counts["category"]))
else:
    up = st.file_uploader(
        "counts.csv (model, task, category, correct, total)", type=["csv"], key="wupload"
    )
    if up is None:
        st.info("Upload a counts.csv with at least three task categories.")
        st.stop()
    with input_errors():
        counts = read_counts_csv(up, name=up.name).to_frame()
    available = list(dict.fromkeys(counts["category"]))

if len(available) < 3:
    st.info(
        f"Task weighting weighs three task categories; this data has {len(available)} "
        f"({plain(', '.join(available))}). "
        + (
            "Give each task a category under *Task categories* above, or upload a "
            "counts.csv whose category column has three values."
            if source == "store"
            else "Upload a counts.csv with three categories."
        )
    )
    st.stop()
if len(available) > 3:
    cats = st.multiselect(
        "Three categories to weight (top, bottom left, bottom right)",
        available,
        default=query_list("wcats", available[:3], available)[:3],
        max_selections=3,
        key="wcats",
    )
    sync_query(wcats=cats)
    if len(cats) != 3:
        st.info("Choose exactly three categories.")
        st.stop()
    if counts is not None:  # the published figures are three categories already
        counts = counts[counts["category"].isin(cats)].reset_index(drop=True)
else:
    cats = available

if counts is not None:
    acc = counts.groupby("model")[["correct", "total"]].sum()
    order = list((acc["correct"] / acc["total"]).sort_values(ascending=False).index)
    if len(order) > DEFAULT_TOP:
        shown = default_models(order)
        models = tuple(
            st.multiselect(
                f"Models (default: all {len(order)}; type to search)"
                if len(shown) == len(order)
                else f"Models (default: the {DEFAULT_TOP} most accurate of {len(order)}; type to search)",
                order,
                default=query_list("wmodels", shown, order),
                key=f"wmodels-{source}",
            )
        )
        sync_query(wmodels=list(models))
        if len(models) < 2:
            st.info("Choose at least two models.")
            st.stop()

method = "binomial"
if counts is not None:
    url_m = query_default("wstats", "binomial")
    method = picked(
        st.radio(
            "Standard errors from",
            list(STATS),
            index=list(STATS).index(url_m) if url_m in STATS else 0,
            format_func=STATS.get,
            horizontal=True,
            key="wstats",
            help="The hierarchical model (2 chains x 500 draws) shrinks small tasks towards each model's "
            "mean; its map is the paper's Fig. 5.",
        )
    )
    sync_query(wstats=method)
c1, c2, c3, c4 = st.columns(4)
url_k = query_default("k", 1.0, float)
k = c1.slider("k (standard errors)", 0.0, 3.0, value=min(max(url_k, 0.0), 3.0), step=0.25, key="k")
url_rho = query_default("rho", 0.0, float)
rho = c2.slider(
    "rho (correlation of the top two)",
    0.0,
    0.95,
    value=min(max(url_rho, 0.0), 0.95),
    step=0.05,
    key="rho",
)
step: float = picked(
    c3.selectbox(
        "Grid step",
        STEPS,
        index=url_index("step", STEPS, 0.05),
        key="step",
        help="0.01 gives 101 points per side (5,151 weightings).",
    )
)
normalized = c4.toggle(
    "Normalised accuracy",
    value=query_default("wnorm", False, bool),
    key="wnorm",
    help="Figure 4 of the paper: task scores normalised by the lowest/highest bootstrap score (§2.4).",
)
sync_query(wsource=source, k=k, rho=rho)
url_sync_keys("step", "wnorm")

with input_errors():
    if method == "hierarchical" and normalized:
        st.info("The hierarchical model works on raw accuracy; the map below is not normalised.")
        normalized = False
    regions = regions_for(
        source,
        counts,
        tuple(cats),
        bool(normalized),
        float(step),
        float(k),
        float(rho),
        models,
        method,
    )

frame = regions.to_frame()
share = frame["winner"].value_counts(normalize=True)
m1, m2 = st.columns(2)
m1.metric("Weightings with a clear winner", f"{1 - share.get('indeterminate', 0.0):.0%}")
m2.metric(
    "Models that win somewhere",
    f"{frame.loc[frame['winner'] != 'indeterminate', 'winner'].nunique()}",
)

# The open tab lives in the URL and only it draws: the other map is not rendered (PNG and PDF, or plotly).
tab_static, tab_interactive = st.tabs(
    ["Ternary map (python-ternary)", "Interactive (plotly)"], key="wtab", bind="query-params"
)
label = "normalised accuracy" if normalized else "accuracy"
title = f"{source_name}: best model by {label}" + (
    " (hierarchical model)" if method == "hierarchical" else ""
)
with tab_static:
    if tab_static.open:
        st.caption(
            f"Corners: **{plain(cats[0])}** top, **{plain(cats[1])}** bottom left, **{plain(cats[2])}** bottom "
            "right (weight 1 there)."
        )
        figure_key = (source, tuple(cats), normalized, step, k, rho, models, method)
        png = static_figure(regions, figure_key, title)
        st.image(png, width="stretch")
        d1, d2 = st.columns(2)
        d1.download_button(
            "Download ternary map (PNG)",
            png,
            file_name="task_weighting.png",
            mime="image/png",
            key="dl-tern-png",
            on_click="ignore",
        )
        # The PDF is drawn when asked for: its backend's imports and drawing were most of
        # the page's first view, for a file few visitors download.
        d2.download_button(
            "Download ternary map (PDF)",
            lambda: static_figure(regions, figure_key, title, "pdf"),
            file_name="task_weighting.pdf",
            mime="application/pdf",
            key="dl-tern-pdf",
            on_click="ignore",
        )
with tab_interactive:
    if tab_interactive.open:
        show_chart(plotly_ternary(regions, title), f"task-weighting-{source}")

out = frame.copy()
out["diff_pct"] = (out.pop("diff") * 100).round(4)
out["se_pct"] = (out.pop("se") * 100).round(4)
show_table(out, f"regions-{source}")
