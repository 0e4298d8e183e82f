"""Fixtures of the AppTest folder.

Most page tests run on the shipped demo store, whose numbers they check. A test that checks
how a page handles its controls (widgets, URL values) and not the demo's numbers runs on a
small synthetic store instead: the page's code is the same, its fits and sweeps are much
cheaper (the demo's digits dataset is 440 models x 10,700 samples).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
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


# Names that are Markdown and HTML: a store of them shows whether a page renders them.
URL = "http://127.0.0.1:9/{}.png"
DATASET = "<b>ds</b>![z](" + URL.format("z") + ")"
DOMAINS = [f"t{i}<i>x</i>![y{i}](" + URL.format(f"y{i}") + ")" for i in range(3)]
CATEGORIES = [f"c{i} **bold** [l](http://127.0.0.1:9/l{i})" for i in range(3)]
FAMILIES = ["<a href='http://127.0.0.1:9/f'>fam</a>", "f2 `code` :red[x]"]
MODELS = [f"m<b>{i}</b>![a{i}](" + URL.format(f"a{i}") + ")" for i in range(12)]


@pytest.fixture(scope="session")
def hostile_store(tmp_path_factory) -> Path:
    """A small store whose dataset, domain, category, model and family names are Markdown
    and HTML (tests/app/test_pages_hostile_names.py), with confidences and labels so that
    every page has something to draw. Built once per worker; readers only."""
    path = tmp_path_factory.mktemp("hostile") / "hostile.duckdb"
    rng = np.random.default_rng(3)
    ability = np.linspace(-1, 1.5, len(MODELS))
    rows = []
    for domain, category in zip(DOMAINS, CATEGORIES):
        for j in range(60):
            difficulty = rng.normal()
            label = int(rng.integers(0, 4))
            for i, model in enumerate(MODELS):
                p = 1 / (1 + np.exp(-(ability[i] - difficulty)))
                correct = int(rng.random() < p)
                rows.append(
                    {
                        "model": model,
                        "sample": f"{domain}/{j}",
                        "correct": correct,
                        "dataset": DATASET,
                        "domain": domain,
                        "category": category,
                        "confidence": float(np.clip(p + rng.normal(0, 0.05), 0.01, 0.99)),
                        "predicted": label if correct else (label + 1) % 4,
                        "label": label,
                    }
                )
    long = path.parent / "long.csv"
    pd.DataFrame(rows).to_csv(long, index=False)
    from lifelong_core.workflows import imports

    imports.import_into(path, imports.source("long", long))
    from lifelong_core.store import Store

    with Store.open(path, read_only=False) as st:
        cur = st.cursor()
        for i, model in enumerate(MODELS):
            cur.execute(
                "UPDATE models SET family = ?, name = ? WHERE model_id = ?",
                [FAMILIES[i % 2], model, model],
            )
    return path
