"""The ternary figures put each category at the corner the labels say (hand-checked case)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgba
from ternary.helpers import project_point

from lifelong_core.stats import CountTable, category_stats, weight_regions
from ui.ternary import GRAY, default_colors, matplotlib_ternary, plotly_ternary, ternary_point


@pytest.fixture(scope="module")
def regions():
    # P is best on category "top", Q on "left", R on "right"; big n, so corners are clear.
    t = CountTable(
        models=("P", "Q", "R"),
        tasks=("t0", "t1", "t2"),
        task_category=("top", "left", "right"),
        correct=np.array([[900, 500, 500], [500, 800, 500], [500, 500, 700]]),
        total=np.full((3, 3), 1000),
    )
    return weight_regions(category_stats(t), step=0.1)


def test_weights_map_to_the_documented_corners():
    top = project_point(ternary_point(np.array([1.0, 0.0, 0.0])))
    left = project_point(ternary_point(np.array([0.0, 1.0, 0.0])))
    right = project_point(ternary_point(np.array([0.0, 0.0, 1.0])))
    assert np.allclose(top, [0.5, np.sqrt(3) / 2])
    assert np.allclose(left, [0.0, 0.0])
    assert np.allclose(right, [1.0, 0.0])


def test_static_map_colours_each_corner_by_its_winner(regions):
    colors = default_colors(regions)
    fig = matplotlib_ternary(regions, "hand case")
    ax = fig.axes[0]
    scale = 10
    corners = {"P": (scale / 2, scale * np.sqrt(3) / 2), "Q": (0.0, 0.0), "R": (float(scale), 0.0)}
    (hexagons,) = [c for c in ax.collections if len(c.get_paths()) == len(regions.weights)]
    centres = np.array([path.vertices.mean(axis=0) for path in hexagons.get_paths()])
    faces = hexagons.get_facecolors()
    for model, corner in corners.items():
        nearest = int(np.argmin(np.linalg.norm(centres - np.array(corner), axis=1)))
        assert np.allclose(faces[nearest], to_rgba(colors[model]))
    fig.canvas.draw()  # python-ternary places its labels when the figure is drawn
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    assert {"top", "left", "right", "top weight", "left weight", "right weight"} <= texts
    plt.close(fig)


def test_plotly_map_places_corners_and_gray(regions):
    fig = plotly_ternary(regions)
    by_name = {tr.name: tr for tr in fig.data}
    for model, axis in (("P", "a"), ("Q", "b"), ("R", "c")):
        values = np.asarray(getattr(by_name[model], axis))
        assert values.max() == pytest.approx(1.0)
    assert fig.layout.ternary.aaxis.title.text == "top weight"
    gray = weight_regions(regions.stats, step=0.1, se_mult=1e6)
    fig2 = plotly_ternary(gray)
    assert [tr.name for tr in fig2.data] == ["indeterminate"]
    assert fig2.data[0].marker.color == GRAY
    assert "SE" in fig2.data[0].hovertemplate
