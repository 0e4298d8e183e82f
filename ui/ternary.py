"""Ternary task-weighting figures (LA-UR-24-25289 report, 2024, §3.3, Figures 3-4): presentation only.

Both figures take a :class:`lifelong_core.stats.WeightRegions` and place the three
categories the same way, so the static and the interactive map can be read side by side:

* category 0 at the **top** corner, category 1 at the **bottom left**, category 2 at the
  **bottom right** (a corner is where that category has weight 1).

plotly's ``Scatterternary`` puts ``a`` on top, ``b`` bottom left, ``c`` bottom right.
python-ternary projects a point ``(x1, x2, x3)`` to ``(x1 + x2 / 2, x2 * sqrt(3) / 2)``,
so ``x1`` is the bottom-right corner, ``x2`` the top and ``x3`` the bottom left; hence the
point for weights ``(w0, w1, w2)`` is ``(w2, w0, w1)``. Its bottom axis reads ``x1``,
the right axis ``x2`` and the left axis ``x3``. The tests check a hand-computed corner.

The static map colours one hexagon per grid point, with python-ternary's hexagon
geometry (``heatmapping.hexagon_coordinates``, the ``hexagonal`` heatmap style): its
``triangular`` style blends the values of neighbouring points, which is meaningless for
categorical winners. The hexagons go into one ``PolyCollection`` rather than through
``tax.heatmap``, which fills them one ``ax.fill`` call at a time (12 s for the 5,151
points of a 0.01 grid, against well under a second here).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from lifelong_core.stats import INDETERMINATE, WeightRegions

GRAY = "#b0b0b0"
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#393b79", "#ad494a", "#637939", "#843c39", "#7b4173", "#3182bd", "#e6550d",
)  # fmt: skip


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """A fixed colour per model (by position in ``models``) plus gray for indeterminate."""
    colors = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(models)}
    colors[INDETERMINATE] = GRAY
    return colors


def ternary_point(weights: np.ndarray) -> np.ndarray:
    """python-ternary coordinates ``(x1, x2, x3)`` of category weights ``(w0, w1, w2)``."""
    w = np.asarray(weights)
    return np.stack([w[..., 2], w[..., 0], w[..., 1]], axis=-1)


def default_colors(regions: WeightRegions) -> dict[str, str]:
    """Colours by the models' equal-weight order, so the leading models get the most distinct hues."""
    order = np.argsort(-regions.stats.mean.mean(axis=1), kind="stable")
    return model_colors([regions.stats.models[i] for i in order])


def _legend_order(regions: WeightRegions) -> list[str]:
    winners = regions.winner
    names, counts = np.unique(winners, return_counts=True)
    order = [n for _, n in sorted(zip(-counts, names)) if n != INDETERMINATE]
    return order + ([INDETERMINATE] if INDETERMINATE in names else [])


def matplotlib_ternary(
    regions: WeightRegions, title: str = "", colors: dict[str, str] | None = None
):
    """The static ternary map: a hexagon per grid point, coloured by winner, gray if indeterminate.

    The task-weighting map of the LA-UR-24-25289 report (2024, §3.3, Figures 3-4), drawn
    with python-ternary; category 0 at the top, 1 bottom left, 2 bottom right, as
    :func:`plotly_ternary`.

    Parameters
    ----------
    regions : WeightRegions
        The winner at each point of the grid of weights over three categories
        (:class:`lifelong_core.stats.WeightRegions`).
    title : str
        Figure title; the rule for gray is written under it.
    colors : dict of str to str, optional
        Colour of each model and of the indeterminate points (default
        :func:`default_colors`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import ternary
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch
    from ternary.heatmapping import hexagon_coordinates

    colors = colors or default_colors(regions)
    scale = round(1.0 / regions.step)
    points = np.rint(ternary_point(regions.weights) * scale).astype(int)
    fig, ax = plt.subplots(figsize=(7.2, 6.2))
    fig, tax = ternary.figure(ax=ax, scale=scale)
    polygons = []
    for i, j, k in points:
        hexagon = hexagon_coordinates(i, j, k)
        polygons.append(
            np.stack(
                [hexagon[:, 0] + hexagon[:, 1] / 2.0, hexagon[:, 1] * np.sqrt(3) / 2.0], axis=1
            )
        )
    face = [to_rgba(colors[w]) for w in regions.winner]
    ax.add_collection(PolyCollection(polygons, facecolors=face, edgecolors=face, linewidths=0.3))
    tax.boundary(linewidth=1.2)
    c0, c1, c2 = regions.stats.categories
    tax.right_axis_label(f"{c0} weight", offset=0.16, fontsize=11)
    tax.left_axis_label(f"{c1} weight", offset=0.16, fontsize=11)
    tax.bottom_axis_label(f"{c2} weight", offset=0.06, fontsize=11)
    tax.top_corner_label(c0, offset=0.2, fontsize=12, fontweight="bold")
    tax.left_corner_label(c1, offset=0.36, fontsize=12, fontweight="bold")
    tax.right_corner_label(c2, offset=0.36, fontsize=12, fontweight="bold")
    step = max(1, scale // 5)
    labels = [f"{v / scale:.1f}" for v in range(0, scale + 1, step)]
    tax.ticks(
        axis="lbr",
        ticks=labels,
        locations=list(range(0, scale + 1, step)),
        linewidth=1,
        offset=0.02,
        fontsize=8,
    )
    tax.clear_matplotlib_ticks()
    tax.get_axes().axis("off")
    handles = [Patch(facecolor=colors[n], label=n) for n in _legend_order(regions)]
    ax.legend(
        handles=handles, loc="upper left", bbox_to_anchor=(0.78, 1.02), fontsize=8, frameon=False
    )
    subtitle = f"gray: top two within {regions.se_mult:g} SE (rho = {regions.rho:g})"
    fig.suptitle(f"{title}\n{subtitle}" if title else subtitle, fontsize=11, y=1.02)
    return fig


def plotly_ternary(
    regions: WeightRegions, title: str = "", colors: dict[str, str] | None = None
) -> go.Figure:
    """The interactive ternary map: one marker per grid point, details on hover.

    The hover gives the point's weights, the top two models, their difference and its
    standard error (points). Same layout as :func:`matplotlib_ternary`.

    Parameters
    ----------
    regions : WeightRegions
        The winner at each point of the grid of weights over three categories
        (:class:`lifelong_core.stats.WeightRegions`).
    title : str
        Figure title.
    colors : dict of str to str, optional
        Colour of each model and of the indeterminate points (default
        :func:`default_colors`).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    colors = colors or default_colors(regions)
    df = regions.to_frame()
    c0, c1, c2 = regions.stats.categories
    fig = go.Figure()
    for name in _legend_order(regions):
        part = df[df["winner"] == name]
        custom = np.stack(
            [
                part[c0],
                part[c1],
                part[c2],
                part["leader"],
                part["runner_up"],
                part["diff"] * 100,
                part["se"] * 100,
            ],
            axis=1,
        )
        fig.add_trace(
            go.Scatterternary(
                a=part[c0],
                b=part[c1],
                c=part[c2],
                mode="markers",
                name=name,
                marker=dict(color=colors[name], size=7, symbol="hexagon", line=dict(width=0)),
                customdata=custom,
                hovertemplate=(
                    f"{c0} %{{customdata[0]:.2f}}, {c1} %{{customdata[1]:.2f}}, {c2} %{{customdata[2]:.2f}}<br>"
                    "best: %{customdata[3]}<br>second: %{customdata[4]}<br>"
                    "difference: %{customdata[5]:.2f} pts, SE %{customdata[6]:.2f} pts"
                    f"<extra>{name}</extra>"
                ),
            )
        )
    fig.update_layout(
        title=title or None,
        ternary=dict(
            sum=1,
            aaxis=dict(title=dict(text=f"{c0} weight"), min=0, linewidth=1, ticks="outside"),
            baxis=dict(title=dict(text=f"{c1} weight"), min=0, linewidth=1, ticks="outside"),
            caxis=dict(title=dict(text=f"{c2} weight"), min=0, linewidth=1, ticks="outside"),
        ),
        # Room for the corner axis titles (long category names were clipped at the bottom
        # corners) and the legend below the triangle, not beside it.
        legend=dict(title="best model", orientation="h", y=-0.12, yanchor="top"),
        height=680,
        margin=dict(l=90, r=90, t=90, b=140),
    )
    return fig
