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
from typing import Literal

import pandas as pd

from lifelong_core import limits
from lifelong_core.matching import matched_accuracy, subset_density, subset_reliability
from lifelong_core.matching.store_pair import load_pair, model_names
from lifelong_core.workflows.selection import recorded_models

# An all-model comparison is run (and cached, and reported) in about this many blocks.
BLOCKS = 20
# Dense extras per model and datapoint while a block is matched: label, predicted and
# confidence, 9 bytes at most each.
EXTRA_BYTES = 9 * 3


def unlabeled_datasets(store, datasets: Sequence[str]) -> list[str]:
    """Those of ``datasets`` (once each) whose samples carry no label at all: they record
    only whether each answer was correct, and matched accuracy has nothing to match on."""
    return [d for d in dict.fromkeys(datasets) if store.samples(dataset=d)["label"].isna().all()]


def comparable_models(
    store, source: tuple[str, Sequence[str] | None], target: tuple[str, Sequence[str] | None]
) -> dict[str, int]:
    """Display name -> ``model_idx`` of the real models recorded on both sides (each side
    a dataset and its domains, None = all), named as the comparison names them."""
    both = set(recorded_models(store, source[0], source[1] or None)["model_idx"].astype(int))
    both &= set(recorded_models(store, target[0], target[1] or None)["model_idx"].astype(int))
    models = store.models()
    return {
        name: int(i) for name, i in zip(model_names(models), models["model_idx"]) if int(i) in both
    }


def missing_columns(
    store, source: tuple[str, Sequence[str] | None], target: tuple[str, Sequence[str] | None]
) -> list[str]:
    """What the data lacks for matched accuracy: ``label (<dataset>)`` for a side whose
    samples are not all labelled, ``predicted`` and ``confidence`` when the store records
    none."""
    need: list[str] = []
    for ds, doms in (source, target):
        smp = store.samples(ds, list(doms) if doms else None)
        if len(smp) and smp["label"].isna().any() and f"label ({ds})" not in need:
            need.append(f"label ({ds})")
    return need + [f for f in ("predicted", "confidence") if not store.has_extra(f)]


def model_blocks(rows: Sequence[int], n_source: int, n_target: int) -> list[tuple[int, ...]]:
    """``rows`` in blocks of at most ``len(rows) / BLOCKS`` models, each small enough that
    its dense extras on the larger side stay within the dense-read limit."""
    size = max(
        1,
        min(
            math.ceil(len(rows) / BLOCKS),
            limits.block_rows(max(n_source, n_target), EXTRA_BYTES),
        ),
    )
    return [tuple(rows[i : i + size]) for i in range(0, len(rows), size)]


def all_models_table(tables: Sequence[pd.DataFrame]) -> pd.DataFrame | None:
    """The blocks' tables as one, by increasing source accuracy (then name); None when no
    model could be compared."""
    kept = [t for t in tables if len(t)]
    if not kept:
        return None
    return (
        pd.concat(kept, ignore_index=True)
        .sort_values(["acc_source", "model"], kind="stable")
        .reset_index(drop=True)
    )


def model_detail(
    store,
    pair,
    row: int,
    *,
    eps: float,
    criterion: Literal["label-prob", "prob"],
    runs: int,
    seed: int,
) -> dict:
    """One model's matched accuracy on the pair with what the page shows of it: the
    metrics, the datapoints on each side, the per-run table, the standard errors of the
    matched accuracies, and the reliability and density of every subset."""
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
