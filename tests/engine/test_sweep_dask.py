"""The dask engine: same chunk functions as dask tasks, same numbers."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from lifelong_core.errors import InputError
from lifelong_core.rows import PackedArray
from lifelong_core.sweeping import run_sweep
from lifelong_core.sweeping.executors import _distributed
from tests.shared import needs

needs("dask.distributed")


@pytest.mark.parametrize("kernel", ["packed", "dense"])
def test_dask_engine_identical_to_default_engine(kernel):
    rng = np.random.default_rng(7)
    ability = rng.normal(0.5, 1.0, size=(80, 1))
    A = (
        rng.random((80, 901)) < 1 / (1 + np.exp(-(ability - rng.normal(0, 1.5, size=(1, 901)))))
    ).astype(np.uint8)
    budgets = [8, 32, 100, 901]
    for search, sampling in (("midpoint", "uniform"), ("reference", "random")):
        want = run_sweep(A[:20], A[20:], budgets, search=search, sampling=sampling, seed=3)
        # Sort rows as a source are streamed: 5 Sort chunks, an odd number, exercise the
        # tree reduction's carry.
        got = run_sweep(
            PackedArray.from_dense(A[:20]),
            A[20:],
            budgets,
            search=search,
            sampling=sampling,
            seed=3,
            chunk_rows=4,
            kernel=kernel,
            executor="dask",
        )
        pd.testing.assert_frame_equal(want.per_model[got.per_model.columns], got.per_model)
        pd.testing.assert_frame_equal(want.table, got.table)
        assert np.array_equal(want.order, got.order)
        assert got.config["executor"] == "dask"


def test_missing_dask_is_one_sentence(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(InputError, match=r"needs the optional package dask\[distributed\]"):
        _distributed()
