"""The active design (methods/active.py): its zones, its draws, the unbiasedness of each
round's estimate given the rounds before it, and its rounds on a real method.

The checks are against what the design promises, computed independently: chances that add
up to one per zone and match how often each item is drawn; a round's estimate averaged over
its draws equal to the true total (with the design's own predictions, exactly over every
draw; cross-fitted, by simulation within its standard error); a variance estimate that is
not smaller than the estimate's spread.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lifelong_core.errors import InputError
from lifelong_core.methods import get_method
from lifelong_core.methods.active import (
    RoundsDesign,
    draw_zones,
    pilot_size,
    play_rounds,
    round_estimate,
    selection_weights,
    zone_design,
)


def _population(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """An easy -> hard order and one model's 0/1 row along it."""
    rng = np.random.default_rng(seed)
    p = np.linspace(0.95, 0.05, n)
    return np.arange(n), (rng.random(n) < p).astype(np.uint8)


def _predict(n: int):
    """A cheap predictor: the evaluated share, tilted along the order (a stand-in for an
    ability fit: it depends on the results it is given, which is what matters here)."""
    slope = np.linspace(0.3, -0.3, n)

    def predict(cols, obs):
        base = float(np.mean(obs)) if len(obs) else 0.5
        return np.clip(base + slope, 0.02, 0.98)

    return predict


def test_pilot_size_is_about_a_quarter_and_leaves_two_pairs_of_zones():
    assert pilot_size(100) == 25 and pilot_size(50) == 12 and pilot_size(200) == 50
    assert pilot_size(8) == 2 and pilot_size(5) == 5 and pilot_size(100, 0.0) == 0
    assert pilot_size(6, 0.9) == 2  # two items still left for the zones, and a pilot of two


def test_weights_mix_the_standard_deviation_with_a_uniform_floor():
    p = np.array([0.5, 0.0, 1.0, 0.1])
    w = selection_weights(p, 0.1)
    s = np.sqrt(p * (1 - p))
    assert w == pytest.approx(0.9 * s / s.mean() + 0.1)
    assert w.mean() == pytest.approx(1.0) and w.min() == pytest.approx(0.1)
    assert selection_weights(np.zeros(5)) == pytest.approx(np.ones(5))


def test_zones_chances_add_up_per_zone_and_certain_items_are_taken():
    rng = np.random.default_rng(1)
    p = rng.random(60)
    p[:3] = 0.5  # the most uncertain
    z = zone_design(np.arange(60), p, 30, floor=0.02)
    free = z.label >= 0
    assert len(z.certain) + z.zones == 30
    sums = np.bincount(z.label[free], weights=z.q[free], minlength=z.zones)
    assert sums == pytest.approx(np.ones(z.zones))
    # Zones are runs along the order.
    assert (np.diff(z.label[free]) >= 0).all()
    assert (z.q[free] > 0).all() and (z.q[free] <= 1).all()
    # Large weights are taken with certainty: one item with most of the weight.
    heavy = zone_design(np.arange(10), np.r_[0.5, np.full(9, 0.001)], 3, floor=0.01)
    assert heavy.certain.tolist() == [0] and heavy.zones == 2


def test_each_item_is_drawn_as_often_as_its_chance_says():
    p = np.linspace(0.02, 0.98, 30)
    z = zone_design(np.arange(30), p, 8)
    counts = np.zeros(30)
    reps = 20000
    rng = np.random.default_rng(2)
    for _ in range(reps):
        counts[draw_zones(z, rng)] += 1
    expected = np.where(z.label < 0, 1.0, z.q)
    se = np.sqrt(expected * (1 - expected) / reps)
    assert np.all(np.abs(counts / reps - expected) <= 5 * se + 1e-12)


def test_a_zone_round_is_exactly_unbiased_over_its_draws_with_the_design_s_predictions():
    """Every combination of one draw per zone, weighted by its chance: the estimate's
    expectation is the true total (Horvitz-Thompson), however poor the predictions."""
    order, y = _population(24)
    known = (np.array([0, 7, 15], dtype=np.int64), y[[0, 7, 15]])
    rest = np.setdiff1d(order, known[0])
    p = np.full(len(rest), 0.3)  # deliberately wrong
    z = zone_design(rest, p, 6)
    zones = [np.flatnonzero(z.label == k) for k in range(z.zones)]
    task = np.arange(24) % 3 == 0  # a domain spread over every zone
    mean = task_mean = 0.0
    for pick in itertools.product(*zones):
        chance = float(np.prod(z.q[list(pick)]))
        cols = np.sort(np.concatenate([z.certain, rest[list(pick)]]))
        est = round_estimate(z, known, cols, y[cols], _predict(24), cross_fit=False)
        mean += chance * est.total
        on_task = round_estimate(z, known, cols, y[cols], _predict(24), False, mask=task)
        task_mean += chance * on_task.total
    assert mean == pytest.approx(float(y.sum()), abs=1e-9)
    assert task_mean == pytest.approx(float(y[task].sum()), abs=1e-9)


def test_cross_fitted_rounds_are_unbiased_and_their_variance_is_not_too_small():
    order, y = _population(60, seed=3)
    predict = _predict(60)
    design = RoundsDesign(order, predict, lambda c, o: None, floor=0.1)
    rng = np.random.default_rng(4)
    pilot = np.sort(rng.choice(60, 10, replace=False))
    known = (pilot, y[pilot])
    z = design.zones(*known, 20)
    totals, variances = [], []
    for _ in range(4000):
        cols = draw_zones(z, rng)
        est = round_estimate(z, known, cols, y[cols], predict, cross_fit=True)
        totals.append(est.total)
        variances.append(est.var)
    totals = np.asarray(totals)
    se = totals.std() / np.sqrt(len(totals))
    assert abs(totals.mean() - y.sum()) < 4 * se
    # Collapsed pairs of zones err on the side of too wide.
    assert np.mean(variances) >= 0.9 * totals.var()


def test_a_round_that_is_not_the_design_s_draw_is_refused():
    order, y = _population(30)
    design = RoundsDesign(order, _predict(30), lambda c, o: None)
    pilot = np.array([0, 10, 20, 29])
    first = (pilot, y[pilot])
    z = design.zones(*first, 8)
    two_in_one_zone = np.flatnonzero(z.label == 0)[:2]
    bad = np.sort(np.concatenate([z.rest[two_in_one_zone], z.certain]))
    with pytest.raises(InputError, match="not the ones its design draws"):
        round_estimate(z, first, bad, y[bad], _predict(30))
    with pytest.raises(InputError, match="repeats an item"):
        design.estimate_rounds([first, (pilot[:1], y[:1])])


def test_the_registered_method_plays_its_rounds_and_covers_the_truth():
    rng = np.random.default_rng(5)
    theta = rng.normal(0, 1, 41)
    b = np.sort(rng.normal(0, 1.2, 300))
    A = (rng.random((41, 300)) < 1 / (1 + np.exp(-(theta[:, None] - b)))).astype(np.uint8)
    method = get_method("active").fit(A[1:])
    assert method.rounds(300, 100) == [25, 75]
    rounds, est = play_rounds(method, 300, 100, rng, lambda c: A[0, c])
    assert [len(c) for c, _ in rounds] == [25, 75]
    assert not set(rounds[0][0]) & set(rounds[1][0])
    assert est.lo <= est.acc <= est.hi and est.hi - est.lo < 0.3
    assert np.array_equal(est.per_sample[rounds[1][0]], rounds[1][1])
    # One round (results not read in between): mirt's stratified design and estimate.
    cols = method.select(300, 40, np.random.default_rng(6))
    mirt = get_method("mirt").fit(A[1:], method.order_)
    assert method.estimate(cols, A[0, cols]).acc == pytest.approx(
        mirt.estimate(cols, A[0, cols]).acc
    )
    # Every item evaluated: exact.
    everything = [(np.arange(150), A[0, :150]), (np.arange(150, 300), A[0, 150:])]
    exact = method.estimate_rounds(everything)
    assert exact.acc == exact.lo == exact.hi == pytest.approx(A[0].mean())
