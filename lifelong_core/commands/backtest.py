"""``backtest``: how well do the estimates work on my cache, against a random sample?

    python -m lifelong_core backtest --store S [--dataset D] [--methods mirt,reference,random]
            [--budgets 32,64,128,256] [--holdout 10] [--split random|newest|best] [--repeats 3]
            [--seed 0] [--common-items] [--out table.csv] [--per-model per_model.csv]

Holds models out of the store's dataset, estimates each with every method from the items
the method selects for it, and prints per method and budget the mean absolute error of the
accuracy, the interval coverage (with its own 95% interval) and mean width, and the ratio
to a random sample; then the smallest budget tried within 1 and 2 accuracy points. The
rules live in :mod:`lifelong_core.workflows.backtest`, shared with the app's Backtest page.
"""

from __future__ import annotations

import argparse

from lifelong_core.errors import InputError


def add_parser(sub) -> None:
    from lifelong_core.commands._common import add_dataset, add_store
    from lifelong_core.workflows.backtest import (
        DEFAULT_BUDGETS,
        DEFAULT_HOLDOUT,
        DEFAULT_REPEATS,
        SPLITS,
    )

    p = sub.add_parser(
        "backtest",
        help="hold models out of a store, estimate them, report error, coverage and width against a random sample",
        description=__doc__.splitlines()[0],
    )
    add_store(p)
    add_dataset(p)
    p.add_argument(
        "--methods",
        metavar="M1,M2",
        help="comma-separated search methods (default: the default estimator, Sort & Search's "
        "published rule and random; random is always added, every ratio is taken against it)",
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
        help="models held out per repeat (default %(default)s)",
    )
    p.add_argument(
        "--split",
        choices=SPLITS,
        default=SPLITS[0],
        help="which models are held out: at random (new ones per repeat), the newest by release "
        "order, or the most accurate (default %(default)s)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        metavar="R",
        help="repeats with seeds S, S+1, ... (default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="the first repeat's seed (default 0)")
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

    check_out_dirs((args.out, "--out"), (args.per_model, "--per-model"))
    budgets = None if args.budgets is None else parse_ints(args.budgets, "--budgets")
    methods = None
    if args.methods is not None:
        methods = comma_list(args.methods)
        if not methods:
            raise InputError(f"--methods names no method: {args.methods!r}.")
    with store_selection(args.store, args.dataset) as (_, sel):
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
        progress=stderr_progress(),
    )
    print(bt.text())
    if args.out:
        write_csv(bt.table, args.out, "--out")
    if args.per_model:
        write_csv(bt.per_model, args.per_model, "--per-model")
    return 0
