"""The stepped matcher (every model's and run's pass side by side) against the Fenwick tree.

Both follow Algorithm 1/2 of Anzaku et al. with the same draws; the stepped one must make
exactly the Fenwick tree's picks, on random windows, on real predictions with heavy ties
(the demo store's replication pair) and through every front door (``match_runs``,
``match_runs_models``, ``compare_models``).
"""

from __future__ import annotations

import numpy as np
import pytest

from lifelong_core.matching import (
    compare_models,
    make_predictions,
    match_runs,
    matched_accuracy,
    protocol,
)
from lifelong_core.matching.protocol import (
    _draws,
    _fenwick_run,
    _stepped_runs,
    _windows,
    match_runs_models,
)
from lifelong_core.matching.store_pair import (
    DEMO_DATASET,
    DEMO_SOURCE_DOMAIN,
    DEMO_TARGET_DOMAIN,
    Side,
    load_pair,
    read_samples,
)
from lifelong_core.store import Store


def fenwick_picks(n, lo, hi, u, v):
    """(models, runs, N) picks of the Fenwick tree, one pass after another."""
    return np.array(
        [
            [
                _fenwick_run(n, lo[m].tolist(), hi[m].tolist(), u[r].tolist(), v[r].tolist())
                for r in range(len(u))
            ]
            for m in range(len(lo))
        ],
        dtype=np.int64,
    ).reshape(len(lo), len(u), lo.shape[1])


def random_windows(rng, models, n_src, n_tgt):
    # Windows of every width from empty to the whole source, nested and overlapping, so
    # that first tries collide, fall back and exhaust their windows.
    a = rng.integers(0, n_src + 1, (models, n_tgt))
    b = rng.integers(0, n_src + 1, (models, n_tgt))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    narrow = rng.random((models, n_tgt)) < 0.5
    hi = np.where(narrow, np.minimum(hi, lo + rng.integers(0, 4, (models, n_tgt))), hi)
    return lo, hi


@pytest.mark.parametrize(
    ("models", "runs", "n_src", "n_tgt"),
    [(1, 1, 1, 1), (3, 2, 5, 9), (4, 10, 30, 60), (7, 5, 200, 120), (2, 3, 0, 4), (2, 2, 6, 0)],
)
def test_stepped_picks_equal_the_fenwick_tree(models, runs, n_src, n_tgt):
    rng = np.random.default_rng(models * 1000 + n_src)
    for _ in range(5):
        lo, hi = random_windows(rng, models, n_src, n_tgt)
        u, v = _draws(rng, runs, n_tgt)
        # Draws on the edges of the products' rounding: u * width and v * count close to whole.
        u[:, ::7] = np.nextafter(1.0, 0.0)
        v[:, ::5] = 0.0
        got = _stepped_runs(n_src, lo, hi, u, v)
        assert np.array_equal(got, fenwick_picks(n_src, lo, hi, u, v))


def tied(rng, n, classes, grid):
    # Confidences on a coarse grid, most of them exactly 1: many equal probabilities, as
    # max-softmax outputs pile up at 1.
    y = rng.integers(classes, size=n)
    y_pred = np.where(rng.random(n) < 0.8, y, rng.integers(classes, size=n))
    p = np.where(rng.random(n) < 0.5, 1.0, np.round(rng.random(n) * grid) / grid)
    return make_predictions(y, y_pred, np.maximum(p, 1 / classes))


@pytest.mark.parametrize("criterion", ["label-prob", "prob"])
@pytest.mark.parametrize(
    ("n_src", "n_tgt", "eps"), [(50, 40, 0.0), (300, 500, 0.05), (120, 80, 1.0)]
)
def test_every_front_door_matches_as_the_fenwick_tree(criterion, n_src, n_tgt, eps):
    rng = np.random.default_rng(n_src + n_tgt)
    sources = [tied(rng, n_src, 4, 20) for _ in range(6)]
    targets = [tied(rng, n_tgt, 4, 20) for _ in range(6)]
    runs, seed = 7, 3
    many = match_runs_models(sources, targets, eps, criterion, runs, seed)
    for src, tgt, got in zip(sources, targets, many):
        win = _windows(src, tgt, eps, criterion)
        u, v = _draws(np.random.default_rng(seed), runs, n_tgt)
        want = fenwick_picks(n_src, win.lo[None], win.hi[None], u, v)[0]
        for run, row in zip(got, want):
            assert np.array_equal(run.tgt_matched, np.flatnonzero(row >= 0))
            assert np.array_equal(run.src_matched, win.order[row[row >= 0]])
        # One model alone (the Fenwick tree: too few rows to step) gives the same runs.
        alone = match_runs(src, tgt, eps, criterion, runs, seed)
        assert all(np.array_equal(a.src_matched, b.src_matched) for a, b in zip(alone, got))
    # Forty runs of one model are stepped; their first seven are the seven above.
    forty = match_runs(sources[0], targets[0], eps, criterion, 40, seed)
    assert all(np.array_equal(a.src_matched, b.src_matched) for a, b in zip(forty, many[0]))


def test_chunks_and_the_fenwick_fallback_give_the_same_comparison(monkeypatch):
    rng = np.random.default_rng(5)
    y_s, y_t = rng.integers(3, size=60), rng.integers(3, size=45)
    pred_s = np.where(rng.random((9, 60)) < 0.7, y_s, rng.integers(3, size=(9, 60)))
    pred_t = np.where(rng.random((9, 45)) < 0.6, y_t, rng.integers(3, size=(9, 45)))
    conf_s = np.round(rng.random((9, 60)) * 10) / 10 * 0.6 + 0.4
    conf_t = np.round(rng.random((9, 45)) * 10) / 10 * 0.6 + 0.4
    models = [f"m{k}" for k in range(9)]

    def table():
        return compare_models(models, y_s, pred_s, conf_s, y_t, pred_t, conf_t, eps=0.05, runs=6)

    stepped = table()
    monkeypatch.setattr(protocol, "STEPPED_MAX_CELLS", 6 * 60 * 3)  # three models a chunk
    chunked = table()
    monkeypatch.setattr(protocol, "STEPPED_MIN_ROWS", 10**9)  # never step
    fenwick = table()
    for other in (chunked, fenwick):
        assert stepped.table.equals(other.table)
    one = matched_accuracy(
        make_predictions(y_s, pred_s[4], conf_s[4]),
        make_predictions(y_t, pred_t[4], conf_t[4]),
        eps=0.05,
        runs=6,
    )
    assert np.array_equal(stepped.summary("m4").per_run.to_numpy(), one.per_run.to_numpy())


def test_demo_pair_matches_as_the_fenwick_tree(demo_store_path):
    with Store.open(demo_store_path) as store:
        pair = read_samples(
            store,
            Side(DEMO_DATASET, (DEMO_SOURCE_DOMAIN,)),
            Side(DEMO_DATASET, (DEMO_TARGET_DOMAIN,)),
        )
        data = load_pair(store, pair, list(range(0, 440, 11)))
    runs = 10
    for criterion, eps in (("label-prob", 0.005), ("prob", 0.02)):
        sources = [data.predictions(m)[0] for m in data.models]
        targets = [data.predictions(m)[1] for m in data.models]
        many = match_runs_models(sources, targets, eps, criterion, runs, 0)
        u, v = _draws(np.random.default_rng(0), runs, len(pair.target_idx))
        wins = [_windows(s, t, eps, criterion) for s, t in zip(sources, targets)]
        lo, hi = np.stack([w.lo for w in wins]), np.stack([w.hi for w in wins])
        want = fenwick_picks(len(pair.source_idx), lo, hi, u, v)
        assert want.shape[0] * runs >= protocol.STEPPED_MIN_ROWS  # the stepped matcher ran
        unmatched = 0
        for k, win in enumerate(wins):
            for run, row in zip(many[k], want[k]):
                assert np.array_equal(run.src_matched, win.order[row[row >= 0]])
                assert np.array_equal(run.tgt_unmatched, np.flatnonzero(row < 0))
                unmatched += run.tgt_unmatched.size
        assert unmatched > 0  # windows ran dry: the fallback was exercised


@pytest.mark.parametrize("criterion", ["label-prob", "prob"])
@pytest.mark.parametrize(("n_src", "n_tgt", "eps"), [(40, 60, 0.0), (90, 70, 0.05), (30, 20, 1.0)])
def test_many_models_summaries_equal_each_model_matched_alone(criterion, n_src, n_tgt, eps):
    """The per-run numbers taken for every model and run at once are each model's own, bit
    for bit: runs where nothing matched (NaN), where everything matched (no unmatched
    accuracy) and a target set larger than the source included."""
    from lifelong_core.matching.protocol import match_summaries

    rng = np.random.default_rng(n_src * 7 + n_tgt)
    sources = [tied(rng, n_src, 3, 10) for _ in range(5)]
    targets = [tied(rng, n_tgt, 3, 10) for _ in range(5)]
    many = match_summaries(sources, targets, eps, criterion, 6, 2)
    seen = {"nan": 0, "all": 0}
    for src, tgt, got in zip(sources, targets, many):
        want = matched_accuracy(src, tgt, eps, criterion, 6, 2)
        for column, values in want.per_run_columns.items():
            assert values.dtype == got.per_run_columns[column].dtype, column
            assert np.array_equal(values, got.per_run_columns[column], equal_nan=True), column
        for field in ("matched_acc_source", "matched_acc_target", "acc_unmatched", "n_matched"):
            a, b = getattr(want, field), getattr(got, field)
            assert a == b or (np.isnan(a) and np.isnan(b)), field
        assert all(
            np.array_equal(x.src_matched, y.src_matched) for x, y in zip(want.matches, got.matches)
        )
        seen["nan"] += int(np.isnan(want.per_run_columns["acc_unmatched"]).sum())
        seen["all"] += int((want.per_run_columns["n_matched"] == 0).sum())
    if eps == 1.0:
        assert seen["nan"] > 0  # every target matched in some run: no unmatched accuracy


def test_many_models_summaries_when_nothing_matches():
    """Confidences too far apart for any match: every run's matched accuracies are NaN, as
    each model's own are."""
    from lifelong_core.matching.protocol import match_summaries

    rng = np.random.default_rng(4)
    y = rng.integers(3, size=25)
    sources = [make_predictions(y, rng.integers(3, size=25), np.full(25, 0.4)) for _ in range(4)]
    targets = [make_predictions(y, rng.integers(3, size=25), np.full(25, 0.9)) for _ in range(4)]
    for src, tgt, got in zip(
        sources, targets, match_summaries(sources, targets, 0.01, "prob", 3, 0)
    ):
        want = matched_accuracy(src, tgt, 0.01, "prob", 3, 0)
        assert (got.per_run_columns["n_matched"] == 0).all()
        for column, values in want.per_run_columns.items():
            assert np.array_equal(values, got.per_run_columns[column], equal_nan=True), column
        assert np.isnan(got.matched_acc_source) and np.isnan(want.matched_acc_source)
