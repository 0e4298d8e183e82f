"""Evaluate a model adaptively until the 95% interval is narrow enough.

Two modes, the same design, estimator and stopping rule
(:mod:`lifelong_core.methods.adaptive`):

- ``--row R``, a simulation: the model in row R of ``--matrix`` is evaluated round by round,
  the rest of the matrix (or the rows of ``--sort-rows``) being the cache; its stored
  results stand in for real evaluations (reported as such).
- ``--next FILE``, a real model through files: the cache is the matrix (or ``--sort-rows``);
  ``--results`` holds every result so far (``column,correct``, 0-based columns; omit it for
  the first round); the command replays the rounds from ``--seed``, writes the next round's
  columns to FILE (empty when the evaluation should stop) and the rounds so far to ``--out``.

    python -m lifelong_core adaptive --matrix A.npy --row 7 --until-halfwidth 0.02 \\
        [--max-budget B] [--sort-rows FILE] [--seed S] [--no-tune] --out rounds.csv
    python -m lifelong_core adaptive --matrix A.npy [--results done.csv] --next round.csv \\
        --until-halfwidth 0.02 [--max-budget B] [--seed S] --out rounds.csv

- ``--store S --next samples.json``, a real model with lm-evaluation-harness: the cache is a
  dataset of the store; each round's ``lm_eval ... --samples samples.json --log_samples``
  run is passed back with ``--lm-eval PATH`` (one per round so far), and the next round's
  items are written in lm-eval's ``--samples`` format (no file once the evaluation stops).

    python -m lifelong_core adaptive --store S [--dataset D] [--lm-eval OUT1 --lm-eval OUT2 ...] \\
        --next samples.json --until-halfwidth 0.02 [--max-budget B] [--seed S] --out rounds.csv

rounds.csv: round, evaluated, acc, lo, hi, half (fractions; one row per round).
round.csv: column (the samples to evaluate next).
"""

from __future__ import annotations

import argparse
from argparse import _SubParsersAction
from pathlib import Path

import numpy as np
import pandas as pd

from lifelong_core.commands._common import (
    add_dataset,
    add_source,
    check_out_dirs,
    open_store,
    store_dataset,
    write_csv,
)
from lifelong_core.errors import InputError
from lifelong_core.io.matrix import load_index_list, load_matrix

COLUMNS = ("round", "evaluated", "acc", "lo", "hi", "half")


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "adaptive",
        help="adaptive evaluation of one model until the 95%% interval is narrow enough (simulated on a stored row)",
        description=(
            "Evaluate one model in rounds, each where the predictions are least sure, until the "
            "95% interval is narrow enough (simulated on a stored model's row, or one round at a "
            "time for a real model)."
        ),
        example=(
            "lbe adaptive --store data/demo.duckdb --dataset open-llm-leaderboard-v2 --row 7 "
            "--until-halfwidth 0.04 --max-budget 400 --no-tune --out rounds.csv"
        ),
    )
    add_source(p, "DuckDB store: the cache is a dataset's real models (with --lm-eval rounds)")
    add_dataset(p, "the dataset whose real models are the cache")
    p.add_argument(
        "--lm-eval",
        dest="lm_eval",
        action="append",
        metavar="PATH",
        help="with --store --next: an earlier round's lm_eval --log_samples run (repeat for every round)",
    )
    p.add_argument(
        "--task",
        action="append",
        metavar="TASK=HARNESS_TASK",
        help="with --store: map a task of the sample ids to the harness's name for it (repeatable)",
    )
    p.add_argument(
        "--metric",
        help="with --lm-eval: the 0/1 metric when a task records several (default: the one each "
        "task was imported with)",
    )
    p.add_argument(
        "--filter", help="with --lm-eval: the filter to keep when a task was logged under several"
    )
    p.add_argument(
        "--format",
        choices=("lm-eval", "inspect", "csv"),
        default="lm-eval",
        help="with --store --next: lm-eval --samples JSON (default), Inspect's --sample-id value, "
        "or a CSV of sample ids",
    )
    p.add_argument("--key", help="array name inside an .npz holding several (e.g. 'correct')")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--row", type=int, help="0-based row of a stored model to evaluate (simulated)"
    )
    who.add_argument(
        "--next", metavar="FILE", help="a real model: write the next round's columns to FILE"
    )
    p.add_argument(
        "--results", metavar="FILE", help="with --next: every result so far, CSV column,correct"
    )
    p.add_argument(
        "--sort-rows",
        metavar="FILE",
        help="0-based rows forming the cache, one per line (default: every row but --row)",
    )
    p.add_argument(
        "--until-halfwidth",
        type=float,
        default=None,
        metavar="H",
        help="stop once the 95%% half-width is <= H (a fraction: 0.01 = 1 point)",
    )
    p.add_argument(
        "--max-budget",
        type=int,
        default=None,
        metavar="B",
        help="never evaluate more than B samples (default: all)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random draws (default 0)")
    p.add_argument("--min-round", type=int, default=8, help="smallest round (default 8)")
    p.add_argument("--max-round", type=int, default=64, help="largest round (default 64)")
    p.add_argument(
        "--no-tune",
        action="store_true",
        help="use mirt's fixed k = 10 instead of the cross-validated item model",
    )
    p.add_argument("--out", required=True, help="rounds.csv: round, evaluated, acc, lo, hi, half")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.methods.adaptive import advance
    from lifelong_core.methods.adaptive_method import AdaptiveMethod

    if args.row is not None and args.until_halfwidth is None and args.max_budget is None:
        raise InputError(
            "give --until-halfwidth H, --max-budget B or both; otherwise every sample is evaluated."
        )
    if args.results is not None and args.next is None:
        raise InputError(
            "--results goes with --next FILE (a real model's round trip); --row simulates instead."
        )
    if args.until_halfwidth is not None and not 0 < args.until_halfwidth < 1:
        raise InputError(
            f"--until-halfwidth {args.until_halfwidth} must be a fraction in (0, 1) (0.01 = 1 point)."
        )
    check_out_dirs((args.out, "--out"), (args.next, "--next"))
    cache = None
    if args.store is not None:
        from lifelong_core.workflows import item_choice

        if args.results is not None or args.key is not None or args.sort_rows is not None:
            raise InputError(
                "--results, --key and --sort-rows go with --matrix; with --store give the rounds' "
                "runs as --lm-eval PATH."
            )
        with open_store(args.store) as st:
            cache = item_choice.cache_of(st, store_dataset(st, args.dataset))
            recorded = st.harness_metrics(store_dataset(st, args.dataset))
        A = cache.A
    else:
        if args.lm_eval or args.task or args.dataset:
            raise InputError("--lm-eval, --task and --dataset go with --store.")
        A = load_matrix(args.matrix, "--matrix", key=args.key)
    m, n = A.shape
    if args.row is not None and not 0 <= args.row < m:
        raise InputError(f"--row {args.row} is outside the matrix's {m} rows (0 to {m - 1}).")
    if args.max_budget is not None and not 1 <= args.max_budget <= n:
        raise InputError(
            f"--max-budget {args.max_budget} must be between 1 and the number of samples ({n})."
        )
    if args.sort_rows is not None:
        sort_rows = np.sort(load_index_list(args.sort_rows, m, "--sort-rows"))
        if args.row is not None and args.row in set(sort_rows.tolist()):
            raise InputError(
                f"--sort-rows file {args.sort_rows} names --row {args.row}; the evaluated model "
                "must not be in the cache."
            )
    else:
        sort_rows = np.setdiff1d(np.arange(m), [] if args.row is None else [args.row])
    if len(sort_rows) < 3:
        raise InputError(f"the cache needs at least 3 models, got {len(sort_rows)}.")
    if cache is not None and args.next is not None:
        from lifelong_core.io.harness_items import parse_task_names
        from lifelong_core.workflows import adaptive as flow
        from lifelong_core.workflows.new_model import metric_and_filter

        names = parse_task_names(args.task)
        metric, flt = metric_and_filter(recorded, args.metric, args.filter)
        results = flow.lm_eval_results(cache, args.lm_eval, names, metric, flt)
    else:
        results = _read_results(args.results, n) if args.results is not None else {}
    method = AdaptiveMethod(seed=args.seed, tune=not args.no_tune).fit(A[sort_rows])
    rounds_kw = dict(
        until_halfwidth=args.until_halfwidth,
        max_budget=args.max_budget,
        min_round=args.min_round,
        max_round=args.max_round,
    )
    if args.row is not None:
        res = method.simulate(A[args.row], args.seed, **rounds_kw)
        write_csv(
            pd.DataFrame([r.__dict__ for r in res.rounds], columns=list(COLUMNS)), args.out, "--out"
        )
        e = res.estimate
        ci = f"[{e.lo:.4f}, {e.hi:.4f}]" if e.lo is not None else "(no interval)"
        print(
            f"row {args.row}: {len(res.columns)} of {n} samples in {len(res.rounds)} rounds, stopped on "
            f"{res.stopped}; estimate {e.acc:.4f} 95% {ci}; true accuracy of the stored row "
            f"{float(A[args.row].mean()):.4f} (simulated evaluation)"
        )
        return 0
    prog = advance(method.sampler(), results, args.seed, **rounds_kw)
    write_csv(
        pd.DataFrame([r.__dict__ for r in prog.rounds], columns=list(COLUMNS)), args.out, "--out"
    )
    nxt = prog.next_columns if prog.next_columns is not None else np.empty(0, dtype=np.int64)
    if cache is not None:
        if len(nxt):
            flow.write_round(cache, nxt, args.next, args.format, names)
        elif Path(args.next).exists():
            Path(args.next).unlink()  # no next round: a stale list must not be run again
    else:
        write_csv(pd.DataFrame({"column": np.asarray(nxt, dtype=np.int64)}), args.next, "--next")
    state = (
        f"stopped on {prog.stopped}"
        if prog.next_columns is None
        else f"next: round {len(prog.rounds) + 1}, {len(nxt)} samples in {args.next}"
    )
    est = ""
    if prog.rounds:
        r = prog.rounds[-1]
        est = f"; estimate {r.acc:.4f}" + (
            f" 95% [{r.lo:.4f}, {r.hi:.4f}]" if r.lo is not None else ""
        )
    print(
        f"{sum(1 for _ in prog.rounds)} rounds done, {prog.rounds[-1].evaluated if prog.rounds else 0} samples"
        f"{est}; {state}"
        + (f"; {prog.unused} results outside every round ignored" if prog.unused else "")
    )
    return 0


def _read_results(path: str, n: int) -> dict[int, int]:
    from lifelong_core.io.matrix import check_binary

    try:
        df = pd.read_csv(path)
    except FileNotFoundError:
        raise InputError(f"--results file {path} does not exist.") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(
            f"--results file {path} is not a readable CSV table ({type(exc).__name__})."
        ) from None
    if list(df.columns) != ["column", "correct"]:
        raise InputError(
            f"--results file {path} must have exactly the columns column,correct "
            f"(found {','.join(map(str, df.columns))})."
        )
    col = pd.to_numeric(df["column"], errors="coerce")
    bad = col.isna() | (col != col.round()) | (col < 0) | (col >= n)
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise InputError(
            f"--results file {path} row {i + 1}: column {df['column'].iloc[i]!r} is not a sample "
            f"index in [0, {n - 1}]."
        )
    correct = check_binary(
        pd.to_numeric(df["correct"], errors="coerce").to_numpy()[None, :], path, what="results"
    )
    if col.duplicated().any():
        i = int(np.argmax(col.duplicated().to_numpy()))
        raise InputError(f"--results file {path} row {i + 1} repeats column {int(col.iloc[i])}.")
    return {int(c): int(v) for c, v in zip(col, correct[0])}
