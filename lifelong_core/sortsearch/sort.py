"""Sort: order samples from easy to hard (Prabhu et al., 2024, §3.1; Appendix D, Listing 1).

Every function returns a permutation ``order`` (``np.int64``) of column numbers, easiest
first, so ``A[:, order]`` is the paper's ``A P*``.

Tie rules (many columns share a sum, by the pigeonhole argument of §3.1):

- ``ties="stable"`` (default): equal keys keep their original column order, lowest column
  number first. Deterministic on every platform and the rule that makes serial additions
  (Appendix G) leave the order unchanged.
- ``ties="reference"``: ``np.flip(np.argsort(sums))`` exactly as Listing 1 writes it, with
  the sums in the dtype ``A.sum(axis=0)`` gives for a uint8 matrix (uint64). NumPy's
  default sort is not stable and the flip reverses whatever order it leaves ties in, so
  this is only useful to reproduce the published code bit for bit (``--method
  reference``).
"""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError

TIES = ("stable", "reference")


# Integer keys spanning fewer values than this are sorted as uint16 (NumPy's stable sort of
# 16-bit integers is a radix sort, several times faster than its merge sort of int64).
_RADIX_SPAN = 1 << 16


def _order_desc(keys: np.ndarray, ties: str) -> np.ndarray:
    if ties == "stable":
        n = len(keys)
        if keys.dtype.kind in "iu" and n:
            top, low = int(keys.max()), int(keys.min())
            if top - low < _RADIX_SPAN:
                # top - key ascending is key descending; a stable sort keeps equal keys in
                # ascending column order: the same permutation as the general path below.
                flipped = (keys.dtype.type(top) - keys).astype(np.uint16)
                return np.argsort(flipped, kind="stable").astype(np.int64)
        # Negating would overflow unsigned keys; a stable sort of the reversed array
        # reversed back keeps ties in ascending column order.
        rev = np.argsort(keys[::-1], kind="stable")[::-1]
        return (n - 1 - rev).astype(np.int64)
    if ties == "reference":
        if keys.dtype.kind in "iu":
            keys = keys.astype(np.uint64)
        return np.flip(np.argsort(keys)).astype(np.int64)
    raise InputError(f"unknown tie rule {ties!r}; use one of {', '.join(TIES)}.")


def column_sums(block: np.ndarray) -> np.ndarray:
    """Number of ones per column of a dense 0/1 block: the Sort sums of Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.1.

    Parameters
    ----------
    block : numpy.ndarray
        (rows, n) 0/1.

    Returns
    -------
    numpy.ndarray
        int64 (n,).
    """
    # uint16 accumulators cannot overflow below 65,536 rows and are ~3x faster to add.
    acc = np.uint16 if block.shape[0] < 65536 else np.int64
    return block.sum(axis=0, dtype=acc).astype(np.int64)


def order_from_sums(sums: np.ndarray, ties: str = "stable") -> np.ndarray:
    """Easy -> hard permutation from per-sample sums, larger sum = easier (Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.1).

    Parameters
    ----------
    sums : numpy.ndarray
        One sum per sample.
    ties : {"stable", "reference"}
        Tie rule of the module docstring: equal keys in column order, or Listing 1's
        ``np.flip(np.argsort(...))``.

    Returns
    -------
    numpy.ndarray
        int64 permutation of the columns.
    """
    return _order_desc(np.asarray(sums), ties)


def sort_by_sum(A: np.ndarray, ties: str = "stable") -> np.ndarray:
    """Sorting by Sum (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §3.1.1 method (1); Appendix D, Listing 1 ``sort_by_sum``).

    Parameters
    ----------
    A : numpy.ndarray
        (models, samples) 0/1.
    ties : {"stable", "reference"}
        Tie rule of the module docstring: equal keys in column order, or Listing 1's
        ``np.flip(np.argsort(...))``.

    Returns
    -------
    numpy.ndarray
        int64 permutation of the columns, easiest first.
    """
    return order_from_sums(column_sums(A), ties)


def sort_by_confidence(C: np.ndarray, ties: str = "stable") -> np.ndarray:
    """Sorting by Confidence Sum (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress*, §3.1.1 method (2)).

    Columns are ordered by their sum, largest first, exactly like Sorting by Sum. Sums are
    taken in float64 so the order does not depend on float32 rounding of long sums.

    Parameters
    ----------
    C : numpy.ndarray
        Confidence of the *true* class per (model, sample), in [0, 1].
    ties : {"stable", "reference"}
        Tie rule of the module docstring: equal keys in column order, or Listing 1's
        ``np.flip(np.argsort(...))``.

    Returns
    -------
    numpy.ndarray
        int64 permutation of the columns, easiest first.
    """
    C = np.asarray(C)
    return _order_desc(C.sum(axis=0, dtype=np.float64), ties)


def best_prefix_counts(
    sorted_rows: np.ndarray, chunk_rows: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """Optimal threshold of each row of ``A P`` and the ones before it (Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, Theorem 3.1).

    Predicting the first ``t`` sorted samples correct minimises the Hamming error; the
    smallest such ``t`` is taken on ties (the empty prefix included). Rows are processed in
    chunks so the int32 running sums never exceed ``chunk_rows x (n + 1)``.

    Parameters
    ----------
    sorted_rows : numpy.ndarray
        (rows, n) 0/1 rows in Sort order.
    chunk_rows : int
        Rows per chunk.

    Returns
    -------
    tuple of numpy.ndarray
        ``(t, c)``, int64: the thresholds and the number of ones among the first ``t``.
    """
    rows, n = sorted_rows.shape
    t_out = np.empty(rows, dtype=np.int64)
    c_out = np.empty(rows, dtype=np.int64)
    ramp = np.arange(1, n + 1, dtype=np.int32)
    for s in range(0, rows, chunk_rows):
        part = sorted_rows[s : s + chunk_rows]
        score = np.empty((len(part), n + 1), dtype=np.int32)
        score[:, 0] = 0
        np.cumsum(part, axis=1, dtype=np.int32, out=score[:, 1:])
        score[:, 1:] *= 2
        score[:, 1:] -= ramp
        t = np.argmax(score, axis=1)
        best = score[np.arange(len(part)), t].astype(np.int64)
        t_out[s : s + len(part)] = t
        # score = 2 c - t at the optimum.
        c_out[s : s + len(part)] = (best + t) // 2
    return t_out, c_out


def best_prefix(sorted_rows: np.ndarray) -> np.ndarray:
    """Optimal thresholds only; see :func:`best_prefix_counts`."""
    return best_prefix_counts(sorted_rows)[0]


def sort_recursive(A: np.ndarray, depth: int = 2) -> np.ndarray:
    """Recursive Sorting by Sum (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an
    Era of Rapid Progress*, §3.1.1 method (3); Listing 1 ``two_stage_sort_by_sum``).

    Level 1 is Sorting by Sum (stable ties). Each further level runs DP-search on every row
    of ``A P`` and, inside every group of columns still tied on all keys so far, re-orders
    the columns by their sum over the models whose optimal threshold falls strictly inside
    that group: only those models' errors depend on the order within the group ("ties are
    broken by preferring the model which minimizes error the most").

    Departures from the listing, which does not run as printed (``sum_bins`` and the per-row
    threshold are undefined there): thresholds are the exact DP optimum per row; a model
    whose threshold is on a group edge is not used for that group (re-ordering cannot change
    its error); groups with no such model keep their order; ties at every level are stable.

    Parameters
    ----------
    A : numpy.ndarray
        (models, samples) 0/1.
    depth : int
        Levels; ``depth=1`` is Sorting by Sum.

    Returns
    -------
    numpy.ndarray
        int64 permutation of the columns, easiest first.

    Raises
    ------
    InputError
        If ``depth`` is out of range.
    """
    if depth < 1:
        raise InputError(f"recursion depth must be at least 1, got {depth}.")
    A = np.asarray(A)
    order = sort_by_sum(A)
    # key_id[j]: id of the tie group of sorted position j (equal ids = still tied).
    sums = column_sums(A)[order]
    key_id = np.concatenate([[0], np.cumsum(sums[1:] != sums[:-1])]).astype(np.int64)
    for _ in range(depth - 1):
        sorted_A = A[:, order]
        t = best_prefix(sorted_A)
        starts = np.flatnonzero(np.concatenate([[True], key_id[1:] != key_id[:-1]]))
        ends = np.append(starts[1:], len(order))
        # Group containing the boundary t (between positions t-1 and t), if strictly inside.
        g = np.searchsorted(starts, t, side="right") - 1
        inside = (t > 0) & (t < A.shape[1]) & (starts[np.clip(g, 0, None)] < t)
        new_order = order.copy()
        sub_key = np.zeros(len(order), dtype=np.int64)
        for grp in np.unique(g[inside]):
            s, e = starts[grp], ends[grp]
            if e - s < 2:
                continue
            models = np.flatnonzero(inside & (g == grp))
            within = sorted_A[models, s:e].sum(axis=0, dtype=np.int64)
            perm = _order_desc(within, "stable")
            new_order[s:e] = order[s:e][perm]
            sub_key[s:e] = within[perm]
        order = new_order
        pair_changed = (key_id[1:] != key_id[:-1]) | (sub_key[1:] != sub_key[:-1])
        key_id = np.concatenate([[0], np.cumsum(pair_changed)]).astype(np.int64)
    return order


def sort_models(A: np.ndarray, ties: str = "stable") -> np.ndarray:
    """Order models best first: Sorting by Sum on ``A.T`` (Prabhu et al. (2024), *Efficient Lifelong
    Model Evaluation in an Era of Rapid Progress*, §3.3, for insert_D).

    Parameters
    ----------
    A : numpy.ndarray
        (models, samples) 0/1.
    ties : {"stable", "reference"}
        Tie rule of the module docstring: equal keys in column order, or Listing 1's
        ``np.flip(np.argsort(...))``.

    Returns
    -------
    numpy.ndarray
        int64 permutation of the rows, most accurate first.
    """
    return order_from_sums(np.asarray(A).sum(axis=1, dtype=np.int64), ties)


def choose_sort_rows(m: int, k: int, seed: int) -> np.ndarray:
    """The rule of ``sweep --sort-models K --seed S``: K distinct rows drawn uniformly, sorted.

    ``np.random.default_rng(seed).choice(m, k, replace=False)``, then sorted ascending;
    stated exactly so other implementations (the naive benchmark) can reproduce it.

    Parameters
    ----------
    m : int
        Rows to draw from.
    k : int
        Rows drawn.
    seed : int
        The seed.

    Returns
    -------
    numpy.ndarray
        int64, ascending.

    Raises
    ------
    InputError
        If ``k`` is not in [1, m] or the seed is out of range.
    """
    if m < 2:
        raise InputError(
            f"the matrix has {m} row{'s' if m != 1 else ''}; a sweep needs at least 2 models, at least one to Sort on and "
            "one to evaluate.",
            param="sort_models",
        )
    if not 1 <= k < m:
        raise InputError(
            f"the number of Sort models, {k}, must be between 1 and {m - 1} (the matrix has {m} rows and at "
            "least one must be left to evaluate).",
            param="sort_models",
        )
    return np.sort(np.random.default_rng(seed).choice(m, k, replace=False)).astype(np.int64)


SORTS = ("sum", "confidence", "recursive")


def compute_order(
    A_sort: np.ndarray,
    sort: str = "sum",
    confidence: np.ndarray | None = None,
    ties: str = "stable",
    depth: int = 2,
) -> np.ndarray:
    """The Sort step by name (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era
    of Rapid Progress*, §3.1).

    Parameters
    ----------
    A_sort : numpy.ndarray
        (models, samples) 0/1 Sort set.
    sort : {"sum", "confidence", "recursive"}
        The method of §3.1.1.
    confidence : numpy.ndarray, optional
        Confidence of the true class, shaped like ``A_sort``; needed for ``confidence``.
    ties : {"stable", "reference"}
        Tie rule of the module docstring: equal keys in column order, or Listing 1's
        ``np.flip(np.argsort(...))``.
    depth : int
        Levels of ``recursive``.

    Returns
    -------
    numpy.ndarray
        int64 permutation of the columns, easiest first.

    Raises
    ------
    InputError
        For an unknown sort, or ``confidence`` without a confidence matrix.
    """
    if sort == "sum":
        return sort_by_sum(A_sort, ties)
    if sort == "confidence":
        if confidence is None:
            raise InputError("Sorting by confidence needs a confidence matrix.", param="confidence")
        return sort_by_confidence(confidence, ties)
    if sort == "recursive":
        return sort_recursive(A_sort, depth)
    raise InputError(f"unknown sort {sort!r}; use one of {', '.join(SORTS)}.")
