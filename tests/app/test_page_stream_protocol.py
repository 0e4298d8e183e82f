"""Stream page: the Nevis'22 protocol section equals the engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "5_Stream.py")


def test_stream_protocol_section_matches_engine(demo_store_path, monkeypatch):
    from lifelong_core.store import Store
    from lifelong_core.studies.stream_protocol import stream_protocol
    from lifelong_core.workflows.selection import select
    from lifelong_core.workflows.sortsets import release_rows

    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = AppTest.from_file(PAGE, default_timeout=600)
    at.query_params["np_methods"] = "midpoint,reference"
    at.query_params["np_frac"] = "0.6"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    front = next(d.value for d in at.dataframe if "test_mae" in d.value.columns)
    with Store.open(demo_store_path, read_only=True) as s:
        sel = select(s, s.datasets()["dataset"].iloc[0])
    budgets = [b for b in (8, 16, 32, 64, 128, 256, 512, 1024, 2048) if b <= sel.A.shape[1]]
    want = stream_protocol(
        sel.A,
        release_rows(sel.models),
        methods=["midpoint", "reference"],
        budgets=budgets,
        train_fraction=0.6,
    )
    np.testing.assert_allclose(front["test_mae"].to_numpy(), want.front["test_mae"].to_numpy())
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Regret view" in t for t in titles) and any(
        "Pareto front (meta-test)" in t for t in titles
    )
