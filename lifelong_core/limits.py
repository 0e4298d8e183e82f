"""Bounds on the work one request may ask for, shared by the command line and the app.

Why: a hand-edited URL or flag could otherwise ask one server process for minutes of CPU
(matched accuracy of every model on two whole datasets took 130 s per page view) or an
argument NumPy refuses with a traceback (a negative or 100-digit seed). Each bound is far
above what the papers' protocols use; the app's bounds are tighter because one server is
shared by every visitor. The documentation's reliability guide lists them.

The dense-read guard is one more such bound: no caller that opted in
materialises a models x samples array larger than :func:`dense_limit` bytes
(:class:`DenseReadError` instead). It is off (``None``) for the library and the command
line, which score whole stores in chunks of their own; the app turns it on
(``ui.common``: 64 MB, or ``LBE_DENSE_LIMIT_MB``), so a large store is read as packed
blocks and can never take the server's memory by accident. Tests lower it through the
same setting.
"""

from __future__ import annotations

import argparse
import os
from contextlib import contextmanager

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
        raise InputError(
            f"{flag} must be at most {hi:,} (a bound on the work of one request), got {value!r}."
        )
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


# ------------------------------------------------------------------ dense-read guard
DEFAULT_APP_LIMIT_MB = 64.0
ENV = "LBE_DENSE_LIMIT_MB"

_limit: int | None = None


class DenseReadError(InputError):
    """A dense read larger than the configured block limit was attempted."""


def app_limit_bytes() -> int:
    """The app's limit: ``LBE_DENSE_LIMIT_MB`` if set (a positive number), else 64 MB."""
    raw = os.environ.get(ENV, "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_APP_LIMIT_MB
    except ValueError:
        raise InputError(f"{ENV}={raw!r} is not a number of megabytes.") from None
    if not mb > 0:
        raise InputError(f"{ENV} must be a positive number of megabytes, got {raw!r}.")
    return int(mb * (1 << 20))


def dense_limit() -> int | None:
    """Largest dense models x samples array allowed, in bytes; ``None`` = no limit."""
    return _limit


def set_dense_limit(limit_bytes: int | None) -> None:
    global _limit
    _limit = None if limit_bytes is None else int(limit_bytes)


@contextmanager
def dense_limit_set(limit_bytes: int | None):
    """Temporarily set the limit (tests, benchmarks)."""
    before = _limit
    set_dense_limit(limit_bytes)
    try:
        yield
    finally:
        set_dense_limit(before)


def fits(rows: int, cols: int, itemsize: int = 1) -> bool:
    """Whether a dense (rows, cols) array of ``itemsize``-byte entries is within the limit."""
    return _limit is None or int(rows) * int(cols) * int(itemsize) <= _limit


def check_dense(rows: int, cols: int, itemsize: int = 1, what: str = "a dense read") -> None:
    """Raise :class:`DenseReadError` if a dense (rows, cols) array would exceed the limit."""
    if not fits(rows, cols, itemsize):
        size = int(rows) * int(cols) * int(itemsize) / (1 << 20)
        raise DenseReadError(
            f"{what} of {int(rows):,} models x {int(cols):,} samples ({size:,.0f} MB) exceeds the dense-read limit of "
            f"{_limit / (1 << 20):,.0f} MB; this view reads the cache as packed blocks instead."
        )


def block_rows(cols: int, itemsize: int = 1, cap: int = 4096) -> int:
    """Rows per dense block of ``cols`` columns that stays within the limit (at least 1)."""
    if _limit is None:
        return cap
    return int(max(1, min(cap, _limit // max(1, int(cols) * int(itemsize)))))
