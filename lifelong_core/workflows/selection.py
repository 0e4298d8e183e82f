"""Which models count in a score, and the matrix they form.

The rule, for every page and command that scores models: a row inserted as *estimated*
(the Evaluate-something-new page writes its predictions that way, and imports may carry
an ``estimated`` column) is a prediction, not an evaluation, and is left out; a model
counts on a set of samples only where it was evaluated on every one of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError

if TYPE_CHECKING:
    from lifelong_core.store import Store

if TYPE_CHECKING:  # workflows.large imports this module
    from lifelong_core.workflows import large


def real_models(models: pd.DataFrame) -> pd.DataFrame:
    """The rows of a ``store.models()`` table that were evaluated, not inserted as estimates.

    Scoring Sort & Search against estimated rows, or ranking them beside evaluated ones,
    would pass predictions off as results.
    """
    return models[~models["estimated"].astype(bool)]


# The samples' columns a selection carries: what the pages, commands and API read off
# ``Selection.samples`` (the rest of the samples table is read where it is needed).
SELECTION_COLUMNS = ("sample_idx", "sample_id", "dataset", "domain", "category")


@dataclass(frozen=True)
class Selection:
    """The matrix of a data choice: rows = every real (not estimated) model evaluated on
    all chosen samples, in store order; columns = the chosen samples, in store order.

    What :func:`select` returns and every sweep, estimate and study of a page, a command
    or a Python caller works on.

    Attributes
    ----------
    A : numpy.ndarray of uint8, shape (m, n), or PackedCache
        The 0/1 matrix (1 = correct); a
        :class:`~lifelong_core.workflows.large.PackedCache` standing for it when the store
        is beyond the dense-read limit (read it with :meth:`dense` or the functions of
        :mod:`~lifelong_core.workflows.large`).
    models : pandas.DataFrame
        The m rows of ``store.models()`` (``model_idx``, ``model_id``, ``name``,
        ``family``, ``release_order``, ...), one per row of ``A``, index 0..m-1.
    samples : pandas.DataFrame
        The n rows of ``store.samples()``, one per column, index 0..n-1, with the columns of
        :data:`SELECTION_COLUMNS` (``sample_idx``, ``sample_id``, ``dataset``, ``domain``,
        ``category``).
    synthetic : bool
        Whether the dataset was made by a seeded generator, not real model predictions.
    """

    A: np.ndarray | large.PackedCache
    models: pd.DataFrame
    samples: pd.DataFrame
    synthetic: bool

    def dense(self) -> np.ndarray:
        """The matrix as a dense array.

        Returns
        -------
        numpy.ndarray
            ``A`` itself when dense.

        Raises
        ------
        lifelong_core.limits.DenseReadError
            If ``A`` is a packed cache beyond the dense-read limit.
        """
        return np.asarray(self.A)

    @cached_property  # widgets call it per option: 31,250 options must not rebuild it each time
    def names(self) -> list[str]:
        """Each row's display name: the model's ``name``, else its ``model_id``."""
        return self.models["name"].fillna(self.models["model_id"]).astype(str).tolist()

    @cached_property
    def content_digest(self) -> bytes:
        """A digest of everything a computation on this selection can read: the matrix's
        bits and shape, the models' and samples' tables (values and dtypes) and the
        synthetic flag. Made once per selection (:func:`kept_key`).

        Raises
        ------
        lifelong_core.limits.DenseReadError
            If ``A`` is a packed cache beyond the dense-read limit.
        """
        import hashlib
        import json

        A = np.asarray(self.A)
        h = hashlib.blake2b(digest_size=20)
        h.update(json.dumps([list(A.shape), bool(self.synthetic)]).encode())
        h.update(np.packbits(A != 0, axis=1).tobytes())
        for frame in (self.models, self.samples):
            h.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
            h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
        return h.digest()

    @cached_property
    def tasks(self) -> np.ndarray | None:
        """Each column's task (its domain), in column order, or None without a domain
        column: the ``groups`` a method fitted on this cache is given
        (:func:`~lifelong_core.methods.registry.get_method`)."""
        if "domain" not in self.samples:
            return None
        return self.samples["domain"].astype(str).to_numpy(dtype=object)


def kept_key(sel: Selection, head: list, args: list) -> str:
    """The digest a computation on ``sel`` is kept under (:mod:`lifelong_core.store.kept_results`):
    everything that can change a number of it.

    Parameters
    ----------
    sel : Selection
        The data it computes on (:attr:`Selection.content_digest`).
    head : list
        What computes: its name and the version of its digest (JSON-able).
    args : list
        Every argument that can change a number (JSON-able; arrays as lists).

    Returns
    -------
    str
        :func:`kept_digest` of them and the selection's content.
    """
    return kept_digest(head, args, [sel.content_digest])


def kept_digest(head: list, args: list, data: Iterable[bytes]) -> str:
    """The digest a kept computation is found by: what computes it, its arguments, the
    data it reads, the package's source
    (:func:`lifelong_core.methods.tuning_memory.package_digest`) and the numerical
    libraries' versions.

    Parameters
    ----------
    head : list
        What computes: its name and the version of its digest (JSON-able).
    args : list
        Every argument that can change a number (JSON-able; arrays as lists).
    data : iterable of bytes
        The data it reads, in a fixed order.

    Returns
    -------
    str
        Hexadecimal.
    """
    import hashlib
    import json

    import scipy

    from lifelong_core.methods import tuning_memory

    h = hashlib.blake2b(digest_size=20)
    versions = [np.__version__, scipy.__version__, pd.__version__]
    h.update(
        json.dumps(
            [tuning_memory.package_digest(), versions, head, args],
            default=lambda x: np.asarray(x).tolist(),
        ).encode()
    )
    for part in data:
        h.update(part)
    return h.hexdigest()


def without_models(sel: Selection, model_ids: Iterable[str]) -> Selection:
    """``sel`` with the rows of ``model_ids`` left out: a stored model can then play a new
    one, estimated from a cache that has never seen it.

    Parameters
    ----------
    sel : Selection
        The data choice.
    model_ids : iterable of str
        ``model_id`` of the rows to leave out.

    Returns
    -------
    Selection
        The same samples with the other rows, in their order (still packed when ``sel``
        was).

    Raises
    ------
    InputError
        If an id is not a row of the selection, or fewer than two models would remain.
    """
    ids = sel.models["model_id"].astype(str)
    wanted = [str(m) for m in model_ids]
    unknown = [m for m in wanted if m not in set(ids)]
    if unknown:
        raise InputError(
            f"model {unknown[0]!r} is not among the {len(ids)} models evaluated on every "
            "sample of this dataset, so it cannot be left out of them.",
            param="leave_out",
        )
    keep = ~ids.isin(wanted).to_numpy()
    if keep.sum() < 2:
        raise InputError("leaving these models out leaves fewer than two.", param="leave_out")
    from lifelong_core.workflows import large

    if isinstance(sel.A, large.PackedCache):
        A = large.PackedCache(sel.A.model_idx[keep], sel.A.sidx)
    else:
        A = sel.A[keep]
    return Selection(A, sel.models[keep].reset_index(drop=True), sel.samples, sel.synthetic)


def resolve_dataset(store: Store, dataset: str | None) -> str:
    """The dataset a command reads: ``dataset`` if the store holds it; with none named,
    the store's only dataset.

    The one rule of every command that reads one dataset of a store: a store with one
    dataset needs no name; a store with several, or a name it does not hold, is an
    :class:`InputError` (``param="dataset"``) naming the datasets it holds.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str or None
        The dataset asked for, or None.

    Returns
    -------
    str

    Raises
    ------
    InputError
        If the store holds no dataset, several and none is named, or not the one named.

    Examples
    --------
    >>> from lifelong_core.store import Store
    >>> from lifelong_core.paths import default_store
    >>> with Store.open(default_store(), read_only=True) as store:
    ...     resolve_dataset(store, "lifelong-digits")
    'lifelong-digits'
    """
    names = store.datasets()["dataset"].tolist()
    if not names:
        raise InputError("the store holds no dataset yet; import predictions first.")
    if dataset is None:
        if len(names) > 1:
            raise InputError(
                f"the store holds {len(names)} datasets; name one of {', '.join(names)}.",
                param="dataset",
            )
        return names[0]
    if dataset not in names:
        raise InputError(
            f"the store holds no dataset {dataset!r}; it holds {', '.join(names)}.",
            param="dataset",
        )
    return dataset


@dataclass(frozen=True)
class DatasetModels:
    """The models of one dataset, sorted by what a matrix of it can use: ``complete``
    (real models evaluated on every one of its ``samples``), ``partial`` (real models
    evaluated on some of them) and ``estimated`` (rows inserted as estimates that have
    predictions there). Rows of ``store.models()``, in store order."""

    dataset: str
    samples: pd.DataFrame
    complete: pd.DataFrame
    partial: pd.DataFrame
    estimated: pd.DataFrame

    def note(self) -> str:
        """One sentence: how many models a matrix of the dataset holds, and which were
        left out and why."""
        n = len(self.samples)
        out = (
            f"dataset {self.dataset}: {len(self.complete):,} models evaluated on all "
            f"{n:,} of its samples"
        )
        why = []
        if len(self.partial):
            why.append(f"{len(self.partial):,} evaluated on only some of them")
        if len(self.estimated):
            why.append(f"{len(self.estimated):,} inserted as estimates, not evaluated")
        return out + (f"; left out: {', '.join(why)}." if why else ".")


def dataset_models(store: Store, dataset: str) -> DatasetModels:
    """The models of ``dataset`` sorted by what a matrix of it can use: complete,
    partial and estimated (:class:`DatasetModels`), decided from the store's packed blocks
    without unpacking a row.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.

    Returns
    -------
    DatasetModels
        With :meth:`DatasetModels.note`, the sentence that says which models were left
        out and why.
    """
    from lifelong_core.store.dataset_rows import complete_models
    from lifelong_core.store.dataset_rows import recorded_models as recorded

    smp = store.samples(dataset)
    sidx = smp["sample_idx"].to_numpy()
    models = store.models()
    real = real_models(models)
    complete = complete_models(store, real, sidx)
    partial = recorded(store, real[~real["model_idx"].isin(complete["model_idx"])], sidx)
    estimated = recorded(store, models[models["estimated"].astype(bool)], sidx)
    return DatasetModels(dataset, smp.reset_index(drop=True), complete, partial, estimated)


def recorded_models(
    store: Store, dataset: str, domains: Sequence[str] | None = None
) -> pd.DataFrame:
    """The real models (rows of ``store.models()``) with at least one recorded prediction on
    the samples of ``dataset`` in ``domains`` (None = all): a store holding several datasets
    must not offer one dataset's models for another's comparison."""
    from lifelong_core.store.dataset_rows import recorded_models as recorded

    return recorded(store, real_models(store.models()), store.sample_indices(dataset, domains))


def check_domains(store: Store, dataset: str, domains: Iterable[str] | None) -> tuple[str, ...]:
    """The domains a user named, checked against the dataset's.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.
    domains : iterable of str or None
        The domains to keep; None or empty for all.

    Returns
    -------
    tuple of str
        The domains as given (empty for all).

    Raises
    ------
    InputError
        Naming the first domain the dataset does not have (``param="domains"``).
    """
    wanted = tuple(str(d) for d in (domains or ()))
    have = set(store.domains(dataset)["domain"].astype(str))
    unknown = [d for d in wanted if d not in have]
    if unknown:
        raise InputError(
            f"dataset {dataset!r} has no domain {unknown[0]!r}; it has {', '.join(sorted(have))}.",
            param="domains",
        )
    return wanted


def select(store: Store, dataset: str, domains: tuple[str, ...] = ()) -> Selection:
    """Every real model's 0/1 row on the samples of ``dataset`` restricted to ``domains``
    (``()`` = every domain); models not run on every chosen sample are left out.

    Beyond the dense-read limit (:mod:`lifelong_core.limits`) the matrix is not read: the
    selection's ``A`` is a :class:`~lifelong_core.workflows.large.PackedCache`, read as
    packed blocks on demand.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds (:func:`resolve_dataset` finds it from a user's choice).
    domains : tuple of str
        The domains to keep; empty for every domain.

    Returns
    -------
    Selection

    Raises
    ------
    InputError
        If the dataset has no samples in the chosen domains, or fewer than two real models
        were evaluated on every chosen sample.
    """
    smp = store.samples(dataset, list(domains) if domains else None, columns=SELECTION_COLUMNS)
    if len(smp) == 0:
        raise InputError(f"dataset {dataset!r} has no samples in the chosen domains.")
    from lifelong_core.store.dataset_rows import complete_models
    from lifelong_core.workflows import large

    sidx = smp["sample_idx"].to_numpy()
    models = complete_models(store, real_models(store.models()), sidx)
    if len(models) < 2:
        raise InputError(
            f"fewer than two models were evaluated on every chosen sample of {dataset!r}."
        )
    # Beyond the dense-read limit (lifelong_core.limits) the matrix is read as packed
    # blocks on demand (workflows.large), never whole.
    A: np.ndarray | large.PackedCache
    if large.is_large(len(models), len(sidx)):
        A = large.PackedCache(
            models["model_idx"].to_numpy(dtype=np.int64), np.asarray(sidx, dtype=np.int64)
        )
    else:
        A = store.matrix(models["model_idx"].to_numpy(), sidx)
    ds = store.datasets().set_index("dataset")
    synthetic = bool(ds.loc[dataset, "synthetic"]) if dataset in ds.index else False
    return Selection(A, models.reset_index(drop=True), smp.reset_index(drop=True), synthetic)


def selection_confidence(store: Store, sel: Selection, rows: Iterable[int]) -> np.ndarray | None:
    """Confidence of the true class (``true_prob``) of ``rows`` of ``sel``, or None if not
    recorded: what Sorting by confidence needs.

    Parameters
    ----------
    store : Store
        The open store ``sel`` was selected from.
    sel : Selection
        The data choice.
    rows : iterable of int
        Row positions in ``sel`` (e.g. the Sort set).

    Returns
    -------
    numpy.ndarray of float, shape (len(rows), n), or None
        The confidences in [0, 1]; None when the store cannot give them (an entry lacks
        one, or the read is beyond the dense-read limit).
    """
    try:
        return store.extras(
            sel.models["model_idx"].to_numpy()[list(rows)],
            sel.samples["sample_idx"].to_numpy(),
            fields=("true_prob",),
        )["true_prob"]
    except InputError:
        return None


def complete_counts(store: Store, dataset: str) -> tuple[pd.DataFrame, list[str]]:
    """Per-task counts (tasks = domains) of the real models recorded on every domain, named
    by model name, and the names of the real models left out for missing a domain.

    What the Rankings and Task weighting pages rank when the source is the store: a model
    missing a task would be ranked on an aggregate over other tasks than the rest.

    Parameters
    ----------
    store : Store
        An open store.
    dataset : str
        A dataset the store holds.

    Returns
    -------
    tuple of (pandas.DataFrame, list of str)
        The ``counts.csv`` frame (model, task, category, correct, total) of the kept
        models, and the left-out models' names, sorted.
    """
    models = store.models()
    counts = store.counts(
        dataset=dataset, models=real_models(models)["model_idx"].to_numpy(dtype=np.int64)
    )
    names = models.set_index("model_id")["name"]
    counts["model"] = counts["model"].map(names).fillna(counts["model"])
    per_model = counts.groupby("model")["task"].nunique()
    dropped = sorted(per_model[per_model < counts["task"].nunique()].index)
    return counts[~counts["model"].isin(dropped)].reset_index(drop=True), dropped


def bounded_selection(
    store: Store, sel: Selection, max_models: int | None = None, seed: int = 0
) -> tuple[Selection, str]:
    """``sel`` itself, or on a large store a dense bounded block of it
    (:func:`~lifelong_core.workflows.large.bounded_block`): what the views that need a
    dense matrix work on.

    Parameters
    ----------
    store : Store
        The open store ``sel`` was selected from.
    sel : Selection
        The data choice.
    max_models : int, optional
        Most models the block keeps; default
        :data:`~lifelong_core.workflows.large.DEFAULT_SCORED`.
    seed : int
        Seed of the sample of models and samples.

    Returns
    -------
    tuple of (Selection, str)
        The (possibly reduced) selection and a note saying what was left out, empty when
        nothing was.
    """
    from lifelong_core.workflows import large

    if not isinstance(sel.A, large.PackedCache):
        return sel, ""
    most = large.DEFAULT_SCORED if max_models is None else max_models
    block = large.bounded_block(store, sel.A, most, seed)
    small = Selection(
        block.A,
        sel.models.iloc[block.rows].reset_index(drop=True),
        sel.samples.iloc[block.cols].reset_index(drop=True),
        sel.synthetic,
    )
    return small, block.note(sel.A.shape)
