"""The estimators' linear-time kernels against transcriptions of the straightforward code.

Each kernel here replaced a simpler computation of the same quantity; each test keeps
that computation as the second implementation: the stratified draw (a sort of every key
by stratum), stratum labels (a binary search), the MAP ability (one model at a time,
full Fisher matrices, LAPACK), the Newton systems (LAPACK), and the check of observations.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.methods import design, irt
from lifelong_core.methods.base import check_observations
from lifelong_core.methods.irt_fit import spd_solve


def stratified_by_sorting(n: int, budget: int, rng) -> np.ndarray:
    """The draw as a full sort: every key sorted by (stratum, key), the first take kept."""
    edges = design.strata_bounds(n, budget)
    sizes = np.diff(edges)
    take = np.full(len(sizes), min(2, budget), dtype=np.int64)
    take[int(np.argmax(sizes))] += budget - take.sum()
    keys = rng.random(n)
    stratum = np.repeat(np.arange(len(sizes)), sizes)
    by_key = np.lexsort((keys, stratum))
    rank = np.arange(n) - np.repeat(edges[:-1], sizes)
    return np.sort(by_key[rank < np.repeat(take, sizes)])


class CoarseKeys(np.random.Generator):
    """A generator whose keys take few values, so that keys tie at the strata's cuts."""

    def __init__(self, seed: int, levels: int):
        super().__init__(np.random.PCG64(seed))
        self.levels = levels

    def random(self, size=None, dtype=np.float64, out=None):
        return np.floor(super().random(size) * self.levels) / self.levels


@pytest.mark.parametrize("n", [1, 2, 3, 9, 64, 1001, 4099])
def test_stratified_draw_equals_the_full_sort(n):
    for budget in sorted({1, 2, 3, 5, 8, 9, n // 3, n // 2, n - 1, n} - {0}):
        if budget > n:
            continue
        for seed in range(4):
            got = design.stratified_positions(n, budget, np.random.default_rng(seed))
            want = stratified_by_sorting(n, budget, np.random.default_rng(seed))
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("levels", [2, 5, 50])
def test_stratified_draw_breaks_ties_as_the_full_sort(levels):
    for n, budget in ((100, 10), (1000, 7), (37, 37)):
        for seed in range(3):
            got = design.stratified_positions(n, budget, CoarseKeys(seed, levels))
            want = stratified_by_sorting(n, budget, CoarseKeys(seed, levels))
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("edges", [[0, 3, 10, 11, 20], [0, 2, 4, 7], [0, 50]])
def test_smallest_keys_of_uneven_strata_equal_the_full_sort(edges):
    # Strata whose sizes differ by more than one (not strata_bounds'), with ties.
    edges = np.asarray(edges, dtype=np.int64)
    sizes = np.diff(edges)
    n = int(edges[-1])
    for seed in range(5):
        keys = np.floor(np.random.default_rng(seed).random(n) * 4) / 4
        take = np.minimum(np.random.default_rng(seed).integers(1, 4, len(sizes)), sizes)
        stratum = np.repeat(np.arange(len(sizes)), sizes)
        by_key = np.lexsort((keys, stratum))
        rank = np.arange(n) - np.repeat(edges[:-1], sizes)
        want = np.sort(by_key[rank < np.repeat(take, sizes)])
        np.testing.assert_array_equal(np.sort(design._smallest_keys(keys, edges, take)), want)


@pytest.mark.parametrize(
    ("n", "budget", "sampling"),
    [
        (5000, 64, "stratified"),
        (5000, 333, "stratified"),
        (5000, 96, "regular"),
        (900, 2, "regular"),
    ],
)
def test_many_estimates_of_0_1_predictions_equal_those_of_the_same_floats(
    n, budget, sampling, monkeypatch
):
    """Predictions given as booleans (a threshold's) have their sums counted along each
    model's row; as floats they are summed down the columns: the same numbers, bit for
    bit, in one group of models or several."""
    rng = np.random.default_rng(budget)
    draw = design.stratified_positions if sampling == "stratified" else design.regular_positions
    ranks = rng.permutation(draw(n, budget, rng))
    models = 11
    obs = (rng.random((models, budget)) < 0.7).astype(np.uint8)
    at = rng.random((models, budget)) < 0.6
    total = at.sum(axis=1) + rng.integers(0, n - budget, models).astype(np.float64)
    want = design.difference_estimates_at(ranks, obs, at.astype(np.float64), total, n)
    assert design.difference_estimates_at(ranks, obs, at, total, n) == want
    monkeypatch.setattr(design, "ESTIMATES_BYTES", 8 * budget * 3)  # three models at a time
    assert design.difference_estimates_at(ranks, obs, at, total, n) == want
    assert design.difference_estimates_at(ranks, obs, at.astype(np.float64), total, n) == want


def test_stratum_labels_equal_a_binary_search():
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 100, 10_007, 500_000):
        for budget in sorted({1, 2, 3, 8, 33, n // 2, n} - {0}):
            edges = design.strata_bounds(n, budget)
            ranks = rng.permutation(n)[:budget]
            np.testing.assert_array_equal(
                design._stratum_of(edges, ranks, n), np.searchsorted(edges, ranks, side="right") - 1
            )


def map_one_at_a_time(item, cols, obs, iters=30):
    """The MAP ability of one model: full Fisher matrices, LAPACK solves."""
    X, off, y = item.w[cols].astype(np.float64), item.d[cols].astype(np.float64), obs.astype(float)
    theta = item.prior_mean.copy()
    for _ in range(iters):
        mu = expit(off + X @ theta)
        grad = X.T @ (y - mu) - item.prior_prec @ (theta - item.prior_mean)
        fisher = (X * (mu * (1 - mu))[:, None]).T @ X
        step = np.linalg.solve(fisher + item.prior_prec, grad)
        theta = theta + np.clip(step, -2.0, 2.0)
        if np.abs(step).max() < 1e-6:
            break
    mu = expit(off + X @ theta)
    fisher = (X * (mu * (1 - mu))[:, None]).T @ X
    return theta, float(np.trace(np.linalg.solve(fisher + item.prior_prec, fisher)))


@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batched_map_abilities_equal_one_model_at_a_time(k, dtype, monkeypatch):
    rng = np.random.default_rng(k)
    n = 3000
    item = irt.item_model(
        rng.normal(size=n).astype(dtype),
        rng.normal(size=(n, k)).astype(dtype),
        rng.normal(size=(80, k)),
    )
    # Small groups, so that several groups of models are fitted, and their sums over the
    # items taken in several chunks.
    monkeypatch.setattr(irt, "PASS_BYTES", 8 * 700 * 3)
    monkeypatch.setattr(irt, "MAP_CHUNK_BYTES", 8 * 3 * 256)
    for b in (1, 5, 64, 700):
        cols = np.sort(rng.choice(n, b, replace=False))
        obs = (rng.random((b, 9)) < 0.6).astype(np.uint8)
        obs[:, 0] = 1  # a perfect score: the prior alone keeps it finite
        theta, df = irt.map_abilities(item, cols, obs)
        for r in range(9):
            want_theta, want_df = map_one_at_a_time(item, cols, obs[:, r])
            np.testing.assert_allclose(theta[r], want_theta, rtol=0, atol=1e-9)
            assert df[r] == pytest.approx(want_df, abs=1e-9)
        one, _ = irt.map_ability(item, cols, obs[:, 3])
        np.testing.assert_allclose(one, theta[3], rtol=0, atol=1e-12)


def test_probabilities_do_not_depend_on_the_batch():
    rng = np.random.default_rng(2)
    n, k = 20_000, 10
    item = irt.item_model(
        rng.normal(size=n).astype(np.float32),
        rng.normal(size=(n, k)).astype(np.float32),
        rng.normal(size=(50, k)),
    )
    theta = rng.normal(size=(37, k))
    whole = irt.item_probs(item, theta)
    assert whole.dtype == np.float32
    np.testing.assert_array_equal(irt.item_probs(item, theta[5:6])[:, 0], whole[:, 5])
    np.testing.assert_array_equal(irt.item_probs(item, theta, 8192, 16384), whole[8192:16384])
    np.testing.assert_array_equal(irt.all_item_probs(item, theta), whole)
    eta = item.d.astype(float)[:, None] + item.w.astype(float) @ theta.T
    np.testing.assert_allclose(whole, expit(eta), rtol=0, atol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 5, 11, 17])
def test_spd_solve_equals_lapack(p):
    rng = np.random.default_rng(p)
    c = 5000
    X = rng.normal(size=(c, 12, p))
    A = np.einsum("cmi,cmj->cij", X, X) + 0.01 * np.eye(p)
    g = rng.normal(size=(p, c))
    iu = np.triu_indices(p)
    got = spd_solve(A[:, iu[0], iu[1]].T, g, p)
    want = np.linalg.solve(A, g.T[:, :, None])[:, :, 0].T
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_spd_solve_falls_back_on_a_system_that_is_not_positive_definite():
    A = np.array([[[0.0, 1.0], [1.0, 0.0]], [[2.0, 0.0], [0.0, 3.0]]])  # the first is indefinite
    g = np.array([[1.0, 2.0], [3.0, 3.0]])
    iu = np.triu_indices(2)
    got = spd_solve(A[:, iu[0], iu[1]].T, g, 2)
    np.testing.assert_allclose(got, np.linalg.solve(A, g.T[:, :, None])[:, :, 0].T)


def test_observations_are_checked_in_one_pass_as_before():
    pos, obs = check_observations(np.array([1, 4, 9]), np.array([True, False, True]), 10)
    assert pos.dtype == np.int64 and obs.dtype == np.uint8 and obs.tolist() == [1, 0, 1]
    assert check_observations(np.array([9, 1, 4]), np.array([1.0, 0.0, 1.0]), 10)[1].tolist() == [
        1,
        0,
        1,
    ]
    for pos, obs, words in [
        ([3, 1, 3], [1, 0, 1], "distinct"),
        ([1, 3, 3], [1, 0, 1], "distinct"),
        ([0, 10], [1, 0], "distinct"),
        ([-1, 2], [1, 0], "distinct"),
        ([1, 2], [1, 2], "0/1"),
        ([1, 2], [0.5, 1], "0/1"),
        ([1, 2], ["1", "0"], "0/1"),
        ([1, 2], [np.nan, 1], "0/1"),
        ([], [], "at least one"),
    ]:
        with pytest.raises(InputError, match=words):
            check_observations(np.array(pos), np.array(obs), 10)


def test_hypergeometric_tails_equal_the_distributions_own():
    from scipy.stats import hypergeom

    from lifelong_core.methods.random_sample import _hypergeom_tails

    sf, cdf = _hypergeom_tails()
    rng = np.random.default_rng(0)
    for _ in range(3000):
        M = int(rng.integers(1, 3000))
        N, n = int(rng.integers(1, M + 1)), int(rng.integers(0, M + 1))
        x = int(rng.integers(-2, N + 2))
        assert sf(x, M, n, N) == hypergeom.sf(x, M, n, N), (x, M, n, N)
        assert cdf(x, M, n, N) == hypergeom.cdf(x, M, n, N), (x, M, n, N)


@pytest.mark.parametrize("k", [1, 4])
def test_map_abilities_each_on_its_own_columns_equal_one_model_at_a_time(k, monkeypatch):
    rng = np.random.default_rng(10 + k)
    n = 2000
    item = irt.item_model(rng.normal(size=n), rng.normal(size=(n, k)), rng.normal(size=(60, k)))
    monkeypatch.setattr(irt, "PASS_BYTES", 8 * 40 * k * 4)  # groups of four models
    for b in (1, 6, 40):
        cols = np.stack([np.sort(rng.choice(n, b, replace=False)) for _ in range(11)])
        obs = (rng.random((11, b)) < 0.55).astype(np.uint8)
        theta, df = irt.map_abilities_each(item, cols, obs)
        for r in range(11):
            want_theta, want_df = map_one_at_a_time(item, cols[r], obs[r])
            np.testing.assert_allclose(theta[r], want_theta, rtol=0, atol=1e-9)
            assert df[r] == pytest.approx(want_df, abs=1e-9)


@pytest.mark.parametrize("layout", ["tiled", "any"])
def test_item_pass_counts_equal_each_columns_own_row(layout, monkeypatch):
    from lifelong_core.bits import pack_rows

    rng = np.random.default_rng(5)
    n, k, m = 1003, 3, 4
    item = irt.item_model(
        rng.normal(size=n).astype(np.float32),
        rng.normal(size=(n, k)).astype(np.float32),
        rng.normal(size=(30, k)),
    )
    truth = (rng.random((m, n)) < 0.6).astype(np.uint8)
    sels = [np.sort(rng.choice(n, b, replace=False)) for b in (5, 40)]
    rows = np.tile(np.arange(m), 2) if layout == "tiled" else np.array([3, 0, 0, 2, 1, 3, 2, 1])
    groups = [(sels[0], np.arange(4)), (sels[1], np.arange(4, 8))]
    theta = rng.normal(size=(8, k))
    monkeypatch.setattr(irt, "CHUNK_BYTES", 8 * 8 * 128)  # several chunks of items
    ip = irt.item_pass(item, theta, rows, groups, pack_rows(truth), n)
    for (sel, cols), at in zip(groups, ip.at):
        for j, c in enumerate(cols):
            p = irt.item_probs(item, theta[c : c + 1])[:, 0]
            rest = np.ones(n, dtype=bool)
            rest[sel] = False
            pred = p >= 0.5
            assert ip.wrong[c] == np.sum((pred != truth[rows[c]].astype(bool)) & rest)
            assert ip.ones[c] == np.sum(pred & rest)
            assert ip.total[c] == pytest.approx(p.sum(dtype=np.float64), abs=1e-9)
            np.testing.assert_array_equal(at[:, j], p[sel])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_predictions_from_the_logits_signs_equal_the_probabilities(dtype):
    """What the item pass counts where no probability is summed: P >= 0.5 as model_probs
    gives it, from the float64 logits, at and around zero and the rounding's edges."""
    rng = np.random.default_rng(4)
    tiny = np.float64(np.finfo(np.float32).tiny)
    edges = np.array(
        [0.0, -0.0, 1e-300, -1e-300, tiny, -tiny, tiny / 8, -tiny / 8, 2.0**-24, -(2.0**-24)]
        + [-(2.0**-25), -(2.0**-26), 2.0**-25, -1e-8, 1e-8, -6e-8, -5.96e-8, -1e-3, 1e-3]
        + [-0.00099999, 0.00099999, -0.0010001, 40.0, -40.0, -1e6, 1e6]
    )
    eta = np.concatenate([edges, rng.normal(scale=1e-3, size=20_000), rng.normal(size=20_000)])
    eta = np.stack([eta, -eta[::-1]])
    want = irt._sigmoid(eta.astype(dtype)) >= 0.5
    np.testing.assert_array_equal(irt._predicted(eta.copy(), dtype), want)


def test_an_item_pass_without_totals_counts_the_same_predictions(monkeypatch):
    from lifelong_core.bits import pack_rows

    rng = np.random.default_rng(6)
    n, k, m = 2003, 2, 3
    item = irt.item_model(
        rng.normal(size=n).astype(np.float32),
        rng.normal(size=(n, k)).astype(np.float32),
        rng.normal(size=(30, k)),
    )
    truth = pack_rows((rng.random((m, n)) < 0.5).astype(np.uint8))
    sels = [np.sort(rng.choice(n, b, replace=False)) for b in (6, 50, 400)]
    groups = [(sel, np.arange(j * m, (j + 1) * m)) for j, sel in enumerate(sels)]
    theta = rng.normal(size=(3 * m, k))
    rows = np.tile(np.arange(m), 3)
    monkeypatch.setattr(irt, "CHUNK_BYTES", 8 * 9 * 256)  # several chunks of items
    every = irt.item_pass(item, theta, rows, groups, truth, n)
    some = irt.item_pass(item, theta, rows, groups, truth, n, totals=[False, True, False])
    np.testing.assert_array_equal(some.wrong, every.wrong)
    np.testing.assert_array_equal(some.ones, every.ones)
    assert some.at[0] is None and some.at[2] is None
    np.testing.assert_array_equal(some.at[1], every.at[1])
    np.testing.assert_array_equal(some.total[3:6], every.total[3:6])
    assert np.isnan(some.total[:3]).all() and np.isnan(some.total[6:]).all()
    # Without true rows: the same totals and probabilities, no counts.
    alone = irt.item_pass(item, theta, rows, groups, None, n, totals=[False, True, False])
    np.testing.assert_array_equal(alone.total[3:6], every.total[3:6])
    np.testing.assert_array_equal(alone.at[1], every.at[1])
    assert not alone.wrong.any() and not alone.ones.any()


def test_a_one_direction_model_counts_its_predictions_by_thresholds(monkeypatch):
    """Columns of a k = 1 item model that only predict are counted along the items sorted
    by their thresholds (irt._threshold_counts): the same counts as the pass over every
    item, with items at the abilities' thresholds, flat, upside-down and constant ones."""
    from lifelong_core.bits import pack_rows

    rng = np.random.default_rng(8)
    n, m = 3001, 4
    w = rng.normal(scale=1.5, size=(n, 1))
    w[::17] *= 1e-3  # flat: predicted one by one
    w[::29] = 0.0
    d = rng.normal(size=n)
    theta = rng.normal(size=(12, 1))
    d[:40] = -w[:40, 0] * theta[0, 0]  # thresholds at the first column's ability
    d[40:60] = -w[40:60, 0] * theta[5, 0] + rng.normal(scale=1e-4, size=20)
    for dtype in (np.float32, np.float64):
        item = irt.item_model(d.astype(dtype), w.astype(dtype), rng.normal(size=(30, 1)))
        truth = pack_rows((rng.random((m, n)) < 0.55).astype(np.uint8))
        sels = [np.sort(rng.choice(n, b, replace=False)) for b in (5, 300, 1500)]
        groups = [(sel, np.arange(j * m, (j + 1) * m)) for j, sel in enumerate(sels)]
        rows = np.tile(np.arange(m), 3)
        by_order = irt.item_pass(item, theta, rows, groups, truth, n, totals=[False, True, False])
        monkeypatch.setattr(irt, "_one_direction", lambda *a: False)
        every = irt.item_pass(item, theta, rows, groups, truth, n, totals=[False, True, False])
        monkeypatch.undo()
        np.testing.assert_array_equal(by_order.wrong, every.wrong)
        np.testing.assert_array_equal(by_order.ones, every.ones)
        np.testing.assert_array_equal(by_order.total[4:8], every.total[4:8])


def _keys(case: str, size: int, rng: np.random.Generator) -> np.ndarray:
    if case == "distinct":
        return rng.normal(size=size)
    if case == "ties":
        return np.round(rng.normal(size=size), 1)
    if case == "signed zeros":
        return rng.choice([-0.0, 0.0, 1.0, np.inf, -np.inf], size=size)
    if case == "nan":
        return np.where(rng.random(size) < 0.1, np.nan, np.round(rng.random(size), 2))
    return rng.integers(0, size // 3 + 1, size).astype(np.float64)  # many runs of ties


@pytest.mark.parametrize("case", ["distinct", "ties", "signed zeros", "nan", "many ties"])
def test_the_quick_stable_argsort_equals_numpys_stable_sort(case):
    rng = np.random.default_rng(len(case))
    for size in (0, 1, 2, 7, 1000):
        keys = _keys(case, size, rng)
        np.testing.assert_array_equal(irt._stable_argsort(keys), np.argsort(keys, kind="stable"))


def test_the_threshold_order_is_made_once_per_item_model():
    """The items' order along their thresholds (irt._threshold_layout) is kept per fitted
    item model while it lives, and is the definition's: sorted by threshold (equal ones in
    item order), then stably by sign and power of two of the discrimination, flat items
    last."""
    import gc

    rng = np.random.default_rng(3)
    n = 2000
    w = rng.normal(scale=2.0, size=(n, 1))
    w[::13] = 0.0
    d = np.round(rng.normal(size=n), 1)  # equal thresholds among items of equal w
    w[::7] = np.round(w[::7], 0)
    item = irt.item_model(d, w, rng.normal(size=(20, 1)))
    layout = irt._threshold_layout(item)
    assert irt._threshold_layout(item) is layout
    live = np.flatnonzero(w[:, 0] != 0)
    tau = -d[live] / w[live, 0]
    power = np.frexp(np.abs(w[live, 0]))[1]
    segment = (power - power.min()) * 2 + (w[live, 0] > 0)
    by_tau = np.argsort(tau, kind="stable")
    want = live[by_tau[np.argsort(segment[by_tau], kind="stable")]]
    np.testing.assert_array_equal(
        layout.order, np.concatenate([want, np.flatnonzero(w[:, 0] == 0)])
    )
    assert layout.flat_at == len(live)
    np.testing.assert_array_equal(np.concatenate(layout.taus), -d[want] / w[want, 0])
    key = id(item)
    del item, layout
    gc.collect()
    assert key not in irt._LAYOUTS
