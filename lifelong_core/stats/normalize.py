"""BigBench-style metric normalisation (LA-UR-24-25289 report, 2024, §2.4).

A task score ``s`` becomes ``(s - l) / (h - l)``, where the task's high ``h`` and low
``l`` are, as in §2.4, the maximum and minimum score of that task over all bootstrap
replicates of every model of the benchmark ("for a particular task h is the maximum score
over all bootstrap samples"). The bounds are the *source's*: every model of the counts a
page or command reads, whichever of them it shows or compares, so a model's normalised
score does not change with the selection (:func:`normalization_bounds`; a model's
replicates do not depend on the other models, :mod:`.bootstrap`). Every replicate is
normalised with the same bounds, so intervals of normalised aggregates come from the same
replicates as the raw ones.

What the report leaves open: the number of replicates. The bounds are the most extreme of
them, so they move outwards as replicates are added (a task's lowest model sits about 3.5
standard errors above the minimum of 2,000 replicates, about 2.6 above that of 100); the
reproduction (``benchmarks/reproduce_uncertainty.py``) prints Table A.3's normalised block
with bounds from several numbers of replicates beside the published figures.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.stats.bootstrap import Bootstrap, _rescale, model_replicates
from lifelong_core.stats.counts import CountTable


def normalization_bounds(
    table: CountTable, n_boot: int, seed: int, bound_replicates: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-task lowest and highest score over the bootstrap replicates of every model of
    ``table`` (§2.4).

    Model by model (memory: one model's replicates at a time), from the same streams as
    :func:`~lifelong_core.stats.bootstrap.bootstrap`, so the bounds are exactly those of
    the source's whole bootstrap.

    Parameters
    ----------
    table : CountTable
        Every model of the source (not only those shown).
    n_boot, seed : int
        The bootstrap's replicates and seed.
    bound_replicates : int, optional
        Take the extremes over the first ``bound_replicates`` replicates only (a reading
        of the report's unstated number of replicates; default: all ``n_boot``).

    Returns
    -------
    (low, high) : tuple of ndarray
        Arrays of one value per task.
    """
    k = int(n_boot) if bound_replicates is None else min(int(bound_replicates), int(n_boot))
    low = np.full(len(table.tasks), np.inf)
    high = np.full(len(table.tasks), -np.inf)
    for i in range(len(table.models)):
        rep = model_replicates(table, i, n_boot, seed)[:k]
        np.minimum(low, rep.min(axis=0), out=low)
        np.maximum(high, rep.max(axis=0), out=high)
    return low, high


def normalize(
    boot: Bootstrap,
    source: CountTable | None = None,
    bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> Bootstrap:
    """The replicates of ``boot`` on the normalised scale, with the bounds attached.

    Parameters
    ----------
    boot : Bootstrap
        Replicates of the models to show (:func:`~lifelong_core.stats.bootstrap.bootstrap`).
    source : CountTable, optional
        Every model of the benchmark, whose replicates set the bounds (default: ``boot``'s
        own table). Its tasks must be ``boot``'s.
    bounds : (low, high), optional
        Bounds already computed by :func:`normalization_bounds` (``source`` is then unused).

    Returns
    -------
    Bootstrap

    Notes
    -----
    Departure: the paper does not say what happens when a task's bounds coincide
    (every replicate of every model scores the same); such a task scores 1 for all
    models so it neither moves means apart nor breaks ties. Replicates outside given
    bounds (bounds of fewer replicates than ``boot`` has) are kept on the linear scale,
    below 0 or above 1.
    """
    if boot.normalized:
        return boot
    if bounds is None:
        table = boot.table if source is None else source
        low, high = normalization_bounds(table, boot.scores.shape[0], boot.seed)
    else:
        low, high = (np.asarray(b, dtype=float) for b in bounds)
    if len(low) != boot.scores.shape[2]:
        raise InputError("normalisation bounds must have one value per task.")
    return replace(boot, scores=_rescale(boot.scores, low, high), low=low, high=high)
