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

import pandas as pd

from lifelong_core.errors import InputError


def add_source(p: argparse.ArgumentParser, store_help: str) -> None:
    """The required choice between a matrix file (``--matrix``) and a store (``--store``)."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--matrix", help="0/1 matrix, rows = models: .npy, .npz, .csv or .parquet")
    src.add_argument("--store", help=store_help)


def stderr_progress(width: int = 30) -> Callable[[float, str], None]:
    """A progress report on stderr: ``report(fraction, text)``.

    On a terminal, one bar redrawn in place (and ended with a newline at 100%); in a log
    (stderr not a terminal), one timed line per 5% or per new step, so a long run's log
    stays readable."""
    t0 = time.perf_counter()
    last = [-1.0, ""]
    tty = sys.stderr.isatty()

    def report(f: float, text: str) -> None:
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
        if f - last[0] >= 0.05 or (f >= 1.0 and last[0] < 1.0):
            last[0] = f
            print(
                f"[{time.perf_counter() - t0:7.1f} s] {100 * f:5.1f}% {text}",
                file=sys.stderr,
                flush=True,
            )

    return report


def check_out_dirs(*outputs: tuple[str | None, str]) -> None:
    """Each ``(path, flag)`` output's folder exists (``path`` None: not asked for).

    Checked before any data is read, so a typo costs no computation.
    """
    for path, flag in outputs:
        if path is not None and not Path(path).resolve().parent.is_dir():
            raise InputError(f"{flag} directory {Path(path).parent} does not exist.")


def write_csv(df: pd.DataFrame, path: str, flag: str) -> None:
    """``df`` to the CSV file ``path`` set by ``flag``; a failed write is one sentence."""
    from lifelong_core.io.edges import cause

    try:
        df.to_csv(path, index=False)
    except OSError as exc:
        raise InputError(f"cannot write {flag} file {path}: {cause(exc)}.") from None


@contextmanager
def store_selection(store: str, dataset: str | None) -> Iterator[tuple[object, object]]:
    """``(store, selection)``: the store open read-only and the app's selection of ``dataset``
    (default: the store's only one): its real (not estimated) models evaluated on every sample."""
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    if not Path(store).exists():
        raise InputError(f"store {store} does not exist.")
    with Store.open(store, read_only=True) as st:
        names = st.datasets()["dataset"].tolist()
        if dataset is None:
            if len(names) != 1:
                raise InputError(
                    f"the store holds {len(names)} datasets; name one with --dataset ({', '.join(names)})."
                )
            dataset = names[0]
        elif dataset not in names:
            raise InputError(f"dataset {dataset!r} is not in the store ({', '.join(names)}).")
        yield st, select(st, dataset)
