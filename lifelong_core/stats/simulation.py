"""The simulation study of the LA-UR-24-25289 report (2024) §2.2 (two models, three tasks, Table 1).

Table 1's counts survive in the text; the test-set sizes, the true accuracies and the
hyper-prior parameters do not. The values chosen here are consistent with what
survives: task 1 is small (so its sampling noise dominates the bootstrap), tasks 2 and
3 are large, and every hyper-prior is a normal truncated at 0 whose mean is 20 standard
deviations above 0, with ``a + b`` = 4,000 prior counts.

* test-set sizes: 200, 10,000, 20,000 (so Table 1's counts are accuracies
  0.500 / 0.575 on task 1 and 0.5 / 0.5 on tasks 2 and 3);
* truth: ``p_A = (0.5, 0.5, 0.5)``, ``p_B = (0.575, 0.5, 0.5)``, so B is better;
* priors: model A ``a ~ N(1400, 70)``, ``b ~ N(2600, 130)`` (prior mean accuracy 0.35);
  model B ``a ~ N(2600, 130)``, ``b ~ N(1400, 70)`` (prior mean 0.65).

What this shows (the Rankings guide of the documentation): the bootstrap 95% interval of ``mean_A - mean_B``
contains 0, the hierarchical model's credible interval is strictly negative. It also
shows where that comes from: with the same prior for both models (both centred on 0.5)
the credible interval contains 0 as well, because tasks 2 and 3 pin both models' hyper
means near 0.5 and shrink task 1 towards the same value. The strictly negative interval
needs prior knowledge that B is the better model, encoded in the model-specific priors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lifelong_core.stats.bhm import Prior, fit_hierarchical
from lifelong_core.stats.bootstrap import bootstrap, percentile_interval
from lifelong_core.stats.counts import CountTable

TEST_SIZES = (200, 10_000, 20_000)
TABLE1_CORRECT = {"Model A": (100, 5000, 10000), "Model B": (115, 5000, 10000)}
TRUE_P = {"Model A": (0.5, 0.5, 0.5), "Model B": (0.575, 0.5, 0.5)}
PRIOR_COUNTS = 4000.0
SD_FRACTION = 1.0 / 20.0  # each prior mean is 20 standard deviations above 0


def informative_priors(prior_mean: float, counts: float = PRIOR_COUNTS) -> tuple[Prior, Prior]:
    """Truncated-normal priors for ``a`` and ``b`` centred on ``prior_mean`` with ``counts`` in total."""
    a = prior_mean * counts
    b = (1.0 - prior_mean) * counts
    return Prior.normal(a, a * SD_FRACTION), Prior.normal(b, b * SD_FRACTION)


PRIOR_MEANS = {"Model A": 0.35, "Model B": 0.65}


def table1() -> CountTable:
    """Table 1's counts with the test-set sizes chosen here."""
    models = tuple(TABLE1_CORRECT)
    return CountTable(
        models=models,
        tasks=("Task 1", "Task 2", "Task 3"),
        task_category=("QA", "QA", "QA"),
        correct=np.array([TABLE1_CORRECT[m] for m in models], dtype=np.int64),
        total=np.array([TEST_SIZES] * len(models), dtype=np.int64),
    )


@dataclass(frozen=True)
class SimulationResult:
    """95% intervals of ``mean_A - mean_B`` (unweighted mean over the three tasks)."""

    bootstrap: tuple[float, float, float]
    hierarchical: tuple[float, float, float]
    prior_means: tuple[float, float]
    max_rhat: float
    min_ess: float


def simulation_study(
    seed: int = 0,
    n_boot: int = 4000,
    chains: int = 4,
    draws: int = 2000,
    prior_means: tuple[float, float] = (PRIOR_MEANS["Model A"], PRIOR_MEANS["Model B"]),
) -> SimulationResult:
    """Bootstrap and hierarchical 95% intervals for the two-model, three-task comparison of
    LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for Aggregate Performance
    Metrics in Machine Learning Benchmarks*, §2.2, Table 1.

    Parameters
    ----------
    seed : int
        Seed of the bootstrap and of the chains.
    n_boot : int
        Bootstrap replicates.
    chains, draws : int
        Chains and draws kept per chain of the hierarchical fit.
    prior_means : tuple of float
        Prior means of the two models' accuracies (informative priors).

    Returns
    -------
    SimulationResult
    """
    table = table1()
    agg = bootstrap(table, n_boot=n_boot, seed=seed).aggregate()
    boot = percentile_interval(agg[:, 0] - agg[:, 1], 0.95)
    pa, pb = zip(*(informative_priors(m) for m in prior_means))
    fit = fit_hierarchical(
        table, prior_a=list(pa), prior_b=list(pb), chains=chains, draws=draws, seed=seed
    )
    diag = fit.diagnostics()
    model_a, model_b = table.models  # Table 1 compares two models
    boot_mean, boot_lo, boot_hi = (float(v) for v in boot)
    mean_a, mean_b = prior_means
    return SimulationResult(
        bootstrap=(boot_mean, boot_lo, boot_hi),
        hierarchical=fit.difference_interval(model_a, model_b, level=0.95),
        prior_means=(float(mean_a), float(mean_b)),
        max_rhat=float(diag["rhat"].max()),
        min_ess=float(diag["ess"].min()),
    )
