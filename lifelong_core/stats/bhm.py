"""Beta-binomial Bayesian hierarchical model of benchmark counts (LA-UR-24-25289 report, 2024, §2.2).

Model, for model ``i`` and task ``t``::

    y[i, t] ~ Binomial(n[i, t], p[i, t])
    p[i, t] ~ Beta(a[i], b[i])
    a[i] ~ prior_a[i],  b[i] ~ prior_b[i]      (independent)

so each model's task accuracies are shrunk towards that model's grand mean, more so on
tasks with few test items. Sampling is Gibbs, as in §2.2: ``p`` given everything else is
``Beta(a + y, b + n - y)`` by conjugacy, and ``a`` and ``b`` are each updated by a
slice-sampling step (Neal 2003, stepping out and shrinkage). Departures from the text:
the slice sampler works on ``log a`` and ``log b`` (with the Jacobian), which keeps its
step width sensible from counts of 1 to counts of thousands; a third slice step moves
the concentration ``a + b`` at a fixed mean ``a / (a + b)`` (when the tasks pin the
mean, ``a`` and ``b`` are so correlated that one-at-a-time steps barely move; R-hat
showed it); and all models and all chains are updated in one vectorised step, which is
exact because, given ``p``, the hyper-parameters of different models are conditionally
independent.

The paper's hyper-prior for VTAB did not survive in the text; the default here is flat
on (0, 10,000) for every ``a[i]`` and ``b[i]`` ("a wide range of plausible prior
success and failure counts"). Truncated-normal priors, as in the simulation study, are
available through :class:`Prior`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import gammaln

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.stats.bootstrap import DISPLAY_LEVEL, percentile_interval, uniform_task_weights
from lifelong_core.stats.counts import CountTable
from lifelong_core.stats.diagnostics import effective_sample_size, split_rhat

_P_FLOOR = 1e-300


@dataclass(frozen=True)
class Prior:
    """Prior of a beta hyper-parameter (LA-UR-24-25289 report (2024), *Statistical Uncertainty
    Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*, §2.2).

    Attributes
    ----------
    kind : {"normal", "uniform"}
        ``normal`` truncated to (0, inf), or ``uniform``.
    loc, scale : float
        Mean and standard deviation for ``normal``; lower and upper bound for ``uniform``.

    Raises
    ------
    InputError
        For another kind, a standard deviation that is not positive, or bounds that are not
        0 <= low < high.
    """

    kind: str
    loc: float
    scale: float

    def __post_init__(self) -> None:
        if self.kind not in ("normal", "uniform"):
            raise InputError(f"prior kind must be 'normal' or 'uniform', got '{self.kind}'.")
        if self.kind == "normal" and not self.scale > 0:
            raise InputError(
                f"a normal prior needs a positive standard deviation, got {self.scale}."
            )
        if self.kind == "uniform" and not (0 <= self.loc < self.scale):
            raise InputError(
                f"a uniform prior needs 0 <= low < high, got ({self.loc}, {self.scale})."
            )

    @classmethod
    def normal(cls, mean: float, sd: float) -> Prior:
        """A normal prior truncated to (0, inf).

        Parameters
        ----------
        mean, sd : float
            Mean and standard deviation before truncation.

        Returns
        -------
        Prior
        """
        return cls("normal", float(mean), float(sd))

    @classmethod
    def uniform(cls, low: float, high: float) -> Prior:
        """A uniform prior on [low, high].

        Parameters
        ----------
        low, high : float
            The bounds.

        Returns
        -------
        Prior
        """
        return cls("uniform", float(low), float(high))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """Log density up to a constant.

        Parameters
        ----------
        x : numpy.ndarray
            Values of the hyper-parameter.

        Returns
        -------
        numpy.ndarray
            -inf outside the support.
        """
        if self.kind == "normal":
            return np.where(x > 0, -0.5 * ((x - self.loc) / self.scale) ** 2, -np.inf)
        return np.where((x > self.loc) & (x < self.scale), 0.0, -np.inf)

    def describe(self) -> str:
        """The prior in words, for tables and captions."""
        if self.kind == "normal":
            return f"N({self.loc:g}, {self.scale:g}) truncated at 0"
        return f"Uniform({self.loc:g}, {self.scale:g})"


DEFAULT_PRIOR = Prior.uniform(0.0, 1e4)


class _StackedPrior:
    """Per-model priors evaluated on arrays shaped (chains, models)."""

    def __init__(self, priors: Sequence[Prior]) -> None:
        self.priors = list(priors)
        self.same = all(p == self.priors[0] for p in self.priors)

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        if self.same:
            return self.priors[0].logpdf(x)
        return np.stack([p.logpdf(x[..., i]) for i, p in enumerate(self.priors)], axis=-1)


def _per_model(prior: Prior | Sequence[Prior], m: int, name: str) -> list[Prior]:
    if isinstance(prior, Prior):
        return [prior] * m
    priors = list(prior)
    if len(priors) != m:
        raise InputError(f"{name} has {len(priors)} priors but the data has {m} models.")
    return priors


def _slice_sample(
    u0: np.ndarray,
    logf: Callable[..., np.ndarray],
    rng: np.random.Generator,
    width: float = 1.0,
    max_steps: int = 20,
) -> np.ndarray:
    """One univariate slice-sampling update of every element of ``u0`` (Neal 2003, Fig. 3 and 5).

    ``logf`` maps an array shaped like ``u0`` to elementwise log densities; elements
    are independent targets updated in parallel.
    """
    level = logf(u0) - rng.exponential(size=u0.shape)
    left = u0 - width * rng.uniform(size=u0.shape)
    right = left + width
    j = np.floor(max_steps * rng.uniform(size=u0.shape))
    k = (max_steps - 1) - j
    while True:
        grow = (j > 0) & (logf(left) > level)
        if not grow.any():
            break
        left = np.where(grow, left - width, left)
        j = j - grow
    while True:
        grow = (k > 0) & (logf(right) > level)
        if not grow.any():
            break
        right = np.where(grow, right + width, right)
        k = k - grow
    out = u0.copy()
    pending = np.ones(u0.shape, dtype=bool)
    for _ in range(200):
        cand = left + rng.uniform(size=u0.shape) * (right - left)
        accept = pending & (logf(cand) > level)
        out = np.where(accept, cand, out)
        pending &= ~accept
        if not pending.any():
            return out
        below = pending & (cand < u0)
        left = np.where(below, cand, left)
        right = np.where(pending & ~below, cand, right)
    # Shrinkage converges to u0, whose density is above the level, so this is
    # unreachable short of floating-point collapse of the bracket; keep u0 then.
    return np.where(pending, u0, out)


@dataclass(frozen=True, eq=False)
class HierarchicalFit:
    """Posterior draws of the beta-binomial hierarchical model (LA-UR-24-25289 report (2024),
    *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning
    Benchmarks*, §2.2).

    Attributes
    ----------
    table : CountTable
        The counts fitted.
    p : numpy.ndarray
        (chains, draws, models, tasks) task accuracies.
    a, b : numpy.ndarray
        (chains, draws, models) beta parameters of each model.
    prior_a, prior_b : tuple of Prior
        The priors, one per model.
    seed : int
        Seed of the chains.
    """

    table: CountTable
    p: np.ndarray
    a: np.ndarray
    b: np.ndarray
    prior_a: tuple[Prior, ...]
    prior_b: tuple[Prior, ...]
    seed: int

    @property
    def n_chains(self) -> int:
        """Number of chains."""
        return self.p.shape[0]

    @property
    def n_draws(self) -> int:
        """Draws kept per chain."""
        return self.p.shape[1]

    def _weights(self, task_weights: np.ndarray | None) -> np.ndarray:
        return (
            uniform_task_weights(self.table)
            if task_weights is None
            else np.asarray(task_weights, dtype=float)
        )

    def aggregate_draws(
        self, task_weights: np.ndarray | None = None, predictive: bool = False, seed: int = 0
    ) -> np.ndarray:
        """Draws of every model's weighted score.

        Parameters
        ----------
        task_weights : numpy.ndarray, optional
            Weights over tasks (default: the unweighted mean over all tasks).
        predictive : bool
            False: the parameter ``sum_t w_t p[i, t]``. True: the posterior predictive score,
            where each draw replaces ``p`` by a new test set's accuracy ``Binomial(n, p) / n``
                (LA-UR-24-25289 report (2024), *Statistical Uncertainty Quantification for Aggregate
            Performance Metrics in Machine Learning Benchmarks*, §2.2, "posterior predictive
            distribution of task performances").
        seed : int
            Seed of the predictive draws.

        Returns
        -------
        numpy.ndarray
            (chains * draws, models).
        """
        w = self._weights(task_weights)
        p = self.p.reshape(-1, *self.p.shape[2:])
        if predictive:
            rng = np.random.default_rng(seed)
            n = self.table.total
            p = rng.binomial(n, p) / n
        return p @ w

    def aggregate_intervals(
        self,
        level: float = DISPLAY_LEVEL,
        task_weights: np.ndarray | None = None,
        predictive: bool = True,
        seed: int = 0,
    ) -> pd.DataFrame:
        """Credible intervals of every model's score per scope (overall, categories).

        Parameters
        ----------
        level : float
            Coverage of the intervals (83.4% by default, as the report's figures).
        task_weights : numpy.ndarray, optional
            Weights over tasks (default: the unweighted mean over all tasks).
            With weights only one scope, ``weighted``, is returned.
        predictive : bool
            Intervals of posterior predictive scores instead of the parameters'.
        seed : int
            Seed of the predictive draws.

        Returns
        -------
        pandas.DataFrame
            model, scope, mean, lo, hi (fractions).
        """
        scopes = (
            [("weighted", self._weights(task_weights))]
            if task_weights is not None
            else [("overall", uniform_task_weights(self.table))]
            + [(c, uniform_task_weights(self.table, c)) for c in self.table.categories]
        )
        frames = []
        for scope, w in scopes:
            mean, lo, hi = percentile_interval(self.aggregate_draws(w, predictive, seed), level)
            df = pd.DataFrame(
                {"model": self.table.models, "scope": scope, "mean": mean, "lo": lo, "hi": hi}
            )
            frames.append(df.sort_values("mean", ascending=False, kind="stable"))
        return pd.concat(frames, ignore_index=True)

    def difference_interval(
        self,
        model_a: str,
        model_b: str,
        level: float = 0.95,
        task_weights: np.ndarray | None = None,
    ) -> tuple[float, float, float]:
        """Posterior mean and credible interval of ``score(a) - score(b)`` (parameters).

        Parameters
        ----------
        model_a, model_b : str
            Two models of the table.
        level : float
            Coverage of the interval.
        task_weights : numpy.ndarray, optional
            Weights over tasks (default: the unweighted mean).

        Returns
        -------
        tuple of float
            (mean, lo, hi).
        """
        agg = self.aggregate_draws(task_weights)
        i, j = self.table.models.index(model_a), self.table.models.index(model_b)
        mean, lo, hi = percentile_interval(agg[:, i] - agg[:, j], level)
        return float(mean), float(lo), float(hi)

    def rank_probabilities(self, task_weights: np.ndarray | None = None) -> pd.DataFrame:
        """P(model has rank r) from the ranks of its weighted score in each draw (LA-UR-24-25289
        report (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics
        in Machine Learning Benchmarks*, §2.2).

        Parameters
        ----------
        task_weights : numpy.ndarray, optional
            Weights over tasks (default: the unweighted mean over all tasks).

        Returns
        -------
        pandas.DataFrame
            Rows: models; columns: ranks 1..M (1 = best); each row sums to 1.
        """
        agg = self.aggregate_draws(task_weights)
        m = agg.shape[1]
        ranks = m - np.argsort(np.argsort(agg, axis=1), axis=1)
        probs = np.stack([(ranks == r).mean(axis=0) for r in range(1, m + 1)], axis=1)
        return pd.DataFrame(probs, index=list(self.table.models), columns=list(range(1, m + 1)))

    def diagnostics(self) -> pd.DataFrame:
        """Split R-hat and ESS of the hyper-parameters and of each model's mean accuracy.

        Columns: parameter, model, rhat, ess. The overall mean is the quantity the
        leaderboard reports; ``a`` and ``b`` mix slowest, so together they bound the rest.
        """
        mean_acc = self.p.mean(axis=3)
        rows = []
        for name, draws in (("a", self.a), ("b", self.b), ("mean accuracy", mean_acc)):
            r, e = split_rhat(draws), effective_sample_size(draws)
            for i, model in enumerate(self.table.models):
                rows.append(
                    {"parameter": name, "model": model, "rhat": float(r[i]), "ess": float(e[i])}
                )
        return pd.DataFrame(rows)


def fit_hierarchical(
    table: CountTable,
    *,
    prior_a: Prior | Sequence[Prior] = DEFAULT_PRIOR,
    prior_b: Prior | Sequence[Prior] = DEFAULT_PRIOR,
    chains: int = 4,
    draws: int = 2000,
    warmup: int = 1000,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
) -> HierarchicalFit:
    """Fit the beta-binomial hierarchical model by Gibbs and slice sampling (LA-UR-24-25289 report
    (2024), *Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine
    Learning Benchmarks*, §2.2).

    Runs ``chains`` chains (vectorised together) and keeps ``draws`` after ``warmup``. Each
    chain starts from its own over-dispersed point: method-of-moments ``a``, ``b`` of the
    model's task accuracies, scaled by ``exp(N(0, 1))``, so R-hat can reveal chains that have
    not forgotten where they began.

    Parameters
    ----------
    table : CountTable
        The counts.
    prior_a, prior_b : Prior or sequence of Prior
        Priors of the beta parameters, one for every model or one per model.
    chains, draws, warmup : int
        Chains, draws kept per chain, and draws discarded first.
    seed : int
        Seed of the chains.
    progress : callable, optional
        Called now and then with the fraction done.

    Returns
    -------
    HierarchicalFit

    Raises
    ------
    InputError
        If a count, the seed or the work (models x tasks x draws) is out of range, or the
        priors do not match the models.
    """
    chains = limits.check_count(chains, "the number of chains", 1, limits.MAX_CHAINS, "chains")
    draws = limits.check_count(draws, "the draws per chain", 1, limits.MAX_DRAWS, "draws")
    warmup = limits.check_count(warmup, "the warm-up per chain", 0, limits.MAX_WARMUP, "warmup")
    seed = limits.check_seed(seed)
    m, t = table.correct.shape
    limits.check_work(
        chains * draws * m * t,
        limits.MAX_MCMC_CELLS,
        f"the number of kept draws ({chains:,} chains x {draws:,} draws x {m:,} models x {t:,} tasks)",
        "use fewer chains or draws",
        "draws",
    )
    limits.check_work(
        chains * (warmup + draws) * m * t,
        limits.MAX_MCMC_UPDATES,
        f"the number of Gibbs updates ({chains:,} chains x ({warmup:,} warm-up + {draws:,} draws) x "
        f"{m:,} models x {t:,} tasks)",
        "use fewer chains, draws or warm-up iterations",
        "warmup",
    )
    pa = tuple(_per_model(prior_a, m, "prior_a"))
    pb = tuple(_per_model(prior_b, m, "prior_b"))
    log_prior_a, log_prior_b = _StackedPrior(pa), _StackedPrior(pb)
    rng = np.random.default_rng(seed)
    y = table.correct.astype(float)
    fails = (table.total - table.correct).astype(float)

    acc = np.clip(table.accuracy, 0.01, 0.99)
    mu = acc.mean(axis=1)
    var = np.maximum(acc.var(axis=1), 1e-4)
    conc = np.clip(mu * (1 - mu) / var - 1.0, 0.5, 1e3)
    a = np.broadcast_to(mu * conc, (chains, m)) * np.exp(rng.standard_normal((chains, m)))
    b = np.broadcast_to((1 - mu) * conc, (chains, m)) * np.exp(rng.standard_normal((chains, m)))

    # A start outside a bounded prior's support would leave the slice sampler stuck.
    def _inside(x: np.ndarray, priors: Sequence[Prior], fallback: np.ndarray) -> np.ndarray:
        ok = np.isfinite(_StackedPrior(priors).logpdf(x))
        return np.where(ok, x, fallback)

    centre_a = np.array([p.loc if p.kind == "normal" else 0.5 * (p.loc + p.scale) for p in pa])
    centre_b = np.array([p.loc if p.kind == "normal" else 0.5 * (p.loc + p.scale) for p in pb])
    a = _inside(a, pa, np.broadcast_to(centre_a, a.shape))
    b = _inside(b, pb, np.broadcast_to(centre_b, b.shape))

    keep_p = np.empty((chains, draws, m, t))
    keep_a = np.empty((chains, draws, m))
    keep_b = np.empty((chains, draws, m))
    total_iter = warmup + draws
    for it in range(total_iter):
        p = rng.beta(a[..., None] + y, b[..., None] + fails)
        p = np.clip(p, _P_FLOOR, 1.0 - 1e-16)
        s_log_p = np.log(p).sum(axis=2)
        s_log_q = np.log1p(-p).sum(axis=2)

        def log_joint(
            a: np.ndarray,
            b: np.ndarray,
            s_log_p: np.ndarray = s_log_p,
            s_log_q: np.ndarray = s_log_q,
        ) -> np.ndarray:
            return (
                log_prior_a.logpdf(a)
                + log_prior_b.logpdf(b)
                + t * (gammaln(a + b) - gammaln(a) - gammaln(b))
                + a * s_log_p
                + b * s_log_q
            )

        # Slice steps on log a and log b (the +u terms are the Jacobians) ...
        a = np.exp(_slice_sample(np.log(a), lambda u, b=b: log_joint(np.exp(u), b) + u, rng))
        b = np.exp(_slice_sample(np.log(b), lambda u, a=a: log_joint(a, np.exp(u)) + u, rng))
        # ... and one on the log concentration a + b at a fixed mean a / (a + b). When
        # the tasks pin the mean, a and b lie on a narrow ridge along which one-at-a-time
        # steps crawl; this step walks the ridge. Same target, so the chain stays exact.
        mean = a / (a + b)
        kappa = np.exp(
            _slice_sample(
                np.log(a + b),
                lambda u, m=mean: log_joint(m * np.exp(u), (1 - m) * np.exp(u)) + 2 * u,
                rng,
            )
        )
        a, b = mean * kappa, (1 - mean) * kappa
        if it >= warmup:
            k = it - warmup
            keep_p[:, k] = p
            keep_a[:, k] = a
            keep_b[:, k] = b
        if progress is not None and it % 200 == 0:
            progress(it / total_iter)
    if progress is not None:
        progress(1.0)
    return HierarchicalFit(
        table=table, p=keep_p, a=keep_a, b=keep_b, prior_a=pa, prior_b=pb, seed=seed
    )
