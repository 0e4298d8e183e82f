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
from lifelong_core.methods import capabilities
from lifelong_core.methods.registry import PUBLISHED_METHOD
from lifelong_core.studies.new_samples import RANDOM_SPLIT
from lifelong_core.workflows.sweeps import SweepRequest
from ui import caches, charts, controls
from ui.common import (
    picked,
    plain,
    query_default,
    query_list,
    show_chart,
    show_table,
    sync_query,
    url_index,
)


def _needs_dense(sel, what: str, command: str) -> bool:
    """True (after saying so) when ``sel`` is beyond the app's dense-read limit: these
    studies replay whole rows in memory, which the app only does within that bound."""
    if isinstance(sel.A, np.ndarray):
        return False
    st.info(
        f"{what} reads the whole selection as one dense matrix, which this store is too large for in the "
        f"app (the dense-read limit, LBE_DENSE_LIMIT_MB). Run it on the command line instead: `{command}`."
    )
    return True


def _study(
    key,
    dataset,
    domains,
    fraction,
    by_domain,
    sorts,
    budgets,
    sampling,
    search,
    seed,
    progress=None,
):
    from lifelong_core.studies.new_samples import new_sample_study
    from lifelong_core.workflows.new_samples import make_splits

    sel = caches.selection(key, dataset, domains)
    conf = None
    if "confidence" in sorts:
        conf = caches.confidence(key, dataset, domains, tuple(range(len(sel.models))))
        if conf is None:
            raise InputError(
                "the store has no confidences (true_prob) for these models; rank models by sum only."
            )
    splits = make_splits(
        sel.A.shape[1],
        sel.samples["domain"].astype(str).tolist(),
        ("random", "domain") if by_domain else ("random",),
        fraction,
        seed,
    )
    return new_sample_study(
        sel.dense(),
        splits,
        budgets,
        sorts=sorts,
        confidence=conf,
        sampling=sampling,
        search=search,
        seed=seed,
        progress=progress,
    )


def new_sample_study(
    key,
    dataset,
    domains,
    fraction,
    by_domain,
    sorts,
    budgets,
    sampling,
    search,
    seed,
    progress=None,
):
    """The study for one choice, memoised beside the sweeps (a progress bar cannot be replayed by st.cache_data)."""
    args = (key, dataset, domains, fraction, by_domain, sorts, budgets, sampling, search, seed)
    return caches._memo().get_or_compute(
        ("new_samples",) + args, lambda: _study(*args, progress=progress)
    )


def summary_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """One curve per (split kind, ranking): the random split as is, held-out domains
    averaged over the domains (each domain's curve weighs the same)."""
    kind = np.where(
        curves["split"].str.startswith("domain:"), "held-out domain (mean over domains)", "random"
    )
    out = (
        curves.assign(kind=kind)
        .groupby(["kind", "sort", "budget"], as_index=False, sort=False)[["mae", "eagg", "kappa"]]
        .mean()
    )
    out["curve"] = out["kind"] + " · " + out["sort"]
    return out


def new_samples_tab(cfg, sel) -> None:
    """The insert_D tab: its controls (URL keys ``ns_*``), curves, fits and rankings.

    The study of Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of
    Rapid Progress*, §4.3, Fig. 4a, for the sidebar's data: MAE against the model budget
    m′ with exponential fits, random and held-out-domain splits of the new samples, and
    the models ranked by Sum and by Confidence Sum. On a store beyond the dense-read
    limit it says to run ``lbe sweep-samples`` instead; bad settings are one error box.

    Parameters
    ----------
    cfg : SweepConfig
        The sidebar's choice (:func:`ui.controls.sweep_controls`).
    sel : Selection
        The selection it was made on.
    """
    from lifelong_core.methods import is_threshold_rule
    from lifelong_core.sortsearch import fit_exponential
    from lifelong_core.sortsearch.search import DEFAULT_RULE
    from lifelong_core.workflows.budgets import budget_choices

    if _needs_dense(
        caches.selection(caches.store_key(), cfg.dataset, cfg.domains),
        "The insert_D study",
        "lbe sweep-samples --help",
    ):
        return
    m, n = sel.A.shape
    st.markdown(
        "**insert_D**: a new *sample* is run on only **m′** models spread along the models' ranking, and its "
        "result on every other model is predicted (Sort & Search on the transpose, Prabhu et al., 2024, §3.3, §4.3, Fig. 4a). "
        "Models are ranked on the samples already in the cache, by accuracy (**Sum**) or by summed confidence "
        "of the true class (**Confidence Sum**). New samples are a random share of the chosen samples, and, "
        "optionally, each domain in turn (a held-out-domain split: does the ranking learnt on the other shifts "
        "transfer?). Sort set, Sort method and budgets of the sidebar do not apply here; sampling, rule and seed do."
    )
    if m < 3:
        st.info("insert_D needs at least three models.")
        return
    rule = cfg.search if is_threshold_rule(cfg.search) else DEFAULT_RULE
    c = st.columns(4)
    # Confidence Sum needs the store's true-class confidences; without them only Sum is offered.
    has_conf = (
        caches.confidence(caches.store_key(), cfg.dataset, cfg.domains, tuple(range(m))) is not None
    )
    offered = ["sum", "confidence"] if has_conf else ["sum"]
    sorts = c[0].multiselect(
        "Model ranking",
        offered,
        key="ns_rank",
        default=query_list("ns_rank", offered, offered),
        help=None if has_conf else "the store holds no confidences for these models",
    )
    fraction = c[1].slider(
        "Share of new samples (random split)",
        0.05,
        0.5,
        float(np.clip(query_default("ns_frac", 0.2, float), 0.05, 0.5)),
        0.05,
        key="ns_frac",
    )
    n_dom = sel.samples["domain"].nunique()
    by_domain = c[2].checkbox(
        "Held-out-domain split",
        value=query_default("ns_dom", n_dom > 1, bool) and n_dom > 1,
        key="ns_dom",
        disabled=n_dom < 2,
        help="each domain in turn is new; the others are the cache"
        if n_dom > 1
        else "the chosen samples come from one domain",
    )
    choices = [b for b in budget_choices(m) if b < m] or [m - 1]
    default = [b for b in choices if 2 <= b <= 2048] or choices
    budgets = c[3].multiselect(
        "Model budgets m′",
        choices,
        key=f"ns_budgets:{m}",
        default=[
            int(b)
            for b in query_list("ns_budgets", [str(b) for b in default], [str(b) for b in choices])
        ],
    )
    sync_query(ns_rank=sorts, ns_frac=fraction, ns_dom=by_domain, ns_budgets=sorted(budgets))
    if not sorts or not budgets:
        st.warning("Choose at least one ranking and one budget.")
        return
    from lifelong_core.studies.bands import band_summary, repeat_seeds

    bar = st.progress(0.0, text="Running insert_D…")
    seeds = repeat_seeds(cfg.seed, cfg.repeats)
    runs = []
    try:
        for i, s in enumerate(seeds):
            runs.append(
                new_sample_study(
                    caches.store_key(),
                    cfg.dataset,
                    cfg.domains,
                    round(float(fraction), 2),
                    bool(by_domain),
                    tuple(sorts),
                    tuple(sorted(int(b) for b in budgets)),
                    cfg.sampling,
                    rule,
                    s,
                    progress=lambda f, i=i: bar.progress(
                        min((i + float(f)) / len(seeds), 1.0), text="Running insert_D…"
                    ),
                )
            )
    except InputError as exc:
        bar.empty()
        st.error(str(exc))
        return
    bar.empty()
    study = runs[0]
    curves = summary_curves(study.curves)
    if len(runs) > 1:
        # Each seed draws its own random split (and random samples): mean and 95% band per curve.
        curves = band_summary([summary_curves(r.curves) for r in runs], by=("curve", "budget"))
        st.caption(
            f"Curves: mean over {len(runs)} seeds ({seeds[0]}…{seeds[-1]}) with the central 95% band; "
            "tables below the chart are the first seed's."
        )
    fits = {
        str(name): fit_exponential(g["budget"].to_numpy(), g["mae"].to_numpy())
        for name, g in curves.groupby("curve")
    }
    fig = charts.budget_lines(
        curves,
        "mae",
        series="curve",
        n_total=m,
        fits=fits,
        y_title="MAE over models",
        title=f"New samples: MAE vs model budget m′ (rule {rule}, sampling {cfg.sampling})",
    )
    fig.update_xaxes(title_text="model budget m′ (models each new sample is run on)")
    fig.update_layout(xaxis2=dict(title=dict(text="compute saved m / m′")))
    show_chart(fig, "insert_d_mae")
    rnd = study.curves[study.curves["split"] == RANDOM_SPLIT]
    st.caption(
        f"Random split: {int(rnd['new_samples'].iloc[0]):,} new samples of {n:,}, {m} models. Dashed: "
        "MAE = a·exp(−b·m′) + c fitted to each curve."
    )
    show_table(
        curves[
            ["curve", "budget"]
            + [c for c in curves.columns if c.startswith(("mae", "eagg", "kappa"))]
        ],
        "insert_d_curves",
    )
    if by_domain:
        dom = study.curves[study.curves["split"].str.startswith("domain:")]
        last = dom[dom["budget"] == dom["budget"].max()].assign(
            domain=lambda d: d["split"].str[len("domain:") :]
        )
        st.markdown(
            f"**Held-out domains at m′ = {int(dom['budget'].max())}** (MAE of each domain's samples when "
            "models are ranked on the other domains)"
        )
        show_table(
            last.pivot(index="domain", columns="sort", values="mae").reset_index(),
            "insert_d_by_domain",
        )
    with st.expander("Fits per split, all curves, per-sample estimates"):
        show_table(study.fits, "insert_d_fits")
        show_table(study.curves, "insert_d_all_curves")
        show_table(study.per_sample, "insert_d_per_sample")
    if len(study.agreement):
        st.markdown("**Model ranking by Sum vs by Confidence Sum** (on each split's cache samples)")
        a = study.agreement
        st.caption(
            f"Spearman's ρ between the two rankings: {a['spearman'].min():.3f} to {a['spearman'].max():.3f} over "
            f"{len(a)} split(s); the two top-10s share {int(a['same_top10'].min())}-{int(a['same_top10'].max())} models."
        )
        r = study.rankings[study.rankings["split"] == RANDOM_SPLIT].pivot(
            index="model_row", columns="sort", values="rank"
        )
        r = r.reset_index()
        r.insert(1, "model", np.asarray(sel.names, dtype=object)[r["model_row"].to_numpy()])
        show_table(r.sort_values("sum"), "insert_d_rankings")


def long_with_bands(table: pd.DataFrame, columns: list[str], name: str) -> pd.DataFrame:
    """``table`` melted to (budget, ``name``, value), keeping bands over Sort splits.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per budget, with a column ``budget`` and ``columns``; a column ``c`` with
        ``c_lo`` and ``c_hi`` beside it has a band.
    columns : list of str
        The columns stacked.
    name : str
        Name of the column that says which of ``columns`` a row came from.

    Returns
    -------
    pandas.DataFrame
        budget, ``name``, value, and value_lo / value_hi where a column had a band (so
        that :func:`ui.charts.budget_lines` draws it).
    """
    parts = []
    for c in columns:
        part = pd.DataFrame({"budget": table["budget"], name: c, "value": table[c]})
        if f"{c}_lo" in table and f"{c}_hi" in table:
            part["value_lo"], part["value_hi"] = table[f"{c}_lo"], table[f"{c}_hi"]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def design_choice_tables(cfg, sel, rule: str, progress=None) -> tuple[dict, list[str]]:
    """The design-choice runs of Fig. 4b-d for every Sort split of ``cfg``.

    The runs of :func:`lifelong_core.workflows.design.design_runs` (Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, Fig. 4b-d:
    Sort set size, Sort method, sampling), each swept at ``cfg.budgets`` with ``rule``
    for every Sort split (seeds ``cfg.seed + r``), each curve summarised by its mean and
    95% band when there is more than one split. A choice the data cannot serve (no
    confidences) is left out with a note instead of hiding the others.

    Parameters
    ----------
    cfg : SweepConfig
        The sidebar's choice (:func:`ui.controls.sweep_controls`).
    sel : Selection
        The selection it was made on.
    rule : str
        Threshold rule of the search.
    progress : callable, optional
        ``progress(fraction)`` as the runs finish.

    Returns
    -------
    tuple of (dict, list of str)
        ``{"sort_models": [...], "sort_method": [...], "sampling": [...]}``: per design
        choice, one summary table per value tried (its column named after the choice
        holds the value); and one sentence per curve left out.
    """
    from lifelong_core.studies.bands import band_summary, repeat_seeds
    from lifelong_core.workflows.design import design_runs
    from lifelong_core.workflows.sortsets import sort_rows

    key = caches.store_key()
    seeds = repeat_seeds(cfg.seed, cfg.repeats)
    runs_per_seed = [
        (
            s,
            design_runs(
                sel.models,
                sort_rows(sel.models, cfg.k, cfg.sort_set, s),
                cfg.sort_set,
                s,
                cfg.sort,
                cfg.sampling,
            ),
        )
        for s in seeds
    ]
    tables: dict[tuple[str, str], list[pd.DataFrame]] = {}
    left_out: dict[tuple[str, str], str] = {}
    total, done = max(1, sum(len(r) for _, r in runs_per_seed)), 0
    for s, runs in runs_per_seed:
        for r in runs:
            try:
                request = SweepRequest(
                    tuple(r.sort_set),
                    r.sort,
                    r.sampling,
                    rule,
                    tuple(cfg.budgets),
                    s,
                    eval_rows=None if r.eval_rows is None else tuple(r.eval_rows),
                    scored=cfg.scored,
                )
                t_s = caches.sweep(key, cfg.dataset, cfg.domains, request).table
            except InputError as exc:
                # One choice the data cannot serve (no confidences) must not hide the others.
                left_out[(r.what, r.label)] = f"{r.what} = {r.label} left out: {plain(str(exc))}"
            else:
                tables.setdefault((r.what, r.label), []).append(t_s)
            done += 1
            if progress is not None:
                progress(done / total)
    parts: dict[str, list[pd.DataFrame]] = {"sort_models": [], "sort_method": [], "sampling": []}
    for (what, label), ts in tables.items():
        if (what, label) in left_out:
            continue
        t = ts[0] if len(seeds) == 1 else band_summary(ts)
        parts[what].append(t.assign(**{what: label}))
    return parts, list(left_out.values())


def _protocol(
    key, dataset, methods, budgets, samplings, train_fraction, error, seed, progress=None
):
    from lifelong_core.studies.stream_protocol import stream_protocol
    from lifelong_core.workflows.sortsets import release_rows

    sel = caches.selection(key, dataset, ())
    return stream_protocol(
        sel.dense(),
        release_rows(sel.models),
        methods=methods,
        budgets=budgets,
        samplings=samplings,
        train_fraction=train_fraction,
        error=error,
        seed=seed,
        progress=progress,
    )


def stream_protocol_section(dataset: str, sel, seed: int) -> None:
    """The Stream page's Nevis'22 section: choose on the early stream, score on the later one.

    The protocol of Bornschein et al. (2023), *NEVIS'22: A Stream of 100 Tasks Sampled from
    30 Years of Computer Vision Research*, §4: each method's sampling grid is chosen per
    budget on the meta-train part of the release order and scored once on the meta-test
    models; the page shows the chosen configurations' Pareto front and the regret against
    a reference method. On a store beyond the dense-read limit it says to run
    ``lbe stream`` instead; too few models or bad settings are one message.

    Parameters
    ----------
    dataset : str
        Name of a dataset of the store; the protocol replays its whole selection.
    sel : Selection
        The page's (possibly bounded) selection of ``dataset``, for its size.
    seed : int
        Seed of the protocol's draws.
    """
    from lifelong_core.studies.stream_protocol import regret, split_sizes
    from lifelong_core.workflows.budgets import budgets_within, default_budgets

    # The protocol replays the dataset's whole selection (not the page's bounded one).
    if _needs_dense(
        caches.selection(caches.store_key(), dataset, ()),
        "The Nevis'22 protocol",
        "lbe stream --help",
    ):
        return
    m, n = sel.A.shape
    st.subheader("Nevis'22 protocol: choose on the early stream, score on the later one")
    st.markdown(
        "Nevis'22 (Bornschein et al. 2023, §4) forbids choosing a method's settings on the whole stream, since that "
        "uses the future. Here the first part of the release order is **meta-train**: its earlier half is the cache "
        "and its later half is estimated with every sampling grid, and each method keeps, per budget n′, the grid with "
        "the lowest error there. The chosen setting then runs once on the **meta-test** models (the rest of the "
        "stream) with all meta-train models as the cache. Cost counts the whole stream (meta-train models in full, "
        "meta-test models n′ each); the error is the meta-test models' only."
    )
    methods_all = controls.method_names()
    c = st.columns(3)
    methods = c[0].multiselect(
        "Methods",
        methods_all,
        key="np_methods",
        default=query_list(
            "np_methods",
            # The default error is sample-level, which a method without per-sample
            # prediction (the random baseline) does not have.
            [x for x in methods_all if capabilities(x).cheap and capabilities(x).per_sample],
            methods_all,
        ),
        help="mirt, irt and neighbours are fitted once per phase; on the demo store mirt "
        "takes a few minutes",
    )
    frac = c[1].slider(
        "Meta-train share of the stream",
        0.2,
        0.8,
        float(np.clip(query_default("np_frac", 0.5, float), 0.2, 0.8)),
        0.05,
        key="np_frac",
    )
    error: str = picked(
        c[2].radio(
            "Error",
            ["mae", "eagg"],
            key="np_err",
            horizontal=True,
            index=1 if query_default("np_err", "mae") == "eagg" else 0,
            format_func=lambda v: {"mae": "MAE", "eagg": "E_agg"}[v],
        )
    )
    sync_query(np_methods=methods, np_frac=frac, np_err=error)
    if not methods:
        st.info("Choose at least one method.")
        return
    try:
        split_sizes(m, float(frac))
    except InputError as exc:
        st.info(f"This section needs more models: {exc}")
        return
    budgets = tuple(
        budgets_within((8, 16, 32, 64, 128, 256, 512, 1024, 2048), n) or default_budgets(n)
    )
    bar = st.progress(0.0, text="Running the protocol…")
    args = (
        caches.store_key(),
        dataset,
        tuple(methods),
        budgets,
        ("uniform", "random", "reference"),
        round(float(frac), 2),
        error,
        int(seed),
    )
    try:
        res = caches._memo().get_or_compute(
            ("stream_protocol",) + args,
            lambda: _protocol(
                *args,
                progress=lambda f: bar.progress(min(float(f), 1.0), text="Running the protocol…"),
            ),
        )
    except InputError as exc:
        bar.empty()
        st.error(str(exc))
        return
    bar.empty()
    sp = res.split
    st.caption(
        f"{sp['models']} models: cache {sp['cache']} + tuned on {sp['meta_train'] - sp['cache']} (meta-train "
        f"{sp['meta_train']}), scored on the last {sp['meta_test']} (meta-test)."
    )
    chosen = res.configs[res.configs["chosen"]].copy()
    chosen["config"] = (
        chosen["method"] + ", n′=" + chosen["budget"].astype(str) + ", " + chosen["sampling"]
    )
    show_chart(
        lambda: charts.pareto(
            chosen,
            x="evaluations",
            y=f"test_{error}",
            label="config",
            front=res.front,
            colour="method",
            x_title="evaluations over the whole stream",
            y_title=f"meta-test {'MAE' if error == 'mae' else 'E_agg'}",
            title="Chosen configurations and their Pareto front (meta-test)",
        ),
        "nevis_pareto",
        key=args,  # built once per server for these settings
    )
    show_table(res.front, "nevis_front")
    ref_default = PUBLISHED_METHOD if PUBLISHED_METHOD in methods else methods[0]
    rc = st.columns(2)
    ref: str = picked(
        rc[0].selectbox(
            "Regret against", methods, index=url_index("np_ref", methods, ref_default), key="np_ref"
        )
    )
    b_choices = sorted(res.per_model["budget"].unique().tolist())
    b_raw = query_default("np_b", b_choices[len(b_choices) // 2], int)
    b: int = picked(
        rc[1].selectbox(
            "at budget n′ (same compute for every method)",
            b_choices,
            index=b_choices.index(b_raw) if b_raw in b_choices else len(b_choices) // 2,
            key="np_b",
        )
    )
    sync_query(np_b=b, np_ref=ref)
    reg = regret(res.per_model, int(b), ref, error).pivot(
        index="position", columns="method", values="regret"
    )
    reg = reg.reset_index()
    show_chart(
        lambda: charts.stream_lines(
            reg,
            x="position",
            ys=[c for c in reg.columns if c != "position"],
            x_title="meta-test models in release order",
            y_title=f"cumulative {error} − {ref}'s",
            title=f"Regret view (Nevis'22 Fig. 5): falling = better than {ref}",
        ),
        "nevis_regret",
        key=(args, ref, int(b)),
    )
    with st.expander("Every configuration tried (meta-train error; meta-test on the chosen ones)"):
        show_table(res.configs, "nevis_configs")


def parse_bits(text: str) -> np.ndarray:
    """A 0/1 vector typed as digits (spaces and commas ignored); InputError naming the bad character."""
    chars = [c for c in text if c not in " ,"]
    bad = [c for c in chars if c not in "01"]
    if bad:
        raise InputError(f"the vector may hold only 0 and 1; found {bad[0]!r}.")
    if not 2 <= len(chars) <= 200:
        raise InputError(f"type between 2 and 200 digits, got {len(chars)}.")
    return np.array([int(c) for c in chars], dtype=np.uint8)


def theorem21_section() -> None:
    """Theorem 2.1 of Prabhu et al. (2024, §2.1, App. J): an estimate with the right
    accuracy (E_agg 0) can still get most samples wrong, so S&S is scored per sample."""
    from lifelong_core.sortsearch import eagg, kappa, mae, theorem21_vector

    st.subheader("4. Why score per sample: E_agg 0, MAE large (Theorem 2.1)")
    st.markdown(
        "Theorem 2.1 (Prabhu et al., 2024, §2.1, proof in App. J): for a true row **a** there is a prediction **y** with "
        "exactly the right accuracy (E_agg = 0) whose sample-level error is as large as it can be, "
        "2·min(acc, 1 − acc). Type a row; the construction of App. J is shown below it."
    )
    text = st.text_input(
        "True row a (0 = wrong, 1 = right)", value=query_default("t21", "00011"), key="t21"
    )
    sync_query(t21=text)
    try:
        a = parse_bits(text)
    except InputError as exc:
        st.error(str(exc))
        return
    y = theorem21_vector(a)
    c = st.columns(4)
    c[0].metric("accuracy of a", f"{a.mean():.3f}")
    c[1].metric("accuracy of y", f"{y.mean():.3f}")
    c[2].metric("E_agg", f"{eagg(a, y):.3f}")
    c[3].metric("MAE", f"{mae(a, y):.3f}", help=f"κ = {kappa(a, y):.3f}")
    show_table(
        pd.DataFrame({"sample": np.arange(len(a)), "a (true)": a, "y (App. J)": y}).T.reset_index(),
        "theorem21_example",
    )
    st.caption(
        "For the paper's a = [0,0,0,1,1] the construction gives [1,1,0,0,0]: E_agg 0, MAE 0.8. The vector "
        "printed in §2.1, [1,1,1,0,0], has three ones, so its E_agg is 0.2 and its MAE 1.0."
    )


@st.cache_data(show_spinner="Running the simulation study…", max_entries=4)
def _simulation(seed: int):
    from lifelong_core.stats.simulation import simulation_study

    informed = simulation_study(seed=seed, chains=2, draws=500)
    equal = simulation_study(seed=seed, chains=2, draws=500, prior_means=(0.5, 0.5))
    return informed, equal


def simulation_section() -> None:
    """The two-model, three-task simulation study of the Los Alamos report (2024, §2.2, Table 1)."""
    from lifelong_core.stats.simulation import TABLE1_CORRECT, TEST_SIZES

    st.subheader("5. Why the hierarchical model: a small task can hide a real difference (Table 1)")
    st.markdown(
        "The simulation study of *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine "
        "Learning Benchmarks* (2024, §2.2): model B is truly better on task 1 only, which has few questions. The "
        "bootstrap interval of mean_A − mean_B contains 0; the beta-binomial hierarchical model with priors that "
        "encode 4,000 prior counts shrinks task 1's noise and finds B better. The test-set sizes, true accuracies and "
        "priors did not survive in the report's text: the values here are consistent with what did (see "
        "`lifelong_core.stats.simulation`)."
    )
    counts = pd.DataFrame(TABLE1_CORRECT, index=["Task 1", "Task 2", "Task 3"]).T
    counts.loc["test-set size"] = list(TEST_SIZES)
    show_table(counts.reset_index(names="correct answers"), "table1_counts")
    if not st.toggle(
        "Run the study (two hierarchical fits, about 20 s)",
        value=query_default("sim", False, bool),
        key="sim",
    ):
        return
    sync_query(sim=True)
    informed, equal = _simulation(0)
    rows = [
        ("bootstrap", (-0.059, 0.097), informed.bootstrap),
        (
            "hierarchical, priors centred on 0.35 (A) and 0.65 (B)",
            (-0.021, -0.003),
            informed.hierarchical,
        ),
        ("hierarchical, the same prior (0.5) for both", None, equal.hierarchical),
    ]
    out = pd.DataFrame(
        [
            {
                "method": name,
                "published 95% interval": f"({pub[0]:+.3f}, {pub[1]:+.3f})" if pub else "—",
                "ours": f"({got[1]:+.3f}, {got[2]:+.3f})",
                "mean": round(got[0], 4),
                "excludes 0": bool(got[2] < 0 or got[1] > 0),
            }
            for name, pub, got in rows
        ]
    )
    show_table(out, "simulation_study")
    st.caption(
        "With the same prior for both models the credible interval contains 0 too: the strictly negative "
        "interval comes from prior knowledge that B is better, not from the hierarchy alone."
    )


def repeated_rank_agreement(cfg, sel) -> pd.DataFrame:
    """Rank agreement per budget over the Sort splits of ``cfg`` (App. F).

    The agreement between the models' ranking by estimate and by truth (Prabhu et al.
    (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, App. F) for
    each split (seeds ``cfg.seed + r``), summarised by its mean and 95% band.

    Parameters
    ----------
    cfg : SweepConfig
        The sidebar's choice (:func:`ui.controls.sweep_controls`).
    sel : Selection
        The selection it was made on.

    Returns
    -------
    pandas.DataFrame
        One row per budget: spearman, kendall and top10_overlap (the mean), each with
        ``_lo`` and ``_hi`` band columns (zero width for one split), and repeats.
    """
    from dataclasses import replace

    from lifelong_core.studies.bands import band_summary, repeat_seeds
    from lifelong_core.workflows.sweeps import rank_agreement

    tables = [
        rank_agreement(controls.run_config(replace(cfg, seed=s, repeats=1), sel)[1])
        for s in repeat_seeds(cfg.seed, cfg.repeats)
    ]
    return band_summary(tables, metrics=("spearman", "kendall", "top10_overlap"))
