"""The Stream page's first view kept in the store (``lbe state --refresh``).

The replay and the Pareto grid are found only under the digest of the same selection,
arguments and code, so a kept table is exactly the one a fresh run gives; anything else
computes afresh.
"""

from __future__ import annotations

import dataclasses
import shutil

import pandas as pd
import pytest

from lifelong_core import limits
from lifelong_core.store import Store
from lifelong_core.store.kept_results import KeptResults, kept_result_count
from lifelong_core.workflows import lifelong_state, stream
from lifelong_core.workflows.selection import bounded_selection, select
from tests.app.apptest_pages import open_fresh
from tests.shared import count_calls

PAGE = "pages/5_Stream.py"


@pytest.fixture()
def store(small_synthetic_path, tmp_path):
    path = tmp_path / "s.duckdb"
    shutil.copy(small_synthetic_path, path)
    return path


@pytest.fixture()
def computed(monkeypatch):
    """Replays and grids computed (not read from the store), counted."""
    seen = {"replay": 0, "configs": 0}
    count_calls(monkeypatch, seen, "replay", stream, "_replay")
    count_calls(monkeypatch, seen, "configs", stream, "_configs")
    return seen


def _dataset(path) -> str:
    with Store.open(path) as s:
        return str(s.datasets()["dataset"].item())


def _both(path, keep: bool, sel=None, pool=5, budget=32, seed=0, pools=(3, 5), budgets=(8, 32)):
    with Store.open(path, read_only=not keep) as s:
        ds = str(s.datasets()["dataset"].item())
        sel = select(s, ds, ()) if sel is None else sel
        kept = KeptResults(s, ds if keep else None)
        steps = stream.stream_replay(sel, pool, budget, "uniform", "midpoint", seed, kept=kept)
        configs = stream.stream_configs(sel, pools, budgets, seed, kept=kept)
    return steps, configs


def test_kept_tables_are_read_back_identical_without_computing(store, computed):
    fresh = _both(store, keep=False)
    assert computed == {"replay": 1, "configs": 1}
    with Store.open(store) as s:
        assert kept_result_count(s) == 0  # a reader keeps nothing
    _both(store, keep=True)
    assert computed == {"replay": 2, "configs": 2}
    read = _both(store, keep=False)
    assert computed == {"replay": 2, "configs": 2}  # read, not computed
    for a, b in zip(read, fresh):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_another_argument_or_cache_computes_afresh(store, computed):
    _both(store, keep=True)
    _both(store, keep=False, seed=1)
    assert computed == {"replay": 2, "configs": 2}
    _both(store, keep=False, pool=4, pools=(3, 4))
    assert computed == {"replay": 3, "configs": 3}
    _both(store, keep=False, budget=16, budgets=(8, 16))
    assert computed == {"replay": 4, "configs": 4}
    with Store.open(store) as s:
        sel = select(s, _dataset(store), ())
    flipped = sel.A.copy()
    flipped[3, 7] ^= 1
    _both(store, keep=False, sel=dataclasses.replace(sel, A=flipped))
    assert computed == {"replay": 5, "configs": 5}
    reordered = sel.models.copy()
    reordered["release_order"] = reordered["release_order"].to_numpy()[::-1]
    _both(store, keep=False, sel=dataclasses.replace(sel, models=reordered))
    assert computed == {"replay": 6, "configs": 6}
    _both(store, keep=False)
    assert computed == {"replay": 6, "configs": 6}  # the kept ones are still found


def test_the_page_after_a_refresh_replays_nothing_and_shows_the_same(
    store, small_synthetic_path, computed, monkeypatch, tmp_path
):
    ds = _dataset(store)
    with Store.open(store, read_only=False) as s:
        lifelong_state.refresh(s, ds)
        assert kept_result_count(s, ds, stream.KEPT_KIND) == 2
    made = dict(computed)
    after = open_fresh(PAGE, store, monkeypatch)
    assert computed == made  # both tables read from the store
    plain = tmp_path / "plain" / "s.duckdb"
    plain.parent.mkdir()
    shutil.copy(small_synthetic_path, plain)
    fresh = open_fresh(PAGE, plain, monkeypatch)
    assert computed == {"replay": made["replay"] + 1, "configs": made["configs"] + 1}
    assert len(after.dataframe) == len(fresh.dataframe) > 0
    for a, b in zip(after.dataframe, fresh.dataframe):
        # The Nevis'22 section (not kept) times its runs: that column is a clock, not a result.
        clocks = [c for c in a.value.columns if str(c).endswith("seconds")]
        pd.testing.assert_frame_equal(
            a.value.drop(columns=clocks), b.value.drop(columns=clocks), check_exact=True
        )
    assert [m.value for m in after.metric] == [m.value for m in fresh.metric]


def test_the_page_and_the_refresh_start_on_one_view():
    assert stream.default_pool(100) == stream.DEFAULT_POOL and stream.default_pool(7) == 6
    assert stream.default_budget(10_000) == stream.DEFAULT_BUDGET
    pools, budgets = stream.config_grid(30, 600, 20)
    assert pools == (5, 10, 20) and budgets == (8, 16, 32, 64, 128, 256, 512)
    assert stream.config_grid(30, 600, 7)[0] == (5, 7, 10, 20)


def test_a_refresh_within_a_small_dense_limit_keeps_the_bounded_view(store, computed):
    """On a store beyond the dense-read limit the page streams a bounded block; the
    refresh keeps that block's tables."""
    ds = _dataset(store)
    with Store.open(store, read_only=False) as s:
        sel = select(s, ds, ())
        assert lifelong_state.keep_default_stream(s, ds, sel=sel)
    limits.set_dense_limit(limits.app_limit_bytes())
    try:
        with Store.open(store) as s:
            block, _ = bounded_selection(s, select(s, ds, ()))
            m, n = block.A.shape
            made = dict(computed)
            stream.stream_configs(
                block, *stream.config_grid(m, n, stream.default_pool(m)), 0, kept=KeptResults(s)
            )
            assert computed == made
    finally:
        limits.set_dense_limit(None)


def test_a_stream_the_page_cannot_replay_leaves_the_refresh_standing(store, monkeypatch):
    from lifelong_core.errors import InputError

    def refuse(*args, **kwargs):
        raise InputError("no stream here")

    monkeypatch.setattr(stream, "_replay", refuse)
    ds = _dataset(store)
    with Store.open(store, read_only=False) as s:
        lifelong_state.refresh(s, ds)  # the Sort state and fits are kept all the same
        assert not lifelong_state.keep_default_stream(s, ds)
        assert kept_result_count(s, ds, stream.KEPT_KIND) == 0
        assert kept_result_count(s, ds) > 0
