"""``rank``: bootstrap intervals of every model's score, overall and per category (LA-UR-24-25289 report, 2024, §2.1).

ranks.csv: model, scope, mean_pct, lo_pct, hi_pct; scope is ``overall`` or a category;
the score is the unweighted mean accuracy over the scope's tasks; mean is the bootstrap
mean and (lo, hi) the percentile interval at ``--level`` (83.4% by default).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lifelong_core.errors import InputError
from lifelong_core.limits import check_seed


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "rank",
        help="bootstrap confidence intervals of aggregate accuracy per model (overall and per category)",
        description=__doc__.split("\n\n")[0].replace("``", ""),
    )
    p.add_argument("--counts", required=True, help="counts.csv: model, task, category, correct, total")
    p.add_argument("--level", type=float, default=0.834, help="interval level (default 0.834, Goldstein & Healy)")
    p.add_argument("--boot", type=int, default=2000, help="bootstrap replicates (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", required=True, help="output ranks.csv")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.stats import bootstrap, leaderboard, read_counts_csv
    from lifelong_core.stats.bootstrap import check_level

    check_level(args.level)
    if args.boot < 2:
        raise InputError(f"--boot must be at least 2, got {args.boot}.")
    check_seed(args.seed)
    table = read_counts_csv(args.counts)
    board = leaderboard(bootstrap(table, n_boot=args.boot, seed=args.seed), level=args.level)
    out = board[["model", "scope"]].copy()
    for col in ("mean", "lo", "hi"):
        out[f"{col}_pct"] = (board[col] * 100.0).round(6)
    _write(out, args.out)
    return 0


def _write(df, path: str) -> None:
    target = Path(path)
    if not target.parent.exists():
        raise InputError(f"cannot write {path}: the folder {target.parent} does not exist.")
    df.to_csv(target, index=False)
