"""Matched accuracy on a store: which datasets and models a comparison can use, what the
data lacks, how the models are cut into blocks, and one model in detail (Esla Timothy
Anzaku, Haohan Wang, Arnout Van Messem, Wesley De Neve, *A Principled Evaluation Protocol
for Comparative Investigation of the Effectiveness of DNN Classification Models on
Similar-but-non-identical Datasets*, §2, Algorithms 1 and 2).

The protocol itself is :mod:`lifelong_core.matching`; these are the rules the Matched
accuracy page applies around it, written once and testable without Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import pandas as pd

from lifelong_core import limits
from lifelong_core.matching import matched_accuracy, subset_density, subset_reliability
from lifelong_core.matching.store_pair import PairSamples, load_pair, model_names
from lifelong_core.workflows.selection import recorded_models

if TYPE_CHECKING:
    from lifelong_core.store import Store

# An all-model comparison is run (and cached, and reported) in about this many blocks:
# few, since each block pays one scan of the store's extras and one pass of the matcher
# over every target, whatever its number of models.
BLOCKS = 5
# Dense extras per model and datapoint while a block is matched: label, predicted and
# confidence, 9 bytes at most each.
EXTRA_BYTES = 9 * 3


def unlabeled_datasets(store: Store, datasets: Sequence[str]) -> list[str]:
    """Those of ``datasets`` (once each) whose samples carry no label at all: they record
    only whether each answer was correct, and matched accuracy has nothing to match on.

    The Matched accuracy page says so instead of failing on the first sample (lm-eval
    per-item scores, such as the bundled Open LLM Leaderboard results, are of this kind).

    Parameters
    ----------
    store : Store
        An open store.
    datasets : sequence of str
        Dataset names (a name may repeat, e.g. source and target the same).

    Returns
    -------
    list of str
        The unlabelled ones, in the order first given.
    """
    return [d for d in dict.fromkeys(datasets) if store.samples(dataset=d)["label"].isna().all()]


def comparable_models(
    store: Store, source: tuple[str, Sequence[str] | None], target: tuple[str, Sequence[str] | None]
) -> dict[str, int]:
    """The real models recorded on both sides of a comparison, by display name.

    Only these are offered: another dataset's models have nothing to compare here, and a
    row inserted as an estimate is a prediction, not an evaluation.

    Parameters
    ----------
    store : Store
        An open store.
    source, target : tuple of (str, sequence of str or None)
        Each side's dataset and its domains (None or empty = every domain).

    Returns
    -------
    dict of str to int
        Display name (as the comparison names models) -> ``model_idx``, in store order.
    """
    both = set(recorded_models(store, source[0], source[1] or None)["model_idx"].astype(int))
    both &= set(recorded_models(store, target[0], target[1] or None)["model_idx"].astype(int))
    models = store.models()
    return {
        name: int(i) for name, i in zip(model_names(models), models["model_idx"]) if int(i) in both
    }


def missing_columns(
    store: Store, source: tuple[str, Sequence[str] | None], target: tuple[str, Sequence[str] | None]
) -> list[str]:
    """What the data lacks for matched accuracy: ``label (<dataset>)`` for a side whose
    samples are not all labelled, ``predicted`` and ``confidence`` when the store records
    none.

    The protocol matches datapoints on the predicted label and its confidence (Anzaku et
    al., 2022, §2, Algorithms 1 and 2), so the page lists these as what an import must
    carry, instead of an error.

    Parameters
    ----------
    store : Store
        An open store.
    source, target : tuple of (str, sequence of str or None)
        Each side's dataset and its domains (None or empty = every domain).

    Returns
    -------
    list of str
        The missing columns, each once; empty when matched accuracy can run.
    """
    need: list[str] = []
    for ds, doms in (source, target):
        smp = store.samples(ds, list(doms) if doms else None)
        if len(smp) and smp["label"].isna().any() and f"label ({ds})" not in need:
            need.append(f"label ({ds})")
    return need + [f for f in ("predicted", "confidence") if not store.has_extra(f)]


def model_blocks(rows: Sequence[int], n_source: int, n_target: int) -> list[tuple[int, ...]]:
    """``rows`` in blocks of at most ``len(rows) / BLOCKS`` models, each small enough that
    its dense extras on both sides (read together) stay within the dense-read limit.

    An all-model comparison is matched (and cached, and its progress reported) block by
    block.

    Parameters
    ----------
    rows : sequence of int
        ``model_idx`` of the models to compare, in the order they are matched.
    n_source, n_target : int
        Datapoints on the source and the target side.

    Returns
    -------
    list of tuple of int
        Consecutive blocks of ``rows``, none empty, all of one size but the last.
    """
    size = max(
        1,
        min(
            math.ceil(len(rows) / BLOCKS),
            limits.block_rows(n_source + n_target, EXTRA_BYTES),
        ),
    )
    return [tuple(rows[i : i + size]) for i in range(0, len(rows), size)]


def all_models_table(tables: Sequence[pd.DataFrame]) -> pd.DataFrame | None:
    """The blocks' tables as one, by increasing source accuracy (then name); None when no
    model could be compared.

    Parameters
    ----------
    tables : sequence of pandas.DataFrame
        Each block's comparison table
        (:class:`~lifelong_core.matching.comparison.ModelComparison` ``table``: one row
        per model, with ``model`` and ``acc_source`` among its columns); empty ones are
        left out.

    Returns
    -------
    pandas.DataFrame or None
        The rows of every block, with a fresh index.
    """
    kept = [t for t in tables if len(t)]
    if not kept:
        return None
    return (
        pd.concat(kept, ignore_index=True)
        .sort_values(["acc_source", "model"], kind="stable")
        .reset_index(drop=True)
    )


def model_detail(
    store: Store,
    pair: PairSamples,
    row: int,
    *,
    eps: float,
    criterion: Literal["label-prob", "prob"],
    runs: int,
    seed: int,
) -> dict:
    """One model's matched accuracy on the pair with what the page shows of it: the
    metrics, the datapoints on each side, the per-run table, the standard errors of the
    matched accuracies, and the reliability and density of every subset (Anzaku et al.,
    2022, §2.3 and §4).

    Parameters
    ----------
    store : Store
        An open store.
    pair : PairSamples
        The two sides' samples (:func:`lifelong_core.matching.store_pair.read_samples`).
    row : int
        The model's ``model_idx``.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 (same predicted label and close confidence) or Algorithm 2
        (confidence only).
    runs : int
        Seeded matching runs to average over.
    seed : int
        Seed of the runs.

    Returns
    -------
    dict
        ``model`` (its name), ``metrics`` (the summary as JSON-ready numbers),
        ``n_source``, ``n_target``, ``per_run`` (one row per run), ``se`` (standard error
        of ``matched_acc_source`` and ``matched_acc_target``), ``reliability`` (10 bins)
        and ``density`` (20 bins) of each subset.

    Raises
    ------
    InputError
        If the model lacks predicted labels or confidences on the chosen samples, or a
        parameter is out of range.
    """
    data = load_pair(store, pair, [row])
    source, target = data.predictions(data.models[0])
    summary = matched_accuracy(source, target, eps=eps, criterion=criterion, runs=runs, seed=seed)
    return {
        "model": data.models[0],
        "metrics": summary.to_json_dict(),
        "n_source": summary.n_source,
        "n_target": summary.n_target,
        "per_run": summary.per_run,
        "se": {c: summary.standard_error(c) for c in ("matched_acc_source", "matched_acc_target")},
        "reliability": subset_reliability(source, target, summary.matches, bins=10),
        "density": subset_density(source, target, summary.matches, bins=20),
    }
