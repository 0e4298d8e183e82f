"""Integrity check and undo of one import: the store's own consistency rules, checked.

:func:`verify` reads every table (every blob, so damaged pages of the file surface here
rather than halfway through a page) and returns one sentence per broken rule: format
version, dense model and sample indices, blocks covering the samples without gaps,
one bits row per (model, block) with blob lengths that fit the block, extras lists of
the block's length, ids unique, samples pointing at known domains and datasets, and the
log's counts adding up to what the store holds. Imports refuse a store that fails it.

:func:`undo` removes exactly what one import added, in one transaction that is logged
itself (action ``undo``, negative counts, so the log still adds up). Which rows an import
added is read from ``added_at``: an import stamps its models, samples, domains, datasets
and log row with one timestamp, and puts new samples in blocks of their own. Undo is
refused, with the reason, when it could not be exact: a later import added models or
samples after it (indices must stay dense: undo that one first), or the import's entry
count does not match what its new rows and blocks hold (it also filled in entries of
models and samples that were there before, or later imports added to its rows; such
entries cannot be told apart from older ones).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.store._handle import StoreHandle
from lifelong_core.store._schema import BLOCK_SIZE, FORMAT_VERSION


def _damaged(store: StoreHandle, exc: duckdb.Error) -> InputError:
    return InputError(
        f"Store {store.path} is damaged: DuckDB cannot read it ({str(exc).splitlines()[0]})."
    )


def store_error_sentence(
    exc: BaseException, path: str | os.PathLike[str] | None = None
) -> str | None:
    """One sentence for a DuckDB error that escaped the store's own checks, else None.

    The backstop at the edges (the command line, the app's shared handle): a damaged or
    truncated file fails only when the damaged page is read, which can be any read.

    Parameters
    ----------
    exc : BaseException
        The error.
    path : str or os.PathLike, optional
        The store file, for the sentence.

    Returns
    -------
    str or None
    """
    if not isinstance(exc, duckdb.Error):
        return None
    where = f"store {path}" if path is not None else "the store"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if re.search(
        r"could not write|no space left|file too large|disk quota|read-only file system",
        first,
        re.I,
    ):
        return (
            f"Cannot write to {where}: DuckDB reports {first!r} (is the disk full or the folder not "
            "writable?); the import was not committed, so the store holds what it held before."
        )
    if path is not None and Path(path).is_file():
        from lifelong_core.store.damage import truncated_size, unreadable

        if truncated_size(Path(path)) is not None:
            return str(unreadable(Path(path), exc))
    return (
        f"Cannot read {where}: DuckDB reports {first!r}; the file may be damaged or truncated "
        "(`check --store` verifies it)."
    )


def _popcount(blob: bytes, length: int) -> int:
    bits = np.unpackbits(np.frombuffer(blob, dtype=np.uint8), bitorder="little")[:length]
    return int(bits.sum())


def verify(store: StoreHandle) -> list[str]:
    """Every broken rule of ``store``, one sentence each.

    Parameters
    ----------
    store : Store
        An open store.

    Returns
    -------
    list of str
        Empty when the store is sound.
    """
    try:
        return _verify(store, store.cursor())
    except duckdb.Error as exc:
        return [str(_damaged(store, exc))]


def _verify(store: StoreHandle, cur: duckdb.DuckDBPyConnection) -> list[str]:
    problems: list[str] = []
    q = lambda sql: cur.execute(sql).fetchall()  # noqa: E731
    meta = dict(q("SELECT key, value FROM store_meta"))
    if meta.get("format_version") != FORMAT_VERSION:
        problems.append(
            f"store_meta says format version {meta.get('format_version')!r}; expected {FORMAT_VERSION}."
        )
    if meta.get("block_size") != str(BLOCK_SIZE):
        problems.append(
            f"store_meta says block size {meta.get('block_size')!r}; expected {BLOCK_SIZE}."
        )
    for table, idx, ident in (
        ("models", "model_idx", "model_id"),
        ("samples", "sample_idx", "sample_id"),
    ):
        n, lo, hi, distinct, ids = q(
            f"SELECT count(*), min({idx}), max({idx}), count(DISTINCT {idx}), "
            f"count(DISTINCT {ident}) FROM {table}"
        )[0]
        if n and (lo != 0 or hi != n - 1 or distinct != n):
            problems.append(
                f"{table}.{idx} is not 0..{n - 1} without gaps or repeats (min {lo}, max {hi}, "
                f"{distinct} distinct of {n})."
            )
        if ids != n:
            problems.append(f"{table} holds {n - ids} repeated {ident}(s).")
    n_samples = q("SELECT count(*) FROM samples")[0][0]
    blocks = cur.execute("SELECT block_id, start, length FROM blocks ORDER BY start").df()
    ends = (blocks["start"] + blocks["length"]).to_numpy()
    starts = blocks["start"].to_numpy()
    if len(blocks) and (starts[0] != 0 or (starts[1:] != ends[:-1]).any() or ends[-1] != n_samples):
        problems.append(f"blocks do not cover samples 0..{n_samples - 1} end to end.")
    if not len(blocks) and n_samples:
        problems.append(f"no blocks, but {n_samples} samples.")
    if (blocks["length"] > BLOCK_SIZE).any() or (blocks["length"] < 1).any():
        problems.append(f"a block is longer than {BLOCK_SIZE} samples or empty.")
    checks = {
        "bits rows name a model that does not exist": "SELECT count(*) FROM bits b ANTI JOIN models m USING (model_idx)",
        "bits rows name a block that does not exist": "SELECT count(*) FROM bits b ANTI JOIN blocks k USING (block_id)",
        "(model, block) pairs have more than one bits row": "SELECT count(*) FROM (SELECT model_idx, block_id FROM bits GROUP BY ALL HAVING count(*) > 1)",
        "bits rows have a 'correct' blob whose length does not fit the block": "SELECT count(*) FROM bits b JOIN blocks k USING (block_id) WHERE octet_length(b.correct) != (k.length + 7) // 8",
        "bits rows have a 'known' blob whose length does not fit the block": "SELECT count(*) FROM bits b JOIN blocks k USING (block_id) "
        "WHERE b.known IS NOT NULL AND octet_length(b.known) != (k.length + 7) // 8",
        "extras rows name a model or block without a bits row": "SELECT count(*) FROM extras e ANTI JOIN bits b USING (model_idx, block_id)",
        "extras rows hold lists whose length is not the block's": "SELECT count(*) FROM extras e JOIN blocks k USING (block_id) WHERE "
        "(e.confidence IS NOT NULL AND len(e.confidence) != k.length) OR "
        "(e.predicted IS NOT NULL AND len(e.predicted) != k.length) OR "
        "(e.true_prob IS NOT NULL AND len(e.true_prob) != k.length)",
        "samples name a (dataset, domain) that is not in domains": "SELECT count(*) FROM samples s ANTI JOIN domains d USING (dataset, domain)",
        "domains name a dataset that is not in datasets": "SELECT count(*) FROM domains d ANTI JOIN datasets t USING (dataset)",
    }
    for what, sql in checks.items():
        bad = q(sql)[0][0]
        if bad:
            problems.append(f"{bad} {what}.")
    # Every blob read once: damaged pages of the file fail here, with DuckDB's reason.
    q("SELECT sum(length(correct::BIT)), sum(length(known::BIT)) FROM bits")
    n_models = q("SELECT count(*) FROM models")[0][0]
    log_models, log_samples = q(
        "SELECT coalesce(sum(new_models), 0), coalesce(sum(new_samples), 0) FROM log"
    )[0]
    if (log_models, log_samples) != (n_models, n_samples):
        problems.append(
            f"the log adds up to {log_models} models and {log_samples} samples but the store holds "
            f"{n_models} and {n_samples}."
        )
    return problems


def check_sound(store: StoreHandle) -> None:
    """Refuse a store that breaks any of its rules.

    Parameters
    ----------
    store : Store
        An open store.

    Raises
    ------
    InputError
        Naming the first broken rule (and how many there are).
    """
    problems = verify(store)
    if problems:
        more = (
            f" (and {len(problems) - 1} more problem(s); run `check --store {store.path}`)"
            if len(problems) > 1
            else ""
        )
        raise InputError(
            f"Store {store.path} fails its integrity check, so nothing is written: {problems[0]}{more}"
        )


def undo(store: StoreHandle, log_id: int) -> dict:
    """Remove what import ``log_id`` added, in one logged transaction.

    Parameters
    ----------
    store : Store
        A writer handle.
    log_id : int
        The import to undo.

    Returns
    -------
    dict
        The undo's log row.

    Raises
    ------
    InputError
        For a read-only handle, an unknown or already undone entry, an undo entry, or an
        import whose rows cannot be told apart exactly.
    """
    if store.read_only:
        raise InputError(f"Store {store.path} is open read-only; undo needs a writer.")
    with store._lock:
        con = store._connection()
        log = con.execute("SELECT * FROM log ORDER BY log_id").df()
        row = log[log["log_id"] == log_id]
        if row.empty:
            raise InputError(
                f"The store's log has no entry {log_id} (entries: {', '.join(map(str, log['log_id']))})."
            )
        row = row.iloc[0]
        if row["action"] == "undo":
            raise InputError(
                f"Log entry {log_id} is itself an undo; import the data again instead."
            )
        if ((log["action"] == "undo") & (log["source"] == f"log {log_id}")).any():
            raise InputError(f"Log entry {log_id} was already undone.")
        undone = set(log.loc[log["action"] == "undo", "source"])
        live = log[(log["action"] != "undo") & ~log["log_id"].map(lambda i: f"log {i}" in undone)]
        at = row["added_at"]
        models = np.asarray(
            con.execute(
                "SELECT model_idx FROM models WHERE added_at = ? ORDER BY model_idx", [at]
            ).fetchnumpy()["model_idx"],
            dtype=np.int64,
        )
        samples = np.asarray(
            con.execute(
                "SELECT sample_idx FROM samples WHERE added_at = ? ORDER BY sample_idx", [at]
            ).fetchnumpy()["sample_idx"],
            dtype=np.int64,
        )
        if len(models) != row["new_models"] or len(samples) != row["new_samples"]:
            raise InputError(
                f"Log entry {log_id} added {row['new_models']} models and {row['new_samples']} samples, but "
                f"{len(models)} and {len(samples)} carry its time stamp; undo would not be exact."
            )
        n_models, n_samples = store.n_models, store.n_samples
        if len(models) and models[0] != n_models - len(models):
            later = live[(live["log_id"] > log_id) & (live["new_models"] > 0)]["log_id"].tolist()
            raise InputError(
                f"Models were added after log entry {log_id} (log {', '.join(map(str, later))}); "
                "undo those first, so model indices stay without gaps."
            )
        if len(samples) and samples[0] != n_samples - len(samples):
            later = live[(live["log_id"] > log_id) & (live["new_samples"] > 0)]["log_id"].tolist()
            raise InputError(
                f"Samples were added after log entry {log_id} (log {', '.join(map(str, later))}); "
                "undo those first, so sample indices stay without gaps."
            )
        first_new_sample = int(samples[0]) if len(samples) else n_samples
        blocks = con.execute(
            "SELECT block_id, start, length FROM blocks WHERE start + length > ?",
            [first_new_sample],
        ).df()
        if len(blocks) and int(blocks["start"].min()) != first_new_sample:
            raise InputError(
                f"Log entry {log_id}'s samples share a block with older ones; undo would not be exact."
            )
        new_blocks = blocks["block_id"].to_numpy(dtype=np.int64)
        first_new_model = int(models[0]) if len(models) else n_models
        rows = con.execute(
            "SELECT b.known, k.length FROM bits b JOIN blocks k USING (block_id) "
            "WHERE b.model_idx >= ? OR b.block_id IN (SELECT unnest(?::INTEGER[]))",
            [first_new_model, new_blocks.tolist()],
        ).fetchall()
        held = sum(length if known is None else _popcount(known, length) for known, length in rows)
        if held != row["entries"]:
            raise InputError(
                f"Log entry {log_id} recorded {row['entries']} entries but its new models and samples hold {held}: "
                "it also filled in entries of models and samples that were there before, or later imports added "
                "entries to its rows; those cannot be told apart from older ones, so nothing is removed."
            )
        con.begin()
        try:
            con.execute(
                "DELETE FROM extras WHERE model_idx >= ? OR block_id IN (SELECT unnest(?::INTEGER[]))",
                [first_new_model, new_blocks.tolist()],
            )
            con.execute(
                "DELETE FROM bits WHERE model_idx >= ? OR block_id IN (SELECT unnest(?::INTEGER[]))",
                [first_new_model, new_blocks.tolist()],
            )
            con.execute("DELETE FROM models WHERE model_idx >= ?", [first_new_model])
            con.execute("DELETE FROM samples WHERE sample_idx >= ?", [first_new_sample])
            con.execute(
                "DELETE FROM blocks WHERE block_id IN (SELECT unnest(?::INTEGER[]))",
                [new_blocks.tolist()],
            )
            # Domains and datasets the import created, unless later samples use them.
            con.execute(
                "DELETE FROM domains d WHERE added_at = ? AND NOT EXISTS "
                "(SELECT 1 FROM samples s WHERE s.dataset = d.dataset AND s.domain = d.domain)",
                [at],
            )
            con.execute(
                "DELETE FROM datasets t WHERE added_at = ? AND NOT EXISTS "
                "(SELECT 1 FROM domains d WHERE d.dataset = t.dataset)",
                [at],
            )
            new_id = int(store._one("SELECT coalesce(max(log_id) + 1, 0) FROM log", con=con)[0])
            summary = {
                "log_id": new_id,
                "added_at": pd.Timestamp.now(tz="UTC").tz_localize(None).to_pydatetime(),
                "action": "undo",
                "source": f"log {log_id}",
                "new_models": -len(models),
                "new_samples": -len(samples),
                "entries": -int(held),
                "checksum": str(row["checksum"]),
            }
            con.execute("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?, ?)", list(summary.values()))
            con.commit()
        except BaseException:
            # A failed commit already ended the transaction; its own error is the one to report.
            with contextlib.suppress(duckdb.Error):
                con.rollback()
            raise
        finally:
            store._refresh()
    return summary
