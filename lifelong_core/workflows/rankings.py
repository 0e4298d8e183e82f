"""Counts estimated by Sort & Search for the newest models, ready for the ranking methods.

The newest models by release order play the new models: each is estimated from
``budget`` samples (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era
of Rapid Progress*, §3.2) and its predicted vector summed per domain, beside its true
counts; see :mod:`lifelong_core.stats.estimated` for what intervals on them mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.stats.estimated import sortsearch_counts
from lifelong_core.workflows.sortsets import release_rows


def newest_estimated_counts(store, dataset: str, n_new: int, budget: int, method: str, seed: int):
    """Estimated and true counts (``counts.csv`` frames) of the ``n_new`` newest models of
    ``dataset``, the older ones as the cache; and, where ``method`` gives one, a frame of
    its own interval of each model's pooled accuracy in percent (model, mean, lo, hi, true),
    else None."""
    samples = store.samples(dataset=dataset)
    models = store.models()
    models = models.iloc[release_rows(models)]
    if n_new >= len(models):
        raise InputError(f"hold out fewer than the {len(models)} models in the store.")
    A = store.matrix(models=models["model_idx"].to_numpy(), samples=samples["sample_idx"].to_numpy())
    rows = np.arange(len(models))
    est = sortsearch_counts(
        A,
        samples["domain"].tolist(),
        dict(zip(samples["domain"], samples["category"])),
        models["name"].tolist(),
        sort_rows=rows[:-n_new],
        eval_rows=rows[-n_new:],
        budget=budget,
        method=method,
        seed=seed,
    )
    own = None
    if est.has_intervals:
        own = pd.DataFrame({"model": list(est.estimated.models), "mean": est.acc * 100, "lo": est.lo * 100,
                            "hi": est.hi * 100, "true": est.true_acc * 100})
    return est.estimated.to_frame(), est.true.to_frame(), own
