"""Sampling design and difference estimator of lifelong_core.methods.design."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.methods.design import (
    _strata_of,
    difference_estimate,
    difference_estimate_at,
    difference_estimates_at,
    regular_positions,
    strata_bounds,
    stratified_positions,
)
from lifelong_core.methods.random_sample import hypergeometric_limits


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 400), frac=st.floats(0, 1), seed=st.integers(0, 2**31))
def test_design_exact_budget_sorted_distinct_two_per_stratum(n, frac, seed):
    budget = max(1, round(frac * n))
    pos = stratified_positions(n, budget, np.random.default_rng(seed))
    assert len(pos) == budget
    assert np.all(np.diff(pos) > 0)
    assert pos.min() >= 0 and pos.max() < n
    if budget >= 2:
        edges = strata_bounds(n, budget)
        per = np.bincount(np.searchsorted(edges, pos, side="right") - 1, minlength=len(edges) - 1)
        assert set(per.tolist()) <= {2, 3} and per.sum() == budget
        assert (per == 3).sum() == budget % 2


def test_odd_budget_puts_third_draw_in_largest_stratum():
    edges = strata_bounds(101, 9)
    assert edges.tolist() == [0, 25, 50, 76, 101]
    pos = stratified_positions(101, 9, np.random.default_rng(0))
    per = np.bincount(np.searchsorted(edges, pos, side="right") - 1)
    assert per.tolist() == [2, 2, 3, 2]


def test_n_prime_equal_n_takes_everything():
    assert stratified_positions(7, 7, np.random.default_rng(3)).tolist() == list(range(7))


def test_every_position_has_its_design_inclusion_probability():
    # Two draws out of each stratum of 5: inclusion probability 2/5 for every position.
    rng = np.random.default_rng(1)
    hits = np.zeros(20)
    reps = 4000
    for _ in range(reps):
        hits[stratified_positions(20, 8, rng)] += 1
    assert np.abs(hits / reps - 0.4).max() < 0.04


def test_same_seed_same_sample():
    a = stratified_positions(1000, 64, np.random.default_rng(5))
    b = stratified_positions(1000, 64, np.random.default_rng(5))
    c = stratified_positions(1000, 64, np.random.default_rng(6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("budget", [0, -3, 11])
def test_bad_budget_is_input_error(budget):
    with pytest.raises(InputError, match="budget"):
        stratified_positions(10, budget, np.random.default_rng(0))


def test_missing_generator_is_input_error():
    with pytest.raises(InputError, match="random generator"):
        stratified_positions(10, 4, None)


def test_hand_checked_single_stratum():
    # n = 4, one stratum, evaluated ranks 0 and 2 with results 1, 0, predictions 0.5:
    # residuals +-0.5 -> acc = (1 + 0.5 + 0.5 + 2 * 0) / 4 = 0.5; s^2 = 0.5; fpc = 1/2;
    # var = 1 * 0.5 * 0.5 / 2 = 0.125 with 1 df, t = 12.706 -> the interval is all of [0, 1].
    iv = difference_estimate(np.array([0, 2]), np.array([1, 0]), np.full(4, 0.5))
    assert iv.acc == pytest.approx(0.5)
    assert iv.se == pytest.approx(np.sqrt(0.125))
    assert iv.half == pytest.approx(12.7062047 * np.sqrt(0.125), rel=1e-6)
    assert (iv.lo, iv.hi) == (0.0, 1.0)


def test_difference_estimator_and_its_variance_are_exactly_unbiased():
    # Two strata of three, two draws each: all 9 equally likely samples enumerated.
    truth = np.array([1, 1, 0, 1, 0, 0])
    prob = np.array([0.9, 0.6, 0.7, 0.4, 0.2, 0.3])
    ests, vars_ = [], []
    for s0 in itertools.combinations(range(3), 2):
        for s1 in itertools.combinations(range(3, 6), 2):
            ranks = np.array(s0 + s1)
            iv = difference_estimate(ranks, truth[ranks], prob)
            ests.append(iv.acc)
            vars_.append(iv.se**2)
    ests = np.array(ests)
    assert ests.mean() == pytest.approx(truth.mean(), abs=1e-12)
    assert np.mean(vars_) == pytest.approx(ests.var(), abs=1e-12)


def test_predictions_that_reproduce_the_sample_fall_back_to_the_exact_interval():
    # Residuals all zero: the sample cannot say how wrong the predictions are elsewhere.
    # The textbook interval has zero width; the guarded one is the simple random
    # sample's exact interval of the evaluated share (3 of 4 right, 8 items), holding acc.
    truth = np.array([1, 1, 0, 1, 0, 0, 1, 0], dtype=np.uint8)
    ranks = np.array([0, 3, 4, 6])
    bare = difference_estimate(ranks, truth[ranks], truth.astype(float), guard=False)
    assert bare.acc == pytest.approx(0.5) and bare.lo == bare.hi == bare.acc
    iv = difference_estimate(ranks, truth[ranks], truth.astype(float))
    lo, hi = hypergeometric_limits(3, 4, 8)
    assert iv.acc == pytest.approx(0.5) and iv.guarded
    assert (iv.lo, iv.hi) == pytest.approx((min(lo / 8, 0.5), max(hi / 8, 0.5)))
    assert iv.hi - iv.lo > 0.3


def test_full_evaluation_is_exact_whatever_the_predictions():
    rng = np.random.default_rng(2)
    truth = (rng.random(31) < 0.6).astype(np.uint8)
    iv = difference_estimate(np.arange(31), truth, rng.random(31))
    assert iv.acc == pytest.approx(truth.mean()) and iv.half == 0.0


def test_foreign_positions_are_post_stratified_with_two_per_stratum():
    # S&S's grid puts all four points in the first of two design strata: one merged stratum.
    label, sizes = _strata_of(np.array([0, 1, 2, 3]), 20, 4)
    assert label.tolist() == [0, 0, 0, 0] and sizes.tolist() == [20]
    label, sizes = _strata_of(np.array([0, 5, 9, 10, 15, 19]), 30, 6)
    assert sizes.sum() == 30 and np.bincount(label).min() >= 2


def test_single_evaluation_gets_the_exact_interval_of_one_item():
    # Mean prediction 0.54 plus the one residual 1 - 0.9 = 0.1, applied to the whole population.
    prob = np.full(10, 0.5)
    prob[3] = 0.9
    bare = difference_estimate(np.array([3]), np.array([1]), prob, guard=False)
    assert bare.lo is None and bare.hi is None and bare.acc == pytest.approx(0.64)
    iv = difference_estimate(np.array([3]), np.array([1]), prob)
    lo, _ = hypergeometric_limits(1, 1, 10)  # one right of one: at least one item right
    assert iv.acc == pytest.approx(0.64)
    assert (iv.lo, iv.hi) == pytest.approx((min(lo / 10, 0.64), 1.0))


def test_an_outcome_never_seen_gets_the_hull_with_the_exact_interval():
    # No evaluated item right, predictions near 0: the residuals barely vary, and the
    # t-interval is a sliver around the predictions' total. The truth may be anywhere up
    # to what 0 of 20 allows from 200 items.
    prob = 0.004 + 1e-4 * (np.arange(200) % 3 == 0)
    ranks = np.arange(0, 200, 10)
    none = np.zeros(20, dtype=np.uint8)
    bare = difference_estimate(ranks, none, prob, guard=False)
    iv = difference_estimate(ranks, none, prob)
    _, hi = hypergeometric_limits(0, 20, 200)
    assert bare.hi < 0.01 and iv.lo == 0.0 and iv.hi == pytest.approx(hi / 200) and iv.guarded
    # Every one right: the mirror image, down to the exact lower limit and up to 1.
    iv = difference_estimate(ranks, np.ones(20, dtype=np.uint8), 1 - prob)
    lo, _ = hypergeometric_limits(20, 20, 200)
    assert iv.hi == 1.0 and iv.lo == pytest.approx(lo / 200)
    # Both outcomes seen: the t-interval as it is.
    obs = (ranks % 20 == 0).astype(np.uint8)
    seen = difference_estimate(ranks, obs, np.full(200, 0.5))
    t = difference_estimate(ranks, obs, np.full(200, 0.5), guard=False)
    assert not seen.guarded and (seen.lo, seen.hi) == (t.lo, t.hi)


def test_the_guard_restores_coverage_near_zero_accuracy():
    """A model 1.5% right, predicted at 0.3% everywhere, 40 items drawn two per stratum from
    400: about half the draws see no success. The textbook interval then sits on the
    prediction and misses; the guarded one holds the truth at least 95% of the time."""
    rng = np.random.default_rng(11)
    truth = np.zeros(400, dtype=np.uint8)
    truth[rng.choice(400, 6, replace=False)] = 1
    prob = np.full(400, 0.003)
    covered = {True: 0, False: 0}
    draws = 2000
    for _ in range(draws):
        ranks = stratified_positions(400, 40, rng)
        for guard in covered:
            iv = difference_estimate(ranks, truth[ranks], prob, guard=guard)
            covered[guard] += iv.lo <= truth.mean() <= iv.hi
    assert covered[True] / draws >= 0.95
    assert covered[False] / draws < 0.75


@pytest.mark.parametrize("guard", [True, False])
@pytest.mark.parametrize(
    "n, budget, design",
    [
        (500, 64, "stratified"),
        (500, 7, "stratified"),
        (500, 33, "regular"),  # post-stratified: collapsed strata of two or three
        (500, 1, "stratified"),
        (40, 40, "stratified"),  # every item evaluated
        (3000, 2048, "stratified"),
    ],
)
def test_many_models_at_once_give_each_models_estimate(n, budget, design, guard):
    """The batched estimator against the one-model estimator, model by model: residual
    variance zero (predictions that reproduce the sample), outcomes never seen, fitted
    predictions with their variance correction, and a model of random predictions."""
    rng = np.random.default_rng(budget)
    draw = stratified_positions if design == "stratified" else regular_positions
    ranks = rng.permutation(draw(n, budget, rng))  # any order of the evaluated samples
    models = 9
    obs = (rng.random((models, budget)) < rng.random((models, 1))).astype(np.uint8)
    prob = rng.random((models, budget)).astype(np.float32)
    obs[1] = 0  # never right
    obs[2] = 1  # never wrong
    prob[3] = obs[3]  # the sample reproduced: no residual variance
    total = prob.sum(axis=1, dtype=np.float64) + rng.random(models) * (n - budget)
    inflate = 1.0 + rng.random(models)
    got = difference_estimates_at(ranks, obs, prob, total, n, inflate=inflate, guard=guard)
    assert len(got) == models
    for r in range(models):
        want = difference_estimate_at(
            ranks, obs[r], prob[r], float(total[r]), n, inflate=float(inflate[r]), guard=guard
        )
        assert got[r].guarded == want.guarded
        for field in ("acc", "lo", "hi", "se", "half"):
            a, b = getattr(got[r], field), getattr(want, field)
            assert (a is None) == (b is None), field
            if a is not None:
                assert a == pytest.approx(b, rel=1e-13, abs=1e-15), (r, field)


def test_many_models_are_taken_in_groups_of_bounded_memory(monkeypatch):
    from lifelong_core.methods import design

    rng = np.random.default_rng(3)
    ranks = stratified_positions(800, 96, rng)
    obs = (rng.random((25, 96)) < 0.6).astype(np.uint8)
    prob = rng.random((25, 96))
    total = prob.sum(axis=1) + 300.0
    whole = difference_estimates_at(ranks, obs, prob, total, 800)
    monkeypatch.setattr(design, "ESTIMATES_BYTES", 8 * 96 * 4)  # four models at a time
    assert difference_estimates_at(ranks, obs, prob, total, 800) == whole
