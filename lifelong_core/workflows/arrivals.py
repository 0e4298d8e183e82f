"""The lifelong flows for something new: a new model's results read from a CSV upload
(insert_M) and new samples (insert_D).

Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*,
§2 and §3.2-3.3. A new model: the list of samples to run it on and its uploaded results
(which items to run is :mod:`~lifelong_core.workflows.item_choice`, the estimate and the
row to store :mod:`~lifelong_core.workflows.new_model`). New samples: choose the few models
to run on them, read their results back, estimate every model on each sample and its place
in the difficulty order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.correct import correct_values
from lifelong_core.io.tables import read_csv_table
from lifelong_core.methods import InsertD
from lifelong_core.store import text_column
from lifelong_core.workflows.selection import Selection
from lifelong_core.workflows.uploads import split_columns

NEW_MODEL_COLUMNS = ("sample_id", "correct")
NEW_SAMPLE_COLUMNS = ("model_id", "sample_id", "correct")
# The columns of the downloaded list of samples to run (plus ``correct``, left empty for
# the user to fill): coming back in the upload, they are expected, not "ignored".
NEW_MODEL_LIST_COLUMNS = ("sample_id", "domain")


def samples_to_run(sel: Selection, cols: np.ndarray) -> pd.DataFrame:
    """The downloadable list of the samples to run a new model on.

    Parameters
    ----------
    sel : Selection
        The data choice the samples were chosen from.
    cols : numpy.ndarray
        The chosen column indices of ``sel`` (as the method's ``select`` returned them).

    Returns
    -------
    pandas.DataFrame
        One row per chosen sample, in the order of ``cols``: ``sample_id``, ``domain``
        and an empty ``correct`` column to fill in and upload as it is.
    """
    out = sel.samples.iloc[np.asarray(cols, dtype=np.int64)][list(NEW_MODEL_LIST_COLUMNS)]
    return out.reset_index(drop=True).assign(correct="")


# ------------------------------------------------------------------ fitting on the cache
def fit_new_sample_method(sel: Selection, rule: str, sampling: str) -> InsertD:
    """insert_D (Prabhu et al., 2024, *Efficient Lifelong Model Evaluation in an Era of
    Rapid Progress*, §3.3) fitted on a selection.

    Parameters
    ----------
    sel : Selection
        The data choice; every row is a model the new samples may be run on.
    rule : {"midpoint", "reference"}
        The threshold rule of the search over models.
    sampling : str
        Which positions of the model order a budget evaluates (``uniform``, ``random``,
        ``reference`` or ``listing``).

    Returns
    -------
    InsertD
        Fitted: models ordered best first by Sorting by Sum on the transpose.

    Raises
    ------
    InputError
        For an unknown rule or sampling, or an empty selection.
    lifelong_core.limits.DenseReadError
        If ``sel.A`` is a packed cache beyond the dense-read limit.
    """
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
    yes/no (:func:`~lifelong_core.io.correct.correct_values`, as every import). Repeated rows with
    the same ``correct`` are kept once.

    Parameters
    ----------
    data : bytes
        The uploaded file's content.
    name : str
        The uploaded file's name (must end in ``.csv``), as messages name it.
    columns : tuple of str
        The columns required, ``correct`` among them (e.g. :data:`NEW_MODEL_COLUMNS` or
        :data:`NEW_SAMPLE_COLUMNS`); the others are ids.
    known : tuple of str
        Other columns expected in the file and set aside without being listed as
        ignored.

    Returns
    -------
    pandas.DataFrame
        The required columns, ids as ``str`` and ``correct`` as uint8 0/1, one row per
        distinct id combination; ``attrs["ignored"]`` lists the other columns found,
        ``known`` ones excepted.

    Raises
    ------
    InputError
        If the name is not a ``.csv``, the file is not a readable CSV table, a required
        column is missing, there are no data rows, an id is missing or not whole, a
        ``correct`` value is not 0/1, true/false or yes/no, or a row repeats its ids
        with a different ``correct``.
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
    out["correct"] = correct_values(df["correct"], "correct", source)
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
    """The uploaded results of the ids that were asked for, in their order.

    Parameters
    ----------
    results : pandas.DataFrame
        Results as :func:`read_results` returns them, with ``id_col`` and ``correct``.
    wanted_ids : list of str
        The ids whose results are needed (the samples or models chosen), in the order
        the method expects.
    id_col : str
        The column of ``results`` holding the ids.
    name : str
        The uploaded file's name, as the message names it.

    Returns
    -------
    observed : numpy.ndarray
        uint8 0/1, one per id of ``wanted_ids``, in that order.
    extra : int
        How many ids of the file were not asked for (ignored).

    Raises
    ------
    InputError
        Naming the first wanted id the file has no result for, and how many are
        missing.
    """
    by_id = dict(zip(results[id_col], results["correct"]))
    missing = [i for i in wanted_ids if i not in by_id]
    if missing:
        raise InputError(
            f"uploaded file {name} has no result for {id_col} {missing[0]!r} ({len(missing)} of the "
            f"{len(wanted_ids)} requested are missing)."
        )
    extra = len(set(by_id) - set(wanted_ids))
    return np.array([by_id[i] for i in wanted_ids], dtype=np.uint8), extra


# ------------------------------------------------------------------ new samples
def new_sample_observations(
    results: pd.DataFrame, sel: Selection, wanted_models: list[str], name: str
) -> list[tuple[str, np.ndarray]]:
    """Per new sample (in file order) the results of ``wanted_models``, in that order.

    Parameters
    ----------
    results : pandas.DataFrame
        ``model_id, sample_id, correct`` rows as :func:`read_results` returns them.
    sel : Selection
        The data choice the models were chosen from.
    wanted_models : list of str
        The ids of the models chosen to run on the new samples, in the order insert_D
        selected them.
    name : str
        The uploaded file's name, as messages name it.

    Returns
    -------
    list of (str, numpy.ndarray)
        Per new sample, in file order: its id and the uint8 0/1 results of
        ``wanted_models``, in that order. Results of other models are ignored.

    Raises
    ------
    InputError
        If the file names a sample the selection already holds (new samples need new
        ids) or lacks a result of a wanted model on some sample.
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

    insert_D of Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of
    Rapid Progress*, §3.3; the place in the order follows the stable insertion of
    Appendix G.

    Parameters
    ----------
    ins : InsertD
        Fitted on the selection (:func:`fit_new_sample_method`).
    rows : numpy.ndarray
        The model rows run on the new samples (as ``ins.select`` returned them).
    per_sample : list of (str, numpy.ndarray)
        Per new sample its id and the 0/1 results of ``rows``, in that order
        (:func:`new_sample_observations`); at least one sample.
    n : int
        The number of stored samples (the length of the fitted order).

    Returns
    -------
    table : pandas.DataFrame
        One row per new sample: ``sample_id``, ``models_evaluated``,
        ``observed_share_right`` and ``predicted_share_right`` (fractions of models),
        ``difficulty_position`` (its insertion index in ``[0, n]`` of the easy -> hard
        order) and ``harder_than`` (that index over ``n``: the share of stored samples
        at least as easy).
    predicted : numpy.ndarray
        (new samples, models) uint8 predicted 0/1, models in the selection's row order.

    Raises
    ------
    InputError
        If a sample's results do not match ``rows`` (length, 0/1).
    NotFittedError
        If ``ins`` is not fitted.
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

    Parameters
    ----------
    results : pandas.DataFrame
        ``model_id, sample_id, correct`` rows as :func:`read_results` returns them.
    wanted_models : list of str
        The ids of the models chosen to run; rows of other models are dropped.
    dataset : str
        The name of the new samples' own dataset.

    Returns
    -------
    pandas.DataFrame
        The store's long import layout: ``model``, ``sample``, ``correct``,
        ``dataset``, and ``domain`` and ``category`` both :data:`NEW_SAMPLE_DOMAIN`.
    """
    long = results.rename(columns={"model_id": "model", "sample_id": "sample"})
    return long[long["model"].isin(wanted_models)].assign(
        dataset=dataset, domain=NEW_SAMPLE_DOMAIN, category=NEW_SAMPLE_DOMAIN
    )
