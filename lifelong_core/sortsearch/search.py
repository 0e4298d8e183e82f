"""Search: choose n' sorted positions, find the threshold, extrapolate to n (Prabhu et al., 2024, §3.2).

Positions are indices into the *sorted* order (0 = easiest); ``order[positions]`` are the
column numbers to evaluate.

Two threshold rules turn the n' observations at sorted positions ``p`` into a threshold
``t`` in ``[0, n]`` (the first ``t`` sorted samples are predicted correct):

``reference``
    The published code: ``i* = argmax(cumsum(2 a' - 1))`` (``np.argmax``: first maximum)
    and ``t = p[i*]``. The argmax sample itself is predicted wrong, and the empty prefix
    is never chosen, so even at ``n' = n`` the rule lands one position short of the
    optimum (Theorem 3.1) whenever the optimum is not empty.
``midpoint`` (the default)
    DP-search over the n' observations with the empty prefix allowed (Theorem 3.1 applied
    to ``a'``): ``j*`` = smallest maximiser of the running sum ``S_j``, ``S_0 = 0``, so
    the first ``j*`` sampled samples are included. The boundary is placed midway between
    the last included sampled position and the next one (with virtual positions ``-1``
    and ``n`` at the ends): ``t = (p[j*-1] + 1 + p[j*]) // 2``. Each sampled position
    stands for the stretch of the order around it, so the unobserved samples between two
    observations are split evenly between their neighbours. On the uniform grid this is
    the paper's extrapolation "threshold as a fraction of n', transferred to n"
    (``t ~ n j*/n'``); at ``n' = n`` it is exactly the DP-search optimum, so the
    epistemic error of §4.5 vanishes there.
"""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError

SAMPLING = ("uniform", "random", "reference", "listing")
RULES = ("midpoint", "reference")
DEFAULT_RULE = "midpoint"


def check_budget(n: int, budget: int, what: str = "budget") -> None:
    """Refuse a budget that is not a whole number between 1 and ``n``.

    Parameters
    ----------
    n : int
        Samples.
    budget : int
        The budget n'.
    what : str
        How the message names the budget.

    Raises
    ------
    InputError
        If ``budget`` is not a whole number in [1, n].
    """
    if not isinstance(budget, (int, np.integer)) or isinstance(budget, bool):
        raise InputError(f"{what} {budget!r} is not a whole number.")
    if not 1 <= budget <= n:
        raise InputError(f"{what} {budget} must be between 1 and the number of samples ({n}).")


def uniform_positions(n: int, k: int) -> np.ndarray:
    """The reference code's uniform grid: exactly ``k`` sorted positions in ``[0, n)``
    (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.2,
    as the published code samples).

    ``step = n // k``; ``offset = step // 2`` when ``k * step == n`` (centre of each
    stratum), otherwise ``offset = n - k * step`` (the remainder is skipped at the easy end);
    positions ``offset, offset + step, ...``. Kept as ``reference`` sampling so
    ``--method reference`` equals the published code; whenever ``k`` does not divide ``n``
    all ``k`` positions crowd into the hard end (the first ``n - k * step`` samples are never
    sampled), which :func:`stratum_positions` avoids.

    Parameters
    ----------
    n : int
        Samples.
    k : int
        The budget.

    Returns
    -------
    numpy.ndarray
        int64, ascending.
    """
    check_budget(n, k)
    step = n // k
    offset = step // 2 if k * step == n else n - k * step
    return offset + step * np.arange(k, dtype=np.int64)


def stratum_positions(n: int, k: int) -> np.ndarray:
    """``uniform`` sampling: the centre of each of ``k`` equal strata of ``[0, n)``.

    Stratum ``i`` holds the whole positions ``[lo_i, lo_{i+1})`` with
    ``lo_i = ceil(i n / k)`` (every stratum holds one or two sizes, ``floor(n / k)`` or
    ``ceil(n / k)``, and none is empty as ``k <= n``); its centre is
    ``lo_i + (lo_{i+1} - lo_i) // 2``. So there is exactly one position per stratum, the
    first within half a stratum of the easy end and the last within half a stratum of the
    hard end, for every ``n`` and ``k <= n``.
    This is the paper's "sample uniformly" (Prabhu et al. 2024, "Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress", §3.2 and §4.4) over the whole order; when
    ``k`` divides ``n`` it equals the reference grid.
    """
    check_budget(n, k)
    lo = (np.arange(k + 1, dtype=np.int64) * n + k - 1) // k
    return lo[:-1] + (lo[1:] - lo[:-1]) // 2


def random_positions(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` distinct sorted positions drawn uniformly without replacement.

    Parameters
    ----------
    n : int
        Samples.
    k : int
        The budget.
    rng : numpy.random.Generator
        The generator drawn from.

    Returns
    -------
    numpy.ndarray
        int64, ascending.
    """
    check_budget(n, k)
    return np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)


def listing_positions(n: int, k: int) -> np.ndarray:
    """``listing`` sampling: the grid exactly as printed in Listing 1 of Prabhu et al.
    (2024), "Efficient Lifelong Model Evaluation in an Era of Rapid Progress", Appendix D
    (``uniform_sampling``): ``np.arange(0, n, n // k)[1:]``.

    Kept as printed, so the paper's code can be compared with the rest: it is not always
    ``k`` positions. With ``step = n // k`` it has ``ceil(n / step) - 1`` of them: ``k - 1``
    when ``k`` divides ``n`` (position 0 is dropped and nothing replaces it), more than
    ``k`` when the remainder ``n - k * step`` holds more than a step (``n = 10,700``,
    ``k = 1,024``: step 10, 1,069 positions), and none at ``k = 1``, which is refused.
    Position 0 (the easiest sample) is never evaluated.
    """
    check_budget(n, k)
    pos = np.arange(0, n, n // k, dtype=np.int64)[1:]
    if len(pos) == 0:
        raise InputError(
            f"the listing's grid arange(0, n, n // k)[1:] holds no position for budget {k} of "
            f"{n} samples; use a budget of at least 2.",
            param="budgets",
        )
    return pos


def resolve_sampling(sampling: str | None, rule: str) -> str:
    """The sampling a caller meant.

    Parameters
    ----------
    sampling : str or None
        A sampling of :data:`SAMPLING`; None is ``reference`` for the ``reference`` rule (so
        that mode is the published code end to end: tie order, grid and rule) and
        ``uniform`` (stratum centres) for everything else.
    rule : str
        The threshold rule.

    Returns
    -------
    str

    Raises
    ------
    InputError
        For an unknown sampling.
    """
    if sampling is None:
        return "reference" if rule == "reference" else "uniform"
    if sampling not in SAMPLING:
        raise InputError(f"unknown sampling {sampling!r}; use one of {', '.join(SAMPLING)}.")
    return sampling


def positions_for(sampling: str, n: int, k: int, rng: np.random.Generator | None) -> np.ndarray:
    """The ``k`` sorted positions a sampling evaluates (Prabhu et al. (2024), *Efficient Lifelong
    Model Evaluation in an Era of Rapid Progress*, §3.2).

    Parameters
    ----------
    sampling : str
        ``uniform`` (stratum centres), ``reference`` (the published grid), ``listing``
        (Listing 1's grid) or ``random``.
    n : int
        Samples.
    k : int
        The budget.
    rng : numpy.random.Generator or None
        For ``random``.

    Returns
    -------
    numpy.ndarray
        int64, ascending.

    Raises
    ------
    InputError
        For an unknown sampling, random sampling without ``rng``, or a budget Listing 1's
        grid holds no position for.
    """
    if sampling == "uniform":
        return stratum_positions(n, k)
    if sampling == "reference":
        return uniform_positions(n, k)
    if sampling == "listing":
        return listing_positions(n, k)
    if sampling == "random":
        if rng is None:
            raise InputError("random sampling needs a random generator (pass a seed).")
        return random_positions(n, k, rng)
    raise InputError(f"unknown sampling {sampling!r}; use one of {', '.join(SAMPLING)}.")


def dp_search(y: np.ndarray) -> int:
    """DP-Search, exact and O(n) (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress*, §3.1.2, Theorem 3.1, Listing 1 ``dp_search``).

    Unlike the listing it returns a length, not ``argmax / len``, and allows the empty
    prefix.

    Parameters
    ----------
    y : numpy.ndarray
        A 0/1 row in Sort order.

    Returns
    -------
    int
        The prefix length ``t`` in ``[0, len(y)]`` minimising ``||y - [1_t, 0_{n-t}]||_1``;
        the smallest ``t`` among ties.
    """
    y = np.asarray(y)
    score = np.concatenate([[0], np.cumsum(2 * y.astype(np.int64) - 1)])
    return int(np.argmax(score))


def rule_thresholds(rule: str, positions: np.ndarray, observed: np.ndarray, n: int) -> np.ndarray:
    """Thresholds of a rule for observations at sorted positions (Prabhu et al. (2024), *Efficient
    Lifelong Model Evaluation in an Era of Rapid Progress*, §3.2; the rules are in
    the module docstring).

    Parameters
    ----------
    rule : str
        ``midpoint`` or ``reference``.
    positions : numpy.ndarray
        Sorted positions, ascending.
    observed : numpy.ndarray
        (rows, k) 0/1 in the order of ``positions``.
    n : int
        Samples.

    Returns
    -------
    numpy.ndarray
        int64 thresholds in ``[0, n]``, one per row.

    Raises
    ------
    InputError
        For an unknown rule.
    """
    obs = np.atleast_2d(observed)
    rows, k = obs.shape
    running = np.empty((rows, k + 1), dtype=np.int32)
    running[:, 0] = 0
    np.cumsum(obs, axis=1, dtype=np.int32, out=running[:, 1:])
    running[:, 1:] *= 2
    running[:, 1:] -= np.arange(1, k + 1, dtype=np.int32)
    if rule == "reference":
        return positions[np.argmax(running[:, 1:], axis=1)]
    if rule == "midpoint":
        j = np.argmax(running, axis=1)
        ext = np.concatenate([[-1], positions, [n]])
        return (ext[j] + 1 + ext[j + 1]) // 2
    raise InputError(f"unknown threshold rule {rule!r}; use one of {', '.join(RULES)}.")


def _byte_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each byte of packed observations (little bit order), with ``S_j = sum(2 a - 1)``
    over its first j = 1..8 bits: the byte's total ``S_8``, its maximum less that total
    (``max_j S_j - S_8``), and the first j - 1 reaching the maximum."""
    bits = (np.arange(256)[:, None] >> np.arange(8)) & 1
    run = np.cumsum(2 * bits - 1, axis=1)
    total = run[:, -1]
    return (
        total.astype(np.int32),
        (run.max(axis=1) - total).astype(np.int32),
        run.argmax(axis=1).astype(np.int64),
    )


_TOTAL, _BEST_LESS_TOTAL, _ARG = _byte_tables()


def rule_thresholds_packed(
    rule: str, positions: np.ndarray, packed: np.ndarray, n: int, block: int = 1 << 13
) -> np.ndarray:
    """:func:`rule_thresholds` on packed observations (``bits.packed_bits_at``), equal to it
    for every input.

    Both rules need the first maximiser of the running sum ``S_j`` (j >= 1) and its value. A
    byte of observations moves ``S`` by a fixed total and reaches its own maximum at a fixed
    bit, so the scan runs over bytes through 256-entry tables: the maximum within byte b is
    ``S`` before it plus the byte's ``best``, and the first byte reaching the row's maximum
    holds the first maximiser. One pass over k/8 bytes instead of k entries, ``block`` bytes
    of prefix sums at a time (bounded memory). Padding bits past k are zero and only lower
    ``S`` after the last observation, so they never maximise.

    Parameters
    ----------
    rule : str
        ``midpoint`` or ``reference``.
    positions : numpy.ndarray
        Sorted positions, ascending.
    packed : numpy.ndarray
        uint8 (rows, ceil(k/8)) packed observations.
    n : int
        Samples.
    block : int
        Bytes of prefix sums at a time.

    Returns
    -------
    numpy.ndarray
        int64 thresholds in ``[0, n]``, one per row.

    Raises
    ------
    InputError
        For an unknown rule.
    """
    positions = np.asarray(positions, dtype=np.int64)
    k = len(positions)
    P = np.atleast_2d(packed)
    rows = P.shape[0]
    if rule not in RULES:
        raise InputError(f"unknown threshold rule {rule!r}; use one of {', '.join(RULES)}.")
    if k == 0 or rows == 0:
        return rule_thresholds(rule, positions, np.zeros((rows, k), dtype=np.uint8), n)
    r = np.arange(rows)
    carry = np.zeros(rows, dtype=np.int32)
    best = np.full(rows, np.iinfo(np.int32).min, dtype=np.int32)
    at_byte = np.zeros(rows, dtype=np.int64)
    for a in range(0, P.shape[1], block):
        B = P[:, a : a + block]
        peak = np.cumsum(_TOTAL[B], axis=1, dtype=np.int32)  # S after each byte
        peak += carry[:, None]
        carry = peak[:, -1].copy()
        peak += _BEST_LESS_TOTAL[B]  # the byte's maximum
        j = np.argmax(peak, axis=1)
        v = peak[r, j]
        better = v > best
        best[better] = v[better]
        at_byte[better] = a + j[better]
    first = 8 * at_byte + _ARG[P[r, at_byte]]  # index of the first maximiser, 0-based
    if rule == "reference":
        return positions[first]
    j = np.where(best > 0, first + 1, 0)  # S_0 = 0 wins ties: the empty prefix comes first
    ext = np.concatenate([[-1], positions, [n]])
    return (ext[j] + 1 + ext[j + 1]) // 2


def rule_candidates(rule: str, positions: np.ndarray, n: int) -> np.ndarray:
    """Every threshold ``rule`` can return for these positions (for the sweep's cuts)."""
    if rule == "reference":
        return positions
    if rule == "midpoint":
        ext = np.concatenate([[-1], positions, [n]])
        return (ext[:-1] + 1 + ext[1:]) // 2
    raise InputError(f"unknown threshold rule {rule!r}; use one of {', '.join(RULES)}.")


def extrapolate(rule: str, positions: np.ndarray, observed: np.ndarray, n: int) -> int:
    """Threshold in ``[0, n]`` for one model from its observations at ``positions``."""
    return int(rule_thresholds(rule, np.asarray(positions, dtype=np.int64), observed, n)[0])
