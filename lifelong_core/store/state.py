"""The lifelong state: what Sort learns from the cache, kept in the store.

The premise of Prabhu et al. (2024) is that the cache only grows (insert_M adds models, insert_D adds
samples, §2), so what Sort learns from it need not be recomputed from scratch whenever a
page opens. Per dataset the store keeps, next to the cache:

- ``sort_state``: the Sort set (every real, not estimated, model evaluated on all the
  dataset's samples: the lifelong cache), the dataset's samples (the columns), the column
  sums over the Sort set (Listing 1 ``sort_by_sum``), the Sort order (stable, easy ->
  hard), the ``log_id`` of the import it reflects, and how long the full computation took;
- ``item_state``: fitted item parameters of a model-based estimator (``mirt``; written by
  ``lifelong_core.workflows.lifelong_state``), with the ``log_id`` of the cache it was
  fitted on.

Every import (``Store.apply``, through ``Store.after_write``) calls :func:`after_write`, which brings each kept Sort
state up to date incrementally: rows of models that joined the Sort set are read and
added to the sums (insert_M), members that left it are subtracted, and new samples append
columns whose sums are read over the members only (insert_D); the order is re-derived from
the sums. Only the changed rows and columns are read. Item parameters are not refitted on
import: their ``log_id`` then lags the Sort state's, which readers report as stale with
the time the last fit took.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.store.dataset_rows import complete_models, read_rows
from lifelong_core.store.writing import StoreWriter, utc_now

DDL = """
CREATE TABLE IF NOT EXISTS sort_state (
    dataset VARCHAR PRIMARY KEY, log_id INTEGER NOT NULL, members BLOB NOT NULL, samples BLOB NOT NULL,
    sums BLOB NOT NULL, sort_order BLOB NOT NULL, row_sums BLOB NOT NULL, computed_at TIMESTAMP NOT NULL,
    seconds DOUBLE NOT NULL);
CREATE TABLE IF NOT EXISTS item_state (
    dataset VARCHAR NOT NULL, method VARCHAR NOT NULL, log_id INTEGER NOT NULL, params VARCHAR NOT NULL,
    fit_models BLOB NOT NULL, samples BLOB NOT NULL, d BLOB NOT NULL, w BLOB NOT NULL, theta BLOB NOT NULL,
    computed_at TIMESTAMP NOT NULL, seconds DOUBLE NOT NULL, PRIMARY KEY (dataset, method));
"""


@dataclass(frozen=True)
class SortState:
    """Column sums and Sort order of a dataset over its Sort set (see the module docstring;
    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.1
    and Listing 1 ``sort_by_sum``).

    Attributes
    ----------
    dataset : str
        The dataset.
    log_id : int
        The import the state reflects.
    members : numpy.ndarray
        ``model_idx`` of the Sort set, ascending.
    samples : numpy.ndarray
        ``sample_idx`` of the dataset's samples, ascending (the columns).
    sums : numpy.ndarray
        int64 (n,) column sums over the members.
    order : numpy.ndarray
        int64 (n,) Sort order, easy -> hard.
    row_sums : numpy.ndarray
        int64 correct samples of every member (insert_D's model order, accuracies).
    computed_at : datetime.datetime
        When it was last computed in full.
    seconds : float
        Wall time of the last full computation.
    """

    dataset: str
    log_id: int
    members: np.ndarray  # model_idx of the Sort set, ascending
    samples: np.ndarray  # sample_idx of the dataset's samples, ascending (the columns)
    sums: np.ndarray  # int64 (n,) column sums over the members
    order: np.ndarray  # int64 (n,) Sort order, easy -> hard
    row_sums: (
        np.ndarray
    )  # int64 correct samples of every member (insert_D's model order, accuracies)
    computed_at: _dt.datetime
    seconds: float  # wall time of the last full computation


@dataclass(frozen=True)
class ItemState:
    """Persisted item parameters of a model-based estimator on a dataset.

    Attributes
    ----------
    dataset, method : str
        The dataset and the estimator (e.g. ``mirt``).
    log_id : int
        The import of the cache it was fitted on.
    params : dict
        The estimator's settings (``k``: the dimension).
    fit_models : numpy.ndarray
        ``model_idx`` fitted on.
    samples : numpy.ndarray
        ``sample_idx`` of the items.
    d : numpy.ndarray
        float32 item intercepts.
    w : numpy.ndarray
        float32 (items, k) item loadings.
    theta : numpy.ndarray
        float64 (models, k) abilities of the fitted models.
    computed_at : datetime.datetime
        When it was fitted.
    seconds : float
        Wall time of the fit.
    """

    dataset: str
    method: str
    log_id: int
    params: dict
    fit_models: np.ndarray
    samples: np.ndarray
    d: np.ndarray
    w: np.ndarray
    theta: np.ndarray
    computed_at: _dt.datetime
    seconds: float


def _blob(a: np.ndarray, dtype: npt.DTypeLike) -> bytes:
    return np.ascontiguousarray(a, dtype=dtype).tobytes()


def _arr(b: bytes, dtype: npt.DTypeLike) -> np.ndarray:
    return np.frombuffer(b, dtype=dtype).copy()


def _has_tables(st: StoreWriter) -> bool:
    names = (
        st.cursor()
        .execute(
            "SELECT table_name FROM information_schema.tables WHERE table_name IN "
            "('sort_state', 'item_state')"
        )
        .fetchall()
    )
    return len(names) == 2


def latest_log_id(st: StoreWriter) -> int:
    """``log_id`` of the store's latest import.

    Parameters
    ----------
    st : Store
        An open store.

    Returns
    -------
    int
        -1 for an empty log.
    """
    return int(st._one("SELECT coalesce(max(log_id), -1) FROM log")[0])


def _cache_of(st: StoreWriter, dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """(members, samples) of ``dataset`` now: every real model recorded on all its samples."""
    smp = st.samples(dataset)
    if len(smp) == 0:
        raise InputError(f"the store has no dataset {dataset!r} with samples.")
    sidx = np.sort(smp["sample_idx"].to_numpy(dtype=np.int64))
    models = st.models()
    models = models[~models["estimated"].astype(bool)]
    members = np.sort(complete_models(st, models, sidx)["model_idx"].to_numpy(dtype=np.int64))
    return members, sidx


def _sums(
    st: StoreWriter,
    members: np.ndarray,
    sidx: np.ndarray,
    progress: Callable[[float], object] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Column sums and row sums of ``members`` on ``sidx``, reading packed rows in bounded chunks."""
    from lifelong_core.bits import column_sums_packed, row_totals

    n = len(sidx)
    sums = np.zeros(n, dtype=np.int64)
    rows = np.zeros(len(members), dtype=np.int64)
    # Chunks of packed rows near 64 MB (the dense limit applies to dense arrays only).
    step = int(max(8, min(4096, (64 << 20) // max(1, (n + 7) // 8))))
    for a in range(0, len(members), step):
        P = read_rows(st, members[a : a + step], sidx)
        sums += column_sums_packed(P, n)
        rows[a : a + step] = row_totals(P, n)
        if progress is not None:
            progress(min(1.0, (a + step) / max(len(members), 1)))
    return sums, rows


def _order(sums: np.ndarray) -> np.ndarray:
    from lifelong_core.sortsearch.sort import order_from_sums

    return order_from_sums(sums, "stable")


def _save_sort(st: StoreWriter, s: SortState) -> None:
    replace_row(
        st,
        "sort_state",
        "dataset = ?",
        [s.dataset],
        [
            s.dataset,
            int(s.log_id),
            _blob(s.members, np.int32),
            _blob(s.samples, np.int32),
            _blob(s.sums, np.int32),
            _blob(s.order, np.int32),
            _blob(s.row_sums, np.int32),
            s.computed_at,
            float(s.seconds),
        ],
    )


class KeptTable:
    """A table kept beside the cache, read through ``store`` and written when ``store`` is
    a writer handle and ``dataset`` is given (what a refresh keeps is filed under it).

    Parameters
    ----------
    store : Store
        An open store (a read-only handle reads).
    dataset : str, optional
        The dataset new rows are kept for; without it nothing is written.
    """

    def __init__(self, store: Any, dataset: str | None = None) -> None:
        self.store = store
        self.dataset = dataset

    @property
    def writes(self) -> bool:
        """Whether rows are kept (a writer handle and a dataset)."""
        return self.dataset is not None and not getattr(self.store, "read_only", True)

    def _row(self, table: str, columns: str, key: str) -> tuple | None:
        """``columns`` of the row of ``table`` kept under ``key``: None without the row, or
        without the table (a store written by an older version)."""
        cur = self.store.cursor()
        if not has_table(cur, table):
            return None
        return cur.execute(f"SELECT {columns} FROM {table} WHERE key = ?", [key]).fetchone()


def has_table(cur: Any, table: str) -> bool:
    """Whether the store has ``table`` (a store written by an older version may not).

    Parameters
    ----------
    cur : duckdb.DuckDBPyConnection
        A cursor of the store.
    table : str
        The table's name.

    Returns
    -------
    bool
    """
    has = cur.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchone()
    return bool(has and has[0])


def kept_count(
    st: Any, table: str, dataset: str | None = None, where: tuple[str, str] | None = None
) -> int:
    """How many rows a kept table holds (for ``dataset``, or in all); 0 without the table.

    Parameters
    ----------
    st : Store
        An open store.
    table : str
        A kept table with a ``dataset`` column.
    dataset : str, optional
        Count only this dataset's.
    where : tuple of (str, str), optional
        Count only rows whose column (first) holds the value (second).

    Returns
    -------
    int
    """
    cur = st.cursor()
    if not has_table(cur, table):
        return 0
    conds, params = [], []
    if dataset is not None:
        conds.append("dataset = ?")
        params.append(dataset)
    if where is not None:
        conds.append(f"{where[0]} = ?")
        params.append(where[1])
    clause = f" WHERE {' AND '.join(conds)}" if conds else ""
    row = cur.execute(f"SELECT count(*) FROM {table}{clause}", params).fetchone()
    return int(row[0]) if row else 0


def forget_kept(
    st: StoreWriter, table: str, ddl: str, dataset: str, column: str, value: str
) -> None:
    """Drop the rows of a kept table for ``dataset`` whose ``column`` is ``value`` (what a
    refresh does before it keeps new ones), creating the table if it is missing.

    Parameters
    ----------
    st : Store
        A writer handle.
    table : str
        A kept table with a ``dataset`` column.
    ddl : str
        Its ``CREATE TABLE IF NOT EXISTS`` statement.
    dataset : str
        Whose rows.
    column, value : str
        Which of them (e.g. the method of kept fits).
    """
    st.require_writer()
    cur = st.cursor()
    cur.execute(ddl)
    cur.execute(f"DELETE FROM {table} WHERE dataset = ? AND {column} = ?", [dataset, value])


def replace_row(
    st: StoreWriter, table: str, where: str, key: list, row: list, ddl: str = DDL
) -> None:
    """Replace the rows of ``table`` matching ``where`` (with ``key``) by ``row``, in one
    transaction, after creating the kept tables of ``ddl`` if they are missing.

    Parameters
    ----------
    st : Store
        A writer handle.
    table : str
        The table.
    where : str
        The condition of the rows replaced, with ``?`` placeholders.
    key : list
        The placeholders' values.
    row : list
        The new row's values, in the table's column order.
    ddl : str
        The ``CREATE TABLE IF NOT EXISTS`` statements of the table.
    """
    cur = st.cursor()
    cur.execute(ddl)
    cur.begin()
    try:
        cur.execute(f"DELETE FROM {table} WHERE {where}", key)
        cur.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(row))})", row)
        cur.commit()
    except BaseException:
        cur.rollback()
        raise


def refresh_sort_state(
    st: StoreWriter, dataset: str, progress: Callable[[float], object] | None = None
) -> SortState:
    """Compute the Sort state of ``dataset`` from the whole cache and keep it.

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset : str
        The dataset.
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    SortState

    Raises
    ------
    InputError
        For a read-only handle, or a dataset on which no real model was evaluated on every
        sample.
    """
    st.require_writer()
    t0 = time.perf_counter()
    members, sidx = _cache_of(st, dataset)
    if len(members) == 0:
        raise InputError(
            f"no real model was evaluated on every sample of {dataset!r}; there is no cache to sort."
        )
    sums, rows = _sums(st, members, sidx, progress)
    state = SortState(
        dataset,
        latest_log_id(st),
        members,
        sidx,
        sums,
        _order(sums),
        rows,
        utc_now(),
        time.perf_counter() - t0,
    )
    _save_sort(st, state)
    return state


def load_sort_state(st: StoreWriter, dataset: str) -> SortState | None:
    """The kept Sort state of ``dataset``.

    Parameters
    ----------
    st : Store
        An open store.
    dataset : str
        The dataset.

    Returns
    -------
    SortState or None
        None if none was computed.
    """
    if not _has_tables(st):
        return None
    row = st.cursor().execute("SELECT * FROM sort_state WHERE dataset = ?", [dataset]).fetchone()
    if row is None:
        return None
    ds, log_id, members, samples, sums, order, row_sums, at, seconds = row

    def i64(b: bytes) -> np.ndarray:
        return _arr(b, np.int32).astype(np.int64)

    return SortState(
        ds,
        int(log_id),
        i64(members),
        i64(samples),
        i64(sums),
        i64(order),
        i64(row_sums),
        at,
        float(seconds),
    )


def sort_states(st: StoreWriter) -> pd.DataFrame:
    """One row per kept Sort state.

    Parameters
    ----------
    st : Store
        An open store.

    Returns
    -------
    pandas.DataFrame
        dataset, log_id, models, samples, computed_at, seconds, stale.
    """
    cols = ["dataset", "log_id", "models", "samples", "computed_at", "seconds", "stale"]
    if not _has_tables(st):
        return pd.DataFrame(columns=cols)
    df = (
        st.cursor()
        .execute(
            "SELECT dataset, log_id, octet_length(members) // 4 AS models, "
            "octet_length(samples) // 4 AS samples, computed_at, seconds FROM sort_state "
            "ORDER BY dataset"
        )
        .df()
    )
    df["stale"] = df["log_id"] < latest_log_id(st)
    return df[cols]


def update_sort_state(
    st: StoreWriter, dataset: str, progress: Callable[[float], object] | None = None
) -> SortState:
    """Bring the kept Sort state of ``dataset`` up to the store's latest import, reading only
    what changed (see the module docstring); computes it in full if none is kept.

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset : str
        The dataset.
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    SortState

    Raises
    ------
    InputError
        As :func:`refresh_sort_state`.
    """
    st.require_writer()
    old = load_sort_state(st, dataset)
    if old is None:
        return refresh_sort_state(st, dataset, progress)
    log_id = latest_log_id(st)
    if old.log_id == log_id:
        return old
    members, sidx = _cache_of(st, dataset)
    if not np.isin(old.samples, sidx).all():
        return refresh_sort_state(
            st, dataset, progress
        )  # samples never leave a store; be safe anyway
    kept = np.intersect1d(old.members, members)
    joined = np.setdiff1d(members, old.members)
    left = np.setdiff1d(old.members, members)
    appended = np.setdiff1d(sidx, old.samples)
    # Old columns: the old sums, plus rows that joined, minus rows that left.
    old_cols = old.sums.copy()
    row_sums = np.zeros(len(members), dtype=np.int64)
    row_sums[np.searchsorted(members, kept)] = old.row_sums[np.searchsorted(old.members, kept)]
    if len(joined):
        cols, rows = _sums(st, joined, old.samples)
        old_cols += cols
        row_sums[np.searchsorted(members, joined)] = rows
    if len(left):
        old_cols -= _sums(st, left, old.samples)[0]
    sums = np.zeros(len(sidx), dtype=np.int64)
    sums[np.searchsorted(sidx, old.samples)] = old_cols
    if len(appended):
        # New columns: every current member (kept or joined) on the new samples only.
        cols, rows = _sums(st, members, appended)
        sums[np.searchsorted(sidx, appended)] = cols
        row_sums += rows
    state = SortState(
        dataset, log_id, members, sidx, sums, _order(sums), row_sums, old.computed_at, old.seconds
    )
    _save_sort(st, state)
    return state


def after_write(st: StoreWriter) -> None:
    """Update every kept Sort state incrementally; the store calls it after every import.

    Parameters
    ----------
    st : Store
        The writer handle that imported.
    """
    if not _has_tables(st):
        return
    for ds in st.cursor().execute("SELECT dataset FROM sort_state").fetchall():
        update_sort_state(st, ds[0])


# ------------------------------------------------------------------ item parameters
def save_item_state(st: StoreWriter, s: ItemState) -> None:
    """Keep fitted item parameters, replacing those of the same dataset and method.

    Parameters
    ----------
    st : Store
        A writer handle.
    s : ItemState
        The parameters.

    Raises
    ------
    InputError
        For a read-only handle.
    """
    import json

    st.require_writer()
    replace_row(
        st,
        "item_state",
        "dataset = ? AND method = ?",
        [s.dataset, s.method],
        [
            s.dataset,
            s.method,
            int(s.log_id),
            json.dumps(s.params, sort_keys=True),
            _blob(s.fit_models, np.int32),
            _blob(s.samples, np.int32),
            _blob(s.d, np.float32),
            _blob(s.w, np.float32),
            _blob(s.theta, np.float64),
            s.computed_at,
            float(s.seconds),
        ],
    )


def load_item_state(st: StoreWriter, dataset: str, method: str) -> ItemState | None:
    """The kept item parameters of ``method`` on ``dataset``.

    Parameters
    ----------
    st : Store
        An open store.
    dataset, method : str
        The dataset and the estimator.

    Returns
    -------
    ItemState or None
        None if none were kept.
    """
    import json

    if not _has_tables(st):
        return None
    row = (
        st.cursor()
        .execute("SELECT * FROM item_state WHERE dataset = ? AND method = ?", [dataset, method])
        .fetchone()
    )
    if row is None:
        return None
    ds, meth, log_id, params, fit_models, samples, d, w, theta, at, seconds = row
    params = json.loads(params)
    k = int(params["k"])
    return ItemState(
        ds,
        meth,
        int(log_id),
        params,
        _arr(fit_models, np.int32).astype(np.int64),
        _arr(samples, np.int32).astype(np.int64),
        _arr(d, np.float32),
        _arr(w, np.float32).reshape(-1, k),
        _arr(theta, np.float64).reshape(-1, k),
        at,
        float(seconds),
    )


def item_states(st: StoreWriter) -> pd.DataFrame:
    """One row per kept set of item parameters.

    Parameters
    ----------
    st : Store
        An open store.

    Returns
    -------
    pandas.DataFrame
        dataset, method, log_id, models, samples, computed_at, seconds.
    """
    cols = ["dataset", "method", "log_id", "models", "samples", "computed_at", "seconds"]
    if not _has_tables(st):
        return pd.DataFrame(columns=cols)
    return (
        st.cursor()
        .execute(
            "SELECT dataset, method, log_id, octet_length(fit_models) // 4 AS models, "
            "octet_length(samples) // 4 AS samples, computed_at, seconds FROM item_state "
            "ORDER BY dataset, method"
        )
        .df()[cols]
    )


__all__ = [
    "ItemState",
    "SortState",
    "after_write",
    "item_states",
    "latest_log_id",
    "load_item_state",
    "load_sort_state",
    "refresh_sort_state",
    "save_item_state",
    "sort_states",
    "update_sort_state",
]
