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


def _loaded_after(code: str, modules: tuple[str, ...]) -> dict[str, bool]:
    """Which of ``modules`` a fresh interpreter has imported after running ``code``."""
    probe = (
        f"{code}\nimport sys, json\nprint(json.dumps({{m: m in sys.modules for m in {modules!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    return json.loads(out)


def test_importing_the_package_loads_no_heavy_dependency():
    heavy = ("streamlit", "duckdb", "scipy", "pandas", "plotly")
    assert _loaded_after("import lifelong_core", heavy) == dict.fromkeys(heavy, False)


def test_the_command_line_starts_without_scipy_or_streamlit():
    # Building the parser imports every command module; each imports its engine inside
    # its run function, so `lbe --version` or `lbe info` does not load scipy or Streamlit.
    code = (
        "from lifelong_core.cli import build_parser; build_parser()\n"
        "import lifelong_core.stats.coverage"
    )
    heavy = ("streamlit", "scipy", "plotly")
    assert _loaded_after(code, heavy) == dict.fromkeys(heavy, False)


def test_stats_names_load_on_first_use():
    import importlib

    import lifelong_core.stats as stats

    def module(name):
        return importlib.import_module(f"lifelong_core.stats.{name}")

    assert stats.rank_intervals is module("ranks").rank_intervals
    assert stats.weight_regions is module("weighting").weight_regions
    # A function named like its submodule stays the function once the submodule is loaded.
    assert stats.bootstrap is module("bootstrap").bootstrap
    assert stats.normalize is module("normalize").normalize
    assert set(stats.__all__) <= set(dir(stats))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        stats.nope  # noqa: B018 (the attribute access is the test)


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
        assert set(bt.table["method"]) == {"midpoint", "random", "first-n"}
        counts = lbe.counts(store)
        assert counts.correct.shape == (40, 2)
        task = str(counts.tasks[0])
        one = lbe.backtest(store, methods=["midpoint"], budgets=[20], holdout=5, domains=[task])
        assert one.config["items"] < bt.config["items"]
        with pytest.raises(InputError, match="has no domain 'nope'"):
            lbe.backtest(store, methods=["midpoint"], budgets=[20], domains=["nope"])
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


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path)


def _same(written: pd.DataFrame, computed: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        written.reset_index(drop=True), computed.reset_index(drop=True), check_dtype=False
    )


@pytest.fixture(scope="module")
def counts_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rank") / "counts.csv"
    lbe.vtab_counts().to_frame().to_csv(path, index=False)
    return path


@pytest.mark.parametrize("method", ["bootstrap", "hierarchical"])
def test_rank_tables_are_the_command_lines(counts_csv, tmp_path, method):
    vtab_csv = counts_csv
    out, pairs, ranks = (tmp_path / f for f in ("ranks.csv", "pairs.csv", "rank_intervals.csv"))
    models = pd.read_csv(vtab_csv)["model"].unique()[:3].tolist()
    options = (
        ["--boot", "300"]
        if method == "bootstrap"
        else ["--chains", "2", "--draws", "200", "--warmup", "100"]
    )
    argv = ["rank", "--counts", str(vtab_csv), "--method", method, "--seed", "3", *options]
    argv += ["--out", str(out), "--pairwise", str(pairs), "--models", ",".join(models)]
    argv += ["--rank-intervals", str(ranks), "--schemes", "mean,avg_rank"]
    assert main(argv) == 0
    kw = (
        dict(boot=300)
        if method == "bootstrap"
        else dict(method=method, chains=2, draws=200, warmup=100)
    )
    _same(_csv(out), lbe.rank_models(str(vtab_csv), seed=3, **kw))
    _same(_csv(pairs), lbe.pairwise_differences(str(vtab_csv), models=models, seed=3, **kw))
    _same(
        _csv(ranks),
        lbe.rank_intervals(str(vtab_csv), schemes=["mean", "avg_rank"], seed=3, **kw),
    )
    assert list(_csv(out).columns) == [
        "model", "scope", "rank", "mean_pct", "lo_pct", "hi_pct", "level"
    ]  # fmt: skip


def test_rank_models_takes_counts_in_every_form(counts_csv):
    table = lbe.vtab_counts()
    frame = pd.read_csv(counts_csv)
    by_path = lbe.rank_models(counts_csv, boot=100, normalize=True)
    _same(by_path, lbe.rank_models(frame, boot=100, normalize=True))
    assert set(lbe.rank_models(table, boot=100)["model"]) == set(table.models)
    with pytest.raises(InputError, match="normalisation applies to the bootstrap") as err:
        lbe.rank_models(table, method="hierarchical", normalize=True)
    assert err.value.param == "normalize"
    with pytest.raises(InputError, match="unknown ranking method 'median'"):
        lbe.rank_models(table, method="median")
    with pytest.raises(InputError, match="unknown rank scheme 'median'"):
        lbe.rank_intervals(table, schemes=["median"], boot=50)


def test_sweep_on_a_store_is_the_command_lines(irt_store, tmp_path, monkeypatch):
    calls = []
    real = api.sweep

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    # The command's store path goes through the API function itself.
    monkeypatch.setattr(api, "sweep", spy)
    out, per = tmp_path / "sweep.csv", tmp_path / "per_model.csv"
    argv = ["sweep", "--store", str(irt_store), "--sort-models", "10", "--method", "midpoint"]
    assert (
        main(
            [*argv, "--budgets", "16,64", "--seed", "2", "--out", str(out), "--per-model", str(per)]
        )
        == 0
    )
    # The sweep, then the first-n baseline it is reported beside, on the same Sort set.
    assert [c["search"] for c in calls] == ["midpoint", "first-n"]
    assert calls[0]["sort_models"] == calls[1]["sort_models"] == 10
    with lbe.open_store(irt_store) as store:
        res = real(store, sort_models=10, search="midpoint", budgets=[16, 64], seed=2)
    _same(_csv(out), res.table)
    _same(_csv(per), res.per_model[list(_csv(per).columns)])
    assert len(res.per_model) == 2 * 30


def test_sweep_takes_sort_rows_and_refuses_a_sort_set_of_everyone(irt_store):
    with lbe.open_store(irt_store) as store:
        res = lbe.sweep(store, sort_rows=range(20), search="midpoint", budgets=[16])
        assert set(res.per_model["model_row"]) == set(range(20, 40))
        with pytest.raises(InputError, match="leave at least one to evaluate"):
            lbe.sweep(store, sort_rows=range(40), search="midpoint", budgets=[16])
        default = lbe.sweep(store, search="midpoint", budgets=[16])
        assert len(default.per_model) == 20  # half the models Sort, the other half scored


def test_first_n_through_the_api_is_the_first_items_of_each_task(irt_store):
    # The tasks alternate (q0 algebra, q1 geometry, ...): 5 items are algebra's first three
    # and geometry's first two, as --limit would run them with the remainder to the first.
    with lbe.open_store(irt_store) as store:
        items = lbe.select_items(store, 5, method="first-n", model="me/new")
        assert items == ["q0", "q1", "q2", "q3", "q4"]
        truth = lbe.results(store, "org0/model-0")
        est = lbe.estimate_new_model(
            store, truth[items], method="first-n", leave_out="org0/model-0"
        )
    assert est.table.set_index("scope").loc["overall", "estimate"] == pytest.approx(
        truth[items].mean()
    )


def test_the_package_root_is_a_plain_module_whose_sweep_is_the_api_function():
    import types

    import lifelong_core
    import lifelong_core.sweeping  # the engine's subpackage, imported beside the API

    assert type(lifelong_core) is types.ModuleType
    assert lifelong_core.sweep is api.sweep and callable(lifelong_core.sweep)
    assert lifelong_core.sweeping.run_sweep is api.run_sweep
