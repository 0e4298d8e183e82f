"""The workflows floor (lifelong_core.workflows) on small hand-made inputs and on the demo store."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from lifelong_core.errors import InputError
from lifelong_core.workflows.arrivals import match_observations, read_results
from lifelong_core.workflows.sortsets import nested_pool, release_rows, sort_rows
from lifelong_core.workflows.sweeps import rank_agreement, ranks
from lifelong_core.workflows.teaching import walkthrough


def test_rank_agreement_and_ranks():
    per = pd.DataFrame(
        {
            "budget": [8] * 4,
            "model_row": [0, 1, 2, 3],
            "est_acc": [0.9, 0.8, 0.6, 0.7],
            "true_acc": [0.9, 0.8, 0.7, 0.6],
            "name": list("abcd"),
        }
    )
    agree = rank_agreement(per, top=2)
    assert agree["spearman"].iloc[0] == pytest.approx(0.8)
    assert agree["top2_overlap"].iloc[0] == 1.0
    r = ranks(per, 8)
    assert list(r["est_rank"]) == [1, 2, 4, 3]


def test_sort_rows_rules():
    models = pd.DataFrame({"release_order": pd.array([3, None, 1, 2], dtype="Int64")})
    assert list(sort_rows(models, 2, "earliest released", 0)) == [2, 3]
    assert list(nested_pool(models, 3, "earliest released", 0)) == [2, 3, 0]
    assert len(sort_rows(models, 2, "random", 5)) == 2
    with pytest.raises(InputError):
        sort_rows(models, 4, "earliest released", 0)


def test_walkthrough_matches_a_hand_checked_case():
    # Three Sort models make the column order 0 (3 right), 1 (2), 2 (1), 3 (0); the new
    # model (row 3) is right on the first two: with every column evaluated the midpoint
    # rule is the exact DP optimum t = 2.
    A = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]], dtype=np.uint8)
    w = walkthrough(A, 3, 4, "midpoint", "uniform", 0)
    assert list(w.order) == [0, 1, 2, 3]
    assert w.threshold == 2 and list(w.pred) == [1, 1, 0, 0] and list(w.true) == [1, 1, 0, 0]
    wt = walkthrough(A, 0, 3, "midpoint", "uniform", 0, transpose=True)
    assert len(wt.true) == 4 and wt.pred.sum() == wt.threshold


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"sample_id,correct\na,1\na,0\n", "different 'correct'"),
        (b"sample_id,correct\na,maybe\n", "expected 0/1, true/false or yes/no"),
        (b"sample_id,correct\n,1\n", "no value in column 'sample_id'"),
        (b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_read_results_errors(content, needle):
    with pytest.raises(InputError) as err:
        read_results(content, "r.csv", ("sample_id", "correct"))
    assert needle in str(err.value) and "r.csv" in str(err.value)


def test_read_results_ok_and_wrong_extension():
    df = read_results(b"sample_id,correct\na,1\nb,0\na,1\n", "r.csv", ("sample_id", "correct"))
    assert list(df["sample_id"]) == ["a", "b"] and list(df["correct"]) == [1, 0]
    with pytest.raises(InputError, match=r"not a .csv file"):
        read_results(b"x", "r.xlsx", ("sample_id", "correct"))
    obs, extra = match_observations(df, ["b", "a"], "sample_id", "r.csv")
    assert list(obs) == [0, 1] and extra == 0
    # What users send back: the downloaded list (with its domain and label) plus a result
    # column in their own words.
    df = read_results(
        b"sample_id,domain,label,correct\na,x,3,True\nb,x,4,no\nc,y,1,YES\nd,y,2,0.0\n",
        "r.csv",
        ("sample_id", "correct"),
    )
    assert list(df["correct"]) == [1, 0, 1, 0] and df.attrs["ignored"] == ["domain", "label"]


def test_release_rows_puts_missing_release_last_and_keeps_insertion_order_for_ties():
    models = pd.DataFrame({"release_order": pd.array([2, None, 1, 2, None], dtype="Int64")})
    assert list(release_rows(models)) == [2, 0, 3, 1, 4]


def test_unknown_sort_set_is_one_sentence():
    models = pd.DataFrame({"release_order": pd.array([1, 2, 3], dtype="Int64")})
    with pytest.raises(InputError, match="unknown Sort set"):
        sort_rows(models, 1, "latest", 0)


def test_budget_offers_fit_the_data():
    from lifelong_core.workflows.budgets import (
        budget_choices,
        budgets_within,
        default_budgets,
        single_budget_choices,
    )

    assert budget_choices(100) == [1, 2, 4, 8, 16, 32, 64, 100]
    assert default_budgets(100) == [8, 16, 32]
    assert default_budgets(5) == [5]
    assert single_budget_choices(1) == [1] and single_budget_choices(3)[0] == 2
    assert budgets_within((25, 50, 100), 50) == [25, 50]
    assert budgets_within((25, 50, 100), 50, strict=True) == [25]


def test_design_runs_nest_sort_sets_and_score_them_on_the_same_models():
    from lifelong_core.sortsearch.search import SAMPLING
    from lifelong_core.workflows.design import design_rule, design_runs

    models = pd.DataFrame({"release_order": pd.array(range(40), dtype="Int64")})
    runs = design_runs(models, [0, 1, 2], "earliest released", 0, "sum", "uniform")
    sizes = [r for r in runs if r.what == "sort_models"]
    assert [len(r.sort_set) for r in sizes] == [5, 10, 25]
    assert all(set(a.sort_set) <= set(b.sort_set) for a, b in itertools.pairwise(sizes))
    assert len({r.eval_rows for r in sizes}) == 1 and set(sizes[0].eval_rows) == set(range(25, 40))
    assert [r.label for r in runs if r.what == "sort_method"] == ["sum", "confidence", "recursive"]
    assert [r.sampling for r in runs if r.what == "sampling"] == list(SAMPLING)
    assert "listing" in SAMPLING
    assert design_runs(models.iloc[:6], [0], "random", 0, "sum", "uniform") == []
    assert design_rule("mirt") == "midpoint" and design_rule("reference") == "reference"


def test_estimator_coverage_counts_every_model_and_says_how_sure_it_is():
    from lifelong_core.workflows.rankings import estimator_coverage

    own = pd.DataFrame(
        {
            "model": list("abcdefghijkl"),
            "mean": 50.0,
            "lo": 40.0,
            "hi": 60.0,
            "true": [50.0] * 8 + [70.0] * 4,
        }
    )
    cov, text = estimator_coverage(own, "per-model")
    assert (cov.covered, cov.total) == (8, 12)
    assert "8 of 12 estimated models (67%)" in text and "35%-90%" in text
    assert "excludes 95%" in text and "less often than they claim" in text
    assert "its own random draw" in text
    own["true"] = 50.0
    cov, text = estimator_coverage(own, "common")
    assert cov.covered == 12 and "consistent with intervals that hold the truth 95%" in text
    assert "run on the same samples" in text


def _selection_without_categories(m: int = 12, n: int = 60):
    from lifelong_core.workflows.selection import Selection

    rng = np.random.default_rng(0)
    A = (rng.random((m, n)) < rng.random((m, 1))).astype(np.uint8)
    models = pd.DataFrame(
        {"model_id": [f"m{i}" for i in range(m)], "name": [f"m{i}" for i in range(m)]}
    )
    samples = pd.DataFrame(
        {
            "sample_id": [f"task{j % 2}/{j}" for j in range(n)],
            "domain": [f"task{j % 2}" for j in range(n)],
            "category": None,  # an lm-eval task outside any group has none
        }
    )
    return Selection(A, models, samples, False)


def test_new_model_per_domain_table_is_kept_for_datasets_without_categories():
    from lifelong_core.methods import get_method
    from lifelong_core.sortsearch import compute_order
    from lifelong_core.workflows.new_model import estimate_new_model

    sel = _selection_without_categories()
    method = get_method("midpoint").fit(sel.A[1:], compute_order(sel.A[1:], "sum"))
    cols = np.arange(0, 60, 3)
    ids = sel.samples["sample_id"].to_numpy()[cols]
    new = estimate_new_model(
        sel, dict(zip(ids, sel.A[0, cols].tolist())), "midpoint", fitted=method, per_task=False
    )
    assert new.by_domain["domain"].tolist() == ["task0", "task1"]
    assert new.by_domain["samples"].tolist() == [30, 30]


def test_a_method_without_sample_prediction_reports_domain_shares_and_inserts_nothing():
    from lifelong_core.methods import get_method
    from lifelong_core.workflows.new_model import estimate_new_model, estimated_model_rows

    sel = _selection_without_categories()
    method = get_method("random").fit(sel.A[1:])
    cols = np.arange(0, 40)
    ids = sel.samples["sample_id"].to_numpy()[cols]
    new = estimate_new_model(
        sel, dict(zip(ids, sel.A[0, cols].tolist())), "random", fitted=method, per_task=False
    )
    assert not new.predicts_samples
    by = new.by_domain.set_index("domain")["predicted_accuracy"]
    for d in ("task0", "task1"):
        in_d = [c for c in cols if sel.samples["domain"].iloc[c] == d]
        assert by[d] == pytest.approx(sel.A[0, in_d].mean())
    assert new.per_sample["predicted_correct"].isna().sum() == 20
    with pytest.raises(InputError, match="no estimated row to insert"):
        estimated_model_rows(new, "x", {})


def test_every_new_model_tab_opens_on_the_same_budget():
    from lifelong_core.workflows.budgets import default_single_budget, single_budget_choices

    assert default_single_budget(2191) == 256 and default_single_budget(1172) == 256
    assert default_single_budget(100) in single_budget_choices(100)


def test_interval_coverage_per_budget():
    from lifelong_core.workflows.sweeps import interval_coverage

    per = pd.DataFrame(
        {
            "budget": [8, 8, 8, 32, 32, 32],
            "true_acc": [0.5, 0.5, 0.9, 0.5, 0.5, 0.5],
            "est_lo": [0.4, 0.45, 0.4, 0.4, 0.4, 0.4],
            "est_hi": [0.6, 0.55, 0.6, 0.6, 0.6, 0.6],
        }
    )
    cov = interval_coverage(per).set_index("budget")
    assert cov.loc[8, "covered"] == 2 and cov.loc[32, "coverage"] == 1.0
    assert cov.loc[8, "mean_width"] == pytest.approx((0.2 + 0.1 + 0.2) / 3)
    assert cov.loc[8, "coverage_lo"] < 2 / 3 < cov.loc[8, "coverage_hi"]
    assert interval_coverage(per.drop(columns=["est_lo", "est_hi"])).empty
