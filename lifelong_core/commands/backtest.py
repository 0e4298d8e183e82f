"""``backtest``: how well do the estimates work on my cache, against a random sample?

    python -m lifelong_core backtest --store S [--dataset D] [--domains T1,T2]
            [--method auto,reference] [--budgets 32,64,100,128,256] [--holdout 10]
            [--split random|newest|beyond-cache] [--repeats 10] [--seed 0] [--scored K]
            [--common-items]
            [--out table.csv] [--per-model per_model.csv] [--coverage F] [--by-range F]

Holds models out of the store's dataset, estimates each with every method (and the two
baselines, a random sample and the first items of each task as ``lm_eval --limit`` runs
them) from the items the method selects for it, over several item draws, and prints per
method and budget the mean absolute error of the accuracy, the interval coverage (with its
own 95% interval) and mean width, the error against a random sample's and the equivalent
random budget (each with a bootstrap interval), the worst held-out model's coverage, the
same by accuracy range, a verdict in words, and the smallest budget tried within 1 and 2
accuracy points. The rules live in :mod:`lifelong_core.workflows.backtest`, shared with
the app's Backtest page and the Budget explorer's comparison with random.
"""

from __future__ import annotations

import argparse

from lifelong_core.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    from lifelong_core.commands._common import add_dataset, add_method, add_store
    from lifelong_core.workflows.backtest import (
        DEFAULT_BUDGETS,
        DEFAULT_HOLDOUT,
        DEFAULT_REPEATS,
        SPLIT_ALIASES,
        SPLITS,
    )

    p = sub.add_parser(
        "backtest",
        help="hold models out of a store, estimate them, report error, coverage and width against a random sample",
        description=(
            "Hold models out of a store, estimate them from a few items with each method, and "
            "report the error, the coverage and the width of the intervals against a random "
            "sample of the same size."
        ),
        example=(
            "lbe backtest --store data/demo.duckdb --dataset open-llm-leaderboard-v2 --holdout 5 "
            "--repeats 1 --budgets 32,128 --out backtest.csv"
        ),
    )
    add_store(p)
    add_dataset(p)
    p.add_argument(
        "--domains",
        metavar="T1,T2",
        help="comma-separated domains (tasks) of the dataset to keep (default: all)",
    )
    add_method(
        p,
        alias="--methods",
        default=None,
        metavar="M1,M2",
        help="comma-separated search methods (default: the default estimator, Sort & Search's "
        "published rule and the baselines; the baselines, random and first-n, are always "
        "added)",
    )
    p.add_argument(
        "--budgets",
        metavar="B1,B2",
        help="items per held-out model (default "
        + ",".join(str(b) for b in DEFAULT_BUDGETS)
        + ", those below the number of items)",
    )
    p.add_argument(
        "--holdout",
        type=int,
        default=DEFAULT_HOLDOUT,
        metavar="K",
        help="models held out (default %(default)s)",
    )
    p.add_argument(
        "--split",
        choices=(*SPLITS, *SPLIT_ALIASES),
        default=SPLITS[0],
        metavar="{" + ",".join(SPLITS) + "}",
        help="which models are held out: models like the cache's, drawn at random; the newest "
        "by release order; or the most accurate, beyond the cache (default %(default)s)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        metavar="R",
        help="item draws per held-out model, with seeds S, S+1, ... (default %(default)s)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="the random split's and first draw's seed (default 0)"
    )
    p.add_argument(
        "--scored",
        type=int,
        default=None,
        metavar="K",
        help="estimate a seeded subset of K held-out models (the rule the app's pages use to "
        "stay interactive; default: all)",
    )
    p.add_argument(
        "--common-items",
        dest="common_items",
        action="store_true",
        help="give every held-out model the seed's item set (default: each its own draw)",
    )
    p.add_argument(
        "--out",
        metavar="F",
        help="write the table (method x budget) as CSV",
    )
    p.add_argument("--per-model", dest="per_model", metavar="F", help="write every estimate as CSV")
    p.add_argument(
        "--coverage",
        dest="coverage_out",
        metavar="F",
        help="write the per-model coverage table (method x budget) as CSV",
    )
    p.add_argument(
        "--by-range",
        dest="by_range",
        metavar="F",
        help="write the table by accuracy range as CSV",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.commands._common import (
        check_out_dirs,
        comma_list,
        parse_ints,
        stderr_progress,
        store_selection,
        write_csv,
    )
    from lifelong_core.methods.draws import COMMON, PER_MODEL
    from lifelong_core.workflows.backtest import backtest

    outs = (
        (args.out, "--out"),
        (args.per_model, "--per-model"),
        (args.coverage_out, "--coverage"),
        (args.by_range, "--by-range"),
    )
    check_out_dirs(*outs)
    budgets = None if args.budgets is None else parse_ints(args.budgets, "--budgets")
    methods = None
    if args.method is not None:
        methods = comma_list(args.method)
        if not methods:
            raise InputError(f"--method names no method: {args.method!r}.")
    domains = None if args.domains is None else comma_list(args.domains)
    if domains is not None and not domains:
        raise InputError(f"--domains names no domain: {args.domains!r}.")
    with store_selection(args.store, args.dataset, domains) as (_, sel):
        pass
    bt = backtest(
        sel,
        methods,
        budgets,
        holdout=args.holdout,
        split=args.split,
        repeats=args.repeats,
        seed=args.seed,
        draws=COMMON if args.common_items else PER_MODEL,
        scored=args.scored,
        progress=stderr_progress(),
    )
    print(bt.text())
    if args.out:
        write_csv(bt.table, args.out, "--out")
    if args.per_model:
        write_csv(bt.per_model, args.per_model, "--per-model")
    if args.coverage_out:
        write_csv(bt.coverage, args.coverage_out, "--coverage")
    if args.by_range:
        write_csv(bt.by_range, args.by_range, "--by-range")
    return 0
