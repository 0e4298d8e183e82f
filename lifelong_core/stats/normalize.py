"""BigBench-style metric normalisation (LA-UR-24-25289 report, 2024, §2.4).

A task score ``s`` becomes ``(s - l) / (h - l)``, where the task's high ``h`` and low
``l`` are, as in §2.4, the maximum and minimum score of that task over all bootstrap
replicates (of every model). Every replicate is normalised with the same bounds, so
intervals of normalised aggregates come from the same replicates as the raw ones.
"""

from __future__ import annotations

from dataclasses import replace

from lifelong_core.stats.bootstrap import Bootstrap, _rescale


def normalize(boot: Bootstrap) -> Bootstrap:
    """The replicates of ``boot`` on the normalised scale, with the bounds attached.

    Departure: the paper does not say what happens when a task's bounds coincide
    (every replicate of every model scores the same); such a task scores 1 for all
    models so it neither moves means apart nor breaks ties.
    """
    if boot.normalized:
        return boot
    low = boot.scores.min(axis=(0, 1))
    high = boot.scores.max(axis=(0, 1))
    return replace(boot, scores=_rescale(boot.scores, low, high), low=low, high=high)
