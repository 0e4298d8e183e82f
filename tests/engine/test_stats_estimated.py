"""Counts estimated by Sort & Search for held-out models (lifelong_core.stats.estimated)."""

from __future__ import annotations

import numpy as np
import pytest

from lifelong_core.errors import InputError
from lifelong_core.stats.estimated import sortsearch_counts


@pytest.fixture(scope="module")
def cache():
    rng = np.random.default_rng(1)
    m, n = 40, 300
    logit = rng.normal(0.5, 1, (m, 1)) - rng.normal(0, 1.5, (1, n))
    A = (rng.random((m, n)) < 1 / (1 + np.exp(-logit))).astype(np.uint8)
    tasks = ["t1"] * 100 + ["t2"] * 120 + ["t3"] * 80
    cats = {"t1": "a", "t2": "a", "t3": "b"}
    names = [f"m{i}" for i in range(m)]
    return A, tasks, cats, names


def test_every_sample_evaluated_threshold_counts(cache):
    # A hand-checkable case: three models, two tasks, every sample evaluated. The midpoint
    # rule then predicts the exact DP prefix of the sorted order.
    A = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 0, 1]], dtype=np.uint8)
    est = sortsearch_counts(
        A,
        ["x", "x", "y", "y"],
        {"x": "c", "y": "c"},
        ["a", "b", "c", "d"],
        sort_rows=np.array([0, 1, 2]),
        eval_rows=np.array([3]),
        budget=4,
        method="midpoint",
    )
    # Sort order by sum: columns 0, 1, 2, 3; row d = [1, 1, 0, 1] -> best prefix 2 (1,1) or 4 (3 of 4);
    # DP maximises (#ones - #zeros) in the prefix: prefix 2 gives +2, prefix 4 gives +2; the first maximum wins.
    assert est.estimated.correct.tolist() == [[2, 0]]
    assert est.true.correct.tolist() == [[2, 1]]
    assert est.estimated.total.tolist() == [[2, 2]]
    assert not est.has_intervals and np.isnan(est.lo).all()
    assert est.acc.tolist() == [0.5] and est.true_acc.tolist() == [0.75]


def test_estimators_with_intervals_are_carried(cache):
    A, tasks, cats, names = cache
    est = sortsearch_counts(
        A, tasks, cats, names, np.arange(30), np.arange(30, 40), budget=64, method="mirt", seed=3
    )
    assert est.has_intervals
    assert (est.lo <= est.acc).all() and (est.acc <= est.hi).all()
    assert np.allclose(est.true_acc, A[30:].mean(axis=1))
    assert est.estimated.models == tuple(names[30:]) and est.estimated.tasks == ("t1", "t2", "t3")
    assert est.true.correct.sum(axis=1).tolist() == A[30:].sum(axis=1).tolist()
    # The interval is about the pooled accuracy; it should be informative at this budget.
    assert ((est.hi - est.lo) < 0.5).all()


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        (dict(sort_rows=np.arange(30), eval_rows=np.arange(29, 40)), "both in the cache"),
        (
            dict(sort_rows=np.arange(30), eval_rows=np.arange(30, 40), budget=301),
            "between 1 and the number of samples",
        ),
        (dict(sort_rows=np.arange(0), eval_rows=np.arange(30, 40)), "at least one cached model"),
    ],
)
def test_bad_input_is_one_sentence(cache, kwargs, needle):
    A, tasks, cats, names = cache
    kwargs = {"budget": 32, **kwargs}
    with pytest.raises(InputError, match=needle):
        sortsearch_counts(A, tasks, cats, names, **kwargs)


def test_task_without_category(cache):
    A, tasks, _cats, names = cache
    with pytest.raises(InputError, match="task 't3' has no category"):
        sortsearch_counts(
            A, tasks, {"t1": "a", "t2": "a"}, names, np.arange(30), np.arange(30, 40), budget=32
        )


def test_each_new_model_gets_its_own_draw_whatever_else_is_estimated(cache):
    """A model's estimate depends on its name and the seed, not on which other models are
    estimated with it or in what order; the common draw gives every model the same set."""
    A, tasks, cats, names = cache
    kw = dict(budget=40, method="random", seed=7)
    both = sortsearch_counts(A, tasks, cats, names, np.arange(30), np.array([30, 31]), **kw)
    alone = sortsearch_counts(A, tasks, cats, names, np.arange(30), np.array([31]), **kw)
    assert both.acc[1] == alone.acc[0] and both.draws == "per-model"
    twins = A.copy()
    twins[31] = twins[30]
    own = sortsearch_counts(twins, tasks, cats, names, np.arange(30), np.array([30, 31]), **kw)
    common = sortsearch_counts(
        twins, tasks, cats, names, np.arange(30), np.array([30, 31]), draws="common", **kw
    )
    assert own.acc[0] != own.acc[1] and common.acc[0] == common.acc[1]
    assert common.draws == "common"
    with pytest.raises(InputError, match="unknown item draw"):
        sortsearch_counts(A, tasks, cats, names, np.arange(30), np.array([30]), draws="x", **kw)


def test_a_method_without_sample_prediction_counts_each_task_at_its_evaluated_share(cache):
    A, tasks, cats, names = cache
    est = sortsearch_counts(
        A, tasks, cats, names, np.arange(30), np.arange(30, 40), budget=300, method="random"
    )
    # Every sample evaluated: each task's share is exact, so the counts are the true ones.
    assert np.array_equal(est.estimated.correct, est.true.correct)
    assert est.has_intervals and np.allclose(est.acc, est.true_acc)
