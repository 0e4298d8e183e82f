"""``weights``: the best model for each weighting of three task categories (LA-UR-24-25289 report, 2024, §2.3, A.2).

regions.csv: one column per category weight (named after the category), winner,
runner_up, diff_pct, se_pct. ``winner`` is ``indeterminate`` where the top two models
differ by at most ``--se-mult`` standard errors of their difference (binomial standard
errors, independence between tasks, correlation ``--rho`` between the two models).
"""

from __future__ import annotations

import argparse
from argparse import _SubParsersAction

from lifelong_core.commands._common import write_table
from lifelong_core.errors import InputError


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "weights",
        help="winning model over the simplex of three category weights, with standard-error gray zones",
        description=(
            "Find the best model for each weighting of three task categories, and where the "
            "leaders are within a standard error of each other."
        ),
        example="lbe weights --counts counts.csv --out weights.csv",
    )
    p.add_argument("--counts", required=True, help="counts.csv with exactly three categories")
    p.add_argument(
        "--step", type=float, default=0.05, help="grid spacing of the weights (default 0.05)"
    )
    p.add_argument(
        "--se-mult",
        type=float,
        default=1.0,
        help="k: indeterminate where diff <= k * SE (default 1)",
    )
    p.add_argument(
        "--rho", type=float, default=0.0, help="correlation between the top two models (default 0)"
    )
    p.add_argument("--out", required=True, help="output regions.csv")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.stats import category_stats, read_counts_csv, weight_regions

    table = read_counts_csv(args.counts)
    if len(table.categories) != 3:
        found = ", ".join(f"'{c}'" for c in table.categories)
        raise InputError(
            f"{args.counts}: weights needs exactly three categories, found {len(table.categories)} ({found})."
        )
    regions = weight_regions(
        category_stats(table), step=args.step, se_mult=args.se_mult, rho=args.rho
    )
    df = regions.to_frame()
    out = df[[*table.categories, "winner", "runner_up"]].copy()
    out["diff_pct"] = (df["diff"] * 100.0).round(6)
    out["se_pct"] = (df["se"] * 100.0).round(6)
    write_table(out, args.out)
    return 0
