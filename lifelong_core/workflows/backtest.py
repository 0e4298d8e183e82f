"""How well does it work on my cache? Hold models out, estimate them, compare with the truth.

A backtest replays the lifelong loop on models whose full results the user already has:
``holdout`` models are removed from the cache, every method is fitted once on the rest
exactly as ``select``/``estimate`` fit it
(:func:`~lifelong_core.workflows.item_choice.fit_method`: Sorting by Sum over every
remaining model), and each held-out model is "run" ``repeats`` times on the items the
method selects for it at every budget (each repeat a fresh item draw: the model's own, by
default, :mod:`lifelong_core.methods.draws`). Every estimate is compared with the model's
accuracy on all items.

Held-out models (``split``), named for what they are:

- ``random``: models like the cache's, drawn at random: the models a random Sort set of
  the others leaves out (``sweep --sort-models m-H --seed S``, the Budget explorer's random
  Sort set), so the two report the same models;
- ``newest``: the last by release order (ties and models without one by insertion), what
  a lifelong benchmark meets next;
- ``beyond-cache``: the most accurate, each at least as accurate as every model left in
  the cache: new models tend to beat the cache, and estimating beyond its range is the
  hard case. (``best`` is accepted for it, the name it had before.)

Against what users do otherwise, two baselines are always in the comparison: ``random``
(a uniform random sample, design-unbiased) and ``first-n`` (what ``lm_eval --limit``
runs, the first items of each task: biased). Per method and budget it reports:

- the mean absolute error of the accuracy (points), its mean signed error and the share of
  estimates above the truth;
- the ratio of that error to a uniform random sample's *exact* expected error on the same
  held-out models at the same budget
  (:func:`~lifelong_core.methods.random_sample.expected_abs_error`, hypergeometric with
  the finite-population correction), and the *equivalent random budget*: how many
  uniformly drawn items give the same error
  (:func:`~lifelong_core.methods.random_sample.equivalent_random_budget`), with the saving
  against it (equivalent budget / ``n'``). Both with 95% percentile bootstrap intervals
  (Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13) that resample
  the held-out models, each with all its repeats: the models are the independent units,
  a model's repeats are not (Davison & Hinkley, *Bootstrap Methods and their
  Application*, 1997, §3.8, resampling the first stage of a two-stage design);
- for methods with an interval, its coverage over every estimate with a Clopper-Pearson
  95% interval (:func:`lifelong_core.stats.coverage.clopper_pearson`), and per held-out
  model: the worst model's coverage over its repeats with its own exact interval, and the
  share of models covered in at most ``c`` of ``R`` repeats, ``c`` the largest count a
  well-calibrated 95% interval falls to with probability at most 2.5% (Binomial(R, 0.95);
  16 of 20), beside that probability, the share binomial noise alone gives. Coverage
  averaged over models can hide a model the interval misses again and again;
- the same by accuracy range: quintiles of the held-out models' accuracy;
- the smallest budget tried at which the mean absolute error is within 1 and within 2
  accuracy points;
- a verdict in words per method and budget (:meth:`Backtest.verdicts`).

With ``scored``, a seeded subset of the held-out models is estimated (the cache is still
everything else): the pages score a model-based estimator on a subset, as their sweeps do,
to stay interactive, and the command line's ``--scored`` gives the same numbers.

The ratio ``n / n'`` (Prabhu et al., 2024, footnote 4) is a saving against running every
item, not against the cheap thing a user would otherwise do; it is not reported as one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from lifelong_core.errors import InputError, shown
from lifelong_core.methods.base import BaseMethod
from lifelong_core.methods.draws import PER_MODEL, check_draws, model_rng
from lifelong_core.methods.registry import (
    BASELINE_METHOD,
    DEFAULT_METHOD,
    LIMIT_METHOD,
    PUBLISHED_METHOD,
    available_methods,
    capabilities,
    predicts_samples,
)
from lifelong_core.stats.coverage import clopper_pearson
from lifelong_core.studies.bands import repeat_seeds

if TYPE_CHECKING:  # the command line's --help reads the defaults below without pandas or the store
    import pandas as pd

    from lifelong_core.methods.memory import FitMemory
    from lifelong_core.store.kept_results import KeptResults
    from lifelong_core.workflows.selection import Selection

SPLITS = ("random", "newest", "beyond-cache")
RANDOM_SPLIT, NEWEST_SPLIT, BEYOND_SPLIT = SPLITS
# The name the beyond-cache split had before; still accepted.
SPLIT_ALIASES = {"best": BEYOND_SPLIT}
SPLIT_WORDS = {
    RANDOM_SPLIT: "models like your cache's, drawn at random",
    NEWEST_SPLIT: "the newest models, by release order",
    BEYOND_SPLIT: "models beyond your cache: the most accurate, none below a cached model",
}
SHORT_WORDS = {
    RANDOM_SPLIT: "on models like your cache's",
    NEWEST_SPLIT: "on the newest models",
    BEYOND_SPLIT: "on models beyond your cache",
}
DEFAULT_BUDGETS = (32, 64, 100, 128, 256)
DEFAULT_HOLDOUT = 10
DEFAULT_REPEATS = 10
# The baselines a backtest estimates beside its methods unless told otherwise.
BASELINES = (BASELINE_METHOD, LIMIT_METHOD)
# The most memory a group of held-out models' estimated rows (each n probabilities and
# n predictions) may take while the group is estimated together.
BATCH_BYTES = 64 << 20
# The most held-out models a page scores with a method that is not cheap to run per model,
# as its sweeps' curves do (interactive_scored).
EVAL_CAP = 40
BOOTSTRAP = 2000
LEVEL = 0.95
# A calibrated interval falls to the flagged count of covered repeats this rarely.
LOW_TAIL = 0.025
RANGES = 5
TARGETS_PTS = (1.0, 2.0)

Progress = Callable[[float, str], object]


def default_methods() -> list[str]:
    """The product's default estimator, Sort & Search's published rule and the two
    baselines, the random sample and the first items (each once, in that order, those
    registered)."""
    names = available_methods()
    wanted = (DEFAULT_METHOD, PUBLISHED_METHOD, BASELINE_METHOD, LIMIT_METHOD)
    return [m for m in dict.fromkeys(wanted) if m in names]


def check_split(split: str) -> str:
    """The split's name, checked (``best`` read as ``beyond-cache``).

    Parameters
    ----------
    split : str
        One of :data:`SPLITS` or an alias in :data:`SPLIT_ALIASES`.

    Returns
    -------
    str
        One of :data:`SPLITS`.

    Raises
    ------
    InputError
        On another name (naming the parameter ``split``).
    """
    split = SPLIT_ALIASES.get(split, split)
    if split not in SPLITS:
        raise InputError(
            f"unknown split {shown(split)}; use one of {', '.join(SPLITS)}.", param="split"
        )
    return split


def split_of_sort_set(how: str) -> str:
    """The backtest split whose held-out models a page's Sort set leaves out.

    Parameters
    ----------
    how : {"random", "earliest released"}
        The Sort set (:data:`lifelong_core.workflows.sortsets.SORT_SETS`).

    Returns
    -------
    str
        ``"random"`` for a random Sort set, ``"newest"`` for the earliest released.

    Raises
    ------
    InputError
        On an unknown Sort set.
    """
    from lifelong_core.workflows.sortsets import EARLIEST_SET, RANDOM_SET

    splits = {RANDOM_SET: RANDOM_SPLIT, EARLIEST_SET: NEWEST_SPLIT}
    if how not in splits:
        raise InputError(f"unknown Sort set {how!r}; choose one of {', '.join(splits)}.")
    return splits[how]


def held_out_rows(sel: Selection, holdout: int, split: str, seed: int) -> np.ndarray:
    """The rows of ``sel`` held out, ascending.

    Parameters
    ----------
    sel : Selection
        The dataset's cache.
    holdout : int
        How many models to hold out; at least two must stay in the cache.
    split : {"random", "newest", "beyond-cache"}
        Which models (module docstring).
    seed : int
        The seed of the ``random`` split's draw.

    Returns
    -------
    numpy.ndarray
        Row numbers into ``sel``.

    Raises
    ------
    InputError
        On an unknown split, a cache of fewer than three models, or a hold-out that leaves
        fewer than two models.
    """
    from lifelong_core.workflows.sortsets import EARLIEST_SET, RANDOM_SET, sort_rows

    split = check_split(split)
    m = len(sel.models)
    if m < 3:
        # Two must stay in the cache and one be held out: no hold-out count fits.
        raise InputError(
            f"a backtest needs at least 3 complete models (one held out, two kept in the "
            f"cache); this cache has {m}.",
            param="holdout",
        )
    if (
        isinstance(holdout, bool)
        or not isinstance(holdout, (int, np.integer))
        or not 1 <= holdout <= m - 2
    ):
        raise InputError(
            f"hold out between 1 and {m - 2} of the {m} models (at least two stay in the cache), "
            f"got {holdout!r}.",
            param="holdout",
        )
    if split == BEYOND_SPLIT:
        acc = np.asarray(sel.A, dtype=np.float64).mean(axis=1)
        rows = np.argsort(-acc, kind="stable")[:holdout]
    else:
        # The complement of the Sort set a page (or ``sweep --sort-models``) would draw.
        how = RANDOM_SET if split == RANDOM_SPLIT else EARLIEST_SET
        cache = sort_rows(sel.models, m - int(holdout), how, seed)
        rows = np.setdiff1d(np.arange(m), cache)
    return np.sort(np.asarray(rows, dtype=np.int64))


def scored_rows(rows: np.ndarray, scored: int | None, seed: int) -> np.ndarray:
    """The held-out rows a backtest estimates: all, or a seeded subset of ``scored``.

    The subset is ``default_rng(seed).choice(rows, scored)``, ascending: the rule of the
    pages' sweeps (:func:`~lifelong_core.workflows.sweeps.capped_eval_rows`), so a page's
    curves and its comparison with random score the same models.

    Parameters
    ----------
    rows : numpy.ndarray
        The held-out rows, ascending.
    scored : int or None
        How many to estimate, at most ``len(rows)``; None for all.
    seed : int
        The seed of the subset.

    Returns
    -------
    numpy.ndarray
        Row numbers, ascending.

    Raises
    ------
    InputError
        If ``scored`` is not a whole number from 1 to ``len(rows)`` (``param="scored"``).
    """
    if scored is None:
        return rows
    if (
        isinstance(scored, bool)
        or not isinstance(scored, (int, np.integer))
        or not 1 <= scored <= len(rows)
    ):
        raise InputError(
            f"score between 1 and the {len(rows)} held-out models, got {shown(scored)}.",
            param="scored",
        )
    if scored == len(rows):
        return rows
    return np.sort(np.random.default_rng(seed).choice(rows, int(scored), replace=False))


def interactive_scored(methods: Sequence[str], holdout: int, cap: int) -> int | None:
    """How many held-out models a page scores: ``cap`` when a method is not cheap to run
    per model (its registered ``cheap`` capability) and more models are held out, else all.

    Parameters
    ----------
    methods : sequence of str
        The methods backtested (registered).
    holdout : int
        Models held out.
    cap : int
        The page's cap on models scored by a model-based estimator.

    Returns
    -------
    int or None
        ``cap``, or None for every held-out model.
    """
    dear = any(not capabilities(m).cheap for m in methods)
    return int(cap) if dear and holdout > cap else None


@dataclass(frozen=True)
class SplitComparison:
    """The backtest behind the Budget explorer's comparison with random for one Sort split.

    ``lbe backtest`` on the models the Sort set leaves out, each its own item draw, one
    repeat, the method's estimates scored on the curves' seeded subset when it is not
    cheap, and the first items of each task beside it (a random sample's exact error is
    the comparison; its draws are not needed). Made by :func:`sort_split_comparison`, so
    the page and ``lbe state --refresh``, which keeps the default view's result, ask for
    the same backtest.

    Attributes
    ----------
    methods : tuple of str
        The method compared.
    budgets : tuple of int
        The budgets, ascending.
    holdout : int
        Models held out: those outside the Sort set.
    split : str
        The split whose held-out models the Sort set leaves out.
    seed : int
        The Sort set's seed, the split's and the draws'.
    scored : int or None
        Held-out models estimated (None: all).
    repeats : int
        Item draws per model.
    draws : str
        Each model's own draw.
    baselines : tuple of str
        The baselines estimated beside the method.
    """

    methods: tuple[str, ...]
    budgets: tuple[int, ...]
    holdout: int
    split: str
    seed: int
    scored: int | None
    repeats: int = 1
    draws: str = PER_MODEL
    baselines: tuple[str, ...] = (LIMIT_METHOD,)

    def run(
        self,
        sel: Selection,
        *,
        progress: Progress | None = None,
        memory: FitMemory | None = None,
        kept: KeptResults | None = None,
    ) -> Backtest:
        """The backtest on ``sel`` (:func:`backtest` with these settings).

        Parameters
        ----------
        sel : Selection
            The dataset's cache the Sort split was drawn from.
        progress, memory, kept
            As for :func:`backtest`.

        Returns
        -------
        Backtest
        """
        return backtest(
            sel,
            list(self.methods),
            list(self.budgets),
            holdout=self.holdout,
            split=self.split,
            repeats=self.repeats,
            seed=self.seed,
            draws=self.draws,
            scored=self.scored,
            progress=progress,
            memory=memory,
            baselines=self.baselines,
            kept=kept,
        )


def sort_split_comparison(
    search: str, budgets: Sequence[int], models: int, sort_models: int, sort_set: str, seed: int
) -> SplitComparison:
    """The Budget explorer's comparison with random for a Sort split of ``sort_models`` of
    ``models`` models drawn as ``sort_set`` with ``seed``.

    Parameters
    ----------
    search : str
        The registered method the page sweeps.
    budgets : sequence of int
        The page's budgets.
    models : int
        Models in the cache (the selection's rows).
    sort_models : int
        Models in the Sort set.
    sort_set : {"random", "earliest released"}
        How the Sort set is drawn (:data:`lifelong_core.workflows.sortsets.SORT_SETS`).
    seed : int
        The Sort set's seed.

    Returns
    -------
    SplitComparison
    """
    holdout = int(models) - int(sort_models)
    return SplitComparison(
        (search,),
        tuple(sorted(int(b) for b in budgets)),
        holdout,
        split_of_sort_set(sort_set),
        int(seed),
        interactive_scored([search, *BASELINES], holdout, EVAL_CAP),
    )


# ------------------------------------------------------------------ comparison with random
@dataclass(frozen=True)
class Comparison:
    """A method's error against a uniform random sample's on the same models
    (:func:`compare_with_random`). Errors are fractions of accuracy.

    Attributes
    ----------
    budget : int
        The method's budget, ``n'``.
    error : float
        The method's mean absolute error over the models.
    random_error : float
        A uniform random sample's exact expected absolute error at ``n'`` on the same
        models.
    ratio, ratio_lo, ratio_hi : float
        ``error / random_error`` and its 95% bootstrap interval (NaN when a random
        sample is exact on every model).
    equivalent, equivalent_lo, equivalent_hi : int
        The equivalent random budget and its 95% bootstrap interval.
    """

    budget: int
    error: float
    random_error: float
    ratio: float
    ratio_lo: float
    ratio_hi: float
    equivalent: int
    equivalent_lo: int
    equivalent_hi: int

    @property
    def saving(self) -> float:
        """The equivalent random budget over the method's: items saved against random."""
        return self.equivalent / self.budget

    @property
    def saving_lo(self) -> float:
        """The lower end of :attr:`saving`'s interval."""
        return self.equivalent_lo / self.budget

    @property
    def saving_hi(self) -> float:
        """The upper end of :attr:`saving`'s interval."""
        return self.equivalent_hi / self.budget


class _RandomErrors:
    """A random sample's exact expected error per model, memoised by budget."""

    def __init__(self, correct: np.ndarray, n: int) -> None:
        self.correct, self.n = correct, n
        self._at: dict[int, np.ndarray] = {}

    def __call__(self, budget: int) -> np.ndarray:
        return self.many(np.array([int(budget)]))[0]

    def many(self, budgets: np.ndarray) -> np.ndarray:
        """The errors at each of ``budgets`` (rows), those not yet known in one pass."""
        from lifelong_core.methods.random_sample import expected_abs_errors

        new = [int(b) for b in budgets if int(b) not in self._at]
        if new:
            for b, row in zip(new, expected_abs_errors(self.correct, self.n, new)):
                self._at[b] = row
        return np.stack([self._at[int(b)] for b in budgets])


def _equivalent(weights: np.ndarray, target: np.ndarray, errors: _RandomErrors) -> np.ndarray:
    """Per row of ``weights`` (replicates x models), the smallest budget whose weighted mean
    random error is at most that row's ``target``: bisection run for every row at once
    (the error falls with the budget), reusing each budget's errors across rows."""
    rows = len(weights)
    total = weights.sum(axis=1)
    lo, hi = np.ones(rows, dtype=np.int64), np.full(rows, errors.n, dtype=np.int64)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        budgets, which = np.unique(mid[active], return_inverse=True)
        at_mid = errors.many(budgets)[which]  # (active rows, models)
        ok = np.zeros(rows, dtype=bool)
        ok[active] = (
            np.einsum("rc,rc->r", weights[active], at_mid) <= target[active] * total[active] + 1e-15
        )
        hi = np.where(active & ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)


@lru_cache(maxsize=8)
def _resampled(models: int, boot: int, seed: int) -> np.ndarray:
    """Bootstrap weights (replicates x models: how often each model is drawn), the same
    for every method and budget of a backtest, so their intervals share the resamples."""
    rng = np.random.default_rng([seed, 31])
    w = rng.multinomial(models, np.full(models, 1.0 / models), size=boot).astype(np.float64)
    w.flags.writeable = False
    return w


def compare_with_random(
    errors: ArrayLike,
    correct: ArrayLike,
    n_items: int,
    budget: int,
    *,
    boot: int = BOOTSTRAP,
    seed: int = 0,
    level: float = LEVEL,
    random_errors: _RandomErrors | None = None,
) -> Comparison:
    """A method's mean absolute error against a uniform random sample's, on the same models.

    The one comparison of the backtest, the Budget explorer and ``lbe sweep`` (module
    docstring): the error ratio to a random sample's exact expected error at the same
    budget, and the equivalent random budget, each with a percentile bootstrap interval
    over the models.

    Parameters
    ----------
    errors : array_like of float
        Per model, the method's mean absolute error over its repeats (fractions).
    correct : array_like of int
        Per model, its number of correct items.
    n_items : int
        The number of items.
    budget : int
        The method's budget, ``n'``.
    boot : int
        Bootstrap replicates (0: no interval, the ends equal the estimate).
    seed : int
        Seed of the resampling.
    level : float
        The intervals' level.
    random_errors : optional
        The memo of random errors for these models (shared across budgets and methods).

    Returns
    -------
    Comparison

    Raises
    ------
    InputError
        When ``errors`` and ``correct`` differ in length or are empty.
    """
    e = np.asarray(errors, dtype=np.float64)
    counts = np.asarray(correct, dtype=np.int64)
    if e.ndim != 1 or e.shape != counts.shape or len(e) == 0:
        raise InputError("give one error and one correct-item count per model.")
    g = random_errors or _RandomErrors(counts, int(n_items))
    at = g(budget)
    rnd = float(at.mean())
    ones = np.ones((1, len(e)))
    eq = int(_equivalent(ones, np.array([e.mean()]), g)[0])
    ratio = float(e.mean() / rnd) if rnd > 0 else float("nan")
    if boot <= 0 or len(e) < 2:
        return Comparison(int(budget), float(e.mean()), rnd, ratio, ratio, ratio, eq, eq, eq)
    w = _resampled(len(e), int(boot), int(seed))
    target = (w @ e) / w.sum(axis=1)
    eqs = _equivalent(w, target, g)
    half = (1.0 - level) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = (w @ e) / (w @ at)
    finite = ratios[np.isfinite(ratios)]
    r_lo, r_hi = (
        (float(np.quantile(finite, half)), float(np.quantile(finite, 1 - half)))
        if len(finite) and rnd > 0
        else (float("nan"), float("nan"))
    )
    return Comparison(
        int(budget),
        float(e.mean()),
        rnd,
        ratio,
        r_lo,
        r_hi,
        eq,
        int(np.quantile(eqs, half, method="lower")),
        int(np.quantile(eqs, 1 - half, method="higher")),
    )


def sweep_baselines(
    per_model: pd.DataFrame,
    n_items: int,
    first_n: pd.DataFrame | None = None,
    evaluated: dict | None = None,
) -> pd.DataFrame:
    """A sweep's E_agg against the baselines on the same evaluated models, per budget.

    The sweep runs every evaluated model on one common item draw per budget (the paper's
    protocol), so its models' errors move together and no interval over models is given
    here; :func:`backtest` gives each model its own draws and the intervals.

    Parameters
    ----------
    per_model : pandas.DataFrame
        A sweep's per-model table (``budget``, ``true_acc``, ``eagg``).
    n_items : int
        The number of items.
    first_n : pandas.DataFrame, optional
        The ``first-n`` sweep's table on the same split (``budget``, ``eagg``).
    evaluated : dict, optional
        Budget -> items actually evaluated, where a grid evaluates another number (the
        sweep's ``config["evaluated"]``).

    Returns
    -------
    pandas.DataFrame
        One row per budget: ``budget``, ``eagg``, ``random_eagg`` (a uniform random
        sample's exact expected E_agg on the same models), ``eagg_vs_random``,
        ``equivalent_budget``, ``saving`` (equivalent budget / budget), ``paper_saving``
        (``n / n'``, Prabhu et al., 2024, footnote 4: a saving against running every
        item) and, with ``first_n``, ``first_n_eagg``.
    """
    import pandas as pd

    rows = []
    for _, g in per_model.groupby("budget", sort=True):
        b = int(g["budget"].iloc[0])
        used = int((evaluated or {}).get(b, b))
        correct = np.rint(g["true_acc"].to_numpy(dtype=np.float64) * n_items).astype(np.int64)
        cmp = compare_with_random(g["eagg"].to_numpy(), correct, n_items, used, boot=0)
        rows.append(
            {
                "budget": b,
                "eagg": cmp.error,
                "random_eagg": cmp.random_error,
                "eagg_vs_random": cmp.ratio,
                "equivalent_budget": cmp.equivalent,
                "saving": cmp.equivalent / used,
                "paper_saving": n_items / used,
            }
        )
    t = pd.DataFrame(rows)
    if first_n is not None:
        t["first_n_eagg"] = t["budget"].map(first_n.set_index("budget")["eagg"])
    return t


def low_coverage_count(repeats: int, level: float = LEVEL, tail: float = LOW_TAIL) -> int:
    """The largest number of covered repeats a calibrated interval reaches with
    probability at most ``tail``: 16 of 20 at 95%.

    Parameters
    ----------
    repeats : int
        Draws per model, ``R``.
    level : float
        The interval's nominal coverage.
    tail : float
        The probability bound.

    Returns
    -------
    int
        The largest ``c`` with ``P(Binomial(R, level) <= c) <= tail``; -1 when even 0
        is more likely than ``tail`` (one repeat).

    Examples
    --------
    >>> low_coverage_count(20)
    16
    """
    from scipy.stats import binom

    c = np.arange(repeats + 1)
    ok = c[binom.cdf(c, repeats, level) <= tail]
    return int(ok.max()) if len(ok) else -1


# ------------------------------------------------------------------ the result
@dataclass(frozen=True)
class Backtest:
    """What :func:`backtest` measured.

    Accuracies, errors and widths in ``per_model`` are fractions; those in the tables
    ending in ``_pts`` are accuracy points (fraction x 100).

    Attributes
    ----------
    per_model : pandas.DataFrame
        One row per (held-out model, repeat, method, budget): ``repeat``, ``seed``,
        ``model``, ``row`` (the model's row in the selection), ``method``, ``budget``, ``estimate``, ``lo``, ``hi`` (NaN for a method
        without an interval), ``true`` (the accuracy on all items), ``correct`` (its
        number of correct items), ``error`` (estimate - true), ``covered``, ``width`` and
        ``sample_mae`` (the share of items predicted wrongly; NaN for a method that
        predicts no sample).
    table : pandas.DataFrame
        One row per (method, budget): ``estimates``, ``models``, ``mae_pts``,
        ``bias_pts``, ``above_truth``, ``coverage`` with its Clopper-Pearson
        ``coverage_lo`` and ``coverage_hi``, ``width_pts``, ``sample_mae``,
        ``random_pts`` (a random sample's exact expected error on these models),
        ``mae_vs_random`` with ``ratio_lo`` and ``ratio_hi``, ``equivalent_budget`` with
        ``equivalent_lo`` and ``equivalent_hi``, ``saving`` with ``saving_lo`` and
        ``saving_hi``, and ``width_vs_random`` (to the random method's mean width).
    summary : pandas.DataFrame
        One row per method: ``items_mae_1pt`` and ``items_mae_2pt``, the smallest budget
        tried with a mean absolute error within 1 and 2 points (NaN if none), and the
        random baseline's, ``random_items_mae_1pt`` and ``random_items_mae_2pt``.
    coverage : pandas.DataFrame
        Per held-out model, for each (method with an interval, budget): ``models``,
        ``repeats``, ``worst_model``, ``worst_covered`` with its exact ``worst_lo`` and
        ``worst_hi``, ``low_count`` (``c``: covered in at most this many repeats is
        flagged; -1 with one repeat), ``low_models``, ``low_share`` and
        ``expected_share`` (what binomial noise alone gives).
    by_range : pandas.DataFrame
        Per (method, budget, accuracy range): ``quantile`` (1 = the least accurate
        models), ``range`` (its lowest and highest accuracy), ``models``, ``acc_lo``, ``acc_hi``, ``mae_pts``, ``random_pts``,
        ``mae_vs_random``, ``coverage`` and ``worst_covered``.
    config : dict
        What was run: ``dataset``, ``methods``, ``budgets``, ``holdout``, ``split``,
        ``repeats``, ``seed``, ``draws``, ``models``, ``items`` (the cache's size before
        the hold-out), ``held_out`` (the names of the held-out models estimated) and
        ``scored`` (how many of them were).
    """

    per_model: pd.DataFrame
    table: pd.DataFrame
    summary: pd.DataFrame
    coverage: pd.DataFrame
    by_range: pd.DataFrame
    config: dict = field(default_factory=dict)

    def verdicts(self) -> list[str]:
        """One sentence per method (the random sample aside) and budget: its error
        against a random sample's, the equivalent random budget, and how its intervals
        held, each with its interval.

        Returns
        -------
        list of str
        """
        c = self.config
        where = SHORT_WORDS[c["split"]]
        cov = self.coverage.set_index(["method", "budget"]) if len(self.coverage) else None
        out = []
        r: Any
        for r in self.table.itertuples():
            if r.method == BASELINE_METHOD:
                continue
            if np.isnan(r.mae_vs_random):
                head = f"{r.method} at n′ = {r.budget} {where}: a random sample is exact on these models"
            else:
                head = (
                    f"{r.method} at n′ = {r.budget} {where}: {r.mae_vs_random:.2f}× a random "
                    f"sample's error ({r.ratio_lo:.2f}-{r.ratio_hi:.2f}), as accurate as "
                    f"{r.equivalent_budget:,} random items ({r.equivalent_lo:,}-{r.equivalent_hi:,})"
                )
            tail = ""
            if not np.isnan(r.coverage):
                tail = f"; its 95% intervals held the truth in {r.coverage:.0%} of estimates"
                if cov is not None and (r.method, r.budget) in cov.index:
                    w = cov.loc[(r.method, r.budget)]
                    if int(w["repeats"]) > 1:
                        tail += (
                            f", the worst model's in {int(w['worst_covered'])} of "
                            f"{int(w['repeats'])} draws"
                        )
            out.append(head + tail + ".")
        return out

    def against_random(self, method: str) -> pd.DataFrame:
        """One method against both baselines, per budget: what the Budget explorer shows.

        Parameters
        ----------
        method : str
            A method of the backtest.

        Returns
        -------
        pandas.DataFrame
            ``budget``, ``eagg_pts`` (the method's mean absolute error), ``random_pts``,
            ``first_n_pts`` (NaN without that baseline), ``mae_vs_random``, ``ratio_lo``,
            ``ratio_hi``, ``equivalent_budget``, ``equivalent_lo``, ``equivalent_hi``,
            ``saving``, ``saving_lo``, ``saving_hi`` and ``paper_saving`` (``n / n'``,
            Prabhu et al., 2024, footnote 4: against running every item).

        Raises
        ------
        InputError
            If ``method`` was not backtested.
        """
        t = self.table
        if method not in set(t["method"]):
            raise InputError(f"{method!r} was not backtested.", param="method")
        own = t[t["method"] == method].sort_values("budget").reset_index(drop=True)
        limit = t[t["method"] == LIMIT_METHOD].set_index("budget")["mae_pts"]
        cols = ["budget", "mae_pts", "random_pts", "mae_vs_random", "ratio_lo", "ratio_hi"]
        cols += ["equivalent_budget", "equivalent_lo", "equivalent_hi"]
        out = own[cols + ["saving", "saving_lo", "saving_hi"]].rename(
            columns={"mae_pts": "eagg_pts"}
        )
        out.insert(3, "first_n_pts", out["budget"].map(limit).astype(float))
        out["paper_saving"] = self.config["items"] / out["budget"]
        return out

    def text(self) -> str:
        """Everything as the command line prints it (accuracy errors in points)."""
        c = self.config
        draw = "each model its own item draws" if c["draws"] == PER_MODEL else "one common item set"
        some = (
            f" ({c['scored']} of them scored, a seeded subset)"
            if c["scored"] < c["holdout"]
            else ""
        )
        lines = [
            (
                f"backtest on {c['dataset']}: {c['holdout']} held-out models{some} "
                f"({c['split']} split: {SPLIT_WORDS[c['split']]}) x {c['repeats']} repeat(s), "
                f"a cache of {c['models'] - c['holdout']} models, {c['items']} items; {draw}"
            ),
            (
                f"{'method':<14} {'n′':>5} {'MAE pts':>8} {'bias':>6} {'above':>6} "
                f"{'coverage (95% CI)':>18} {'width':>6} {'random':>7} "
                f"{'×random (95% CI)':>18} {'= random items (95% CI)':>24}"
            ),
        ]
        r: Any  # a row of itertuples: its fields are typed as any pandas scalar
        for r in self.table.itertuples():
            cov = (
                "-"
                if np.isnan(r.coverage)
                else f"{r.coverage:.0%} ({r.coverage_lo:.0%}-{r.coverage_hi:.0%})"
            )
            width = "-" if np.isnan(r.width_pts) else f"{r.width_pts:.1f}"
            ratio = (
                "-"
                if np.isnan(r.mae_vs_random)
                else f"{r.mae_vs_random:.2f} ({r.ratio_lo:.2f}-{r.ratio_hi:.2f})"
            )
            eq = f"{r.equivalent_budget:,} ({r.equivalent_lo:,}-{r.equivalent_hi:,})"
            lines.append(
                f"{r.method:<14} {r.budget:>5} {r.mae_pts:>8.2f} {r.bias_pts:>+6.2f} "
                f"{r.above_truth:>6.0%} {cov:>18} {width:>6} {r.random_pts:>7.2f} "
                f"{ratio:>18} {eq:>24}"
            )
        lines.append(
            "random: a uniform random sample's exact expected error on the same models (points); "
            "×random: the error over it; = random items: the random sample size with the same "
            "error (the equivalent random budget). Intervals: bootstrap over the held-out models."
        )
        if len(self.coverage):
            first = self.coverage.iloc[0]
            reps, low = int(first["repeats"]), int(first["low_count"])
            if low < 0:
                lines.append(
                    "per-model coverage needs at least two repeats (one draw per model says "
                    "nothing about a model's own coverage)."
                )
            else:
                lines.append(
                    f"per held-out model, over its {reps} draws: the worst model's coverage, and the "
                    f"models covered in {low} of {reps} or fewer (binomial noise alone: "
                    f"{first['expected_share']:.1%} of well-calibrated models)"
                )
                for w in self.coverage.itertuples():
                    lines.append(
                        f"  {w.method:<12} n′ = {w.budget:<5} worst {w.worst_model}: "
                        f"{w.worst_covered}/{w.repeats} ({w.worst_lo:.0%}-{w.worst_hi:.0%}); "
                        f"{w.low_models} of {w.models} models ({w.low_share:.1%}) at {low} or fewer"
                    )
        lines.extend(self._range_lines())
        lines.append("verdict:")
        lines.extend(f"  {v}" for v in self.verdicts())
        tried = f"{min(c['budgets'])}-{max(c['budgets'])}"
        for r in self.summary.itertuples():
            need = ["-" if np.isnan(v) else str(int(v)) for v in (r.items_mae_1pt, r.items_mae_2pt)]
            lines.append(
                f"{r.method}: items for MAE within 1 pt {need[0]}, within 2 pts {need[1]} "
                f"(smallest of the budgets tried, {tried}; '-' = none of them)"
            )
        return "\n".join(lines)

    def _range_lines(self) -> list[str]:
        if not len(self.by_range):
            return []
        lines = [
            (
                "by accuracy range (quintiles of the held-out models' accuracy): error × a random "
                "sample's, and coverage"
            )
        ]
        budgets = sorted(self.by_range["budget"].unique())
        head = f"  {'method':<12} {'accuracy':<11} {'models':>6} " + " ".join(
            f"{'n′=' + str(b):>13}" for b in budgets
        )
        lines.append(head)
        for (method, _), g in self.by_range.groupby(["method", "quantile"], sort=False):
            g = g.set_index("budget")
            rng = str(g["range"].iloc[0])
            cells = []
            for b in budgets:
                ratio = g.loc[b, "mae_vs_random"]
                cov = g.loc[b, "coverage"]
                text = "-" if np.isnan(ratio) else f"{ratio:.2f}×"
                text += "" if np.isnan(cov) else f" {cov:.0%}"
                cells.append(f"{text:>13}")
            lines.append(
                f"  {method:<12} {rng:<11} {int(g['models'].iloc[0]):>6} " + " ".join(cells)
            )
        return lines


# ------------------------------------------------------------------ the tables
def _table(
    per: pd.DataFrame, n: int, errors: _RandomErrors, models: list, boot: int, seed: int
) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for (method, budget), g in per.groupby(["method", "budget"], sort=False):
        has_iv = bool(g["lo"].notna().all())
        k, total = int(g["covered"].sum()), len(g)
        lo, hi = clopper_pearson(k, total) if has_iv else (np.nan, np.nan)
        by_model = g["error"].abs().groupby(g["row"], sort=False).mean()
        cmp = compare_with_random(
            by_model.reindex(models).to_numpy(),
            errors.correct,
            n,
            int(budget),  # type: ignore[call-overload]  # a groupby key is typed Hashable
            boot=boot,
            seed=seed,
            random_errors=errors,
        )
        rows.append(
            {
                "method": method,
                "budget": int(budget),  # type: ignore[call-overload]
                "estimates": total,
                "models": int(g["row"].nunique()),
                "mae_pts": 100 * float(g["error"].abs().mean()),
                "bias_pts": 100 * float(g["error"].mean()),
                "above_truth": float((g["error"] > 0).mean()),
                "coverage": k / total if has_iv else np.nan,
                "coverage_lo": lo,
                "coverage_hi": hi,
                "width_pts": 100 * float(g["width"].mean()) if has_iv else np.nan,
                "sample_mae": float(g["sample_mae"].mean()),
                "random_pts": 100 * cmp.random_error,
                "mae_vs_random": cmp.ratio,
                "ratio_lo": cmp.ratio_lo,
                "ratio_hi": cmp.ratio_hi,
                "equivalent_budget": cmp.equivalent,
                "equivalent_lo": cmp.equivalent_lo,
                "equivalent_hi": cmp.equivalent_hi,
                "saving": cmp.saving,
                "saving_lo": cmp.saving_lo,
                "saving_hi": cmp.saving_hi,
            }
        )
    t = pd.DataFrame(rows)
    ref = t[t["method"] == BASELINE_METHOD].set_index("budget")
    t["width_vs_random"] = (
        t["width_pts"] / t["budget"].map(ref["width_pts"]) if len(ref) else np.nan
    )
    return t


def _coverage(per: pd.DataFrame, repeats: int) -> pd.DataFrame:
    import pandas as pd
    from scipy.stats import binom

    low = low_coverage_count(repeats)
    expected = float(binom.cdf(low, repeats, LEVEL)) if low >= 0 else np.nan
    cols = [
        "method",
        "budget",
        "models",
        "repeats",
        "worst_model",
        "worst_covered",
        "worst_lo",
        "worst_hi",
        "low_count",
        "low_models",
        "low_share",
        "expected_share",
    ]
    rows = []
    for (method, budget), g in per.groupby(["method", "budget"], sort=False):
        if not g["lo"].notna().all():
            continue
        k = g.groupby("row", sort=False)["covered"].sum()
        worst = str(g.loc[g["row"] == k.idxmin(), "model"].iloc[0])
        lo, hi = clopper_pearson(int(k.min()), repeats)
        flagged = int((k <= low).sum())
        rows.append(
            {
                "method": method,
                "budget": int(budget),  # type: ignore[call-overload]  # a groupby key
                "models": len(k),
                "repeats": int(repeats),
                "worst_model": worst,
                "worst_covered": int(k.min()),
                "worst_lo": lo,
                "worst_hi": hi,
                "low_count": low,
                "low_models": flagged,
                "low_share": flagged / len(k),
                "expected_share": expected,
            }
        )
    return pd.DataFrame(rows, columns=cols)


def _by_range(per: pd.DataFrame, errors: _RandomErrors, models: list) -> pd.DataFrame:
    import pandas as pd

    truth = per.drop_duplicates("row").set_index("row")["true"].reindex(models)
    bins = min(RANGES, len(models))
    # Quintiles of the held-out models' accuracy (fewer ranges with fewer models or ties).
    rank = truth.rank(method="first").to_numpy()
    label = np.ceil(rank * bins / len(models)).astype(int) - 1
    acc = truth.to_numpy()
    ranges = [(q, np.flatnonzero(label == q)) for q in range(bins)]
    ranges = [(q, at) for q, at in ranges if len(at)]
    # One pass of group sums over (method, budget, range), and of covered draws per model.
    d = per[["method", "budget", "row", "covered", "lo"]].assign(
        quantile=per["row"].map(dict(zip(models, label))),
        abs_error=per["error"].abs(),
        has_iv=per["lo"].notna(),
    )
    keys = ["method", "budget", "quantile"]
    agg = d.groupby(keys, sort=False).agg(mae=("abs_error", "mean"), coverage=("covered", "mean"))
    worst = d.groupby([*keys, "row"], sort=False)["covered"].sum().groupby(level=[0, 1, 2]).min()
    rows = []
    for (method, budget), g in d.groupby(["method", "budget"], sort=False):
        has_iv = bool(g["has_iv"].all())
        rand = errors(int(budget))
        for q, at in ranges:
            random_pts = 100 * float(np.mean(rand[at]))
            mae = 100 * float(agg.loc[(method, budget, q), "mae"])
            rows.append(
                {
                    "method": method,
                    "budget": int(budget),
                    "quantile": q + 1,
                    "range": f"{acc[at].min():.2f}-{acc[at].max():.2f}",
                    "models": len(at),
                    "acc_lo": float(acc[at].min()),
                    "acc_hi": float(acc[at].max()),
                    "mae_pts": mae,
                    "random_pts": random_pts,
                    "mae_vs_random": mae / random_pts if random_pts > 0 else np.nan,
                    "coverage": float(agg.loc[(method, budget, q), "coverage"])
                    if has_iv
                    else np.nan,
                    "worst_covered": int(worst.loc[(method, budget, q)]) if has_iv else -1,
                }
            )
    return pd.DataFrame(rows)


def _summary(table: pd.DataFrame, baseline: str) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for method, g in table.groupby("method", sort=False):
        g = g.sort_values("budget")
        row = {"method": method}
        for pts in TARGETS_PTS:
            ok = g.loc[g["mae_pts"] <= pts, "budget"]
            row[f"items_mae_{pts:g}pt"] = float(ok.iloc[0]) if len(ok) else np.nan
        rows.append(row)
    s = pd.DataFrame(rows)
    base = s[s["method"] == baseline]
    for pts in TARGETS_PTS:
        col = f"items_mae_{pts:g}pt"
        s[f"random_{col}"] = float(base[col].iloc[0]) if len(base) else np.nan
    return s


def command(
    dataset: str,
    methods: Sequence[str],
    budgets: Sequence[int],
    *,
    domains: Sequence[str] = (),
    holdout: int = DEFAULT_HOLDOUT,
    split: str = RANDOM_SPLIT,
    repeats: int = DEFAULT_REPEATS,
    seed: int = 0,
    draws: str = PER_MODEL,
    scored: int | None = None,
    store: str = "STORE",
) -> str:
    """The ``lbe backtest`` command that reports these settings' numbers.

    Parameters
    ----------
    dataset : str
        The dataset.
    methods : sequence of str
        The methods (the baselines are added by the command itself).
    budgets : sequence of int
        The budgets.
    domains : sequence of str
        The domains kept; empty for all.
    holdout, split, repeats, seed, draws, scored
        As for :func:`backtest`.
    store : str
        The store's path as shown.

    Returns
    -------
    str
    """
    import shlex

    from lifelong_core.methods.draws import COMMON

    parts = ["lbe", "backtest", "--store", store, "--dataset", dataset]
    if domains:
        parts += ["--domains", ",".join(domains)]
    parts += ["--method", ",".join(methods), "--budgets", ",".join(str(b) for b in budgets)]
    parts += ["--holdout", str(holdout), "--split", split, "--repeats", str(repeats)]
    parts += ["--seed", str(seed)] + (["--common-items"] if draws == COMMON else [])
    parts += [] if scored is None else ["--scored", str(scored)]
    return " ".join(shlex.quote(p) for p in parts)


def backtest(
    sel: Selection,
    methods: Sequence[str] | None = None,
    budgets: Sequence[int] | None = None,
    *,
    holdout: int = DEFAULT_HOLDOUT,
    split: str = RANDOM_SPLIT,
    repeats: int = DEFAULT_REPEATS,
    seed: int = 0,
    draws: str = PER_MODEL,
    scored: int | None = None,
    boot: int = BOOTSTRAP,
    progress: Progress | None = None,
    memory: FitMemory | None = None,
    baselines: Sequence[str] = BASELINES,
    kept: KeptResults | None = None,
) -> Backtest:
    """Hold models out of the cache, estimate them with each method, score against the truth.

    Parameters
    ----------
    sel : Selection
        One dataset's cache (real models evaluated on every item), e.g.
        :func:`~lifelong_core.workflows.selection.select`.
    methods : sequence of str, optional
        Registered methods (default :func:`default_methods`). The random and first-items
        baselines are added when missing.
    budgets : sequence of int, optional
        Items per held-out model; those above the number of items are refused. Default:
        those of :data:`DEFAULT_BUDGETS` below the number of items (else half of them).
    holdout : int
        Models held out.
    split : {"random", "newest", "beyond-cache"}
        Which models are held out (module docstring); ``best`` reads as ``beyond-cache``.
    repeats : int
        Item draws per held-out model, with seeds ``seed, seed + 1, ...``.
    seed : int
        The random split's seed and the first repeat's.
    draws : {"per-model", "common"}
        Each held-out model's own item draws (default) or one item set for all.
    scored : int, optional
        Estimate a seeded subset of this many held-out models (:func:`scored_rows`); all
        by default.
    boot : int
        Bootstrap replicates of the intervals of the comparison with random.
    progress : callable, optional
        ``progress(fraction, text)`` as fits and estimates finish.
    memory : FitMemory, optional
        Where the methods' fits are kept and found (:func:`.item_choice.fit_method`); None
        fits each method afresh.
    baselines : sequence of str
        The baselines estimated beside ``methods``: the random sample's own estimates (its
        coverage and interval width) and ``first-n``'s, by default. Every comparison with
        random uses a random sample's exact expected error whichever are estimated, so a
        caller that reads only :meth:`Backtest.against_random` (the Budget explorer) leaves
        the random sample's estimates out and gets the same comparison.
    kept : KeptResults, optional
        Results kept in a store (:mod:`lifelong_core.store.kept_results`): the result of
        an identical backtest is read from there instead of computed (the digest covers
        the cache's bits, its models' and samples' tables, every argument that changes a
        number, the package's source and the numerical libraries' versions), and a result
        computed is kept when ``kept`` writes (``lbe state --refresh`` keeps the Budget
        explorer's default view this way).

    Returns
    -------
    Backtest

    Raises
    ------
    InputError
        On an unknown method, split or draw, a budget outside ``[1, n]``, a hold-out that
        leaves fewer than two models in the cache, or a cache beyond the dense-read limit.

    Examples
    --------
    >>> from lifelong_core.store import Store  # doctest: +SKIP
    >>> from lifelong_core.workflows.selection import select  # doctest: +SKIP
    >>> with Store.open("data/demo.duckdb") as st:  # doctest: +SKIP
    ...     bt = backtest(select(st, "open-llm-leaderboard-v2"), budgets=[32, 100])
    >>> print(bt.text())  # doctest: +SKIP
    """
    import pandas as pd

    from lifelong_core.sortsearch.search import check_budget
    from lifelong_core.workflows.item_choice import fit_method
    from lifelong_core.workflows.selection import Selection

    A = sel.A
    if not isinstance(A, np.ndarray):
        raise InputError(
            "the backtest reads the dataset's matrix in memory, and this one is beyond the "
            "dense-read limit; run it from the command line, which has no such limit."
        )
    m, n = A.shape
    methods = list(dict.fromkeys(methods or default_methods()))
    if not methods:
        raise InputError("choose at least one method to backtest.", param="methods")
    known = available_methods()
    for name in methods:
        if name not in known:
            raise InputError(
                f"unknown search method {name!r}; available: {', '.join(known)}.", param="methods"
            )
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise InputError(
            f"unknown baseline {unknown[0]!r}; the baselines are {BASELINE_METHOD} and {LIMIT_METHOD}.",
            param="baselines",
        )
    methods += [b for b in baselines if b in known and b not in methods]
    if budgets is None:
        budgets = [b for b in DEFAULT_BUDGETS if b < n] or [max(1, n // 2)]
    budgets = sorted({int(b) for b in budgets})
    if not budgets:
        raise InputError("choose at least one budget.", param="budgets")
    for b in budgets:
        try:
            check_budget(n, b)
        except InputError as exc:
            raise InputError(str(exc), param="budgets") from None
    check_draws(draws)
    split = check_split(split)
    # The one rule for repeats and their seeds (lifelong_core.limits): bounded, checked now.
    seeds = repeat_seeds(seed, repeats)
    held_rows = held_out_rows(sel, holdout, split, seed)
    rows = scored_rows(held_rows, scored, seed)
    names = np.asarray(sel.names, dtype=object)
    config = dict(
        dataset=str(sel.samples["dataset"].iloc[0]) if "dataset" in sel.samples else "",
        methods=methods,
        budgets=budgets,
        holdout=int(holdout),
        split=split,
        repeats=int(repeats),
        seed=int(seed),
        draws=draws,
        models=int(m),
        items=int(n),
        held_out=[str(x) for x in names[rows]],
        scored=len(rows),
    )

    def compute() -> dict[str, pd.DataFrame]:
        correct = A[rows].sum(axis=1, dtype=np.int64)
        keep = np.setdiff1d(np.arange(m), held_rows)
        cache = Selection(
            A[keep], sel.models.iloc[keep].reset_index(drop=True), sel.samples, sel.synthetic
        )
        # Fits dominate for the model-based methods, estimates for the cheap ones: the bar
        # counts both (one step per fit, one per held-out model per method).
        total = len(methods) * (1 + len(rows))
        done = 0
        records: list[dict] = []
        for method in methods:
            if progress is not None:
                progress(done / total, f"Fitting {method}…")
            fitted = fit_method(cache, method, memory=memory)
            has_iv = capabilities(method).interval
            scored = predicts_samples(method)
            done += 1
            # The held-out models' estimates at one draw and budget together, in groups whose
            # estimated rows stay within BATCH_BYTES (a method that shares work across rows,
            # such as one batched ability fit, does it once per group); each estimate is
            # reduced to its record's numbers at once, and the records keep the order model,
            # draw, budget.
            group = max(1, BATCH_BYTES // (9 * n))
            made: dict[tuple[int, int, int], tuple[float, float, float, float]] = {}
            for r, s in enumerate(seeds):
                for j, b in enumerate(budgets):
                    for g in range(0, len(rows), group):
                        part = range(g, min(g + group, len(rows)))
                        designs = []
                        for i in part:
                            # A fresh stream per budget: the items at budget b are the ones
                            # ``select --model NAME --seed s --budget b`` would give here.
                            rng = model_rng(names[rows[i]], s, draws)
                            cols = np.asarray(fitted.select(n, b, rng), dtype=np.int64)
                            designs.append((cols, A[rows[i]][cols]))
                        many = (
                            fitted.estimate_many(designs)
                            if isinstance(fitted, BaseMethod)
                            else [fitted.estimate(c, o) for c, o in designs]
                        )
                        for i, est in zip(part, many):
                            lo = est.lo if has_iv and est.lo is not None else np.nan
                            hi = est.hi if has_iv and est.hi is not None else np.nan
                            mae = (
                                float(np.mean(np.asarray(est.per_sample) != A[rows[i]]))
                                if scored
                                else np.nan
                            )
                            made[(i, r, j)] = (float(est.acc), float(lo), float(hi), mae)
                if progress is not None:
                    progress(
                        (done + len(rows) * (r + 1) / len(seeds)) / total,
                        f"Estimating with {method}…",
                    )
            done += len(rows)
            for i, (row, right) in enumerate(zip(rows, correct)):
                true = float(right) / n
                for r, s in enumerate(seeds):
                    for j, b in enumerate(budgets):
                        acc, lo, hi, mae = made[(i, r, j)]
                        records.append(
                            {
                                "repeat": r,
                                "seed": s,
                                "model": names[row],
                                "row": int(row),
                                "method": method,
                                "budget": b,
                                "estimate": acc,
                                "lo": lo,
                                "hi": hi,
                                "true": true,
                                "correct": int(right),
                                "error": acc - true,
                                "covered": bool(lo <= true <= hi),
                                "width": hi - lo,
                                "sample_mae": mae,
                            }
                        )
        per = pd.DataFrame(records)
        errors = _RandomErrors(correct, n)
        table = _table(per, n, errors, rows.tolist(), boot, seed)
        return {
            "per_model": per,
            "table": table,
            "summary": _summary(table, BASELINE_METHOD),
            "coverage": _coverage(per, int(repeats)),
            "by_range": _by_range(per, errors, rows.tolist()),
        }

    if kept is None:
        return Backtest(**compute(), config=config)
    key = _kept_key(sel, [methods, budgets, int(holdout), split, seeds, draws, rows, boot, seed])
    tables = tuple(f.name for f in fields(Backtest) if f.name != "config")
    return Backtest(**kept.get_or_compute(key, KEPT_KIND, tables, compute, config), config=config)


# What a kept backtest is filed under (store.kept_results), and the version of its digest.
KEPT_KIND = "backtest"
KEPT_FORMAT = 1


def _kept_key(sel: Selection, args: list) -> str:
    """The digest a backtest's result is kept under: everything that can change a number."""
    from lifelong_core.workflows.selection import kept_key

    return kept_key(sel, [KEPT_KIND, KEPT_FORMAT], args)
