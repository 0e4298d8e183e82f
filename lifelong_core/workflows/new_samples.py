"""The insert_D study on a data choice: which splits of the samples, shared by the
``sweep-samples`` command and the Budget explorer's "New samples (insert_D)" tab.

A random split takes a seeded share of the samples as new; a held-out-domain split takes
each chosen domain in turn (Prabhu et al. 2024, "Efficient Lifelong Model Evaluation in an
Era of Rapid Progress", §4.3 measures the random case; the domain case asks whether a model
ranking learnt on some shifts transfers to another).
"""

from __future__ import annotations

from collections.abc import Sequence

from lifelong_core.errors import InputError
from lifelong_core.studies.new_samples import (
    RANDOM_SPLIT,
    SPLITS,
    SampleSplit,
    domain_splits,
    random_split,
)


def make_splits(
    n_samples: int,
    domains: Sequence[str] | None,
    kinds: Sequence[str],
    fraction: float,
    seed: int,
    held_out: Sequence[str] | None = None,
) -> list[SampleSplit]:
    """The random split (if asked) first, then one split per held-out domain.

    ``domains`` gives each sample's domain (needed for ``domain``); ``held_out`` limits the
    held-out domains (default: every domain in turn).
    """
    for k in kinds:
        if k not in SPLITS:
            raise InputError(f"unknown split {k!r}; use one of {', '.join(SPLITS)}.")
    if not kinds:
        raise InputError("choose at least one split of the samples (random or domain).")
    if held_out and "domain" not in kinds:
        raise InputError("held-out domains go with the domain split.")
    splits = []
    if RANDOM_SPLIT in kinds:
        splits.append(random_split(n_samples, fraction, seed))
    if "domain" in kinds:
        if domains is None:
            raise InputError("the domain split needs each sample's domain.")
        splits += domain_splits(domains, held_out)
    return splits
