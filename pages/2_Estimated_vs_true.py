"""Estimated vs true accuracy: one scatter per budget, and how well the ranking survives (Prabhu et al., 2024, *Lifelong Benchmarks*, Figs. 6, 9, 10; Prabhu et al. (2024) App. F)."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from lifelong_core.methods.registry import methods_with
from lifelong_core.workflows.sweeps import rank_agreement, ranks
from ui import charts, data, studies
from ui.common import provenance_note, query_default, show_chart, show_table, sync_query

st.set_page_config(page_title="Estimated vs true accuracy", layout="wide")
st.title("Estimated vs true accuracy")
st.markdown(
    "Every evaluated model's accuracy estimated from n′ samples against its accuracy on all n samples; points on "
    "the dotted line y = x are exact (Prabhu et al., 2024, *Lifelong Benchmarks*, Figs. 6, 9, 10). Hover a point for the model. Methods with "
    f"intervals ({', '.join(methods_with(interval=True))}) draw their 95% interval as a vertical bar."
)

cfg, sel = data.sweep_controls(budgets_default=[32, 64, 128, 256, 512, 1024], repeats=True)
provenance_note(sel.synthetic, cfg.dataset)
# Scatters and tables show one Sort split (the first); the rank-agreement curve, with more
# splits, their mean and band.
table, per_model, _, _ = data.run_config(replace(cfg, repeats=1), sel)
if cfg.repeats > 1:
    st.caption(
        f"Scatters and tables: the Sort split of seed {cfg.seed}. The rank-agreement curve: mean and central 95% "
        f"band over {cfg.repeats} splits (seeds {cfg.seed}…{cfg.seed + cfg.repeats - 1})."
    )
n = sel.A.shape[1]

cols = st.sidebar.slider(
    "Plots per row", 1, 4, int(min(max(query_default("cols", 3, int), 1), 4)), key="cols"
)
sync_query(cols=cols)
# The title counts the models actually plotted and scored: a model-based estimator is scored
# on a seeded subset (run_config says so), and every figure below uses that same subset.
n_plotted = per_model["model_row"].nunique()
show_chart(
    charts.estimated_vs_true_grid(
        per_model,
        table,
        cols=cols,
        title=f"Estimated vs true accuracy ({cfg.search}, {n_plotted} of "
        f"{len(sel.A) - cfg.k} evaluated models)",
    ),
    "estimated_vs_true",
)
show_table(table[["budget", "pearson", "spearman", "mae", "eagg"]], "correlations_by_budget")

st.subheader("Does the estimated ranking keep the true one?")
st.markdown(
    "Rank the models by their estimates and compare with the ranking by true accuracy (Prabhu et al., 2024, App. F, Fig. 8)."
)
agree = rank_agreement(per_model)
left, right = st.columns(2)
with left:
    if cfg.repeats > 1:
        long = studies.long_with_bands(
            studies.repeated_rank_agreement(cfg, sel),
            ["spearman", "kendall", "top10_overlap"],
            "measure",
        )
    else:
        long = agree.melt(
            id_vars="budget",
            value_vars=["spearman", "kendall", "top10_overlap"],
            var_name="measure",
            value_name="value",
        )
    show_chart(
        charts.budget_lines(
            long,
            "value",
            series="measure",
            n_total=n,
            y_title="agreement",
            title="Rank agreement vs budget",
        ),
        "rank_agreement",
    )
with right:
    b_opts = list(cfg.budgets)
    b_raw = query_default("rank_budget", b_opts[len(b_opts) // 2], int)
    b = st.selectbox(
        "Budget for the rank plot",
        b_opts,
        index=b_opts.index(b_raw) if b_raw in b_opts else len(b_opts) // 2,
        key="rank_budget",
    )
    sync_query(rank_budget=b)
    r = ranks(per_model, b)
    show_chart(
        charts.rank_scatter(
            r["true_rank"].to_numpy(),
            r["est_rank"].to_numpy(),
            r["name"].tolist(),
            title=f"Rank by estimate vs true rank at n′ = {b}",
        ),
        "rank_scatter",
    )
show_table(agree, "rank_agreement")
with st.expander(f"Ranks at n′ = {b}"):
    show_table(
        r[
            ["name", "family", "true_acc", "est_acc", "true_rank", "est_rank"]
            + [c for c in ("est_lo", "est_hi") if c in r]
        ],
        "ranks",
    )
