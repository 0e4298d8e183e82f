"""The design study: how the Sort set size, the Sort method and the sampling change the error.

Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
Fig. 4b-d: each design choice varied with the others fixed. A run here is one sweep
configuration; a front end runs each (the app with a progress bar) and draws one curve
per label.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from lifelong_core.methods import is_threshold_rule
from lifelong_core.sortsearch import DEFAULT_RULE, SORTS
from lifelong_core.sortsearch.search import SAMPLING
from lifelong_core.workflows.sortsets import nested_pool
from lifelong_core.workflows.sweeps import complement

SORT_SIZES = (5, 10, 25, 50, 100, 200)


@dataclass(frozen=True)
class DesignRun:
    """One sweep of the study: ``what`` is varied (sort_models, sort_method, sampling) and
    set to ``label``; ``eval_rows`` None = every row outside ``sort_set``."""

    what: str
    label: str
    sort_set: tuple[int, ...]
    sort: str
    sampling: str
    eval_rows: tuple[int, ...] | None


def design_rule(search: str) -> str:
    """The threshold rule the study sweeps (the figures are of the rules).

    Parameters
    ----------
    search : str
        The method the user chose.

    Returns
    -------
    str
        ``search`` when the registry marks it a threshold rule, else the default rule
        (``midpoint``).
    """
    return search if is_threshold_rule(search) else DEFAULT_RULE


def design_runs(
    models: pd.DataFrame, sort_set: Iterable[int], how: str, seed: int, sort: str, sampling: str
) -> list[DesignRun]:
    """The study's runs on ``models`` (rows of a selection), or [] when there are too few
    models for Sort sets of 5 or more that leave a third of the models to score.

    Sort-set sizes use nested sets (:func:`~lifelong_core.workflows.sortsets.nested_pool`)
    scored on the same models, those outside the largest set; the Sort-method and
    sampling runs use ``sort_set`` and score every other model (Prabhu et al., 2024,
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, Fig. 4b, 4c and
    4d respectively).

    Parameters
    ----------
    models : pandas.DataFrame
        The selection's models, one row each, with a ``release_order`` column (used when
        ``how`` is the earliest released).
    sort_set : iterable of int
        The Sort set's model rows for the Sort-method and sampling runs.
    how : str
        How the nested Sort sets are drawn: ``"random"`` (seeded) or
        ``"earliest released"``.
    seed : int
        The seed of a random nested draw.
    sort : str
        The Sort method held fixed while the Sort-set size and the sampling vary.
    sampling : str
        The sampling held fixed while the Sort-set size and the Sort method vary.

    Returns
    -------
    list of DesignRun
        One run per Sort-set size of :data:`SORT_SIZES` below two thirds of the models
        (labelled ``"K models"``), per Sort method (``sum``, ``confidence``,
        ``recursive``) and per sampling (``uniform``, ``random``, ``reference``,
        ``listing``), in that order; empty when no size fits.
    """
    m = len(models)
    sizes = [s for s in SORT_SIZES if s < m * 2 // 3]
    if not sizes:
        return []
    pool = nested_pool(models, max(sizes), how, seed)
    ev = tuple(int(r) for r in complement(m, pool))
    fixed = tuple(int(r) for r in sort_set)
    return (
        [
            DesignRun(
                "sort_models",
                f"{s} models",
                tuple(sorted(int(r) for r in pool[:s])),
                sort,
                sampling,
                ev,
            )
            for s in sizes
        ]
        + [DesignRun("sort_method", meth, fixed, meth, sampling, None) for meth in SORTS]
        + [DesignRun("sampling", smp, fixed, sort, smp, None) for smp in SAMPLING]
    )
