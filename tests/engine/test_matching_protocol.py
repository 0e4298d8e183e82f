"""Algorithm 1 / 2 of Anzaku et al. on cases small enough to work out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.matching import make_predictions, match_reference, match_runs, matched_accuracy
from lifelong_core.matching.protocol import _windows

# Source s0..s4 and target t0..t6 as (y, y_pred, p). With eps = 0.01 every draw is forced:
# each target has at most one still-available candidate when its turn comes.
SOURCE = [(0, 0, 0.90), (1, 0, 0.50), (1, 1, 0.70), (2, 1, 0.95), (3, 3, 0.80)]
TARGET = [
    (0, 0, 0.905),  # t0: label 0 near 0.90 -> s0
    (1, 1, 0.69),  # t1: label 1 near 0.70 -> s2
    (0, 1, 0.948),  # t2: label 1 near 0.95 -> s3 (t2 is wrong)
    (0, 0, 0.50),  # t3: label 0 at 0.50 -> s1
    (2, 2, 0.90),  # t4: no source predicts 2; by probability only s0 is near, but taken
    (1, 0, 0.90),  # t5: s0 already taken by t0 -> unmatched (exhaustion)
    (3, 0, 0.80),  # t6: label 0 has nothing left; by probability only -> s4
]


def preds(rows, name):
    y, yp, p = zip(*rows)
    return make_predictions(y, yp, p, name=name)


S = preds(SOURCE, "S")
T = preds(TARGET, "T")


def test_forced_label_prob_by_hand():
    (run,) = match_runs(S, T, eps=0.01, criterion="label-prob", runs=1, seed=0)
    assert run.tgt_matched.tolist() == [0, 1, 2, 3]
    assert run.src_matched.tolist() == [0, 2, 3, 1]
    assert run.tgt_unmatched.tolist() == [4, 5, 6]
    s = matched_accuracy(S, T, eps=0.01, criterion="label-prob", runs=3, seed=7)
    # source correct: s0 s2 s4 -> 3/5; target correct: t0 t1 t3 t4 -> 4/7
    assert s.acc_source == pytest.approx(3 / 5)
    assert s.acc_target == pytest.approx(4 / 7)
    assert s.matched_acc_source == pytest.approx(2 / 4)  # s0 s2 right, s3 s1 wrong
    assert s.matched_acc_target == pytest.approx(3 / 4)  # t2 wrong
    assert s.fraction_unmatched == pytest.approx(3 / 7)
    assert s.acc_unmatched == pytest.approx(1 / 3)  # t4 right, t5 t6 wrong
    assert s.n_matched == 4
    assert s.acc_diff == pytest.approx(3 / 5 - 4 / 7)
    assert s.matched_acc_diff == pytest.approx(-1 / 4)


def test_forced_prob_only_by_hand():
    (run,) = match_runs(S, T, eps=0.01, criterion="prob", runs=1, seed=0)
    assert run.tgt_matched.tolist() == [0, 1, 2, 3, 6]
    assert run.src_matched.tolist() == [0, 2, 3, 1, 4]
    assert run.tgt_unmatched.tolist() == [4, 5]
    s = matched_accuracy(S, T, eps=0.01, criterion="prob", runs=2, seed=1)
    assert s.matched_acc_source == pytest.approx(3 / 5)
    assert s.matched_acc_target == pytest.approx(3 / 5)
    assert s.fraction_unmatched == pytest.approx(2 / 7)
    assert s.acc_unmatched == pytest.approx(1 / 2)
    assert s.n_matched == 5


@pytest.mark.parametrize("criterion", ["label-prob", "prob"])
def test_forced_case_equals_reference_for_every_seed(criterion):
    for seed in range(20):
        fast = match_runs(S, T, eps=0.01, criterion=criterion, runs=1, seed=seed)[0]
        ref = match_reference(S, T, 0.01, criterion, np.random.default_rng(seed))
        assert fast.src_matched.tolist() == ref.src_matched.tolist()
        assert fast.tgt_matched.tolist() == ref.tgt_matched.tolist()
        assert fast.tgt_unmatched.tolist() == ref.tgt_unmatched.tolist()


def test_window_edges_are_closed():
    src = make_predictions([0, 0], [0, 0], [0.5, 0.25])
    # 0.75 = 0.5 + 0.25 exactly in binary: on the edge, so matched.
    tgt = make_predictions([0], [0], [0.75])
    assert match_runs(src, tgt, eps=0.25, runs=1)[0].src_matched.tolist() == [0]
    tgt = make_predictions([0], [0], [np.nextafter(0.75, 1.0)])
    assert match_runs(src, tgt, eps=0.25, runs=1)[0].n_matched == 0
    tgt = make_predictions([0], [0], [0.0])
    assert match_runs(src, tgt, eps=0.25, runs=1)[0].src_matched.tolist() == [1]


def test_eps_zero_matches_exact_twins_only():
    rng = np.random.default_rng(3)
    n = 300
    y = rng.integers(5, size=n)
    yp = np.where(rng.random(n) < 0.7, y, rng.integers(5, size=n))
    p = rng.permutation(np.linspace(0.2, 1.0, n))  # distinct values: each draw is forced
    src = make_predictions(y, yp, p)
    order = rng.permutation(n)
    tgt = make_predictions(y[order], yp[order], p[order])
    for criterion in ("label-prob", "prob"):
        s = matched_accuracy(src, tgt, eps=0.0, criterion=criterion, runs=2, seed=0)
        run = s.matches[0]
        assert run.tgt_unmatched.size == 0
        assert np.array_equal(run.src_matched, order[run.tgt_matched])
        assert s.matched_acc_source == pytest.approx(src.accuracy)
        assert s.matched_acc_target == pytest.approx(tgt.accuracy)
        assert math.isnan(s.acc_unmatched)  # nothing unmatched: undefined, not 0
        assert s.to_json_dict()["acc_unmatched"] is None
    # Shift every target probability a little: with eps = 0 nothing matches any more.
    shifted = make_predictions(y, yp, np.clip(p - 1e-9, 0, 1))
    s = matched_accuracy(src, shifted, eps=0.0, runs=2, seed=0)
    assert s.fraction_unmatched == 1.0 and s.n_matched == 0
    assert math.isnan(s.matched_acc_source) and math.isnan(s.matched_acc_target)
    assert s.acc_unmatched == pytest.approx(shifted.accuracy)
    d = s.to_json_dict()
    assert d["matched_acc_source"] is None and d["matched_acc_target"] is None


def test_eps_one_prob_only_takes_targets_in_turn():
    rng = np.random.default_rng(5)
    n_src, n_tgt = 40, 55
    src = make_predictions(
        rng.integers(3, size=n_src), rng.integers(3, size=n_src), rng.random(n_src)
    )
    tgt = make_predictions(
        rng.integers(3, size=n_tgt), rng.integers(3, size=n_tgt), rng.random(n_tgt)
    )
    for run in match_runs(src, tgt, eps=1.0, criterion="prob", runs=3, seed=2):
        # Every source datapoint is a candidate for every target: the first 40 targets
        # (processed in file order) use the whole source up, the last 15 find nothing.
        assert run.tgt_matched.tolist() == list(range(n_src))
        assert run.tgt_unmatched.tolist() == list(range(n_src, n_tgt))
        assert sorted(run.src_matched.tolist()) == list(range(n_src))
    s = matched_accuracy(src, tgt, eps=1.0, criterion="prob", runs=3, seed=2)
    assert s.matched_acc_source == pytest.approx(src.accuracy)  # all of the source
    assert s.matched_acc_target == pytest.approx(np.mean(tgt.correct[:n_src]))
    # Larger source: no target unmatched, matched target = whole target.
    s = matched_accuracy(tgt, src, eps=1.0, criterion="prob", runs=3, seed=2)
    assert s.fraction_unmatched == 0.0
    assert s.matched_acc_target == pytest.approx(src.accuracy)


def test_eps_one_label_prob_matches_min_count_per_label():
    rng = np.random.default_rng(8)
    src = make_predictions(rng.integers(4, size=60), rng.integers(4, size=60), rng.random(60))
    tgt = make_predictions(rng.integers(4, size=50), rng.integers(4, size=50), rng.random(50))
    (run,) = match_runs(src, tgt, eps=1.0, criterion="label-prob", runs=1, seed=0)
    for label in range(4):
        n_s = int(np.sum(src.y_pred == label))
        members = np.flatnonzero(tgt.y_pred == label)
        # The first min(n_s, n_t) targets with this label are matched, the rest are not.
        assert set(run.tgt_matched.tolist()) & set(members.tolist()) == set(members[:n_s].tolist())
    assert np.array_equal(src.y_pred[run.src_matched], tgt.y_pred[run.tgt_matched])


def test_source_without_some_predicted_label():
    src = make_predictions([0, 1, 1, 0], [0, 1, 1, 1], [0.9, 0.8, 0.7, 0.6])
    tgt = make_predictions([2, 2, 0, 2], [2, 2, 0, 2], [0.9, 0.8, 0.9, 0.7])
    s = matched_accuracy(src, tgt, eps=0.05, criterion="label-prob", runs=4, seed=0)
    for run in s.matches:  # label 2 is never predicted on the source
        assert run.tgt_unmatched.tolist() == [0, 1, 3]
        assert run.tgt_matched.tolist() == [2] and run.src_matched.tolist() == [0]
    assert s.fraction_unmatched == pytest.approx(3 / 4)
    assert s.acc_unmatched == 1.0
    # By probability only, the label does not matter: t0 -> s0 is taken, so t2 goes
    # unmatched; t1 -> s1, t3 -> s2.
    (run,) = match_runs(src, tgt, eps=0.05, criterion="prob", runs=1, seed=0)
    assert run.tgt_matched.tolist() == [0, 1, 3]
    assert run.src_matched.tolist() == [0, 1, 2]


def test_random_choice_is_not_forced_and_covers_both_candidates():
    src = make_predictions([0, 1], [0, 0], [0.50, 0.51])
    tgt = make_predictions([0], [0], [0.505])
    picks = [r.src_matched[0] for r in match_runs(src, tgt, eps=0.01, runs=400, seed=11)]
    share = np.mean(np.array(picks) == 0)
    assert 0.4 < share < 0.6  # Binomial(400, 1/2): 4.0 sd either side


def test_runs_are_reproducible_and_prefix_stable():
    rng = np.random.default_rng(0)
    src = make_predictions(rng.integers(3, size=200), rng.integers(3, size=200), rng.random(200))
    tgt = make_predictions(rng.integers(3, size=80), rng.integers(3, size=80), rng.random(80))
    a = match_runs(src, tgt, eps=0.05, runs=5, seed=4)
    b = match_runs(src, tgt, eps=0.05, runs=3, seed=4)
    for x, y in zip(a, b):
        assert np.array_equal(x.src_matched, y.src_matched)
    assert any(not np.array_equal(a[0].src_matched, r.src_matched) for r in a[1:])
    s = matched_accuracy(src, tgt, eps=0.05, runs=5, seed=4)
    assert s.per_run.shape[0] == 5
    assert s.matched_acc_source == pytest.approx(s.per_run["matched_acc_source"].mean())
    se = s.per_run["matched_acc_target"].std(ddof=1) / np.sqrt(5)
    assert s.standard_error("matched_acc_target") == pytest.approx(se)
    assert s.standard_error("matched_acc_target") > 0
    assert math.isnan(
        matched_accuracy(src, tgt, eps=0.05, runs=1).standard_error("matched_acc_source")
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(eps=-0.1), "epsilon"),
        (dict(eps=float("nan")), "epsilon"),
        (dict(runs=0), "runs"),
        (dict(criterion="label"), "criterion"),
        (dict(runs="ten"), "runs"),
        (dict(runs=2.5), "runs"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InputError, match=match):
        matched_accuracy(S, T, **kwargs)


# ------------------------------------------------------------------ properties
probs = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def instances(draw):
    n_src = draw(st.integers(1, 12))
    n_tgt = draw(st.integers(1, 12))
    grid = draw(st.sampled_from([None, 0.05, 0.1, 0.25]))

    def prob():
        if grid is None:
            return draw(probs)
        return draw(st.integers(0, round(1 / grid))) * grid

    labels = st.integers(0, 2)
    src = [(draw(labels), draw(labels), prob()) for _ in range(n_src)]
    tgt = [(draw(labels), draw(labels), prob()) for _ in range(n_tgt)]
    # Targets sitting exactly on window edges of some source, to stress the float ties.
    eps = draw(st.sampled_from([0.0, 0.05, 0.1, 0.3, 1.0]))
    for _k in range(draw(st.integers(0, 3))):
        y, yp, p = src[draw(st.integers(0, n_src - 1))]
        tgt.append((y, yp, min(1.0, max(0.0, p + draw(st.sampled_from([-eps, eps]))))))
    return preds(src, "S"), preds(tgt, "T"), eps


@settings(max_examples=150, deadline=None)
@given(instances(), st.sampled_from(["label-prob", "prob"]))
def test_windows_equal_the_paper_predicate(inst, criterion):
    src, tgt, eps = inst
    win = _windows(src, tgt, eps, criterion)
    for i in range(len(tgt)):
        got = set(win.order[win.lo[i] : win.hi[i]].tolist())
        want = {
            s
            for s in range(len(src))
            if (criterion == "prob" or src.y_pred[s] == tgt.y_pred[i])
            and src.p[s] - eps <= tgt.p[i] <= src.p[s] + eps
        }
        assert got == want


@settings(max_examples=150, deadline=None)
@given(instances(), st.sampled_from(["label-prob", "prob"]), st.integers(0, 2**31))
def test_outcome_is_a_valid_run_of_the_algorithm(inst, criterion, seed):
    src, tgt, eps = inst
    (run,) = match_runs(src, tgt, eps=eps, criterion=criterion, runs=1, seed=seed)
    assert len(set(run.src_matched.tolist())) == run.n_matched  # without replacement
    assert sorted(run.tgt_matched.tolist() + run.tgt_unmatched.tolist()) == list(range(len(tgt)))
    pair = dict(zip(run.tgt_matched.tolist(), run.src_matched.tolist()))
    used: set[int] = set()
    for i in range(len(tgt)):  # replay the targets in turn
        cands = {
            s
            for s in range(len(src))
            if s not in used
            and (criterion == "prob" or src.y_pred[s] == tgt.y_pred[i])
            and src.p[s] - eps <= tgt.p[i] <= src.p[s] + eps
        }
        if i in pair:
            assert pair[i] in cands
            used.add(pair[i])
        else:
            assert not cands  # unmatched only if nothing was left to take


@st.composite
def forced_instances(draw):
    # Distinct source probabilities and eps = 0: every window holds at most one source
    # datapoint, so each draw is forced and both implementations must agree exactly.
    n_src = draw(st.integers(1, 10))
    ps = draw(st.lists(st.integers(0, 20), min_size=n_src, max_size=n_src, unique=True))
    labels = st.integers(0, 2)
    src = [(draw(labels), draw(labels), v / 20) for v in ps]
    n_tgt = draw(st.integers(1, 12))
    tgt = [(draw(labels), draw(labels), draw(st.integers(0, 20)) / 20) for _ in range(n_tgt)]
    return preds(src, "S"), preds(tgt, "T")


@settings(max_examples=100, deadline=None)
@given(forced_instances(), st.sampled_from(["label-prob", "prob"]), st.integers(0, 2**31))
def test_forced_draws_equal_reference(inst, criterion, seed):
    src, tgt = inst
    (fast,) = match_runs(src, tgt, eps=0.0, criterion=criterion, runs=1, seed=seed)
    ref = match_reference(src, tgt, 0.0, criterion, np.random.default_rng(seed + 1))
    assert fast.src_matched.tolist() == ref.src_matched.tolist()
    assert fast.tgt_matched.tolist() == ref.tgt_matched.tolist()
    assert fast.tgt_unmatched.tolist() == ref.tgt_unmatched.tolist()
