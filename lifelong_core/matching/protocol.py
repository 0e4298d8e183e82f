"""Matched accuracy on two similar-but-non-identical test sets (Anzaku et al., §2, Alg. 1 and 2).

For one model with outputs ``(y, y_hat, p_hat)`` on a source and a target dataset,
Algorithm 1 walks the target datapoints *in turn* (``for i <- 1, N``, in the order given;
nothing is shuffled) and, for each, picks uniformly at random one still-available source
datapoint with the same predicted label and ``p_t in [p_s - eps, p_s + eps]``; the pick is
removed from the source (selection without replacement). Algorithm 2 (Appendix A.3) is
the same with the predicted-label condition dropped. A target datapoint without any
candidate goes to the unmatched set. §2.3 then reports accuracy on all of each dataset,
*matched accuracy* on the two matched subsets, the fraction of target datapoints left
unmatched and (§4, Fig. 5) the accuracy on the unmatched ones; §4 averages over 10 runs.

Implementation (same outcome distribution as the plain O(N*M) transcription in
:mod:`lifelong_core.matching.reference`, in O((N + M) log N) per run):

* the source is sorted once by (group, p) where the group is the predicted label for
  Algorithm 1 and a single group for Algorithm 2, so every candidate set is one
  contiguous range of sorted positions. The range ends are found by binary search on
  ``p_s + eps`` and ``p_s - eps`` with the very comparisons the paper writes
  (``p_s - eps <= p_t`` and ``p_t <= p_s + eps``), so floating-point ties at the window
  edges are decided exactly as in the transcription;
* a Fenwick tree over sorted positions counts the still-available ones: the number of
  candidates in a range is two prefix sums, a uniform pick is an order-statistic descent
  to the k-th available position, and removal is a point update, each O(log N). A cheap
  first try (one random position of the window, kept if still available) settles most
  draws before the tree is queried; see :func:`_fenwick_run` for why the pick stays
  exactly uniform;
* many passes at once (several models on the same two sets, or many runs) go through
  :func:`_stepped_runs`, which makes the very picks of the Fenwick tree from the same
  draws but advances every pass by one target per NumPy step, counting a window's
  available positions by a cumulative sum when its first try fails. It costs one
  Python step per target instead of one per target, model and run; the Fenwick tree stays
  for few passes and for windows too wide to sum over (:func:`_run_passes` chooses, and
  the tests hold the two to identical picks).

Deliberate departures: none in what is computed. Where nothing is matched (or nothing is
unmatched) the corresponding accuracy is undefined and reported as NaN per run; means
over runs skip undefined runs and are NaN only if every run is undefined (the ``match``
command writes that as JSON ``null``). Source and target are taken as given: the paper
calls the larger dataset the source "for convenience" (§2.2) but the protocol does not
need it, so nothing is swapped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.matching.data import Predictions

Criterion = Literal["label-prob", "prob"]
CRITERIA: tuple[str, ...] = ("label-prob", "prob")
_CRITERION: dict[str, Criterion] = {"label-prob": "label-prob", "prob": "prob"}

RUN_COLUMNS = (
    "run",
    "matched_acc_source",
    "matched_acc_target",
    "fraction_unmatched",
    "acc_unmatched",
    "n_matched",
)


@dataclass(frozen=True, eq=False)
class MatchRun:
    """One run of Algorithm 1 or 2 of Anzaku et al. (2022), *A Principled Evaluation Protocol for
    Comparative Investigation of the Effectiveness of DNN Classification Models on
    Similar-but-non-identical Datasets*: indices into the source and target datasets.

    Attributes
    ----------
    src_matched, tgt_matched : numpy.ndarray
        int64; ``src_matched[i]`` was matched to ``tgt_matched[i]``, both in the order the
        target datapoints were processed.
    tgt_unmatched : numpy.ndarray
        int64 target datapoints without a match, in processing order.
    """

    src_matched: np.ndarray  # int64 indices into the source
    tgt_matched: np.ndarray  # int64 indices into the target
    tgt_unmatched: np.ndarray  # int64 indices into the target

    @property
    def n_matched(self) -> int:
        """Number of matched pairs."""
        return int(self.tgt_matched.shape[0])


@dataclass(frozen=True, eq=False)
class MatchSummary:
    """Accuracy, matched accuracy and the unmatched fraction for one model (Anzaku et al. (2022), *A
    Principled Evaluation Protocol for Comparative Investigation of the Effectiveness of DNN
    Classification Models on Similar-but-non-identical Datasets*, §2.3).

    Matched quantities are means over ``runs`` seeded runs (``per_run`` holds each run; it
    is built on request, since a table per model is costly when comparing hundreds).

    Attributes
    ----------
    acc_source, acc_target : float
        Accuracy on all of each set.
    matched_acc_source, matched_acc_target : float
        Accuracy on the matched datapoints of each set (NaN when nothing matched in any run).
    fraction_unmatched : float
        Share of the target left unmatched.
    acc_unmatched : float
        Accuracy on the unmatched target datapoints (NaN when none in any run).
    n_matched : float
        Mean matched pairs per run.
    conf_source, conf_target : float
        Mean confidence on each set.
    n_source, n_target : int
        Datapoints of each set.
    eps : float
        The matching tolerance.
    criterion : str
        ``label-prob`` (Algorithm 1) or ``prob`` (Algorithm 2).
    runs, seed : int
        The runs and their seed.
    per_run_columns : dict
        Column -> one value per run (see ``per_run``).
    matches : tuple of MatchRun
        The runs.
    """

    acc_source: float
    acc_target: float
    matched_acc_source: float
    matched_acc_target: float
    fraction_unmatched: float
    acc_unmatched: float
    n_matched: float
    conf_source: float
    conf_target: float
    n_source: int
    n_target: int
    eps: float
    criterion: str
    runs: int
    seed: int
    per_run_columns: dict  # column -> array, one entry per run (see ``per_run``)
    matches: tuple[MatchRun, ...]

    @property
    def per_run(self) -> pd.DataFrame:
        """One row per run: run, matched accuracies, fraction unmatched, acc. unmatched, n_matched."""
        return pd.DataFrame(self.per_run_columns, columns=list(RUN_COLUMNS))

    def standard_error(self, column: str) -> float:
        """Standard error over runs of a per-run column (NaN runs skipped).

        §4 leaves error bars out because these were negligible; this says how small.

        Parameters
        ----------
        column : str
            A column of ``per_run``.

        Returns
        -------
        float
            NaN below 2 runs.
        """
        values = np.asarray(self.per_run_columns[column], dtype=np.float64)
        values = values[~np.isnan(values)]
        if values.size < 2:
            return float("nan")
        return float(values.std(ddof=1) / np.sqrt(values.size))

    @property
    def acc_diff(self) -> float:
        """Accuracy drop from source to target (the 'accuracy gap' of §4)."""
        return self.acc_source - self.acc_target

    @property
    def matched_acc_diff(self) -> float:
        """Matched-accuracy drop from matched source to matched target."""
        return self.matched_acc_source - self.matched_acc_target

    def to_json_dict(self) -> dict:
        """The ``match.json`` contract (docs/reference/file-formats.md); undefined values become ``None``."""
        keys = (
            "acc_source",
            "acc_target",
            "matched_acc_source",
            "matched_acc_target",
            "fraction_unmatched",
            "acc_unmatched",
            "n_matched",
        )
        out = {}
        for key in keys:
            value = float(getattr(self, key))
            out[key] = None if np.isnan(value) else value
        return out


def check_params(
    eps: float,
    criterion: str,
    runs: int | None = None,
    seed: int | None = None,
    max_runs: int | None = limits.MAX_MATCH_RUNS,
) -> Criterion:
    """Check the parameters of one matching request and return the criterion.

    ``max_runs`` is the bound on one request (the command line, the app, ``compare_models``
    and ``matched_accuracy``); ``match_runs`` itself, the algorithm, takes any number
    (``max_runs=None``: statistical checks of the algorithm draw thousands of runs).

    Parameters
    ----------
    eps : float
        The tolerance, in [0, 1].
    criterion : str
        ``label-prob`` or ``prob``.
    runs : int, optional
        Runs, in [1, ``max_runs``] (not checked when None).
    seed : int, optional
        Seed, by the seed rule of :func:`lifelong_core.limits.check_seed` (not checked when
        None).
    max_runs : int, optional
        The most runs allowed.

    Returns
    -------
    Criterion
        ``criterion`` as the literal type the algorithm takes.

    Raises
    ------
    InputError
        For an epsilon outside [0, 1] or not a finite number, an unknown criterion, runs out
        of range or a seed outside the seed rule.
    """
    # Probabilities differ by at most 1, so a larger epsilon would match every pair.
    limits.check_real(eps, "epsilon", 0.0, 1.0, param="eps")
    crit = _CRITERION.get(criterion) if isinstance(criterion, str) else None
    if crit is None:
        raise InputError(
            f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}.", param="criterion"
        )
    if runs is not None:
        limits.check_count(runs, "the number of runs", 1, max_runs or 2**63, "runs")
    if seed is not None:
        limits.check_seed(seed)
    return crit


# ------------------------------------------------------------------ candidate windows
@dataclass(frozen=True, eq=False)
class _Windows:
    """Source sorted by (group, p); each target's candidates are sorted positions [lo, hi)."""

    order: np.ndarray  # sorted position -> source index
    lo: np.ndarray  # int64, per target
    hi: np.ndarray


def _windows(source: Predictions, target: Predictions, eps: float, criterion: str) -> _Windows:
    if criterion == "label-prob":
        g_src, g_tgt = source.y_pred, target.y_pred
    else:
        g_src = np.zeros(len(source), dtype=np.int64)
        g_tgt = np.zeros(len(target), dtype=np.int64)
    # Stable sort with the source index as last key: a deterministic layout for ties.
    order = np.lexsort((np.arange(len(source)), source.p, g_src))
    gs, ps = g_src[order], source.p[order]
    upper = ps + eps  # non-decreasing within a group, since rounding is monotone
    lower = ps - eps
    lo = np.zeros(len(target), dtype=np.int64)
    hi = np.zeros(len(target), dtype=np.int64)
    tgt_groups, inverse = np.unique(g_tgt, return_inverse=True)
    seg_start = np.searchsorted(gs, tgt_groups, side="left")
    seg_end = np.searchsorted(gs, tgt_groups, side="right")
    # Targets grouped by label once (not one scan of all targets per label).
    by_group = np.argsort(inverse, kind="stable")
    cuts = np.searchsorted(inverse[by_group], np.arange(len(tgt_groups) + 1))
    for k in range(len(tgt_groups)):
        a, b = int(seg_start[k]), int(seg_end[k])
        if a == b:  # no source datapoint with this predicted label: empty window
            continue
        members = by_group[cuts[k] : cuts[k + 1]]
        pt = target.p[members]
        # Candidates: p_t <= p_s + eps (from lo on) and p_s - eps <= p_t (before hi).
        lo[members] = a + np.searchsorted(upper[a:b], pt, side="left")
        hi[members] = a + np.searchsorted(lower[a:b], pt, side="right")
    return _Windows(order=order, lo=lo, hi=hi)


def _fenwick_run(n: int, lo: list, hi: list, u: list, v: list) -> list:
    """One pass of Algorithm 1/2 over the targets in turn; -1 marks 'unmatched'.

    ``n`` available positions 0..n-1; target i may take any available position in
    [lo[i], hi[i]). The pick is uniform over the c available ones in two stages: first
    position ``lo + floor(u[i] * width)`` is tried and kept if still available (each
    available one with probability 1/width); otherwise the floor(v[i] * c)-th available
    one is taken via the Fenwick tree (probability (width - c)/width * 1/c). Together
    that is 1/c for each, exactly RandomSelect; the first stage just skips two prefix
    sums and a descent while windows are still mostly full.
    Pure-Python integers on purpose: each step touches O(log n) single cells, where list
    indexing is several times cheaper than numpy scalar access.
    """
    idx = np.arange(n + 1)
    tree = (idx & -idx).tolist()  # Fenwick tree of an all-ones array, 1-based
    avail = bytearray(b"\x01") * n
    top = 1 << (n.bit_length() - 1) if n else 0
    chosen = [-1] * len(lo)
    for i in range(len(lo)):
        a = lo[i]
        b = hi[i]
        width = b - a
        if width <= 0:
            continue
        pos = a + int(u[i] * width)
        if pos >= b:  # u * width may round up to width
            pos = b - 1
        if not avail[pos]:
            before = 0
            j = a
            while j:
                before += tree[j]
                j &= j - 1
            upto = 0
            j = b
            while j:
                upto += tree[j]
                j &= j - 1
            c = upto - before
            if c == 0:
                continue
            k = int(v[i] * c)
            rem = before + (k if k < c else c - 1)
            # Order-statistic descent: the position holding the (rem+1)-th available one.
            pos = 0
            step = top
            while step:
                nxt = pos + step
                if nxt <= n and tree[nxt] <= rem:
                    pos = nxt
                    rem -= tree[nxt]
                step >>= 1
        avail[pos] = 0
        chosen[i] = pos
        j = pos + 1
        while j <= n:
            tree[j] -= 1
            j += j & -j
    return chosen


def _stepped_runs(
    n: int, lo: np.ndarray, hi: np.ndarray, u: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """Many independent passes of Algorithm 1/2 at once, one target at a time.

    ``lo``, ``hi`` are (models, N) windows, ``u``, ``v`` (runs, N) draws; row (m, r)
    makes exactly the picks of ``_fenwick_run(n, lo[m], hi[m], u[r], v[r])``: the first
    try at ``lo + floor(u * width)`` is kept if still available, otherwise the
    ``floor(v * c)``-th of the ``c`` available positions of the window is taken, with the
    same floating-point products and truncations. The targets stay in turn (each pick
    depends on the earlier ones of its run); what is vectorised is the rows, every model
    and run side by side, so the Python loop runs N times instead of models * runs * N.
    A first try that fails counts the window's available positions by a cumulative sum
    over its cells, so a step costs the widest such window times the rows that missed:
    :func:`_run_passes` sends wide windows to the Fenwick tree instead.

    Returns
    -------
    numpy.ndarray
        int64 (models, runs, N): the sorted source position each target took, -1 for none.
    """
    n_models, n_tgt = lo.shape
    runs = u.shape[0]
    rows = n_models * runs
    width = hi - lo
    widest = max(int(width.max()) if width.size else 0, 1)
    # Row r's cells are r * stride + 0..n-1. Cell n and the padding after it are never
    # available, so a window of ``widest`` cells read from any start stays in its row; the
    # last cell (``dump``) is always available and takes the first try of a target
    # without candidates, whose result is set to -1 at the end.
    stride = n + widest
    dump = rows * stride
    base = np.arange(rows, dtype=np.int64) * stride

    def step_major(per_model: np.ndarray) -> np.ndarray:
        # (models, runs, N) -> (N, rows): each step reads one contiguous row.
        return np.ascontiguousarray(per_model.reshape(rows, n_tgt).T)

    first = lo[:, None, :] + (u[None, :, :] * width[:, None, :]).astype(np.int64)
    first = np.minimum(first, (hi - 1)[:, None, :]) + base.reshape(n_models, runs, 1)
    dead = np.broadcast_to((width <= 0)[:, None, :], (n_models, runs, n_tgt))
    first_t = step_major(np.where(dead, dump, first))
    start_t = step_major(lo[:, None, :] + base.reshape(n_models, runs, 1))
    width_t = step_major(np.broadcast_to(width[:, None, :], (n_models, runs, n_tgt)))
    v_t = step_major(np.broadcast_to(v[None, :, :], (n_models, runs, n_tgt)))
    avail = np.zeros(rows * stride + 1, dtype=bool)
    avail[:-1].reshape(rows, stride)[:, :n] = True
    avail[dump] = True
    windows = np.lib.stride_tricks.sliding_window_view(avail[:-1], widest)
    took_t = np.empty((n_tgt, rows), dtype=np.int64)
    ok_t = np.empty((n_tgt, rows), dtype=bool)
    for i in range(n_tgt):
        cell = first_t[i]
        ok = avail[cell]
        miss = np.flatnonzero(~ok)
        if miss.size:
            at = start_t[i, miss]
            w = width_t[i, miss]
            # int32: NumPy's fast path for a running count of booleans (int16 and int64 are
            # several times slower).
            seen = np.cumsum(windows[at, : int(w.max())], axis=1, dtype=np.int32)
            c = seen[np.arange(miss.size), w - 1].astype(np.int64)
            k = np.minimum((v_t[i, miss] * c).astype(np.int64), c - 1)
            got = c > 0
            # The (k+1)-th available cell of the window: how many prefixes hold <= k.
            cell = cell.copy()
            cell[miss] = at + (seen <= k[:, None]).sum(axis=1)
            ok[miss] = got
        avail[cell[ok]] = False
        avail[dump] = True
        took_t[i] = cell
        ok_t[i] = ok
    chosen = took_t.T.reshape(n_models, runs, n_tgt) - base.reshape(n_models, runs, 1)
    return np.where(ok_t.T.reshape(n_models, runs, n_tgt) & ~dead, chosen, -1)


# The stepped matcher pays a fixed cost per target, the Fenwick tree one per target and
# run: below this many rows (models * runs) side by side the tree is cheaper.
STEPPED_MIN_ROWS = 32
# The cells the stepped matcher holds per array (rows times the targets, or times the
# widest window a step may gather): about 16 MB of int64. More models are stepped in
# chunks; a window so wide that too few rows fit goes to the Fenwick tree, whose cost
# does not grow with the window.
STEPPED_MAX_CELLS = 1 << 21


def _run_passes(n: int, lo: np.ndarray, hi: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Every (model, run) pass, through whichever matcher is cheaper; both pick the same.

    Returns
    -------
    numpy.ndarray
        int64 (models, runs, N), as :func:`_stepped_runs`.
    """
    n_models, n_tgt = lo.shape
    runs = u.shape[0]
    widest = int((hi - lo).max()) if lo.size else 0
    chunk = min(n_models, STEPPED_MAX_CELLS // (runs * max(n_tgt, widest, 1)))
    if chunk * runs >= STEPPED_MIN_ROWS:
        parts = [
            _stepped_runs(n, lo[k : k + chunk], hi[k : k + chunk], u, v)
            for k in range(0, n_models, chunk)
        ]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]
    chosen = np.full((n_models, runs, n_tgt), -1, dtype=np.int64)
    for m in range(n_models):
        lo_m, hi_m = lo[m].tolist(), hi[m].tolist()
        for r in range(runs):
            chosen[m, r] = _fenwick_run(n, lo_m, hi_m, u[r].tolist(), v[r].tolist())
    return chosen


def _draws(rng: np.random.Generator, runs: int, n_tgt: int) -> tuple[np.ndarray, np.ndarray]:
    # Run by run from one generator, so run r of a longer call equals run r of a shorter.
    uv = (
        np.stack([rng.random((2, n_tgt)) for _ in range(runs)]) if runs else np.zeros((0, 2, n_tgt))
    )
    return uv[:, 0, :], uv[:, 1, :]


def _as_runs(order: np.ndarray, chosen: np.ndarray) -> tuple[MatchRun, ...]:
    out = []
    for row in chosen:
        hit = row >= 0
        out.append(
            MatchRun(
                src_matched=order[row[hit]],
                tgt_matched=np.flatnonzero(hit),
                tgt_unmatched=np.flatnonzero(~hit),
            )
        )
    return tuple(out)


def match_runs(
    source: Predictions,
    target: Predictions,
    eps: float = 0.005,
    criterion: Criterion = "label-prob",
    runs: int = 10,
    seed: int | np.random.Generator = 0,
) -> tuple[MatchRun, ...]:
    """``runs`` independent runs of Algorithm 1 (``label-prob``) or 2 (``prob``) of Anzaku et al.
    (2022), *A Principled Evaluation Protocol for Comparative Investigation of the Effectiveness
    of DNN Classification Models on Similar-but-non-identical Datasets*.

    Runs draw from one ``np.random.default_rng(seed)`` in sequence, so the same seed gives the
    same runs, and run r of a longer call equals run r of a shorter one.

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 or 2.
    runs : int
        Number of runs (any number: no request bound here).
    seed : int or numpy.random.Generator
        Seed, or the generator to draw from.

    Returns
    -------
    tuple of MatchRun
    """
    return match_runs_models([source], [target], eps, criterion, runs, seed)[0]


def match_runs_models(
    sources: Sequence[Predictions],
    targets: Sequence[Predictions],
    eps: float = 0.005,
    criterion: Criterion = "label-prob",
    runs: int = 10,
    seed: int | np.random.Generator = 0,
) -> list[tuple[MatchRun, ...]]:
    """:func:`match_runs` for several models on the same two sets at once (Anzaku et al.
    (2022), *A Principled Evaluation Protocol for Comparative Investigation of the
    Effectiveness of DNN Classification Models on Similar-but-non-identical Datasets*,
    Algorithms 1 and 2).

    Model k's runs are exactly ``match_runs(sources[k], targets[k], ..., seed=seed)``:
    every model draws the same runs from a fresh ``np.random.default_rng(seed)`` (or, for
    a generator, the draws of one call, shared). Run together, every model's and run's
    pass advances one target at a time side by side, which costs far less than one pass
    after another when there are many.

    Parameters
    ----------
    sources, targets : sequence of Predictions
        One model's outputs per entry; all sources of one length, all targets of one length.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 or 2.
    runs : int
        Number of runs per model.
    seed : int or numpy.random.Generator
        Seed, or the generator to draw from.

    Returns
    -------
    list of tuple of MatchRun
        One tuple of runs per model, in the order given.

    Raises
    ------
    InputError
        If a parameter is out of range, or the models' sets differ in length.
    """
    picks = _picks(sources, targets, eps, criterion, runs, seed)
    return [] if picks is None else [picks.runs_of(k) for k in range(len(sources))]


def _picks(
    sources: Sequence[Predictions],
    targets: Sequence[Predictions],
    eps: float,
    criterion: Criterion,
    runs: int,
    seed: int | np.random.Generator,
) -> _Picks | None:
    """Every model's and run's pass side by side (:func:`match_runs_models`); None for no
    models."""
    check_params(
        eps, criterion, runs, None if isinstance(seed, np.random.Generator) else seed, max_runs=None
    )
    if len(sources) != len(targets):
        raise InputError(
            f"sources and targets must pair up, got {len(sources)} and {len(targets)}.",
            param="targets",
        )
    if not sources:
        return None
    n_src, n_tgt = len(sources[0]), len(targets[0])
    if any(len(s) != n_src for s in sources) or any(len(t) != n_tgt for t in targets):
        raise InputError(
            "Every model must be matched on the same two sets: the sources (or targets) differ in length.",
            param="sources",
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    wins = [_windows(s, t, float(eps), criterion) for s, t in zip(sources, targets)]
    u, v = _draws(rng, int(runs), n_tgt)
    lo = np.stack([w.lo for w in wins]).reshape(len(wins), n_tgt)
    hi = np.stack([w.hi for w in wins]).reshape(len(wins), n_tgt)
    return _Picks(np.stack([w.order for w in wins]), _run_passes(n_src, lo, hi, u, v))


@dataclass(frozen=True)
class _Picks:
    """Every model's runs as the matcher leaves them: each model's sorted source order
    (models, n_source) and the sorted source position each target took, -1 for none
    (models, runs, n_target)."""

    order: np.ndarray
    chosen: np.ndarray

    def runs_of(self, k: int) -> tuple[MatchRun, ...]:
        return _as_runs(self.order[k], self.chosen[k])

    def columns(
        self, sources: Sequence[Predictions], targets: Sequence[Predictions]
    ) -> list[dict[str, np.ndarray]]:
        """:func:`_run_columns` of every model at once, with the same numbers: each mean is
        a count of 0/1 values over its count, as ``np.mean`` takes it (both exact sums)."""
        n_models, runs, n_tgt = self.chosen.shape
        hit = self.chosen >= 0
        at = np.arange(n_models)[:, None, None]
        src = self.order[at, np.where(hit, self.chosen, 0)]
        cs = np.stack([s.correct for s in sources])
        ct = np.stack([t.correct for t in targets])[:, None, :]
        n = hit.sum(axis=2)
        left = n_tgt - n

        def share(count: np.ndarray, of: np.ndarray) -> np.ndarray:
            return np.divide(count, of, out=np.full(count.shape, np.nan), where=of > 0)

        acc_src = share((cs[at, src] & hit).sum(axis=2), n)
        acc_tgt = share((ct & hit).sum(axis=2), n)
        acc_left = share((ct & ~hit).sum(axis=2), left)
        frac_left = left / n_tgt
        return [
            {
                "run": np.arange(runs, dtype=np.int64),
                "matched_acc_source": acc_src[k],
                "matched_acc_target": acc_tgt[k],
                "fraction_unmatched": frac_left[k],
                "acc_unmatched": acc_left[k],
                "n_matched": n[k].astype(np.int64),
            }
            for k in range(n_models)
        ]


def match_summaries(
    sources: Sequence[Predictions],
    targets: Sequence[Predictions],
    eps: float = 0.005,
    criterion: Criterion = "label-prob",
    runs: int = 10,
    seed: int = 0,
) -> list[MatchSummary]:
    """:func:`matched_accuracy` of several models on the same two sets at once (Anzaku et al.
    (2022), *A Principled Evaluation Protocol for Comparative Investigation of the
    Effectiveness of DNN Classification Models on Similar-but-non-identical Datasets*,
    §2.3, Algorithms 1 and 2).

    Model k's summary equals ``matched_accuracy(sources[k], targets[k], ...)``: its runs
    are :func:`match_runs_models`' and its per-run numbers are taken for every model and
    run together.

    Parameters
    ----------
    sources, targets : sequence of Predictions
        One model's outputs per entry; all sources of one length, all targets of one length.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 or 2.
    runs : int
        Seeded runs per model.
    seed : int
        Seed of the runs.

    Returns
    -------
    list of MatchSummary
        One per model, in the order given.

    Raises
    ------
    InputError
        If a parameter is out of range, or the models' sets differ in length.
    """
    crit = check_params(eps, criterion, runs, seed)
    picks = _picks(sources, targets, eps, crit, runs, seed)
    if picks is None:
        return []
    return [
        _summary(sources[k], targets[k], picks.runs_of(k), cols, eps, crit, seed)
        for k, cols in enumerate(picks.columns(sources, targets))
    ]


def _mean_or_nan(values: np.ndarray) -> float:
    return float(np.mean(values)) if values.size else float("nan")


def _run_columns(
    source: Predictions, target: Predictions, matches: Sequence[MatchRun]
) -> dict[str, np.ndarray]:
    cs, ct = source.correct, target.correct
    return {
        "run": np.arange(len(matches), dtype=np.int64),
        "matched_acc_source": np.array(
            [_mean_or_nan(cs[m.src_matched]) for m in matches], dtype=np.float64
        ),
        "matched_acc_target": np.array(
            [_mean_or_nan(ct[m.tgt_matched]) for m in matches], dtype=np.float64
        ),
        "fraction_unmatched": np.array(
            [m.tgt_unmatched.size / len(target) for m in matches], dtype=np.float64
        ),
        "acc_unmatched": np.array(
            [_mean_or_nan(ct[m.tgt_unmatched]) for m in matches], dtype=np.float64
        ),
        "n_matched": np.array([m.n_matched for m in matches], dtype=np.int64),
    }


def run_table(
    source: Predictions, target: Predictions, matches: Sequence[MatchRun]
) -> pd.DataFrame:
    """Per-run matched accuracies, unmatched fraction and accuracy on the unmatched.

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    matches : sequence of MatchRun
        The runs.

    Returns
    -------
    pandas.DataFrame
        One row per run, columns :data:`RUN_COLUMNS`.
    """
    return pd.DataFrame(_run_columns(source, target, matches), columns=list(RUN_COLUMNS))


def _nanmean(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def matched_accuracy(
    source: Predictions,
    target: Predictions,
    eps: float = 0.005,
    criterion: Criterion = "label-prob",
    runs: int = 10,
    seed: int = 0,
) -> MatchSummary:
    """Accuracy, matched accuracy and unmatched fraction of one model over ``runs`` runs
    (Anzaku et al. (2022), *A Principled Evaluation Protocol for Comparative Investigation of the
    Effectiveness of DNN Classification Models on Similar-but-non-identical Datasets*, §2.3,
    Algorithms 1 and 2).

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 (same predicted label and confidence) or 2 (confidence only).
    runs : int
        Seeded runs.
    seed : int
        Seed of the runs.

    Returns
    -------
    MatchSummary

    Raises
    ------
    InputError
        If a parameter is out of range.
    """
    crit = check_params(eps, criterion, runs, seed)
    matches = match_runs(source, target, eps=eps, criterion=crit, runs=runs, seed=seed)
    return match_summary(source, target, matches, eps, crit, seed)


def match_summary(
    source: Predictions,
    target: Predictions,
    matches: Sequence[MatchRun],
    eps: float,
    criterion: Criterion,
    seed: int,
) -> MatchSummary:
    """The :class:`MatchSummary` of one model's runs (Anzaku et al. (2022), *A Principled
    Evaluation Protocol for Comparative Investigation of the Effectiveness of DNN
    Classification Models on Similar-but-non-identical Datasets*, §2.3).

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    matches : sequence of MatchRun
        Its runs, from :func:`match_runs` or :func:`match_runs_models` with these settings.
    eps : float
        The tolerance the runs matched with.
    criterion : {"label-prob", "prob"}
        The algorithm they followed.
    seed : int
        Their seed.

    Returns
    -------
    MatchSummary
    """
    return _summary(
        source, target, matches, _run_columns(source, target, matches), eps, criterion, seed
    )


def _summary(
    source: Predictions,
    target: Predictions,
    matches: Sequence[MatchRun],
    cols: dict[str, np.ndarray],
    eps: float,
    criterion: Criterion,
    seed: int,
) -> MatchSummary:
    return MatchSummary(
        acc_source=source.accuracy,
        acc_target=target.accuracy,
        matched_acc_source=_nanmean(cols["matched_acc_source"]),
        matched_acc_target=_nanmean(cols["matched_acc_target"]),
        fraction_unmatched=float(cols["fraction_unmatched"].mean()),
        acc_unmatched=_nanmean(cols["acc_unmatched"]),
        n_matched=float(cols["n_matched"].mean()),
        conf_source=source.mean_confidence,
        conf_target=target.mean_confidence,
        n_source=len(source),
        n_target=len(target),
        eps=float(eps),
        criterion=criterion,
        runs=len(matches),
        seed=int(seed),
        per_run_columns=cols,
        matches=tuple(matches),
    )
