"""What several commands share: the ``--matrix | --store`` choice, output files, a store's dataset.

Not a command (it is not in ``cli.COMMAND_MODULES``). Like the commands, it imports the
store only inside the function that needs it, so ``--help`` does not load DuckDB.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError

if TYPE_CHECKING:
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import Selection


def add_store(p: argparse.ArgumentParser, help: str = "DuckDB store file") -> None:
    """The required ``--store FILE`` of a command that reads (or writes) one store."""
    p.add_argument("--store", required=True, help=help)


def add_method(
    p: argparse.ArgumentParser,
    *,
    default: str | None,
    help: str,
    alias: str | None = None,
    **kwargs: Any,
) -> None:
    """``--method``: the one name of the method option on every command (``args.method``).

    ``alias`` is the option's older name on this command (``--search``, ``--methods``):
    it still works, sets the same value, and is left out of ``--help`` and the reference.
    """
    p.add_argument("--method", dest="method", default=default, help=help, **kwargs)
    if alias is not None:
        p.add_argument(
            alias,
            dest="method",
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
            **kwargs,
        )


def comma_list(text: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``: the entries of a comma-separated flag."""
    return [t.strip() for t in str(text).split(",") if t.strip()]


def choices_list(text: str, allowed: tuple[str, ...] | list[str], flag: str) -> list[str]:
    """The entries of a comma-separated flag, each one of ``allowed``, once each, in order."""
    out = comma_list(text)
    if not out:
        raise InputError(f"{flag} is empty.")
    for t in out:
        if t not in allowed:
            raise InputError(f"{flag} entry {t!r} is not one of {', '.join(allowed)}.")
    return list(dict.fromkeys(out))


def parse_ints(text: str, flag: str) -> list[int]:
    """The whole numbers of a comma-separated flag (``--budgets 8,16,32``)."""
    out = []
    for tok in comma_list(text):
        try:
            out.append(int(tok))
        except ValueError:
            raise InputError(
                f"{flag} must be comma-separated whole numbers: entry {tok!r} is not a whole number."
            ) from None
    if not out:
        raise InputError(f"{flag} is empty.")
    return out


def matrix_arg(args: argparse.Namespace, key: str | None = None) -> np.ndarray:
    """The ``--matrix`` file of a command that reads a matrix or a store, loaded (0/1,
    checked); ``--dataset`` belongs to ``--store``."""
    from lifelong_core.io.matrix import load_matrix

    if getattr(args, "dataset", None) is not None:
        raise InputError("--dataset goes with --store, not --matrix.")
    return load_matrix(args.matrix, "--matrix", key=key)


def add_source(p: argparse.ArgumentParser, store_help: str) -> None:
    """The required choice between a matrix file (``--matrix``) and a store (``--store``)."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--matrix", help="0/1 matrix, rows = models: .npy, .npz, .csv or .parquet")
    src.add_argument("--store", help=store_help)


def stderr_progress(width: int = 30) -> Callable[[float, str], object]:
    """A progress report on stderr: ``report(fraction, text)``.

    On a terminal, one bar redrawn in place (and ended with a newline at 100%); in a log
    (stderr not a terminal), one timed line per 5% or per new step, so a long run's log
    stays readable."""
    t0 = time.perf_counter()
    last = -1.0
    tty = sys.stderr.isatty()

    def report(f: float, text: str) -> None:
        nonlocal last
        f = min(max(float(f), 0.0), 1.0)
        if tty:
            filled = round(width * f)
            sys.stderr.write(
                f"\r[{'#' * filled}{' ' * (width - filled)}] {100 * f:5.1f}% "
                f"{time.perf_counter() - t0:6.1f} s  {text[:60]:<60}"
            )
            if f >= 1.0:
                sys.stderr.write("\n")
            sys.stderr.flush()
            return
        if f - last >= 0.05 or (f >= 1.0 and last < 1.0):
            last = f
            print(
                f"[{time.perf_counter() - t0:7.1f} s] {100 * f:5.1f}% {text}",
                file=sys.stderr,
                flush=True,
            )

    return report


def check_out_dirs(*outputs: tuple[str | None, str]) -> None:
    """Each ``(path, flag)`` output can be written (``path`` None: not asked for).

    Checked before any data is read, so a typo or an unwritable place (a missing folder,
    ``/proc``, a device) costs no computation
    (:func:`lifelong_core.io.edges.check_output_path`).
    """
    from lifelong_core.io.edges import check_output_path

    for path, flag in outputs:
        if path is not None:
            if not Path(path).resolve().parent.is_dir():
                raise InputError(f"{flag} directory {Path(path).parent} does not exist.")
            check_output_path(path, flag)


def write_csv(df: pd.DataFrame, path: str, flag: str) -> None:
    """``df`` to the CSV file ``path`` set by ``flag``; a failed write is one sentence."""
    from lifelong_core.io.edges import cause

    try:
        df.to_csv(path, index=False)
    except OSError as exc:
        raise InputError(f"cannot write {flag} file {path}: {cause(exc)}.") from None


def write_table(df: pd.DataFrame, path: str, flag: str = "--out") -> None:
    """:func:`write_csv`, after checking that the file's folder exists (one sentence)."""
    target = Path(path)
    if not target.parent.exists():
        raise InputError(f"cannot write {path}: the folder {target.parent} does not exist.")
    write_csv(df, path, flag)


@contextmanager
def open_store(store: str) -> Iterator[Store]:
    """The store at ``store`` open read-only; one sentence if there is none (the store's own)."""
    from lifelong_core.store import Store

    with Store.open(store, read_only=True) as st:
        yield st


def store_dataset(st: Store, dataset: str | None) -> str:
    """The dataset a command reads from the open store ``st``: every command that reads one
    dataset asks this (:func:`lifelong_core.workflows.selection.resolve_dataset`): a store
    with one dataset needs no ``--dataset``; with several, the command stops (exit 2) with
    one sentence naming them."""
    from lifelong_core.workflows.selection import resolve_dataset

    return resolve_dataset(st, dataset)


def add_dataset(p: argparse.ArgumentParser, what: str = "the dataset to read") -> None:
    """``--dataset D``: the one flag, with the one rule of :func:`store_dataset`."""
    p.add_argument(
        "--dataset",
        metavar="D",
        help=f"with --store: {what} (needed when the store holds several; default: its only one)",
    )


@contextmanager
def store_selection(
    store: str, dataset: str | None, domains: list[str] | None = None
) -> Iterator[tuple[Store, Selection]]:
    """``(store, selection)``: the store open read-only and the app's selection of the
    dataset :func:`store_dataset` resolves: its real (not estimated) models evaluated on
    every sample (of ``domains`` when given: a domain the dataset lacks is refused with
    one sentence naming ``domains``)."""
    from lifelong_core.workflows.selection import check_domains, select

    with open_store(store) as st:
        name = store_dataset(st, dataset)
        yield st, select(st, name, check_domains(st, name, domains))
