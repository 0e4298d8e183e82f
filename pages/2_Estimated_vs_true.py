"""Estimated vs true accuracy: one scatter per budget, and how well the ranking survives (Prabhu et al., 2024, *Lifelong Benchmarks*, Figs. 6, 9, 10; Prabhu et al. (2024) App. F)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from lifelong_core.methods.registry import BASELINE_METHOD, LIMIT_METHOD
from lifelong_core.workflows.sweeps import interval_coverage, rank_agreement, ranks
from ui import caches, charts, controls, studies
from ui.common import picked, provenance_note, query_default, show_chart, show_table, sync_query

st.set_page_config(page_title="Estimated vs true accuracy", layout="wide")
st.title("Estimated vs true accuracy")
st.markdown(
    "Every evaluated model's accuracy estimated from n′ samples against its accuracy on all n samples; points on "
    "the dotted line y = x are exact (Prabhu et al., 2024, *Lifelong Benchmarks*, Figs. 6, 9, 10). Hover a point for the model. Methods with "
    "a 95% interval draw it as a vertical bar. Behind the chosen method, the baselines of the same size: a random "
    "sample in grey, and in sand first-n, the first items of each task, which is what `lm_eval --limit` runs "
    "(biased: its points can sit off the line together; turn both off in the sidebar)."
)

cfg, sel = controls.sweep_controls(budgets_default=[32, 64, 128, 256, 512, 1024], repeats=True)
provenance_note(sel.synthetic, cfg.dataset)
# Scatters and tables show one Sort split (the first); the rank-agreement curve, with more
# splits, their mean and band.
table, per_model, _, _ = controls.run_config(replace(cfg, repeats=1), sel)
# The baselines on the same Sort split and models, drawn behind the method.
base: dict[str, tuple] = {}
if cfg.baseline:
    for name, label in (
        (BASELINE_METHOD, "Running the random-sample baseline…"),
        (LIMIT_METHOD, "Running the first-n baseline…"),
    ):
        if name == cfg.search:
            continue
        t_b, per_b, _, _ = controls.run_config(
            replace(cfg, repeats=1), sel, search=name, label=label
        )
        base[name] = (t_b, per_b)
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
# The figures are built once per server for these settings, not once per visitor.
view = (caches.store_key(), cfg)
show_chart(
    lambda: charts.estimated_vs_true_grid(
        per_model,
        table,
        cols=cols,
        title=f"Estimated vs true accuracy ({cfg.search}, {n_plotted} of "
        f"{len(sel.A) - cfg.k} evaluated models)" + (" against the baselines" if base else ""),
        label=controls.method_label(cfg.search),
        baselines=[(controls.method_label(b), per_b) for b, (_, per_b) in base.items()],
    ),
    "estimated_vs_true",
    key=(view, cols),
)
scores = ["budget", "pearson", "spearman", "mae", "eagg"]
show_table(
    pd.concat(
        [table[scores].assign(method=cfg.search)]
        + [t_b[scores].assign(method=b) for b, (t_b, _) in base.items()]
    )[["method", *scores]],
    "correlations_by_budget",
)


# Do the intervals hold the truth as often as they claim? Counted over the models shown.
def coverage_of_methods() -> pd.DataFrame:
    cov = [
        interval_coverage(p).assign(method=name)
        for name, p in ((cfg.search, per_model), *((b, per_b) for b, (_, per_b) in base.items()))
    ]
    return pd.concat(cov, ignore_index=True)


cov = caches.of_sweep("interval-coverage", view, coverage_of_methods)
if len(cov):
    st.markdown("**Do the 95% intervals hold the true accuracy?**")
    st.caption(
        "Share of the models shown whose true accuracy lies inside their 95% interval, with the exact 95% "
        "interval of that share (Clopper-Pearson). In this sweep every model is run on the same samples at a "
        "budget (one common draw per budget), so their errors move together and a share counted over them is "
        "less certain than its interval says; the Backtest page draws each held-out model its own samples, many "
        "times, and reports each model's own coverage. first-n's interval is the one its users compute: the "
        "first items are not a random sample, so it does not hold what it claims."
    )
    show_table(cov[["method", *[c for c in cov.columns if c != "method"]]], "interval_coverage")

st.subheader("Does the estimated ranking keep the true one?")
st.markdown(
    "Rank the models by their estimates and compare with the ranking by true accuracy (Prabhu et al., 2024, App. F, Fig. 8)."
)
agree = caches.of_sweep("rank-agreement", view, lambda: rank_agreement(per_model))
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
        lambda: charts.budget_lines(
            long,
            "value",
            series="measure",
            n_total=n,
            y_title="agreement",
            title="Rank agreement vs budget",
        ),
        "rank_agreement",
        key=view,
    )
with right:
    b_opts = list(cfg.budgets)
    b_raw = query_default("rank_budget", b_opts[len(b_opts) // 2], int)
    b: int = picked(
        st.selectbox(
            "Budget for the rank plot",
            b_opts,
            index=b_opts.index(b_raw) if b_raw in b_opts else len(b_opts) // 2,
            key="rank_budget",
        )
    )
    sync_query(rank_budget=b)
    r = ranks(per_model, b)
    show_chart(
        lambda: charts.rank_scatter(
            r["true_rank"].to_numpy(),
            r["est_rank"].to_numpy(),
            r["name"].tolist(),
            title=f"Rank by estimate vs true rank at n′ = {b}",
        ),
        "rank_scatter",
        key=(view, b),
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
