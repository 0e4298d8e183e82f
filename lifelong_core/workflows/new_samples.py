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
    """The splits of the samples into cache and new ones that an insert_D study runs:
    the random split (if asked) first, then one split per held-out domain.

    Parameters
    ----------
    n_samples : int
        Samples of the data choice (the columns split).
    domains : sequence of str or None
        Each sample's domain, in column order; needed for the ``"domain"`` split.
    kinds : sequence of {"random", "domain"}
        Which splits to make: ``"random"``, a seeded share of the samples is new (Prabhu
        et al., 2024, §4.3); ``"domain"``, each held-out domain in turn is new.
    fraction : float
        The random split's share of new samples, strictly between 0 and 1.
    seed : int
        Seed of the random split.
    held_out : sequence of str, optional
        The domains to hold out, one split each (default: every domain in turn); only
        with the ``"domain"`` split.

    Returns
    -------
    list of SampleSplit
        Each with its name (``random`` or ``domain:<name>``) and the column numbers of the
        cache (``old``) and of the new samples (``new``).

    Raises
    ------
    InputError
        On an unknown or no split kind, held-out domains without the domain split, a
        domain split without ``domains``, a fraction that leaves a side empty, a seed out
        of range, fewer than two domains, or a held-out domain the samples do not have.
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
