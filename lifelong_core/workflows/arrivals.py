"""The lifelong flows for something new: a new model (insert_M) and new samples (insert_D).

Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
§2 and §3.2-3.3. A new model: choose the few samples to run it on, read its results
back, estimate its accuracy and every other sample, and, if wanted, write a row marked
*estimated* (left out of every score, see :mod:`~lifelong_core.workflows.selection`).
New samples: choose the few models to run on them, read their results back, estimate
every model on each sample and its place in the difficulty order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.tables import read_csv_table
from lifelong_core.methods import InsertD, get_method
from lifelong_core.methods.base import Estimate
from lifelong_core.methods.registry import predicts_samples
from lifelong_core.sortsearch import compute_order
from lifelong_core.store import text_column
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.uploads import result_values, split_columns

NEW_MODEL_COLUMNS = ("sample_id", "correct")
NEW_SAMPLE_COLUMNS = ("model_id", "sample_id", "correct")
# The columns of the downloaded list of samples to run (plus ``correct``, left empty for
# the user to fill): coming back in the upload, they are expected, not "ignored".
NEW_MODEL_LIST_COLUMNS = ("sample_id", "domain")


def samples_to_run(sel: Selection, cols: np.ndarray) -> pd.DataFrame:
    """The downloadable list of the samples to run a new model on: ``sample_id``,
    ``domain`` and an empty ``correct`` column to fill in and upload as it is."""
    out = sel.samples.iloc[np.asarray(cols, dtype=np.int64)][list(NEW_MODEL_LIST_COLUMNS)]
    return out.reset_index(drop=True).assign(correct="")


# ------------------------------------------------------------------ fitting on the cache
def fit_new_model_method(sel: Selection, search: str):
    """``search`` fitted on every row of ``sel`` (Sort by sum)."""
    A = sel.dense()
    return get_method(search).fit(A, compute_order(A, "sum"))


def fit_new_sample_method(sel: Selection, rule: str, sampling: str) -> InsertD:
    """insert_D fitted on every row of ``sel``."""
    return InsertD(rule=rule, sampling=sampling).fit(sel.dense())


# ------------------------------------------------------------------ reading results back
def read_results(
    data: bytes, name: str, columns: tuple[str, ...], known: tuple[str, ...] = ()
) -> pd.DataFrame:
    """A results CSV with the named columns, validated like a store import; other columns
    are ignored and listed in ``attrs["ignored"]``, except the ``known`` ones (those of a
    list the page itself gave out, e.g. :data:`NEW_MODEL_LIST_COLUMNS`).

    Ids go through the store's text validation, so a bad file gets the same one sentence
    (file, row, column) as ``import`` would give; ``correct`` may be 0/1, true/false or
    yes/no (:func:`~lifelong_core.workflows.uploads.result_values`). Repeated rows with
    the same ``correct`` are kept once.
    """
    source = f"uploaded file {name}"
    if not name.lower().endswith(".csv"):
        raise InputError(
            f"{source} is not a .csv file; upload a CSV table with columns {', '.join(columns)}."
        )
    df = read_csv_table(data, source)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(
            f"{source} has no column {missing[0]!r} (columns found: {', '.join(df.columns) or 'none'}); "
            f"expected {', '.join(columns)}."
        )
    # The downloaded list with a result column added comes back with the list's own columns:
    # they are set aside (named in ``attrs["ignored"]`` for the page to say so), not refused.
    _, extra = split_columns(df.columns, columns)
    if len(df) == 0:
        raise InputError(f"{source} has no data rows.")
    out = pd.DataFrame({c: text_column(df[c], c, source) for c in columns if c != "correct"})
    out["correct"] = result_values(df["correct"], "correct", source)
    keys = [c for c in columns if c != "correct"]
    dup = out.duplicated(keys, keep=False)
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        same = out[dup].groupby(keys)["correct"].nunique()
        if (same > 1).any():
            raise InputError(
                f"{source} row {i + 1} repeats {', '.join(keys)} {tuple(out.loc[i, keys])} with a different "
                "'correct' value."
            )
        out = out.drop_duplicates(keys).reset_index(drop=True)
    out.attrs["ignored"] = [c for c in extra if c not in known]
    return out


def match_observations(
    results: pd.DataFrame, wanted_ids: list[str], id_col: str, name: str
) -> tuple[np.ndarray, int]:
    """Observed 0/1 values in the order of ``wanted_ids``; InputError naming the first id
    the file lacks. Returns the values and how many rows of the file were not asked for."""
    by_id = dict(zip(results[id_col], results["correct"]))
    missing = [i for i in wanted_ids if i not in by_id]
    if missing:
        raise InputError(
            f"uploaded file {name} has no result for {id_col} {missing[0]!r} ({len(missing)} of the "
            f"{len(wanted_ids)} requested are missing)."
        )
    extra = len(set(by_id) - set(wanted_ids))
    return np.array([by_id[i] for i in wanted_ids], dtype=np.uint8), extra


# ------------------------------------------------------------------ a new model
@dataclass(frozen=True)
class NewModelEstimate:
    """A new model's estimate from its results on the chosen samples ``cols`` of a selection.

    ``rank``: where its estimated accuracy would rank among the selection's models (1 =
    best, of ``len(accuracies) + 1``); ``per_sample``: sample_id, domain, category,
    predicted_correct (p_correct where the method gives one), evaluated; ``by_domain``:
    predicted accuracy per (category, domain).
    """

    estimate: Estimate
    observed: np.ndarray
    cols: np.ndarray
    accuracies: pd.DataFrame
    rank: int
    per_sample: pd.DataFrame
    by_domain: pd.DataFrame
    predicts_samples: bool = True


def estimate_new_model(
    sel: Selection,
    method,
    cols: np.ndarray,
    observed: np.ndarray,
    accuracies: np.ndarray | None = None,
) -> NewModelEstimate:
    """Estimate a new model from ``observed`` results on samples ``cols`` with a fitted ``method``.

    ``accuracies`` of the selection's models (default: from ``sel.A``; a large store passes
    its kept row sums)."""
    est = method.estimate(cols, observed)
    accs = pd.DataFrame(
        {
            "name": sel.names,
            "accuracy": sel.dense().mean(axis=1) if accuracies is None else accuracies,
        }
    )
    rank = int((accs["accuracy"] > est.acc).sum()) + 1
    predicts = predicts_samples(method)
    pred = sel.samples[["sample_id", "domain", "category"]].copy()
    pred["evaluated"] = False
    pred.loc[cols, "evaluated"] = True
    if predicts:
        pred["predicted_correct"] = np.asarray(est.per_sample, dtype=np.uint8)
        if est.prob is not None:
            pred["p_correct"] = np.asarray(est.prob, dtype=float)
    else:
        # No prediction for the samples not run (the random baseline): a domain's estimate
        # is the share right among its evaluated samples, NaN where none was run.
        col = pd.Series(np.nan, index=pred.index)
        col.loc[cols] = np.asarray(observed, dtype=float)
        pred["predicted_correct"] = col
    pred = pred[
        ["sample_id", "domain", "category", "predicted_correct"]
        + (["p_correct"] if "p_correct" in pred else [])
        + ["evaluated"]
    ]
    # Datasets imported without categories (an lm-eval task outside any group) have none:
    # a group key of NaN would drop every row and leave the table empty.
    by_domain = pred.groupby(["category", "domain"], as_index=False, sort=False, dropna=False).agg(
        samples=("sample_id", "size"),
        predicted_accuracy=("predicted_correct", "mean"),
        evaluated=("evaluated", "sum"),
    )
    return NewModelEstimate(est, observed, cols, accs, rank, pred, by_domain, predicts)


def estimated_model_rows(
    new: NewModelEstimate, name: str, provenance: dict
) -> tuple[np.ndarray, pd.DataFrame]:
    """The row to insert for a new model (observed results where evaluated, predictions
    elsewhere) and its model table, marked *estimated* with ``provenance`` as metadata.

    InputError for a method that predicts no unevaluated sample: it has no row to insert."""
    if not new.predicts_samples:
        raise InputError(
            "this method predicts no sample it was not run on, so there is no estimated row to "
            "insert; choose a method that predicts every sample."
        )
    row = np.asarray(new.estimate.per_sample, dtype=np.uint8).copy()
    row[new.cols] = new.observed
    models = pd.DataFrame(
        {
            "model_id": [name],
            "name": [name],
            "family": ["estimated"],
            "estimated": [True],
            "metadata": [json.dumps(provenance)],
        }
    )
    return row[None, :], models


# ------------------------------------------------------------------ new samples
def new_sample_observations(
    results: pd.DataFrame, sel: Selection, wanted_models: list[str], name: str
) -> list[tuple[str, np.ndarray]]:
    """Per new sample (in file order) the results of ``wanted_models``, in that order.

    InputError if the file names a sample the selection already holds (new samples need
    new ids) or lacks a result of a wanted model on some sample.
    """
    known = set(sel.samples["sample_id"])
    clash = [s for s in results["sample_id"].unique() if s in known]
    if clash:
        raise InputError(
            f"uploaded file {name} names sample {clash[0]!r}, which the store already holds; "
            "new samples need new ids."
        )
    per_sample = []
    for sid, g in results.groupby("sample_id", sort=False):
        obs, _ = match_observations(g.rename(columns={"model_id": "id"}), wanted_models, "id", name)
        per_sample.append((str(sid), obs))
    return per_sample


def estimate_new_samples(
    ins: InsertD, rows: np.ndarray, per_sample: list[tuple[str, np.ndarray]], n: int
) -> tuple[pd.DataFrame, np.ndarray]:
    """Each new sample's estimate from the results of models ``rows`` with a fitted insert_D.

    Returns one row per sample (models_evaluated, observed and predicted share of models
    right, difficulty_position among the ``n`` stored samples, harder_than = its share)
    and the predicted 0/1 matrix (new samples x models).
    """
    recs, preds = [], []
    for sid, obs in per_sample:
        est = ins.estimate(rows, obs)
        place = ins.place(rows, obs)
        preds.append(np.asarray(est.per_sample, dtype=np.uint8))
        recs.append(
            {
                "sample_id": sid,
                "models_evaluated": len(obs),
                "observed_share_right": obs.mean(),
                "predicted_share_right": est.acc,
                "difficulty_position": place,
                "harder_than": place / n,
            }
        )
    return pd.DataFrame(recs), np.vstack(preds)


NEW_SAMPLE_DOMAIN = "new"  # domain and category of samples added by the insert_D flow


def new_sample_entries(
    results: pd.DataFrame, wanted_models: list[str], dataset: str
) -> pd.DataFrame:
    """The long table to insert for new samples: only the real results of the chosen
    models, in a dataset of their own (domain and category ``new``).

    Predictions are not stored: the store marks estimates per model, not per entry. A
    dataset of their own keeps the few models' results from shrinking the set of models
    evaluated on every sample of an existing dataset.
    """
    long = results.rename(columns={"model_id": "model", "sample_id": "sample"})
    return long[long["model"].isin(wanted_models)].assign(
        dataset=dataset, domain=NEW_SAMPLE_DOMAIN, category=NEW_SAMPLE_DOMAIN
    )
