"""Fits kept in the store by ``lbe state --refresh`` for the default Sort split.

A kept fit is found only by an identical fit's key, so a sweep that reads it gives the
numbers the same sweep gives when it fits; on other rows, a grown cache or another
version of the estimators' code, it is not found and the sweep fits.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from lifelong_core import limits
from lifelong_core.methods import auto
from lifelong_core.methods.memory import FitMemory
from lifelong_core.methods.registry import DEFAULT_METHOD
from lifelong_core.store import Store
from lifelong_core.store.kept_fits import KeptFits, kept_fit_count
from lifelong_core.sweeping import protocol
from lifelong_core.workflows import lifelong_state
from lifelong_core.workflows.selection import select
from lifelong_core.workflows.sortsets import (
    DEFAULT_SEED,
    DEFAULT_SORT_SET,
    default_sort_size,
    sort_rows,
)
from lifelong_core.workflows.sweeps import SweepRequest, sweep_selection
from tests.shared import count_calls


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from lifelong_core.datasets.synthetic import SyntheticSpec, write_store

    path = tmp_path_factory.mktemp("kept") / "s.duckdb"
    write_store(
        SyntheticSpec(n_models=40, n_samples=1200, seed=11, n_clusters=2, cluster_spread=1.0),
        path,
    )
    return path


@pytest.fixture()
def store(built, tmp_path):
    path = tmp_path / "s.duckdb"
    shutil.copy(built, path)
    return path


@pytest.fixture()
def fits(monkeypatch):
    """Whole fits of the default estimator, counted."""
    seen = {"n": 0}
    count_calls(monkeypatch, seen, "n", auto.AutoEstimator, "fit", "fit_packed")
    return seen


@pytest.fixture(params=["dense", "packed"])
def limit(request, monkeypatch):
    """The app's dense-read limit: the store read dense, or as packed blocks (30 KB)."""
    if request.param == "packed":
        monkeypatch.setenv(limits.ENV, "0.03")
    else:
        monkeypatch.delenv(limits.ENV, raising=False)
    yield request.param
    limits.set_dense_limit(None)


def _default_view(path, memory):
    """The sweep a page opens on: the default Sort split, eight scored models, three budgets."""
    limits.set_dense_limit(limits.app_limit_bytes())
    with Store.open(path) as st:
        ds = st.datasets()["dataset"].item()
        sel = select(st, ds, ())
        m = len(sel.models)
        rows = sort_rows(sel.models, default_sort_size(m), DEFAULT_SORT_SET, DEFAULT_SEED)
        others = tuple(int(r) for r in np.setdiff1d(np.arange(m), rows)[:8])
        request = SweepRequest(
            tuple(int(r) for r in rows),
            "sum",
            "uniform",
            DEFAULT_METHOD,
            (16, 64, 256),
            DEFAULT_SEED,
            eval_rows=others,
            scored=8,
        )
        mem = None if memory is None else memory.backed_by(KeptFits(st))
        out = sweep_selection(sel, request, store=st, memory=mem)
        return out.per_model, type(sel.A).__name__


def _refresh(path):
    with Store.open(path, read_only=False) as st:
        ds = st.datasets()["dataset"].item()
        lifelong_state.refresh(st, ds)
        return kept_fit_count(st, ds)


def test_a_refresh_keeps_the_default_splits_fit_and_a_sweep_reads_it_unchanged(store, fits, limit):
    fitted, kind = _default_view(store, None)
    assert kind == ("PackedCache" if limit == "packed" else "ndarray")
    assert _refresh(store) == 1
    fits["n"] = 0
    kept, _ = _default_view(store, FitMemory())
    assert fits["n"] == 0
    pd.testing.assert_frame_equal(kept, fitted)


def test_another_split_or_no_memory_fits_as_before(store, fits):
    _refresh(store)
    fits["n"] = 0
    _default_view(store, None)
    assert fits["n"] == 1
    with Store.open(store) as st:
        sel = select(st, st.datasets()["dataset"].item(), ())
        rows = sort_rows(sel.models, 9, DEFAULT_SORT_SET, 1)
        request = SweepRequest(
            tuple(int(r) for r in rows), "sum", "uniform", DEFAULT_METHOD, (16,), 1, scored=4
        )
        sweep_selection(sel, request, store=st, memory=FitMemory().backed_by(KeptFits(st)))
    assert fits["n"] == 2


def test_a_new_version_of_the_estimators_code_fits_again(store, fits, monkeypatch):
    _refresh(store)
    monkeypatch.setattr(
        "lifelong_core.methods.tuning_memory.code_digest", lambda: "another version"
    )
    fits["n"] = 0
    _default_view(store, FitMemory())
    assert fits["n"] == 1


def test_a_cache_with_new_samples_is_fitted_afresh(store, fits):
    _refresh(store)
    with Store.open(store, read_only=False) as st:
        ds = st.datasets()["dataset"].item()
        every = st.models()["model_id"].tolist()
        new = (np.random.default_rng(0).random((len(every), 30)) < 0.5).astype(np.uint8)
        ids = pd.DataFrame({"sample_id": [f"new{j}" for j in range(30)], "dataset": ds})
        st.insert_matrix(new, every, ids)
    fits["n"] = 0
    _default_view(store, FitMemory())
    assert fits["n"] == 1


def test_a_store_without_kept_fits_reads_none_and_a_reader_writes_none(built, tmp_path):
    with Store.open(built) as st:
        reader = KeptFits(st, "any")
        assert reader.load("0" * 40) is None
        assert not reader.writes
        assert kept_fit_count(st) == 0


def test_choices_that_copy_from_the_cache_are_rebuilt_with_its_rows():
    rng = np.random.default_rng(4)
    A = (rng.random((30, 300)) < np.linspace(0.9, 0.1, 300)).astype(np.uint8)
    order = np.argsort(-A.sum(0), kind="stable")
    choices = tuple(
        auto.Choice(b, "copy-nearest" if b <= 32 else "mirt", "mirt") for b in auto.CV_BUDGETS
    )
    tuning = auto.AutoTuning(2, auto.DEFAULT_RIDGE, choices)
    fitted = auto.AutoEstimator(tuning=tuning).fit(A, order)
    rebuilt = auto.AutoEstimator().with_items(
        fitted.item_, order, params=fitted.kept_params(), rows=A
    )
    cols = fitted.select(300, 16, np.random.default_rng(1))
    obs = A[0, cols]
    a, b = fitted.estimate(cols, obs), rebuilt.estimate(cols, obs)
    assert (a.acc, a.lo, a.hi) == (b.acc, b.lo, b.hi)
    np.testing.assert_array_equal(a.per_sample, b.per_sample)
    assert set(a.per_sample) <= {0, 1}  # copied from the nearest cache rows at this budget
    with pytest.raises(Exception, match="copy-nearest"):
        auto.AutoEstimator().with_items(fitted.item_, order, params=fitted.kept_params())


def test_the_fit_key_names_the_code_of_the_estimators():
    key = ("auto", "x", "[]", "dense", 10, None, None, None, None, None)
    assert protocol.stored_key(key) == protocol.stored_key(key)
    assert protocol.stored_key(key) != protocol.stored_key(key[:-1] + ("tasks",))
