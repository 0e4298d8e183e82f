"""Behaviour of the model-based estimators (mirt, irt, neighbours) on small cases."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.methods import Estimate, get_method
from lifelong_core.methods.irt import MIRTEstimator
from lifelong_core.methods.neighbours import NeighboursEstimator

# The model-based estimators, by their registry names.
ESTIMATORS = {name: partial(get_method, name) for name in ("mirt", "irt", "neighbours")}

NAMES = sorted(ESTIMATORS)


def two_family_cache(m_per: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two model families, each with its own easy -> hard order over the same samples.

    Family 0 finds samples easy in index order, family 1 in a fixed shuffled order; each
    model answers along its family's order with its own ability and logistic noise. The
    orders depend only on ``n``, so caches drawn with different seeds share the families.
    """
    orders = [np.arange(n), np.random.default_rng(n).permutation(n)]
    rng = np.random.default_rng(seed)
    rows, fam = [], []
    for f, order in enumerate(orders):
        easiness = np.empty(n)
        easiness[order] = np.linspace(2.5, -2.5, n)
        for _ in range(m_per):
            p = expit(3.0 * (easiness + rng.normal(0, 1.0)))
            row = (rng.random(n) < p).astype(np.uint8)
            rows.append(row)
            fam.append(f)
    return np.array(rows), np.array(fam)


def sum_order(A: np.ndarray) -> np.ndarray:
    return np.argsort(-A.sum(axis=0), kind="stable")


def test_registry_names_and_protocol():
    assert {"mirt", "irt", "neighbours"} <= set(ESTIMATORS)
    A, _ = two_family_cache(10, 60, 0)
    for name in NAMES:
        method = ESTIMATORS[name]()
        assert isinstance(method.name, str)
        assert method.fit(A, sum_order(A)) is method
        pos = method.select(60, 12, np.random.default_rng(0))
        assert pos.dtype == np.int64 and len(pos) == 12 and np.all(np.diff(pos) > 0)
        est = method.estimate(pos, A[0, pos])
        assert isinstance(est, Estimate)
        assert est.per_sample.dtype == np.uint8 and est.per_sample.shape == (60,)
        assert 0.0 <= est.lo <= est.acc <= est.hi <= 1.0
        assert np.all((est.prob >= 0) & (est.prob <= 1))
        assert np.array_equal(est.per_sample[pos], A[0, pos])


@pytest.mark.parametrize("name", NAMES)
def test_full_budget_recovers_the_model_exactly(name):
    A, _ = two_family_cache(8, 50, 1)
    new = two_family_cache(1, 50, 99)[0][1]
    method = ESTIMATORS[name]().fit(A, sum_order(A))
    pos = method.select(50, 50, np.random.default_rng(0))
    est = method.estimate(pos, new[pos])
    assert np.array_equal(est.per_sample, new)
    assert est.acc == pytest.approx(new.mean())
    assert est.lo == pytest.approx(est.acc) and est.hi == pytest.approx(est.acc)


def test_neighbours_forced_answer_copies_the_matching_family():
    # Cache: five copies of pattern P and five of its complement. The new model is P:
    # after 8 evaluations every weight sits on P's copies, each with flip rate
    # (0 + 1) / (8 + 2) = 0.1, so P(correct) is 0.9 on P's ones and 0.1 elsewhere.
    P = np.array([1, 0] * 10 + [1] * 10 + [0] * 10, dtype=np.uint8)
    A = np.vstack([np.tile(P, (5, 1)), np.tile(1 - P, (5, 1))])
    method = NeighboursEstimator().fit(A, sum_order(A))
    pos = method.select(40, 8, np.random.default_rng(3))
    est = method.estimate(pos, P[pos])
    assert np.array_equal(est.per_sample, P)
    unevaluated = np.setdiff1d(np.arange(40), pos)
    assert np.allclose(est.prob[unevaluated], np.where(P[unevaluated] == 1, 0.9, 0.1), atol=1e-5)


def test_neighbours_leave_one_out_matches_brute_force():
    A, _ = two_family_cache(7, 80, 12)
    new = two_family_cache(1, 80, 13)[0][1]
    pos = np.sort(np.random.default_rng(0).choice(80, 15, replace=False))
    obs = new[pos]
    match = A[:, pos] == obs
    fast = NeighboursEstimator._leave_one_out(match, match.sum(axis=1), obs)
    brute = []
    for j in range(len(pos)):
        keep = np.arange(len(pos)) != j
        d = (~match[:, keep]).sum(axis=1)
        eps = (d + 1.0) / (len(pos) - 1 + 2.0)
        ll = (len(pos) - 1 - d) * np.log(1 - eps) + d * np.log(eps)
        w = np.exp(ll - ll.max())
        w /= w.sum()
        p = (w * np.where(A[:, pos[j]] == 1, 1 - eps, eps)).sum()
        brute.append(obs[j] - p)
    assert np.allclose(fast, brute, atol=1e-12)


def test_mirt_forced_answer_when_every_cache_model_agrees():
    row = np.array([1, 1, 0, 1, 0, 0, 1, 0, 1, 1] * 4, dtype=np.uint8)
    A = np.tile(row, (12, 1))
    method = MIRTEstimator(k=3).fit(A, sum_order(A))
    pos = method.select(40, 6, np.random.default_rng(0))
    est = method.estimate(pos, row[pos])
    assert np.array_equal(est.per_sample, row)


def test_mirt_beats_the_best_single_order_threshold():
    # The floor of any one-order threshold rule (S&S with every sample evaluated, §4.5's
    # aleatoric error) against MIRT from 64 of 400 evaluations, on models of both families.
    A, _fam = two_family_cache(30, 400, 4)
    held, _ = two_family_cache(6, 400, 5)
    order = sum_order(A)
    method = MIRTEstimator(k=2).fit(A, order)
    rng = np.random.default_rng(0)
    mirt_err, floor = [], []
    for a in held:
        pos = method.select(400, 64, rng)
        mirt_err.append(np.mean(method.estimate(pos, a[pos]).per_sample != a))
        s = 2.0 * a[order] - 1.0
        floor.append(
            np.mean(a[order] != (np.arange(400) < np.argmax(np.concatenate([[0], np.cumsum(s)]))))
        )
    assert np.mean(mirt_err) < 0.8 * np.mean(floor)


@pytest.mark.parametrize("name", NAMES)
def test_interval_narrows_as_the_budget_grows(name):
    A, _ = two_family_cache(20, 1000, 6)
    held, _ = two_family_cache(4, 1000, 7)
    method = ESTIMATORS[name]().fit(A, sum_order(A))
    rng = np.random.default_rng(1)
    widths = []
    for budget in (16, 64, 256):
        w = []
        for a in held:
            for _ in range(3):
                pos = method.select(1000, budget, rng)
                est = method.estimate(pos, a[pos])
                w.append(est.hi - est.lo)
        widths.append(np.mean(w))
    assert widths[0] > widths[1] > widths[2] > 0


@pytest.mark.parametrize("name", NAMES)
def test_intervals_cover_the_truth_about_95_percent_of_the_time(name):
    A, _ = two_family_cache(30, 600, 8)
    held, _ = two_family_cache(20, 600, 9)
    method = ESTIMATORS[name]().fit(A, sum_order(A))
    rng = np.random.default_rng(2)
    hits = []
    for a in held:
        for _ in range(6):
            pos = method.select(600, 64, rng)
            est = method.estimate(pos, a[pos])
            hits.append(est.lo <= a.mean() <= est.hi)
    assert 0.88 <= np.mean(hits) <= 0.99


def test_intervals_work_on_positions_chosen_elsewhere():
    # S&S's uniform grid (not our design) is post-stratified; the estimate stays sane.
    A, _ = two_family_cache(10, 200, 10)
    method = MIRTEstimator().fit(A, sum_order(A))
    order = sum_order(A)
    pos = np.sort(order[np.arange(0, 200, 10)])
    est = method.estimate(pos, A[3, pos])
    assert est.lo < est.hi and abs(est.acc - A[3].mean()) < 0.2


@pytest.mark.parametrize(
    "kwargs", [dict(k=0), dict(k=2.5), dict(iters=0), dict(item_ridge=0.0), dict(level=1.0)]
)
def test_bad_settings_are_input_errors(kwargs):
    method = MIRTEstimator(**kwargs)  # stored as given; checked when fitted
    A, _ = two_family_cache(5, 30, 11)
    with pytest.raises(InputError):
        method.fit(A)
    with pytest.raises(InputError):
        get_method("mirt", **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_bad_inputs_are_input_errors(name):
    A, _ = two_family_cache(5, 30, 11)
    order = sum_order(A)
    with pytest.raises(InputError, match="0/1"):
        ESTIMATORS[name]().fit(A * 2, order)
    with pytest.raises(InputError, match="permutation"):
        ESTIMATORS[name]().fit(A, order[:-1])
    with pytest.raises(InputError, match="at least 2 models"):
        ESTIMATORS[name]().fit(A[:1], order)
    method = ESTIMATORS[name]().fit(A, order)
    with pytest.raises(InputError, match="budget"):
        method.select(30, 31, np.random.default_rng(0))
    with pytest.raises(InputError, match="fitted on 30"):
        method.select(40, 4, np.random.default_rng(0))
    with pytest.raises(InputError, match="distinct"):
        method.estimate(np.array([1, 1, 2]), np.array([0, 1, 1]))
    with pytest.raises(InputError, match="distinct and in"):
        method.estimate(np.array([1, 30]), np.array([0, 1]))
    with pytest.raises(InputError, match="0/1"):
        method.estimate(np.array([1, 2]), np.array([0, 2]))
    with pytest.raises(InputError, match="same length"):
        method.estimate(np.array([1, 2]), np.array([0]))


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(2, 8),
    n=st.integers(2, 60),
    frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**31),
    name=st.sampled_from(NAMES),
)
def test_estimate_invariants_on_any_cache(m, n, frac, seed, name):
    rng = np.random.default_rng(seed)
    A = (rng.random((m, n)) < rng.random()).astype(np.uint8)
    new = (rng.random(n) < rng.random()).astype(np.uint8)
    budget = max(1, round(frac * n))
    method = ESTIMATORS[name]().fit(A, sum_order(A))
    pos = method.select(n, budget, rng)
    est = method.estimate(pos, new[pos])
    assert len(pos) == budget and 0.0 <= est.acc <= 1.0
    assert np.array_equal(est.per_sample[pos], new[pos])
    if budget >= 2:
        assert 0.0 <= est.lo <= est.acc <= est.hi <= 1.0
    if budget == n:
        assert est.acc == pytest.approx(new.mean()) and np.array_equal(est.per_sample, new)


def test_map_ability_solves_the_one_dimensional_score_equation():
    # Five samples with w = 1, d = 0 and a N(0, 1) prior: the MAP theta after three correct
    # answers solves 3 - 3 sigmoid(theta) - theta = 0, and the hat-matrix trace is F / (F + 1)
    # with Fisher information F = 3 sigmoid(theta) (1 - sigmoid(theta)).
    from scipy.optimize import brentq

    from lifelong_core.methods.irt import ItemModel, map_ability

    item = ItemModel(
        d=np.zeros(5),
        w=np.ones((5, 1)),
        prior_mean=np.zeros(1),
        prior_prec=np.eye(1),
        theta=np.zeros((2, 1)),
    )
    theta, df = map_ability(item, np.array([0, 2, 4]), np.array([1, 1, 1]))
    want = brentq(lambda t: 3 - 3 * expit(t) - t, 0, 3)
    fisher = 3 * expit(want) * (1 - expit(want))
    assert theta[0] == pytest.approx(want, abs=1e-8)
    assert df == pytest.approx(fisher / (fisher + 1), abs=1e-8)
    # Balanced results leave the prior mean untouched.
    theta, _ = map_ability(item, np.array([0, 1, 2, 3]), np.array([1, 0, 1, 0]))
    assert theta[0] == pytest.approx(0.0, abs=1e-12)
