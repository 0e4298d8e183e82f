"""The first-N baseline (``first-n``): what ``lm_eval --limit`` runs, and the interval its
users compute."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from lifelong_core.errors import InputError
from lifelong_core.methods import capabilities, get_method, methods_with
from lifelong_core.methods.first_n import allocate
from lifelong_core.methods.registry import LIMIT_METHOD, predicts_samples


def test_registered_as_a_baseline_that_uses_the_items_tasks():
    caps = capabilities(LIMIT_METHOD)
    assert caps.family == "baseline" and caps.interval and not caps.per_sample
    assert caps.groups and caps.cheap and not caps.threshold_rule
    assert not predicts_samples(LIMIT_METHOD)
    assert methods_with(groups=True) == [LIMIT_METHOD]


@pytest.mark.parametrize(
    "sizes,budget,want",
    [
        ([541, 756, 894], 100, [34, 33, 33]),  # --limit 33 and the one left to the first task
        ([541, 756, 894], 99, [33, 33, 33]),
        ([10, 10], 3, [2, 1]),
        ([3, 50, 50], 30, [3, 14, 13]),  # a small task whole, its share to the others
        ([1, 1, 5], 7, [1, 1, 5]),
        ([7], 4, [4]),
    ],
)
def test_budget_is_split_equally_across_tasks_as_limit_does(sizes, budget, want):
    got = allocate(sizes, budget)
    assert got.tolist() == want and got.sum() == budget
    assert (got <= np.asarray(sizes)).all()


def test_allocation_refuses_budgets_beyond_the_items():
    with pytest.raises(InputError, match="budget"):
        allocate([3, 4], 8)


def test_select_takes_the_first_items_of_each_task_in_store_order():
    # Tasks interleaved in the store: b's items come first, a's after, c's last.
    groups = ["b"] * 4 + ["a"] * 6 + ["c"] * 3
    method = get_method(LIMIT_METHOD, groups=groups).fit(np.zeros((2, 13), dtype=np.uint8))
    # Tasks in the order they first appear (b, a, c): 7 = 3 + 2 + 2, the extra one to b.
    assert method.select(13, 7).tolist() == [0, 1, 2, 4, 5, 10, 11]
    # Without tasks every item is one task: the first n' of the store's order.
    plain = get_method(LIMIT_METHOD).fit(np.zeros((2, 13), dtype=np.uint8))
    assert plain.select(13, 5, np.random.default_rng(3)).tolist() == [0, 1, 2, 3, 4]


def test_estimate_is_the_share_right_with_the_harness_standard_error():
    method = get_method(LIMIT_METHOD).fit(np.zeros((1, 50), dtype=np.uint8))
    obs = np.array([1] * 7 + [0] * 13, dtype=np.uint8)
    est = method.estimate(np.arange(20), obs)
    # lm-eval's mean_stderr: the sample standard deviation (ddof=1) over sqrt(n).
    se = np.std(obs, ddof=1) / np.sqrt(len(obs))
    z = norm.ppf(0.975)
    assert est.acc == pytest.approx(0.35)
    assert (est.lo, est.hi) == pytest.approx((0.35 - z * se, 0.35 + z * se))
    # No finite-population correction, and zero width when every item is right: the
    # interval its users compute, which the docs call biased.
    all_right = method.estimate(np.arange(10), np.ones(10, dtype=np.uint8))
    assert all_right.lo == all_right.hi == 1.0
    one = method.estimate(np.array([4]), np.array([1]))
    assert one.lo is None and one.hi is None


def test_groups_are_passed_only_to_methods_that_declare_them():
    groups = ["a"] * 5 + ["b"] * 5
    assert list(get_method(LIMIT_METHOD, groups=groups).groups) == groups
    # Any other method takes no such setting and is built as without it.
    assert get_method("random", groups=groups).name == "random"
    with pytest.raises(InputError, match="groups gives a task for 10 items, but the cache has 12"):
        get_method(LIMIT_METHOD, groups=groups).fit(np.zeros((2, 12), dtype=np.uint8))


@pytest.mark.parametrize(
    "groups",
    [
        ["b", "a", "b", "c", "a", None, 1, "1", np.nan, "nan", "a", "b"],  # texts that merge
        list(np.random.default_rng(0).choice(["math", "bbh", "ifeval"], 500)),
        list(np.arange(60) % 7),
    ],
    ids=["mixed", "three tasks", "numbers"],
)
def test_tasks_are_named_by_their_text_in_the_order_they_first_appear(groups):
    """Against a transcription of the rule by sorting: every item's task is its group's
    text, tasks in the order they first appear, each task's items in column order."""
    text = np.asarray(groups, dtype=object).astype(str)
    names = list(dict.fromkeys(text.tolist()))
    want = [np.flatnonzero(text == name) for name in names]
    got = get_method(LIMIT_METHOD, groups=np.asarray(groups, dtype=object)).fit(
        None, np.arange(len(groups))
    )
    assert len(got.tasks_) == len(want)
    for a, b in zip(got.tasks_, want):
        np.testing.assert_array_equal(a, b)


def test_a_sweep_scores_first_n_the_same_in_batches_and_row_by_row():
    from lifelong_core.methods.base import SweepScoring
    from lifelong_core.rows import DenseRows
    from lifelong_core.sweeping.protocol import score_method
    from tests.engine.test_sweep_batched import RowByRow

    rng = np.random.default_rng(3)
    n = 700
    E = (rng.random((13, n)) < rng.random((13, 1))).astype(np.uint8)
    E[0] = 1  # every item right: the users' interval has zero width
    method = get_method(LIMIT_METHOD, groups=rng.choice(["x", "y", "z"], n)).fit(None, np.arange(n))
    assert isinstance(method, SweepScoring)
    budgets = (1, 2, 9, 64, 350, 700)
    fast = score_method(method, DenseRows(E), budgets, rng, 4, lambda r: None)
    slow = score_method(RowByRow(method), DenseRows(E), budgets, rng, 4, lambda r: None)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
