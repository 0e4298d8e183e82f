"""``backtest``: hold models out of the user's cache, estimate them, report error, coverage
and width against the random-sampling baseline (workflow and command line)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, hypergeom

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.methods.registry import (
    BASELINE_METHOD,
    DEFAULT_METHOD,
    LIMIT_METHOD,
    PUBLISHED_METHOD,
)
from lifelong_core.stats.coverage import clopper_pearson, coverage_of
from lifelong_core.workflows import item_choice
from lifelong_core.workflows.backtest import (
    backtest,
    compare_with_random,
    default_methods,
    held_out_rows,
    low_coverage_count,
)
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.sortsets import sort_rows


def irt_matrix(m: int = 40, n: int = 300, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1.2, m)
    b = rng.normal(0, 1.2, n)
    return (rng.random((m, n)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))).astype(np.uint8)


def selection(A: np.ndarray, release: np.ndarray | None = None, tasks=None) -> Selection:
    m, n = A.shape
    models = pd.DataFrame(
        {
            "model_id": [f"org/m{i:02d}" for i in range(m)],
            "name": [f"org/m{i:02d}" for i in range(m)],
            "family": "org",
            "release_order": release if release is not None else np.arange(m),
        }
    )
    samples = pd.DataFrame(
        {
            "sample_id": [f"t/{j}" for j in range(n)],
            "dataset": "sim",
            "domain": "t" if tasks is None else tasks,
            "category": None,
        }
    )
    return Selection(A, models, samples, True)


@pytest.fixture(scope="module")
def sel() -> Selection:
    return selection(irt_matrix())


def test_default_methods_are_the_default_the_papers_rule_and_both_baselines():
    assert default_methods()[:1] == [DEFAULT_METHOD]
    assert {PUBLISHED_METHOD, BASELINE_METHOD, LIMIT_METHOD} <= set(default_methods())


def brute_expected_error(correct: int, n: int, budget: int) -> float:
    """A random sample's expected absolute error from scipy's hypergeometric pmf."""
    k = np.arange(budget + 1)
    return float((hypergeom.pmf(k, n, correct, budget) * np.abs(k / budget - correct / n)).sum())


def test_clopper_pearson():
    lo, hi = clopper_pearson(8, 12)
    assert (round(lo, 3), round(hi, 3)) == (0.349, 0.901)
    assert clopper_pearson(0, 10)[0] == 0 and clopper_pearson(10, 10)[1] == 1
    c = coverage_of([0.5, 0.2, 0.9], [0.4, 0.3, 0.8], [0.6, 0.4, 0.95])
    assert (c.covered, c.total) == (2, 3) and c.share == pytest.approx(2 / 3)
    assert (c.lo, c.hi) == pytest.approx(clopper_pearson(2, 3))


def test_report_per_method_and_budget(sel):
    bt = backtest(sel, ["midpoint"], [16, 64], holdout=6, repeats=2, seed=1, boot=200)
    per, table = bt.per_model, bt.table
    # Both baselines are always added: every ratio is taken against a random sample.
    assert list(dict.fromkeys(per["method"])) == ["midpoint", BASELINE_METHOD, LIMIT_METHOD]
    assert len(per) == 6 * 2 * 3 * 2  # held out x repeats x methods x budgets
    assert set(table.columns) >= {
        "method",
        "budget",
        "mae_pts",
        "bias_pts",
        "above_truth",
        "coverage",
        "coverage_lo",
        "coverage_hi",
        "width_pts",
        "random_pts",
        "mae_vs_random",
        "ratio_lo",
        "ratio_hi",
        "equivalent_budget",
        "equivalent_lo",
        "equivalent_hi",
        "saving",
        "width_vs_random",
    }
    t = table.set_index(["method", "budget"])
    rnd = t.loc[BASELINE_METHOD]
    assert np.allclose(rnd["width_vs_random"], 1.0)
    assert (rnd["coverage_lo"] <= rnd["coverage"]).all() and (
        rnd["coverage"] <= rnd["coverage_hi"]
    ).all()
    # A threshold rule gives no interval: its coverage and width are undefined, its error is not.
    mid = t.loc["midpoint"]
    assert (
        mid["coverage"].isna().all()
        and mid["width_pts"].isna().all()
        and mid["mae_pts"].notna().all()
    )
    # The random baseline predicts no sample: its sample-level error is undefined.
    assert per.loc[per["method"] == BASELINE_METHOD, "sample_mae"].isna().all()
    assert per.loc[per["method"] == "midpoint", "sample_mae"].notna().all()
    # The numbers are those of the per-model rows, against a random sample's exact
    # expected error on the same held-out models (scipy's hypergeometric pmf).
    g = per[(per["method"] == "midpoint") & (per["budget"] == 64)]
    assert t.loc[("midpoint", 64), "mae_pts"] == pytest.approx(100 * g["error"].abs().mean())
    held = g.drop_duplicates("model")["correct"]
    want = 100 * np.mean([brute_expected_error(int(a), 300, 64) for a in held])
    assert t.loc[("midpoint", 64), "random_pts"] == pytest.approx(want, rel=1e-9)
    assert t.loc[("midpoint", 64), "mae_vs_random"] == pytest.approx(
        t.loc[("midpoint", 64), "mae_pts"] / want
    )
    assert (table["ratio_lo"] <= table["mae_vs_random"]).all()
    assert (table["mae_vs_random"] <= table["ratio_hi"]).all()
    assert (table["equivalent_lo"] <= table["equivalent_budget"]).all()
    assert (table["equivalent_budget"] <= table["equivalent_hi"]).all()
    cov = per[(per["method"] == BASELINE_METHOD) & (per["budget"] == 16)]
    assert rnd.loc[16, "coverage"] == pytest.approx(
        ((cov["lo"] <= cov["true"]) & (cov["true"] <= cov["hi"])).mean()
    )
    text = bt.text()
    assert "6 held-out models (random split: models like your cache's" in text
    assert "x 2 repeat(s)" in text and "each model its own item draws" in text
    assert "items for MAE within 1 pt" in text and "verdict:" in text
    assert "midpoint at n′ = 64 on models like your cache's:" in text


def test_the_held_out_models_are_fixed_and_the_repeats_are_item_draws(sel):
    bt = backtest(sel, [BASELINE_METHOD], [20], holdout=4, repeats=3, seed=2, boot=0)
    per = bt.per_model[bt.per_model["method"] == BASELINE_METHOD]
    assert per.groupby("repeat")["model"].apply(frozenset).nunique() == 1
    assert per.groupby("model")["estimate"].nunique().min() > 1  # new items each repeat
    assert sorted(bt.config["held_out"]) == sorted(per["model"].unique())


def test_equivalent_random_budget_is_the_smallest_matching_random_sample():
    """Against a scan of every budget with scipy's pmf (a second implementation)."""
    correct, n = np.array([3, 17, 40, 58]), 60
    errors = np.array([0.02, 0.05, 0.04, 0.01])
    c = compare_with_random(errors, correct, n, 10, boot=0)
    mean = [np.mean([brute_expected_error(a, n, b) for a in correct]) for b in range(1, n + 1)]
    assert np.all(np.diff(mean) <= 1e-12)  # the random sample's error falls with its size
    want = 1 + int(np.flatnonzero(np.array(mean) <= errors.mean())[0])
    assert c.equivalent == want and c.saving == pytest.approx(want / 10)
    assert c.random_error == pytest.approx(mean[9]) and c.ratio == pytest.approx(
        errors.mean() / mean[9]
    )
    # Exact estimates: only every item matches them.
    assert compare_with_random(np.zeros(4), correct, n, 10, boot=0).equivalent == n


def test_bootstrap_intervals_resample_models_and_are_reproducible():
    rng = np.random.default_rng(3)
    correct = rng.integers(20, 280, 30)
    errors = rng.random(30) * 0.05
    a = compare_with_random(errors, correct, 300, 32, boot=500, seed=4)
    b = compare_with_random(errors, correct, 300, 32, boot=500, seed=4)
    assert a == b
    assert a.ratio_lo < a.ratio < a.ratio_hi and a.equivalent_lo <= a.equivalent <= a.equivalent_hi
    # One model: nothing to resample, the interval is the estimate.
    one = compare_with_random(errors[:1], correct[:1], 300, 32, boot=500)
    assert one.ratio_lo == one.ratio == one.ratio_hi


def test_per_model_coverage_counts_each_models_repeats(sel):
    bt = backtest(sel, [BASELINE_METHOD], [12], holdout=8, repeats=20, seed=5, boot=0)
    per = bt.per_model[bt.per_model["method"] == BASELINE_METHOD]
    k = per.groupby("model")["covered"].sum()
    row = bt.coverage.set_index("method").loc[BASELINE_METHOD]
    assert low_coverage_count(20) == 16 and row["low_count"] == 16
    assert binom.cdf(16, 20, 0.95) <= 0.025 < binom.cdf(17, 20, 0.95)
    assert row["expected_share"] == pytest.approx(binom.cdf(16, 20, 0.95))
    assert row["worst_covered"] == k.min() and row["worst_model"] in set(k[k == k.min()].index)
    assert (row["worst_lo"], row["worst_hi"]) == pytest.approx(clopper_pearson(int(k.min()), 20))
    assert row["low_models"] == (k <= 16).sum() and row["low_share"] == pytest.approx(
        (k <= 16).mean()
    )
    assert low_coverage_count(1) == -1 and low_coverage_count(2) == 0


def test_by_accuracy_range_splits_the_held_out_models_into_quintiles(sel):
    bt = backtest(sel, [BASELINE_METHOD], [30], holdout=10, repeats=2, seed=6, boot=0)
    r = bt.by_range[bt.by_range["method"] == BASELINE_METHOD].sort_values("quantile")
    assert r["models"].tolist() == [2] * 5 and r["quantile"].tolist() == [1, 2, 3, 4, 5]
    assert (r["acc_lo"].to_numpy()[1:] >= r["acc_hi"].to_numpy()[:-1]).all()
    per = bt.per_model[bt.per_model["method"] == BASELINE_METHOD]
    top = per[per["true"] >= r["acc_lo"].iloc[-1]]
    assert r["mae_pts"].iloc[-1] == pytest.approx(100 * top["error"].abs().mean())


def test_summary_is_the_smallest_budget_within_the_target(sel):
    bt = backtest(sel, [BASELINE_METHOD], [8, 32, 300], holdout=4, repeats=1)
    s = bt.summary.set_index("method").loc[BASELINE_METHOD]
    # Every item evaluated: the estimate is exact, so 300 is within 1 point at the latest.
    t = bt.table[bt.table["method"] == BASELINE_METHOD].set_index("budget")
    assert t.loc[300, "mae_pts"] == pytest.approx(0)
    expect = min(b for b in (8, 32, 300) if t.loc[b, "mae_pts"] <= 1)
    assert s["items_mae_1pt"] == expect and s["random_items_mae_1pt"] == expect


def test_items_are_what_select_gives_the_model_on_the_same_cache(sel):
    bt = backtest(sel, ["neighbours"], [24], holdout=3, repeats=1, seed=4)
    rows = held_out_rows(sel, 3, "random", 4)
    keep = np.setdiff1d(np.arange(len(sel.models)), rows)
    cache = Selection(sel.A[keep], sel.models.iloc[keep].reset_index(drop=True), sel.samples, True)
    fitted = item_choice.fit(cache, "neighbours")
    for r in rows:
        name = sel.names[r]
        choice = item_choice.select_items(cache, 24, "neighbours", 4, fitted=fitted, model=name)
        est = fitted.estimate(choice.columns, sel.A[r, choice.columns])
        got = bt.per_model[
            (bt.per_model["model"] == name) & (bt.per_model["method"] == "neighbours")
        ]
        assert got["estimate"].iloc[0] == pytest.approx(est.acc)


def test_common_items_share_one_draw_and_per_model_draws_do_not():
    A = irt_matrix(m=30, n=400, seed=2)
    A[1] = A[0]  # two held-out models with identical results
    s = selection(A, release=np.r_[28, 29, np.arange(28)])  # rows 0 and 1 are the newest
    kw = dict(holdout=2, split="newest", repeats=1)
    own = backtest(s, [BASELINE_METHOD], [20], **kw).per_model
    common = backtest(s, [BASELINE_METHOD], [20], draws="common", **kw).per_model
    own, common = (p[p["method"] == BASELINE_METHOD] for p in (own, common))
    assert set(own["model"]) == {"org/m00", "org/m01"}
    # Identical rows on identical items give identical estimates; on own draws they differ.
    assert common["estimate"].nunique() == 1
    assert own["estimate"].nunique() == 2
    assert (
        "one common item set" in backtest(s, [BASELINE_METHOD], [20], draws="common", **kw).text()
    )


def test_splits(sel):
    m = len(sel.models)
    acc = sel.A.mean(axis=1)
    beyond = held_out_rows(sel, 5, "beyond-cache", 0)
    assert set(beyond) == set(np.argsort(-acc)[:5])
    cached = np.setdiff1d(np.arange(m), beyond)
    assert acc[beyond].min() >= acc[cached].max()
    assert np.array_equal(held_out_rows(sel, 5, "best", 0), beyond)  # the split's old name
    assert held_out_rows(sel, 5, "newest", 0).tolist() == list(range(35, 40))
    a, b = held_out_rows(sel, 5, "random", 0), held_out_rows(sel, 5, "random", 1)
    assert len(set(a)) == 5 and not np.array_equal(a, b)
    assert np.array_equal(a, held_out_rows(sel, 5, "random", 0))
    # The models a random Sort set of the others leaves out (the Budget explorer's).
    assert np.array_equal(a, np.setdiff1d(np.arange(m), sort_rows(sel.models, m - 5, "random", 0)))


def test_first_n_runs_the_first_items_of_each_task():
    A = irt_matrix(m=20, n=90, seed=3)
    tasks = np.repeat(["a", "b", "c"], [20, 30, 40])
    s = selection(A, tasks=tasks)
    bt = backtest(s, [LIMIT_METHOD], [9, 31], holdout=3, repeats=2, boot=0)
    per = bt.per_model[bt.per_model["method"] == LIMIT_METHOD]
    for r in per.itertuples():
        row = A[s.names.index(r.model)]
        k = r.budget // 3
        extra = r.budget % 3  # the remainder to the first tasks
        cols = np.r_[0 : k + (extra > 0), 20 : 20 + k + (extra > 1), 50 : 50 + k]
        assert r.estimate == pytest.approx(row[cols].mean())
    # Not drawn: the same items, the same estimate, in every repeat.
    assert per.groupby(["model", "budget"])["estimate"].nunique().max() == 1


@pytest.mark.parametrize(
    "kwargs,words",
    [
        (dict(methods=["nope"]), "unknown search method 'nope'"),
        (dict(budgets=[0]), "between 1 and the number of samples"),
        (dict(budgets=[301]), "between 1 and the number of samples"),
        (dict(holdout=39), "hold out between 1 and 38"),
        (dict(split="oldest"), "unknown split"),
        (dict(holdout=0), "hold out between 1 and 38"),
        (dict(repeats=0), "repeats"),
        (dict(draws="shared"), "unknown item draw"),
        (dict(baselines=("coin",)), "unknown baseline 'coin'"),
    ],
)
def test_bad_settings_are_one_sentence(sel, kwargs, words):
    args = {"methods": [BASELINE_METHOD], "budgets": [8], **kwargs}
    with pytest.raises(InputError, match=words):
        backtest(sel, args.pop("methods"), args.pop("budgets"), **args)


def test_the_comparison_with_random_needs_no_random_estimates(sel):
    """Without the random sample's own estimates (what the Budget explorer asks for) the
    comparison is the same, to the last digit: it rests on a random sample's exact error."""
    args = dict(holdout=8, repeats=2, boot=200, scored=6)
    full = backtest(sel, [DEFAULT_METHOD], [16, 64], **args)
    lean = backtest(sel, [DEFAULT_METHOD], [16, 64], baselines=(LIMIT_METHOD,), **args)
    assert BASELINE_METHOD in set(full.table["method"])
    assert BASELINE_METHOD not in set(lean.table["method"])
    pd.testing.assert_frame_equal(
        lean.against_random(DEFAULT_METHOD), full.against_random(DEFAULT_METHOD)
    )


def test_progress_reaches_the_end(sel):
    seen = []
    backtest(
        sel, ["midpoint"], [8], holdout=3, repeats=2, boot=0, progress=lambda f, t: seen.append(f)
    )
    assert seen and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)


@pytest.fixture(scope="module")
def store_file(tmp_path_factory):
    from lifelong_core.store import Store

    path = tmp_path_factory.mktemp("bt") / "s.duckdb"
    A = irt_matrix(m=30, n=200, seed=5)
    with Store.create(path) as st:
        st.insert_matrix(
            A,
            [f"org/m{i:02d}" for i in range(30)],
            [f"t/{j}" for j in range(200)],
            dataset="sim",
        )
    return path


def test_cli_prints_the_table_writes_csv_and_reports_progress(store_file, tmp_path, capsys):
    out, per = tmp_path / "t.csv", tmp_path / "p.csv"
    argv = ["backtest", "--store", str(store_file), "--method", "midpoint", "--budgets", "8,32"]
    assert (
        main(
            [*argv, "--holdout", "4", "--repeats", "2", "--out", str(out), "--per-model", str(per)]
        )
        == 0
    )
    cap = capsys.readouterr()
    assert "backtest on sim: 4 held-out models" in cap.out and "coverage (95% CI)" in cap.out
    assert "×random (95% CI)" in cap.out and "per held-out model, over its 2 draws" in cap.out
    assert "by accuracy range" in cap.out and "verdict:" in cap.out
    assert "100.0%" in cap.err  # progress on stderr, the table alone on stdout
    table = pd.read_csv(out)
    assert set(table["method"]) == {"midpoint", BASELINE_METHOD, LIMIT_METHOD}
    assert len(table) == 6
    assert len(pd.read_csv(per)) == 2 * 4 * 3 * 2


@pytest.mark.parametrize(
    "extra,words",
    [
        (["--budgets", "8,x"], "--budgets must be comma-separated whole numbers"),
        (
            ["--budgets", "500"],
            "--budgets: budget 500 must be between 1 and the number of samples (200)",
        ),
        (["--method", "nope"], "--method: unknown search method 'nope'"),
        (["--holdout", "29"], "--holdout: hold out between 1 and 28"),
        (["--dataset", "zzz"], "--dataset: the store holds no dataset 'zzz'"),
        (["--out", "/no/such/dir/t.csv"], "--out directory /no/such/dir does not exist"),
    ],
)
def test_cli_refusals_are_one_line(store_file, capsys, extra, words):
    assert main(["backtest", "--store", str(store_file), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and words in err, err


@pytest.mark.slow
def test_default_beats_random_on_the_bundled_leaderboard(demo_store_path):
    """The product's default estimator against a random sample on real language-model
    results (the bundled Open LLM Leaderboard v2 data): smaller error and narrower
    intervals at the same budget, its intervals still covering the truth."""
    from lifelong_core.datasets.leaderboard import DATASET
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    with Store.open(demo_store_path) as st:
        s = select(st, DATASET)
    bt = backtest(s, [DEFAULT_METHOD], [64, 128, 256], holdout=10, repeats=2)
    t = bt.table.set_index("method")
    assert t.loc[DEFAULT_METHOD, "mae_pts"].mean() < t.loc[BASELINE_METHOD, "mae_pts"].mean()
    assert t.loc[DEFAULT_METHOD, "width_pts"].mean() < t.loc[BASELINE_METHOD, "width_pts"].mean()
    covered = bt.per_model.loc[bt.per_model["method"] == DEFAULT_METHOD, "covered"]
    assert covered.mean() >= 0.85


def test_models_of_one_name_stay_two_models():
    A = irt_matrix(m=20, n=120, seed=8)
    s = selection(A, release=np.r_[18, 19, np.arange(18)])  # rows 0 and 1 are the newest
    s.models.loc[[0, 1], "name"] = "org/twin"
    bt = backtest(s, [BASELINE_METHOD], [30], holdout=2, split="newest", repeats=3, boot=0)
    assert bt.coverage.set_index("method").loc[BASELINE_METHOD, "models"] == 2
    assert bt.table.set_index("method").loc[BASELINE_METHOD, "models"] == 2


def test_a_seeded_subset_of_the_held_out_models_is_scored_as_the_sweep_pages_score(sel):
    from lifelong_core.workflows.backtest import interactive_scored
    from lifelong_core.workflows.sweeps import capped_eval_rows

    m = len(sel.models)
    bt = backtest(sel, ["mirt"], [20], holdout=25, repeats=1, seed=3, scored=6, boot=0)
    held = held_out_rows(sel, 25, "random", 3)
    sort_set = np.setdiff1d(np.arange(m), held)
    want = capped_eval_rows(m, sort_set, "mirt", 3, 6)  # the models the curves score
    assert sorted(bt.per_model["row"].unique()) == list(want)
    assert bt.config["scored"] == 6 and bt.config["holdout"] == 25
    # The cache is still every model not held out.
    assert "a cache of 15 models" in bt.text() and "6 of them scored" in bt.text()
    # Pages cap a method that is not cheap per model; the baselines alone are not capped.
    assert interactive_scored(["mirt", BASELINE_METHOD], 25, 6) == 6
    assert interactive_scored([BASELINE_METHOD, LIMIT_METHOD], 25, 6) is None
    assert interactive_scored(["mirt"], 5, 6) is None
    for bad in (0, 6, 10**12):
        with pytest.raises(InputError, match="score between 1 and the 5 held-out models"):
            backtest(sel, ["midpoint"], [20], holdout=5, scored=bad)
