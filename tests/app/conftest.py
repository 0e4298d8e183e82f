"""Fixtures of the AppTest folder.

Most page tests run on the shipped demo store, whose numbers they check. A test that checks
how a page handles its controls (widgets, URL values) and not the demo's numbers runs on a
small synthetic store instead: the page's code is the same, its fits and sweeps are much
cheaper (the demo's digits dataset is 440 models x 10,700 samples).
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def synthetic_store_path(tmp_path_factory) -> Path:
    """60 models x 2,000 samples from the seeded logistic item-response generator (two
    model clusters), built once per worker. Readers only: a test that writes copies it."""
    from lifelong_core.datasets.synthetic import SyntheticSpec, write_store

    path = tmp_path_factory.mktemp("synthetic") / "synthetic.duckdb"
    write_store(
        SyntheticSpec(n_models=60, n_samples=2000, seed=5, n_clusters=2, cluster_spread=1.0), path
    )
    return path


@pytest.fixture
def synthetic_store_env(synthetic_store_path, monkeypatch) -> Path:
    """Pages read the small synthetic store (set after any autouse store of the module)."""
    monkeypatch.setenv("LBE_STORE", str(synthetic_store_path))
    return synthetic_store_path
