"""The Fenwick-tree matcher and the plain transcription draw from the same distribution.

The exact outcome distribution of a small instance is enumerated here independently of
both implementations (a probability tree over the targets in turn); each implementation's
observed frequencies over many seeded runs must fit it (chi-square goodness of fit), and
summary statistics on a larger random instance must agree between the two.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from lifelong_core.matching import make_predictions, match_reference, match_runs, run_table

# Overlapping windows with eps = 0.1 (no value within 0.01 of a window edge): targets
# have 2-3 candidates, an early draw changes what later targets can take, and outcome
# probabilities differ (1/4, 1/6, 1/12, ...), so a wrong sampler cannot fit by symmetry.
SRC = [(0, 0, 0.50), (1, 0, 0.58), (0, 0, 0.66), (1, 1, 0.74), (0, 1, 0.90)]
TGT = [(0, 0, 0.55), (0, 0, 0.65), (1, 0, 0.52), (1, 1, 0.82), (0, 1, 0.70)]
EPS = 0.1


def preds(rows):
    y, yp, p = zip(*rows)
    return make_predictions(y, yp, p)


def exact_distribution(src, tgt, eps, criterion):
    """P(outcome) where outcome[i] = source index matched to target i, or -1."""
    out: dict[tuple, Fraction] = {}

    def walk(i, available, prefix, prob):
        if i == len(tgt):
            out[prefix] = out.get(prefix, Fraction(0)) + prob
            return
        _, yp_t, p_t = tgt[i]
        cands = [
            s
            for s in sorted(available)
            if (criterion == "prob" or src[s][1] == yp_t)
            and src[s][2] - eps <= p_t <= src[s][2] + eps
        ]
        if not cands:
            walk(i + 1, available, prefix + (-1,), prob)
            return
        for s in cands:
            walk(i + 1, available - {s}, prefix + (s,), prob / len(cands))

    walk(0, frozenset(range(len(src))), (), Fraction(1))
    return out


def outcome(run, n_tgt):
    res = [-1] * n_tgt
    for s, t in zip(run.src_matched.tolist(), run.tgt_matched.tolist()):
        res[t] = s
    return tuple(res)


# Ties and exact window edges (0.5 + 0.05 <= 0.55 and 0.6 - 0.05 <= 0.55 both hold in
# float64): every window then spans several equal probabilities and both neighbours.
TIES_SRC = [(0, 0, 0.5), (1, 0, 0.5), (0, 1, 0.5), (1, 1, 0.6), (0, 0, 0.6)]
TIES_TGT = [(0, 0, 0.5), (1, 0, 0.55), (0, 1, 0.5), (1, 1, 0.6), (0, 0, 0.5)]
INSTANCES = {"overlapping": (SRC, TGT, EPS), "ties": (TIES_SRC, TIES_TGT, 0.05)}


@pytest.mark.parametrize("criterion", ["label-prob", "prob"])
@pytest.mark.parametrize("instance", sorted(INSTANCES))
def test_both_implementations_fit_the_exact_distribution(instance, criterion):
    src_rows, tgt_rows, eps = INSTANCES[instance]
    src, tgt = preds(src_rows), preds(tgt_rows)
    exact = exact_distribution(src_rows, tgt_rows, eps, criterion)
    assert sum(exact.values()) == 1
    assert len(exact) >= 4  # the instance really is random
    if instance == "overlapping":
        assert len(set(exact.values())) >= 2  # and not uniform, so symmetry cannot pass it
    support = sorted(exact)
    expected = np.array([float(exact[o]) for o in support])
    n = 4000
    fast = Counter(
        outcome(r, len(tgt))
        for r in match_runs(src, tgt, eps=eps, criterion=criterion, runs=n, seed=123)
    )
    rng = np.random.default_rng(456)
    ref = Counter(
        outcome(match_reference(src, tgt, eps, criterion, rng), len(tgt)) for _ in range(n)
    )
    for counts in (fast, ref):
        assert set(counts) <= set(support)  # never an impossible outcome
        observed = np.array([counts.get(o, 0) for o in support])
        assert stats.chisquare(observed, expected * n).pvalue > 1e-4
    table = np.array([[fast.get(o, 0) for o in support], [ref.get(o, 0) for o in support]])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-4


def test_summaries_agree_on_a_larger_random_instance():
    rng = np.random.default_rng(9)
    n_src, n_tgt, k = 80, 60, 3

    def gen(n, shift):
        y = rng.integers(k, size=n)
        p = np.clip(rng.beta(4, 2, size=n) - shift, 1 / k, 1)
        yp = np.where(rng.random(n) < p, y, (y + 1) % k)
        return make_predictions(y, yp, p)

    src, tgt = gen(n_src, 0.0), gen(n_tgt, 0.1)
    runs = 300
    fast = run_table(src, tgt, match_runs(src, tgt, eps=0.03, runs=runs, seed=1))
    ref_rng = np.random.default_rng(2)
    ref = run_table(
        src, tgt, [match_reference(src, tgt, 0.03, "label-prob", ref_rng) for _ in range(runs)]
    )
    for col in ("matched_acc_source", "matched_acc_target", "n_matched"):
        a, b = fast[col].to_numpy(), ref[col].to_numpy()
        if a.std() == 0 and b.std() == 0:
            assert a[0] == b[0]
        else:
            assert stats.ks_2samp(a, b, method="asymp").pvalue > 1e-4, col
    assert fast["n_matched"].std() > 0  # greedy order effects make n_matched random here


def test_the_fit_test_rejects_a_plausible_wrong_sampler():
    # "Pick a random window slot; if taken, walk right to the next free one" is a tempting
    # shortcut that favours datapoints right of removed ones. The same check must reject it.
    exact = exact_distribution(SRC, TGT, EPS, "prob")
    support = sorted(exact)
    rng = np.random.default_rng(3)
    p_src = [r[2] for r in SRC]
    order = sorted(range(len(SRC)), key=lambda s: p_src[s])
    counts: Counter = Counter()
    n = 4000
    for _ in range(n):
        taken: set[int] = set()
        res = []
        for _, _, p_t in TGT:
            window = [s for s in order if p_src[s] - EPS <= p_t <= p_src[s] + EPS]
            free = [s for s in window if s not in taken]
            if not free:
                res.append(-1)
                continue
            k = int(rng.integers(len(window)))
            while window[k] in taken:
                k = (k + 1) % len(window)
            taken.add(window[k])
            res.append(window[k])
        counts[tuple(res)] += 1
    observed = np.array([counts.get(o, 0) for o in support])
    assert stats.chisquare(observed, np.array([float(exact[o]) for o in support]) * n).pvalue < 1e-6
