"""Metrics of a predicted correctness vector against the truth (Prabhu et al., 2024, §2.1, §4.1,
§4.5; Prabhu et al. (2024, *Lifelong Benchmarks*) §4 Eq. 3-4, §5) and the model correlation matrix of Prabhu et al. (2024) App. E.

All functions work on plain 0/1 vectors; :func:`threshold_metrics` computes the same
numbers for threshold predictions from counts alone (the sweep's fast path).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch.sort import best_prefix_counts


def _pair(a: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a).astype(np.int64).ravel()
    y = np.asarray(y).astype(np.int64).ravel()
    if a.shape != y.shape or a.size == 0:
        raise InputError(
            f"truth and prediction must be non-empty and of equal length ({a.size} vs {y.size})."
        )
    return a, y


def mae(a: np.ndarray, y: np.ndarray) -> float:
    """Mean absolute error E(a, y) = ||a - y||_1 / n (Prabhu et al. (2024), *Efficient Lifelong
    Model Evaluation in an Era of Rapid Progress*, §2.1, Eq. 2).

    Parameters
    ----------
    a : numpy.ndarray
        The true 0/1 row.
    y : numpy.ndarray
        The predicted 0/1 row, same length.

    Returns
    -------
    float
    """
    a, y = _pair(a, y)
    return float(np.abs(a - y).mean())


def eagg(a: np.ndarray, y: np.ndarray) -> float:
    """Aggregate accuracy error E_agg = | |y| - |a| | / n (Prabhu et al. (2024), *Efficient Lifelong
    Model Evaluation in an Era of Rapid Progress*, §2.1; Prabhu et al. (2024), *Lifelong
    Benchmarks: Efficient Model Evaluation in an Era of Rapid Progress*, §5).

    Parameters
    ----------
    a : numpy.ndarray
        The true 0/1 row.
    y : numpy.ndarray
        The predicted 0/1 row, same length.

    Returns
    -------
    float
    """
    a, y = _pair(a, y)
    return float(abs(int(y.sum()) - int(a.sum())) / a.size)


def kappa_from(err: np.ndarray, acc_a: np.ndarray, acc_y: np.ndarray) -> np.ndarray:
    """Cohen's kappa from MAE and the two accuracies, vectorised (Prabhu et al. (2024), *Lifelong
    Benchmarks: Efficient Model Evaluation in an Era of Rapid Progress*, §4, Eq. 3-4).

    E_rand = acc_a acc_y + (1 - acc_a)(1 - acc_y) (Eq. 3). When E_rand = 1 both vectors are
    the same constant, agreement is perfect and kappa is defined as 1 (Eq. 4 is 0/0 there).
    Kappa can be negative (worse than chance); it is not clipped to the [0, 1] the paper
    states.

    Parameters
    ----------
    err : numpy.ndarray
        MAE of each prediction.
    acc_a, acc_y : numpy.ndarray
        Accuracy of the truth and of the prediction.

    Returns
    -------
    numpy.ndarray
    """
    err = np.asarray(err, dtype=np.float64)
    p_e = acc_a * acc_y + (1 - acc_a) * (1 - acc_y)
    denom = 1 - p_e
    with np.errstate(divide="ignore", invalid="ignore"):
        k = ((1 - err) - p_e) / denom
    return np.where(denom <= 1e-15, 1.0, k)


def kappa(a: np.ndarray, y: np.ndarray) -> float:
    """Normalized agreement kappa(a, y) (Prabhu et al. (2024), *Lifelong Benchmarks: Efficient Model
    Evaluation in an Era of Rapid Progress*, §4, Eq. 4).

    Parameters
    ----------
    a : numpy.ndarray
        The true 0/1 row.
    y : numpy.ndarray
        The predicted 0/1 row, same length.

    Returns
    -------
    float
    """
    a, y = _pair(a, y)
    return float(kappa_from(np.abs(a - y).mean(), a.mean(), y.mean()))


def threshold_metrics(
    t: np.ndarray, ones_before_t: np.ndarray, totals: np.ndarray, n: int
) -> dict[str, np.ndarray]:
    """MAE, accuracies, E_agg and kappa of threshold predictions, from counts only.

    Row ``i`` predicts its first ``t[i]`` sorted samples correct; it has ``totals[i]`` ones,
    ``ones_before_t[i]`` of them before ``t[i]``. Errors are the zeros before the threshold
    plus the ones after it (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of
    Rapid Progress*, proof of Theorem 3.1, Eq. 6).

    Parameters
    ----------
    t : numpy.ndarray
        Thresholds, one per row.
    ones_before_t : numpy.ndarray
        Ones among each row's first ``t`` sorted samples.
    totals : numpy.ndarray
        Ones per row.
    n : int
        Samples.

    Returns
    -------
    dict of str to numpy.ndarray
        ``mae``, ``true_acc``, ``est_acc``, ``eagg``, ``kappa``, one value per row.
    """
    t = np.asarray(t, dtype=np.int64)
    c = np.asarray(ones_before_t, dtype=np.int64)
    tot = np.asarray(totals, dtype=np.int64)
    err = ((t - c) + (tot - c)) / n
    est = t / n
    true = tot / n
    return {
        "mae": err,
        "est_acc": est,
        "true_acc": true,
        "eagg": np.abs(est - true),
        "kappa": kappa_from(err, true, est),
    }


def theorem21_vector(a: np.ndarray) -> np.ndarray:
    """The construction in the proof of Theorem 2.1 (Prabhu et al. (2024), *Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress*, Appendix J).

    A prediction with E_agg = 0 and the worst MAE, 2 min(|a|/n, 1 - |a|/n): when ones are the
    minority, flip every one to zero and set as many former zeros to one (the first ones in
    index order); otherwise the mirror image. For the paper's example a = [0,0,0,1,1] this
    gives [1,1,0,0,0] (E_agg 0, MAE 0.8); the vector printed in §2.1, [1,1,1,0,0], has three
    ones and so E_agg 0.2 and MAE 1.0.

    Parameters
    ----------
    a : numpy.ndarray
        The true 0/1 row.

    Returns
    -------
    numpy.ndarray
        uint8, same length.
    """
    a = np.asarray(a).astype(np.uint8).ravel()
    k = int(a.sum())
    n = a.size
    if 2 * k <= n:
        y = np.zeros(n, dtype=np.uint8)
        y[np.flatnonzero(a == 0)[:k]] = 1
    else:
        y = np.ones(n, dtype=np.uint8)
        y[np.flatnonzero(a == 1)[: n - k]] = 0
    return y


@dataclass(frozen=True)
class Decomposition:
    """Error decomposition of Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era
    of Rapid Progress*, §4.5 (Eq. 3-4), all as fractions of n.

    ``total`` = E(a, y) satisfies aleatoric <= total <= aleatoric + epistemic (optimality of
    y*, then the triangle inequality).

    Attributes
    ----------
    total : float
        E(a, y) of the threshold prediction y.
    aleatoric : float
        ||a P* - y*|| / n with y* the best threshold on the full sorted row (DP-search at
        n' = n).
    epistemic : float
        ||y* - y|| / n = |t* - t| / n.
    best_threshold : int
        t*.
    """

    total: float
    aleatoric: float
    epistemic: float
    best_threshold: int


def decompose(a_sorted: np.ndarray, t: int) -> Decomposition:
    """Decompose the error of the threshold prediction ``t`` on a row in sorted order
    (Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §4.5).

    Parameters
    ----------
    a_sorted : numpy.ndarray
        The 0/1 row in Sort order.
    t : int
        The predicted threshold.

    Returns
    -------
    Decomposition
    """
    row = np.asarray(a_sorted).astype(np.uint8).reshape(1, -1)
    n = row.shape[1]
    t_star, c_star = best_prefix_counts(row)
    c_t = int(row[0, :t].sum())
    total = ((t - c_t) + (int(row.sum()) - c_t)) / n
    ale = ((int(t_star[0]) - int(c_star[0])) + (int(row.sum()) - int(c_star[0]))) / n
    return Decomposition(total, ale, abs(int(t) - int(t_star[0])) / n, int(t_star[0]))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (as scipy.stats.rankdata)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    first = np.concatenate([[True], xs[1:] != xs[:-1]])
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], len(x))
    avg = (starts + ends + 1) / 2.0
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = avg[group]
    return ranks


def correlations(est: np.ndarray, true: np.ndarray) -> tuple[float, float]:
    """Pearson and Spearman of estimated vs true accuracy over models.

    Spearman is Pearson on average ranks; computed with numpy so the sweep does not pay for
    importing scipy.stats.

    Parameters
    ----------
    est, true : numpy.ndarray
        Estimated and true accuracy of each model.

    Returns
    -------
    tuple of float
        (Pearson, Spearman), each NaN when undefined (fewer than two models, or a constant).
    """
    est = np.asarray(est, dtype=np.float64)
    true = np.asarray(true, dtype=np.float64)
    if est.size < 2 or np.ptp(est) == 0 or np.ptp(true) == 0:
        return float("nan"), float("nan")
    pear = float(np.corrcoef(est, true)[0, 1])
    spear = float(np.corrcoef(_average_ranks(est), _average_ranks(true))[0, 1])
    return pear, spear


@dataclass(frozen=True)
class ModelCorrelation:
    """Model-by-model correlation, models sorted by accuracy (Prabhu et al. (2024), *Efficient
    Lifelong Model Evaluation in an Era of Rapid Progress*, Appendix E, Fig. 7).

    Attributes
    ----------
    order : numpy.ndarray
        Original row numbers, most accurate first (stable ties).
    accuracy : numpy.ndarray
        Their accuracies.
    corr : numpy.ndarray
        The correlation matrix in that order.
    """

    order: np.ndarray
    accuracy: np.ndarray
    corr: np.ndarray

    def frame(self, names: list[str] | None = None) -> pd.DataFrame:
        """The correlation matrix as a table labelled by model.

        Parameters
        ----------
        names : list of str, optional
            Name of each original row (default: the row numbers).

        Returns
        -------
        pandas.DataFrame
        """
        labels = [str(i) for i in self.order] if names is None else [names[i] for i in self.order]
        return pd.DataFrame(self.corr, index=labels, columns=labels)


def model_correlation(A: np.ndarray, chunk_cols: int = 1 << 16) -> ModelCorrelation:
    """Correlation between every pair of model rows, sorted by accuracy (Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, Appendix E).

    The paper plots Spearman correlations; for 0/1 rows Spearman (average ranks) equals
    Pearson (the phi coefficient), since ranking a binary vector is an affine map. The Gram
    matrix is accumulated over column chunks, so memory is O(m^2 + m * chunk). A constant
    row (accuracy 0 or 1) has undefined correlation: NaN off the diagonal.

    Parameters
    ----------
    A : numpy.ndarray
        (models, samples) 0/1.
    chunk_cols : int
        Columns per chunk.

    Returns
    -------
    ModelCorrelation
    """
    A = np.asarray(A)
    m, n = A.shape
    gram = np.zeros((m, m), dtype=np.float64)
    for s in range(0, n, chunk_cols):
        part = A[:, s : s + chunk_cols].astype(np.float64)
        gram += part @ part.T
    ones = np.diag(gram).copy()
    p = ones / n
    cov = gram / n - np.outer(p, p)
    sd = np.sqrt(p * (1 - p))
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov / np.outer(sd, sd)
    corr[np.outer(sd, sd) == 0] = np.nan
    np.fill_diagonal(corr, 1.0)
    acc = ones / n
    rev = np.argsort(acc[::-1], kind="stable")[::-1]
    order = (m - 1 - rev).astype(np.int64)
    return ModelCorrelation(order, acc[order], np.clip(corr[np.ix_(order, order)], -1.0, 1.0))
