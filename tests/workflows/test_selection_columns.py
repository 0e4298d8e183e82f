"""A selection carries the samples' columns every front end reads, and their values as stored."""

from __future__ import annotations

import pandas as pd

from lifelong_core.store import Store
from lifelong_core.workflows.selection import SELECTION_COLUMNS, select


def test_selection_samples_are_the_stored_samples_columns(demo_store_path):
    with Store.open(demo_store_path, read_only=True) as st:
        dataset = str(st.datasets()["dataset"].iloc[0])
        domains = tuple(st.domains(dataset)["domain"].astype(str)[:2])
        for chosen in ((), domains):
            sel = select(st, dataset, chosen)
            whole = st.samples(dataset, list(chosen) or None)
            assert list(sel.samples.columns) == list(SELECTION_COLUMNS)
            pd.testing.assert_frame_equal(sel.samples, whole[list(SELECTION_COLUMNS)])
            assert sel.A.shape[1] == len(whole)
