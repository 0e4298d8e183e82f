"""Cached exports for the Data page: counts.csv and the long table of one dataset, by the
same functions as ``python -m lifelong_core export --counts`` / ``--long``."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.common import get_store


@st.cache_data(show_spinner="Counting…", max_entries=8)
def counts_csv(key: str, dataset: str) -> pd.DataFrame:
    """counts.csv of ``dataset``, as ``lbe export --counts`` writes it.

    The real models recorded on every domain of the dataset; tasks are its domains.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`ui.caches.store_key`): a store changed on disk is
        counted again.
    dataset : str
        Name of a dataset of the store.

    Returns
    -------
    pandas.DataFrame
        model, task, category, correct, total; ``attrs["note"]`` says which models were
        left out, if any.

    Raises
    ------
    InputError
        If the store has no such dataset, or no evaluated predictions to count in it.
    """
    from lifelong_core.workflows.exports import counts_table

    return counts_table(get_store(), dataset)


def long_csv(dataset: str) -> bytes:
    """The long table of ``dataset`` as CSV bytes, as ``lbe export --long`` writes it.

    Built when the download button is clicked, in a temporary folder removed afterwards.

    Parameters
    ----------
    dataset : str
        Name of a dataset of the store.

    Returns
    -------
    bytes
        The CSV file.
    """
    import tempfile
    from pathlib import Path

    from lifelong_core.store.files import export_long

    with tempfile.TemporaryDirectory(prefix="lbe-export-") as tmp:
        out = Path(tmp) / "long.csv"
        export_long(get_store(), out, dataset)
        return out.read_bytes()
