"""Plotly figure builders for the Sort & Search pages.

Each builder takes numbers that ``lifelong_core`` already computed (arrays, DataFrames, fit
results) and returns a ``plotly.graph_objects.Figure``; none of them computes a result.
Budgets are drawn on a log2 axis, as in the papers' figures (Prabhu et al., 2024, Figs. 3-5, Prabhu et al. (2024, *Lifelong Benchmarks*)
Figs. 6, 9, 10).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lifelong_core.sortsearch.fits import FitResult

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
CORRECT_SCALE = [[0.0, "#f4f1ea"], [1.0, "#2b6cb0"]]  # 0 = wrong (light), 1 = correct (blue)
HEATMAP_LABEL_CHARS = 48  # longest model name a heatmap row shows whole


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def _fit_label(fit) -> str:
    p = fit.params
    if fit.model == "exponential":
        return f"fit {_fmt(p['a'])}·exp(−{_fmt(p['b'])}·n′) + {_fmt(p['c'])}  (R² {fit.r2:.3f})"
    return f"fit {_fmt(p['c'])}·n′^{_fmt(p['p'])}  (R² {fit.r2:.3f})"


def _short(text: str, width: int = 16) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _saved(ratio: float) -> str:
    return f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def _number(v: float) -> str:
    """A tick label in full: 0.02, 5, 2,000, 100,000 (never a bare mantissa or "100k")."""
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def log_ticks(values) -> tuple[list[float], list[str]]:
    """Tick positions and labels for a log axis over ``values`` (the positive finite ones):
    powers of ten (times 1, 2 and 5 over three decades or less) inside their range, every
    label the number in full (plotly's own log ticks mix bare digits such as "2, 3" with
    "100k").

    Examples
    --------
    >>> log_ticks([2, 3, 150000])[1]
    ['10', '100', '1,000', '10,000', '100,000']
    >>> log_ticks([0.013, 0.08])[1]
    ['0.02', '0.05']
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if not len(v):
        return [], []
    lo, hi = float(v.min()), float(v.max())
    # Over many decades, powers of ten alone; over a few, 1-2-5 (about 4 to 10 ticks).
    steps = (1,) if math.log10(hi / lo) > 3 else (1, 2, 5)
    ticks = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for m in steps:
            t = m * 10.0**e
            if lo / 1.0001 <= t <= hi * 1.0001:
                ticks.append(t)
    if len(ticks) < 2:  # less than a decade: the ends as they are
        ticks = sorted({lo, hi})
    return ticks, [_number(t) for t in ticks]


def _log_axis(fig: go.Figure, values, axis: str) -> None:
    vals, text = log_ticks(values)
    update = fig.update_xaxes if axis == "x" else fig.update_yaxes
    update(type="log", tickvals=vals or None, ticktext=text or None)


def _budget_axis(
    fig: go.Figure, budgets: Iterable[int], n_total: int | None, row=None, col=None
) -> None:
    budgets = sorted({int(b) for b in budgets})
    kwargs = {"row": row, "col": col} if row is not None else {}
    fig.update_xaxes(
        type="log",
        tickvals=budgets,
        ticktext=[str(b) for b in budgets],
        title_text="budget n′ (samples evaluated)",
        **kwargs,
    )
    if n_total and row is None:
        # The papers' "compute saved" axis (Prabhu et al., 2024, footnote 4): n / n'. Same positions,
        # relabelled, on a top axis that mirrors the bottom one.
        fig.update_layout(
            xaxis2=dict(
                type="log",
                overlaying="x",
                side="top",
                matches="x",
                showgrid=False,
                tickvals=budgets,
                ticktext=[_saved(n_total / b) for b in budgets],
                title=dict(
                    text="n / n′: the paper's compute saved, against running every item",
                    standoff=4,
                    font=dict(size=11),
                ),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=budgets, y=[None] * len(budgets), xaxis="x2", showlegend=False, hoverinfo="skip"
            )
        )


def budget_lines(
    df: pd.DataFrame,
    y: str,
    *,
    series: str | None = None,
    n_total: int | None = None,
    fits: Mapping[str, FitResult] | None = None,
    title: str = "",
    y_title: str | None = None,
    band: tuple[str, str] | None = None,
) -> go.Figure:
    """Lines of ``y`` against ``budget``, one per value of ``series``.

    The budget axis is logarithmic with the budgets as ticks and, when ``n_total`` is
    given, carries the papers' compute-saved axis on top, n / n′ (Prabhu et al., 2024,
    footnote 4), labelled as a saving against running every item (not against a random
    sample of the same error).

    Parameters
    ----------
    df : pandas.DataFrame
        A column ``budget``, the column ``y`` and, when given, the column ``series``.
    y : str
        The column drawn, e.g. ``"mae"``.
    series : str, optional
        Column whose values each get a line (None: one line).
    n_total : int, optional
        Number of samples the budgets are taken from; draws the compute-saved axis.
    fits : mapping, optional
        Series value (``""`` when there is one series) to a
        ``lifelong_core.sortsearch.fits.FitResult``; a successful fit is drawn dashed over
        a dense budget grid with its formula and R² in the legend.
    title : str
        Figure title.
    y_title : str, optional
        Title of the y axis and name in the hover (default ``y``).
    band : tuple of (str, str), optional
        Low and high columns drawn as a shaded range around each line; by default
        ``<y>_lo`` and ``<y>_hi`` when the table has them (tables summarised over
        repeated Sort splits carry them).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    if band is None and f"{y}_lo" in df and f"{y}_hi" in df:
        # Tables summarised over repeated Sort splits carry their band (studies.bands).
        band = (f"{y}_lo", f"{y}_hi")
    groups = [("", df)] if series is None else list(df.groupby(series, sort=False))
    budgets = df["budget"].to_numpy()
    for i, (key, part) in enumerate(groups):
        colour = PALETTE[i % len(PALETTE)]
        part = part.sort_values("budget")
        name = str(key) if series is not None else y
        # A series without a band of its own (an exact expectation) draws its line alone.
        if band is not None and part[list(band)].notna().all(axis=None):
            fig.add_trace(
                go.Scatter(
                    x=np.concatenate([part["budget"], part["budget"][::-1]]),
                    y=np.concatenate([part[band[1]], part[band[0]][::-1]]),
                    fill="toself",
                    fillcolor=colour,
                    opacity=0.15,
                    line=dict(width=0),
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
        fig.add_trace(
            go.Scatter(
                x=part["budget"],
                y=part[y],
                mode="lines+markers",
                name=name,
                line=dict(color=colour),
                hovertemplate=f"{name}<br>n′=%{{x}}<br>{y_title or y}=%{{y:.4f}}<extra></extra>",
            )
        )
        fit = (fits or {}).get(str(key) if series is not None else "")
        if fit is not None and getattr(fit, "ok", False) and len(part):
            grid = np.geomspace(part["budget"].min(), part["budget"].max(), 200)
            fig.add_trace(
                go.Scatter(
                    x=grid,
                    y=fit.predict(grid),
                    mode="lines",
                    name=_fit_label(fit),
                    line=dict(color=colour, dash="dash"),
                    hoverinfo="skip",
                )
            )
    _budget_axis(fig, budgets, n_total)
    fig.update_layout(
        title=dict(text=title, y=0.98, yanchor="top"),
        yaxis_title=y_title or y,
        legend=dict(orientation="h", y=-0.25),
        margin=dict(t=130 if n_total else 50, b=10),
        height=460 if n_total else 430,
    )
    return fig


def correlation_heatmap(
    corr: np.ndarray, labels: Sequence[str], accuracy: np.ndarray, title: str = ""
) -> go.Figure:
    """Model-by-model correlation matrix, rows and columns already sorted by accuracy.

    As Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, App. E, Fig. 7b. Axes are accuracy ranks; names appear on hover only for
    matrices of 60 models or fewer, since per-cell text for hundreds of models would make
    the figure tens of megabytes.

    Parameters
    ----------
    corr : numpy.ndarray
        Square matrix of correlations in [-1, 1].
    labels : sequence of str
        Model names in the matrix's order.
    accuracy : numpy.ndarray
        Accuracy of each model in the same order (fractions), shown on hover.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    m = len(labels)
    z = np.asarray(corr, dtype=np.float32)
    trace = dict(
        z=z,
        x=np.arange(1, m + 1),
        y=np.arange(1, m + 1),
        colorscale="RdBu",
        zmid=0,
        zmin=-1,
        zmax=1,
        colorbar=dict(title="corr"),
    )
    if m <= 60:
        acc = np.asarray(accuracy, dtype=float)
        trace["text"] = [
            [f"{labels[i]} ({acc[i]:.3f})<br>{labels[j]} ({acc[j]:.3f})" for j in range(m)]
            for i in range(m)
        ]
        trace["hovertemplate"] = "%{text}<br>correlation %{z:.3f}<extra></extra>"
    else:
        trace["hovertemplate"] = (
            "models ranked %{y} and %{x}<br>correlation %{z:.3f}<extra></extra>"
        )
    fig = go.Figure(go.Heatmap(**trace))
    fig.update_yaxes(autorange="reversed", title_text="model, by accuracy rank (1 = best)")
    fig.update_xaxes(title_text="model, by accuracy rank (1 = best)")
    fig.update_layout(title=title, height=520, margin=dict(t=50, b=10))
    return fig


def histogram(
    values: np.ndarray,
    *,
    title: str = "",
    x_title: str = "",
    bins: int = 60,
    vline: float | None = None,
) -> go.Figure:
    """Distribution of a set of values (e.g. the off-diagonal correlations, Fig. 7a).

    The figure of Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of
    Rapid Progress*, App. E. Values that are not finite are left out.

    Parameters
    ----------
    values : numpy.ndarray
        The values counted.
    title : str
        Figure title.
    x_title : str
        Title of the x axis.
    bins : int
        Largest number of bins (plotly may use fewer).
    vline : float, optional
        Draws a dashed vertical line at this value (e.g. zero, or the mean).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    fig = go.Figure(go.Histogram(x=v, nbinsx=bins, marker_color=PALETTE[0]))
    if vline is not None:
        fig.add_vline(x=vline, line_dash="dash", line_color="#444")
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title="count",
        height=380,
        margin=dict(t=50, b=10),
        bargap=0.02,
    )
    return fig


def estimated_vs_true_grid(
    per_model: pd.DataFrame,
    stats: pd.DataFrame,
    *,
    cols: int = 3,
    title: str = "",
    label: str | None = None,
    baselines: Sequence[tuple[str, pd.DataFrame]] = (),
) -> go.Figure:
    """Small multiples, one scatter of estimated against true accuracy per budget, with y = x.

    As Prabhu et al. (2024), *Lifelong Benchmarks: Efficient Model Evaluation in an Era of
    Rapid Progress*, Figs. 6, 9 and 10; every panel shares one range, so the panels can be
    compared by eye.

    Parameters
    ----------
    per_model : pandas.DataFrame
        budget, est_acc, true_acc, name (fractions), and optionally est_lo and est_hi,
        drawn as vertical error bars where present.
    stats : pandas.DataFrame
        budget, pearson, spearman: the correlations written in each panel's title.
    cols : int
        Panels per row.
    title : str
        Figure title.
    label : str, optional
        Legend name of ``per_model`` (default ``"estimate"``).
    baselines : sequence of (str, pandas.DataFrame)
        Legend names and the same columns for the baselines (a random sample, the first
        items of each task), drawn behind the method in muted colours.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    budgets = sorted(per_model["budget"].unique())
    rows = max(1, math.ceil(len(budgets) / cols))
    s = stats.set_index("budget")
    titles = [
        f"n′ = {b}: Pearson {s.loc[b, 'pearson']:.3f}, Spearman {s.loc[b, 'spearman']:.3f}"
        if b in s.index
        else f"n′ = {b}"
        for b in budgets
    ]
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles,
        shared_xaxes=False,
        shared_yaxes=False,
        horizontal_spacing=0.06,
        vertical_spacing=0.12 if rows > 1 else 0.1,
    )
    both = pd.concat([per_model, *(frame for _, frame in baselines)])
    lo = float(min(both["est_acc"].min(), both["true_acc"].min()))
    hi = float(max(both["est_acc"].max(), both["true_acc"].max()))
    # Muted colours behind the method: grey for the first baseline, sand for the second.
    muted = [("#9a9a9a", "rgba(150,150,150,0.3)"), ("#c9a66b", "rgba(201,166,107,0.3)")]
    pad = 0.02
    lim = [max(0.0, lo - pad), min(1.0, hi + pad)]

    def points(frame, b, colour, bar_colour, name, first):
        part = frame[frame["budget"] == b]
        err = None
        if {"est_lo", "est_hi"} <= set(frame.columns) and frame["est_lo"].notna().any():
            err = dict(
                type="data",
                symmetric=False,
                array=(part["est_hi"] - part["est_acc"]).clip(lower=0).fillna(0),
                arrayminus=(part["est_acc"] - part["est_lo"]).clip(lower=0).fillna(0),
                thickness=0.8,
                width=0,
                color=bar_colour,
            )
        return go.Scatter(
            x=part["true_acc"],
            y=part["est_acc"],
            mode="markers",
            error_y=err,
            marker=dict(size=5, color=colour, opacity=0.7),
            text=part["name"],
            name=name,
            legendgroup=name,
            showlegend=first and bool(baselines),
            hovertemplate=f"{name}: %{{text}}<br>true %{{x:.3f}}<br>"
            "estimated %{y:.3f}<extra></extra>",
        )

    for k, b in enumerate(budgets):
        r, c = k // cols + 1, k % cols + 1
        for i, (name, frame) in enumerate(baselines):
            colour, bar = muted[i % len(muted)]
            fig.add_trace(points(frame, b, colour, bar, name, k == 0), row=r, col=c)
        fig.add_trace(
            points(per_model, b, PALETTE[0], "rgba(31,119,180,0.35)", label or "estimate", k == 0),
            row=r,
            col=c,
        )
        fig.add_trace(
            go.Scatter(
                x=lim,
                y=lim,
                mode="lines",
                line=dict(color="#888", dash="dot"),
                hoverinfo="skip",
                showlegend=False,
            ),
            row=r,
            col=c,
        )
        fig.update_xaxes(range=lim, row=r, col=c, title_text="true accuracy" if r == rows else None)
        fig.update_yaxes(range=lim, row=r, col=c, title_text="estimated" if c == 1 else None)
    fig.update_layout(
        title=title,
        height=320 * rows + 60 + (40 if baselines else 0),
        margin=dict(t=80, b=10),
        legend=dict(orientation="h", y=-0.08 if baselines else 1),
    )
    fig.update_annotations(font_size=12)
    return fig


def rank_scatter(
    true_rank: np.ndarray, est_rank: np.ndarray, names: Sequence[str], title: str = ""
) -> go.Figure:
    """Rank by the estimate against rank by the truth (1 = best) for one budget.

    Parameters
    ----------
    true_rank : numpy.ndarray
        Each model's rank by true accuracy.
    est_rank : numpy.ndarray
        Each model's rank by estimated accuracy, same order.
    names : sequence of str
        Model names, same order, shown on hover.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    n = len(true_rank)
    fig = go.Figure(
        go.Scatter(
            x=true_rank,
            y=est_rank,
            mode="markers",
            text=list(names),
            marker=dict(size=5, opacity=0.7, color=PALETTE[0]),
            hovertemplate="%{text}<br>true rank %{x}<br>estimated rank %{y}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[1, n],
            y=[1, n],
            mode="lines",
            line=dict(color="#888", dash="dot"),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title="true rank (1 = best)",
        yaxis_title="rank by estimate",
        height=420,
        showlegend=False,
        margin=dict(t=50, b=10),
    )
    return fig


def matrix_heatmap(
    A: np.ndarray,
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    title: str = "",
    highlight_cols: Sequence[int] | None = None,
    highlight_rows: Sequence[int] | None = None,
    x_title: str = "sample",
    y_title: str = "model",
    height: int | None = None,
) -> go.Figure:
    """A 0/1 correctness matrix as a heatmap; highlighted columns and rows get a box outline.

    Model names are shown whole up to 48 characters on matrices of 30 rows or fewer; the
    hover always names the row and the column.

    Parameters
    ----------
    A : numpy.ndarray
        The (rows, columns) 0/1 matrix; 1 = correct.
    row_labels : sequence of str
        One label per row (models, usually).
    col_labels : sequence of str
        One label per column (samples, usually).
    title : str
        Figure title.
    highlight_cols : sequence of int, optional
        Column positions outlined in red (e.g. the samples evaluated).
    highlight_rows : sequence of int, optional
        Row positions outlined in red (e.g. the new model).
    x_title : str
        Title of the x axis.
    y_title : str
        Title of the y axis.
    height : int, optional
        Height in pixels (default: grows with the number of rows).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    A = np.asarray(A)
    fig = go.Figure(
        go.Heatmap(
            z=A,
            x=list(range(A.shape[1])),
            y=list(range(A.shape[0])),
            customdata=np.array(
                [[f"{r} · {c}" for c in col_labels] for r in row_labels], dtype=object
            ),
            hovertemplate="%{customdata}<br>correct=%{z}<extra></extra>",
            colorscale=CORRECT_SCALE,
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=1,
            ygap=1,
        )
    )
    for c in highlight_cols or ():
        fig.add_shape(
            type="rect",
            x0=c - 0.5,
            x1=c + 0.5,
            y0=-0.5,
            y1=A.shape[0] - 0.5,
            line=dict(color="#d62728", width=2),
        )
    for r in highlight_rows or ():
        fig.add_shape(
            type="rect",
            x0=-0.5,
            x1=A.shape[1] - 0.5,
            y0=r - 0.5,
            y1=r + 0.5,
            line=dict(color="#d62728", width=2),
        )
    # Model names are shown whole up to hub length (org/model-name-size-variant), the margin
    # growing to fit; only beyond that are they shortened (the hover has them whole).
    fig.update_yaxes(
        autorange="reversed",
        title_text=y_title,
        automargin=True,
        tickvals=list(range(A.shape[0])) if A.shape[0] <= 30 else None,
        ticktext=[_short(str(r), HEATMAP_LABEL_CHARS) for r in row_labels]
        if A.shape[0] <= 30
        else None,
    )
    fig.update_xaxes(title_text=x_title)
    fig.update_layout(
        title=title, height=height or max(260, 22 * A.shape[0] + 120), margin=dict(t=50, b=10)
    )
    return fig


def running_sum(
    positions: np.ndarray,
    observed: np.ndarray,
    *,
    upto: int,
    threshold: int | None,
    n: int,
    title: str = "",
) -> go.Figure:
    """The DP-search score S_j = sum of (2 a_i - 1) over the first j observations.

    The score whose maximum places the threshold (Prabhu et al. (2024), *Efficient
    Lifelong Model Evaluation in an Era of Rapid Progress*, §3.1.2, Listing 1
    ``dp_search``). Observations after step ``upto`` are drawn faded (not yet seen); the
    vertical line is the threshold ``t`` the search rule returns.

    Parameters
    ----------
    positions : numpy.ndarray
        Sorted positions evaluated, in the order they are evaluated.
    observed : numpy.ndarray
        The 0/1 result a_i at each of ``positions``.
    upto : int
        How many observations are shown as seen.
    threshold : int or None
        The rule's threshold, in sorted positions (None: no line).
    n : int
        Length of the sorted order (the x axis spans it).
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    positions = np.asarray(positions)
    obs = np.asarray(observed).astype(int)
    score = np.concatenate([[0], np.cumsum(2 * obs - 1)])
    x = np.concatenate([[-0.5], positions])
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x[: upto + 1],
            y=score[: upto + 1],
            mode="lines+markers",
            name="running sum (seen)",
            line=dict(color=PALETTE[0], shape="hv"),
        )
    )
    if upto < len(positions):
        fig.add_trace(
            go.Scatter(
                x=x[upto:],
                y=score[upto:],
                mode="lines+markers",
                name="not yet seen",
                line=dict(color="#bbb", shape="hv", dash="dot"),
                marker=dict(color="#bbb"),
            )
        )
    colours = np.where(obs == 1, PALETTE[2], PALETTE[1])
    fig.add_trace(
        go.Scatter(
            x=positions[:upto],
            y=score[1 : upto + 1],
            mode="markers",
            name="observation (+1 / −1)",
            marker=dict(color=colours[:upto], size=10, symbol="circle"),
            hovertemplate="sorted position %{x}<br>S=%{y}<extra></extra>",
        )
    )
    if threshold is not None:
        fig.add_vline(
            x=threshold - 0.5,
            line_dash="dash",
            line_color="#d62728",
            annotation_text=f"threshold t = {threshold}",
            annotation_position="top",
        )
    fig.update_layout(
        title=title,
        xaxis_title="sorted position (easy → hard)",
        yaxis_title="S_j = Σ (2a − 1)",
        xaxis_range=[-1, n],
        height=340,
        margin=dict(t=50, b=10),
        legend=dict(orientation="h", y=-0.3),
    )
    return fig


def predicted_vs_true(
    pred: np.ndarray, true: np.ndarray, *, title: str = "", x_title: str = "sorted position"
) -> go.Figure:
    """Two stacked rows, the predicted 0/1 vector and the truth, with mismatches marked.

    Parameters
    ----------
    pred : numpy.ndarray
        The predicted 0/1 row.
    true : numpy.ndarray
        The true 0/1 row, same length.
    title : str
        Figure title.
    x_title : str
        Title of the x axis.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    pred = np.asarray(pred).astype(int)
    true = np.asarray(true).astype(int)
    z = np.vstack([pred, true])
    fig = go.Figure(
        go.Heatmap(
            z=z,
            y=["predicted", "true"],
            colorscale=CORRECT_SCALE,
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=1,
            ygap=2,
            hovertemplate="%{y} at %{x}: %{z}<extra></extra>",
        )
    )
    wrong = np.flatnonzero(pred != true)
    if len(wrong):
        fig.add_trace(
            go.Scatter(
                x=wrong,
                y=["predicted"] * len(wrong),
                mode="markers",
                name="error",
                marker=dict(symbol="x", color="#d62728", size=8),
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        title=title, xaxis_title=x_title, height=220, margin=dict(t=50, b=10), showlegend=False
    )
    return fig


def rank_position(
    accuracies: pd.DataFrame,
    *,
    new_name: str,
    new_acc: float,
    lo: float | None = None,
    hi: float | None = None,
    title: str = "",
) -> go.Figure:
    """Where a new model would rank: the store's models by accuracy, the new one marked.

    Parameters
    ----------
    accuracies : pandas.DataFrame
        name, accuracy: the store's models on the same samples (fractions).
    new_name : str
        The new model's name.
    new_acc : float
        Its estimated accuracy (a fraction); its rank is one plus the number of models
        strictly above it.
    lo, hi : float, optional
        Its interval, drawn as an error bar when both are given.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    df = accuracies.sort_values("accuracy", ascending=False).reset_index(drop=True)
    fig = go.Figure(
        go.Scatter(
            x=np.arange(1, len(df) + 1),
            y=df["accuracy"],
            mode="markers",
            name="models in the store",
            text=df["name"],
            marker=dict(size=5, color="#9aa5b1"),
            hovertemplate="%{text}<br>rank %{x}<br>accuracy %{y:.3f}<extra></extra>",
        )
    )
    rank = int((df["accuracy"] > new_acc).sum()) + 1
    err = None
    if lo is not None and hi is not None:
        err = dict(
            type="data",
            symmetric=False,
            array=[max(hi - new_acc, 0)],
            arrayminus=[max(new_acc - lo, 0)],
            color=PALETTE[1],
        )
    fig.add_trace(
        go.Scatter(
            x=[rank],
            y=[new_acc],
            mode="markers",
            name=new_name,
            error_y=err,
            marker=dict(size=13, color=PALETTE[1], symbol="star"),
            hovertemplate=f"{new_name}<br>rank %{{x}}<br>estimated %{{y:.3f}}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title="rank (1 = best)",
        yaxis_title="accuracy",
        height=380,
        margin=dict(t=50, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def stream_lines(
    df: pd.DataFrame,
    *,
    x: str,
    ys: Sequence[str],
    names: Sequence[str] | None = None,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    log_y: bool = False,
) -> go.Figure:
    """Several columns of one table against a common x (e.g. evaluations over the stream).

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    x : str
        Column of the x axis.
    ys : sequence of str
        Columns drawn, one line each.
    names : sequence of str, optional
        Legend names of ``ys`` (default the column names).
    title : str
        Figure title.
    x_title : str
        Title of the x axis.
    y_title : str
        Title of the y axis.
    log_y : bool
        Logarithmic y axis, its ticks written in full.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for i, y in enumerate(ys):
        fig.add_trace(
            go.Scatter(
                x=df[x],
                y=df[y],
                mode="lines",
                name=(names or ys)[i],
                line=dict(color=PALETTE[i % len(PALETTE)]),
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title=y_title,
        height=400,
        margin=dict(t=50, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    if log_y:
        _log_axis(fig, df[list(ys)].to_numpy().ravel(), "y")
    return fig


def pareto(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    label: str,
    front: pd.DataFrame,
    colour: str | None = None,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
) -> go.Figure:
    """Configurations as points (x = cost, y = error) and the Pareto front as a step line.

    As Bornschein et al. (2023), *NEVIS'22: A Stream of 100 Tasks Sampled from 30 Years of
    Computer Vision Research*, §3, compare methods on a stream. The cost axis is
    logarithmic.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per configuration with the columns ``x``, ``y``, ``label`` and, when
        given, ``colour``.
    x : str
        Column of the cost (e.g. evaluations over the stream).
    y : str
        Column of the error.
    label : str
        Column naming each configuration on hover.
    front : pandas.DataFrame
        The front's configurations (columns ``x`` and ``y``), computed by the caller.
    colour : str, optional
        Column whose values get a colour and a legend entry each (e.g. the method).
    title : str
        Figure title.
    x_title : str
        Title of the x axis (default ``x``).
    y_title : str
        Title of the y axis (default ``y``).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    groups = [("", df)] if colour is None else list(df.groupby(colour, sort=True))
    for i, (key, part) in enumerate(groups):
        fig.add_trace(
            go.Scatter(
                x=part[x],
                y=part[y],
                mode="markers",
                name=str(key) if colour else "configuration",
                text=part[label],
                marker=dict(size=8, color=PALETTE[i % len(PALETTE)], opacity=0.75),
                hovertemplate="%{text}<br>"
                f"{x_title or x}"
                " %{x:,.0f}<br>"
                f"{y_title or y}"
                " %{y:.4f}<extra></extra>",
            )
        )
    f = front.sort_values(x)
    fig.add_trace(
        go.Scatter(
            x=f[x],
            y=f[y],
            mode="lines",
            name="Pareto front",
            line=dict(color="#222", shape="hv", width=2),
            hoverinfo="skip",
        )
    )
    _log_axis(fig, df[x].to_numpy(), "x")
    fig.update_xaxes(title_text=x_title or x)
    fig.update_layout(
        title=title,
        yaxis_title=y_title or y,
        height=460,
        margin=dict(t=50, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def observed_strip(
    n: int,
    positions: np.ndarray,
    observed: np.ndarray,
    *,
    upto: int,
    title: str = "",
    x_title: str = "sorted position",
) -> go.Figure:
    """The new row as the search sees it: the first ``upto`` evaluated cells, the rest blank.

    The evaluations still to come are marked by open red circles.

    Parameters
    ----------
    n : int
        Length of the row (samples in the sorted order).
    positions : numpy.ndarray
        Sorted positions evaluated, in the order they are evaluated.
    observed : numpy.ndarray
        The 0/1 result at each of ``positions``.
    upto : int
        How many evaluations are shown as seen.
    title : str
        Figure title.
    x_title : str
        Title of the x axis.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    z = np.full((1, n), np.nan)
    pos = np.asarray(positions)[:upto]
    z[0, pos] = np.asarray(observed)[:upto]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            y=["evaluated"],
            colorscale=CORRECT_SCALE,
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=1,
            hovertemplate="position %{x}: %{z}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=np.asarray(positions)[upto:],
            y=["evaluated"] * max(0, len(positions) - upto),
            mode="markers",
            marker=dict(symbol="circle-open", color="#d62728", size=9),
            hoverinfo="skip",
            showlegend=False,
        )
    )
    fig.update_xaxes(range=[-0.5, n - 0.5], title_text=x_title)
    fig.update_layout(title=title, height=170, margin=dict(t=45, b=10), plot_bgcolor="#ffffff")
    return fig


def interval_rounds(
    rounds: pd.DataFrame,
    *,
    target: float | None = None,
    true_acc: float | None = None,
    title: str = "",
) -> go.Figure:
    """The 95% interval narrowing round by round (adaptive evaluation).

    Parameters
    ----------
    rounds : pandas.DataFrame
        evaluated, acc, lo, hi: one row per round, accuracies as fractions; rounds
        without an interval are drawn without the band.
    target : float, optional
        The half-width the evaluation stops at, drawn as dotted lines around the last
        estimate.
    true_acc : float, optional
        The known accuracy in a simulation, drawn as a dashed line.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    df = rounds.dropna(subset=["lo", "hi"])
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=np.concatenate([df["evaluated"], df["evaluated"][::-1]]),
            y=np.concatenate([df["hi"], df["lo"][::-1]]),
            fill="toself",
            fillcolor="rgba(31,119,180,0.18)",
            line=dict(width=0),
            name="95% interval",
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=rounds["evaluated"],
            y=rounds["acc"],
            mode="lines+markers",
            name="estimate",
            line=dict(color=PALETTE[0]),
            hovertemplate="%{x} evaluated<br>estimate %{y:.3f}<extra></extra>",
        )
    )
    if true_acc is not None:
        fig.add_hline(
            y=true_acc,
            line=dict(color=PALETTE[1], dash="dash"),
            annotation_text="true accuracy (simulation)",
            annotation_position="bottom right",
        )
    if target is not None and len(rounds):
        last = float(rounds["acc"].iloc[-1])
        for y in (last - target, last + target):
            fig.add_hline(y=y, line=dict(color="#7f7f7f", dash="dot", width=1))
    fig.update_layout(
        title=title,
        xaxis_title="samples evaluated",
        yaxis_title="accuracy",
        height=380,
        margin=dict(t=50, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def backtest_panels(table: pd.DataFrame, *, title: str = "") -> go.Figure:
    """Three panels against the budget, one line per method.

    The mean absolute error of the accuracy (points), the interval coverage with its exact
    95% interval as error bars and the nominal 95% dashed, and the mean interval width
    (points).

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`lifelong_core.workflows.backtest.Backtest.table`: method, budget,
        mae_pts, coverage, coverage_lo, coverage_hi and width_pts.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=(
            "Mean absolute error of the accuracy (points)",
            "Interval coverage (target 95%)",
            "Mean interval width (points)",
        ),
        horizontal_spacing=0.07,
    )
    for i, (method, part) in enumerate(table.groupby("method", sort=False)):
        colour = PALETTE[i % len(PALETTE)]
        part = part.sort_values("budget")
        name = str(method)
        common = dict(mode="lines+markers", line=dict(color=colour), legendgroup=name, name=name)
        fig.add_trace(
            go.Scatter(
                x=part["budget"],
                y=part["mae_pts"],
                hovertemplate=f"{name}<br>n′=%{{x}}<br>MAE %{{y:.2f}} pts<extra></extra>",
                **common,
            ),
            row=1,
            col=1,
        )
        if part["coverage"].notna().any():
            fig.add_trace(
                go.Scatter(
                    x=part["budget"],
                    y=part["coverage"],
                    error_y=dict(
                        type="data",
                        symmetric=False,
                        array=part["coverage_hi"] - part["coverage"],
                        arrayminus=part["coverage"] - part["coverage_lo"],
                        thickness=1,
                        width=3,
                    ),
                    showlegend=False,
                    hovertemplate=f"{name}<br>n′=%{{x}}<br>coverage %{{y:.0%}}<extra></extra>",
                    **common,
                ),
                row=1,
                col=2,
            )
            fig.add_trace(
                go.Scatter(
                    x=part["budget"],
                    y=part["width_pts"],
                    showlegend=False,
                    hovertemplate=f"{name}<br>n′=%{{x}}<br>width %{{y:.1f}} pts<extra></extra>",
                    **common,
                ),
                row=1,
                col=3,
            )
    budgets = sorted({int(b) for b in table["budget"]})
    fig.add_hline(y=0.95, line=dict(color="#888", dash="dash"), row=1, col=2)
    for col in (1, 2, 3):
        _budget_axis(fig, budgets, None, row=1, col=col)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02], row=1, col=2)
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=3)
    fig.update_layout(
        title=title,
        height=420,
        margin=dict(t=80, b=10),
        legend=dict(orientation="h", y=-0.25),
    )
    fig.update_annotations(font_size=12)
    return fig


def backtest_ratio(table: pd.DataFrame, *, title: str = "") -> go.Figure:
    """The error of each method over a random sample's at the same budget, with its 95%
    bootstrap interval as error bars and 1 (as good as random) dashed.

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`lifelong_core.workflows.backtest.Backtest.table`: method, budget,
        mae_vs_random, ratio_lo and ratio_hi.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure()
    for i, (method, part) in enumerate(table.groupby("method", sort=False)):
        part = part.sort_values("budget")
        name = str(method)
        fig.add_trace(
            go.Scatter(
                x=part["budget"],
                y=part["mae_vs_random"],
                mode="lines+markers",
                name=name,
                line=dict(color=PALETTE[i % len(PALETTE)]),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=(part["ratio_hi"] - part["mae_vs_random"]).fillna(0),
                    arrayminus=(part["mae_vs_random"] - part["ratio_lo"]).fillna(0),
                    thickness=1,
                    width=3,
                ),
                hovertemplate=f"{name}<br>n′=%{{x}}<br>"
                "%{y:.2f}× a random sample's error<extra></extra>",
            )
        )
    fig.add_hline(y=1.0, line=dict(color="#888", dash="dash"))
    _budget_axis(fig, table["budget"], None)
    fig.update_yaxes(type="log", title_text="error × a random sample's (log scale)")
    fig.update_layout(
        title=title, height=380, margin=dict(t=60, b=10), legend=dict(orientation="h", y=-0.3)
    )
    return fig
