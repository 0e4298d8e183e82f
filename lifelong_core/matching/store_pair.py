"""Source and target sets taken from the store, ready for the matching protocol.

A *side* is a dataset, optionally narrowed to some of its domains (the demo's
replication pair is dataset ``lifelong-digits``, domains ``clean`` and
``clean-replication``). Per docs/development/contracts.md the inputs of Anzaku et al.'s tuple
``(y, y_hat, p_hat)`` come from the store as: ``y`` = sample label,
``y_hat`` = extra field ``predicted``, ``p_hat`` = extra field ``confidence`` (max
softmax). This module talks to a :class:`~lifelong_core.store.Store` only through its
public read methods, so it never touches DuckDB itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.matching.comparison import ModelComparison, compare_models
from lifelong_core.matching.data import Predictions, make_predictions

if TYPE_CHECKING:
    from lifelong_core.store.store import Store

FIELDS = ("predicted", "confidence")
DEMO_DATASET = "lifelong-digits"
DEMO_SOURCE_DOMAIN = "clean"
DEMO_TARGET_DOMAIN = "clean-replication"


@dataclass(frozen=True)
class Side:
    """A dataset, or some of its domains, as one side of a comparison.

    Attributes
    ----------
    dataset : str
        The dataset.
    domains : tuple of str, optional
        Its domains on this side; None means all of them.
    """

    dataset: str
    domains: tuple[str, ...] | None = None

    def describe(self) -> str:
        """The side in words: ``dataset (all domains)`` or ``dataset / a, b``."""
        if not self.domains:
            return f"{self.dataset} (all domains)"
        return f"{self.dataset} / {', '.join(self.domains)}"


@dataclass(frozen=True, eq=False)
class PairData:
    """Labels, predicted labels and confidences of the chosen models on both sides.

    Attributes
    ----------
    source, target : Side
        The two test sets compared.
    models : tuple of str
        Display names of the models read, unique.
    model_idx : numpy.ndarray
        Their store rows, aligned with ``models``.
    y_source, y_target : numpy.ndarray
        Each side's sample labels.
    pred_source, pred_target : numpy.ndarray
        Predicted labels, (models, samples of the side).
    conf_source, conf_target : numpy.ndarray
        Confidences (max softmax), (models, samples of the side).
    skipped : tuple of str
        Models left out for lack of predicted labels or confidences, each with the reason.
    """

    source: Side
    target: Side
    models: tuple[str, ...]  # display names, unique
    model_idx: np.ndarray  # store rows, aligned with ``models``
    y_source: np.ndarray
    pred_source: np.ndarray  # (models, source samples)
    conf_source: np.ndarray
    y_target: np.ndarray
    pred_target: np.ndarray
    conf_target: np.ndarray
    skipped: tuple[str, ...] = ()  # models left out, each with the reason

    def predictions(self, model: str) -> tuple[Predictions, Predictions]:
        """Source and target :class:`Predictions` of one model.

        Parameters
        ----------
        model : str
            One of :attr:`models`.

        Returns
        -------
        tuple of Predictions
            Its source and its target predictions.
        """
        k = self.models.index(model)
        return (
            make_predictions(
                self.y_source,
                self.pred_source[k],
                self.conf_source[k],
                name=f"source {self.source.describe()} (model {model})",
            ),
            make_predictions(
                self.y_target,
                self.pred_target[k],
                self.conf_target[k],
                name=f"target {self.target.describe()} (model {model})",
            ),
        )


def model_names(models: pd.DataFrame) -> list[str]:
    """Display name per store model: its name, or ``name [model_id]`` where names repeat.

    Parameters
    ----------
    models : pandas.DataFrame
        The store's models table (``Store.models()``).

    Returns
    -------
    list of str
        One name per row, in order.
    """
    names = models["name"].fillna(models["model_id"]).astype(str)
    dup = names.duplicated(keep=False)
    return [f"{n} [{i}]" if d else n for n, i, d in zip(names, models["model_id"].astype(str), dup)]


def _samples(store: Store, side: Side, role: str) -> pd.DataFrame:
    known = set(store.datasets()["dataset"])
    if side.dataset not in known:
        raise InputError(f"The store has no dataset {side.dataset!r} (the {role} set).")
    if side.domains is not None:
        have = set(store.domains(side.dataset)["domain"])
        missing = [d for d in side.domains if d not in have]
        if missing:
            raise InputError(
                f"Dataset {side.dataset!r} has no domain {missing[0]!r} (the {role} set)."
            )
    smp = store.samples(dataset=side.dataset, domains=list(side.domains) if side.domains else None)
    if smp.empty:
        raise InputError(f"The {role} set {side.describe()} has no samples.")
    unlabeled = smp["label"].isna().to_numpy()
    if unlabeled.any():
        sid = smp["sample_id"].iloc[int(np.flatnonzero(unlabeled)[0])]
        raise InputError(
            f"The {role} set {side.describe()} has samples without a label (first: {sid!r}); "
            "matched accuracy needs the label column."
        )
    return smp


@dataclass(frozen=True, eq=False)
class PairSamples:
    """Which store columns (samples) and rows (models) a comparison reads; labels included.

    Reading this once and reusing it for every block of models saves a round of
    dataset/domain/sample queries per block.

    Attributes
    ----------
    source, target : Side
        The two test sets compared.
    source_idx, target_idx : numpy.ndarray
        The ``sample_idx`` of each side's samples, in store order.
    y_source, y_target : numpy.ndarray
        Each side's sample labels, in the same order.
    model_names : dict
        ``model_idx`` -> display name, for every model in the store.
    """

    source: Side
    target: Side
    source_idx: np.ndarray
    y_source: np.ndarray
    target_idx: np.ndarray
    y_target: np.ndarray
    model_names: dict


def read_samples(store: Store, source: Side, target: Side) -> PairSamples:
    """Labels and sample indices of both sides, and the store's model names.

    Parameters
    ----------
    store : Store
        An open store.
    source, target : Side
        The two sides.

    Returns
    -------
    PairSamples

    Raises
    ------
    InputError
        If a side names an unknown dataset or domain, is empty, or has unlabelled samples.
    """
    smp_s = _samples(store, source, "source")
    smp_t = _samples(store, target, "target")
    table = store.models()
    return PairSamples(
        source=source,
        target=target,
        source_idx=smp_s["sample_idx"].to_numpy(dtype=np.int64),
        y_source=smp_s["label"].to_numpy(dtype=np.int64),
        target_idx=smp_t["sample_idx"].to_numpy(dtype=np.int64),
        y_target=smp_t["label"].to_numpy(dtype=np.int64),
        model_names=dict(zip(table["model_idx"].astype(int).tolist(), model_names(table))),
    )


def _extras(
    store: Store, rows: np.ndarray, pair: PairSamples
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    # Both sides in one read: each read scans the store's lists once, whatever it keeps.
    both = store.extras(
        models=rows, samples=np.concatenate([pair.source_idx, pair.target_idx]), fields=FIELDS
    )
    cut = len(pair.source_idx)
    ex_s = {f: np.ascontiguousarray(v[:, :cut]) for f, v in both.items()}
    ex_t = {f: np.ascontiguousarray(v[:, cut:]) for f, v in both.items()}
    return ex_s, ex_t


def load_pair(
    store: Store, pair: PairSamples, models: Sequence[int] | None = None, require_any: bool = True
) -> PairData:
    """Read predicted labels and confidences of the given store rows on both sides of ``pair``.

    Models without ``predicted`` and ``confidence`` on every chosen sample are left out and
    listed in ``skipped`` with the store's reason.

    Parameters
    ----------
    store : Store
        An open store.
    pair : PairSamples
        From :func:`read_samples`.
    models : sequence of int, optional
        ``model_idx`` of the models (None: every model).
    require_any : bool
        Raise when no model is left (else the result has no models).

    Returns
    -------
    PairData

    Raises
    ------
    InputError
        If no model is left and ``require_any``, saying which column is missing.
    """
    names_all = pair.model_names
    if models is None:
        rows = np.asarray(sorted(names_all), dtype=np.int64)
    else:
        rows = np.asarray(list(models), dtype=np.int64)
    if rows.size == 0:
        raise InputError("No models to compare: the store has none, or none was chosen.")
    unknown = [int(r) for r in rows if int(r) not in names_all]
    if unknown:
        raise InputError(f"The store has no model with index {unknown[0]}.")
    skipped: list[str] = []
    try:
        ex_s, ex_t = _extras(store, rows, pair)
        keep = rows
    except InputError as first:
        # One model without confidences must not hide the others: find who lacks what.
        kept, parts_s, parts_t = [], [], []
        for r in rows:
            try:
                es, et = _extras(store, np.array([r]), pair)
            except InputError as exc:
                skipped.append(f"{names_all[int(r)]}: {exc}")
                continue
            kept.append(r)
            parts_s.append(es)
            parts_t.append(et)
        if not kept and require_any:
            raise InputError(
                f"{first} Matched accuracy needs the label, predicted and confidence columns."
            ) from None
        keep = np.asarray(kept, dtype=np.int64)
        empty = {
            "predicted": np.zeros((0, 0), np.int32),
            "confidence": np.zeros((0, 0), np.float32),
        }
        ex_s = {f: np.concatenate([p[f] for p in parts_s]) if parts_s else empty[f] for f in FIELDS}
        ex_t = {f: np.concatenate([p[f] for p in parts_t]) if parts_t else empty[f] for f in FIELDS}
    return PairData(
        source=pair.source,
        target=pair.target,
        models=tuple(names_all[int(r)] for r in keep),
        model_idx=keep,
        y_source=pair.y_source,
        pred_source=ex_s["predicted"],
        conf_source=ex_s["confidence"],
        y_target=pair.y_target,
        pred_target=ex_t["predicted"],
        conf_target=ex_t["confidence"],
        skipped=tuple(skipped),
    )


def compare_pair(
    data: PairData,
    eps: float = 0.005,
    criterion: str = "label-prob",
    runs: int = 10,
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
) -> ModelComparison:
    """:func:`~lifelong_core.matching.comparison.compare_models` on a :class:`PairData`.

    Parameters
    ----------
    data : PairData
        From :func:`load_pair`.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 or 2.
    runs, seed : int
        Seeded runs per model.
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    ModelComparison

    Raises
    ------
    InputError
        If a parameter is invalid.
    """
    return compare_models(
        data.models,
        data.y_source,
        data.pred_source,
        data.conf_source,
        data.y_target,
        data.pred_target,
        data.conf_target,
        eps=eps,
        criterion=criterion,
        runs=runs,
        seed=seed,
        progress=progress,
    )
