"""Chart builders (ui.charts) on small hand-made inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.sortsearch import fit_exponential, model_correlation
from lifelong_core.workflows.stream import pareto_front
from ui import charts


def test_budget_lines_draws_series_fit_and_saved_axis():
    b = np.array([8, 16, 32, 64])
    df = pd.DataFrame(
        {
            "budget": np.tile(b, 2),
            "mae": [0.4, 0.3, 0.25, 0.22, 0.5, 0.45, 0.41, 0.4],
            "method": ["a"] * 4 + ["b"] * 4,
        }
    )
    fit = fit_exponential(b, df["mae"][:4])
    fig = charts.budget_lines(df, "mae", series="method", n_total=1024, fits={"a": fit})
    names = [t.name for t in fig.data]
    assert "a" in names and "b" in names
    assert any(n and n.startswith("fit ") for n in names)
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis2.ticktext) == ["128×", "64×", "32×", "16×"]
    # The fitted curve spans exactly the budgets of its series.
    fit_trace = next(t for t in fig.data if t.name and t.name.startswith("fit "))
    assert fit_trace.x[0] == pytest.approx(8) and fit_trace.x[-1] == pytest.approx(64)


def test_budget_lines_skips_failed_fit():
    df = pd.DataFrame({"budget": [8, 16], "mae": [0.3, 0.2]})
    fit = fit_exponential([8, 16], [0.3, 0.2])  # too few points: ok=False
    assert not fit.ok
    fig = charts.budget_lines(df, "mae", fits={"": fit})
    assert not any(t.name and t.name.startswith("fit ") for t in fig.data)


def test_estimated_vs_true_grid_one_panel_per_budget_with_intervals():
    per = pd.DataFrame(
        {
            "budget": [8, 8, 8, 32, 32, 32],
            "est_acc": [0.5, 0.6, 0.7, 0.52, 0.61, 0.69],
            "true_acc": [0.5, 0.62, 0.7, 0.5, 0.62, 0.7],
            "name": list("abcabc"),
            "est_lo": [0.4, 0.5, 0.6, 0.5, 0.6, 0.65],
            "est_hi": [0.6, 0.7, 0.8, 0.55, 0.65, 0.72],
        }
    )
    stats = pd.DataFrame({"budget": [8, 32], "pearson": [0.99, 0.98], "spearman": [1.0, 1.0]})
    fig = charts.estimated_vs_true_grid(per, stats, cols=2)
    points = [t for t in fig.data if t.mode == "markers"]
    assert len(points) == 2
    assert list(points[0].text) == ["a", "b", "c"]
    assert points[0].error_y.arrayminus[0] == pytest.approx(0.1)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0].startswith("n′ = 8: Pearson 0.990")


def test_matrix_heatmap_and_running_sum():
    A = np.array([[1, 1, 0], [1, 0, 0]], dtype=np.uint8)
    fig = charts.matrix_heatmap(
        A, row_labels=["m1", "m2"], col_labels=["s1", "s2", "s3"], highlight_cols=[1]
    )
    assert np.array_equal(np.asarray(fig.data[0].z), A)
    assert len(fig.layout.shapes) == 1
    rs = charts.running_sum(np.array([0, 2, 4]), np.array([1, 0, 0]), upto=3, threshold=1, n=5)
    seen = rs.data[0]
    assert list(seen.y) == [0, 1, 0, -1]
    assert len(rs.layout.shapes) == 1
    assert (
        len(
            charts.running_sum(
                np.array([0, 2]), np.array([1, 1]), upto=1, threshold=None, n=3
            ).layout.shapes
        )
        == 0
    )


def test_observed_strip_reveals_only_seen_cells():
    fig = charts.observed_strip(6, np.array([1, 3, 5]), np.array([1, 0, 1]), upto=2)
    z = np.asarray(fig.data[0].z, dtype=float)[0]
    assert z[1] == 1 and z[3] == 0 and np.isnan(z[5]) and np.isnan(z[0])
    assert list(fig.data[1].x) == [5]


def test_rank_position_marks_the_new_model():
    acc = pd.DataFrame({"name": ["a", "b", "c"], "accuracy": [0.9, 0.7, 0.5]})
    fig = charts.rank_position(acc, new_name="new", new_acc=0.8, lo=0.75, hi=0.85)
    star = fig.data[-1]
    assert list(star.x) == [2] and list(star.y) == [0.8]


def test_correlation_heatmap_hover_only_for_small_matrices():
    rng = np.random.default_rng(0)
    A = (rng.random((5, 50)) < 0.6).astype(np.uint8)
    c = model_correlation(A)
    small = charts.correlation_heatmap(c.corr, [f"m{i}" for i in c.order], c.accuracy)
    assert small.data[0].text is not None
    big = np.eye(80)
    assert (
        charts.correlation_heatmap(big, [str(i) for i in range(80)], np.ones(80)).data[0].text
        is None
    )


def test_pareto_front_keeps_non_dominated_points():
    df = pd.DataFrame(
        {
            "cost": [1, 2, 2, 3, 4, 5],
            "err": [0.5, 0.4, 0.45, 0.4, 0.2, 0.3],
            "config": list("abcdef"),
        }
    )
    front = pareto_front(df, "cost", "err")
    assert list(front["config"]) == ["a", "b", "e"]
    fig = charts.pareto(df, x="cost", y="err", label="config", front=front)
    assert list(fig.data[-1].x) == [1, 2, 4]


def test_launcher_runs_streamlit_on_app_py_with_the_given_options(monkeypatch):
    import sys

    import streamlit.web.cli as cli

    from ui import serve

    seen = {}
    monkeypatch.setattr(cli, "main", lambda: seen.setdefault("argv", list(sys.argv)))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr("gc.freeze", lambda: None)  # the test process is not a server
    serve.main(["--server.port", "8600"])
    # Loopback unless an address is given: the server is not exposed by default; and the
    # serving options (no garbage collection after every run, no source watching, no
    # Deploy button).
    assert seen["argv"] == [
        "streamlit",
        "run",
        str(serve.APP),
        "--server.address",
        "127.0.0.1",
        "--runner.postScriptGC",
        "false",
        "--server.fileWatcherType",
        "none",
        "--client.toolbarMode",
        "viewer",
        "--server.port",
        "8600",
    ]
    assert serve.APP.name == "app.py" and serve.APP.exists()
    assert "scipy.stats" in sys.modules and "lifelong_core.store" in sys.modules


def test_heatmap_rows_show_hub_length_model_names_whole():
    names = ["meta-llama/Meta-Llama-3.1-70B-Instruct", "Qwen/Qwen2.5-Coder-32B-Instruct"]
    fig = charts.matrix_heatmap(
        np.ones((2, 3), dtype=np.uint8), row_labels=names, col_labels=["a", "b", "c"]
    )
    assert list(fig.layout.yaxis.ticktext) == names and fig.layout.yaxis.automargin


def test_log_axes_label_every_tick_in_full():
    vals, text = charts.log_ticks([2, 3, 150000])
    assert vals == [10.0, 100.0, 1000.0, 10000.0, 100000.0]
    assert text == ["10", "100", "1,000", "10,000", "100,000"]
    assert charts.log_ticks([0.013, 0.08])[1] == ["0.02", "0.05"]
    assert charts.log_ticks([50, 4000])[1] == ["50", "100", "200", "500", "1,000", "2,000"]
    df = pd.DataFrame({"x": [1, 2, 3], "a": [100.0, 2000.0, 90000.0], "b": [50.0, 60.0, 70.0]})
    fig = charts.stream_lines(df, x="x", ys=["a", "b"], log_y=True)
    assert fig.layout.yaxis.type == "log"
    assert list(fig.layout.yaxis.ticktext) == ["100", "1,000", "10,000"]
