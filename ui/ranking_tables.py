"""The Rankings page's tables: estimates and intervals as the page shows them (percent,
``mean (lo, hi)`` text, the report's Table A.3 as published, the hierarchical model beside
the bootstrap). Presentation only; the numbers come from
:mod:`lifelong_core.workflows.rankings` and :mod:`lifelong_core.stats`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def percent(df: pd.DataFrame, cols: Sequence[str] = ("mean", "lo", "hi"), digits: int = 2):
    """``df`` with the proportion columns ``cols`` in percent, rounded to ``digits``.

    Parameters
    ----------
    df : pandas.DataFrame
        A table with proportions (fractions in [0, 1]) in ``cols``.
    cols : sequence of str
        The columns to convert.
    digits : int
        Decimals kept.

    Returns
    -------
    pandas.DataFrame
        A copy; the other columns unchanged.
    """
    out = df.copy()
    for c in cols:
        out[c] = (out[c] * 100).round(digits)
    return out


def interval_text(mean: float, lo: float, hi: float, digits: int) -> str:
    """``"mean (lo, hi)"``: how a table cell shows an estimate and its interval."""
    return f"{mean:.{digits}f} ({lo:.{digits}f}, {hi:.{digits}f})"


PUBLISHED_SCOPES = ("overall", "natural", "specialized", "structured")


def published_leaderboard(
    pub: pd.DataFrame, method: str, normalized: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The LA-UR-24-25289 report's Table A.3 (VTAB-1k, published figures) for ``method``
    (``"bootstrap"`` or ``"bayesian"``; normalised figures exist for the bootstrap only):
    its rows, and the table as published, one ``mean (lo, hi)`` cell per scope, best
    overall first.

    Parameters
    ----------
    pub : pandas.DataFrame
        The published figures (:func:`lifelong_core.stats.vtab.load_published`): model,
        method, normalized, scope, mean_pct, lo_pct, hi_pct.
    method : {"bootstrap", "bayesian"}
        Which block of the table.
    normalized : bool
        The normalised figures (the bootstrap only; ignored for ``"bayesian"``).

    Returns
    -------
    tuple of (pandas.DataFrame, pandas.DataFrame)
        The rows of ``pub`` for that block, and the table as published: ``model`` then
        one column per scope (overall, natural, specialized, structured) of ``mean (lo,
        hi)`` text in percent with one decimal.
    """
    rows = pub[
        (pub["method"] == method) & (pub["normalized"] == (normalized and method == "bootstrap"))
    ]
    wide = rows.pivot(index="model", columns="scope", values=["mean_pct", "lo_pct", "hi_pct"])
    order = rows[rows["scope"] == "overall"].sort_values("mean_pct", ascending=False)["model"]
    table = pd.DataFrame({"model": order.to_numpy()})
    for sc in PUBLISHED_SCOPES:
        mean, lo, hi = (wide[(col, sc)].reindex(order) for col in ("mean_pct", "lo_pct", "hi_pct"))
        table[sc] = [interval_text(a, b, c, 1) for a, b, c in zip(mean, lo, hi)]
    return rows, table


def scheme_intervals(
    ranks: pd.DataFrame, models: Sequence[str], schemes: dict[str, str]
) -> pd.DataFrame:
    """Rank intervals side by side: one row per model (in ``models``' order), one
    ``mean (lo, hi)`` column per scheme, headed by its label (LA-UR-24-25289 report, 2024,
    §3.2, Tables 4, 5 and 11).

    Parameters
    ----------
    ranks : pandas.DataFrame
        Rank intervals of one scope: model, scheme, mean, lo, hi.
    models : sequence of str
        The models, in the order the rows take (each must have a row per scheme).
    schemes : dict of str to str
        Scheme key -> the column's label, in column order (e.g. ``stats.SCHEMES``).

    Returns
    -------
    pandas.DataFrame
        ``model`` then one text column per scheme, ranks with one decimal.
    """
    wide = pd.DataFrame({"model": list(models)})
    for key, label in schemes.items():
        part = ranks[ranks["scheme"] == key].set_index("model")
        wide[label] = [
            interval_text(part.loc[m, "mean"], part.loc[m, "lo"], part.loc[m, "hi"], 1)
            for m in wide["model"]
        ]
    return wide


def per_category_intervals(ci: pd.DataFrame) -> pd.DataFrame | None:
    """Intervals (in percent) per category beside overall: one row per model, best overall
    first, one ``mean (lo, hi)`` column per scope; None when there is only ``overall``.

    Parameters
    ----------
    ci : pandas.DataFrame
        Intervals in percent (:func:`percent` of a leaderboard): model, scope, mean, lo,
        hi, the ``overall`` rows best first.

    Returns
    -------
    pandas.DataFrame or None
        ``model``, ``overall``, then one column per category, cells with two decimals.
    """
    if ci["scope"].nunique() <= 1:
        return None
    wide = ci.pivot(index="model", columns="scope", values="mean")
    for scope in wide.columns:
        part = ci[ci["scope"] == scope].set_index("model")
        wide[scope] = [
            interval_text(part.loc[m, "mean"], part.loc[m, "lo"], part.loc[m, "hi"], 2)
            for m in wide.index
        ]
    order = ci[ci["scope"] == "overall"]["model"]
    columns = ["overall"] + [c for c in wide.columns if c != "overall"]
    return wide.loc[order, columns].reset_index()


def differences_in_points(diff: pd.DataFrame) -> pd.DataFrame:
    """Pairwise differences with ``diff``, ``lo`` and ``hi`` in points (3 decimals).

    Parameters
    ----------
    diff : pandas.DataFrame
        Pairwise differences as fractions (model_a, model_b, diff, lo, hi, level,
        excludes_zero).

    Returns
    -------
    pandas.DataFrame
        A copy with those three columns in points.
    """
    return percent(diff, ("diff", "lo", "hi"), 3)


def estimated_vs_true(board: pd.DataFrame, truth: pd.Series) -> pd.DataFrame:
    """Each estimated model's overall score and bootstrap interval beside its true accuracy
    (percent): the error, both ranks and whether the interval holds the truth.

    The bootstrap interval covers the test-set resampling of the estimated counts, not the
    estimator's own error, so this table shows how often it holds the truth all the same.

    Parameters
    ----------
    board : pandas.DataFrame
        The bootstrap leaderboard of the estimated counts (model, scope, point, lo, hi,
        fractions).
    truth : pandas.Series
        Each model's true overall accuracy in percent, by model name.

    Returns
    -------
    pandas.DataFrame
        One row per model: model, estimated_pct, lo_pct, hi_pct, true_pct, error_pts
        (estimated minus true), estimated_rank, true_rank (1 = best, ties share the best),
        true_in_interval.
    """
    est = board[board["scope"] == "overall"].set_index("model")
    comp = pd.DataFrame(
        {
            "model": est.index,
            "estimated_pct": (est["point"] * 100).round(2).to_numpy(),
            "lo_pct": (est["lo"] * 100).round(2).to_numpy(),
            "hi_pct": (est["hi"] * 100).round(2).to_numpy(),
            "true_pct": truth.reindex(est.index).round(2).to_numpy(),
        }
    )
    comp["error_pts"] = (comp["estimated_pct"] - comp["true_pct"]).round(2)
    comp["estimated_rank"] = comp["estimated_pct"].rank(ascending=False, method="min").astype(int)
    comp["true_rank"] = comp["true_pct"].rank(ascending=False, method="min").astype(int)
    comp["true_in_interval"] = (comp["true_pct"] >= comp["lo_pct"]) & (
        comp["true_pct"] <= comp["hi_pct"]
    )
    return comp


def estimator_interval_table(own: pd.DataFrame) -> pd.DataFrame:
    """The estimator's own intervals (the frame :func:`newest_estimated_counts` returns,
    percent) with whether each holds the truth and both ranks, best estimate first.

    Parameters
    ----------
    own : pandas.DataFrame
        model, mean, lo, hi, true (percent).

    Returns
    -------
    pandas.DataFrame
        model, est_pct, est_lo_pct, est_hi_pct, true_pct (two decimals),
        true_in_interval, estimated_rank, true_rank (1 = best).
    """
    out = own.copy()
    out["true_in_interval"] = (out["true"] >= out["lo"]) & (out["true"] <= out["hi"])
    out["estimated_rank"] = out["mean"].rank(ascending=False, method="min").astype(int)
    out["true_rank"] = out["true"].rank(ascending=False, method="min").astype(int)
    return (
        out.rename(
            columns={"mean": "est_pct", "lo": "est_lo_pct", "hi": "est_hi_pct", "true": "true_pct"}
        )
        .round(2)
        .sort_values("estimated_rank")
    )


def by_expected_rank(probs: pd.DataFrame) -> pd.DataFrame:
    """Rank probabilities (models x ranks) with the models in order of expected rank.

    Parameters
    ----------
    probs : pandas.DataFrame
        One row per model, one column per rank 1..M; each row sums to 1.

    Returns
    -------
    pandas.DataFrame
        The same rows, best expected rank first (ties in the order given).
    """
    expected = probs.to_numpy() @ np.arange(1, probs.shape[1] + 1)
    return probs.iloc[np.argsort(expected, kind="stable")]


def bayes_beside_bootstrap(ci: pd.DataFrame, board: pd.DataFrame, normalized: bool):
    """The hierarchical model's overall intervals (percent), beside the bootstrap's when
    both are on raw accuracy.

    Parameters
    ----------
    ci : pandas.DataFrame
        The hierarchical model's intervals in percent (model, scope, mean, lo, hi).
    board : pandas.DataFrame
        The bootstrap leaderboard as fractions (model, scope, mean, lo, hi, ...).
    normalized : bool
        Whether the bootstrap is on normalised scores; then it is not set beside.

    Returns
    -------
    pandas.DataFrame
        The ``overall`` rows of ``ci``; on raw accuracy merged by model with the
        bootstrap's, columns suffixed ``_bayes`` and ``_boot``.
    """
    overall = ci[ci["scope"] == "overall"]
    if normalized:
        return overall
    boot = percent(board[board["scope"] == "overall"])[["model", "mean", "lo", "hi"]]
    return overall.merge(boot, on="model", suffixes=("_bayes", "_boot"))
