"""The plain O(N*M) transcription of Anzaku et al., Algorithm 1 and Algorithm 2.

Kept as the yardstick for :func:`lifelong_core.matching.protocol.match_runs`: the tests
check that both give the same distribution of outcomes and identical outcomes wherever
every draw is forced, and the benchmark times both. Line by line it follows the
listing: ``P_src`` is a Python list of the source tuples still available, ``Match``
scans all of it, ``RandomSelect`` picks uniformly among the candidates and
``P_src.remove`` takes the pick out. Each tuple carries its source index so that the
result can be compared with the fast version (the listing's tuples are values; two equal
tuples are interchangeable for every accuracy the paper computes).
"""

from __future__ import annotations

import numpy as np

from lifelong_core.matching.data import Predictions
from lifelong_core.matching.protocol import MatchRun, check_params


def match_reference(
    source: Predictions,
    target: Predictions,
    eps: float,
    criterion: str,
    rng: np.random.Generator,
) -> MatchRun:
    """One run of MatchPredictions as the paper writes it, in O(N M): Algorithm 1 for
    ``label-prob``, Algorithm 2 for ``prob`` (Anzaku et al. (2022), *A Principled Evaluation
    Protocol for Comparative Investigation of the Effectiveness of DNN Classification Models on
    Similar-but-non-identical Datasets*). The fast path is tested against it.

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : str
        ``label-prob`` or ``prob``.
    rng : numpy.random.Generator
        Draws the processing order and the choice among candidates.

    Returns
    -------
    MatchRun
    """
    check_params(eps, criterion)
    use_label = criterion == "label-prob"
    p_src = [
        (int(source.y[s]), int(source.y_pred[s]), float(source.p[s]), s) for s in range(len(source))
    ]
    src_matched, tgt_matched, tgt_unmatched = [], [], []
    for i in range(len(target)):  # for i <- 1, N: the targets in turn
        yhat_t, phat_t = int(target.y_pred[i]), float(target.p[i])
        p_matched = []
        for tup in p_src:
            _, yhat, phat, _ = tup
            label_ok = (yhat_t == yhat) if use_label else True
            if label_ok and phat - eps <= phat_t <= phat + eps:
                p_matched.append(tup)
        if len(p_matched) > 0:
            pick = p_matched[int(rng.integers(len(p_matched)))]  # RandomSelect
            p_src.remove(pick)
            src_matched.append(pick[3])
            tgt_matched.append(i)
        else:
            tgt_unmatched.append(i)
    return MatchRun(
        src_matched=np.asarray(src_matched, dtype=np.int64),
        tgt_matched=np.asarray(tgt_matched, dtype=np.int64),
        tgt_unmatched=np.asarray(tgt_unmatched, dtype=np.int64),
    )
