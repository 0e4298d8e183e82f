"""Hand-checked cases and invariants of lifelong_core.stats (bootstrap, ranks, weighting, diagnostics)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.stats import (
    CountTable,
    bootstrap,
    category_stats,
    category_task_weights,
    effective_sample_size,
    from_frame,
    leaderboard,
    normalize,
    pairwise_differences,
    rank_intervals,
    read_counts_csv,
    simplex_grid,
    split_rhat,
    weight_regions,
)
from lifelong_core.stats.ranks import scheme_values


def make_table(correct, total, categories=None, models=None):
    correct = np.asarray(correct, dtype=np.int64)
    total = np.broadcast_to(np.asarray(total, dtype=np.int64), correct.shape).copy()
    m, t = correct.shape
    return CountTable(
        models=tuple(models or [f"m{i}" for i in range(m)]),
        tasks=tuple(f"t{j}" for j in range(t)),
        task_category=tuple(categories or ["c"] * t),
        correct=correct,
        total=total,
    )


# ------------------------------------------------------------------ counts validation
GOOD = pd.DataFrame(
    {
        "model": ["A", "A", "B", "B"],
        "task": ["x", "y", "x", "y"],
        "category": ["c1", "c2", "c1", "c2"],
        "correct": ["3", "4", "5", "6"],
        "total": ["10", "10", "10", "10"],
    }
)


def test_from_frame_pivots_rows_into_arrays():
    t = from_frame(GOOD)
    assert t.models == ("A", "B") and t.tasks == ("x", "y") and t.categories == ("c1", "c2")
    assert t.correct.tolist() == [[3, 4], [5, 6]]
    assert t.to_frame()["correct"].tolist() == [3, 4, 5, 6]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.drop(columns="total"), "missing column(s) 'total'"),
        (
            lambda d: d.assign(correct=["3", "11", "5", "6"]),
            "line 3: correct (11) is larger than total (10)",
        ),
        (
            lambda d: d.assign(correct=["3", "-1", "5", "6"]),
            "line 3, column 'correct': '-1' is negative",
        ),
        (
            lambda d: d.assign(total=["10", "10", "9.5", "10"]),
            "line 4, column 'total': '9.5' is not a whole number",
        ),
        (
            lambda d: d.assign(correct=["3", "4", "abc", "6"]),
            "line 4, column 'correct': 'abc' is not a whole number",
        ),
        (
            lambda d: d.assign(task=["x", "y", "x", "x"]),
            "line 5: model 'B' on task 'x' appears twice (first at line 4)",
        ),
        (lambda d: d.iloc[:3], "model 'B' has no row for task 'y'"),
        (lambda d: d.assign(category=["c1", "c2", "c9", "c2"]), "task 'x' is in category 'c9'"),
        (
            lambda d: d.assign(model=["A", "", "B", "B"]),
            "line 3, column 'model': the value is empty",
        ),
        (lambda d: d.assign(total=["10", "0", "10", "10"]), "at least one test instance"),
        (lambda d: d.iloc[:0], "has no rows"),
    ],
)
def test_bad_counts_raise_one_sentence(edit, message):
    with pytest.raises(InputError) as exc:
        from_frame(edit(GOOD.copy()), source="counts.csv", line_offset=2)
    text = str(exc.value)
    assert message in text
    assert "\n" not in text and text.startswith("counts.csv")


def test_subset_names_an_unknown_model_or_task():
    t = make_table([[1, 2], [3, 4]], 5)
    assert t.subset(models=["m1"], tasks=["t1", "t0"]).correct.tolist() == [[4, 3]]
    with pytest.raises(InputError, match="no model 'zz'"):
        t.subset(models=["m0", "zz"])
    with pytest.raises(InputError, match="no task 'zz'"):
        t.subset(tasks=["zz"])


def test_read_counts_csv_names_file_lines(tmp_path):
    path = tmp_path / "counts.csv"
    GOOD.assign(correct=["3", "4", "5", "60"]).to_csv(path, index=False)
    with pytest.raises(
        InputError, match=r"counts.csv line 5: correct \(60\) is larger than total \(10\)"
    ):
        read_counts_csv(path)
    with pytest.raises(InputError, match="does not exist"):
        read_counts_csv(tmp_path / "missing.csv")


# ------------------------------------------------------------------ bootstrap
def test_binomial_bootstrap_matches_resampling_moments():
    # Resampling n instances of which c are correct: mean c/n, variance p(1-p)/n.
    t = make_table([[30]], [120])
    s = bootstrap(t, n_boot=20000, seed=1).scores[:, 0, 0]
    p = 0.25
    assert s.mean() == pytest.approx(p, abs=0.002)
    assert s.var() == pytest.approx(p * (1 - p) / 120, rel=0.05)
    # Every replicate accuracy is k / n for a whole k.
    assert np.allclose(s * 120, np.round(s * 120))


def test_all_or_nothing_tasks_have_no_bootstrap_spread():
    t = make_table([[0, 10], [10, 10]], 10, ["a", "b"])
    board = leaderboard(bootstrap(t, n_boot=50, seed=0))
    assert np.allclose(board["lo"], board["hi"])
    overall = board[board.scope == "overall"].set_index("model")["mean"]
    assert overall["m0"] == 0.5 and overall["m1"] == 1.0


def test_wider_level_gives_wider_interval_and_seed_reproduces():
    t = make_table([[40, 70], [45, 60]], 100)
    b = bootstrap(t, n_boot=500, seed=3)
    narrow = leaderboard(b, level=0.834)
    wide = leaderboard(b, level=0.95)
    assert (wide["lo"] <= narrow["lo"]).all() and (wide["hi"] >= narrow["hi"]).all()
    again = leaderboard(bootstrap(t, n_boot=500, seed=3), level=0.834)
    pd.testing.assert_frame_equal(narrow, again)


def test_pairwise_bonferroni_level_and_sign():
    t = make_table([[900, 900], [500, 500], [100, 100]], 1000)
    d = pairwise_differences(bootstrap(t, n_boot=300, seed=0), level=0.95)
    assert len(d) == 3
    assert d["level"].iloc[0] == pytest.approx(1 - 0.05 / 3)
    assert d["excludes_zero"].all() and (d["diff"] > 0).all()
    plain = pairwise_differences(bootstrap(t, n_boot=300, seed=0), level=0.95, bonferroni=False)
    assert plain["level"].iloc[0] == pytest.approx(0.95)


def test_category_weights_spread_over_tasks():
    t = make_table([[1, 1, 1]], 2, ["a", "a", "b"])
    w = category_task_weights(t, {"a": 0.5, "b": 0.5})
    assert w.tolist() == [0.25, 0.25, 0.5]
    with pytest.raises(InputError, match="'zzz'"):
        category_task_weights(t, {"zzz": 1.0})


def test_normalisation_uses_replicate_extremes():
    t = make_table([[20, 5], [80, 5]], [[100, 5], [100, 5]])
    b = bootstrap(t, n_boot=200, seed=0)
    nb = normalize(b)
    lo, hi = b.scores[:, :, 0].min(), b.scores[:, :, 0].max()
    assert nb.low[0] == lo and nb.high[0] == hi
    assert np.allclose(nb.scores[:, :, 0], (b.scores[:, :, 0] - lo) / (hi - lo))
    # The second task: every replicate of every model is 100%, so it is neutral (1).
    assert np.all(nb.scores[:, :, 1] == 1.0)
    assert nb.scores.min() == 0.0 and nb.scores.max() == 1.0


def test_bootstrap_refuses_one_normalisation_bound_without_the_other():
    b = bootstrap(make_table([[20, 5], [80, 5]], 100), n_boot=50, seed=0)
    with pytest.raises(InputError, match="both low and high"):
        replace(b, low=np.zeros(2))
    assert not replace(b, low=None, high=None).normalized


# ------------------------------------------------------------------ ranks
def test_rank_schemes_on_a_hand_checked_case():
    # Deterministic 0/1 task scores: X=(1,1,0), Y=(1,0,0), Z=(0,1,1); ties take the max rank.
    scores = np.array([[[1, 1, 0], [1, 0, 0], [0, 1, 1]]], dtype=float)
    rng = np.random.default_rng(0)
    assert scheme_values(scores, "mean", rng)[0].tolist() == [2, 3, 2]
    assert scheme_values(scores, "geometric", rng)[0].tolist() == [3, 3, 3]
    expected = [7 / 3, 8 / 3, 2.0]
    assert np.allclose(scheme_values(scores, "avg_rank", rng)[0], expected)
    assert np.allclose(scheme_values(scores, "avg_rank_bins", rng)[0], expected)
    # N(0, 1) noise (in points) breaks the ties at random but never a 100-point gap,
    # so ranks are a permutation per task and Z stays first on task 3.
    noisy = scheme_values(np.repeat(scores, 200, axis=0), "avg_rank_noise", rng)
    assert np.allclose(noisy.sum(axis=1), 6.0)
    assert noisy[:, 1].min() >= (1 + 3 + 2) / 3 and noisy[:, 1].max() <= (2 + 3 + 3) / 3
    assert len(np.unique(noisy[:, 0])) > 1


def test_bins_tie_models_within_one_point():
    scores = np.array([[[0.571, 0.9], [0.579, 0.5], [0.561, 0.1]]])
    v = scheme_values(scores, "avg_rank_bins", np.random.default_rng(0))[0]
    # Task 1: 57.1 and 57.9 share the 57 bin (rank 2 each), 56.1 is third.
    assert np.allclose(v, [(2 + 1) / 2, (2 + 2) / 2, (3 + 3) / 2])


def test_rank_intervals_frame_and_unknown_scheme():
    t = make_table([[90, 80], [50, 40], [10, 20]], 100)
    r = rank_intervals(bootstrap(t, n_boot=100, seed=0).scores, t.models)
    assert set(r["scheme"]) == {"mean", "geometric", "avg_rank", "avg_rank_noise", "avg_rank_bins"}
    means = r[r.scheme == "mean"].set_index("model")["mean"]
    assert means.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(InputError, match="unknown rank scheme"):
        rank_intervals(np.zeros((2, 3, 2)), t.models, schemes=["median"])


def test_rank_intervals_refuse_one_string_of_schemes():
    # A string is a sequence of letters: "mean" used to be read as the schemes m, e, a, n.
    t = make_table([[90, 80], [50, 40]], 100)
    with pytest.raises(InputError, match="not one string"):
        rank_intervals(bootstrap(t, n_boot=50, seed=0).scores, t.models, schemes="mean")


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(1, 5), st.integers(0, 2**16))
def test_average_ranks_without_ties_average_to_middle(m, t, seed):
    rng = np.random.default_rng(seed)
    scores = rng.random((3, m, t))
    v = scheme_values(scores, "avg_rank", rng)
    assert np.allclose(v.mean(axis=1), (m + 1) / 2)
    ranks = scheme_values(scores, "mean", rng)
    assert sorted(ranks[0].tolist()) == list(range(1, m + 1))


# ------------------------------------------------------------------ task weighting
def test_simplex_grid_counts_and_sums():
    g = simplex_grid(0.25)
    assert len(g) == 15 and np.allclose(g.sum(axis=1), 1.0)
    assert len(simplex_grid(0.01)) == 101 * 102 // 2
    assert g[0].tolist() == [0.0, 0.0, 1.0] and g[-1].tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(InputError, match="divide 1 evenly"):
        simplex_grid(0.3)


def test_weight_regions_hand_checked_standard_error():
    # One task per category; P best on a, Q on b, R on c.
    t = make_table(
        [[900, 500, 500], [500, 800, 500], [500, 500, 700]],
        [[1000, 1000, 1000]] * 3,
        ["a", "b", "c"],
        ["P", "Q", "R"],
    )
    stats = category_stats(t)
    reg = weight_regions(stats, step=0.5, se_mult=1.0, rho=0.0)
    df = reg.to_frame().set_index(["a", "b", "c"])
    assert df.loc[(1.0, 0.0, 0.0), "winner"] == "P"
    assert df.loc[(0.0, 1.0, 0.0), "winner"] == "Q"
    assert df.loc[(0.0, 0.0, 1.0), "winner"] == "R"
    # Point (0.5, 0.5, 0): P = 0.5*0.9 + 0.5*0.5 = 0.70, Q = 0.5*0.5 + 0.5*0.8 = 0.65.
    row = df.loc[(0.5, 0.5, 0.0)]
    assert row["winner"] == "P" and row["runner_up"] == "Q"
    assert row["diff"] == pytest.approx(0.05)
    var_p = 0.25 * (0.9 * 0.1 / 1000) + 0.25 * (0.25 / 1000)
    var_q = 0.25 * (0.25 / 1000) + 0.25 * (0.8 * 0.2 / 1000)
    assert row["se"] == pytest.approx(np.sqrt(var_p + var_q))
    # Eq. 3 with rho: the SE shrinks; a huge k makes every point indeterminate.
    corr = (
        weight_regions(stats, step=0.5, rho=0.5)
        .to_frame()
        .set_index(["a", "b", "c"])
        .loc[(0.5, 0.5, 0.0)]
    )
    assert corr["se"] == pytest.approx(np.sqrt(var_p + var_q - np.sqrt(var_p * var_q)))
    assert (weight_regions(stats, step=0.5, se_mult=1e6).winner == "indeterminate").all()


def test_weighting_requires_three_categories():
    t = make_table([[1, 1], [1, 1]], 2, ["a", "b"])
    with pytest.raises(InputError, match="exactly three categories, but the data has 2"):
        category_stats(t)
    four = make_table([[1, 1, 1, 1]] * 2, 2, ["a", "b", "c", "d"])
    assert category_stats(four, ["d", "b", "a"]).categories == ("d", "b", "a")


# ------------------------------------------------------------------ diagnostics
def test_rhat_and_ess_on_known_chains():
    rng = np.random.default_rng(0)
    iid = rng.standard_normal((4, 2000))
    assert split_rhat(iid) == pytest.approx(1.0, abs=0.01)
    assert effective_sample_size(iid) == pytest.approx(8000, rel=0.15)
    shifted = iid + np.array([0, 0, 0, 3.0])[:, None]
    assert split_rhat(shifted) > 1.3
    # AR(1) with phi = 0.9: ESS ~ n (1 - phi) / (1 + phi).
    ar = np.zeros((4, 4000))
    eps = rng.standard_normal(ar.shape)
    for i in range(1, ar.shape[1]):
        ar[:, i] = 0.9 * ar[:, i - 1] + eps[:, i]
    assert effective_sample_size(ar) == pytest.approx(16000 * 0.1 / 1.9, rel=0.3)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(2, 7), st.sampled_from([1, 2, 4, 5, 10]), st.floats(0.0, 1.0), st.integers(0, 2**16)
)
def test_weight_regions_agree_with_brute_force(m, per_unit, rho, seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(20, 2000, size=(m, 3))
    t = make_table(rng.binomial(n, rng.random((m, 3))), n, ["a", "b", "c"])
    reg = weight_regions(category_stats(t), step=1.0 / per_unit, se_mult=1.0, rho=rho)
    acc = t.accuracy
    for w, lead, second, diff, se in zip(reg.weights, reg.leader, reg.runner_up, reg.diff, reg.se):
        score = acc @ w
        assert score[lead] == pytest.approx(score.max())
        assert score[second] == pytest.approx(np.sort(score)[-2])
        assert diff >= 0 and se >= 0
        v = (acc * (1 - acc) / t.total) @ (w**2)
        expected = v[lead] + v[second] - 2 * rho * np.sqrt(v[lead] * v[second])
        assert se == pytest.approx(np.sqrt(max(expected, 0.0)), abs=1e-12)
    assert len(reg.weights) == (per_unit + 1) * (per_unit + 2) // 2


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**16))
def test_bootstrap_replicates_are_counts_over_sizes(m, t, seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 300, size=(m, t))
    table = make_table(rng.binomial(n, 0.6), n)
    boot = bootstrap(table, n_boot=40, seed=seed)
    assert boot.scores.shape == (40, m, t)
    k = boot.scores * n
    assert np.allclose(k, np.round(k)) and (boot.scores >= 0).all() and (boot.scores <= 1).all()
    board = leaderboard(boot, level=0.9)
    assert (board["lo"] <= board["mean"] + 1e-12).all() and (
        board["mean"] <= board["hi"] + 1e-12
    ).all()
