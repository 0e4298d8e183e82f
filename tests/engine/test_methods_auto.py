"""``auto``, the product's one default estimator: what it chooses on a cache, and that the
choice keeps the interval honest and reaches every front end.

The measured claims (13-model leave-one-out caches of both demo datasets; the leaderboard's
random and extrapolation splits) are in benchmarks/bench_small_cache.py and
benchmarks/bench_llm_splits.py; the tests here are small, deterministic versions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.datasets.synthetic import SyntheticSpec, generate
from lifelong_core.errors import InputError
from lifelong_core.methods import get_method
from lifelong_core.methods.auto import (
    DEFAULT_K,
    DEFAULT_RIDGE,
    MARGIN,
    AutoEstimator,
    AutoTuning,
    Choice,
    _Draws,
    _keep_or_move,
    tune_auto,
)
from lifelong_core.methods.registry import (
    DEFAULT_METHOD,
    capabilities,
    describe_methods,
    kept_method,
)
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.sweeping import run_sweep


def order_of(A):
    return order_from_sums(A.sum(axis=0))


# ------------------------------------------------------------------ one default, declared truthfully
def test_auto_is_the_one_default_and_declares_what_it_does():
    assert DEFAULT_METHOD == "auto"
    caps = capabilities(DEFAULT_METHOD)
    assert caps.self_tuning and caps.interval and caps.per_sample
    assert caps.kept_state and caps.packed and not caps.threshold_rule and not caps.cheap
    assert kept_method() == DEFAULT_METHOD
    assert describe_methods().startswith("default auto;")
    assert "auto (95% interval)" in describe_methods()


def test_every_front_end_starts_from_the_default():
    from lifelong_core.cli import build_parser
    from lifelong_core.workflows import item_choice, new_model

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    assert sub["sweep"].get_default("method") == DEFAULT_METHOD
    assert sub["select"].get_default("method") == DEFAULT_METHOD
    assert sub["estimate"].get_default("method") == DEFAULT_METHOD
    assert item_choice.fit.__defaults__[0] == DEFAULT_METHOD
    assert item_choice.select_items.__defaults__[0] == DEFAULT_METHOD
    assert new_model.estimate_new_model.__defaults__[0] == DEFAULT_METHOD


# ------------------------------------------------------------------ what it chooses
def test_where_the_threshold_predicts_samples_the_sample_is_evenly_spaced():
    """Sort & Search places a threshold best from evenly spaced samples: where auto predicts
    with the threshold it samples one position per stratum at a common random offset."""
    A = generate(SyntheticSpec(13, 1500, seed=4, discrimination=0.8, label_noise=0.1))
    est = get_method(DEFAULT_METHOD).fit(A[1:], order_of(A[1:]))
    assert est.tuning_.choice_at(64).predict == "threshold"
    cols = est.select(1500, 64, np.random.default_rng(0))
    pos = np.sort(est.rank_[cols])
    assert len(pos) == 64 and set(np.diff(pos)) <= {23, 24, 25}  # 1500 / 64 = 23.4
    assert est.select(1500, 64, np.random.default_rng(1)).tolist() != cols.tolist()


@pytest.mark.slow
def test_on_a_small_noisy_cache_it_is_no_worse_than_sort_and_search_or_copy_nearest():
    """A 13-model synthetic cache (one latent ability, noisy answers: where a ten-direction
    item model overfits a dozen models), each model held out in turn: the default's
    sample-level MAE is no worse than the better of the baselines at 64 evaluations."""
    A = generate(SyntheticSpec(13, 1500, seed=4, discrimination=0.8, label_noise=0.1))
    mae = {}
    for name in ("reference", "midpoint", "copy-nearest", "mirt", DEFAULT_METHOD):
        runs = [
            run_sweep(np.delete(A, i, axis=0), A[i : i + 1], [64], search=name, seed=i)
            for i in range(13)
        ]
        mae[name] = float(np.mean([r.table["mae"].item() for r in runs]))
    best = min(mae["reference"], mae["midpoint"], mae["copy-nearest"])
    assert mae[DEFAULT_METHOD] <= best, mae
    assert mae[DEFAULT_METHOD] < mae["mirt"], mae  # mirt's fixed k = 10 overfits a dozen models


def _draws(n_models: int) -> _Draws:
    d = _Draws([], [], [], [], [], [])
    for i in range(n_models):
        d.fold.append(0)
        d.row.append(i)
    return d


def test_mirt_settings_move_only_for_a_clear_gain():
    inc, other = (DEFAULT_K, DEFAULT_RIDGE), (4, 32.0)
    rng = np.random.default_rng(0)
    base = 0.2 + 0.01 * rng.standard_normal(200)
    draws = _draws(200)

    def scores(gain):
        return {
            inc: np.c_[base, base],
            other: np.c_[base - gain + 0.001 * rng.standard_normal(200), base],
        }

    # Better by half the margin: kept. By twice the margin (and many standard errors): moved.
    assert _keep_or_move(scores(0.5 * MARGIN * 0.2), inc, draws) == inc
    assert _keep_or_move(scores(2 * MARGIN * 0.2), inc, draws) == other
    # A large but noisy gain (within one standard error): kept.
    noisy = {
        inc: np.c_[base, base],
        other: np.c_[base - 0.01 + 0.5 * rng.standard_normal(200), base],
    }
    assert _keep_or_move(noisy, inc, draws) == inc


def test_tiny_caches_fall_back_to_the_threshold():
    A = np.array([[1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1]], dtype=np.uint8)
    est = get_method("auto").fit(A[:1], order_of(A[:1]))
    assert all(c.predict == c.estimate == "threshold" for c in est.tuning_.choices)
    e = est.estimate(np.array([0, 3]), A[1, [0, 3]])
    assert e.per_sample.shape == (6,) and e.per_sample[0] == 1 and e.per_sample[3] == 0
    tuning = tune_auto(A)
    assert not tuning.table and tuning.choices[0].predict == "threshold"


def test_candidates_are_checked():
    with pytest.raises(InputError, match="must include 'threshold'"):
        tune_auto(np.zeros((5, 20), dtype=np.uint8), candidates=("mirt",))


# ------------------------------------------------------------------ estimates and intervals
@pytest.mark.parametrize(
    "predict,estimate",
    [
        ("mirt", "mirt"),
        ("threshold", "threshold"),
        ("copy-nearest", "copy-nearest"),
        ("copy-nearest", "mirt"),
    ],
)
def test_each_choice_gives_a_valid_estimate(predict, estimate):
    A = generate(SyntheticSpec(30, 800, seed=7))
    cache, new = A[1:], A[0]
    tuning = AutoTuning(4, 8.0, (Choice(64, predict, estimate),))
    est = AutoEstimator(tuning=tuning).fit(cache, order_of(cache))
    cols = est.select(800, 64, np.random.default_rng(3))
    e = est.estimate(cols, new[cols])
    assert e.lo <= e.acc <= e.hi and e.hi - e.lo > 0
    assert np.array_equal(e.per_sample[cols], new[cols])
    if predict == "copy-nearest":
        dist = (cache[:, cols] != new[cols]).sum(axis=1)
        near = cache[int(np.argmin(dist))].copy()
        near[cols] = new[cols]
        assert np.array_equal(e.per_sample, near)
    if predict == estimate == "threshold":  # the threshold vector's own mean, corrected
        assert set(np.unique(e.prob)) <= {0.0, 1.0}


@pytest.mark.parametrize(
    "predict,estimate", [("mirt", "mirt"), ("threshold", "mirt"), ("copy-nearest", "threshold")]
)
def test_many_rows_at_once_equal_one_row_at_a_time(predict, estimate):
    """estimate_many (one batched ability fit per budget) gives each row the estimate
    estimate() gives it alone, at mixed budgets and in any order of the rows."""
    A = generate(SyntheticSpec(40, 700, seed=5, n_clusters=2))
    cache, new = A[:25], A[25:]
    tuning = AutoTuning(4, 8.0, (Choice(1, predict, estimate),))
    est = AutoEstimator(tuning=tuning).fit(cache, order_of(cache))
    rng = np.random.default_rng(8)
    designs = []
    for i, row in enumerate(new):
        cols = est.select(700, (16, 64, 16, 200)[i % 4], rng)
        designs.append((cols, row[cols]))
    many = est.estimate_many(designs)
    assert len(many) == len(designs)
    for (cols, obs), got in zip(designs, many):
        want = est.estimate(cols, obs)
        for field in ("acc", "lo", "hi"):
            assert getattr(got, field) == pytest.approx(getattr(want, field), abs=1e-12)
        np.testing.assert_allclose(got.prob, want.prob, rtol=0, atol=1e-12)
        assert np.array_equal(got.per_sample, want.per_sample)


def test_many_rows_are_checked_like_one():
    A = generate(SyntheticSpec(20, 300, seed=2))
    est = get_method(DEFAULT_METHOD).fit(A[1:], order_of(A[1:]))
    cols = est.select(300, 20, np.random.default_rng(0))
    with pytest.raises(InputError):
        est.estimate_many([(cols, A[0][cols]), (cols, np.full(20, 2))])


def test_the_default_many_is_one_estimate_per_row():
    from lifelong_core.methods.random_sample import RandomSample

    A = generate(SyntheticSpec(10, 500, seed=4))
    est = RandomSample().fit(A)
    rng = np.random.default_rng(1)
    designs = [(c, A[0][c]) for c in (est.select(500, b, rng) for b in (10, 50))]
    got = est.estimate_many(designs)
    want = [est.estimate(c, o) for c, o in designs]
    assert [(e.acc, e.lo, e.hi) for e in got] == [(e.acc, e.lo, e.hi) for e in want]


@pytest.mark.slow
def test_intervals_cover_held_out_models():
    """30 cached models, 20 held out, 10 fresh draws each at two budgets: the 95%
    intervals cover the true accuracy about 95% of the time (at least 90% here)."""
    A = generate(SyntheticSpec(50, 2000, seed=11, n_clusters=2, cluster_spread=0.7))
    cache = A[:30]
    est = get_method(DEFAULT_METHOD).fit(cache, order_of(cache))
    rng = np.random.default_rng(0)
    hits = []
    for row in A[30:]:
        for b in (50, 200):
            for _ in range(10):
                cols = est.select(2000, b, rng)
                e = est.estimate(cols, row[cols])
                hits.append(e.lo <= row.mean() <= e.hi)
    assert np.mean(hits) >= 0.9, np.mean(hits)


# ------------------------------------------------------------------ kept in the store
def test_choices_round_trip_through_the_store(tmp_path):
    from lifelong_core.datasets.synthetic import write_store
    from lifelong_core.store import Store
    from lifelong_core.workflows import lifelong_state

    path = tmp_path / "s.duckdb"
    write_store(SyntheticSpec(40, 600, seed=2), path)
    with Store.open(path, read_only=False) as st:
        ds = st.datasets()["dataset"].item()
        _, item = lifelong_state.refresh(st, ds)
        assert item.method == DEFAULT_METHOD and "auto_choices" in item.params
    with Store.open(path, read_only=True) as st:
        est, stat = lifelong_state.fitted(st, ds)
    assert isinstance(est, AutoEstimator) and stat.items_usable
    saved = AutoTuning.from_params(item.params)
    assert est.tuning_.choices == saved.choices and est.tuning_.k == saved.k
    cols = est.select(600, 32, np.random.default_rng(0))
    e = est.estimate(cols, np.ones(32, dtype=np.uint8))
    assert e.lo <= e.acc <= e.hi


def test_a_kept_choice_cannot_use_copy_nearest():
    from lifelong_core.methods.irt import fit_item_model

    A = generate(SyntheticSpec(20, 200, seed=1))
    item = fit_item_model(A, k=2, iters=3)
    bad = AutoTuning(2, 8.0, (Choice(16, "copy-nearest", "mirt"),)).to_params()
    with pytest.raises(InputError, match="copy-nearest"):
        AutoEstimator().with_items(item, order_of(A), params=bad)


def test_fit_from_packed_rows_leaves_copy_nearest_out():
    from lifelong_core.bits import pack_rows

    A = generate(SyntheticSpec(25, 400, seed=3))
    est = AutoEstimator().fit_packed(pack_rows(A), 400, order_of(A))
    assert not est.tuning_.uses("copy-nearest")
    assert est.kept_params()["auto_choices"]
    table = pd.DataFrame(est.tuning_.table)
    assert "copy-nearest" not in set(table["candidate"])


def test_ones_among_the_first_bits_of_packed_rows():
    from lifelong_core.bits import pack_rows
    from lifelong_core.methods.auto import _ones_in_first

    rng = np.random.default_rng(2)
    for width in (1, 7, 8, 9, 64, 203):
        dense = (rng.random((6, width)) < 0.5).astype(np.uint8)
        q = np.array([0, width, width // 2, 1, max(width - 1, 0), min(8, width)])
        want = [int(dense[r, : q[r]].sum()) for r in range(6)]
        assert _ones_in_first(pack_rows(dense), q).tolist() == want
