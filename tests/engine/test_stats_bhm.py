"""Beta-binomial hierarchical model (LA-UR-24-25289 report, 2024, §2.2) and the simulation study of Table 1."""

from __future__ import annotations

import numpy as np
import pytest

from lifelong_core.errors import InputError
from lifelong_core.stats import CountTable, Prior, fit_hierarchical
from lifelong_core.stats.bhm import _slice_sample
from lifelong_core.stats.simulation import TEST_SIZES, informative_priors, simulation_study, table1


@pytest.mark.slow
def test_simulation_study_reproduces_the_papers_finding():
    res = simulation_study(seed=0, draws=1000)
    _mean, lo, hi = res.bootstrap
    assert lo < 0 < hi, "the bootstrap interval should contain 0 (paper: (-0.059, 0.097))"
    _mean, lo, hi = res.hierarchical
    assert hi < 0, (
        "the hierarchical credible interval should be strictly negative (paper: (-0.021, -0.003))"
    )
    assert res.max_rhat < 1.05 and res.min_ess > 400


def test_simulation_choices_match_what_the_text_keeps():
    t = table1()
    assert t.correct.tolist() == [[100, 5000, 10000], [115, 5000, 10000]]
    assert t.total[0].tolist() == list(TEST_SIZES)
    for prior in informative_priors(0.35) + informative_priors(0.65):
        assert prior.loc / prior.scale == pytest.approx(20.0)
    a, b = informative_priors(0.35)
    assert a.loc + b.loc == pytest.approx(4000)


def test_same_prior_for_both_models_does_not_separate_them():
    # Without prior knowledge that B is better, shrinkage alone leaves 0 inside.
    _, lo, hi = simulation_study(seed=0, n_boot=200, draws=500, prior_means=(0.5, 0.5)).hierarchical
    assert lo < 0 < hi


def test_posterior_follows_large_tasks_and_shrinks_small_ones():
    # Model 0: four big tasks near 0.8 and one tiny task at 0.2 (1 of 5).
    t = CountTable(
        models=("m0", "m1"),
        tasks=tuple("abcde"),
        task_category=("c",) * 5,
        correct=np.array([[8000, 7900, 8100, 8050, 1], [5000, 5100, 4900, 5000, 4]]),
        total=np.array([[10000] * 4 + [5]] * 2),
    )
    fit = fit_hierarchical(t, chains=3, draws=600, warmup=300, seed=1)
    post = fit.p.mean(axis=(0, 1))
    assert np.allclose(post[:, :4], t.accuracy[:, :4], atol=0.01)
    # The tiny task (1 of 5) is pulled from 0.2 to near the model's 0.80.
    assert 0.5 < post[0, 4] < 0.81
    assert fit.diagnostics()["rhat"].max() < 1.05
    probs = fit.rank_probabilities()
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert probs.loc["m0", 1] > 0.99
    iv = fit.aggregate_intervals(level=0.834).query("scope == 'overall'").set_index("model")
    assert (iv["lo"] < iv["mean"]).all() and (iv["mean"] < iv["hi"]).all()


def test_slice_sampler_targets_the_right_density():
    # Independent standard normals in parallel: moments of many slice steps.
    rng = np.random.default_rng(0)
    x = np.zeros(4000)
    for _ in range(30):
        x = _slice_sample(x, lambda u: -0.5 * u**2, rng)
    assert x.mean() == pytest.approx(0.0, abs=0.06)
    assert x.std() == pytest.approx(1.0, abs=0.06)


def test_prior_validation():
    with pytest.raises(InputError, match="positive standard deviation"):
        Prior.normal(1.0, 0.0)
    with pytest.raises(InputError, match="low < high"):
        Prior.uniform(5.0, 1.0)
    with pytest.raises(InputError, match="has 3 priors but the data has 2 models"):
        fit_hierarchical(table1(), prior_a=[Prior.uniform(0, 10)] * 3, draws=5, warmup=0)
    assert np.isneginf(Prior.normal(10, 1).logpdf(np.array([-1.0]))[0])
