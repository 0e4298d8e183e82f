"""The rules the Rankings and Matched accuracy pages apply, tested without Streamlit
(lifelong_core.workflows.rankings and lifelong_core.workflows.matching)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.stats import SCHEMES, bootstrap, leaderboard
from lifelong_core.stats.vtab import counts_from_leaderboard, load_published
from lifelong_core.store import Store
from lifelong_core.workflows import matching, rankings
from ui import ranking_tables


def test_published_leaderboard_is_table_a3_best_first():
    rows, table = ranking_tables.published_leaderboard(load_published(), "bootstrap", False)
    assert list(table.columns) == ["model", *ranking_tables.PUBLISHED_SCOPES]
    assert len(table) == 16 and set(rows["method"]) == {"bootstrap"}
    overall = rows[rows["scope"] == "overall"].set_index("model")["mean_pct"]
    assert table["model"].iloc[0] == overall.idxmax()
    best = overall.loc[table["model"].iloc[0]]
    assert table["overall"].iloc[0].startswith(f"{best:.1f} (")
    # Normalised figures exist for the bootstrap only: the Bayesian rows stay raw.
    bayes, _ = ranking_tables.published_leaderboard(load_published(), "bayesian", True)
    assert not bayes["normalized"].any()


def test_tables_of_the_bootstrap_tabs():
    table = counts_from_leaderboard()
    board = leaderboard(bootstrap(table, n_boot=200, seed=1), level=0.834)
    acc = rankings.overall_accuracy(table)
    assert list(acc) == sorted(acc, reverse=True)
    truth = acc * 100
    comp = ranking_tables.estimated_vs_true(board, truth)
    assert comp["true_in_interval"].dtype == bool
    assert (comp["error_pts"] == (comp["estimated_pct"] - comp["true_pct"]).round(2)).all()
    assert sorted(comp["true_rank"]) == sorted(truth.rank(ascending=False, method="min"))
    ranks = pd.DataFrame(
        {
            "model": ["a", "b"] * len(SCHEMES),
            "scheme": np.repeat(list(SCHEMES), 2),
            "mean": 1.25,
            "lo": 1.0,
            "hi": 2.0,
        }
    )
    wide = ranking_tables.scheme_intervals(ranks, ["b", "a"], SCHEMES)
    assert list(wide.columns) == ["model", *SCHEMES.values()]
    assert wide["model"].tolist() == ["b", "a"] and wide.iloc[0, 1] == "1.2 (1.0, 2.0)"
    pts = ranking_tables.differences_in_points(
        pd.DataFrame({"diff": [0.01234], "lo": [0.0], "hi": [0.1]})
    )
    assert pts["diff"].iloc[0] == 1.234 and pts["hi"].iloc[0] == 10.0


def test_per_category_intervals_need_categories():
    one = pd.DataFrame(
        {"model": ["a", "b"], "scope": "overall", "mean": [2.0, 1.0], "lo": 0.5, "hi": 3.0}
    )
    assert ranking_tables.per_category_intervals(one) is None
    two = pd.concat([one, one.assign(scope="cat", mean=[1.0, 2.0])], ignore_index=True)
    wide = ranking_tables.per_category_intervals(two)
    assert wide.columns.tolist() == ["model", "overall", "cat"]
    assert wide["model"].tolist() == ["a", "b"] and wide["cat"].iloc[0] == "1.00 (0.50, 3.00)"


def test_estimator_interval_table_counts_and_ranks():
    own = pd.DataFrame(
        {
            "model": ["a", "b"],
            "mean": [50.0, 60.0],
            "lo": [45.0, 58.0],
            "hi": [55.0, 62.0],
            "true": [52.0, 63.0],
        }
    )
    out = ranking_tables.estimator_interval_table(own)
    assert out["model"].tolist() == ["b", "a"]
    assert out.set_index("model")["true_in_interval"].to_dict() == {"a": True, "b": False}
    assert {"est_pct", "est_lo_pct", "est_hi_pct", "true_pct"} <= set(out.columns)


def test_matched_accuracy_rules_on_the_demo_store(demo_store_path):
    with Store.open(demo_store_path) as store:
        assert matching.unlabeled_datasets(
            store, ["lifelong-digits", "open-llm-leaderboard-v2", "lifelong-digits"]
        ) == ["open-llm-leaderboard-v2"]
        src, tgt = ("lifelong-digits", ["clean"]), ("lifelong-digits", ["clean-replication"])
        assert matching.missing_columns(store, src, tgt) == []
        rows = matching.comparable_models(store, src, tgt)
        assert rows and all(isinstance(i, int) for i in rows.values())
        from lifelong_core.matching.store_pair import Side, read_samples

        pair = read_samples(
            store,
            Side("lifelong-digits", ("clean",)),
            Side("lifelong-digits", ("clean-replication",)),
        )
        detail = matching.model_detail(
            store, pair, next(iter(rows.values())), eps=0.01, criterion="prob", runs=2, seed=0
        )
    assert 0 <= detail["metrics"]["acc_source"] <= 1 and len(detail["per_run"]) == 2
    assert set(detail["reliability"]["subset"]) >= {"source", "target"}


def test_model_blocks_stay_within_the_dense_limit():
    rows = list(range(100))
    blocks = matching.model_blocks(rows, 1000, 500)
    assert [r for b in blocks for r in b] == rows and len(blocks) == matching.BLOCKS
    # Both sides are read together: 1,500 datapoints of 27 bytes per model.
    with limits.dense_limit_set(27 * 1500 * 2):
        assert max(len(b) for b in matching.model_blocks(rows, 1000, 500)) == 2
    with limits.dense_limit_set(27 * 1500 * 2 - 1):
        assert max(len(b) for b in matching.model_blocks(rows, 1000, 500)) == 1
    assert matching.all_models_table([pd.DataFrame()]) is None
    tables = [
        pd.DataFrame({"model": ["b", "a"], "acc_source": [0.5, 0.5]}),
        pd.DataFrame({"model": ["c"], "acc_source": [0.1]}),
    ]
    assert matching.all_models_table(tables)["model"].tolist() == ["c", "a", "b"]


@pytest.mark.slow
def test_hierarchical_views_hold_every_table_the_page_shows():
    table = counts_from_leaderboard().subset(models=list(counts_from_leaderboard().models[:4]))
    views = rankings.hierarchical_views(
        table, chains=2, draws=100, seed=0, prior=("uniform", 0.0, 1000.0), level=0.834
    )
    assert views["models"] == list(table.models)
    assert views["a"].shape[:2] == (2, 100)
    ordered = ranking_tables.by_expected_rank(views["rank_probs"])
    assert sorted(ordered.index) == sorted(table.models)
    both = ranking_tables.bayes_beside_bootstrap(
        ranking_tables.percent(views["intervals"]),
        leaderboard(bootstrap(table, n_boot=100, seed=0)),
        False,
    )
    assert {"mean_bayes", "mean_boot"} <= set(both.columns)


@pytest.mark.parametrize(
    "text,words",
    [
        ("", "give at least one budget"),
        (" , ", "give at least one budget"),
        ("32,abc", "'abc' is not one"),
        ("1.5", "'1.5' is not one"),
        ("-3", "'-3' is not one"),
        ("²", "'²' is not one"),
        ("0,10", "budget 0 must be between 1 and 300"),
        ("301", "budget 301 must be between 1 and 300"),
        (",".join(str(b) for b in range(1, 60)), "at most 50 budgets"),
    ],
)
def test_typed_budgets_refuse_bad_values_in_one_sentence(text, words):
    from lifelong_core.workflows.budgets import parse_budgets

    with pytest.raises(InputError, match=words) as err:
        parse_budgets(text, 300)
    assert err.value.param == "budgets"


def test_typed_budgets_are_any_whole_numbers_in_range():
    from lifelong_core.workflows.budgets import parse_budgets

    assert parse_budgets(" 100, 7 ,100,300", 300) == [7, 100, 300]
