"""One dataset of the open store, as the pages take it: the dataset picker and the complete counts.

The choice lives in the URL like every other control; a store with no dataset yet stops
the page with the one ``NO_DATA`` sentence instead of an empty picker.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import caches
from ui.common import NO_DATA, url_index


def pick_dataset(url_key: str = "ds", container=None) -> str:
    """The dataset chosen in a select box whose value lives in the URL.

    A store with no dataset yet stops the page with the one ``NO_DATA`` sentence instead
    of showing an empty picker.

    Parameters
    ----------
    url_key : str
        Name of the URL parameter and of the widget key.
    container : streamlit container, optional
        Where the select box goes (default ``st.sidebar``).

    Returns
    -------
    str
        The chosen dataset: the URL's, else the store's first.
    """
    datasets = caches.overview(caches.store_key())["datasets"]["dataset"].tolist()
    if not datasets:
        st.info(NO_DATA)
        st.stop()
    box = st.sidebar if container is None else container
    return box.selectbox(
        "Dataset", datasets, index=url_index(url_key, datasets, datasets[0]), key=url_key
    )


def complete_counts(dataset: str) -> pd.DataFrame:
    """Per-domain counts of the models evaluated on every domain of ``dataset``.

    :func:`ui.caches.complete_counts`, with a caption naming how many models were left
    out for missing a domain.

    Parameters
    ----------
    dataset : str
        Name of a dataset of the store.

    Returns
    -------
    pandas.DataFrame
        ``counts.csv`` layout (model, task, category, correct, total), tasks being the
        dataset's domains.
    """
    counts, dropped = caches.complete_counts(caches.store_key(), dataset)
    if dropped:
        st.caption(
            f"{len(dropped)} model(s) without a recorded prediction on every domain are left out."
        )
    return counts
