"""What a sweep returns, built the same way whatever kernel and executor produced it.

Kernels return per-chunk records (one entry per evaluated model and budget);
:func:`assemble` concatenates them, orders them by (budget, model) and summarises each
budget (:func:`summarise`: means over models, Pearson and Spearman across them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch.metrics import correlations
from lifelong_core.sortsearch.search import check_budget

TABLE_COLUMNS = ["budget", "mae", "eagg", "kappa", "pearson", "spearman"]
RECORD_KEYS = ("model_row", "budget", "est_acc", "true_acc", "mae", "eagg", "kappa")
# Prabhu et al. (2024, Lifelong Benchmarks) §6: the error and the normalized agreement kappa, each split into the part
# more samples cannot remove (against the best threshold y*) and the part they can.
DECOMP_KEYS = ("aleatoric", "epistemic", "kappa_aleatoric", "kappa_epistemic")
PER_MODEL_COLUMNS = ["model_row", "budget", "est_acc", "true_acc", "mae"]


@dataclass(frozen=True)
class SweepResult:
    """What :func:`~lifelong_core.sweeping.run_sweep` returns: the scores of a budget sweep.

    With ``decompose=True`` both tables also carry ``aleatoric`` and ``epistemic``
    (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §4.5) and the same split of kappa, ``kappa_aleatoric`` = kappa(a, y*) and
    ``kappa_epistemic`` = kappa(y*, y) (Prabhu et al. (2024), *Lifelong Benchmarks:
    Efficient Model Evaluation in an Era of Rapid Progress*, §6).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per budget, in increasing order: ``budget, mae, eagg, kappa, pearson,
        spearman`` (:data:`TABLE_COLUMNS`). ``mae``, ``eagg`` and ``kappa`` are means over
        the evaluated models; ``pearson`` and ``spearman`` correlate estimated with true
        accuracy across them. Errors are fractions of the n samples.
    per_model : pandas.DataFrame
        One row per (budget, model), ordered by budget then model: ``model_row`` (the
        evaluated row's label), ``budget``, ``est_acc`` and ``true_acc`` (accuracies in
        [0, 1]), ``mae`` (the predicted row's mean absolute error against the true row),
        ``eagg`` (``|est_acc - true_acc|``) and ``kappa``; search methods with an interval
        add ``est_lo`` and ``est_hi``.
    order : numpy.ndarray of int, shape (n,)
        The Sort order: sample columns from easiest to hardest.
    config : dict
        How the sweep ran, for reports: ``sort``, ``sampling``, ``search``, ``seed``,
        ``ties``, ``n``, ``kernel``, ``executor``; ``evaluated`` (budget -> samples
        evaluated) on the threshold path and ``threads`` when not serial. A method's
        whole-sweep implementation fills its own.
    """

    table: pd.DataFrame
    per_model: pd.DataFrame
    order: np.ndarray
    config: dict = field(default_factory=dict)


def power_budgets(n: int, lo: int = 8, hi: int = 32768) -> tuple[int, ...]:
    """The paper's 13 budgets 8, 16, ..., 32768, keeping those <= n.

    The budgets of Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of
    Rapid Progress*, §4.2: the powers of two from ``lo`` to ``hi``.

    Parameters
    ----------
    n : int
        Samples (columns of the matrix); no budget exceeds it.
    lo : int, default 8
        The smallest budget; doubled until past ``hi`` or ``n``.
    hi : int, default 32768
        The largest budget allowed.

    Returns
    -------
    tuple of int
        ``lo, 2*lo, 4*lo, ...`` up to ``min(hi, n)``, increasing.

    Raises
    ------
    InputError
        If no budget fits (``n < lo``), naming ``budgets``.
    """
    out = []
    b = lo
    while b <= min(hi, n):
        out.append(b)
        b *= 2
    if not out:
        raise InputError(
            f"no power-of-two budget between {lo} and {hi} fits {n} samples.", param="budgets"
        )
    return tuple(out)


def check_budgets(budgets: Sequence[int], n: int) -> tuple[int, ...]:
    """Sorted distinct budgets, each a whole number in [1, n].

    Parameters
    ----------
    budgets : sequence of int
        Evaluations per model, n', as given (any order, repeats allowed).
    n : int
        Samples (columns of the matrix).

    Returns
    -------
    tuple of int
        The distinct budgets in increasing order.

    Raises
    ------
    InputError
        If a budget is not a whole number between 1 and ``n``
        (:func:`lifelong_core.sortsearch.search.check_budget`), or if none is given.
    TypeError
        If ``budgets`` is one number or one text rather than a list (``"32"`` would be the
        budgets 3 and 2).
    """
    if isinstance(budgets, (str, bytes)) or not hasattr(budgets, "__iter__"):
        raise TypeError(f"budgets must be a list of whole numbers, got {type(budgets).__name__}.")
    out = []
    for b in budgets:
        check_budget(n, b)
        out.append(int(b))
    if not out:
        raise InputError("no budgets given.", param="budgets")
    return tuple(sorted(set(out)))


def assemble(parts: list[dict[str, np.ndarray]]) -> pd.DataFrame:
    """Chunk records -> ``per_model``, ordered by (budget, model_row)."""
    if not parts:
        raise InputError("the evaluated rows produced no blocks to score.")
    records = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    idx = np.lexsort((records["model_row"], records["budget"]))
    return pd.DataFrame({k: v[idx] for k, v in records.items()})


def summarise(per_model: pd.DataFrame) -> pd.DataFrame:
    """One row per budget: mean MAE, E_agg and kappa over models, and the Pearson and
    Spearman correlations of estimated and true accuracy across them."""
    extra = [c for c in DECOMP_KEYS if c in per_model]
    budget = per_model["budget"].to_numpy()
    # Stable: each budget's rows keep their order, as a group-by keeps them, so every
    # sum adds the same numbers in the same order.
    by = np.argsort(budget, kind="stable")
    budget = budget[by]
    starts = np.flatnonzero(np.r_[len(budget) > 0, budget[1:] != budget[:-1]])
    ends = np.r_[starts[1:], len(budget)]
    cols = {
        c: per_model[c].to_numpy(dtype=np.float64)[by]
        for c in ("est_acc", "true_acc", "mae", "eagg", "kappa", *extra)
    }
    rows = []
    for a, b in zip(starts, ends):
        pear, spear = correlations(cols["est_acc"][a:b], cols["true_acc"][a:b])
        row = {
            "budget": int(budget[a]),
            "mae": _mean(cols["mae"][a:b]),
            "eagg": _mean(cols["eagg"][a:b]),
            "kappa": _mean(cols["kappa"][a:b]),
            "pearson": pear,
            "spearman": spear,
        }
        for c in extra:
            row[c] = _mean(cols[c][a:b])
        rows.append(row)
    return pd.DataFrame(rows, columns=TABLE_COLUMNS + extra)


def _mean(v: np.ndarray) -> float:
    """The mean of the values that are not NaN, NaN if none: pandas' ``Series.mean``, the
    sum taken the same way (NaNs as zeros, one pairwise sum), without a Series."""
    missing = np.isnan(v)
    count = v.size - int(missing.sum())
    if count == 0:
        return float("nan")
    return float(np.where(missing, 0.0, v).sum() / count)
