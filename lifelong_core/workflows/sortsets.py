"""Sort sets and release order: which models play the Sort set, and in what order models arrive.

One rule for every front end: the command line's ``--sort-models K --seed S`` draw
(:func:`~lifelong_core.sortsearch.choose_sort_rows`) for a random Sort set, and release
order = ``release_order`` ascending, models without one last, ties by insertion (store
order).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch import choose_sort_rows

SORT_SETS = ("random", "earliest released")
RANDOM_SET, EARLIEST_SET = SORT_SETS
# The Sort split a sweep page opens on, and the one whose fit `lbe state --refresh` keeps.
DEFAULT_SORT_MODELS = 100
DEFAULT_SORT_SET = RANDOM_SET
DEFAULT_SEED = 0


def default_sort_size(m: int, wanted: int = DEFAULT_SORT_MODELS) -> int:
    """The Sort set's size a sweep opens with: ``wanted`` models, at most half of ``m``.

    Parameters
    ----------
    m : int
        Models of the selection.
    wanted : int
        The size asked for when there are enough models.

    Returns
    -------
    int
        ``min(wanted, m // 2)``.
    """
    return min(int(wanted), int(m) // 2)


def release_rows(models: pd.DataFrame) -> np.ndarray:
    """Row numbers of ``models`` in release order (models without a release_order last,
    ties and missing values by insertion).

    The one release order of every front end: the stream study replays it, the
    "earliest released" Sort set and the newest models of a ranking are read off it.

    Parameters
    ----------
    models : pandas.DataFrame
        Model rows in store order with a ``release_order`` column (numbers, or missing).

    Returns
    -------
    numpy.ndarray of int64, shape (len(models),)
        Positions in ``models``, earliest released first.
    """
    rel = models["release_order"].astype("Float64").fillna(np.inf).to_numpy(dtype=float)
    return np.lexsort((np.arange(len(models)), rel)).astype(np.int64)


def sort_rows(models: pd.DataFrame, k: int, how: str, seed: int) -> np.ndarray:
    """Row numbers of the Sort set, ascending: ``k`` rows at random or the ``k`` earliest released.

    Random uses the command line's ``--sort-models K --seed S`` rule
    (:func:`~lifelong_core.sortsearch.choose_sort_rows`) so a view can be reproduced there.

    Parameters
    ----------
    models : pandas.DataFrame
        The selection's model rows (with ``release_order`` for the earliest released).
    k : int
        Size of the Sort set.
    how : {"random", "earliest released"}
        Which Sort set (:data:`SORT_SETS`).
    seed : int
        Seed of the random draw (unused for the earliest released).

    Returns
    -------
    numpy.ndarray of int64
        ``k`` row numbers of ``models``, ascending.

    Raises
    ------
    InputError
        On an unknown Sort set, or ``k`` outside [1, m - 1] (at least one model is left
        to evaluate).
    """
    m = len(models)
    if how == RANDOM_SET:
        return choose_sort_rows(m, k, seed)
    if how != EARLIEST_SET:
        raise InputError(f"unknown Sort set {how!r}; choose one of {', '.join(SORT_SETS)}.")
    if not 1 <= k < m:
        raise InputError(f"the Sort set needs between 1 and {m - 1} models, got {k}.")
    return np.sort(release_rows(models)[:k]).astype(np.int64)


def nested_pool(models: pd.DataFrame, k_max: int, how: str, seed: int) -> np.ndarray:
    """A candidate order for nested Sort sets: its first ``k`` rows are the Sort set of size k.

    Nested sets with one fixed evaluation set (the rows outside the first ``k_max``) make
    the curves for different Sort sizes comparable, as in Fig. 4b of Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*.
    """
    m = len(models)
    if how == RANDOM_SET:
        return np.random.default_rng(seed).permutation(m)[:k_max].astype(np.int64)
    return release_rows(models)[:k_max]
