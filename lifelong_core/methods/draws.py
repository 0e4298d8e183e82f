"""Whose random draw a new model gets: its own, or one shared by every model.

An estimate from a random subset of items errs by however easy or hard that subset
happens to be. When every new model is evaluated on the same subset (one seed for all),
their errors share that luck: a dozen estimates can all land above the truth together,
and the share of intervals that cover the truth, counted over those models, swings far
from the nominal 95% although each interval on its own is valid. Independent draws per
model make the errors independent, so averages and coverage counted over models mean
what they say.

:func:`model_rng` derives a model's generator from its name and the user's seed through
BLAKE2b (not Python's ``hash``, which is salted per process), so a model gets the same
items in every run, on every platform, whatever other models are evaluated with it.
A *common* item set (:data:`COMMON`: the seed's generator, the same for every model)
stays available: it is what comparing models on identical items needs.
"""

from __future__ import annotations

import hashlib

import numpy as np

from lifelong_core import limits
from lifelong_core.errors import InputError

PER_MODEL = "per-model"
COMMON = "common"
DRAWS = (PER_MODEL, COMMON)


def model_seed(name: str, seed: int) -> int:
    """A 64-bit seed from a model's name and the user's seed, stable across runs and platforms.

    Examples
    --------
    >>> model_seed("org/model-7b", 0) == model_seed("org/model-7b", 0)
    True
    >>> model_seed("org/model-7b", 0) != model_seed("org/model-7b", 1)
    True
    """
    seed = limits.check_seed(seed)  # the one seed rule
    text = f"{int(seed)}\x1f{name}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def check_draws(draws: str) -> str:
    """Check the name of an item draw.

    Parameters
    ----------
    draws : str
        ``"per-model"`` (each model its own stream) or ``"common"`` (one stream for
        every model): one of :data:`DRAWS`.

    Returns
    -------
    str
        ``draws``, unchanged.

    Raises
    ------
    InputError
        If ``draws`` is not one of :data:`DRAWS` (naming the parameter ``draws``).
    """
    if draws not in DRAWS:
        raise InputError(
            f"unknown item draw {draws!r}; use one of {', '.join(DRAWS)}.", param="draws"
        )
    return draws


def model_rng(name: str, seed: int, draws: str = PER_MODEL) -> np.random.Generator:
    """The generator a new model's items are drawn with.

    Parameters
    ----------
    name : str
        The model's name (its id in the store).
    seed : int
        The user's seed.
    draws : {"per-model", "common"}
        ``"per-model"``: the model's own stream (:func:`model_seed`); ``"common"``: the
        seed's stream, identical for every model.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    InputError
        If ``draws`` is unknown or ``seed`` is not a whole number.
    """
    check_draws(draws)
    own = model_seed(str(name), seed)  # checks the seed either way
    return np.random.default_rng(int(seed) if draws == COMMON else own)
