"""The public Python API (``import lifelong_core as lbe``): light to import, documented, and
the same functions as the command line.

The loop runs end to end on a small item-response store written through the API's own
import, and on the shipped demo store where a real dataset is needed.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lifelong_core as lbe
from lifelong_core import api
from lifelong_core.cli import main
from lifelong_core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_package_loads_no_heavy_dependency():
    code = (
        "import sys, json, lifelong_core; "
        "print(json.dumps({m: m in sys.modules for m in "
        "('streamlit', 'duckdb', 'scipy', 'pandas', 'plotly')}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert json.loads(out) == dict.fromkeys(
        ("streamlit", "duckdb", "scipy", "pandas", "plotly"), False
    )


def test_the_package_exports_exactly_the_api():
    assert sorted(lbe.__all__) == sorted(api.__all__)
    for name in lbe.__all__:
        assert getattr(lbe, name) is getattr(api, name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lbe.nope  # noqa: B018 (the attribute access is the test)


@pytest.mark.parametrize("name", api.__all__)
def test_every_public_function_has_a_numpydoc_docstring(name):
    obj = getattr(api, name)
    doc = inspect.getdoc(obj)
    assert doc, f"{name} has no docstring"
    if inspect.isfunction(obj) and inspect.signature(obj).parameters:
        assert "Parameters\n----------" in doc or "Returns\n-------" in doc, name


def _irt_store(path: Path, m: int = 40, n: int = 300, seed: int = 0) -> Path:
    """A store of ``m`` models whose results follow a 1-parameter item-response model,
    imported through :func:`lbe.import_long`."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1, m)
    difficulty = rng.normal(0, 1, n)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    A = (rng.random((m, n)) < p).astype(int)
    table = pd.DataFrame(
        {
            "model": np.repeat([f"org{i % 3}/model-{i}" for i in range(m)], n),
            "sample": np.tile([f"q{j}" for j in range(n)], m),
            "correct": A.ravel(),
            "domain": np.tile(["algebra", "geometry"] * (n // 2), m),
        }
    )
    csv = path.with_suffix(".csv")
    table.to_csv(csv, index=False)
    summary = lbe.import_long(path, csv, dataset="bench")
    assert summary["new_models"] == m and summary["new_samples"] == n
    return path


@pytest.fixture(scope="module")
def irt_store(tmp_path_factory) -> Path:
    return _irt_store(tmp_path_factory.mktemp("api") / "bench.duckdb")


def test_the_loop_on_a_store_written_through_the_api(irt_store):
    with lbe.open_store(irt_store) as store:
        new = "org1/model-7"
        truth = lbe.results(store, new)
        assert truth.index[0] == "q0" and set(np.unique(truth)) <= {0, 1}
        items = lbe.select_items(store, 60, model=new, leave_out=new, method="mirt")
        assert len(items) == 60 and len(set(items)) == 60
        est = lbe.estimate_new_model(
            store, {i: truth[i] for i in items}, leave_out=new, method="mirt"
        )
        overall = est.overall
        assert overall["lo"] <= overall["estimate"] <= overall["hi"]
        # A leave-out cache of 39 models ranks the new one among 40.
        assert est.m == 39 and 1 <= est.rank_lo <= est.rank <= est.rank_hi <= 40
        assert "95% rank interval" in est.summary(new)
        # More items, given the ones in hand, are new ones.
        more = lbe.select_items(
            store, 20, model=new, leave_out=new, method="mirt", exclude=dict.fromkeys(items, 1)
        )
        assert len(more) == 20 and not set(more) & set(items)


def test_select_items_is_the_command_lines_select(irt_store, tmp_path):
    out = tmp_path / "items.csv"
    assert (
        main(
            [
                "select",
                "--store",
                str(irt_store),
                "--budget",
                "25",
                "--method",
                "random",
                "--model",
                "me/new",
                "--seed",
                "3",
                "--format",
                "csv",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    with lbe.open_store(irt_store) as store:
        ours = lbe.select_items(store, 25, method="random", model="me/new", seed=3)
        common = lbe.select_items(store, 25, method="random", seed=3, common_items=True)
    assert pd.read_csv(out)["sample_id"].astype(str).tolist() == ours
    assert ours != common  # each model its own draw unless one set is asked for


def test_leave_out_and_results_refuse_unknown_models(irt_store):
    with lbe.open_store(irt_store) as store:
        with pytest.raises(InputError, match="no model 'nobody'"):
            lbe.results(store, "nobody")
        with pytest.raises(InputError, match="cannot be left out"):
            lbe.select_items(store, 5, leave_out="nobody", method="random")
        with pytest.raises(InputError, match="0 or 1"):
            lbe.estimate_new_model(store, {"q0": 2}, method="random")


def test_backtest_counts_and_weighting(irt_store):
    with lbe.open_store(irt_store) as store:
        bt = lbe.backtest(store, methods=["midpoint"], budgets=[20, 60], holdout=5, repeats=1)
        assert set(bt.table["method"]) == {"midpoint", "random"}
        counts = lbe.counts(store)
        assert counts.correct.shape == (40, 2)
    regions = lbe.task_weighting(lbe.vtab_counts(), step=0.25)
    frame = regions.to_frame()
    assert len(frame) == 15 and {"winner", "runner_up"} <= set(frame.columns)


def test_matched_accuracy_in_the_demo_store(demo_store_path):
    with lbe.open_store(demo_store_path) as store:
        res = lbe.matched_accuracy_in_store(
            store, "lifelong-digits", source="clean", target="clean-replication", model=0, runs=2
        )
    assert 0 <= res.fraction_unmatched <= 1
    assert 0 <= res.acc_target <= 1 and 0 <= res.acc_source <= 1


def test_run_sweep_is_the_engines(irt_store):
    with lbe.open_store(irt_store) as store:
        A = store.matrix()
    res = lbe.run_sweep(A[:20], A[20:], [16, 64], search="midpoint")
    assert isinstance(res, lbe.SweepResult) and list(res.table["budget"]) == [16, 64]
