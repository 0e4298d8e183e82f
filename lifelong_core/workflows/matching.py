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
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.matching import (
    check_params,
    matched_accuracy,
    subset_density,
    subset_reliability,
)
from lifelong_core.matching.comparison import TABLE_COLUMNS
from lifelong_core.matching.store_pair import (
    DEMO_DATASET,
    DEMO_SOURCE_DOMAIN,
    DEMO_TARGET_DOMAIN,
    PairData,
    PairSamples,
    Side,
    compare_pair,
    load_pair,
    model_names,
    read_samples,
)
from lifelong_core.workflows.selection import kept_digest, recorded_models

if TYPE_CHECKING:
    from lifelong_core.store import Store
    from lifelong_core.store.kept_results import KeptResults

# An all-model comparison is run (and cached, and reported) in about this many blocks:
# few, since each block pays one scan of the store's extras and one pass of the matcher
# over every target, whatever its number of models.
BLOCKS = 5
# Dense extras per model and datapoint while a block is matched: label, predicted and
# confidence, 9 bytes at most each.
EXTRA_BYTES = 9 * 3

# The page's settings before a widget is touched (the paper's epsilon of 0.005, §3).
DEFAULT_EPS = 0.005
DEFAULT_CRITERION: Literal["label-prob", "prob"] = "label-prob"
DEFAULT_RUNS = 10
DEFAULT_SEED = 0

# What a kept block comparison is filed under (store.kept_results), and the version of
# its digest.
KEPT_KIND = "matching"
KEPT_FORMAT = 1


def default_dataset(datasets: Sequence[str]) -> str:
    """The dataset both sides of the page start on: the demo's when the store has it, else
    the store's first.

    Parameters
    ----------
    datasets : sequence of str
        The store's datasets, in its order (not empty).

    Returns
    -------
    str
    """
    return DEMO_DATASET if DEMO_DATASET in datasets else datasets[0]


def default_domains(domains: Sequence[str], role: Literal["source", "target"]) -> list[str]:
    """The domains a side starts on: the demo's replication pair where the dataset has it,
    else none (the whole dataset).

    Parameters
    ----------
    domains : sequence of str
        The side's dataset's domains.
    role : {"source", "target"}
        Which side.

    Returns
    -------
    list of str
    """
    wanted = DEMO_SOURCE_DOMAIN if role == "source" else DEMO_TARGET_DOMAIN
    return [wanted] if wanted in domains else []


def default_sides(store: Store, dataset: str) -> tuple[Side, Side]:
    """The two sides the page shows for ``dataset`` before a widget is touched (the page's
    first view when ``dataset`` is :func:`default_dataset`).

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.

    Returns
    -------
    tuple of Side
        Source and target, each with ``domains`` None for the whole dataset.
    """
    domains = store.domains(dataset)["domain"].tolist()
    src = default_domains(domains, "source")
    tgt = default_domains(domains, "target")
    return Side(dataset, tuple(src) or None), Side(dataset, tuple(tgt) or None)


def compare_block(
    store: Store,
    pair: PairSamples,
    rows: Sequence[int],
    *,
    eps: float,
    criterion: str,
    runs: int,
    seed: int,
    kept: KeptResults | None = None,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """One block of models through the matched-accuracy protocol, as the page runs it
    (Anzaku et al., 2022, §2.3, Algorithms 1 and 2).

    Models without predicted labels or confidences on the chosen samples are left out and
    named, not an error: a block of them comes back with an empty table.

    Parameters
    ----------
    store : Store
        An open store.
    pair : PairSamples
        The two sides' samples (:func:`lifelong_core.matching.store_pair.read_samples`).
    rows : sequence of int
        ``model_idx`` of the block's models.
    eps : float
        Match when the confidences differ by at most ``eps``.
    criterion : {"label-prob", "prob"}
        Algorithm 1 or 2.
    runs, seed : int
        Seeded runs per model.
    kept : KeptResults, optional
        Results kept in the store (:mod:`lifelong_core.store.kept_results`). A table kept
        under the digest of this block's labels, predicted labels, confidences and model
        names, the settings and the code's version is read instead of matching again;
        one computed is kept when ``kept`` writes (``lbe state --refresh`` keeps the
        page's default view).

    Returns
    -------
    tuple
        The comparison table (one row per model,
        :class:`~lifelong_core.matching.comparison.ModelComparison` ``table``) and the
        models left out, each with the reason.

    Raises
    ------
    InputError
        If a parameter is invalid or a row is not a model of the store.
    """
    criterion = check_params(eps, criterion, runs, seed)
    data = load_pair(store, pair, rows, require_any=False)
    if not data.models:
        return pd.DataFrame({c: [] for c in TABLE_COLUMNS}), data.skipped
    if kept is None:
        return compare_pair(data, eps, criterion, runs, seed).table, data.skipped
    settings = {"eps": float(eps), "criterion": criterion, "runs": int(runs), "seed": int(seed)}
    tables = kept.get_or_compute(
        _kept_key(data, list(settings.values())),
        KEPT_KIND,
        ("table",),
        lambda: {"table": compare_pair(data, eps, criterion, runs, seed).table},
        {**settings, "models": len(data.models)},
    )
    return tables["table"], data.skipped


def _kept_key(data: PairData, args: list) -> str:
    """The digest a block's table is kept under: everything that can change a number."""
    import json

    def parts() -> Iterator[bytes]:
        for a in (
            data.y_source,
            data.pred_source,
            data.conf_source,
            data.y_target,
            data.pred_target,
            data.conf_target,
        ):
            arr = np.ascontiguousarray(a)
            yield json.dumps([arr.dtype.str, list(arr.shape)]).encode()
            yield arr.tobytes()

    return kept_digest([KEPT_KIND, KEPT_FORMAT], args + [list(data.models)], parts())


def default_view_blocks(store: Store, dataset: str) -> tuple[PairSamples, list] | None:
    """The page's first view of ``dataset`` as the blocks it matches, or None when it
    shows no comparison (unlabelled samples, no predicted labels or confidences, fewer
    than one comparable model, or more work than a page view may do).

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.

    Returns
    -------
    tuple or None
        The sides' samples (:class:`~lifelong_core.matching.store_pair.PairSamples`)
        and the blocks of ``model_idx`` (:func:`model_blocks`).
    """
    src, tgt = default_sides(store, dataset)
    sides = ((src.dataset, src.domains), (tgt.dataset, tgt.domains))
    # An unlabelled dataset is among what missing_columns names (a side with a label missing).
    if missing_columns(store, *sides):
        return None
    try:
        pair = read_samples(store, src, tgt)
    except InputError:  # the page says why instead of comparing
        return None
    rows = list(comparable_models(store, *sides).values())
    n_src, n_tgt = len(pair.source_idx), len(pair.target_idx)
    try:
        limits.check_match_work(len(rows), DEFAULT_RUNS, n_src, n_tgt)
    except InputError:
        return None
    return (pair, model_blocks(rows, n_src, n_tgt)) if rows else None


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
