"""Counts estimated by Sort & Search for the newest models, ready for the ranking methods.

The models are one dataset's complete set (:func:`~lifelong_core.workflows.selection.select`:
real models evaluated on every sample; a store whose datasets were run by different models
has one such set per dataset), optionally narrowed to the ones the user chose. The newest of
them by release order play the new models: each is estimated from ``budget`` samples
(Prabhu et al., 2024, *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
§3.2) and its predicted vector summed per domain, beside its true counts; see
:mod:`lifelong_core.stats.estimated` for what intervals on them mean. Domains without a
category get one by :func:`~lifelong_core.workflows.categories.fill_categories`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.methods.draws import PER_MODEL
from lifelong_core.stats.coverage import Coverage, coverage_of
from lifelong_core.stats.estimated import sortsearch_counts
from lifelong_core.workflows.categories import fill_categories
from lifelong_core.workflows.selection import Selection, select
from lifelong_core.workflows.sortsets import release_rows


def newest_estimated_counts(
    store,
    dataset: str,
    n_new: int,
    budget: int,
    method: str,
    seed: int,
    models: Sequence[str] | None = None,
    sel: Selection | None = None,
    draws: str = PER_MODEL,
):
    """Estimated and true counts (``counts.csv`` frames) of the ``n_new`` newest of the chosen
    ``models`` (names; None = all) of ``dataset``, the older ones as the cache; and, where
    ``method`` gives one, a frame of its own interval of each model's pooled accuracy in
    percent (model, mean, lo, hi, true), else None. ``sel``: the dataset's selection, when
    the caller already holds it. Each new model's samples are its own draw
    (``draws="per-model"``) or the seed's common set (``"common"``)."""
    sel = sel if sel is not None else select(store, dataset)
    names = np.asarray(sel.names, dtype=object)
    keep = np.arange(len(names)) if models is None else np.flatnonzero(np.isin(names, list(models)))
    keep = keep[release_rows(sel.models.iloc[keep])]
    if not 2 <= n_new < len(keep) - 1:
        raise InputError(
            f"hold out between 2 and {len(keep) - 2} of the {len(keep)} chosen models "
            "(at least two stay in the cache)."
        )
    smp = sel.samples
    doms = fill_categories(
        pd.DataFrame(
            {
                "model": "",
                "task": smp["domain"].astype(str),
                "category": smp["category"],
                "correct": 0,
                "total": 1,
            }
        ).drop_duplicates("task")
    )
    rows = np.arange(len(keep))
    est = sortsearch_counts(
        sel.A[keep],
        smp["domain"].astype(str).tolist(),
        dict(zip(doms["task"], doms["category"])),
        names[keep].tolist(),
        sort_rows=rows[:-n_new],
        eval_rows=rows[-n_new:],
        budget=budget,
        method=method,
        seed=seed,
        draws=draws,
    )
    own = None
    if est.has_intervals:
        own = pd.DataFrame(
            {
                "model": list(est.estimated.models),
                "mean": est.acc * 100,
                "lo": est.lo * 100,
                "hi": est.hi * 100,
                "true": est.true_acc * 100,
            }
        )
    return est.estimated.to_frame(), est.true.to_frame(), own


def estimator_coverage(own: pd.DataFrame, draws: str = PER_MODEL) -> tuple[Coverage, str]:
    """How many of the estimated models' own 95% intervals (the frame
    :func:`newest_estimated_counts` returns) hold their true accuracy, with an exact 95%
    interval on that share, and the sentence a front end shows.

    Counted over every estimated model, not a subset picked by its estimate: keeping the
    models estimated highest favours those whose error was upward, and biases the count.
    The sentence says whose item draw the estimates used; with a common set the models'
    errors move together and the count says less than its interval suggests.
    """
    cov = coverage_of(own["true"], own["lo"], own["hi"])
    how = (
        "each model's samples were its own random draw, so the intervals are independent trials"
        if draws == PER_MODEL
        else "every model was run on the same samples, so their errors move together and the count is "
        "less certain than this interval says"
    )
    if cov.lo <= 0.95 <= cov.hi:
        verdict = f"with {cov.total} models that is consistent with intervals that hold the truth 95% of the time"
    else:
        verdict = (
            f"that excludes 95%: on these models the intervals hold the truth "
            f"{'less' if cov.hi < 0.95 else 'more'} often than they claim"
        )
    text = (
        f"{cov.covered} of {cov.total} estimated models ({cov.share:.0%}) have their true accuracy inside "
        f"the estimator's 95% interval (exact 95% interval of that share: {cov.lo:.0%}-{cov.hi:.0%}); "
        f"{verdict}. {how[0].upper()}{how[1:]}."
    )
    return cov, text


# A source with at most this many models shows them all by default (VTAB-1k's 16, so the
# default view is the report's Table A.3); a larger one shows its DEFAULT_TOP most accurate.
SHOW_ALL_UP_TO = 20
DEFAULT_TOP = 12


def default_models(best_first: Sequence[str]) -> list[str]:
    """The models a ranking view shows before the user chooses: all of them for a source
    of at most :data:`SHOW_ALL_UP_TO`, else the :data:`DEFAULT_TOP` first of
    ``best_first`` (the source's models, most accurate first).

    Examples
    --------
    >>> len(default_models([f"m{i}" for i in range(16)]))
    16
    >>> default_models([f"m{i}" for i in range(30)])[-1]
    'm11'
    """
    names = list(best_first)
    return names if len(names) <= SHOW_ALL_UP_TO else names[:DEFAULT_TOP]
