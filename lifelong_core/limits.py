"""Bounds on the work one request may ask for, shared by the command line and the app.

Why: a hand-edited URL or flag could otherwise ask one server process for minutes of CPU
(matched accuracy of every model on two whole datasets took 130 s per page view) or an
argument NumPy refuses with a traceback (a negative or 100-digit seed). Each bound is far
above what the papers' protocols use; the app's bounds are tighter because one server is
shared by every visitor. README "Bounds" lists them.
"""

from __future__ import annotations

import argparse

from lifelong_core.errors import InputError

# Seeds: NumPy's SeedSequence takes any non-negative int; 2**32 - 1 keeps seeds portable
# across NumPy's legacy and new generators and within a browser's safe integers.
MAX_SEED = 2**32 - 1
# Matched accuracy: runs per comparison (the paper averages 10).
MAX_MATCH_RUNS = 1_000
MAX_APP_MATCH_RUNS = 100
# Matched accuracy of every model in one page view: models x runs x (source + target
# datapoints). The demo's default view is 440 x 10 x 2,000 = 8.8M (about 12 s here).
MAX_APP_MATCH_WORK = 20_000_000


def check_seed(seed, flag: str = "--seed") -> int:
    """``seed`` as an int in [0, MAX_SEED], or one sentence."""
    try:
        value = int(seed)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{flag} must be a whole number, got {seed!r}.") from None
    if value != seed or not 0 <= value <= MAX_SEED:
        raise InputError(f"{flag} must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}.")
    return value


def check_count(value, flag: str, lo: int, hi: int) -> int:
    """``value`` as an int in [lo, hi], or one sentence naming the flag and the range."""
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{flag} must be a whole number, got {value!r}.") from None
    if n != value:
        raise InputError(f"{flag} must be a whole number, got {value!r}.")
    if n < lo:
        raise InputError(f"{flag} must be at least {lo:,}, got {value!r}.")
    if n > hi:
        raise InputError(f"{flag} must be at most {hi:,} (a bound on the work of one request), got {value!r}.")
    return n


def check_match_work(models: int, runs: int, n_source: int, n_target: int) -> None:
    """Refuse an all-models matched-accuracy view above :data:`MAX_APP_MATCH_WORK`."""
    work = models * runs * (n_source + n_target)
    if work > MAX_APP_MATCH_WORK:
        raise InputError(
            f"Matching all {models} models x {runs} runs on {n_source:,} + {n_target:,} datapoints is "
            f"{work:,} model-datapoint-runs, above the app's limit of {MAX_APP_MATCH_WORK:,}; choose fewer "
            "domains or runs, pick one model, or use `python -m lifelong_core match` on the command line."
        )


def int_arg(text: str) -> int:
    """argparse type: any whole number (range checks come after, with one sentence)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
