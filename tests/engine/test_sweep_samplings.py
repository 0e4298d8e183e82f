"""A threshold rule's sweeps at several samplings in one pass (``sweep_samplings``) against
one ``run_sweep`` per sampling: the same tables, per-model records, orders and configs,
whatever the kernel, executor and chunking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.bits import pack_rows
from lifelong_core.datasets.synthetic import SyntheticSpec, generate
from lifelong_core.errors import InputError
from lifelong_core.rows import PackedArray
from lifelong_core.sortsearch import RULES
from lifelong_core.sweeping import run_sweep, sweep_samplings

BUDGETS = (4, 16, 50, 128, 301)
SAMPLINGS = ("uniform", "random", "reference")


@pytest.fixture(scope="module")
def rows():
    A = generate(SyntheticSpec(n_models=60, n_samples=301, seed=4, n_clusters=2))
    return A[:25], A[25:]


def assert_same(shared, separate):
    assert len(shared) == len(separate)
    for a, b in zip(shared, separate):
        pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
        pd.testing.assert_frame_equal(a.per_model, b.per_model, check_exact=True)
        np.testing.assert_array_equal(a.order, b.order)
        assert a.config == b.config


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(
    "how",
    [
        {},
        {"kernel": "dense"},
        {"kernel": "dense", "chunk_rows": 7},
        {"executor": "threads", "threads": 2, "chunk_rows": 5},
        {"kernel": "packed", "chunk_rows": 9},
        {"decompose": True, "chunk_rows": 11},
    ],
    ids=["default", "dense", "dense chunks", "threads", "packed chunks", "decomposed"],
)
def test_every_sampling_gets_the_numbers_of_its_own_sweep(rows, rule, how):
    S, E = rows
    shared = sweep_samplings(S, E, BUDGETS, SAMPLINGS, search=rule, seed=9, **how)
    separate = [run_sweep(S, E, BUDGETS, sampling=s, search=rule, seed=9, **how) for s in SAMPLINGS]
    assert [r.config["sampling"] for r in shared] == list(SAMPLINGS)
    assert_same(shared, separate)


def test_row_sources_and_the_rules_default_sampling(rows):
    S, E = rows
    n = S.shape[1]
    src = PackedArray(pack_rows(E), n)
    ids = np.arange(100, 100 + len(E))
    shared = sweep_samplings(
        S, src, BUDGETS, (None, "random"), search="reference", seed=2, eval_row_ids=ids
    )
    separate = [
        run_sweep(S, src, BUDGETS, sampling=s, search="reference", seed=2, eval_row_ids=ids)
        for s in (None, "random")
    ]
    assert shared[0].config["sampling"] == "reference"  # the published grid with its rule
    assert_same(shared, separate)


def test_a_method_with_its_own_design_runs_once_per_sampling(rows):
    S, E = rows
    shared = sweep_samplings(S, E, BUDGETS, ("uniform", "random"), search="copy-nearest", seed=1)
    assert_same(
        shared,
        [
            run_sweep(S, E, BUDGETS, sampling=s, search="copy-nearest", seed=1)
            for s in ("uniform", "random")
        ],
    )


@pytest.mark.parametrize("kernel", ["dense", "packed"])
def test_each_chunk_is_counted_once_for_all_samplings(rows, monkeypatch, kernel):
    from lifelong_core.sweeping import engine

    S, E = rows
    calls = []
    real = engine._eval_task
    monkeypatch.setattr(engine, "_eval_task", lambda *a: calls.append(1) or real(*a))
    sweep_samplings(S, E, BUDGETS, SAMPLINGS, search="midpoint", chunk_rows=10, kernel=kernel)
    assert len(calls) == 4  # 35 evaluated rows in chunks of 10, whatever the samplings


def test_bad_samplings_are_one_sentence(rows):
    S, E = rows
    with pytest.raises(InputError, match="no sampling"):
        sweep_samplings(S, E, BUDGETS, (), search="midpoint")
    with pytest.raises(InputError, match="unknown sampling 'grid'"):
        sweep_samplings(S, E, BUDGETS, ("uniform", "grid"), search="midpoint")
