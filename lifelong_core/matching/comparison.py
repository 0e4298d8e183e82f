"""Matched accuracy for many models at once, and the tables behind Anzaku et al.'s figures.

* :func:`compare_models` - per model: accuracy and matched accuracy on both sets, their
  differences, fraction unmatched, accuracy on the unmatched, mean confidence; rows
  sorted by increasing source accuracy as in Figs. 3, 4 (and 6, 7 for Algorithm 2).
* :func:`accuracy_vs_confidence` - one point per model and dataset: accuracy against the
  mean predicted probability (Fig. 1).
* :func:`subset_reliability`, :func:`subset_density` - accuracy against confidence bins
  (reliability diagram) and the density of predicted probabilities for each subset the
  protocol produces: source, target, matched source, matched target, unmatched target
  (Fig. 5). Matched and unmatched subsets are pooled over all runs, so every run weighs
  by its size; the paper shows one model without saying how runs were combined.

Every model is matched with the same ``seed``, so a model's row here equals
:func:`~lifelong_core.matching.protocol.matched_accuracy` called on that model alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lifelong_core.errors import InputError
from lifelong_core.matching.data import Predictions, make_predictions
from lifelong_core.matching.protocol import (
    MatchRun,
    MatchSummary,
    check_params,
    match_summaries,
)

TABLE_COLUMNS = (
    "model",
    "acc_source",
    "acc_target",
    "acc_diff",
    "matched_acc_source",
    "matched_acc_target",
    "matched_acc_diff",
    "fraction_unmatched",
    "acc_unmatched",
    "n_matched",
    "conf_source",
    "conf_target",
)

SUBSETS = ("source", "target", "matched source", "matched target", "unmatched target")


@dataclass(frozen=True, eq=False)
class ModelComparison:
    """What :func:`compare_models` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per model: accuracies, matched accuracies, unmatched fraction, confidences.
    summaries : dict of str to MatchSummary
        Each model's full summary, by model name.
    """

    table: pd.DataFrame
    summaries: dict  # model name -> MatchSummary

    def summary(self, model: str) -> MatchSummary:
        """The :class:`MatchSummary` of one model.

        Parameters
        ----------
        model : str
            A model name of ``table``.

        Returns
        -------
        MatchSummary
        """
        return self.summaries[model]


def _check_matrix(
    name: str, labels: np.ndarray, pred: ArrayLike, conf: ArrayLike, n_models: int
) -> tuple[np.ndarray, np.ndarray]:
    pred = np.asarray(pred)
    conf = np.asarray(conf)
    want = (n_models, labels.shape[0])
    for what, arr in (("predicted", pred), ("confidence", conf)):
        if arr.shape != want:
            raise InputError(
                f"{name}: the {what} matrix has shape {arr.shape}, expected (models, samples) = {want}."
            )
    return pred, conf


def compare_models(
    models: Sequence[str],
    y_source: ArrayLike,
    pred_source: ArrayLike,
    conf_source: ArrayLike,
    y_target: ArrayLike,
    pred_target: ArrayLike,
    conf_target: ArrayLike,
    eps: float = 0.005,
    criterion: str = "label-prob",
    runs: int = 10,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
) -> ModelComparison:
    """The matching protocol for every model (Anzaku et al. (2022), *A Principled Evaluation
    Protocol for Comparative Investigation of the Effectiveness of DNN Classification Models on
    Similar-but-non-identical Datasets*, §4, Figs. 3 and 4).

    Parameters
    ----------
    models : sequence of str
        Model names, unique; one row of each matrix per model.
    y_source, y_target : array_like
        Labels of the datapoints (1-d).
    pred_source, pred_target : array_like
        Predicted labels, (models, datapoints).
    conf_source, conf_target : array_like
        Max-softmax probabilities, (models, datapoints).
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 (same predicted label and confidence) or 2 (confidence only).
    runs : int
        Seeded runs per model.
    seed : int
        Seed of the runs.
    progress : callable, optional
        Called with the fraction done after each model's summary (every model is matched
        first, side by side).

    Returns
    -------
    ModelComparison

    Raises
    ------
    InputError
        For no or repeated model names, mis-shaped matrices, invalid predictions or
        parameters.
    """
    crit = check_params(eps, criterion, runs)
    models = [str(m) for m in models]
    if not models:
        raise InputError("No models to compare: choose at least one model.")
    if len(set(models)) != len(models):
        raise InputError("Model names must be unique to label the comparison table.")
    y_source = np.asarray(y_source)
    y_target = np.asarray(y_target)
    pred_source, conf_source = _check_matrix(
        "source", y_source, pred_source, conf_source, len(models)
    )
    pred_target, conf_target = _check_matrix(
        "target", y_target, pred_target, conf_target, len(models)
    )
    sources = [
        make_predictions(y_source, pred_source[k], conf_source[k], name=f"source (model {model})")
        for k, model in enumerate(models)
    ]
    targets = [
        make_predictions(y_target, pred_target[k], conf_target[k], name=f"target (model {model})")
        for k, model in enumerate(models)
    ]
    # All models' runs side by side: each model's equal matched_accuracy on it alone.
    done = match_summaries(sources, targets, eps=eps, criterion=crit, runs=runs, seed=seed)
    rows, summaries = [], {}
    for k, model in enumerate(models):
        s = done[k]
        summaries[model] = s
        rows.append(
            (
                model,
                s.acc_source,
                s.acc_target,
                s.acc_diff,
                s.matched_acc_source,
                s.matched_acc_target,
                s.matched_acc_diff,
                s.fraction_unmatched,
                s.acc_unmatched,
                s.n_matched,
                s.conf_source,
                s.conf_target,
            )
        )
        if progress is not None:
            progress((k + 1) / len(models))
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    table = table.sort_values(["acc_source", "model"], kind="stable").reset_index(drop=True)
    return ModelComparison(table=table, summaries=summaries)


def accuracy_vs_confidence(table: pd.DataFrame) -> pd.DataFrame:
    """One row per model and dataset with its accuracy and mean confidence (Anzaku et al. (2022), *A
    Principled Evaluation Protocol for Comparative Investigation of the Effectiveness of DNN
    Classification Models on Similar-but-non-identical Datasets*, Fig. 1).

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`ModelComparison.table`.

    Returns
    -------
    pandas.DataFrame
        model, dataset (``source``/``target``), accuracy, confidence, and the calibration gap
        ``confidence - accuracy`` (points above the diagonal are under-confident).
    """
    parts = []
    for side in ("source", "target"):
        parts.append(
            pd.DataFrame(
                {
                    "model": table["model"].to_numpy(),
                    "dataset": side,
                    "accuracy": table[f"acc_{side}"].to_numpy(dtype=np.float64),
                    "confidence": table[f"conf_{side}"].to_numpy(dtype=np.float64),
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)
    out["gap"] = out["confidence"] - out["accuracy"]
    return out


def subset_arrays(
    source: Predictions, target: Predictions, matches: Sequence[MatchRun]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Predicted probability and correctness of each subset of Anzaku et al. (2022), *A Principled
    Evaluation Protocol for Comparative Investigation of the Effectiveness of DNN Classification
    Models on Similar-but-non-identical Datasets*, Fig. 5, pooled over runs.

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    matches : sequence of MatchRun
        The runs of :func:`~lifelong_core.matching.protocol.match_runs`.

    Returns
    -------
    dict of str to tuple of numpy.ndarray
        subset (:data:`SUBSETS`) -> (probabilities, correct).
    """
    cs, ct = source.correct, target.correct

    def pooled(
        arrays: Sequence[np.ndarray], p: np.ndarray, c: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        idx = (
            np.concatenate([np.asarray(a, dtype=np.int64) for a in arrays])
            if arrays
            else np.zeros(0, np.int64)
        )
        return p[idx], c[idx]

    return {
        "source": (source.p, cs),
        "target": (target.p, ct),
        "matched source": pooled([m.src_matched for m in matches], source.p, cs),
        "matched target": pooled([m.tgt_matched for m in matches], target.p, ct),
        "unmatched target": pooled([m.tgt_unmatched for m in matches], target.p, ct),
    }


def reliability(p: ArrayLike, correct: ArrayLike, bins: int = 10) -> pd.DataFrame:
    """Reliability diagram: equal-width confidence bins on [0, 1] (p = 1 in the last).

    Parameters
    ----------
    p : array_like
        Predicted probabilities.
    correct : array_like
        Whether each prediction was right.
    bins : int
        Number of bins.

    Returns
    -------
    pandas.DataFrame
        bin, lo, hi, confidence (mean p in the bin), accuracy, count. Empty bins keep count 0
        and NaN confidence and accuracy, so tables from different subsets line up.
    """
    if int(bins) != bins or bins < 1:
        raise InputError(f"The number of confidence bins must be an integer >= 1, got {bins!r}.")
    bins = int(bins)
    p = np.asarray(p, dtype=np.float64)
    c = np.asarray(correct, dtype=np.float64)
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    count = np.bincount(which, minlength=bins)
    sum_p = np.bincount(which, weights=p, minlength=bins)
    sum_c = np.bincount(which, weights=c, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.where(count > 0, sum_p / np.maximum(count, 1), np.nan)
        acc = np.where(count > 0, sum_c / np.maximum(count, 1), np.nan)
    edges = np.linspace(0.0, 1.0, bins + 1)
    return pd.DataFrame(
        {
            "bin": np.arange(bins),
            "lo": edges[:-1],
            "hi": edges[1:],
            "confidence": conf,
            "accuracy": acc,
            "count": count.astype(np.int64),
        }
    )


def subset_reliability(
    source: Predictions, target: Predictions, matches: Sequence[MatchRun], bins: int = 10
) -> pd.DataFrame:
    """:func:`reliability` for each subset, stacked with a ``subset`` column (Anzaku et al. (2022),
    *A Principled Evaluation Protocol for Comparative Investigation of the Effectiveness of DNN
    Classification Models on Similar-but-non-identical Datasets*, Fig. 5a).

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    matches : sequence of MatchRun
        The runs.
    bins : int
        Number of bins.

    Returns
    -------
    pandas.DataFrame
    """
    parts = []
    for name, (p, c) in subset_arrays(source, target, matches).items():
        part = reliability(p, c, bins=bins)
        part.insert(0, "subset", name)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def subset_density(
    source: Predictions, target: Predictions, matches: Sequence[MatchRun], bins: int = 20
) -> pd.DataFrame:
    """Histogram density of predicted probabilities per subset on [0, 1] (Anzaku et al. (2022), *A
    Principled Evaluation Protocol for Comparative Investigation of the Effectiveness of DNN
    Classification Models on Similar-but-non-identical Datasets*, Fig. 5b).

    A histogram rather than a kernel estimate: max-softmax values pile up at 1, where a
    kernel would leak mass past the boundary.

    Parameters
    ----------
    source, target : Predictions
        The model's outputs on both sets.
    matches : sequence of MatchRun
        The runs.
    bins : int
        Number of bins.

    Returns
    -------
    pandas.DataFrame
        subset, p (bin centre), density (integrates to 1 over [0, 1]; all zero for an empty
        subset), count.
    """
    if int(bins) != bins or bins < 1:
        raise InputError(f"The number of density bins must be an integer >= 1, got {bins!r}.")
    bins = int(bins)
    edges = np.linspace(0.0, 1.0, bins + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    parts = []
    for name, (p, _) in subset_arrays(source, target, matches).items():
        count, _ = np.histogram(p, bins=edges)
        total = count.sum()
        density = count * bins / total if total else np.zeros(bins)
        parts.append(
            pd.DataFrame({"subset": name, "p": centres, "density": density, "count": count})
        )
    return pd.concat(parts, ignore_index=True)
