"""Packed-bit sweep from a matrix file or a store, with the threaded or the dask engine.

    python -m lifelong_core.packed (--matrix A.npy | --store DB) (--sort-rows FILE | --sort-models K)
        [--seed S] [--budgets 8,16,...] [--sampling uniform|random|reference] [--search midpoint|reference]
        [--engine numpy|dask] [--threads T] [--chunk-rows R] --out sweep.csv [--per-model F]

Output files follow the ``sweep`` contract of DESIGN.md (same columns, same numbers as
``python -m lifelong_core sweep`` for Sorting by Sum and the threshold rules). With
``--store`` the rows are the store's models (``model_idx``) and are read straight into
packed chunks. Bad input prints ``error: <one sentence>`` and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.io.matrix import load_index_list
from lifelong_core.rows import DEFAULT_CHUNK_ROWS, MatrixRows
from lifelong_core.sortsearch.search import DEFAULT_RULE, RULES, SAMPLING
from lifelong_core.sortsearch.sort import choose_sort_rows
from lifelong_core.sortsearch.sweep import PER_MODEL_COLUMNS, TABLE_COLUMNS

ENGINES = ("numpy", "dask")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lifelong_core.packed", description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--matrix", help="0/1 matrix, rows = models (.npy streamed; .npz/.csv/.parquet loaded)")
    src.add_argument("--store", help="DuckDB store; rows are its models in model_idx order")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--sort-rows", metavar="FILE", help="0-based row indices used for Sort, one per line")
    who.add_argument("--sort-models", metavar="K", type=int, help="use K rows drawn at random (--seed) for Sort")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budgets", default=None, help="comma-separated budgets (default 8,16,...,32768 capped at n)")
    p.add_argument("--sampling", choices=SAMPLING, default=None)
    p.add_argument("--search", choices=RULES, default=DEFAULT_RULE)
    p.add_argument("--engine", choices=ENGINES, default="numpy", help="numpy: thread pool; dask: local dask cluster")
    p.add_argument("--threads", type=int, default=None, help="threads (default: all cores)")
    p.add_argument("--chunk-rows", type=int, default=DEFAULT_CHUNK_ROWS)
    p.add_argument("--out", required=True)
    p.add_argument("--per-model", metavar="FILE")
    return p


def _sources(args):
    if args.store is not None:
        from lifelong_core.store.packed_bulk import StoreRows

        all_rows = StoreRows(args.store)
        m = all_rows.n_rows
        make = lambda rows: StoreRows(args.store, rows)  # noqa: E731
    else:
        all_rows = MatrixRows(args.matrix, what="--matrix")
        m = all_rows.n_rows
        make = lambda rows: MatrixRows(args.matrix, rows, what="--matrix")  # noqa: E731
    if args.sort_rows is not None:
        sort_rows = np.sort(load_index_list(args.sort_rows, m, "--sort-rows"))
        if len(sort_rows) == m:
            raise InputError(f"--sort-rows file {args.sort_rows} names all {m} rows; leave at least one to evaluate.")
    else:
        sort_rows = choose_sort_rows(m, args.sort_models, args.seed)
    eval_rows = np.setdiff1d(np.arange(m, dtype=np.int64), sort_rows)
    return make(sort_rows), make(eval_rows)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.commands.sweep import parse_budgets

    budgets = parse_budgets(args.budgets) if args.budgets is not None else None
    for path, what in ((args.out, "--out"), (args.per_model, "--per-model")):
        if path is not None and not Path(path).resolve().parent.is_dir():
            raise InputError(f"{what} directory {Path(path).parent} does not exist.")
    if args.threads is not None and args.threads < 1:
        raise InputError(f"--threads must be at least 1, got {args.threads}.")
    A_sort, A_eval = _sources(args)
    common = dict(sampling=args.sampling, search=args.search, seed=args.seed, chunk_rows=args.chunk_rows)
    if args.engine == "dask":
        from lifelong_core.packed.dask_engine import run_sweep_dask

        result = run_sweep_dask(A_sort, A_eval, budgets, threads_per_worker=args.threads or 2, **common)
    else:
        from lifelong_core.packed.sweep import run_sweep_packed

        result = run_sweep_packed(A_sort, A_eval, budgets, threads=args.threads, **common)
    try:
        result.table[TABLE_COLUMNS].to_csv(args.out, index=False)
        if args.per_model is not None:
            result.per_model[PER_MODEL_COLUMNS].to_csv(args.per_model, index=False)
    except OSError as exc:
        raise InputError(f"cannot write output ({exc.strerror or exc}).") from None
    return 0


def main(argv: list[str] | None = None) -> int:
    from lifelong_core.cli import error_line

    p = parser()
    args = p.parse_args(argv)
    try:
        return run(args)
    except InputError as exc:
        print(error_line(exc, p), file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
