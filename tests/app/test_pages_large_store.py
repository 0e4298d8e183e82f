"""Every page on a store larger than the dense-read limit, CI-sized.

The limit is lowered through its setting (``LBE_DENSE_LIMIT_MB``) instead of building a
huge store: a 60 x 3,000 synthetic store is then "large" (180 KB against a 48 KB limit),
so pages must read it as packed blocks, score a seeded sample of models and show dense
views on bounded blocks. Every page must run in AppTest without an exception and without
an error box, i.e. without tripping the guard; a page that tried a dense read would show
the guard's sentence as an error. The guard itself is tested to raise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core import limits
from lifelong_core.methods.registry import DEFAULT_METHOD
from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["app.py"] + [f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))]
LIMIT_MB = 0.046  # 48 KB: below 60 x 3,000 one-byte entries


@pytest.fixture(scope="module")
def big_store(tmp_path_factory) -> Path:
    from lifelong_core.datasets.synthetic import SyntheticSpec, write_store

    path = tmp_path_factory.mktemp("large") / "large.duckdb"
    write_store(
        SyntheticSpec(n_models=60, n_samples=3000, seed=3, n_clusters=2, cluster_spread=1.0), path
    )
    return path


@pytest.fixture(autouse=True)
def env(big_store, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(big_store))
    monkeypatch.setenv(limits.ENV, str(LIMIT_MB))
    yield
    limits.set_dense_limit(None)


def run(page: str, query: dict | None = None) -> AppTest:
    return open_page(page, query, no_error=True)


def texts(at: AppTest) -> str:
    return " ".join(
        [c.value for c in at.caption]
        + [w.value for w in at.warning]
        + [m.value for m in at.markdown]
    )


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_on_a_store_beyond_the_dense_limit(page):
    run(page)


@pytest.mark.slow
def test_budget_explorer_scores_a_seeded_sample_and_says_so():
    at = run("pages/1_Budget_explorer.py", {"scored": "12", "k": "20"})
    assert "dense-read limit" in texts(at)
    assert {m.label: m.value for m in at.metric}["evaluated models"] == "12"
    # The comparison with random cannot be lbe backtest's here (it reads the matrix whole):
    # it is made on the curves' models, and the page says how it differs.
    assert any(m.label.startswith("equivalent random budget") for m in at.metric)
    assert "uses the curves' models and their common draw per budget" in texts(at)
    for tab in (
        "Aleatoric vs epistemic",
        "Model correlation",
        "vs CopyNearest&Expand",
        "Design choices",
    ):
        at = run("pages/1_Budget_explorer.py", {"scored": "12", "k": "20", "tab": tab})
    assert "seeded sample" in texts(at) or "left out" in texts(at)


@pytest.mark.slow
def test_evaluate_new_asks_for_the_kept_state_then_reads_it(big_store):
    from lifelong_core.store import Store
    from lifelong_core.store import state as kept

    at = run("pages/3_Evaluate_something_new.py")
    # The page's default method is the product's default estimator, whose state is kept.
    assert f"No {DEFAULT_METHOD} parameters are kept" in texts(at)
    button = [b for b in at.button if b.label.startswith("Refresh the kept state")]
    assert len(button) == 1
    button[0].click().run()
    assert not at.exception, [e.message for e in at.exception]
    with Store.open(big_store) as st:
        item = kept.load_item_state(st, "synthetic", DEFAULT_METHOD)
        assert item is not None and "auto_choices" in item.params
        assert kept.load_sort_state(st, "synthetic") is not None
    at = run("pages/3_Evaluate_something_new.py")
    assert "up to date" in texts(at)
    assert any(d.label.startswith("Download the") for d in at.get("download_button"))
    at = run("pages/3_Evaluate_something_new.py", {"tab": "New samples (insert_D)"})


def test_the_guard_refuses_a_dense_read_of_the_large_store(big_store):
    from lifelong_core.store import Store

    limits.set_dense_limit(int(LIMIT_MB * (1 << 20)))
    with (
        Store.open(big_store) as st,
        pytest.raises(limits.DenseReadError, match="dense-read limit"),
    ):
        st.matrix()
    with pytest.raises(limits.DenseReadError):
        from lifelong_core.workflows.large import PackedCache

        np.asarray(PackedCache(np.arange(60), np.arange(3000)))


def test_sweeps_on_the_same_rows_read_them_once_and_give_the_streamed_numbers(
    big_store, monkeypatch
):
    from lifelong_core.store import Store
    from lifelong_core.workflows import large
    from lifelong_core.workflows.selection import select

    limits.set_dense_limit(int(LIMIT_MB * 2**20))
    reads = []
    real = large.packed_rows
    monkeypatch.setattr(large, "packed_rows", lambda *a: reads.append(len(a[2])) or real(*a))
    with Store.open(big_store, read_only=True) as st:
        sel = select(st, "synthetic")
        assert isinstance(sel.A, large.PackedCache)
        sort, ev = np.arange(0, 40, 2), np.arange(1, 40, 2)

        def sweep(search):
            return large.sweep(st, sel.A, sort, ev, (8, 64), scored=200, search=search, seed=1)

        held = sweep("mirt")
        sweep("first-n")
        assert reads == [len(sort), len(ev)]  # the second sweep read nothing
        monkeypatch.setattr(large, "HELD_BYTES", 0)  # every read streamed from the store
        streamed = sweep("mirt")
    np.testing.assert_array_equal(held.order, streamed.order)
    pd.testing.assert_frame_equal(held.per_model, streamed.per_model, check_exact=True)
