"""Sort, Search, metrics, fits: hand-checked cases and properties (Prabhu et al., 2024, Prabhu et al. (2024, *Lifelong Benchmarks*))."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.sortsearch import (
    decompose,
    dp_search,
    eagg,
    fit_exponential,
    fit_power_law,
    kappa,
    mae,
    model_correlation,
    random_positions,
    rule_thresholds,
    sort_by_confidence,
    sort_by_sum,
    sort_models,
    sort_recursive,
    theorem21_vector,
    uniform_positions,
)
from lifelong_core.sortsearch.sort import best_prefix_counts, choose_sort_rows, order_from_sums

binary_rows = st.lists(st.integers(0, 1), min_size=1, max_size=60)


def brute_best(y: np.ndarray) -> tuple[int, int]:
    """Smallest prefix length with the fewest errors, by trying every length."""
    n = len(y)
    errs = [int((y[:t] == 0).sum() + (y[t:] == 1).sum()) for t in range(n + 1)]
    best = min(errs)
    return errs.index(best), best


# --- Theorem 2.1 ---------------------------------------------------------------------


def test_theorem21_paper_example():
    a = np.array([0, 0, 0, 1, 1])
    y = theorem21_vector(a)
    assert eagg(a, y) == 0.0
    assert mae(a, y) == pytest.approx(0.8)
    # The vector printed in §2.1 has one one too many: E_agg 0.2, every sample wrong.
    printed = np.array([1, 1, 1, 0, 0])
    assert eagg(a, printed) == pytest.approx(0.2)
    assert mae(a, printed) == pytest.approx(1.0)


@settings(deadline=None)
@given(binary_rows)
def test_theorem21_bound_holds(a):
    a = np.array(a)
    y = theorem21_vector(a)
    p = a.mean()
    assert eagg(a, y) == 0.0
    assert mae(a, y) == pytest.approx(2 * min(p, 1 - p))


# --- metrics ---------------------------------------------------------------------------


def test_kappa_hand_checked():
    a = np.array([1, 1, 1, 0])
    y = np.array([1, 1, 0, 0])
    # p_o = 3/4, p_e = 3/4 * 1/2 + 1/4 * 1/2 = 1/2 -> kappa = (3/4 - 1/2) / (1/2) = 1/2
    assert kappa(a, y) == pytest.approx(0.5)
    assert kappa(a, a) == pytest.approx(1.0)
    assert kappa(np.ones(4), np.ones(4)) == 1.0
    assert kappa(a, 1 - a) < 0


def test_metrics_reject_length_mismatch():
    with pytest.raises(InputError):
        mae([1, 0], [1])


# --- Sort ------------------------------------------------------------------------------


def test_sort_by_sum_easy_first_stable_ties():
    A = np.array([[1, 0, 1, 0, 1], [1, 0, 0, 0, 1], [0, 1, 0, 0, 1]])
    # sums: 2, 1, 1, 0, 3 -> 4, 0, then ties 1 and 2 in column order, then 3
    assert sort_by_sum(A).tolist() == [4, 0, 1, 2, 3]


@pytest.mark.parametrize(
    ("dtype", "low", "high"),
    [
        (np.int64, 0, 30),  # few distinct sums: the 16-bit radix sort
        (np.uint64, 0, 65535),  # the widest span that path takes
        (np.int64, -40000, 40000),  # wider, with negative keys: the general sort
        (np.int32, 5, 6),
    ],
)
def test_order_from_sums_is_the_stable_descending_order(dtype, low, high):
    rng = np.random.default_rng(11)
    sums = rng.integers(low, high, size=5000, endpoint=True).astype(dtype)
    # Definition: larger sum first, equal sums in ascending column order.
    expected = np.lexsort((np.arange(len(sums)), -sums.astype(np.float64)))
    got = order_from_sums(sums)
    assert got.dtype == np.int64
    assert np.array_equal(got, expected)
    assert order_from_sums(sums[:0]).tolist() == []


def test_sort_reference_ties_match_listing1():
    rng = np.random.default_rng(5)
    A = (rng.random((7, 300)) < 0.5).astype(np.uint8)
    assert np.array_equal(sort_by_sum(A, ties="reference"), np.flip(np.argsort(A.sum(axis=0))))


def test_sort_by_confidence_and_models():
    C = np.array([[0.9, 0.2, 0.5], [0.8, 0.1, 0.7]])
    assert sort_by_confidence(C).tolist() == [0, 2, 1]
    A = np.array([[1, 0, 0], [1, 1, 1], [1, 1, 0]])
    assert sort_models(A).tolist() == [1, 2, 0]


def test_sort_recursive_depth1_is_sum_and_it_is_a_permutation():
    rng = np.random.default_rng(1)
    A = (rng.random((12, 200)) < 0.6).astype(np.uint8)
    assert np.array_equal(sort_recursive(A, depth=1), sort_by_sum(A))
    for d in (2, 3):
        o = sort_recursive(A, depth=d)
        assert sorted(o.tolist()) == list(range(200))
        # Level 1 keys are respected: sums stay non-increasing along the order.
        assert (np.diff(A.sum(axis=0).astype(np.int64)[o]) <= 0).all()


def test_sort_recursive_breaks_a_tie_by_the_models_with_boundary_inside():
    A = np.array([[0, 1, 1, 0], [1, 0, 1, 1]])
    # Sums 1, 1, 2, 1 -> level 1: [2, 0, 1, 3]; sorted rows [1,0,1,0] (t = 1, on the tie
    # group's edge) and [1,1,0,1] (t = 2, strictly inside the group of columns 0, 1, 3).
    # Only model 1 re-orders the group: its values 1, 0, 1 -> columns 0, 3, 1.
    assert sort_by_sum(A).tolist() == [2, 0, 1, 3]
    assert sort_recursive(A, depth=2).tolist() == [2, 0, 3, 1]

    def total_error(order):
        t, c = best_prefix_counts(A[:, order].astype(np.uint8))
        return int(((t - c) + (A.sum(axis=1) - c)).sum())

    assert total_error(sort_by_sum(A)) == 2 and total_error(sort_recursive(A)) == 1


def test_choose_sort_rows_rule_and_errors():
    rows = choose_sort_rows(10, 4, seed=3)
    assert np.array_equal(rows, np.sort(np.random.default_rng(3).choice(10, 4, replace=False)))
    with pytest.raises(InputError):
        choose_sort_rows(10, 10, seed=0)


# --- Search ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,k,expected",
    [
        (10, 5, [1, 3, 5, 7, 9]),  # k * step == n: offset = step // 2
        (10, 3, [1, 4, 7]),  # offset = n - k * step = 1
        (10, 10, list(range(10))),
        (7, 1, [3]),
    ],
)
def test_uniform_positions_reference_rule(n, k, expected):
    assert uniform_positions(n, k).tolist() == expected


@settings(deadline=None)
@given(st.integers(1, 500), st.data())
def test_uniform_positions_exactly_k_sorted_in_range(n, data):
    k = data.draw(st.integers(1, n))
    p = uniform_positions(n, k)
    assert len(p) == k and p[0] >= 0 and p[-1] < n and (np.diff(p) > 0).all()


def test_random_positions_seeded_and_budget_checked():
    a = random_positions(100, 10, np.random.default_rng(0))
    b = random_positions(100, 10, np.random.default_rng(0))
    assert np.array_equal(a, b) and len(np.unique(a)) == 10
    for bad in (0, 101):
        with pytest.raises(InputError):
            uniform_positions(100, bad)


@settings(max_examples=150, deadline=None)
@given(binary_rows)
def test_dp_search_is_optimal_against_brute_force(y):
    y = np.array(y)
    t_brute, err_brute = brute_best(y)
    t = dp_search(y)
    assert t == t_brute
    assert int((y[:t] == 0).sum() + (y[t:] == 1).sum()) == err_brute
    t_vec, c_vec = best_prefix_counts(y[None, :].astype(np.uint8))
    assert t_vec[0] == t and c_vec[0] == y[:t].sum()


def test_dp_search_hand_checked():
    assert dp_search(np.array([0, 0, 1])) == 0  # empty prefix is best
    # running sums 1, 2, 1, 2, 1, 0: lengths 2 and 4 tie, the smaller wins
    assert dp_search(np.array([1, 1, 0, 1, 0, 0])) == 2


def test_reference_rule_hand_checked():
    p = np.array([1, 3, 5, 7, 9])
    obs = np.array([[1, 1, 0, 1, 0]])  # running sums 1, 2, 1, 2, 1 -> first max i* = 1
    assert rule_thresholds("reference", p, obs, 10).tolist() == [3]
    # the empty prefix is never chosen: all-zero observations still give p[0]
    assert rule_thresholds("reference", p, np.zeros((1, 5), np.uint8), 10).tolist() == [1]


def test_midpoint_rule_hand_checked():
    p = np.array([1, 3, 5, 7, 9])
    obs = np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]])
    # j* = 2 included -> boundary between p[1]=3 and p[2]=5: (3 + 1 + 5) // 2 = 4
    # none included -> between virtual -1 and p[0]=1: (−1 + 1 + 1) // 2 = 0
    # all included -> between p[4]=9 and virtual n=10: (9 + 1 + 10) // 2 = 10
    assert rule_thresholds("midpoint", p, obs, 10).tolist() == [4, 0, 10]


@settings(max_examples=100, deadline=None)
@given(binary_rows)
def test_midpoint_at_full_budget_is_the_dp_optimum(y):
    y = np.array(y, dtype=np.uint8)
    n = len(y)
    p = uniform_positions(n, n)
    assert rule_thresholds("midpoint", p, y[None, :], n)[0] == dp_search(y)


# --- decomposition (§4.5) --------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(binary_rows, st.data())
def test_decomposition_bounds(y, data):
    y = np.array(y, dtype=np.uint8)
    t = data.draw(st.integers(0, len(y)))
    d = decompose(y, t)
    assert d.total >= d.aleatoric - 1e-12
    assert d.total <= d.aleatoric + d.epistemic + 1e-12
    assert decompose(y, d.best_threshold).epistemic == 0.0


def test_decomposition_hand_checked():
    y = np.array([1, 1, 0, 1, 0, 0])
    d = decompose(y, 5)
    assert d.best_threshold == 2
    assert d.aleatoric == pytest.approx(1 / 6)  # the one at position 3
    assert d.epistemic == pytest.approx(3 / 6)
    assert d.total == pytest.approx(2 / 6)  # the zeros at 2 and 4 predicted correct


# --- fits ------------------------------------------------------------------------------


def test_fit_exponential_recovers_parameters():
    x = 2.0 ** np.arange(3, 16)
    y = 0.2 * np.exp(-0.004 * x) + 0.05
    f = fit_exponential(x, y)
    assert f.ok and f.r2 > 0.999
    assert f.params["c"] == pytest.approx(0.05, abs=1e-3)
    assert f.params["b"] == pytest.approx(0.004, rel=0.05)
    assert np.allclose(f.predict(x), y, atol=1e-3)


def test_fit_power_law_recovers_parameters():
    x = 2.0 ** np.arange(3, 16)
    y = 0.3 * x**-0.2
    f = fit_power_law(x, y)
    assert f.ok and f.r2 > 0.999
    assert f.params["p"] == pytest.approx(-0.2, abs=1e-3)
    assert f.params["c"] == pytest.approx(0.3, rel=1e-2)


def test_fits_fail_gracefully():
    bad = fit_exponential([8, 16], [0.1, 0.2])
    assert not bad.ok and "at least" in bad.message and np.isnan(bad.predict([8])).all()
    assert not fit_power_law([8], [0.1]).ok
    assert not fit_power_law([0, 8, 16], [0.1, 0.2, 0.1]).ok
    assert not fit_exponential([8, 16, np.nan], [0.1, 0.2, 0.3]).ok


# --- correlation matrix (App. E) -------------------------------------------------------


def test_model_correlation_sorted_by_accuracy_matches_numpy():
    rng = np.random.default_rng(2)
    A = (rng.random((6, 500)) < rng.random((6, 1))).astype(np.uint8)
    res = model_correlation(A, chunk_cols=97)
    acc = A.mean(axis=1)
    assert (np.diff(res.accuracy) <= 0).all()
    assert np.allclose(res.accuracy, acc[res.order])
    expected = np.corrcoef(A[res.order].astype(float))
    assert np.allclose(res.corr, expected)
    assert res.frame().shape == (6, 6)


def test_model_correlation_constant_row_is_nan():
    A = np.array([[1, 1, 1, 1], [1, 0, 1, 0], [0, 1, 1, 0]], dtype=np.uint8)
    res = model_correlation(A)
    assert res.order[0] == 0
    assert np.isnan(res.corr[0, 1:]).all() and res.corr[0, 0] == 1.0


def test_correlations_match_scipy():
    from scipy import stats

    from lifelong_core.sortsearch.metrics import correlations

    rng = np.random.default_rng(4)
    est = rng.integers(0, 6, 40) / 5  # many ties
    true = est + rng.normal(0, 0.2, 40)
    p, s = correlations(est, true)
    assert p == pytest.approx(stats.pearsonr(est, true).statistic)
    assert s == pytest.approx(stats.spearmanr(est, true).statistic)
    assert np.isnan(correlations(np.ones(5), true[:5])).all()


@settings(max_examples=100, deadline=None)
@given(binary_rows, st.data())
def test_threshold_metrics_equal_the_explicit_vector(a, data):
    from lifelong_core.sortsearch import threshold_metrics

    a = np.array(a, dtype=np.uint8)
    n = len(a)
    t = data.draw(st.integers(0, n))
    y = np.zeros(n, dtype=np.uint8)
    y[:t] = 1
    met = threshold_metrics(np.array([t]), np.array([a[:t].sum()]), np.array([a.sum()]), n)
    assert met["mae"][0] == pytest.approx(mae(a, y))
    assert met["eagg"][0] == pytest.approx(eagg(a, y))
    assert met["kappa"][0] == pytest.approx(kappa(a, y))
    assert met["est_acc"][0] == t / n and met["true_acc"][0] == a.mean()
