"""Figures of the Matched accuracy page (Esla Timothy Anzaku, Haohan Wang, Arnout Van
Messem, Wesley De Neve, *A Principled Evaluation Protocol for Comparative Investigation of
the Effectiveness of DNN Classification Models on Similar-but-non-identical Datasets*):
accuracy and matched accuracy per model, the gaps, accuracy against confidence, and one
model's reliability and density per subset.

Each builder takes tables that ``lifelong_core.matching`` computed and returns a plotly
figure; none of them computes a result.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

BLUE, ORANGE, GREY = "#1f77b4", "#ff7f0e", "#7f7f7f"
SUBSET_COLOURS = {
    "source": BLUE,
    "target": ORANGE,
    "matched source": "#17becf",
    "matched target": "#d62728",
    "unmatched target": GREY,
}


def _pct_axes(fig: go.Figure, x_title: str, y_title: str, x_pct: bool = False) -> go.Figure:
    fig.update_layout(
        xaxis_title=x_title,
        yaxis_title=y_title,
        legend=dict(orientation="h", y=-0.25),
        margin=dict(l=10, r=10, t=40, b=10),
        height=420,
    )
    fig.update_yaxes(tickformat=".0%")
    if x_pct:
        fig.update_xaxes(tickformat=".0%")
    return fig


def _model_lines(table: pd.DataFrame, lines: tuple, title: str, y_title: str) -> go.Figure:
    """One line per ``(column, name, colour, dash)`` over the models in the table's order."""
    x = list(range(1, len(table) + 1))
    fig = go.Figure()
    for col, name, colour, dash in lines:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=table[col],
                name=name,
                mode="lines",
                line=dict(color=colour, dash=dash, width=1.5),
                text=table["model"],
                hovertemplate="%{text}<br>%{y:.1%}<extra>" + name + "</extra>",
            )
        )
    fig.update_layout(title=title)
    return _pct_axes(fig, "model (sorted by increasing source accuracy)", y_title)


def fig_accuracy(table: pd.DataFrame) -> go.Figure:
    """Accuracy and matched accuracy on each side, one point per model.

    Parameters
    ----------
    table : pandas.DataFrame
        The comparison of every model, one row each, in the order drawn
        (:func:`lifelong_core.workflows.matching.all_models_table` sorts it by increasing
        source accuracy): model, acc_source, acc_target, matched_acc_source and
        matched_acc_target (fractions).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    return _model_lines(
        table,
        (
            ("acc_source", "accuracy, source", BLUE, "solid"),
            ("acc_target", "accuracy, target", ORANGE, "solid"),
            ("matched_acc_source", "matched accuracy, source", BLUE, "dot"),
            ("matched_acc_target", "matched accuracy, target", ORANGE, "dot"),
        ),
        "Accuracy and matched accuracy",
        "accuracy",
    )


def fig_gaps(table: pd.DataFrame) -> go.Figure:
    """The accuracy gap, the matched gap and the fraction unmatched per model.

    Parameters
    ----------
    table : pandas.DataFrame
        The comparison of every model, one row each, in the order drawn
        (:func:`lifelong_core.workflows.matching.all_models_table` sorts it by increasing
        source accuracy): model, acc_diff and matched_acc_diff (source minus target, fractions) and
        fraction_unmatched.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    return _model_lines(
        table,
        (
            ("acc_diff", "accuracy difference (source - target)", ORANGE, "solid"),
            ("matched_acc_diff", "matched accuracy difference", BLUE, "dot"),
            ("fraction_unmatched", "fraction unmatched", GREY, "dash"),
        ),
        "Gaps and fraction unmatched",
        "difference / fraction",
    )


def fig_gaps_top(table: pd.DataFrame, n: int) -> go.Figure:
    """The ``n`` models with the largest accuracy gap, named, as paired bars.

    Readable where hundreds of models make the line chart a band; the gap is taken in
    absolute value, the largest on top.

    Parameters
    ----------
    table : pandas.DataFrame
        The comparison of every model: model, acc_diff and matched_acc_diff (source
        minus target, fractions).
    n : int
        How many models to show.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    top = (
        table.reindex(table["acc_diff"].abs().sort_values(ascending=False).index).head(n).iloc[::-1]
    )
    fig = go.Figure()
    for col, name, colour in (
        ("acc_diff", "accuracy difference (source - target)", ORANGE),
        ("matched_acc_diff", "matched accuracy difference", BLUE),
    ):
        fig.add_trace(
            go.Bar(
                y=top["model"],
                x=top[col],
                name=name,
                orientation="h",
                marker_color=colour,
                hovertemplate="%{y}<br>%{x:.1%}<extra>" + name + "</extra>",
            )
        )
    fig.update_layout(
        title=f"The {len(top)} largest accuracy gaps and their matched gaps",
        barmode="group",
        height=max(360, 22 * len(top) + 140),
        legend=dict(orientation="h", y=-0.12),
        margin=dict(l=10, r=10, t=40, b=10),
    )
    fig.update_yaxes(automargin=True)
    fig.update_xaxes(tickformat=".0%", title="difference")
    return fig


def fig_confidence(points: pd.DataFrame) -> go.Figure:
    """Accuracy against mean confidence, one point per model and set, beside accuracy = confidence.

    Parameters
    ----------
    points : pandas.DataFrame
        :func:`lifelong_core.matching.comparison.accuracy_vs_confidence`: model, dataset
        (``source`` or ``target``), accuracy and confidence (fractions).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for side, colour in (("source", BLUE), ("target", ORANGE)):
        part = points[points["dataset"] == side]
        fig.add_trace(
            go.Scatter(
                x=part["confidence"],
                y=part["accuracy"],
                mode="markers",
                name=side,
                marker=dict(color=colour, size=6, opacity=0.7),
                text=part["model"],
                hovertemplate="%{text}<br>confidence %{x:.1%}<br>accuracy %{y:.1%}<extra></extra>",
            )
        )
    lo = float(min(points["confidence"].min(), points["accuracy"].min()))
    fig.add_trace(
        go.Scatter(
            x=[lo, 1],
            y=[lo, 1],
            mode="lines",
            name="accuracy = confidence",
            line=dict(color=GREY, dash="dash"),
        )
    )
    fig.update_layout(title="Accuracy versus mean confidence, one point per model and set")
    return _pct_axes(fig, "mean predicted probability (confidence)", "accuracy", x_pct=True)


def fig_reliability(rel: pd.DataFrame) -> go.Figure:
    """Accuracy against confidence per subset (binned), beside perfect calibration.

    Empty bins are left out of each line.

    Parameters
    ----------
    rel : pandas.DataFrame
        One model's reliability per subset
        (:func:`lifelong_core.matching.comparison.subset_reliability`): subset,
        confidence, accuracy (fractions) and count per bin.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for key, part in rel.groupby("subset", sort=False):
        name = str(key)
        part = part[part["count"] > 0]
        fig.add_trace(
            go.Scatter(
                x=part["confidence"],
                y=part["accuracy"],
                mode="lines+markers",
                name=name,
                line=dict(color=SUBSET_COLOURS.get(name)),
                customdata=part["count"],
                hovertemplate="confidence %{x:.1%}<br>accuracy %{y:.1%}<br>n = %{customdata}"
                "<extra>" + name + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="perfect calibration",
            line=dict(color="black", dash="dash", width=1),
        )
    )
    fig.update_layout(title="Accuracy versus confidence per subset (10 bins)")
    return _pct_axes(
        fig, "confidence (mean predicted probability in the bin)", "accuracy", x_pct=True
    )


def fig_density(den: pd.DataFrame) -> go.Figure:
    """Density of the predicted probabilities per subset.

    Parameters
    ----------
    den : pandas.DataFrame
        One model's densities per subset
        (:func:`lifelong_core.matching.comparison.subset_density`): subset, p (bin
        centre) and density.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for key, part in den.groupby("subset", sort=False):
        name = str(key)
        fig.add_trace(
            go.Scatter(
                x=part["p"],
                y=part["density"],
                mode="lines",
                name=name,
                line_shape="hvh",
                line=dict(color=SUBSET_COLOURS.get(name)),
            )
        )
    fig.update_layout(title="Density of predicted probabilities per subset")
    fig = _pct_axes(fig, "predicted probability", "density", x_pct=True)
    fig.update_yaxes(tickformat="")
    return fig


def percent_text(value) -> str:
    """A share as a metric shows it (``12.3%``), ``—`` where there is none.

    Parameters
    ----------
    value : float or None
        A fraction; None or NaN when there is no value.

    Returns
    -------
    str
    """
    return (
        "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1%}"
    )
