"""The typed request of a page's sweep: one hashable value, keyed without the sampling grid
for a method that does not read it, and the same numbers as the engine's own sweep."""

from __future__ import annotations

import numpy as np

from lifelong_core.methods import DEFAULT_METHOD
from lifelong_core.methods.registry import PUBLISHED_METHOD
from lifelong_core.store import Store
from lifelong_core.sweeping import run_sweep
from lifelong_core.workflows.selection import select
from lifelong_core.workflows.sweeps import SelectionSweep, SweepRequest, sweep_selection


def test_memo_key_drops_the_grid_only_where_it_is_not_read():
    a = SweepRequest((0, 1, 2), "sum", "uniform", PUBLISHED_METHOD, (4, 8), 0)
    b = SweepRequest((0, 1, 2), "sum", "random", PUBLISHED_METHOD, (4, 8), 0)
    assert a.memo_key() != b.memo_key() and hash(a) != hash(b)
    c = SweepRequest((0, 1, 2), "sum", "uniform", DEFAULT_METHOD, (4, 8), 0)
    d = SweepRequest((0, 1, 2), "sum", "random", DEFAULT_METHOD, (4, 8), 0)
    assert c.memo_key() == d.memo_key()


def test_sweep_selection_is_run_sweep_on_the_request(demo_store_path):
    with Store.open(demo_store_path) as st:
        sel = select(st, "lifelong-digits")
    rows = (0, 2, 4, 6, 8, 10)
    got = sweep_selection(sel, SweepRequest(rows, "sum", "uniform", "midpoint", (4, 16), 3))
    assert isinstance(got, SelectionSweep)
    ev = np.setdiff1d(np.arange(len(sel.models)), rows)
    want = run_sweep(sel.A[list(rows)], sel.A[ev], [4, 16], search="midpoint", seed=3)
    assert np.allclose(got.table["mae"], want.table["mae"])
    assert got.per_model["name"].tolist() == [sel.names[r] for r in got.per_model["model_row"]]
