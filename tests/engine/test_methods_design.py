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
    strata_bounds,
    stratified_positions,
)


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


def test_perfect_predictions_give_exact_answer_and_zero_width():
    truth = np.array([1, 1, 0, 1, 0, 0, 1, 0], dtype=np.uint8)
    ranks = np.array([0, 3, 4, 6])
    iv = difference_estimate(ranks, truth[ranks], truth.astype(float))
    assert iv.acc == pytest.approx(0.5) and iv.lo == iv.hi == iv.acc


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


def test_single_evaluation_has_no_interval():
    # Mean prediction 0.54 plus the one residual 1 - 0.9 = 0.1, applied to the whole population.
    prob = np.full(10, 0.5)
    prob[3] = 0.9
    iv = difference_estimate(np.array([3]), np.array([1]), prob)
    assert iv.lo is None and iv.hi is None
    assert iv.acc == pytest.approx(0.64)
