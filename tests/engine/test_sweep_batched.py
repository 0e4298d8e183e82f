"""The sweep's batched scoring (``SweepScoring.score_rows``) against the per-row path.

``mirt`` and the default ``auto`` score every evaluated row of a block at once: one MAP
fit per budget over the evaluated items, one pass over the items for every row and budget.
Each test runs the same fitted method twice through ``score_method``: as it is, and
wrapped so that only ``select``/``estimate`` are visible (the straightforward path: a
per-sample row per model and budget, compared with the truth row). The numbers must agree:
the counts behind MAE and kappa exactly, the accuracies and intervals to the order of
floating-point sums.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.bits import pack_rows
from lifelong_core.datasets.synthetic import SyntheticSpec, generate
from lifelong_core.errors import InputError
from lifelong_core.methods import get_method
from lifelong_core.methods.auto import AutoEstimator, AutoTuning, Choice
from lifelong_core.methods.base import SweepScoring
from lifelong_core.rows import DenseRows
from lifelong_core.sortsearch.sort import order_from_sums
from lifelong_core.sweeping import run_sweep
from lifelong_core.sweeping.protocol import score_method

BUDGETS = (8, 16, 64, 256, 600)


class RowByRow:
    """The fitted method seen through ``select`` and ``estimate`` only."""

    def __init__(self, method):
        self.m, self.name = method, method.name

    def fit(self, *args, **kwargs):
        return self

    def select(self, *args):
        return self.m.select(*args)

    def estimate(self, *args):
        return self.m.estimate(*args)


@pytest.fixture(scope="module")
def cache():
    A = generate(
        SyntheticSpec(n_models=70, n_samples=1203, seed=11, n_clusters=3, cluster_spread=1.0)
    )
    S, E = A[:45], A[45:]
    return S, E, order_from_sums(S.sum(axis=0))


def both(method, E, budgets=BUDGETS, step=4):
    fast = score_method(
        method, DenseRows(E), budgets, np.random.default_rng(5), step, lambda r: None
    )
    slow = score_method(
        RowByRow(method), DenseRows(E), budgets, np.random.default_rng(5), step, lambda r: None
    )
    return fast, slow


def assert_same(fast: pd.DataFrame, slow: pd.DataFrame, tol: float = 1e-12) -> None:
    assert list(fast.columns) == list(slow.columns)
    pd.testing.assert_frame_equal(
        fast[["model_row", "budget", "true_acc", "mae", "kappa"]],
        slow[["model_row", "budget", "true_acc", "mae", "kappa"]],
        rtol=0,
        atol=1e-15,
    )
    for col in ("est_acc", "eagg", "est_lo", "est_hi"):
        np.testing.assert_allclose(fast[col], slow[col], rtol=0, atol=tol, err_msg=col)


@pytest.mark.parametrize("name", ["mirt", "irt"])
@pytest.mark.parametrize("packed", [False, True], ids=["dense fit", "packed float32 fit"])
def test_item_models_score_the_same_batched_and_row_by_row(cache, name, packed):
    S, E, order = cache
    method = get_method(name)
    if packed:
        method.fit_packed(pack_rows(S), S.shape[1], order, max_columns=500)
        assert method.item_.w.dtype == np.float32
    else:
        method.fit(S, order)
    assert isinstance(method, SweepScoring)
    assert_same(*both(method, E))


@pytest.mark.parametrize(
    "choices",
    [
        # every pair of the three candidates, including the estimate and prediction apart
        (
            Choice(8, "threshold", "mirt"),
            Choice(16, "copy-nearest", "threshold"),
            Choice(64, "mirt", "copy-nearest"),
            Choice(256, "threshold", "threshold"),
            Choice(600, "copy-nearest", "copy-nearest"),
        ),
        tuple(Choice(b, "mirt", "mirt") for b in BUDGETS),
        tuple(Choice(b, "threshold", "threshold") for b in BUDGETS),
    ],
    ids=["mixed", "mirt", "threshold"],
)
def test_auto_scores_the_same_batched_and_row_by_row(cache, choices):
    S, E, order = cache
    method = AutoEstimator(tuning=AutoTuning(3, 8.0, choices)).fit(S, order)
    method.name = "auto"
    assert_same(*both(method, E))


def test_auto_predicting_by_the_item_model_where_the_threshold_estimates(cache):
    """The item model's pass counts its predictions from the logits' signs there, without
    its probabilities: a float32 fit's predictions are still the estimate's own."""
    S, E, order = cache
    choices = tuple(Choice(b, "mirt", "threshold") for b in BUDGETS)
    method = AutoEstimator(tuning=AutoTuning(3, 8.0, choices))
    method.fit_packed(pack_rows(S), S.shape[1], order, max_columns=500)
    assert method.mirt_.item_.w.dtype == np.float32
    method.name = "auto"
    assert_same(*both(method, E))


def test_auto_cross_validated_and_fitted_from_packed_rows(cache, monkeypatch):
    monkeypatch.setenv("LBE_TUNING_CACHE", "")
    S, E, order = cache
    method = get_method("auto").fit_packed(pack_rows(S), S.shape[1], order)
    assert_same(*both(method, E))


def test_a_rows_numbers_do_not_depend_on_the_other_rows_scored(cache):
    S, E, order = cache
    method = get_method("mirt").fit_packed(pack_rows(S), S.shape[1], order)
    whole = score_method(method, DenseRows(E), BUDGETS, np.random.default_rng(1), 4, lambda r: 0)
    rows = np.array([2, 7, 19])
    part = score_method(
        method, DenseRows(E[rows], rows), BUDGETS, np.random.default_rng(1), 4, lambda r: 0
    )
    same = whole[whole["model_row"].isin(rows)].reset_index(drop=True)
    pd.testing.assert_frame_equal(same, part, check_exact=True)


def test_the_sweep_gives_the_same_numbers_whatever_its_chunks(cache):
    S, E, _ = cache
    runs = [
        run_sweep(S, E, BUDGETS, search="irt", seed=3, chunk_rows=c).per_model for c in (1, 4, 64)
    ]
    for other in runs[1:]:
        pd.testing.assert_frame_equal(runs[0], other, check_exact=True)


def test_rows_that_are_not_zero_one_are_refused_once_per_sweep(cache):
    S, E, order = cache
    bad = E.copy()
    bad[3, 10] = 2
    method = get_method("mirt").fit(S, order)
    with pytest.raises(InputError, match="0/1"):
        score_method(method, DenseRows(bad), BUDGETS, np.random.default_rng(0), 4, lambda r: 0)


def test_mae_and_kappa_by_hand_on_a_tiny_case():
    """Two evaluated rows, one budget: the counts behind MAE and kappa, by hand."""
    rng = np.random.default_rng(0)
    S = (rng.random((12, 40)) < np.linspace(0.95, 0.05, 40)).astype(np.uint8)
    E = (rng.random((2, 40)) < np.linspace(0.9, 0.1, 40)).astype(np.uint8)
    order = order_from_sums(S.sum(axis=0))
    method = get_method("mirt").fit(S, order)
    sel = method.select(40, 10, np.random.default_rng(4))
    fast = score_method(method, DenseRows(E), (10,), np.random.default_rng(4), 4, lambda r: 0)
    for r in range(2):
        est = method.estimate(sel, E[r, sel])
        row = fast.iloc[r]
        wrong = int(np.sum(est.per_sample != E[r]))
        assert row["mae"] == wrong / 40
        a, y = E[r].mean(), est.per_sample.mean()
        p_e = a * y + (1 - a) * (1 - y)
        assert row["kappa"] == pytest.approx(((1 - wrong / 40) - p_e) / (1 - p_e), abs=1e-12)
        assert row["est_acc"] == pytest.approx(est.acc, abs=1e-12)


def test_sweeps_on_the_same_sort_rows_share_one_fit_in_the_memory_given(cache, monkeypatch):
    from lifelong_core.methods import irt
    from lifelong_core.methods.memory import FitMemory

    S, E, _ = cache
    memory = FitMemory()
    fits = []
    real = irt.MIRTEstimator.fit
    monkeypatch.setattr(
        irt.MIRTEstimator, "fit", lambda self, *a, **k: fits.append(1) or real(self, *a, **k)
    )
    a = run_sweep(S, E, (8, 64), search="irt", seed=1, memory=memory)
    b = run_sweep(S, E, (16, 600), search="irt", seed=1, memory=memory)  # the same fit
    assert len(fits) == 1
    run_sweep(S[1:], E, (8,), search="irt", seed=1, memory=memory)  # other Sort rows
    run_sweep(S, E, (8,), search="mirt", seed=1, memory=memory)  # another method
    assert len(fits) == 3 and len(memory) == 3
    again = run_sweep(S, E, (8, 64), search="irt", seed=1, memory=memory)
    pd.testing.assert_frame_equal(a.per_model, again.per_model, check_exact=True)
    # Without a memory nothing is kept: every sweep fits, with the same numbers.
    fresh = run_sweep(S, E, (16, 600), search="irt", seed=1)
    run_sweep(S, E, (16, 600), search="irt", seed=1)
    pd.testing.assert_frame_equal(b.per_model, fresh.per_model, check_exact=True)
    assert len(fits) == 5


def test_the_registry_declares_batched_scoring_for_exactly_the_methods_that_offer_it():
    from lifelong_core.methods import available_methods, capabilities

    for name in available_methods():
        offers = isinstance(get_method(name), SweepScoring)
        assert capabilities(name).batched == offers, name


def test_copy_nearest_scores_the_same_batched_and_row_by_row(cache):
    S, E, order = cache
    method = get_method("copy-nearest").fit(S, order)
    assert isinstance(method, SweepScoring)
    fast, slow = both(method, E)
    assert "est_lo" not in fast.columns  # no interval
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)


def test_the_nearest_rows_of_a_batch_are_the_smallest_hamming_distances_lowest_row_first():
    from lifelong_core.methods.copy_nearest import nearest_rows

    rng = np.random.default_rng(3)
    # Four columns and 30 cache rows: many rows at the same distance, so ties decide.
    cache_at = (rng.random((30, 4)) < 0.5).astype(np.uint8)
    observed = (rng.random((200, 4)) < 0.5).astype(np.uint8)
    got = nearest_rows(cache_at, observed)
    for r, o in enumerate(observed):
        dist = [int(np.sum(row != o)) for row in cache_at]
        assert got[r] == dist.index(min(dist))
