"""Sort & Search budget sweep of insert_M on a 0/1 matrix (the ``sweep`` contract).

Sort on the rows named by ``--sort-rows`` (or ``--sort-models K`` rows drawn with
``--seed``), estimate every other row at each budget, write one summary row per budget
(``--out``) and optionally one row per (model, budget) (``--per-model``). ``.npy``
matrices are streamed from disk a chunk of rows at a time; ``--store DB`` takes the rows
(models, by ``model_idx``) from a store instead, read straight into packed chunks, through
the Python API's ``sweep`` (the same function, the same numbers).

The default ``--method`` is the product's default estimator (``auto``: per budget the best
of ``mirt``, Sort & Search's threshold and CopyNearest&Expand on the Sort rows, chosen by
cross-validation; a 95% interval per model). It needs the Sort rows in memory, seconds of
cross-validation, and about a millisecond per model and budget at n = 10,000; for very
large matrices the threshold
rules ``midpoint`` (the better of the two S&S rules) and ``reference`` (the published
code) run on streamed prefix counts. With ``--store``, the rows are the real models of one
dataset evaluated on every one of its samples (``--dataset``; a store with one dataset
needs none), in model_idx order; a line says how many models that is and which were left
out. How: ``--kernel dense|packed`` (packed bits from
file or store to the counts; paper scale) and ``--executor serial|threads|dask``; the
numbers do not depend on them. ``--engine dask`` (kept from before) means ``--kernel
packed --executor dask`` (a local cluster; see docs/SCALING.md).

After the sweep it prints the method's E_agg beside the baselines on the same evaluated
models (``--baselines FILE`` also writes them; ``--no-baselines`` skips them): a uniform
random sample's exact expected E_agg, the first items of each task as ``lm_eval --limit``
runs them (``first-n``; a second, serial pass over the rows; with ``--matrix`` the
columns are one task), the ratio to random, the equivalent random budget and, labelled
as the paper's figure, ``n / n'``. The rules are
:func:`lifelong_core.workflows.backtest.sweep_baselines`.
"""

from __future__ import annotations

import argparse
import os
from argparse import _SubParsersAction
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lifelong_core.commands._common import (
    add_dataset,
    add_method,
    add_source,
    check_out_dirs,
    open_store,
    parse_ints,
    store_dataset,
    write_csv,
)
from lifelong_core.errors import InputError
from lifelong_core.io.matrix import load_float_matrix, load_index_list
from lifelong_core.methods.registry import (
    DEFAULT_METHOD,
    LIMIT_METHOD,
    THRESHOLD_RULES,
    available_methods,
    describe_methods,
)
from lifelong_core.rows import MatrixRows

if TYPE_CHECKING:
    from lifelong_core.sweeping import SweepResult
from lifelong_core.sortsearch.search import SAMPLING
from lifelong_core.sortsearch.sort import SORTS, choose_sort_rows
from lifelong_core.studies.bands import repeat_seeds
from lifelong_core.sweeping import (
    EXECUTORS,
    KERNELS,
    PER_MODEL_COLUMNS,
    TABLE_COLUMNS,
    check_bounds,
    run_sweep,
)
from lifelong_core.sweeping.result import DECOMP_KEYS

ENGINES = ("numpy", "dask")


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="Sort & Search budget sweep (MAE, E_agg, kappa, correlations per budget)",
        description=(
            "Estimate every model of a 0/1 matrix or a store's dataset from a few samples at each"
            " budget, and report the error per budget: MAE, E_agg, kappa and correlations."
        ),
        example=(
            "lbe sweep --store data/demo.duckdb --dataset lifelong-digits --sort-models 100 "
            "--budgets 16,64,256 --method midpoint --out sweep.csv"
        ),
    )
    add_source(
        p,
        "DuckDB store; rows are the dataset's models evaluated on all its samples, in model_idx order",
    )
    add_dataset(p)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--sort-rows", metavar="FILE", help="0-based row indices used for Sort, one per line"
    )
    who.add_argument(
        "--sort-models", metavar="K", type=int, help="use K rows drawn at random (--seed) for Sort"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed for --sort-models and random sampling (default 0)"
    )
    p.add_argument(
        "--budgets",
        default=None,
        help="comma-separated budgets n' (default: 8,16,...,32768 capped at the number of samples)",
    )
    p.add_argument(
        "--sort",
        choices=SORTS,
        default="sum",
        help="sum of correct answers (default), confidence sum (needs --confidence) or recursive sum",
    )
    p.add_argument(
        "--sampling",
        choices=SAMPLING,
        default=None,
        help="where the n' samples lie along the easy-to-hard order, for the threshold rules "
        "midpoint and reference (the other methods have their own design: copy-nearest a random "
        "sample, mirt, irt and neighbours one random sample per stratum of the order): "
        "uniform = the centre of each of n' equal strata (default), random = uniformly at "
        "random, reference = the published code's grid (default with --method reference; it "
        "skips the easy end when n' does not divide n), listing = Listing 1's grid as printed, "
        "arange(0, n, n // n')[1:] (not always n' samples: a line says how many)",
    )
    add_method(
        p,
        default=DEFAULT_METHOD,
        help="search method: "
        + describe_methods().replace("%", "%%")
        + " ('reference' reproduces the published code)",
        alias="--search",
    )
    p.add_argument(
        "--confidence", metavar="C", help="confidence of the true class, same shape as --matrix"
    )
    p.add_argument(
        "--depth", type=int, default=2, help="recursion depth of --sort recursive (default 2)"
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="numpy",
        help="numpy (default) or dask: the same as --kernel packed --executor dask "
        "(sum Sort and --method midpoint|reference only)",
    )
    p.add_argument(
        "--kernel",
        choices=tuple(KERNELS),
        default=None,
        help="packed or dense: packed bits from the source to the counts (sum Sort and threshold "
        "rules only; the default where it runs) or uint8 rows and prefix counts (the default "
        "otherwise, and the only one with --decompose)",
    )
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=None,
        help="threads (default; serial with --threads 1), serial or dask (a local dask cluster)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads of the executor, or of each dask worker (default: all cores; results do "
        "not depend on it)",
    )
    p.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        help="rows per task (default: ~4 MB of dense rows; 256 packed rows)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="repeat the sweep with seeds S, S+1, ..., S+R-1 (each draws its own --sort-models set and "
        "random samples); R > 1 adds a last column 'repeat' to both outputs, one block of rows per "
        "repeat (default 1: one run, no extra column)",
    )
    p.add_argument(
        "--decompose",
        action="store_true",
        help="threshold rules, dense kernel: add aleatoric, epistemic, kappa_aleatoric, kappa_epistemic "
        "after the standard columns of both outputs (Sort & Search's error decomposition)",
    )
    p.add_argument(
        "--ties",
        choices=("stable", "reference"),
        default=None,
        help="order of tied columns in Sort: stable (default) or reference (Listing 1's unstable "
        "argsort, the default with --method reference); fix it to compare rules on one order",
    )
    p.add_argument(
        "--out", required=True, help="sweep.csv: budget, mae, eagg, kappa, pearson, spearman"
    )
    p.add_argument(
        "--per-model",
        metavar="FILE",
        help="per_model.csv: model_row, budget, est_acc, true_acc, mae",
    )
    p.add_argument(
        "--baselines",
        metavar="FILE",
        help="also write the E_agg against the baselines (random sample, first-n) as CSV",
    )
    p.add_argument(
        "--no-baselines",
        dest="no_baselines",
        action="store_true",
        help="skip the comparison with the baselines (first-n takes a second pass over the rows)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.method not in available_methods():
        raise InputError(
            f"unknown --method {args.method!r}; available: {', '.join(available_methods())}."
        )
    # The engine's seed and work bounds (lifelong_core.limits), before any file is read.
    seeds = repeat_seeds(args.seed, args.repeats)
    budgets = parse_ints(args.budgets, "--budgets") if args.budgets is not None else None
    if args.threads is None:
        args.threads = os.cpu_count() or 1
    check_bounds(seed=args.seed, depth=args.depth, threads=args.threads, chunk_rows=args.chunk_rows)
    check_out_dirs(
        (args.out, "--out"), (args.per_model, "--per-model"), (args.baselines, "--baselines")
    )
    if args.baselines is not None and args.no_baselines:
        raise InputError("--baselines writes what --no-baselines skips; give one of them.")
    if args.engine == "dask":
        _check_dask_options(args)
    if args.decompose and args.method not in THRESHOLD_RULES:
        raise InputError(
            f"--decompose applies to the threshold rules (midpoint, reference), not --method {args.method}."
        )
    if args.repeats > 1 and args.sort_rows is not None:
        raise InputError(
            "--repeats draws a new Sort set for every repeat; use --sort-models K instead of --sort-rows."
        )
    kernel = args.kernel or ("packed" if args.engine == "dask" else None)
    executor = args.executor or (
        "dask" if args.engine == "dask" else "threads" if args.threads > 1 else "serial"
    )
    if args.confidence is not None and args.store is not None:
        raise InputError(
            "--confidence goes with --matrix; a store's confidences are not used by sweep."
        )
    if args.store is not None:
        results = _store_sweeps(args, budgets, kernel, executor, seeds)

        def first_n() -> SweepResult:
            return _store_sweeps(args, budgets, None, "serial", seeds[:1], LIMIT_METHOD)[0]
    elif args.dataset is not None:
        raise InputError("--dataset goes with --store, not --matrix.")
    else:
        every = MatrixRows(args.matrix, what="--matrix")
        results = [
            _run_one(args, every, every.subset, budgets, kernel, executor, seed) for seed in seeds
        ]

        def first_n() -> SweepResult:
            return _run_one(
                args, every, every.subset, budgets, None, "serial", seeds[0], LIMIT_METHOD
            )

    evaluated = results[0].config.get("evaluated", {})
    if any(k != v for k, v in evaluated.items()):
        print(
            "the listing's grid evaluates "
            + ", ".join(f"{v:,} samples at budget {k:,}" for k, v in evaluated.items())
            + "."
        )
    if len(results) == 1:
        _write_outputs(results[0], args)
    else:
        _write_repeats(results, args)
    if not args.no_baselines:
        _report_baselines(args, results, first_n)
    return 0


def _report_baselines(
    args: argparse.Namespace, results: list, first_n: Callable[[], SweepResult]
) -> None:
    """Print (and with --baselines write) the first sweep's E_agg against the baselines."""
    from lifelong_core.workflows.backtest import sweep_baselines

    res = results[0]
    limit = res if args.method == LIMIT_METHOD else first_n()
    n = int(res.config.get("n") or res.order.shape[0])
    t = sweep_baselines(res.per_model, n, limit.table, res.config.get("evaluated"))
    which = " (the first repeat's Sort set)" if len(results) > 1 else ""
    tasks = " the first items of each task" if args.store is not None else " the first columns"
    print(
        f"E_agg in points against the baselines on the same evaluated models{which}: a uniform "
        f"random sample's exact expectation, and first-n ({tasks.strip()}, as lm_eval --limit "
        "runs them). One common item draw per budget, as the sweep runs; lbe backtest gives "
        "each model its own draws and intervals."
    )
    print(
        f"{'n′':>7} {args.method:>12} {'random':>8} {'first-n':>8} {'×random':>8} "
        f"{'= random items':>15} {'n/n′ (paper)':>13}"
    )
    r: Any
    for r in t.itertuples():
        ratio = "-" if np.isnan(r.eagg_vs_random) else f"{r.eagg_vs_random:.2f}"
        print(
            f"{r.budget:>7} {100 * r.eagg:>12.2f} {100 * r.random_eagg:>8.2f} "
            f"{100 * r.first_n_eagg:>8.2f} {ratio:>8} {r.equivalent_budget:>15,} "
            f"{r.paper_saving:>12.1f}×"
        )
    if args.baselines is not None:
        write_csv(t, args.baselines, "--baselines")


def _store_sweeps(
    args: argparse.Namespace,
    budgets: Sequence[int] | None,
    kernel: str | None,
    executor: str,
    seeds: Sequence[int],
    search: str | None = None,
) -> list:
    """One sweep per seed on the store's dataset, through the Python API's ``sweep``
    (with ``search``, that method instead of ``--method``, quietly)."""
    # Imported here: DuckDB adds to every command's start-up and only --store needs it.
    from lifelong_core.api import sweep
    from lifelong_core.workflows.sweeps import store_sweep_rows

    with open_store(args.store) as st:
        dataset = store_dataset(st, args.dataset)
        rows = store_sweep_rows(st, dataset)
        if search is None:
            print(rows.found.note())
        sort_rows = None if args.sort_rows is None else _sort_rows_file(args.sort_rows, rows.m)
        return [
            sweep(
                st,
                dataset=dataset,
                sort_models=None if sort_rows is not None else args.sort_models,
                sort_rows=sort_rows,
                budgets=budgets,
                search=search or args.method,
                seed=seed,
                sort=args.sort,
                sampling=args.sampling,
                ties=args.ties,
                depth=args.depth,
                decompose=args.decompose and search is None,
                kernel=kernel,
                executor=executor,
                threads=args.threads,
                chunk_rows=args.chunk_rows,
            )
            for seed in seeds
        ]


def _sort_rows_file(path: str, m: int) -> np.ndarray:
    """The rows of ``--sort-rows``, checked against the ``m`` rows of the matrix."""
    sort_rows = np.sort(load_index_list(path, m, "--sort-rows"))
    if len(sort_rows) == m:
        raise InputError(
            f"--sort-rows file {path} names all {m} rows of the matrix; leave at least one to evaluate."
        )
    return sort_rows


def _run_one(
    args: argparse.Namespace,
    every: MatrixRows,
    rows: Callable[[np.ndarray], MatrixRows],
    budgets: Sequence[int] | None,
    kernel: str | None,
    executor: str,
    seed: int,
    search: str | None = None,
) -> SweepResult:
    """One sweep with ``seed`` for --sort-models and random sampling (of ``search``
    instead of ``--method`` when given)."""
    m, n = every.n_rows, every.n
    if args.sort_rows is not None:
        sort_rows = _sort_rows_file(args.sort_rows, m)
    else:
        sort_rows = choose_sort_rows(m, args.sort_models, seed)
    eval_rows = np.setdiff1d(np.arange(m, dtype=np.int64), sort_rows)
    confidence = None
    if args.confidence is not None:
        conf = load_float_matrix(args.confidence, "--confidence")
        if conf.shape != (m, n):
            raise InputError(
                f"--confidence file {args.confidence} has shape {conf.shape}, but --matrix has {(m, n)}."
            )
        confidence = conf[sort_rows]
    elif args.sort == "confidence":
        raise InputError("--sort confidence needs --confidence C (confidence of the true class).")
    return run_sweep(
        rows(sort_rows),
        rows(eval_rows),
        budgets,
        sort=args.sort,
        sampling=args.sampling,
        search=search or args.method,
        confidence=confidence,
        seed=seed,
        depth=args.depth,
        ties=args.ties,
        decompose=args.decompose and search is None,
        kernel=kernel,
        executor=executor,
        threads=args.threads,
        chunk_rows=args.chunk_rows,
    )


def _check_dask_options(args: argparse.Namespace) -> None:
    # Checked before any data is read: the dask engine maps the packed chunk kernels,
    # which exist for Sorting by Sum and the two threshold rules only.
    if args.method not in THRESHOLD_RULES:
        raise InputError(
            f"--engine dask runs the threshold rules only; add --method midpoint or --method reference "
            f"(got {args.method!r})."
        )
    if args.sort != "sum":
        raise InputError(f"--engine dask sorts by sum only (got --sort {args.sort}).")
    if args.confidence is not None:
        raise InputError("--engine dask sorts by sum; --confidence is not used there.")
    if args.decompose:
        raise InputError(
            "--engine dask does not compute the error decomposition; leave out --decompose."
        )


def _per_model_columns(per_model: pd.DataFrame) -> list[str]:
    return PER_MODEL_COLUMNS + [c for c in ("est_lo", "est_hi") + DECOMP_KEYS if c in per_model]


def _table_columns(table: pd.DataFrame) -> list[str]:
    return TABLE_COLUMNS + [c for c in DECOMP_KEYS if c in table]


def _write_outputs(result: SweepResult, args: argparse.Namespace) -> None:
    write_csv(result.table[_table_columns(result.table)], args.out, "--out")
    if args.per_model is not None:
        write_csv(
            result.per_model[_per_model_columns(result.per_model)], args.per_model, "--per-model"
        )


def _write_repeats(results: list, args: argparse.Namespace) -> None:
    """Per-repeat rows: the contract's columns, then ``repeat`` (0, 1, ...)."""
    write_csv(
        pd.concat(
            [r.table[_table_columns(r.table)].assign(repeat=i) for i, r in enumerate(results)],
            ignore_index=True,
        ),
        args.out,
        "--out",
    )
    if args.per_model is not None:
        write_csv(
            pd.concat(
                [
                    r.per_model[_per_model_columns(r.per_model)].assign(repeat=i)
                    for i, r in enumerate(results)
                ],
                ignore_index=True,
            ),
            args.per_model,
            "--per-model",
        )
