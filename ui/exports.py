"""Cached exports for the Data page: counts.csv and the long table of one dataset, by the
same functions as ``python -m lifelong_core export --counts`` / ``--long``."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.common import get_store


@st.cache_data(show_spinner="Counting…", max_entries=8)
def counts_csv(key: str, dataset: str) -> pd.DataFrame:
    """counts.csv of ``dataset`` (model, task, category, correct, total)."""
    from lifelong_core.workflows.exports import counts_table

    return counts_table(get_store(), dataset)


def long_csv(key: str, dataset: str) -> bytes:
    """The long table of ``dataset`` as CSV bytes (built when the button is clicked)."""
    import tempfile
    from pathlib import Path

    from lifelong_core.store.files import export_long

    with tempfile.TemporaryDirectory(prefix="lbe-export-") as tmp:
        out = Path(tmp) / "long.csv"
        export_long(get_store(), out, dataset)
        return out.read_bytes()
