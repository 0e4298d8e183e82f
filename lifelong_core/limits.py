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
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, SupportsInt

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
# Recursive Sorting by Sum: levels (the papers use 2; a level past the last tied group
# changes nothing but still costs a DP-search over every Sort row).
MAX_SORT_DEPTH = 64
# Repeated sweeps (bands over Sort splits): each repeat is a whole sweep.
MAX_REPEATS = 1_000
# Worker threads of one command (far above any machine's cores; each thread is memory).
MAX_THREADS = 1_024
# Rows per task of the sweep kernels (a task holds its rows in memory).
MAX_CHUNK_ROWS = 1 << 20
# Bootstrap replicates per model and task (the paper uses 2,000; the replicate array has
# its own bound in bytes, stats.bootstrap).
MAX_BOOT = 1_000_000
# The hierarchical model's Gibbs sampler: chains, kept draws and warm-up per chain, and the
# kept draws of every model's task accuracies (chains x draws x models x tasks doubles,
# 800 MB at the bound); the defaults (4 x 1,000 on 440 models x 14 tasks) keep 24.6M.
MAX_CHAINS = 64
MAX_DRAWS = 1_000_000
MAX_WARMUP = 1_000_000
MAX_MCMC_CELLS = 100_000_000
# ... and its updates: chains x (warm-up + draws) x models x tasks Beta draws, about 2M a
# second here (the defaults on the demo, 37M, take 20 s; the bound is some eight minutes).
MAX_MCMC_UPDATES = 1_000_000_000

# Kept mirt parameters: Sort models and columns one refresh fits on (default 500 models;
# the fit's time grows with both).
MAX_STATE_FIT_MODELS = 10_000
MAX_STATE_FIT_COLUMNS = 1 << 22

BOUND_NOTE = "a bound on the work of one request"


def check_seed(seed: SupportsInt | str, param: str | None = "seed", what: str = "the seed") -> int:
    """``seed`` as an int in [0, :data:`MAX_SEED`], or one sentence naming ``what``.

    The one seed rule: every command and page that draws random numbers passes its seed
    through here before any work, so ``-1`` or a 30-digit seed is refused the same way
    everywhere (NumPy would raise a traceback for the first and take the second).

    Parameters
    ----------
    seed : int
        The seed as given (a whole number of any type; ``True`` is refused).
    param : str, optional
        The parameter named by the error.
    what : str
        How the message names the value.

    Returns
    -------
    int
        The seed.

    Raises
    ------
    InputError
        If ``seed`` is not a whole number from 0 to :data:`MAX_SEED`.
    """
    if isinstance(seed, bool):
        raise InputError(f"{what} must be a whole number, got {seed!r}.", param=param)
    try:
        value = int(seed)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what} must be a whole number, got {seed!r}.", param=param) from None
    if value != seed or not 0 <= value <= MAX_SEED:
        raise InputError(
            f"{what} must be a whole number from 0 to {MAX_SEED:,}, got {_show(seed)}.",
            param=param,
        )
    return value


def check_count(value: Any, what: str, lo: int, hi: int, param: str | None = None) -> int:
    """``value`` as an int in [lo, hi], or one sentence naming ``what`` and the range.

    The one rule for work-size arguments (depth, repeats, chains, draws, runs, threads):
    checked before any work, the bound in the message.

    Parameters
    ----------
    value : int
        The value as given (a whole number of any type; ``True`` is refused).
    what : str
        How the message names the value.
    lo, hi : int
        The smallest and largest value allowed.
    param : str, optional
        The parameter named by the error.

    Returns
    -------
    int
        The value.

    Raises
    ------
    InputError
        If ``value`` is not a whole number in [``lo``, ``hi``].
    """
    if isinstance(value, bool):
        raise InputError(f"{what} must be a whole number, got {value!r}.", param=param)
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what} must be a whole number, got {value!r}.", param=param) from None
    if n != value:
        raise InputError(f"{what} must be a whole number, got {value!r}.", param=param)
    if n < lo:
        raise InputError(f"{what} must be at least {lo:,}, got {_show(value)}.", param=param)
    if n > hi:
        raise InputError(
            f"{what} must be at most {hi:,} ({BOUND_NOTE}), got {_show(value)}.", param=param
        )
    return n


def check_real(
    value: Any,
    what: str,
    lo: float | None = None,
    hi: float | None = None,
    *,
    param: str | None = None,
    open_lo: bool = False,
    open_hi: bool = False,
) -> float:
    """``value`` as a finite float within the given bounds, or one sentence naming ``what``.

    NaN passes every ``<`` test and infinity every ``>=`` test, so a parameter compared
    with its range alone would take them (``--se-mult nan`` marked no cell indeterminate);
    every real-valued parameter is checked here instead.

    Parameters
    ----------
    value : float
        The value as given.
    what : str
        How the message names the value.
    lo, hi : float, optional
        The bounds (``None``: unbounded on that side).
    param : str, optional
        The parameter named by the error.
    open_lo, open_hi : bool
        Whether the bound itself is excluded.

    Returns
    -------
    float
        The value.

    Raises
    ------
    InputError
        If ``value`` is not a finite number within the bounds.
    """
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what} must be a number, got {value!r}.", param=param) from None
    if isinstance(value, bool) or not math.isfinite(x):
        raise InputError(f"{what} must be a finite number, got {value!r}.", param=param)
    below = lo is not None and (x <= lo if open_lo else x < lo)
    above = hi is not None and (x >= hi if open_hi else x > hi)
    if below or above:
        if lo is None:
            rng = f"{'below' if open_hi else 'at most'} {hi:g}"
        elif hi is None:
            rng = f"{'above' if open_lo else 'at least'} {lo:g}"
        else:
            strictly = "strictly " if open_lo and open_hi else ""
            rng = f"{strictly}between {lo:g} and {hi:g}"
            if open_lo != open_hi:
                rng += f" ({'above' if open_lo else 'at least'} {lo:g}, {'below' if open_hi else 'at most'} {hi:g})"
        raise InputError(f"{what} must be {rng}, got {x:g}.", param=param)
    return x


def check_work(amount: int, limit: int, what: str, advice: str, param: str | None = None) -> None:
    """Refuse a request whose size (values kept, updates run) is above ``limit``.

    For bounds on a product of arguments, checked before anything is allocated.

    Parameters
    ----------
    amount : int
        The size of the request.
    limit : int
        The largest size allowed.
    what : str
        Names the product and its factors.
    advice : str
        What to lower.
    param : str, optional
        The parameter named by the error.

    Raises
    ------
    InputError
        If ``amount`` is above ``limit``.
    """
    if amount > limit:
        raise InputError(
            f"{what} is {amount:,}, above the limit of {limit:,} ({BOUND_NOTE}); {advice}.",
            param=param,
        )


def _show(value: Any) -> str:
    """A number for a message: digits grouped, and a 30-digit value shortened."""
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        return repr(value)
    if n != value:
        return repr(value)
    text = f"{n:,}"
    return text if len(text) <= 27 else f"{n:.3e}"


def check_match_work(models: int, runs: int, n_source: int, n_target: int) -> None:
    """Refuse an all-models matched-accuracy view above :data:`MAX_APP_MATCH_WORK`.

    Parameters
    ----------
    models, runs : int
        Models compared and runs per model.
    n_source, n_target : int
        Datapoints of the source and the target set.

    Raises
    ------
    InputError
        If ``models * runs * (n_source + n_target)`` is above the limit.
    """
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
    """Set the largest dense models x samples array allowed, for the whole process.

    Parameters
    ----------
    limit_bytes : int or None
        The limit in bytes; ``None`` removes it (the default outside the app).
    """
    global _limit
    _limit = None if limit_bytes is None else int(limit_bytes)


@contextmanager
def dense_limit_set(limit_bytes: int | None) -> Iterator[None]:
    """Set the dense-read limit for the duration of a ``with`` block.

    Used where a computation must run under a limit other than the current
    one (the refresh's default fit under the app's limit, tests, benchmarks);
    the previous limit is restored even when the block raises.

    Parameters
    ----------
    limit_bytes : int or None
        The limit inside the block, in bytes; None for no limit.

    Yields
    ------
    None
    """
    before = _limit
    set_dense_limit(limit_bytes)
    try:
        yield
    finally:
        set_dense_limit(before)


def fits(rows: int, cols: int, itemsize: int = 1) -> bool:
    """Whether a dense (rows, cols) array of ``itemsize``-byte entries is within the limit.

    Parameters
    ----------
    rows, cols : int
        The shape.
    itemsize : int
        Bytes per entry.

    Returns
    -------
    bool
        True when there is no limit or the array is within it.
    """
    return _limit is None or int(rows) * int(cols) * int(itemsize) <= _limit


def check_dense(rows: int, cols: int, itemsize: int = 1, what: str = "a dense read") -> None:
    """Refuse a dense (rows, cols) array that would exceed the dense-read limit.

    Parameters
    ----------
    rows, cols : int
        The shape (models x samples).
    itemsize : int
        Bytes per entry.
    what : str
        What the read is, for the message.

    Raises
    ------
    DenseReadError
        If the array is larger than :func:`dense_limit`.
    """
    limit = _limit
    nbytes = int(rows) * int(cols) * int(itemsize)
    if limit is not None and nbytes > limit:
        raise DenseReadError(
            f"{what} of {int(rows):,} models x {int(cols):,} samples ({nbytes / (1 << 20):,.0f} MB) exceeds the dense-read limit of "
            f"{limit / (1 << 20):,.0f} MB; this view reads the cache as packed blocks instead."
        )


def block_rows(cols: int, itemsize: int = 1, cap: int = 4096) -> int:
    """Rows per dense block of ``cols`` columns that stays within the limit (at least 1).

    Parameters
    ----------
    cols : int
        Columns of the block.
    itemsize : int
        Bytes per entry.
    cap : int
        The most rows returned (also the answer when there is no limit).

    Returns
    -------
    int
        Rows per block.
    """
    if _limit is None:
        return cap
    return int(max(1, min(cap, _limit // max(1, int(cols) * int(itemsize)))))
