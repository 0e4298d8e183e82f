"""Evaluate a model adaptively until the 95% interval is narrow enough (issue 17).

Simulation on a stored row: the model in row ``--row`` of ``--matrix`` is evaluated round by
round, the rest of the matrix (or the rows of ``--sort-rows``) being the cache, until the
half-width of the 95% interval is at most ``--until-halfwidth`` or ``--max-budget`` samples
are spent. The results are the stored row's (a simulation of a real evaluation, reported as
such); the engine's :func:`~lifelong_core.methods.adaptive.run_adaptive` takes any
callback in their place.

    python -m lifelong_core adaptive --matrix A.npy --row 7 --until-halfwidth 0.02 \\
        [--max-budget B] [--sort-rows FILE] [--seed S] [--no-tune] --out rounds.csv

rounds.csv: round, evaluated, acc, lo, hi, half (fractions; one row per round).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io_matrix import load_index_list, load_matrix

COLUMNS = ("round", "evaluated", "acc", "lo", "hi", "half")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "adaptive",
        help="adaptive evaluation of one model until the 95%% interval is narrow enough (simulated on a stored row)",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("--matrix", required=True, help="0/1 matrix, rows = models: .npy, .npz, .csv or .parquet")
    p.add_argument("--key", help="array name inside an .npz holding several (e.g. 'correct')")
    p.add_argument("--row", required=True, type=int, help="0-based row of the model to evaluate (simulated)")
    p.add_argument("--sort-rows", metavar="FILE",
                   help="0-based rows forming the cache, one per line (default: every row but --row)")
    p.add_argument("--until-halfwidth", type=float, default=None, metavar="H",
                   help="stop once the 95%% half-width is <= H (a fraction: 0.01 = 1 point)")
    p.add_argument("--max-budget", type=int, default=None, metavar="B",
                   help="never evaluate more than B samples (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random draws (default 0)")
    p.add_argument("--min-round", type=int, default=8, help="smallest round (default 8)")
    p.add_argument("--max-round", type=int, default=64, help="largest round (default 64)")
    p.add_argument("--no-tune", action="store_true",
                   help="use mirt's fixed k = 10 instead of the cross-validated item model")
    p.add_argument("--out", required=True, help="rounds.csv: round, evaluated, acc, lo, hi, half")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.methods.adaptive_method import AdaptiveMethod

    if args.until_halfwidth is None and args.max_budget is None:
        raise InputError("give --until-halfwidth H, --max-budget B or both; otherwise every sample is evaluated.")
    if args.until_halfwidth is not None and not 0 < args.until_halfwidth < 1:
        raise InputError(f"--until-halfwidth {args.until_halfwidth} must be a fraction in (0, 1) (0.01 = 1 point).")
    if not Path(args.out).resolve().parent.is_dir():
        raise InputError(f"--out directory {Path(args.out).parent} does not exist.")
    A = load_matrix(args.matrix, "--matrix", key=args.key)
    m, n = A.shape
    if not 0 <= args.row < m:
        raise InputError(f"--row {args.row} is outside the matrix's {m} rows (0 to {m - 1}).")
    if args.max_budget is not None and not 1 <= args.max_budget <= n:
        raise InputError(f"--max-budget {args.max_budget} must be between 1 and the number of samples ({n}).")
    if args.sort_rows is not None:
        sort_rows = np.sort(load_index_list(args.sort_rows, m, "--sort-rows"))
        if args.row in set(sort_rows.tolist()):
            raise InputError(f"--sort-rows file {args.sort_rows} names --row {args.row}; the evaluated model "
                             "must not be in the cache.")
    else:
        sort_rows = np.setdiff1d(np.arange(m), [args.row])
    if len(sort_rows) < 3:
        raise InputError(f"the cache needs at least 3 models, got {len(sort_rows)}.")
    method = AdaptiveMethod(seed=args.seed, tune=not args.no_tune).fit(A[sort_rows])
    res = method.simulate(A[args.row], args.seed, until_halfwidth=args.until_halfwidth, max_budget=args.max_budget,
                          min_round=args.min_round, max_round=args.max_round)
    df = pd.DataFrame([r.__dict__ for r in res.rounds], columns=list(COLUMNS))
    try:
        df.to_csv(args.out, index=False)
    except OSError as exc:
        raise InputError(f"cannot write --out file {args.out} ({exc.strerror or exc}).") from None
    e = res.estimate
    true = float(A[args.row].mean())
    ci = f"[{e.lo:.4f}, {e.hi:.4f}]" if e.lo is not None else "(no interval)"
    print(f"row {args.row}: {len(res.columns)} of {n} samples in {len(res.rounds)} rounds, stopped on {res.stopped}; "
          f"estimate {e.acc:.4f} 95% {ci}; true accuracy of the stored row {true:.4f} (simulated evaluation)")
    return 0
