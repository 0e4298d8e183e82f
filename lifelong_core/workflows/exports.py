"""Getting tables out of a store: the ``counts.csv`` that ``rank`` and ``weights`` read,
for ``python -m lifelong_core export --counts`` and the app's Data page alike."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.workflows.categories import fill_categories


def counts_table(
    store, dataset: str | None = None, assigned: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """``model, task, category, correct, total`` of every recorded prediction (of
    ``dataset``), task = domain; tasks without a category get one by
    :func:`~lifelong_core.workflows.categories.fill_categories`, so ``rank`` reads the
    file as written."""
    if dataset is not None and dataset not in set(store.datasets()["dataset"]):
        raise InputError(f"The store has no dataset {dataset!r}.")
    counts = store.counts(dataset=dataset)
    if len(counts) == 0:
        raise InputError(
            "The store holds no predictions to count"
            + (f" in dataset {dataset!r}." if dataset else ".")
        )
    return fill_categories(counts, assigned)
