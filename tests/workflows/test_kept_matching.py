"""Matched accuracy's first view kept in the store (``lbe state --refresh``).

A block's table is found only under the digest of identical inputs (labels, predicted
labels, confidences, model names), settings and code, so reading one gives exactly the
table a fresh match gives; anything else matches afresh.
"""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main as cli_main
from lifelong_core.matching.store_pair import Side, read_samples
from lifelong_core.store import Store
from lifelong_core.store.kept_results import KeptResults, kept_result_count
from lifelong_core.workflows import lifelong_state, matching
from tests.app.apptest_pages import open_fresh
from tests.app.test_page_matched_accuracy import PAGE, make_store
from tests.shared import count_calls

DS = "lifelong-digits"
SIDES = (Side(DS, ("clean",)), Side(DS, ("clean-replication",)))
SETTINGS = dict(eps=0.005, criterion="label-prob", runs=10, seed=0)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("kept-matching") / "toy.duckdb")


@pytest.fixture()
def store(built, tmp_path):
    path = tmp_path / "toy.duckdb"
    shutil.copy(built, path)
    return path


@pytest.fixture()
def matched(monkeypatch):
    """Blocks matched (not read from the store), counted."""
    seen = {"n": 0}
    count_calls(monkeypatch, seen, "n", matching, "compare_pair")
    return seen


def _block(path, keep: bool, rows=(0, 1, 2, 3, 4, 5, 6), **kw):
    """The page's block of every model, kept (``keep``) or read only."""
    with Store.open(path, read_only=not keep) as s:
        pair = read_samples(s, *SIDES)
        kept = KeptResults(s, DS if keep else None)
        return matching.compare_block(s, pair, list(rows), **{**SETTINGS, **kw}, kept=kept)


def test_a_kept_block_is_read_back_identical_without_matching(store, matched):
    fresh, skipped = _block(store, keep=False)
    assert matched["n"] == 1 and len(fresh) == 6 and len(skipped) == 1
    with Store.open(store) as s:
        assert kept_result_count(s) == 0  # a reader keeps nothing
    _block(store, keep=True)
    assert matched["n"] == 2
    read, read_skipped = _block(store, keep=False)
    assert matched["n"] == 2  # read, not matched
    pd.testing.assert_frame_equal(read, fresh, check_exact=True)
    assert read_skipped == skipped


@pytest.mark.parametrize(
    "change",
    [
        dict(eps=0.01),
        dict(criterion="prob"),
        dict(runs=9),
        dict(seed=1),
    ],
)
def test_another_setting_matches_afresh(store, matched, change):
    _block(store, keep=True)
    _block(store, keep=False, **change)
    assert matched["n"] == 2
    _block(store, keep=False)
    assert matched["n"] == 2  # the kept one is still found


def _nudged(data, field):
    if field == "models":
        return dataclasses.replace(data, models=("renamed",) + data.models[1:])
    arr = getattr(data, field).copy()
    if arr.dtype.kind == "f":
        arr.flat[0] = np.nextafter(arr.flat[0], np.float32(0))  # one ulp
    else:
        arr.flat[0] += 1
    return dataclasses.replace(data, **{field: arr})


@pytest.mark.parametrize(
    "field", ["y_source", "pred_source", "conf_source", "y_target", "conf_target", "models"]
)
def test_other_predictions_match_afresh(store, matched, monkeypatch, field):
    _block(store, keep=True)
    load = matching.load_pair
    monkeypatch.setattr(matching, "load_pair", lambda *a, **k: _nudged(load(*a, **k), field))
    _block(store, keep=False)
    assert matched["n"] == 2


def test_a_new_version_of_the_code_matches_afresh(store, matched, monkeypatch):
    _block(store, keep=True)
    from lifelong_core.methods import tuning_memory

    monkeypatch.setattr(tuning_memory, "package_digest", lambda: "another version")
    _block(store, keep=False)
    assert matched["n"] == 2


def test_a_refresh_keeps_the_pages_first_view(store, matched, capsys):
    assert cli_main(["state", "--store", str(store), "--refresh", DS]) == 0
    assert "Matched accuracy's first view" in capsys.readouterr().out
    with Store.open(store) as s:
        view = matching.default_view_blocks(s, DS)
        assert view is not None
        pair, blocks = view
        assert [b.describe() for b in (pair.source, pair.target)] == [
            f"{DS} / clean",
            f"{DS} / clean-replication",
        ]
        # The last block holds only the model without confidences: nothing to match or keep.
        assert blocks[-1] == (6,)
        assert kept_result_count(s, DS, matching.KEPT_KIND) == len(blocks) - 1
    made = matched["n"]
    for block in blocks:
        _block(store, keep=False, rows=block)
    assert matched["n"] == made


def test_the_page_after_a_refresh_matches_nothing_and_shows_the_same(
    store, built, matched, monkeypatch, tmp_path
):
    with Store.open(store, read_only=False) as s:
        assert lifelong_state.keep_default_matching(s, DS)
    made = matched["n"]
    after = open_fresh(PAGE, store, monkeypatch)
    assert matched["n"] == made  # every block read from the store
    plain = tmp_path / "plain" / "toy.duckdb"
    plain.parent.mkdir()
    shutil.copy(built, plain)
    fresh = open_fresh(PAGE, plain, monkeypatch)
    assert matched["n"] > made
    assert len(after.dataframe) == len(fresh.dataframe) > 0
    for a, b in zip(after.dataframe, fresh.dataframe):
        pd.testing.assert_frame_equal(a.value, b.value, check_exact=True)
    assert [m.value for m in after.metric] == [m.value for m in fresh.metric]
    assert [w.value for w in after.warning] == [w.value for w in fresh.warning]


def test_nothing_is_kept_where_the_page_compares_nothing(tmp_path, llm_store_path):
    bare = make_store(tmp_path / "bare.duckdb", with_extras=False)
    with Store.open(bare, read_only=False) as s:
        assert not lifelong_state.keep_default_matching(s, DS)
        assert kept_result_count(s, DS, matching.KEPT_KIND) == 0
    # lm-eval results: correct or not, no labels at all.
    llm = tmp_path / "llm.duckdb"
    shutil.copy(llm_store_path, llm)
    with Store.open(llm, read_only=False) as s:
        ds = str(s.datasets()["dataset"].item())
        assert not lifelong_state.keep_default_matching(s, ds)
        assert kept_result_count(s, ds, matching.KEPT_KIND) == 0


def test_the_page_and_the_refresh_start_on_one_view(store):
    """Another dataset's first view is the whole dataset on both sides."""
    assert matching.default_dataset(["a", DS]) == DS
    assert matching.default_dataset(["b", "a"]) == "b"
    assert matching.default_domains(["x", "clean"], "source") == ["clean"]
    assert matching.default_domains(["x"], "target") == []
    with Store.open(store) as s:
        src, tgt = matching.default_sides(s, DS)
    assert (src, tgt) == SIDES


def test_a_kept_row_with_other_tables_is_matched_afresh(store, matched):
    """A row under the block's key whose tables are not the block's (a damaged or foreign
    store) is not used: the block is matched again, the same as without it."""
    fresh, _ = _block(store, keep=True)
    with Store.open(store, read_only=False) as s:
        row = s.cursor().execute("SELECT key, info, tables FROM kept_results").fetchone()
        info = json.loads(row[1])
        info["parts"] = [["another", size] for _, size in info["parts"]]
        s.cursor().execute("UPDATE kept_results SET info = ?", [json.dumps(info)])
    read, _ = _block(store, keep=False)
    assert matched["n"] == 2
    pd.testing.assert_frame_equal(read, fresh, check_exact=True)
