"""How well does it work on my cache? Hold models out, estimate them, compare with the truth.

A backtest replays the lifelong loop on models whose full results the user already has:
``holdout`` models are removed from the cache, every method is fitted on the rest exactly
as ``select``/``estimate`` fit it (:func:`~lifelong_core.workflows.arrivals.fit_new_model_method`:
Sorting by Sum over every remaining model), each held-out model is "run" on the items the
method selects for it at every budget, and the estimate is compared with the model's
accuracy on all items. Over the held-out models and the repeats it reports, per method and
budget:

- the mean absolute error of the accuracy (and its mean signed error, and the share of
  estimates above the truth: errors that lean one way show up there);
- for methods with an interval, its coverage (the share of intervals holding the truth)
  with a Clopper-Pearson 95% interval on that share
  (:func:`lifelong_core.stats.coverage.clopper_pearson`), and the interval's mean width;
- the ratio of error and width to the random-sampling baseline at the same budget
  (:data:`~lifelong_core.methods.registry.BASELINE_METHOD`), the question "better than a
  random sample?";
- the smallest budget tried at which the mean absolute error is within 1 and within 2
  accuracy points.

Held-out models (``split``): ``random`` (a fresh draw per repeat), ``newest`` (the last
by release order, ties and models without one by insertion: what a lifelong benchmark
meets next) or ``best`` (the most accurate: new models tend to beat the cache, and
estimating beyond the cache's range is the hard case). Items are each held-out model's
own random draw by default (:mod:`lifelong_core.methods.draws`), so errors are independent
across models and coverage counted over models means what it says; ``draws="common"``
gives every model the seed's item set instead.

The estimates of one held-out model over several repeats are not independent of each
other (the same model, for ``newest`` and ``best`` the same cache), so the coverage
interval treats them as more information than they are; more held-out models narrow it
more honestly than more repeats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.draws import PER_MODEL, check_draws, model_rng
from lifelong_core.methods.registry import (
    BASELINE_METHOD,
    DEFAULT_METHOD,
    PUBLISHED_METHOD,
    available_methods,
    capabilities,
    predicts_samples,
)
from lifelong_core.stats.coverage import clopper_pearson
from lifelong_core.studies.bands import repeat_seeds

if TYPE_CHECKING:  # the command line's --help reads the defaults below without pandas or the store
    import pandas as pd

    from lifelong_core.workflows.selection import Selection

SPLITS = ("random", "newest", "best")
RANDOM_SPLIT, NEWEST_SPLIT, BEST_SPLIT = SPLITS
DEFAULT_BUDGETS = (32, 64, 128, 256)
DEFAULT_HOLDOUT = 10
DEFAULT_REPEATS = 3
TARGETS_PTS = (1.0, 2.0)

Progress = Callable[[float, str], None]


def default_methods() -> list[str]:
    """The product's default estimator, Sort & Search's published rule and the random
    baseline (each once, in that order, those registered)."""
    names = available_methods()
    return [
        m for m in dict.fromkeys((DEFAULT_METHOD, PUBLISHED_METHOD, BASELINE_METHOD)) if m in names
    ]


def held_out_rows(sel: Selection, holdout: int, split: str, seed: int) -> np.ndarray:
    """The rows of ``sel`` held out in one repeat, ascending.

    Parameters
    ----------
    sel : Selection
        The dataset's cache.
    holdout : int
        How many models to hold out; at least two must stay in the cache.
    split : {"random", "newest", "best"}
        Which models (module docstring).
    seed : int
        The repeat's seed (used by ``random`` only).

    Returns
    -------
    numpy.ndarray
        Row numbers into ``sel``.
    """
    from lifelong_core.workflows.sortsets import release_rows

    m = sel.A.shape[0]
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}.", param="split")
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
    if split == RANDOM_SPLIT:
        rows = np.random.default_rng(seed).choice(m, size=holdout, replace=False)
    elif split == NEWEST_SPLIT:
        rows = release_rows(sel.models)[-holdout:]
    else:
        acc = np.asarray(sel.A, dtype=np.float64).mean(axis=1)
        rows = np.argsort(-acc, kind="stable")[:holdout]
    return np.sort(np.asarray(rows, dtype=np.int64))


@dataclass(frozen=True)
class Backtest:
    """What :func:`backtest` measured.

    Accuracies, errors and widths in ``per_model`` are fractions; those in ``table``
    ending in ``_pts`` are accuracy points (fraction x 100).

    Attributes
    ----------
    per_model : pandas.DataFrame
        One row per (repeat, held-out model, method, budget): ``repeat``, ``seed``,
        ``model``, ``method``, ``budget``, ``estimate``, ``lo``, ``hi`` (NaN for a method
        without an interval), ``true`` (the accuracy on all items), ``error``
        (estimate - true), ``covered``, ``width`` and ``sample_mae`` (the share of items
        predicted wrongly; NaN for a method that predicts no sample).
    table : pandas.DataFrame
        One row per (method, budget), the measures of the module docstring:
        ``estimates``, ``mae_pts``, ``bias_pts``, ``above_truth``, ``coverage`` with its
        Clopper-Pearson ``coverage_lo`` and ``coverage_hi``, ``width_pts``,
        ``sample_mae``, and ``mae_vs_random`` and ``width_vs_random`` (ratios to the
        random baseline at the same budget).
    summary : pandas.DataFrame
        One row per method: ``items_mae_1pt`` and ``items_mae_2pt``, the smallest budget
        tried with a mean absolute error within 1 and 2 points (NaN if none), and the
        random baseline's, ``random_items_mae_1pt`` and ``random_items_mae_2pt``.
    config : dict
        What was run: ``dataset``, ``methods``, ``budgets``, ``holdout``, ``split``,
        ``repeats``, ``seed``, ``draws``, ``models`` and ``items`` (the cache's size).
    """

    per_model: pd.DataFrame
    table: pd.DataFrame
    summary: pd.DataFrame
    config: dict = field(default_factory=dict)

    def text(self) -> str:
        """The table as the command line prints it (accuracy errors in points)."""
        c = self.config
        draw = "each model its own item draw" if c["draws"] == PER_MODEL else "one common item set"
        head = (
            f"backtest on {c['dataset']}: {c['holdout']} held-out models ({c['split']} split) x "
            f"{c['repeats']} repeat(s) of {c['models']} models, {c['items']} items; {draw}"
        )
        cols = (
            f"{'method':<14} {'n′':>6} {'MAE pts':>8} {'bias':>6} {'above':>6} "
            f"{'coverage (95% CI)':>20} {'width':>6} {'MAE/random':>10}"
        )
        lines = [head, cols]
        r: Any  # a row of itertuples: its fields are typed as any pandas scalar
        for r in self.table.itertuples():
            cov = (
                "-"
                if np.isnan(r.coverage)
                else f"{r.coverage:.0%} ({r.coverage_lo:.0%}-{r.coverage_hi:.0%})"
            )
            width = "-" if np.isnan(r.width_pts) else f"{r.width_pts:.1f}"
            ratio = "-" if np.isnan(r.mae_vs_random) else f"{r.mae_vs_random:.2f}"
            lines.append(
                f"{r.method:<14} {r.budget:>6} {r.mae_pts:>8.2f} {r.bias_pts:>+6.2f} {r.above_truth:>6.0%} "
                f"{cov:>20} {width:>6} {ratio:>10}"
            )
        tried = f"{min(c['budgets'])}-{max(c['budgets'])}"
        for r in self.summary.itertuples():
            need = ["-" if np.isnan(v) else str(int(v)) for v in (r.items_mae_1pt, r.items_mae_2pt)]
            lines.append(
                f"{r.method}: items for MAE within 1 pt {need[0]}, within 2 pts {need[1]} "
                f"(smallest of the budgets tried, {tried}; '-' = none of them)"
            )
        return "\n".join(lines)


def _table(per: pd.DataFrame, baseline: str) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for (method, budget), g in per.groupby(["method", "budget"], sort=False):
        has_iv = g["lo"].notna().all()
        k, n = int(g["covered"].sum()), len(g)
        lo, hi = clopper_pearson(k, n) if has_iv else (np.nan, np.nan)
        rows.append(
            {
                "method": method,
                "budget": int(budget),  # type: ignore[call-overload]  # a groupby key is typed Hashable
                "estimates": n,
                "mae_pts": 100 * float(g["error"].abs().mean()),
                "bias_pts": 100 * float(g["error"].mean()),
                "above_truth": float((g["error"] > 0).mean()),
                "coverage": k / n if has_iv else np.nan,
                "coverage_lo": lo,
                "coverage_hi": hi,
                "width_pts": 100 * float(g["width"].mean()) if has_iv else np.nan,
                "sample_mae": float(g["sample_mae"].mean()),
            }
        )
    t = pd.DataFrame(rows)
    ref = t[t["method"] == baseline].set_index("budget")
    for col, out in (("mae_pts", "mae_vs_random"), ("width_pts", "width_vs_random")):
        base = t["budget"].map(ref[col]) if len(ref) else np.nan
        t[out] = t[col] / base
    return t


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
    progress: Progress | None = None,
) -> Backtest:
    """Hold models out of the cache, estimate them with each method, score against the truth.

    Parameters
    ----------
    sel : Selection
        One dataset's cache (real models evaluated on every item), e.g.
        :func:`~lifelong_core.workflows.selection.select`.
    methods : sequence of str, optional
        Registered methods (default :func:`default_methods`). The random baseline is
        added when missing, since every ratio is taken against it.
    budgets : sequence of int, optional
        Items per held-out model; those above the number of items are refused. Default:
        those of :data:`DEFAULT_BUDGETS` below the number of items (else half of them).
    holdout : int
        Models held out per repeat.
    split : {"random", "newest", "best"}
        Which models are held out (module docstring).
    repeats : int
        Repeats with seeds ``seed, seed + 1, ...``: a new random split and new item draws.
    seed : int
        The first repeat's seed.
    draws : {"per-model", "common"}
        Each held-out model's own item draw (default) or one item set for all.
    progress : callable, optional
        ``progress(fraction, text)`` as fits and estimates finish.

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
    ...     bt = backtest(select(st, "open-llm-leaderboard-v2"), budgets=[32, 128])
    >>> print(bt.text())  # doctest: +SKIP
    """
    import pandas as pd

    from lifelong_core.workflows.arrivals import fit_new_model_method
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
    if BASELINE_METHOD in known and BASELINE_METHOD not in methods:
        methods.append(BASELINE_METHOD)
    from lifelong_core.sortsearch.search import check_budget

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
    # The one rule for repeats and their seeds (lifelong_core.limits): bounded, checked now.
    seeds = repeat_seeds(seed, repeats)
    names = np.asarray(sel.names, dtype=object)
    accs = A.mean(axis=1, dtype=np.float64)
    # Fits dominate for the model-based methods; estimates for the cheap ones: the bar
    # counts both (one step per fit, one per held-out model per method).
    total = repeats * len(methods) * (1 + holdout)
    done = 0
    records: list[dict] = []
    for r, s in enumerate(seeds):
        rows = held_out_rows(sel, holdout, split, s)
        keep = np.setdiff1d(np.arange(m), rows)
        cache = Selection(
            A[keep], sel.models.iloc[keep].reset_index(drop=True), sel.samples, sel.synthetic
        )
        for method in methods:
            if progress is not None:
                progress(done / total, f"Fitting {method} (repeat {r + 1} of {repeats})…")
            fitted = fit_new_model_method(cache, method)
            has_iv = capabilities(method).interval
            scored = predicts_samples(method)
            done += 1
            for row in rows:
                truth = A[row]
                true = float(accs[row])
                for b in budgets:
                    # A fresh stream per budget: the items at budget b are the ones
                    # ``select --model NAME --seed s --budget b`` would give on this cache.
                    cols = np.asarray(
                        fitted.select(n, b, model_rng(names[row], s, draws)), dtype=np.int64
                    )
                    est = fitted.estimate(cols, truth[cols])
                    lo = est.lo if has_iv and est.lo is not None else np.nan
                    hi = est.hi if has_iv and est.hi is not None else np.nan
                    records.append(
                        {
                            "repeat": r,
                            "seed": s,
                            "model": names[row],
                            "method": method,
                            "budget": b,
                            "estimate": float(est.acc),
                            "lo": float(lo),
                            "hi": float(hi),
                            "true": true,
                            "error": float(est.acc) - true,
                            "covered": bool(lo <= true <= hi) if has_iv else False,
                            "width": float(hi - lo),
                            "sample_mae": float(np.mean(np.asarray(est.per_sample) != truth))
                            if scored
                            else np.nan,
                        }
                    )
                done += 1
                if progress is not None:
                    progress(
                        done / total, f"Estimating with {method} (repeat {r + 1} of {repeats})…"
                    )
    per = pd.DataFrame(records)
    table = _table(per, BASELINE_METHOD)
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
    )
    return Backtest(per, table, _summary(table, BASELINE_METHOD), config)
