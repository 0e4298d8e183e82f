"""The honest uniform grid (stratum centres) against the published grid."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.methods import InsertM
from lifelong_core.sortsearch import uniform_positions
from lifelong_core.sortsearch.search import positions_for, resolve_sampling, stratum_positions
from lifelong_core.sweeping import run_sweep


@pytest.mark.parametrize(
    "n,k,expected",
    [
        (10, 5, [1, 3, 5, 7, 9]),  # k divides n: the same as the reference grid
        (10, 3, [2, 5, 8]),  # strata {0..3}, {4..6}, {7..9}: lo + size // 2
        (10, 10, list(range(10))),
        (7, 1, [3]),
        (440, 256, None),
    ],
)
def test_stratum_positions_hand_checked(n, k, expected):
    p = stratum_positions(n, k)
    if expected is not None:
        assert p.tolist() == expected
    else:
        # The issue's case: at m' = 256 of 440 models the reference grid never looks
        # below position 184; the strata start at 0.
        assert uniform_positions(n, k)[0] == 184 and p[0] == 1 and p[-1] == 439


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 20_000), st.data())
def test_uniform_grid_covers_both_ends_for_every_n_and_k(n, data):
    k = data.draw(st.integers(1, n))
    p = stratum_positions(n, k)
    half = -(-n // k) / 2
    assert len(p) == k and (np.diff(p) > 0).all() and p[0] >= 0 and p[-1] < n
    # Both ends lie within half a stratum of the grid; every stratum [i n/k, (i+1) n/k) holds one position.
    assert p[0] <= half and (n - 1) - p[-1] <= half
    i = np.arange(k)
    assert ((p >= i * n / k) & (p < (i + 1) * n / k)).all()
    # the reference grid leaves the first n - k * (n // k) positions unsampled when k does not divide n
    assert uniform_positions(n, k)[0] == (n - k * (n // k) if n % k else (n // k) // 2)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5_000), st.data())
def test_grids_agree_when_k_divides_n(n, data):
    divisors = [d for d in range(1, min(n, 200) + 1) if n % d == 0]
    k = data.draw(st.sampled_from(divisors))
    assert np.array_equal(stratum_positions(n, k), uniform_positions(n, k))


def test_sampling_names_and_defaults():
    assert resolve_sampling(None, "reference") == "reference"
    assert resolve_sampling(None, "midpoint") == "uniform"
    assert resolve_sampling("random", "reference") == "random"
    with pytest.raises(InputError, match="unknown sampling"):
        resolve_sampling("grid", "midpoint")
    assert positions_for("reference", 10, 3, None).tolist() == [1, 4, 7]
    assert positions_for("uniform", 10, 3, None).tolist() == [2, 5, 8]
    order = np.arange(5)
    assert InsertM("reference").fit(None, order).sampling_ == "reference"
    assert InsertM().fit(None, order).sampling_ == "uniform"


def test_sweep_uses_the_chosen_grid():
    rng = np.random.default_rng(0)
    A = (rng.random((30, 103)) < np.linspace(0.95, 0.05, 103)).astype(np.uint8)
    ref_default = run_sweep(A[:10], A[10:], [7, 20], search="reference")
    ref_explicit = run_sweep(A[:10], A[10:], [7, 20], search="reference", sampling="reference")
    assert ref_default.config["sampling"] == "reference"
    assert ref_default.table.equals(ref_explicit.table)
    mid = run_sweep(A[:10], A[10:], [7, 20], search="midpoint")
    assert mid.config["sampling"] == "uniform"
    # one model by hand: the midpoint rule on the strata centres of the stable order
    order = mid.order
    p = stratum_positions(103, 7)
    row = A[10]
    obs = row[order[p]].astype(int)
    run = np.concatenate([[0], np.cumsum(2 * obs - 1)])
    j = int(np.argmax(run))
    ext = np.concatenate([[-1], p, [103]])
    t = (ext[j] + 1 + ext[j + 1]) // 2
    got = mid.per_model.query("budget == 7 and model_row == 0")["est_acc"].item()
    assert got == pytest.approx(t / 103)


# ------------------------------------------------------------------ Listing 1 as printed
def _listing_uniform_sampling(query, num_p):
    """Prabhu et al. (2024), Listing 1, ``uniform_sampling``, transcribed as printed."""
    idx = np.arange(0, len(query), len(query) // num_p)[1:]
    return idx


def _listing_dp_search(query):
    """Listing 1, ``dp_search``, as printed (on a copy: the listing writes into its input)."""
    query = query.astype(np.int64).copy()
    query[query == 0] = -1
    cumsum = np.cumsum(query)
    idx = np.argmax(cumsum)
    return idx / len(query)


@settings(max_examples=400, deadline=None)
@given(st.integers(2, 30_000), st.data())
def test_listing_grid_is_the_printed_code(n, data):
    from lifelong_core.sortsearch.search import listing_positions

    k = data.draw(st.integers(2, n))
    got = positions_for("listing", n, k, None)
    want = _listing_uniform_sampling(np.zeros(n), k)
    assert np.array_equal(got, want) and np.array_equal(listing_positions(n, k), want)


def test_listing_grid_is_not_always_k_positions():
    from lifelong_core.sortsearch.search import listing_positions

    assert len(listing_positions(10_700, 1_024)) == 1_069  # step 10: the remainder adds 45
    assert len(listing_positions(1_000, 10)) == 9  # k divides n: position 0 dropped
    assert listing_positions(1_000, 10)[0] == 100  # the easiest sample is never evaluated
    with pytest.raises(InputError, match="holds no position for budget 1"):
        listing_positions(1_000, 1)


def test_sweep_with_the_listing_grid_matches_a_transcription_of_the_listing():
    """The listing's grid with the published code's threshold rule (reference: the
    argmax sample's position, i.e. ``dp_search``'s index read on the grid) and Listing 1's
    ``sort_by_sum`` order, by hand, for every evaluated model."""
    rng = np.random.default_rng(5)
    n = 997
    A = (rng.random((40, n)) < np.linspace(0.97, 0.03, n)).astype(np.uint8)
    res = run_sweep(A[:15], A[15:], [10, 64, 500], search="reference", sampling="listing")
    assert res.config["sampling"] == "listing"
    assert res.config["evaluated"] == {10: 10, 64: 66, 500: 996}  # step 15: 67 - 1 at 64
    order = np.flip(np.argsort(A[:15].sum(axis=0)))  # Listing 1's sort_by_sum
    for b in (10, 64, 500):
        idx = _listing_uniform_sampling(np.zeros(n), b)
        for r in range(25):
            truth = A[15 + r, order]
            frac = _listing_dp_search(truth[idx])
            i_star = round(frac * len(idx))  # dp_search's index
            t = idx[i_star]  # the published rule reads the threshold at the grid position
            got = res.per_model.query(f"budget == {b} and model_row == {r}")["est_acc"].item()
            assert got == pytest.approx(t / n)


def test_insert_m_selects_the_listing_grid():
    rng = np.random.default_rng(1)
    A = (rng.random((12, 300)) < np.linspace(0.9, 0.1, 300)).astype(np.uint8)
    m = InsertM("reference", sampling="listing").fit(A)
    assert np.array_equal(
        np.sort(m.order_[positions_for("listing", 300, 32, None)]), m.select(300, 32)
    )
