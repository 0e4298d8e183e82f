"""AppTest of the 'Until sure (adaptive)' tab of 'Evaluate something new', on a
small store of IRT-generated models (the demo store's 440 x 10,700 fit is too slow for a test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "3_Evaluate_something_new.py")
TAB = "Until sure (adaptive)"


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    from lifelong_core.store import Store

    rng = np.random.default_rng(3)
    m, n = 30, 300
    theta = rng.normal(size=(m, 1))
    d = rng.normal(size=(1, n))
    A = (rng.random((m, n)) < 1 / (1 + np.exp(-(theta * 1.5 + d)))).astype(np.uint8)
    path = tmp_path_factory.mktemp("adaptive") / "small.duckdb"
    with Store.create(path) as s:
        s.add_dataset("small", "IRT-generated", synthetic=True, source="test")
        s.insert_matrix(
            A,
            pd.DataFrame({"model_id": [f"m{i}" for i in range(m)]}),
            pd.DataFrame({"sample_id": [f"s{j}" for j in range(n)], "dataset": "small"}),
        )
    return path, A


def run(query: dict) -> AppTest:
    return open_page(PAGE, query, timeout=300)


@pytest.mark.slow
def test_round_trip(small_store, monkeypatch):
    from lifelong_core.methods.adaptive import advance
    from lifelong_core.methods.adaptive_method import AdaptiveMethod

    path, A = small_store
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run({"tab": TAB, "target": "4.0", "max_budget": "200"})
    at.radio(key="adaptive_mode").set_value("my model, round by round").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Round 1" in m.value for m in at.markdown)
    # The page's round 1, replayed here (same fit, seed 0), answered by stored model 7.
    first = advance(
        AdaptiveMethod().fit(A).sampler(), {}, 0, until_halfwidth=0.04, max_budget=200
    ).next_columns
    csv = (
        pd.DataFrame({"sample_id": [f"s{j}" for j in first], "correct": A[7, first]})
        .to_csv(index=False)
        .encode()
    )
    at.file_uploader[0].upload("r.csv", csv, "text/csv").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Round 2" in m.value for m in at.markdown)
    assert "95% interval" in [m.label for m in at.metric]
    # A sample the dataset does not hold: one sentence, no traceback.
    at.file_uploader[0].upload(
        "bad.csv", b"sample_id,correct\nno-such-sample,1\n", "text/csv"
    ).run()
    assert (
        len(at.error) == 1
        and "no-such-sample" in at.error[0].value.replace("\\", "")
        and "\n" not in at.error[0].value
    )


def test_simulation_on_a_stored_model(small_store, monkeypatch):
    path, _ = small_store
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run({"tab": TAB, "target": "6.0", "max_budget": "250"})
    assert not at.error, [e.value for e in at.error]
    assert {"estimated accuracy", "95% interval", "true accuracy (stored)"} <= {
        m.label for m in at.metric
    }
    rounds = at.dataframe[0].value
    assert rounds["evaluated"].is_monotonic_increasing and rounds["evaluated"].iloc[-1] <= 250
    assert rounds["half"].iloc[-1] <= 0.06 or rounds["evaluated"].iloc[-1] == 250
