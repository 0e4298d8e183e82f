"""CopyNearest&Expand's whole sweep on packed rows: the ``packed_sweep`` the method
declares in the registry (:mod:`lifelong_core.methods.registry`).

The baseline of Prabhu et al. (2024, *Efficient Lifelong Model Evaluation in an Era of
Rapid Progress*, §4.2): copy the Sort model nearest to the new one on the evaluated
samples, keep the new model's own answers where it was evaluated. Same numbers as
``run_sweep(..., search="copy-nearest")`` (``methods.copy_nearest``: the same random draws
per budget, nearest Sort row by Hamming distance on the drawn samples, lowest row on
ties), without unpacking: the method's own counting (``methods.copy_nearest.copied_counts``,
which its batched ``score_rows`` also runs), with the Sort rows held packed instead of
dense.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.bits import bits_at, row_totals
from lifelong_core.methods.copy_nearest import copied_counts
from lifelong_core.rows import RowSource
from lifelong_core.sortsearch.metrics import kappa_from
from lifelong_core.sweeping.packed import order_from_packed
from lifelong_core.sweeping.result import SweepResult, check_budgets, summarise


def copy_nearest_packed(
    A_sort: RowSource,
    A_eval: RowSource,
    budgets: Sequence[int],
    *,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
) -> SweepResult:
    """``run_sweep(..., search="copy-nearest")`` on packed rows, with the same numbers.

    Parameters
    ----------
    A_sort, A_eval : RowSource
        The Sort rows (held packed) and the evaluated rows (read in bounded chunks).
    budgets : sequence of int
    seed : int
        One draw per budget, in budget order, from ``default_rng(seed)``.
    progress : callable, optional
        ``progress(fraction)`` as chunks of evaluated rows finish.

    Returns
    -------
    SweepResult
    """
    n = A_sort.n
    budgets = check_budgets(budgets, n)
    S = A_sort.read(0, A_sort.n_rows)
    s_tot = row_totals(S, n)
    rng = np.random.default_rng(seed)
    draws = [np.sort(rng.choice(n, size=b, replace=False)).astype(np.int64) for b in budgets]
    s_at = [bits_at(S, c) for c in draws]
    parts = []
    done = 0
    for row_ids, E in A_eval.chunks(max(1, limits.block_rows(max(budgets), 4, cap=256))):
        true = row_totals(E, n) / n
        for b, cols, sa in zip(budgets, draws, s_at):
            ones, wrong = copied_counts(S, s_tot, sa, E, cols, n)
            est = ones / n
            err = wrong / n
            parts.append(
                pd.DataFrame(
                    {
                        "model_row": row_ids,
                        "budget": b,
                        "est_acc": est,
                        "true_acc": true,
                        "mae": err,
                        "eagg": np.abs(est - true),
                        "kappa": kappa_from(err, true, est),
                    }
                )
            )
        done += len(row_ids)
        if progress is not None:
            progress(done / A_eval.n_rows)
    per_model = (
        pd.concat(parts).sort_values(["budget", "model_row"], kind="stable").reset_index(drop=True)
    )
    config = dict(
        sort="sum", sampling="random", search="copy-nearest", seed=seed, n=n, kernel="packed"
    )
    return SweepResult(summarise(per_model), per_model, order_from_packed(A_sort), config)
