"""Getting tables out of a store: the ``counts.csv`` that ``rank`` and ``weights`` read,
for ``python -m lifelong_core export --counts`` and the app's Data page alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.workflows.categories import fill_categories

if TYPE_CHECKING:
    from lifelong_core.store import Store


def counts_table(
    store: Store, dataset: str, assigned: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """``model, task, category, correct, total`` of the real models of ``dataset`` recorded
    on every one of its domains (:func:`~lifelong_core.workflows.selection.complete_counts`:
    ``rank`` needs every model on every task, and estimated rows are predictions, not
    results); task = domain; tasks without a category get one by
    :func:`~lifelong_core.workflows.categories.fill_categories`, so ``rank`` reads the
    file as written. ``attrs["note"]`` says which models were left out, if any.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        The dataset to count.
    assigned : mapping of str to str, optional
        The user's categories, task (domain) -> category; they take precedence over the
        recorded ones.

    Returns
    -------
    pandas.DataFrame
        One row per (model, task) with columns ``model``, ``task``, ``category``,
        ``correct`` and ``total``; ``attrs["note"]`` names the models left out for not
        being evaluated on every domain, when there are any.

    Raises
    ------
    InputError
        If the store has no such dataset, holds no evaluated predictions in it, or
        ``assigned`` names a task the dataset does not have.
    """
    from lifelong_core.workflows.selection import complete_counts

    if dataset not in set(store.datasets()["dataset"]):
        raise InputError(f"The store has no dataset {dataset!r}.")
    counts, dropped = complete_counts(store, dataset)
    if len(counts) == 0:
        raise InputError(
            f"The store holds no evaluated predictions to count in dataset {dataset!r}."
        )
    out = fill_categories(counts, assigned)
    if dropped:
        out.attrs["note"] = (
            f"dataset {dataset}: {out['model'].nunique():,} models counted; left out: "
            f"{len(dropped):,} not evaluated on every domain ({', '.join(dropped[:3])}"
            f"{', ...' if len(dropped) > 3 else ''})."
        )
    return out
