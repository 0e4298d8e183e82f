"""A small real slice of a selection and one Sort & Search step on it, for teaching.

Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
§3.2 (insert_M) and §3.3 (insert_D).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lifelong_core.methods import InsertM
from lifelong_core.sortsearch import rule_thresholds, sort_models
from lifelong_core.workflows.selection import Selection


def teaching_slice(
    sel: Selection, n_models: int, n_samples: int, seed: int
) -> tuple[np.ndarray, list[str], list[str]]:
    """A small real slice of ``sel`` to show whole: ``n_models`` models spread over the
    accuracy range and ``n_samples`` random samples, drawn with ``seed``.

    The models are picked at evenly spaced accuracy ranks, jittered by the seed, so the
    slice shows easy and hard rows.

    Parameters
    ----------
    sel : Selection
        The data choice (dense; a large store passes a bounded block).
    n_models : int
        Models wanted (at most m; fewer when jittered picks coincide).
    n_samples : int
        Samples wanted (at most n).
    seed : int
        Seed of the draw.

    Returns
    -------
    tuple of (numpy.ndarray, list of str, list of str)
        The 0/1 slice (models x samples, both in store order), the models' names and the
        samples' ids.

    Raises
    ------
    lifelong_core.limits.DenseReadError
        If ``sel.A`` is a packed cache beyond the dense-read limit.
    """
    A = sel.dense()
    m, n = A.shape
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.choice(n, size=min(n_samples, n), replace=False))
    by_acc = np.argsort(-A.mean(axis=1), kind="stable")
    # Evenly spaced accuracy ranks, jittered by the seed, so the slice shows easy and hard rows.
    picks = np.unique(np.linspace(0, m - 1, min(n_models, m)).round().astype(int))
    jitter = rng.integers(-2, 3, size=len(picks))
    picks = np.unique(np.clip(picks + jitter, 0, m - 1))
    rows = np.sort(by_acc[picks])
    return (
        A[np.ix_(rows, cols)],
        [sel.names[i] for i in rows],
        sel.samples["sample_id"].to_numpy(dtype=object)[cols].tolist(),
    )


@dataclass(frozen=True)
class Walkthrough:
    """One insert_M (or, on the transpose, insert_D) run on a slice.

    ``order``: the other rows' easy -> hard order of the columns; ``positions``: sampled
    sorted positions; ``observed``: the new row's values there; ``threshold``: the rule's
    t; ``pred`` / ``true``: predicted and true new row in sorted order.
    """

    order: np.ndarray
    positions: np.ndarray
    observed: np.ndarray
    threshold: int
    pred: np.ndarray
    true: np.ndarray


def walkthrough(
    A: np.ndarray,
    held_out: int,
    budget: int,
    rule: str,
    sampling: str,
    seed: int,
    transpose: bool = False,
) -> Walkthrough:
    """Sort & Search for one held-out row of ``A`` (or column, with ``transpose``).

    insert_M (Prabhu et al., 2024, §3.2): Sort the columns by the other rows' sums,
    evaluate the held-out row at ``budget`` positions, threshold. insert_D (§3.3): the
    same on ``A.T``, with the rows (models) ordered best first by ``sort_models``.

    Parameters
    ----------
    A : numpy.ndarray
        A small 0/1 slice, models x samples (:func:`teaching_slice`).
    held_out : int
        The row (with ``transpose``: the column) playing the new model (new sample).
    budget : int
        Evaluations n′ of the held-out row.
    rule : {"midpoint", "reference"}
        The threshold rule (:mod:`lifelong_core.sortsearch.search`).
    sampling : str
        How the sorted positions are chosen (``"uniform"``, ``"random"``, ...).
    seed : int
        Seed of the random sampling.
    transpose : bool
        Walk insert_D (a new sample among the models) instead of insert_M.

    Returns
    -------
    Walkthrough

    Raises
    ------
    InputError
        On a budget outside [1, n], an unknown rule or sampling.
    """
    M = A.T if transpose else A
    rest = np.delete(M, held_out, axis=0)
    new = M[held_out]
    if transpose:
        est = InsertM(rule=rule, sampling=sampling).fit(rest, order=sort_models(rest.T))
    else:
        est = InsertM(rule=rule, sampling=sampling).fit(rest)
    pos = est.select_positions(budget, np.random.default_rng(seed))
    observed = new[est.order_[pos]].astype(np.uint8)
    t = int(rule_thresholds(rule, pos, observed[None, :], M.shape[1])[0])
    pred = np.zeros(M.shape[1], dtype=np.uint8)
    pred[:t] = 1
    return Walkthrough(est.order_, pos, observed, t, pred, new[est.order_].astype(np.uint8))


def prediction_after(w: Walkthrough, step: int, rule: str) -> tuple[int, np.ndarray] | None:
    """Threshold and predicted row (sorted order) from the first ``step`` evaluations only,
    in the order they are made (ascending sorted position); None before the first. After
    all of them this is ``(w.threshold, w.pred)``: a page that follows a slider shows what
    is known at each step, not the final answer.

    Parameters
    ----------
    w : Walkthrough
        The walkthrough (:func:`walkthrough`).
    step : int
        Evaluations made so far (0 to ``len(w.positions)``).
    rule : {"midpoint", "reference"}
        The threshold rule, the walkthrough's.

    Returns
    -------
    tuple of (int, numpy.ndarray) or None
        The threshold t and the predicted 0/1 row in sorted order (its first t entries
        1); None when ``step`` is 0 or less.

    Raises
    ------
    InputError
        For an unknown rule.
    """
    if step <= 0:
        return None
    n = len(w.true)
    t = int(rule_thresholds(rule, w.positions[:step], w.observed[None, :step], n)[0])
    pred = np.zeros(n, dtype=np.uint8)
    pred[:t] = 1
    return t, pred
