"""Backtest results kept in the store (``lbe state --refresh`` keeps the Budget explorer's
default comparison with random).

A kept result is found only under the digest of an identical backtest, so reading one
gives exactly the tables a fresh backtest gives; another cache, another argument or
another version of the code computes afresh, and a kept result that cannot be read is
treated as missing.
"""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pandas as pd
import pytest

from lifelong_core import limits
from lifelong_core.methods.memory import FitMemory
from lifelong_core.methods.registry import DEFAULT_METHOD
from lifelong_core.store import Store
from lifelong_core.store.kept_fits import KeptFits
from lifelong_core.store.kept_results import KeptResults, kept_result_count
from lifelong_core.workflows import backtest as bt
from lifelong_core.workflows import lifelong_state
from lifelong_core.workflows.budgets import default_budgets
from lifelong_core.workflows.selection import select
from lifelong_core.workflows.sortsets import DEFAULT_SEED, DEFAULT_SORT_SET, default_sort_size
from tests.shared import count_calls


@pytest.fixture()
def store(small_synthetic_path, tmp_path):
    path = tmp_path / "s.duckdb"
    shutil.copy(small_synthetic_path, path)
    return path


@pytest.fixture()
def computed(monkeypatch):
    """Backtests computed (not read from the store), counted."""
    seen = {"n": 0}
    count_calls(monkeypatch, seen, "n", bt, "_table")
    return seen


ARGS = dict(holdout=8, split="random", repeats=2, seed=3, boot=200)


def _run(path, kept_for: str | None, sel=None, budgets=(16, 64), **kw):
    """A small backtest of the published rule, with results kept (``kept_for`` a dataset)
    or read only (None)."""
    with Store.open(path, read_only=kept_for is None) as st:
        ds = st.datasets()["dataset"].item()
        sel = select(st, ds, ()) if sel is None else sel
        kept = KeptResults(st, kept_for)
        return bt.backtest(sel, ["midpoint"], list(budgets), kept=kept, **{**ARGS, **kw})


def _same(a: bt.Backtest, b: bt.Backtest) -> None:
    for f in dataclasses.fields(bt.Backtest):
        if f.name == "config":
            assert a.config == b.config
        else:
            x, y = getattr(a, f.name), getattr(b, f.name)
            pd.testing.assert_frame_equal(x, y, check_exact=True)


def _dataset(path) -> str:
    with Store.open(path) as st:
        return str(st.datasets()["dataset"].item())


def test_a_kept_backtest_is_read_back_identical_without_computing(store, computed):
    fresh = _run(store, None)
    assert computed["n"] == 1
    assert kept_result_count_of(store) == 0  # a reader keeps nothing
    _run(store, _dataset(store))
    assert computed["n"] == 2
    assert kept_result_count_of(store) == 1
    read = _run(store, None)
    assert computed["n"] == 2  # read, not computed
    _same(read, fresh)
    assert read.verdicts() == fresh.verdicts()
    assert read.text() == fresh.text()


def kept_result_count_of(path) -> int:
    with Store.open(path) as st:
        return kept_result_count(st)


def test_another_argument_or_cache_is_computed_afresh(store, computed):
    _run(store, _dataset(store))
    assert computed["n"] == 1
    _run(store, None, budgets=(16, 32))
    assert computed["n"] == 2
    _run(store, None, seed=4)
    assert computed["n"] == 3
    _run(store, None, boot=100)
    assert computed["n"] == 4
    with Store.open(store) as st:
        sel = select(st, _dataset(store), ())
    flipped = sel.A.copy()
    flipped[0, 0] ^= 1  # one prediction of a model in the cache
    _run(store, None, sel=dataclasses.replace(sel, A=flipped))
    assert computed["n"] == 5
    renamed = sel.models.copy()
    renamed.loc[0, "name"] = "another name"
    _run(store, None, sel=dataclasses.replace(sel, models=renamed))
    assert computed["n"] == 6
    _run(store, None)
    assert computed["n"] == 6  # the kept one is still found


def test_a_new_version_of_the_code_computes_afresh(store, computed, monkeypatch):
    _run(store, _dataset(store))
    from lifelong_core.methods import tuning_memory

    monkeypatch.setattr(tuning_memory, "package_digest", lambda: "another version")
    _run(store, None)
    assert computed["n"] == 2


def test_a_kept_result_that_cannot_be_read_is_computed_afresh(store, computed):
    fresh = _run(store, _dataset(store))
    with Store.open(store, read_only=False) as st:
        st.cursor().execute("UPDATE kept_results SET tables = 'not arrow'::BLOB")
    _same(_run(store, None), fresh)
    assert computed["n"] == 2
    with Store.open(store, read_only=False) as st:
        st.cursor().execute("UPDATE kept_results SET info = 'not json'")
    _same(_run(store, None), fresh)
    assert computed["n"] == 3


def test_a_store_without_kept_results_reads_none(store):
    with Store.open(store) as st:
        assert KeptResults(st).load("0" * 40) is None
        assert not KeptResults(st, "d").writes  # a reader writes nothing
        assert kept_result_count(st) == 0


def test_a_refresh_keeps_the_budget_explorers_default_comparison(store, computed):
    """The page's default view: the default Sort split, the default budgets, the default
    estimator; a refresh keeps its backtest, and the page's request finds it."""
    ds = _dataset(store)
    with Store.open(store, read_only=False) as st:
        lifelong_state.refresh(st, ds)
        assert kept_result_count(st, ds, bt.KEPT_KIND) == 1
    made = computed["n"]
    limits.set_dense_limit(limits.app_limit_bytes())
    try:
        with Store.open(store) as st:
            sel = select(st, ds, ())
            m, n = len(sel.models), len(sel.samples)
            req = bt.sort_split_comparison(
                DEFAULT_METHOD,
                default_budgets(n),
                m,
                default_sort_size(m),
                DEFAULT_SORT_SET,
                DEFAULT_SEED,
            )
            read = req.run(sel, kept=KeptResults(st))
            assert computed["n"] == made
            # As the page computes it: on the fit the refresh kept for the default split.
            memory = FitMemory(entries=1).backed_by(KeptFits(st))
            fresh = req.run(sel, memory=memory)
            assert computed["n"] == made + 1
    finally:
        limits.set_dense_limit(None)
    _same(read, fresh)
    pd.testing.assert_frame_equal(
        read.against_random(DEFAULT_METHOD), fresh.against_random(DEFAULT_METHOD)
    )
    assert np.isfinite(read.table["mae_pts"]).all()
