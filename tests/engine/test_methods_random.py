"""The random-sampling baseline (``random``) and the per-model item draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import hypergeom, norm

from lifelong_core.errors import InputError
from lifelong_core.methods import available_methods, capabilities, describe_methods, get_method
from lifelong_core.methods.draws import COMMON, PER_MODEL, model_rng, model_seed
from lifelong_core.methods.random_sample import hypergeometric_limits
from lifelong_core.methods.registry import BASELINE_METHOD, predicts_samples
from lifelong_core.sweeping import run_sweep


def brute_limits(a: int, k: int, n: int, level: float = 0.95) -> tuple[int, int]:
    """The exact limits by trying every population count (the definition, no bisection)."""
    half = (1 - level) / 2
    counts = np.arange(n + 1)
    possible = (counts >= a) & (n - counts >= k - a)
    upper_tail = hypergeom.sf(a - 1, n, counts, k)  # P(X >= a)
    lower_tail = hypergeom.cdf(a, n, counts, k)  # P(X <= a)
    lo = counts[possible & (upper_tail > half)].min()
    hi = counts[possible & (lower_tail > half)].max()
    return int(lo), int(hi)


def test_registered_as_a_baseline_with_an_interval_and_no_sample_prediction():
    assert BASELINE_METHOD in available_methods()
    caps = capabilities(BASELINE_METHOD)
    assert caps.family == "baseline" and caps.interval and not caps.per_sample
    assert caps.cheap and caps.packed and not caps.threshold_rule
    assert not predicts_samples(BASELINE_METHOD) and predicts_samples("mirt")
    assert "random (95% interval)" in describe_methods()


@pytest.mark.parametrize(
    "a,k,n", [(0, 10, 50), (10, 10, 50), (3, 10, 50), (7, 20, 200), (1, 1, 9), (12, 40, 41)]
)
def test_exact_limits_invert_the_hypergeometric_tests(a, k, n):
    assert hypergeometric_limits(a, k, n) == brute_limits(a, k, n)


def test_exact_interval_covers_at_least_95_percent_for_every_population():
    """The exact limits cover the true accuracy in at least 95% of samples, whatever it is
    (checked by enumerating the hypergeometric distribution, not by simulation)."""
    n, k = 60, 12
    method = get_method(BASELINE_METHOD).fit(np.zeros((2, n), dtype=np.uint8))
    for correct in range(n + 1):
        xs = np.arange(max(0, k - (n - correct)), min(k, correct) + 1)
        p = hypergeom.pmf(xs, n, correct, k)
        covered = [lo <= correct / n <= hi for lo, hi in (method.interval_of(x, k) for x in xs)]
        assert p[covered].sum() >= 0.95 - 1e-9, correct


def test_normal_interval_is_cochrans_with_the_finite_population_correction():
    n = 400
    method = get_method(BASELINE_METHOD, interval="normal").fit(np.zeros((2, n), dtype=np.uint8))
    cols = np.arange(0, n, 4)  # 100 items
    obs = (np.arange(len(cols)) % 10 < 3).astype(np.uint8)  # p = 0.3
    est = method.estimate(cols, obs)
    p, k = 0.3, len(cols)
    half = norm.ppf(0.975) * np.sqrt((1 - k / n) * p * (1 - p) / (k - 1))
    assert est.acc == pytest.approx(p)
    assert (est.lo, est.hi) == pytest.approx((p - half, p + half))


def test_every_item_evaluated_gives_the_truth_with_no_width():
    rng = np.random.default_rng(0)
    row = (rng.random(80) < 0.4).astype(np.uint8)
    for interval in ("exact", "normal"):
        method = get_method(BASELINE_METHOD, interval=interval).fit(row[None, :])
        est = method.estimate(np.arange(80), row)
        assert est.acc == pytest.approx(row.mean()) and est.lo == est.hi == pytest.approx(est.acc)


def test_estimate_is_the_sample_mean_of_a_uniform_draw():
    A = (np.random.default_rng(1).random((5, 300)) < 0.5).astype(np.uint8)
    method = get_method(BASELINE_METHOD).fit(A)
    cols = method.select(300, 40, np.random.default_rng(2))
    assert len(np.unique(cols)) == 40 and np.array_equal(cols, np.sort(cols))
    est = method.estimate(cols, A[0, cols])
    assert est.acc == pytest.approx(A[0, cols].mean())
    # The row the contract asks for: observed where evaluated, the sample mean's constant elsewhere.
    assert np.array_equal(est.per_sample[cols], A[0, cols])
    assert np.allclose(np.delete(est.prob, cols), est.acc)


def test_settings_and_generator_are_checked():
    with pytest.raises(InputError, match="unknown interval"):
        get_method(BASELINE_METHOD, interval="wald")
    with pytest.raises(InputError, match="level"):
        get_method(BASELINE_METHOD, level=1.5)
    method = get_method(BASELINE_METHOD).fit(np.zeros((2, 10), dtype=np.uint8))
    with pytest.raises(InputError, match="random generator"):
        method.select(10, 3, None)
    # A large store passes its kept order, not the cache.
    assert get_method(BASELINE_METHOD).fit(None, np.arange(7)).n_ == 7


def test_sweep_leaves_sample_level_scores_undefined_and_scores_the_accuracy():
    rng = np.random.default_rng(3)
    A = (rng.random((40, 200)) < rng.random((40, 1))).astype(np.uint8)
    res = run_sweep(A[:10], A[10:], [8, 64, 200], search=BASELINE_METHOD, seed=0)
    per, table = res.per_model, res.table
    assert per["mae"].isna().all() and per["kappa"].isna().all()
    assert table["mae"].isna().all() and table["kappa"].isna().all()
    assert per["eagg"].notna().all()
    full = per[per["budget"] == 200]
    assert np.allclose(full["est_acc"], full["true_acc"]) and np.allclose(full["eagg"], 0)
    assert (per["est_lo"] <= per["est_acc"]).all() and (per["est_acc"] <= per["est_hi"]).all()


def test_cli_sweep_runs_the_baseline(tmp_path, capsys):
    from lifelong_core.cli import main

    A = (np.random.default_rng(4).random((30, 120)) < 0.6).astype(np.uint8)
    np.save(tmp_path / "a.npy", A)
    out = tmp_path / "t.csv"
    argv = ["sweep", "--matrix", str(tmp_path / "a.npy"), "--sort-models", "10"]
    assert main([*argv, "--method", BASELINE_METHOD, "--budgets", "8,32", "--out", str(out)]) == 0
    assert out.exists()


def test_model_draws_are_stable_and_independent_of_the_company_they_keep():
    # BLAKE2b of the name and seed: the same on every platform and in every run.
    assert model_seed("org/model-7b", 0) == 8384297619582879669
    a = model_rng("org/a", 5).choice(1000, 20, replace=False)
    assert np.array_equal(a, model_rng("org/a", 5).choice(1000, 20, replace=False))
    b = model_rng("org/b", 5).choice(1000, 20, replace=False)
    assert not np.array_equal(a, b)
    common = [model_rng(name, 5, COMMON).choice(1000, 20, replace=False) for name in "ab"]
    assert np.array_equal(*common)
    assert np.array_equal(common[0], np.random.default_rng(5).choice(1000, 20, replace=False))
    with pytest.raises(InputError, match="unknown item draw"):
        model_rng("a", 0, "shared")
    with pytest.raises(InputError, match="whole number"):
        model_rng("a", -1, PER_MODEL)


def brute_expected_error(correct: int, n: int, k: int) -> float:
    """E|X/k - correct/n| summed over the hypergeometric support (the definition)."""
    xs = np.arange(k + 1)
    return float((hypergeom.pmf(xs, n, correct, k) * np.abs(xs / k - correct / n)).sum())


@pytest.mark.parametrize("n", [1, 2, 9, 60, 894])
def test_expected_error_is_the_sum_over_the_hypergeometric(n):
    from lifelong_core.methods.random_sample import expected_abs_error

    counts = np.unique(np.r_[0, n, np.random.default_rng(n).integers(0, n + 1, 12)])
    for k in sorted({b for b in (1, 2, max(1, n // 3), n - 1 or 1, n) if b <= n}):
        got = expected_abs_error(counts, n, k)
        want = [brute_expected_error(int(a), n, k) for a in counts]
        assert got == pytest.approx(want, abs=1e-12), (n, k)
    # Every item drawn: the random sample is exact.
    assert not expected_abs_error(counts, n, n).any()


def test_expected_error_falls_with_the_sample_and_matches_a_simulation():
    from lifelong_core.methods.random_sample import expected_abs_error

    n, correct = 300, np.array([12, 150, 281])
    curve = np.array([expected_abs_error(correct, n, k).mean() for k in range(1, n + 1)])
    assert np.all(np.diff(curve) <= 1e-12) and curve[-1] == 0
    rng = np.random.default_rng(0)
    row = np.zeros(n, dtype=np.uint8)
    row[:150] = 1
    sims = [abs(row[rng.choice(n, 40, replace=False)].mean() - 0.5) for _ in range(20000)]
    assert expected_abs_error([150], n, 40)[0] == pytest.approx(np.mean(sims), rel=0.02)


def test_equivalent_random_budget_inverts_the_expected_error():
    from lifelong_core.methods.random_sample import equivalent_random_budget, expected_abs_error

    n, correct = 120, [10, 60, 100]
    mean = [expected_abs_error(correct, n, k).mean() for k in range(1, n + 1)]
    for target in (0.2, mean[9], mean[9] + 1e-9, 0.01, 0.0):
        want = 1 + next(i for i, e in enumerate(mean) if e <= target)
        assert equivalent_random_budget(target, correct, n) == want
    assert equivalent_random_budget(1.0, correct, n) == 1


@pytest.mark.parametrize(
    "args,words",
    [
        (([3], 10, 0), "budget 0"),
        (([3], 10, 11), "budget 11"),
        (([11], 10, 3), "correct-item counts must be whole numbers in \\[0, 10\\]"),
        (([], 10, 3), "at least one model"),
        (([0.5], 10, 3), "whole numbers"),
    ],
)
def test_expected_error_refuses_bad_input_in_one_sentence(args, words):
    from lifelong_core.methods.random_sample import expected_abs_error

    with pytest.raises(InputError, match=words):
        expected_abs_error(*args)


def test_the_errors_at_many_sample_sizes_are_the_errors_at_each():
    from lifelong_core.methods.random_sample import expected_abs_error, expected_abs_errors

    correct = [0, 1, 7, 50, 99, 100]
    sizes = [1, 2, 13, 50, 99, 100]
    many = expected_abs_errors(correct, 100, sizes)
    assert many.shape == (len(sizes), len(correct))
    for row, b in zip(many, sizes):
        np.testing.assert_array_equal(row, expected_abs_error(correct, 100, b))
    with pytest.raises(InputError):
        expected_abs_errors(correct, 100, [0, 5])
