"""Every name of the Python API called as a careless or hostile caller would: wrong types,
NaN, empty and huge values. Each call is refused at the boundary with ``InputError`` or
``TypeError`` in one sentence naming the parameter, before any work, and never answers.

Once 17 such calls raised cryptic errors (``lbe.cache("path.duckdb")``: ``'str' object has
no attribute 'datasets'``; ``matched_accuracy(None)``; ``import_lm_eval(metric=5)``;
``sweep(seed=nan)``: NumPy's SeedSequence message; ``rank_intervals(schemes=[])``: pandas'
"No objects to concatenate"; a bare ``AssertionError`` from ``get_method``) and 13 gave
silent wrong answers (``estimate_new_model(store, {"item0": 0.5})`` used 0;
``backtest(budgets="32")`` ran budgets 2 and 3; ``run_sweep`` on a matrix holding 2, 7 or
NaN returned an MAE of -113.3; ``register`` took ``"os:system"`` and replaced ``random``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lifelong_core as lbe
from lifelong_core import api
from lifelong_core.errors import InputError

NAN, INF = float("nan"), float("inf")
HUGE_INT = 10**30
LONG = "x" * 100_000

# Values that no parameter of a kind may take.
BAD = {
    "store": ["store.duckdb", Path("store.duckdb"), None, 5, object()],
    "path": [None, 5, 3.5, NAN, ["a.csv"], b"a.csv", "", "a\x00b.csv"],
    "text": [None, 5, 3.5, NAN, "", "   ", LONG, "a\nb", ["a"], b"a"],
    "opt_text": [5, 3.5, NAN, "", LONG, "a\tb", ["a"]],
    "whole": [None, NAN, INF, 3.5, "8", True, -1, HUGE_INT, [8]],
    "opt_whole": [NAN, 3.5, "8", True, -1, HUGE_INT, [8]],
    "seed": [None, NAN, -1, 1.5, "0", True, HUGE_INT],
    "flag": [None, "yes", 1, NAN, "False"],
    "level": [None, NAN, INF, 0, 1, 1.5, -0.1, "0.9", True],
    "real": [None, NAN, INF, -INF, "1", True, [1.0]],
    "names": ["auto", 5, [], [5], [LONG], [""], {"a": 1}],
    "ints": ["32", 32, [], ["32"], [NAN], [1.5], [0], [HUGE_INT], [True]],
    "results": [None, [], {}, "a/0", 5, {"a/0": 0.5}, {"a/0": NAN}, {"a/0": 2}, {"a/0": "1"}],
    "method": [None, 5, "", "no-such-method", ["midpoint"], LONG],
    "counts": [None, 5, [1, 2], {"m": 1}],
    "object": [None, 5, [1, 2], {"m": 1}],
    "caps": [5, "cheap", {"interval": True}],
    "step": [None, NAN, INF, 0, -0.1, 1.5, "0.1", True],
    "corr": [None, NAN, INF, 1, -1, 1.5, "0", True],
    "matrix": [None, "A.npy", [[2, 7], [1, 0]], "nan", "empty"],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A small store (14 models, two domains of 40 items, with confidences and labels),
    its counts, predictions and a 0/1 matrix: everything a valid call needs."""
    folder = tmp_path_factory.mktemp("api")
    rng = np.random.default_rng(0)
    rows = []
    for domain, category in (("a", "x"), ("b", "y")):
        for j in range(40):
            label = int(rng.integers(0, 3))
            for i in range(14):
                correct = int(rng.random() < 0.3 + 0.04 * i)
                rows.append(
                    dict(
                        model=f"m{i}",
                        sample=f"{domain}/{j}",
                        correct=correct,
                        dataset="d",
                        domain=domain,
                        category=category,
                        confidence=float(rng.uniform(0.3, 1.0)),
                        predicted=label if correct else (label + 1) % 3,
                        label=label,
                    )
                )
    csv = folder / "long.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    path = folder / "s.duckdb"
    lbe.import_long(path, csv)
    store = lbe.open_store(path)
    from lifelong_core.matching import make_predictions

    y = rng.integers(0, 3, 60)
    preds = make_predictions(y, (y + (rng.random(60) < 0.3)) % 3, rng.uniform(0.3, 1.0, 60))
    A = (rng.random((12, 40)) < 0.5).astype(np.uint8)
    yield {
        "path": path,
        "csv": csv,
        "store": store,
        "counts": lbe.counts(store),
        "preds": preds,
        "A": A,
        "folder": folder,
    }
    store.close()


def _calls(w) -> dict:
    """name -> (function, valid keyword arguments, {parameter: kind})."""
    s, f = w["store"], w["folder"]
    A = w["A"]
    return {
        "open_store": (
            lbe.open_store,
            dict(path=w["path"], read_only=True),
            {"path": "path", "read_only": "flag"},
        ),
        "create_store": (lbe.create_store, dict(path=f / "new.duckdb"), {"path": "path"}),
        "cache": (
            lbe.cache,
            dict(store=s, dataset="d", leave_out=None),
            {"store": "store", "dataset": "opt_text"},
        ),
        "results": (
            lbe.results,
            dict(store=s, model="m0", dataset="d"),
            {"store": "store", "model": "text", "dataset": "opt_text"},
        ),
        "import_long": (
            lbe.import_long,
            dict(store_path=f / "l.duckdb", table=w["csv"], dataset="d"),
            {"store_path": "path", "table": "path", "dataset": "opt_text"},
        ),
        "import_file": (
            lbe.import_file,
            dict(store_path=f / "f.duckdb", kind="long", path=w["csv"], dataset="d"),
            {"store_path": "path", "kind": "text", "path": "path", "dataset": "opt_text"},
        ),
        "import_matrix": (
            lbe.import_matrix,
            dict(
                store_path=f / "m.duckdb",
                matrix=f / "A.npy",
                models=f / "m.txt",
                samples=f / "s.txt",
            ),
            {
                "store_path": "path",
                "matrix": "path",
                "models": "path",
                "samples": "path",
                "dataset": "opt_text",
            },
        ),
        "import_lm_eval": (
            lbe.import_lm_eval,
            dict(store_path=f / "e.duckdb", path=f / "run"),
            {
                "store_path": "path",
                "path": "path",
                "model": "opt_text",
                "dataset": "opt_text",
                "metric": "opt_text",
                "filter": "opt_text",
                "strict": "flag",
            },
        ),
        "import_inspect": (
            lbe.import_inspect,
            dict(store_path=f / "i.duckdb", log=f / "log.eval"),
            {
                "store_path": "path",
                "log": "path",
                "model": "opt_text",
                "scorer": "opt_text",
                "epoch": "opt_whole",
                "dataset": "opt_text",
            },
        ),
        "sweep": (
            lbe.sweep,
            dict(store=s, dataset="d", sort_models=5, budgets=[4, 8], search="midpoint", seed=0),
            {
                "store": "store",
                "dataset": "opt_text",
                "sort_models": "opt_whole",
                "budgets": "ints",
                "search": "method",
                "seed": "seed",
            },
        ),
        "select_items": (
            lbe.select_items,
            dict(store=s, budget=8, dataset="d", method="midpoint", seed=0),
            {
                "store": "store",
                "budget": "whole",
                "dataset": "opt_text",
                "method": "method",
                "model": "opt_text",
                "seed": "seed",
                "common_items": "flag",
            },
        ),
        "estimate_new_model": (
            lbe.estimate_new_model,
            dict(store=s, results={"a/0": 1, "a/1": 0, "b/2": 1}, dataset="d", method="midpoint"),
            {"store": "store", "results": "results", "dataset": "opt_text", "method": "method"},
        ),
        "backtest": (
            lbe.backtest,
            dict(
                store=s,
                dataset="d",
                methods=["midpoint"],
                budgets=[8],
                holdout=2,
                repeats=1,
                seed=0,
            ),
            {
                "store": "store",
                "dataset": "opt_text",
                "methods": "names",
                "budgets": "ints",
                "holdout": "whole",
                "split": "text",
                "repeats": "whole",
                "seed": "seed",
                "common_items": "flag",
            },
        ),
        "counts": (
            lbe.counts,
            dict(store=s, dataset="d"),
            {"store": "store", "dataset": "opt_text"},
        ),
        "rank_models": (
            lbe.rank_models,
            dict(counts=w["counts"], boot=50),
            {
                "counts": "counts",
                "method": "text",
                "level": "level",
                "boot": "whole",
                "normalize": "flag",
                "seed": "seed",
                "chains": "whole",
                "draws": "whole",
            },
        ),
        "pairwise_differences": (
            lbe.pairwise_differences,
            dict(counts=w["counts"], models=["m0", "m1"], boot=50),
            {
                "counts": "counts",
                "models": "names",
                "level": "level",
                "boot": "whole",
                "seed": "seed",
            },
        ),
        "rank_intervals": (
            lbe.rank_intervals,
            dict(counts=w["counts"], schemes=["mean"], boot=50),
            {
                "counts": "counts",
                "schemes": "names",
                "level": "level",
                "boot": "whole",
                "seed": "seed",
            },
        ),
        "task_weighting": (
            lbe.task_weighting,
            dict(table=lbe.vtab_counts(), step=0.1),
            {"table": "counts", "step": "step", "se_mult": "real", "rho": "corr"},
        ),
        "matched_accuracy": (
            lbe.matched_accuracy,
            dict(source=w["preds"], target=w["preds"], runs=2),
            {
                "source": "object",
                "target": "object",
                "eps": "real",
                "criterion": "text",
                "runs": "whole",
                "seed": "seed",
            },
        ),
        "matched_accuracy_in_store": (
            lbe.matched_accuracy_in_store,
            dict(store=s, dataset="d", source="a", target="b", model="m0", runs=2),
            {
                "store": "store",
                "dataset": "text",
                "source": "text",
                "target": "text",
                "eps": "real",
                "criterion": "text",
                "runs": "whole",
                "seed": "seed",
            },
        ),
        "available_methods": (lbe.available_methods, dict(kind="model"), {"kind": "opt_text"}),
        "capabilities": (lbe.capabilities, dict(name="midpoint"), {"name": "method"}),
        "get_method": (lbe.get_method, dict(name="midpoint"), {"name": "method"}),
        "register": (
            lbe.register,
            dict(name="api-hostile-tiny", target="lifelong_core.methods.insert_m:InsertM"),
            {
                "name": "text",
                "target": "method",
                "kind": "opt_text",
                "capabilities": "caps",
                "replace": "flag",
            },
        ),
        "run_sweep": (
            lbe.run_sweep,
            dict(A_sort=A[:6], A_eval=A[6:], budgets=[4], search="midpoint", seed=0),
            {
                "A_sort": "matrix",
                "A_eval": "matrix",
                "budgets": "ints",
                "search": "method",
                "seed": "seed",
            },
        ),
        "Capabilities": (
            lbe.Capabilities,
            dict(family="estimator"),
            {"family": "text", "interval": "flag", "cheap": "flag", "packed": "flag"},
        ),
    }


def _matrix(value, A):
    if value == "nan":
        out = A.astype(float)
        out[0, 0] = NAN
        return out
    if value == "empty":
        return np.zeros((0, A.shape[1]), np.uint8)
    return value


CASES = [
    (name, param, i)
    for name, (_, _, params) in _calls(
        dict.fromkeys(("store", "path", "csv", "counts", "preds", "folder"))
        | {"A": np.zeros((12, 40), np.uint8), "folder": Path("/nowhere")}
    ).items()
    for param, kind in params.items()
    for i in range(len(BAD[kind]))
]


def test_every_public_name_is_covered():
    names = {name for name, _, _ in CASES}
    # Classes of results and of kept state, not calls that read a user's data.
    callables = {
        n
        for n in api.__all__
        if callable(getattr(api, n)) and n not in ("SweepResult", "FitMemory")
    }
    # Without arguments: demo_store and vtab_counts take none to be wrong about.
    assert callables - names == {"demo_store", "vtab_counts"}, callables - names


@pytest.mark.parametrize("name,param,i", CASES, ids=[f"{n}-{p}-{i}" for n, p, i in CASES])
def test_a_hostile_argument_is_one_sentence_and_no_answer(world, name, param, i):
    fn, valid, params = _calls(world)[name]
    value = BAD[params[param]][i]
    if params[param] == "matrix":
        value = _matrix(value, world["A"])
    with pytest.raises((InputError, TypeError)) as info:
        fn(**{**valid, param: value})
    message = str(info.value)
    assert "\n" not in message and 0 < len(message) < 400, message
    assert message.endswith((".", "?")), message
    stem = param.rstrip("s").split("_")[0].lower()
    parts = {w for w in param.lower().split("_") if len(w) > 2}
    named = {stem, param.lower(), *parts, "budget", "seed", "the store", "method", "name", "matrix"}
    assert any(w in message.lower() for w in named), (param, message)


def test_calls_that_once_failed_cryptically_or_answered_silently(world):
    store = world["store"]
    with pytest.raises(TypeError, match="store must be an open Store"):
        lbe.cache("path.duckdb")
    with pytest.raises(TypeError, match="source must be Predictions"):
        lbe.matched_accuracy(None, world["preds"])
    with pytest.raises(TypeError, match="metric must be text"):
        lbe.import_lm_eval(world["folder"] / "x.duckdb", world["folder"], metric=5)
    with pytest.raises(TypeError, match="seed must be a whole number"):
        lbe.sweep(store, dataset="d", seed=NAN)
    with pytest.raises(InputError, match="schemes is empty"):
        lbe.rank_intervals(world["counts"], schemes=[])
    with pytest.raises(InputError, match=r"results for sample 'a/0' is 0\.5"):
        lbe.estimate_new_model(store, {"a/0": 0.5}, dataset="d")
    with pytest.raises(TypeError, match="budgets must be a list of whole numbers, got str"):
        lbe.backtest(store, dataset="d", budgets="32")
    A = world["A"].astype(np.int64)
    A[0, 0], A[1, 1] = 2, 7
    with pytest.raises(InputError, match="only 0 and 1"):
        lbe.run_sweep(A[:6], A[6:], [4], search="midpoint")
    with pytest.raises(InputError, match="not a class of module 'os'"):
        lbe.register("shell", "os:system")
    with pytest.raises(InputError, match="already registered as 'random'"):
        lbe.register("random", "lifelong_core.methods.insert_m:InsertM")
    assert lbe.capabilities("random").family == "baseline"  # not replaced


def test_register_replaces_only_when_told_and_refuses_what_cannot_load():
    from lifelong_core.methods.registry import method_spec, unregister

    lbe.register("api-tiny", "lifelong_core.methods.insert_m:InsertM", rule="midpoint")
    try:
        with pytest.raises(InputError, match="pass replace=True"):
            lbe.register("api-tiny", "lifelong_core.methods.insert_m:InsertM")
        lbe.register("api-tiny", "lifelong_core.methods.random_sample:RandomSample", replace=True)
        assert method_spec("api-tiny").target.endswith("RandomSample")
        with pytest.raises(InputError, match="cannot be imported"):
            lbe.register("api-missing", "no_such_package.mod:Thing")
        with pytest.raises(InputError, match=r"of the form 'package\.module:Class'"):
            lbe.register("api-form", "no colon here")
    finally:
        unregister("api-tiny")


def test_valid_calls_still_answer(world):
    # The boundary refuses only what is wrong: each call of the table answers as given.
    store = world["store"]
    est = lbe.estimate_new_model(
        store, {"a/0": True, "a/1": 0, "b/2": 1.0}, dataset="d", method="midpoint"
    )
    assert 0 <= est.overall["estimate"] <= 1
    items = lbe.select_items(store, 8, dataset="d", method="midpoint", exclude={"a/0": 1})
    assert len(items) == 8 and "a/0" not in items
    assert math.isfinite(
        float(
            lbe.sweep(
                store, dataset="d", sort_models=5, budgets=np.array([4, 8]), search="midpoint"
            )
            .table["mae"]
            .iloc[0]
        )
    )
