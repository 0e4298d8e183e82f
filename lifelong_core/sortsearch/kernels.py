"""The sweep's inner seam: boundary counts (docs/development/contracts.md).

Every threshold metric of a model needs only the number of ones of its row, in sorted
order, before a finite set of cut positions known before touching the data. The dense
version here works on uint8 row blocks; :class:`lifelong_core.bits.SortedCounter` is the
packed-bit twin and returns identical numbers. The sweep's kernels
(:mod:`lifelong_core.sweeping`) are built on them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from lifelong_core.sortsearch.search import RULES, positions_for, rule_candidates


def boundary_counts(block: np.ndarray, order: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Prefix counts of rows in Sort order at the cuts: the seam every threshold metric needs
    (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3).

    One gather of the block into sorted order, one int32 running sum, one gather at the
    cuts: O(rows * n) time and O(rows * n) int32 memory for the block. (A ``reduceat`` over
    the segments between cuts avoids the full running sum but measured ~3x slower.)

    Parameters
    ----------
    block : numpy.ndarray
        uint8 (rows, n) 0/1 rows.
    order : numpy.ndarray
        The Sort order, a permutation of ``range(n)``.
    cuts : numpy.ndarray
        Sorted cut positions in ``[0, n]``.

    Returns
    -------
    numpy.ndarray
        int32 (rows, len(cuts)): ones in ``block[:, order][:, :cut]`` for every cut.
    """
    return Scratch().boundary_counts(block, order, cuts)


class Scratch:
    """Reusable sorted-block and running-sum buffers for one sweep.

    Writing into preallocated buffers (``out=``) skips the allocation and first-touch
    page faults of two block-sized arrays per block, which measured ~40% of the
    running-sum time.
    """

    def __init__(self) -> None:
        # One pair of buffers per thread: the sweep may process blocks concurrently.
        self._local = threading.local()

    def _buffers(self, rows: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        loc = self._local
        if (
            getattr(loc, "sorted", None) is None
            or loc.sorted.shape[0] < rows
            or loc.sorted.shape[1] != n
        ):
            loc.sorted = np.empty((rows, n), dtype=np.uint8)
            loc.running = np.empty((rows, n), dtype=np.int32)
        return loc.sorted[:rows], loc.running[:rows]

    def boundary_counts(self, block: np.ndarray, order: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        """:func:`boundary_counts` in this thread's reused buffers.

        Parameters
        ----------
        block : numpy.ndarray
            uint8 (rows, n) 0/1 rows.
        order : numpy.ndarray
            The Sort order, a permutation of ``range(n)``.
        cuts : numpy.ndarray
            Sorted cut positions in ``[0, n]``.

        Returns
        -------
        numpy.ndarray
            int32 (rows, len(cuts)): ones in ``block[:, order][:, :cut]`` for every cut.
        """
        return self.sorted_counts(block, order, cuts)[0]

    def sorted_counts(
        self, block: np.ndarray, order: np.ndarray, cuts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`boundary_counts` and the block in Sort order they were counted from.

        Parameters
        ----------
        block : numpy.ndarray
            uint8 (rows, n) 0/1 rows.
        order : numpy.ndarray
            The Sort order, a permutation of ``range(n)``.
        cuts : numpy.ndarray
            Sorted cut positions in ``[0, n]``.

        Returns
        -------
        tuple of numpy.ndarray
            The int32 (rows, len(cuts)) counts, and ``block[:, order]`` as uint8 (rows, n):
            this thread's buffer, valid until its next call (a caller reads the
            observations at sorted positions from it without a second gather).
        """
        n = len(order)
        cuts = np.asarray(cuts, dtype=np.int64)
        rows = block.shape[0]
        out = np.zeros((rows, len(cuts)), dtype=np.int32)
        sorted_block, running = self._buffers(rows, n)
        if rows == 0:
            return out, sorted_block
        np.take(block, order, axis=1, out=sorted_block)
        np.cumsum(sorted_block, axis=1, dtype=np.int32, out=running)
        # cuts are sorted, so only a leading cut at 0 (count 0) needs no lookup.
        first = int(np.searchsorted(cuts, 1))
        out[:, first:] = np.take(running, cuts[first:] - 1, axis=1)
        return out, sorted_block


def default_block_rows(n: int, target_bytes: int = 4 << 20) -> int:
    """Rows per block so that one sorted uint8 copy stays near ``target_bytes``.

    Its int32 running sum is four times that; keeping it under glibc's 32 MB dynamic mmap
    threshold lets the allocator reuse the memory block after block instead of mapping (and
    page-faulting) fresh pages each time.

    Parameters
    ----------
    n : int
        Samples per row.
    target_bytes : int
        The size aimed at.

    Returns
    -------
    int
        Between 1 and 4096.
    """
    return int(max(1, min(4096, target_bytes // max(n, 1))))


@dataclass(frozen=True)
class SweepPlan:
    """Sampled positions per budget and the union of every cut the metrics need.

    Attributes
    ----------
    n : int
        Samples.
    budgets : tuple of int
        Budgets n'.
    positions : tuple of numpy.ndarray
        Sorted positions sampled at each budget.
    cuts : numpy.ndarray
        Sorted unique int64 cut positions in ``[0, n]``.
    """

    n: int
    budgets: tuple[int, ...]
    positions: tuple[np.ndarray, ...]
    cuts: np.ndarray

    def index(self, values: np.ndarray) -> np.ndarray:
        """Column of ``counts`` holding the prefix count at each of ``values``.

        Parameters
        ----------
        values : numpy.ndarray
            Positions, all among ``cuts``.

        Returns
        -------
        numpy.ndarray
        """
        return np.searchsorted(self.cuts, values)


def plan_sweep(
    n: int,
    budgets: tuple[int, ...],
    sampling: str,
    rng: np.random.Generator | None,
    rules: tuple[str, ...] = RULES,
) -> SweepPlan:
    """Positions for every budget and the cuts the metrics need (Prabhu et al. (2024), *Efficient
    Lifelong Model Evaluation in an Era of Rapid Progress*, §3.2).

    Cuts hold every sampled position ``p`` and ``p + 1`` (the observation is
    ``count(p + 1) - count(p)``), every threshold the ``rules`` can return, and ``n`` (the row
    total).

    Parameters
    ----------
    n : int
        Samples.
    budgets : tuple of int
        Budgets n'.
    sampling : str
        A sampling of :data:`~lifelong_core.sortsearch.search.SAMPLING`.
    rng : numpy.random.Generator or None
        Draws random positions, in budget order (needed for ``random`` only).
    rules : tuple of str
        Threshold rules whose candidates become cuts.

    Returns
    -------
    SweepPlan

    Raises
    ------
    InputError
        For an unknown sampling, or random sampling without ``rng``.
    """
    return plan_from_positions(
        n, budgets, tuple(positions_for(sampling, n, b, rng) for b in budgets), rules
    )


def plan_from_positions(
    n: int,
    budgets: tuple[int, ...],
    positions: tuple[np.ndarray, ...],
    rules: tuple[str, ...] = RULES,
) -> SweepPlan:
    """:func:`plan_sweep` for positions already drawn.

    Parameters
    ----------
    n : int
        Samples.
    budgets : tuple of int
        Budgets n'.
    positions : tuple of numpy.ndarray
        One array of sorted positions per budget.
    rules : tuple of str
        Threshold rules whose candidates become cuts.

    Returns
    -------
    SweepPlan
    """
    parts = [np.array([0, n], dtype=np.int64)]
    for p in positions:
        parts += [p, p + 1] + [rule_candidates(r, p, n) for r in rules]
    return SweepPlan(n, tuple(budgets), positions, np.unique(np.concatenate(parts)))


def sweep_cuts(
    n: int, budgets: tuple[int, ...], sampling: str, rng: np.random.Generator | None
) -> np.ndarray:
    """The cut positions of a sweep: sorted unique int64 in ``[0, n]``.

    Parameters
    ----------
    n : int
        Samples.
    budgets : tuple of int
        Budgets n'.
    sampling : str
        The sampling.
    rng : numpy.random.Generator or None
        For random sampling.

    Returns
    -------
    numpy.ndarray
    """
    return plan_sweep(n, budgets, sampling, rng).cuts
