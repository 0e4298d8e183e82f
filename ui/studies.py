"""Views of the studies in ``lifelong_core.studies`` for the Budget explorer (presentation only).

``new_samples_tab`` draws the insert_D study (Prabhu et al. 2024, "Efficient Lifelong
Model Evaluation in an Era of Rapid Progress", §4.3, Fig. 4a) for the sidebar's data
choice: MAE vs model budget m' with fits, random and held-out-domain splits of the new
samples, and the model rankings by Sum and by Confidence Sum.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.errors import InputError
from ui import charts, data
from ui.common import query_default, query_list, show_chart, show_table, sync_query


def _study(key, dataset, domains, fraction, by_domain, sorts, budgets, sampling, search, seed, progress=None):
    from lifelong_core.studies.new_samples import domain_splits, new_sample_study, random_split

    sel = data.selection(key, dataset, domains)
    conf = None
    if "confidence" in sorts:
        conf = data.confidence(key, dataset, domains, tuple(range(len(sel.models))))
        if conf is None:
            raise InputError("the store has no confidences (true_prob) for these models; rank models by sum only.")
    splits = [random_split(sel.A.shape[1], fraction, seed)]
    if by_domain:
        splits += domain_splits(sel.samples["domain"].astype(str).tolist())
    return new_sample_study(sel.A, splits, budgets, sorts=sorts, confidence=conf, sampling=sampling, search=search,
                            seed=seed, progress=progress)


def new_sample_study(key, dataset, domains, fraction, by_domain, sorts, budgets, sampling, search, seed, progress=None):
    """The study for one choice, memoised beside the sweeps (a progress bar cannot be replayed by st.cache_data)."""
    args = (key, dataset, domains, fraction, by_domain, sorts, budgets, sampling, search, seed)
    return data._memo().get_or_compute(("new_samples",) + args, lambda: _study(*args, progress=progress))


def summary_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """One curve per (split kind, ranking): the random split as is, held-out domains
    averaged over the domains (each domain's curve weighs the same)."""
    kind = np.where(curves["split"].str.startswith("domain:"), "held-out domain (mean over domains)", "random")
    out = (curves.assign(kind=kind).groupby(["kind", "sort", "budget"], as_index=False, sort=False)
           [["mae", "eagg", "kappa"]].mean())
    out["curve"] = out["kind"] + " · " + out["sort"]
    return out


def new_samples_tab(cfg, sel) -> None:
    """The insert_D tab: controls in the tab (URL keys ``ns_*``), curves, fits, rankings."""
    from lifelong_core.sortsearch import fit_exponential
    from lifelong_core.sortsearch.methods import is_threshold_rule

    m, n = sel.A.shape
    st.markdown(
        "**insert_D**: a new *sample* is run on only **m′** models spread along the models' ranking, and its "
        "result on every other model is predicted (Sort & Search on the transpose, seed 001 §3.3, §4.3, Fig. 4a). "
        "Models are ranked on the samples already in the cache, by accuracy (**Sum**) or by summed confidence "
        "of the true class (**Confidence Sum**). New samples are a random share of the chosen samples, and, "
        "optionally, each domain in turn (a held-out-domain split: does the ranking learnt on the other shifts "
        "transfer?). Sort set, Sort method and budgets of the sidebar do not apply here; sampling, rule and seed do."
    )
    if m < 3:
        st.info("insert_D needs at least three models.")
        return
    rule = cfg.search if is_threshold_rule(cfg.search) else "midpoint"
    c = st.columns(4)
    # Confidence Sum needs the store's true-class confidences; without them only Sum is offered.
    has_conf = data.confidence(data.store_key(), cfg.dataset, cfg.domains, tuple(range(m))) is not None
    offered = ["sum", "confidence"] if has_conf else ["sum"]
    sorts = c[0].multiselect("Model ranking", offered, key="ns_rank", default=query_list("ns_rank", offered, offered),
                             help=None if has_conf else "the store holds no confidences for these models")
    fraction = c[1].slider("Share of new samples (random split)", 0.05, 0.5,
                           float(np.clip(query_default("ns_frac", 0.2, float), 0.05, 0.5)), 0.05, key="ns_frac")
    n_dom = sel.samples["domain"].nunique()
    by_domain = c[2].checkbox("Held-out-domain split", value=query_default("ns_dom", n_dom > 1, bool) and n_dom > 1,
                              key="ns_dom", disabled=n_dom < 2,
                              help="each domain in turn is new; the others are the cache" if n_dom > 1 else
                              "the chosen samples come from one domain")
    choices = [b for b in data.budget_choices(m) if b < m] or [m - 1]
    default = [b for b in choices if 2 <= b <= 2048] or choices
    budgets = c[3].multiselect("Model budgets m′", choices, key=f"ns_budgets:{m}",
                               default=[int(b) for b in query_list("ns_budgets", [str(b) for b in default],
                                                                   [str(b) for b in choices])])
    sync_query(ns_rank=sorts, ns_frac=fraction, ns_dom=by_domain, ns_budgets=sorted(budgets))
    if not sorts or not budgets:
        st.warning("Choose at least one ranking and one budget.")
        return
    bar = st.progress(0.0, text="Running insert_D…")
    try:
        study = new_sample_study(data.store_key(), cfg.dataset, cfg.domains, round(float(fraction), 2), bool(by_domain),
                                 tuple(sorts), tuple(sorted(int(b) for b in budgets)), cfg.sampling, rule, cfg.seed,
                                 progress=lambda f: bar.progress(min(float(f), 1.0), text="Running insert_D…"))
    except InputError as exc:
        bar.empty()
        st.error(str(exc))
        return
    bar.empty()
    curves = summary_curves(study.curves)
    fits = {name: fit_exponential(g["budget"].to_numpy(), g["mae"].to_numpy()) for name, g in curves.groupby("curve")}
    fig = charts.budget_lines(curves, "mae", series="curve", n_total=m, fits=fits, y_title="MAE over models",
                              title=f"New samples: MAE vs model budget m′ (rule {rule}, sampling {cfg.sampling})")
    fig.update_xaxes(title_text="model budget m′ (models each new sample is run on)")
    fig.update_layout(xaxis2=dict(title=dict(text="compute saved m / m′")))
    show_chart(fig, "insert_d_mae")
    rnd = study.curves[study.curves["split"] == "random"]
    st.caption(f"Random split: {int(rnd['new_samples'].iloc[0]):,} new samples of {n:,}, {m} models. Dashed: "
               "MAE = a·exp(−b·m′) + c fitted to each curve.")
    show_table(curves[["curve", "budget", "mae", "eagg", "kappa"]], "insert_d_curves")
    if by_domain:
        dom = study.curves[study.curves["split"].str.startswith("domain:")]
        last = dom[dom["budget"] == dom["budget"].max()].assign(domain=lambda d: d["split"].str[len("domain:"):])
        st.markdown(f"**Held-out domains at m′ = {int(dom['budget'].max())}** (MAE of each domain's samples when "
                    "models are ranked on the other domains)")
        show_table(last.pivot(index="domain", columns="sort", values="mae").reset_index(), "insert_d_by_domain")
    with st.expander("Fits per split, all curves, per-sample estimates"):
        show_table(study.fits, "insert_d_fits")
        show_table(study.curves, "insert_d_all_curves")
        show_table(study.per_sample, "insert_d_per_sample")
    if len(study.agreement):
        st.markdown("**Model ranking by Sum vs by Confidence Sum** (on each split's cache samples)")
        a = study.agreement
        st.caption(f"Spearman's ρ between the two rankings: {a['spearman'].min():.3f} to {a['spearman'].max():.3f} over "
                   f"{len(a)} split(s); the two top-10s share {int(a['same_top10'].min())}-{int(a['same_top10'].max())} models.")
        r = study.rankings[study.rankings["split"] == "random"].pivot(index="model_row", columns="sort", values="rank")
        r = r.reset_index()
        r.insert(1, "model", np.asarray(sel.names, dtype=object)[r["model_row"].to_numpy()])
        show_table(r.sort_values("sum"), "insert_d_rankings")
