"""Rankings with honest uncertainty (LA-UR-24-25289 report, 2024): leaderboard intervals, pairwise differences,
rank intervals under five aggregation schemes, and a Bayesian hierarchical model.

Widgets -> ui.caches (cached ``lifelong_core.stats``) and
``lifelong_core.workflows.rankings`` (the tables) -> ui.rankings (the figures). Every number
comes from ``lifelong_core.stats``; this page picks the data and lays it out. Sources: the published VTAB-1k figures (Table A.3;
no per-task counts needed), the open store (tasks = domains, categories = the recorded
ones or the user's), an uploaded counts.csv, and counts estimated by Sort & Search for
held-out models of one dataset.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from lifelong_core.limits import MAX_SEED
from lifelong_core.methods.draws import COMMON, PER_MODEL
from lifelong_core.methods.registry import methods_with
from lifelong_core.stats import SCHEMES, from_frame, read_counts_csv
from lifelong_core.stats.vtab import counts_from_leaderboard, load_published
from lifelong_core.workflows.budgets import budgets_within
from lifelong_core.workflows.rankings import (
    DEFAULT_TOP,
    RankingOptions,
    default_models,
    estimator_coverage,
    overall_accuracy,
)
from ui.caches import (
    board_table,
    differences,
    estimated_counts,
    hierarchical,
    rank_table,
    selection,
    store_key,
)
from ui.categories import category_control
from ui.common import (
    get_store,
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
from ui.controls import default_method, method_help, method_names
from ui.ranking_tables import (
    bayes_beside_bootstrap,
    by_expected_rank,
    differences_in_points,
    estimated_vs_true,
    estimator_interval_table,
    per_category_intervals,
    percent,
    published_leaderboard,
    scheme_intervals,
)
from ui.rankings import difference_matrix, forest, rank_forest, rank_prob_heatmap, traces
from ui.store_dataset import complete_counts, pick_dataset

SOURCES = {
    "published": "VTAB-1k published figures",
    "vtab": "VTAB-1k per-task leaderboard",
    "store": "This store",
    "upload": "Upload counts.csv",
    "estimated": "Estimated by Sort & Search",
}


# ------------------------------------------------------------------ page
def bayes_extras(bhm: dict, source: str, normalized: bool) -> None:
    """Per-category intervals, pairwise differences and rank intervals (Table 11) of the hierarchical model."""
    ci = percent(bhm["intervals"])
    wide = per_category_intervals(ci)
    if wide is not None:
        st.markdown(
            "**Per category** (posterior predictive intervals of the mean over the category's tasks)"
        )
        show_table(wide, f"bayesian-per-category-{source}")
    diff = bhm["pairwise"]
    models = list(ci[ci["scope"] == "overall"]["model"])
    st.markdown(
        "**Pairwise differences** (posterior predictive intervals of score(row) − score(column), raw accuracy, as Table 3)"
    )
    st.caption(
        f"{len(diff)} comparison(s), each at {diff['level'].iloc[0]:.4f} so that all hold together at 95% "
        "(Bonferroni, as for the bootstrap)."
        if len(diff)
        else "One model: no pairs."
    )
    if len(diff):
        show_chart(difference_matrix(diff, models), f"bayesian-pairwise-{source}")
        show_table(differences_in_points(diff), f"bayesian-pairwise-differences-{source}")
    st.markdown("**Rank intervals from posterior predictive draws** (the paper's Table 11; 95%)")
    show_table(
        scheme_intervals(bhm["rank_intervals"], models, SCHEMES),
        f"bayesian-rank-intervals-{source}",
    )
    if normalized:
        st.caption(
            "The hierarchical model works on raw counts; the normalised toggle applies to the bootstrap tabs."
        )


st.title("Rankings with honest uncertainty")
st.caption(
    "The LA-UR-24-25289 report (2024): bootstrap of test instances within each task (§2.1), pairwise differences with "
    "Bonferroni, rank intervals under five aggregation schemes (§3.2), metric normalisation (§2.4) "
    "and a beta-binomial hierarchical model (§2.2). Intervals on scores are 83.4% by default "
    "(non-overlap ≈ a 5% test, Goldstein & Healy); differences and ranks use 95%."
)

source_keys = list(SOURCES)
source: str = picked(
    st.radio(
        "Data source",
        source_keys,
        index=url_index("source", source_keys, "published"),
        format_func=SOURCES.get,
        horizontal=True,
        key="source",
    )
)

# ---- published VTAB-1k figures: no per-task counts needed
if source == "published":
    pub = load_published()
    c1, c2, c3 = st.columns(3)
    method: str = picked(
        c1.selectbox(
            "Method",
            ["bootstrap", "bayesian"],
            key="pub_method",
            index=url_index("pub_method", ["bootstrap", "bayesian"], "bootstrap"),
            format_func=lambda k: {
                "bootstrap": "Bootstrap (83.4% CI)",
                "bayesian": "Bayesian HM (83.4% credible)",
            }[k],
        )
    )
    normalized = c2.toggle(
        "Normalised accuracy",
        value=query_default("pub_norm", False, bool),
        key="pub_norm",
        disabled=method == "bayesian",
        help="Table A.3 gives normalised figures for the bootstrap only.",
    )
    pub_scopes = ["overall", "natural", "specialized", "structured"]
    scope: str = picked(
        c3.selectbox(
            "Scope",
            pub_scopes,
            key="pub_scope",
            index=url_index("pub_scope", pub_scopes, "overall"),
        )
    )
    url_sync_keys("source", "pub_method", "pub_norm", "pub_scope")
    sel, table = published_leaderboard(pub, method, normalized)
    st.subheader("Published leaderboard (the LA-UR-24-25289 report (2024), Table A.3)")
    st.caption(
        "As published: 16 VTAB-1k models, 19 tasks in three categories, data simulated by the paper's "
        "authors from the leaderboard accuracies and the test-set sizes. The test suite reproduces the "
        "bootstrap figures from per-task accuracies to within 0.2 points."
    )
    show_table(table, f"vtab1k-published-{method}{'-normalised' if normalized else ''}")
    part = sel[sel["scope"] == scope].rename(
        columns={"mean_pct": "mean", "lo_pct": "lo", "hi_pct": "hi"}
    )
    show_chart(
        lambda: forest(
            part,
            f"VTAB-1k, {scope}: 83.4% intervals ({method})",
            "accuracy (%)" if not normalized else "normalised accuracy (%)",
        ),
        f"vtab1k-forest-{method}-{scope}",
        # The bundled published figures: the chart depends on these choices only.
        key=(method, normalized, scope),
    )
    st.info(
        "Pairwise differences, rank intervals and the hierarchical model need per-task counts: "
        "choose the VTAB-1k per-task leaderboard (the same 16 models, counts rebuilt from their accuracies), "
        "the demo store, upload a counts.csv (model, task, category, correct, total), or look at rankings "
        "estimated by Sort & Search."
    )
    st.stop()

# ---- sources with per-task counts
truth = None
own_intervals = None
counts = None
if source in ("store", "estimated"):
    dataset = pick_dataset("dataset", st)
    provenance_note(dataset=dataset)
    if source == "store":
        counts = complete_counts(dataset)
        st.caption(
            "Tasks are the store's domains, and every method here treats them as independent test sets, as the paper "
            "does for VTAB's tasks. Where domains render the same items (the demo's shifted domains are the same 800 "
            "test digits under different shifts), task scores are correlated and these intervals are too narrow."
        )
        url_sync_keys("source", "dataset")
    else:
        with input_errors():
            ss_sel = selection(store_key(), dataset, ())
        n_samples = ss_sel.A.shape[1]
        # The one model set Sort & Search needs: real models evaluated on every sample of the
        # dataset (a store whose datasets were run by different models has one such set per dataset).
        pool = list(ss_sel.names)
        ss_models: list[str] = st.multiselect(
            f"Models (evaluated on every sample of {plain(dataset)}: {len(pool)} of {len(get_store().models())} in the store)",
            pool,
            default=query_list("ss_models", pool, pool),
            key=f"ss_models:{dataset}",
            help="The newest of these by release order (models without one count as newest, in insertion order) play "
            "the new models; the others are the cache Sort & Search learns from.",
        )
        if len(ss_models) < 4:
            st.warning(
                "Choose at least four models: two or more for the cache and two or more to estimate."
            )
            st.stop()
        c1, c2, c3, c4 = st.columns(4)
        budgets = budgets_within((25, 50, 100, 200, 400, 800, 1600), n_samples, strict=True) or [
            max(1, n_samples // 2)
        ]
        budget: int = picked(
            c1.selectbox(
                "Budget (samples per new model)",
                budgets,
                key="ss_budget",
                index=url_index("ss_budget", budgets, 200 if 200 in budgets else budgets[-1]),
            )
        )
        new_max = max(2, min(60, len(ss_models) - 2))
        n_new = c2.number_input(
            "New models (newest by release order)",
            min_value=2,
            max_value=new_max,
            key="ss_new",
            value=int(
                np.clip(
                    query_default("ss_new", min(20, max(2, len(ss_models) // 4)), int), 2, new_max
                )
            ),
        )
        methods = method_names()
        ss_default = default_method(methods)
        method = picked(
            c3.selectbox(
                "Search method",
                methods,
                index=url_index("ss_method", methods, ss_default),
                key="ss_method",
                help=method_help(),
            )
        )
        ss_seed = c4.number_input(
            "Seed",
            min_value=0,
            max_value=MAX_SEED,
            value=min(max(0, query_default("ss_seed", 0, int)), MAX_SEED),
            key="ss_seed",
        )
        ss_draws = (
            COMMON
            if st.toggle(
                "Same samples for every new model",
                value=query_default("ss_common", False, bool),
                key="ss_common",
                help="Off: each new model's samples are its own random draw (from its name and the seed), "
                "so the models' errors are independent. On: one common set, to compare models on identical "
                "samples; their errors then move together.",
            )
            else PER_MODEL
        )
        with input_errors():
            counts, true_counts, own_intervals = estimated_counts(
                store_key(),
                dataset,
                int(n_new),
                int(budget),
                method,
                int(ss_seed),
                tuple(ss_models),
                ss_draws,
            )
        truth = overall_accuracy(from_frame(true_counts)) * 100
        st.caption(
            f"Each of the {int(n_new)} newest models is evaluated on {int(budget)} of {n_samples} samples; Sort & Search "
            "predicts the rest and the predicted vector is summed per domain. **The intervals below cover test-set "
            "sampling only, as if the predictions had been observed; the error of the estimate itself is not in "
            "them.** Red crosses mark the true accuracy from the full evaluation, so you can see how sure the "
            "estimated ranking really is."
            + (
                " The chosen estimator also gives its own 95% interval of each model's accuracy over all samples "
                "pooled, which does cover the estimation error: see the second chart of the leaderboard."
                if own_intervals is not None
                else " Estimators with their own interval of the estimation error: "
                + ", ".join(methods_with(interval=True))
                + "."
            )
        )
        url_sync_keys(
            "source", "dataset", "ss_budget", "ss_new", "ss_method", "ss_seed", "ss_common"
        )
        if len(ss_models) < len(pool):  # every model is the default: keep the URL short
            sync_query(ss_models=ss_models)
        elif "ss_models" in st.query_params:
            del st.query_params["ss_models"]
    counts = category_control(counts, "cats")
elif source == "vtab":
    url_sync_keys("source")
    st.caption(
        "The 16 VTAB-1k models' per-task accuracies from the public leaderboard (google-research/task_adaptation's "
        "results.csv, bundled in data/vtab1k/; $LBE_VTAB_LEADERBOARD names another copy), turned "
        "into counts as the paper does (accuracy x test-set size, rounded): per-item data are simulated, the "
        "accuracies are published. `python -m benchmarks.reproduce_uncertainty` prints these results beside Table A.3."
    )
    with input_errors():
        counts = counts_from_leaderboard().to_frame()
else:
    url_sync_keys("source")
    up = st.file_uploader(
        "counts.csv (model, task, category, correct, total; one row per model × task)",
        type=["csv"],
        key="upload",
    )
    if up is None:
        st.info(
            "Upload a counts.csv to rank its models. Column `correct` is the number of correct test "
            "instances of the model on the task, `total` the task's number of test instances."
        )
        st.stop()
    with input_errors():
        counts = read_counts_csv(up, name=up.name).to_frame()

all_models = list(overall_accuracy(from_frame(counts)).index)
shown = default_models(all_models)
if len(all_models) > DEFAULT_TOP:
    chosen = st.multiselect(
        (
            f"Models to rank (default: all {len(all_models)}; type to search)"
            if len(shown) == len(all_models)
            else f"Models to rank (default: the {DEFAULT_TOP} most accurate of {len(all_models)}; type to search)"
        ),
        all_models,
        default=query_list("models", shown, all_models),
        key=f"models-{source}",
    )
    if chosen == shown:  # the default view keeps the URL short
        if "models" in st.query_params:
            del st.query_params["models"]
    else:
        sync_query(models=chosen)
else:
    chosen = all_models
if len(chosen) < 2:
    st.warning("Choose at least two models.")
    st.stop()
# The whole source stays in ``counts_all``: normalisation bounds are taken over it.
counts_all = counts
chosen_models = tuple(m for m in all_models if m in set(chosen))
counts = counts[counts["model"].isin(chosen_models)].reset_index(drop=True)

c1, c2, c3, c4 = st.columns(4)
LEVELS = [0.5, 0.68, 0.8, 0.834, 0.9, 0.95, 0.99]
url_level = query_default("level", 0.834, float)
level: float = picked(
    c1.select_slider(
        "Interval level for scores",
        options=LEVELS,
        value=url_level if url_level in LEVELS else 0.834,
        key="level",
    )
)
n_boot: int = picked(
    c2.selectbox(
        "Bootstrap replicates",
        [500, 1000, 2000, 5000],
        index=url_index("n_boot", [500, 1000, 2000, 5000], 2000),
        key="n_boot",
    )
)
seed = int(
    c3.number_input(
        "Seed",
        min_value=0,
        max_value=MAX_SEED,
        value=min(max(0, query_default("seed", 0, int)), MAX_SEED),
        key="seed",
    )
)
normalized = c4.toggle(
    "Normalised (§2.4)",
    value=query_default("normalized", False, bool),
    key="normalized",
    help="BigBench-style: each task rescaled by its lowest and highest score over all replicates "
    "of every model of the source, whichever are chosen here, so a model's normalised score does "
    "not change with the choice.",
)
url_sync_keys("level", "n_boot", "seed", "normalized")

# Every tab orders or compares its models by the leaderboard, so it is the one table made before them.
boot_options = RankingOptions(boot=int(n_boot), normalize=bool(normalized), seed=seed)
board = board_table(counts_all, chosen_models, boot_options, float(level))

# The open tab lives in the URL and only it runs: a hidden tab costs nothing (the Bayesian model takes seconds).
tab_board, tab_diff, tab_rank, tab_bayes = st.tabs(
    ["Leaderboard", "Pairwise differences", "Rank intervals", "Bayesian model"],
    key="tab",
    bind="query-params",
)

with tab_board:
    if tab_board.open:
        scopes = list(dict.fromkeys(board["scope"]))
        unit = "normalised accuracy (%)" if normalized else "accuracy (%)"
        scope = picked(
            st.selectbox(
                "Scope",
                scopes,
                key="scope",
                index=url_index("scope", scopes, "overall"),
                help="overall = unweighted mean over all tasks; a category = mean over its tasks",
            )
        )
        url_sync_keys("scope")
        shown = percent(board[board["scope"] == scope]).rename(columns={"point": "observed"})
        shown["observed"] = (shown["observed"] * 100).round(2)
        show_chart(
            forest(
                shown,
                f"{scope}: bootstrap mean and {level:.1%} interval",
                unit,
                truth if (truth is not None and scope == "overall" and not normalized) else None,
            ),
            f"rankings-forest-{source}-{scope}",
        )
        if truth is not None:
            comp = estimated_vs_true(board, truth)
            if not normalized:
                st.metric(
                    "True accuracy inside the bootstrap interval",
                    f"{comp['true_in_interval'].mean():.0%} of models",
                )
            show_table(comp, f"estimated-vs-true-{source}")
            if own_intervals is not None:
                own = own_intervals[own_intervals["model"].isin(chosen_models)].copy()
                show_chart(
                    forest(
                        own,
                        f"All samples pooled: {method} estimate and its own 95% interval",
                        "accuracy (%)",
                        own.set_index("model")["true"],
                    ),
                    f"rankings-estimator-intervals-{source}",
                )
                # Counted over every estimated model, not the chosen ones (workflows.rankings).
                cov, cov_text = estimator_coverage(own_intervals, ss_draws)
                st.metric(
                    "True accuracy inside the estimator's 95% interval",
                    f"{cov.covered} of {cov.total} models",
                    help=cov_text,
                )
                st.caption(cov_text)
                show_table(estimator_interval_table(own), f"estimator-intervals-{source}")
        show_table(percent(board), f"leaderboard-{source}")

with tab_diff:
    if tab_diff.open:
        default_pair = list(board[board["scope"] == "overall"]["model"])[
            : min(5, len(chosen_models))
        ]
        pick = st.multiselect(
            "Models to compare (up to 10; type to search)",
            chosen_models,
            key=f"pair-{source}",
            max_selections=10,
            default=query_list("pair", default_pair, chosen_models)[:10],
        )
        sync_query(pair=pick)
        if len(pick) < 2:
            st.info("Choose at least two models.")
        else:
            diff = differences(counts_all, chosen_models, boot_options, tuple(pick))
            m = len(diff)
            st.caption(
                f"{m} comparison(s); each interval is at {diff['level'].iloc[0]:.4f} so that all hold together at 95% "
                "(Bonferroni). Differences are of the unweighted mean over all tasks, in points."
            )
            best_first = [
                name
                for name in board[board["scope"] == "overall"].sort_values(
                    "point", ascending=False
                )["model"]
                if name in pick
            ]
            show_chart(difference_matrix(diff, best_first), f"pairwise-{source}")
            show_table(differences_in_points(diff), f"pairwise-differences-{source}")

with tab_rank:
    if tab_rank.open:
        st.caption(
            "95% bootstrap intervals. By average / geometric mean: the rank of that aggregate (1 = best). The average-rank "
            "schemes report the average over tasks of the per-task rank, raw, with N(0, 1) noise in points, or with 1-point "
            "bins (ties share the worst rank)."
        )
        ranks = rank_table(counts_all, chosen_models, boot_options)
        best_overall = board[board["scope"] == "overall"]["model"].to_numpy()
        show_table(scheme_intervals(ranks, best_overall, SCHEMES), f"rank-intervals-{source}")
        scheme: str = picked(
            st.selectbox(
                "Scheme to plot",
                list(SCHEMES),
                format_func=lambda k: SCHEMES[k],
                key="scheme",
                index=url_index("scheme", list(SCHEMES), next(iter(SCHEMES))),
            )
        )
        url_sync_keys("scheme")
        fig = rank_forest(
            ranks[ranks["scheme"] == scheme],
            f"{SCHEMES[scheme]}: rank with 95% interval (left = worse)",
            len(chosen_models),
        )
        show_chart(fig, f"rank-forest-{source}-{scheme}")

with tab_bayes:
    if tab_bayes.open:
        st.caption(
            "Beta-binomial hierarchical model (§2.2): y ~ Binomial(n, p), p ~ Beta(a_model, b_model), Gibbs steps for p "
            "and slice-sampling steps for a and b; several chains, split R-hat and effective sample size. Intervals are "
            "posterior predictive (a new test set of the same sizes), at the level chosen above, on raw accuracy."
        )
        c1, c2, c3 = st.columns(3)
        chains = int(
            picked(
                c1.selectbox(
                    "Chains", [2, 4, 6], index=url_index("chains", [2, 4, 6], 4), key="chains"
                )
            )
        )
        draws = int(
            picked(
                c2.selectbox(
                    "Draws per chain (warm-up = half)",
                    [500, 1000, 2000],
                    key="draws",
                    index=url_index("draws", [500, 1000, 2000], 1000),
                )
            )
        )
        prior_kind: str = picked(
            c3.selectbox(
                "Prior on a and b",
                ["uniform", "normal"],
                key="prior_kind",
                index=url_index("prior_kind", ["uniform", "normal"], "uniform"),
                format_func=lambda k: {
                    "uniform": "Uniform(0, high)",
                    "normal": "Normal(mean, sd), truncated at 0",
                }[k],
            )
        )
        d1, d2 = st.columns(2)
        if prior_kind == "uniform":
            p1, p2 = (
                0.0,
                float(
                    d1.number_input(
                        "high",
                        min_value=1.0,
                        key="prior_high",
                        value=max(1.0, query_default("prior_high", 10000.0, float)),
                    )
                ),
            )
        else:
            p1 = float(
                d1.number_input(
                    "mean",
                    min_value=0.01,
                    value=max(0.01, query_default("prior_mean", 20.0, float)),
                    key="prior_mean",
                )
            )
            p2 = float(
                d2.number_input(
                    "sd",
                    min_value=0.01,
                    value=max(0.01, query_default("prior_sd", 10.0, float)),
                    key="prior_sd",
                )
            )
        url_sync_keys("chains", "draws", "prior_kind", "prior_high", "prior_mean", "prior_sd")
        with input_errors():
            bhm = hierarchical(counts, chains, draws, seed, (prior_kind, p1, p2), float(level))
        diag = bhm["diagnostics"]
        worst_rhat, worst_ess = diag["rhat"].max(), diag["ess"].min()
        m1, m2 = st.columns(2)
        m1.metric("Largest split R-hat", f"{worst_rhat:.3f}")
        m2.metric("Smallest effective sample size", f"{worst_ess:.0f}")
        if worst_rhat > 1.01 or worst_ess < 400:
            st.warning(
                "The chains may not have converged (R-hat > 1.01 or ESS < 400): take more draws."
            )
        cmp = bayes_beside_bootstrap(percent(bhm["intervals"]), board, bool(normalized))
        show_table(cmp, f"bayesian-intervals-{source}")
        show_chart(
            rank_prob_heatmap(by_expected_rank(bhm["rank_probs"])), f"rank-probabilities-{source}"
        )
        t1, t2 = st.columns(2)
        model = t1.selectbox(
            "Trace of model",
            bhm["models"],
            key="trace_model",
            index=url_index("trace_model", bhm["models"], bhm["models"][0]),
        )
        param: str = picked(
            t2.selectbox(
                "Parameter",
                ["mean accuracy", "a", "b"],
                key="trace_param",
                index=url_index("trace_param", ["mean accuracy", "a", "b"], "mean accuracy"),
            )
        )
        url_sync_keys("trace_model", "trace_param")
        i = bhm["models"].index(model)
        arr = {"mean accuracy": bhm["mean"], "a": bhm["a"], "b": bhm["b"]}[param][:, :, i]
        show_chart(traces(arr, param, model), f"trace-{source}")
        show_table(diag.round(4), f"mcmc-diagnostics-{source}")
        bayes_extras(bhm, source, bool(normalized))
