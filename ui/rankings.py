"""Figures of the Rankings page (LA-UR-24-25289 report, 2024, *Statistical Uncertainty
Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks*):
interval forests of scores and ranks, the pairwise difference matrix, posterior rank
probabilities and MCMC traces.

Each builder takes tables that ``lifelong_core.stats`` and
``lifelong_core.workflows.rankings`` computed and returns a plotly figure; none of them
computes a result.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


def forest(df: pd.DataFrame, title: str, x_title: str, truth: pd.Series | None = None) -> go.Figure:
    """Intervals as horizontal bars, best on top.

    Parameters
    ----------
    df : pandas.DataFrame
        model, mean, lo, hi, in the same units (fractions, points or ranks).
    title : str
        Figure title.
    x_title : str
        Title of the x axis (the units).
    truth : pandas.Series, optional
        The true value of each model (indexed by model, same units), drawn as a cross
        beside its interval, e.g. a model's full evaluation beside its estimate.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    df = df.sort_values("mean")
    fig = go.Figure(
        go.Scatter(
            x=df["mean"],
            y=df["model"],
            mode="markers",
            name="estimate",
            marker=dict(color=PALETTE[0], size=8),
            error_x=dict(
                type="data",
                symmetric=False,
                array=df["hi"] - df["mean"],
                arrayminus=df["mean"] - df["lo"],
            ),
            hovertemplate="%{y}: %{x:.2f}<extra></extra>",
        )
    )
    if truth is not None:
        fig.add_trace(
            go.Scatter(
                x=truth.reindex(df["model"]).to_numpy(),
                y=df["model"],
                mode="markers",
                name="true (full evaluation)",
                marker=dict(color=PALETTE[1], symbol="x", size=9),
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        height=max(320, 26 * len(df) + 120),
        margin=dict(l=10, r=10, t=50, b=40),
        legend=dict(orientation="h", y=-0.15),
    )
    return fig


def difference_matrix(diff: pd.DataFrame, models: list[str]) -> go.Figure:
    """Cell (row, column) holds row − column in points, with its interval; * where it excludes 0.

    The pairwise differences of the LA-UR-24-25289 report (2024, §2.1, Table 3) as a
    heatmap: each pair fills its cell and the mirrored one (the negated difference and
    interval).

    Parameters
    ----------
    diff : pandas.DataFrame
        :func:`lifelong_core.stats.pairwise_differences`: model_a, model_b, diff, lo, hi
        (fractions) and excludes_zero.
    models : list of str
        The models in the matrix's order; every model of ``diff`` must be among them.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    k = len(models)
    z = np.full((k, k), np.nan)
    text = [["" for _ in range(k)] for _ in range(k)]
    pos = {m: i for i, m in enumerate(models)}
    for model_a, model_b, dv, lov, hiv, excludes in zip(
        diff["model_a"],
        diff["model_b"],
        diff["diff"],
        diff["lo"],
        diff["hi"],
        diff["excludes_zero"],
    ):
        i, j = pos[str(model_a)], pos[str(model_b)]
        star = "*" if excludes else ""
        d0, lo0, hi0 = float(dv), float(lov), float(hiv)
        # Cell (a, b) shows a - b; the mirrored cell the negated difference and interval.
        for a, b, d, lo, hi in ((i, j, d0, lo0, hi0), (j, i, -d0, -hi0, -lo0)):
            z[a, b] = d * 100
            text[a][b] = f"{d * 100:+.2f}{star}<br>({lo * 100:+.2f}, {hi * 100:+.2f})"
    lim = np.nanmax(np.abs(z)) if np.isfinite(z).any() else 1.0
    # Real model names are long: axis labels are shortened (the hover keeps the full name)
    # and the cells grow with the number of models so their numbers stay inside.
    short = [m if len(m) <= 24 else m[:11] + "…" + m[-11:] for m in models]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=short,
            y=short,
            text=text,
            texttemplate="%{text}",
            textfont=dict(size=11 if k <= 6 else 9),
            colorscale="RdBu",
            zmid=0,
            zmin=-lim,
            zmax=lim,
            customdata=[[(a, b) for b in models] for a in models],
            colorbar=dict(title="row − column<br>(points)"),
            hovertemplate="%{customdata[0]} − %{customdata[1]}: %{z:.2f} points<extra></extra>",
        )
    )
    fig.update_layout(
        title="Pairwise differences (row − column), Bonferroni-corrected intervals; * excludes 0",
        height=max(420, 80 * k + 180),
        yaxis=dict(autorange="reversed", automargin=True),
        xaxis=dict(tickangle=-30, automargin=True),
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return fig


def traces(draws: np.ndarray, name: str, model: str) -> go.Figure:
    """One line per chain of a parameter's kept draws, to judge the MCMC's mixing.

    Parameters
    ----------
    draws : numpy.ndarray
        (chains, draws) after warm-up.
    name : str
        The parameter's name (y axis and title), e.g. ``mean accuracy``.
    model : str
        The model the parameter belongs to (title).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for c in range(draws.shape[0]):
        fig.add_trace(
            go.Scatter(y=draws[c], mode="lines", name=f"chain {c + 1}", line=dict(width=1))
        )
    fig.update_layout(
        title=f"Trace of {name}: {model}",
        xaxis_title="draw (after warm-up)",
        yaxis_title=name,
        height=320,
    )
    return fig


def rank_prob_heatmap(probs: pd.DataFrame) -> go.Figure:
    """Posterior probability of every rank (columns) for every model (rows).

    Parameters
    ----------
    probs : pandas.DataFrame
        One row per model (index), one column per rank (1 = best), probabilities in
        [0, 1]; rows are drawn in the frame's order, first on top.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure(
        go.Heatmap(
            z=probs.to_numpy(),
            x=[str(c) for c in probs.columns],
            y=list(probs.index),
            colorscale="Blues",
            zmin=0,
            zmax=1,
            colorbar=dict(title="P(rank)"),
            hovertemplate="%{y}: P(rank %{x}) = %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Posterior rank probabilities (unweighted mean of task accuracies)",
        xaxis_title="rank (1 = best)",
        height=max(320, 24 * len(probs) + 120),
        yaxis=dict(autorange="reversed"),
    )
    return fig


def rank_forest(part: pd.DataFrame, title: str, n_models: int) -> go.Figure:
    """Rank intervals as a forest, best on the right, the axis labelled in ranks.

    Parameters
    ----------
    part : pandas.DataFrame
        model, mean, lo, hi in ranks (1 = best), e.g. one scheme's rows of
        :func:`lifelong_core.stats.rank_intervals`.
    title : str
        Figure title.
    n_models : int
        Number of models ranked: the axis has a tick per rank from 1 to it.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    flipped = part.copy()
    flipped["mean"] = -part["mean"]
    flipped["lo"] = -part["hi"]
    flipped["hi"] = -part["lo"]
    fig = forest(flipped, title, "− rank")
    fig.update_xaxes(
        tickvals=-np.arange(1, n_models + 1),
        ticktext=[str(i) for i in range(1, n_models + 1)],
        title="rank",
    )
    return fig
