"""``rank``: intervals of every model's score, overall and per category (LA-UR-24-25289 report, 2024, §2.1-2.4, §3).

ranks.csv: model, scope, rank, mean_pct, lo_pct, hi_pct, level; scope is ``overall`` or a
category; the score is the unweighted mean accuracy over the scope's tasks; rank is the
model's place in the scope by that score (1 = best); mean is the bootstrap mean and (lo,
hi) the percentile interval at ``--level``, recorded in ``level`` (83.4% by default:
Goldstein & Healy, 1995, two intervals that do not overlap differ at about the 5% level).

Beyond the contract: ``--method hierarchical`` takes mean and interval from the
beta-binomial hierarchical model's posterior predictive draws instead (§2.2; Table A.3's
Bayesian block); ``--normalize`` puts every task on the BigBench scale first (§2.4,
bootstrap only; bounds over every model of the file); ``--pairwise FILE`` writes the
differences of every pair of models per scope, or of the pairs of ``--models A,B,C``, with
``--pairwise-level`` intervals Bonferroni-corrected over the pairs compared (§2.1, Table
3); and
``--rank-intervals FILE`` the rank intervals under ``--schemes`` per scope (§3.2,
Tables 4, 5 and, with the hierarchical model, 11).

pairwise.csv: scope, model_a, model_b, diff_pct, lo_pct, hi_pct, level, excludes_zero.
rank_intervals.csv: scope, model, scheme, mean, lo, hi (ranks; 1 = best).
"""

from __future__ import annotations

import argparse
from argparse import _SubParsersAction
from pathlib import Path

from lifelong_core.commands._common import choices_list, comma_list, write_table
from lifelong_core.errors import InputError
from lifelong_core.limits import check_seed

# The five schemes of §3.2 (lifelong_core.stats.ranks.SCHEMES), named here so --help does
# not import the statistics stack.
SCHEME_NAMES = ("mean", "geometric", "avg_rank", "avg_rank_noise", "avg_rank_bins")


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "rank",
        help="bootstrap confidence intervals of aggregate accuracy per model (overall and per category)",
        description=(
            "Rank models with intervals of their scores, overall and per category, from a table "
            "of counts (bootstrap over test items, or a hierarchical model)."
        ),
        example="lbe rank --counts counts.csv --out ranks.csv",
    )
    p.add_argument(
        "--counts", required=True, help="counts.csv: model, task, category, correct, total"
    )
    p.add_argument(
        "--level",
        type=float,
        default=0.834,
        help="level of every model's interval (default 0.834: two models whose 83.4%% "
        "intervals do not overlap differ at about the 5%% level; Goldstein & Healy, 1995, "
        "The graphical presentation of a collection of means; recorded in the level column)",
    )
    p.add_argument("--boot", type=int, default=2000, help="bootstrap replicates (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--out",
        required=True,
        help="ranks.csv: model, scope, rank (1 = best by mean), mean_pct, lo_pct, hi_pct, level",
    )
    p.add_argument(
        "--method",
        choices=("bootstrap", "hierarchical"),
        default="bootstrap",
        help="bootstrap of test items (default) or the beta-binomial hierarchical model",
    )
    p.add_argument(
        "--normalize",
        action="store_true",
        help="normalise every task to [0, 1] first (bootstrap only)",
    )
    p.add_argument(
        "--pairwise", metavar="FILE", help="pairwise.csv: every pair of models per scope"
    )
    p.add_argument(
        "--models",
        metavar="A,B,...",
        help="with --pairwise: compare only these models (comma-separated, at least two; pairs in "
        "this order), the Bonferroni correction over their pairs only (the report's Table 3: "
        "three models, three comparisons); default: every model",
    )
    p.add_argument(
        "--pairwise-level",
        type=float,
        default=0.95,
        help="family level of --pairwise (default 0.95)",
    )
    p.add_argument(
        "--rank-intervals",
        metavar="FILE",
        help="rank_intervals.csv: rank intervals per scope and scheme",
    )
    p.add_argument(
        "--schemes",
        default=",".join(SCHEME_NAMES),
        help=f"rank schemes for --rank-intervals (default all: {','.join(SCHEME_NAMES)})",
    )
    p.add_argument(
        "--rank-level", type=float, default=0.95, help="level of --rank-intervals (default 0.95)"
    )
    p.add_argument("--chains", type=int, default=4, help="hierarchical: chains (default 4)")
    p.add_argument(
        "--draws", type=int, default=1000, help="hierarchical: kept draws per chain (default 1000)"
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=500,
        help="hierarchical: warm-up iterations per chain (default 500)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.stats import read_counts_csv
    from lifelong_core.stats.bootstrap import check_level
    from lifelong_core.workflows.rankings import (
        RankingOptions,
        leaderboard_table,
        pairwise_table,
        rank_interval_table,
        ranking_source,
    )

    # Every flag is checked before the counts are read, so a typo costs no computation.
    check_level(args.level)
    check_level(args.pairwise_level)
    check_level(args.rank_level)
    check_seed(args.seed)
    schemes = choices_list(args.schemes, SCHEME_NAMES, "--schemes")
    if args.method == "hierarchical" and args.normalize:
        raise InputError(
            "--normalize applies to the bootstrap; the hierarchical model works on counts."
        )
    for path, flag in (
        (args.out, "--out"),
        (args.pairwise, "--pairwise"),
        (args.rank_intervals, "--rank-intervals"),
    ):
        if path is not None and not Path(path).resolve().parent.is_dir():
            raise InputError(
                f"cannot write {path}: the folder {Path(path).parent} does not exist ({flag})."
            )
    compared = _parse_models(args.models) if args.models is not None else None
    if compared is not None and not args.pairwise:
        raise InputError("--models chooses the models of --pairwise; add --pairwise FILE.")
    table = read_counts_csv(args.counts)
    if compared is not None:
        missing = [m for m in compared if m not in table.models]
        if missing:
            raise InputError(
                f"--models names '{missing[0]}', which {args.counts} does not hold "
                f"(it holds {len(table.models)} models, e.g. {', '.join(table.models[:3])})."
            )
    # One source for every table: the bootstrap replicates or the posterior, drawn once.
    options = RankingOptions(
        args.method, args.boot, args.normalize, args.seed, args.chains, args.draws, args.warmup
    )
    source = ranking_source(table, options)
    write_table(leaderboard_table(source, level=args.level, seed=args.seed), args.out, "--out")
    if args.pairwise:
        pairs = pairwise_table(source, level=args.pairwise_level, models=compared, seed=args.seed)
        write_table(pairs, args.pairwise, "--pairwise")
    if args.rank_intervals:
        write_table(
            rank_interval_table(source, level=args.rank_level, schemes=schemes, seed=args.seed),
            args.rank_intervals,
            "--rank-intervals",
        )
    return 0


def _parse_models(text: str) -> list[str]:
    """``A,B,C`` -> the model names, checked: at least two, each once."""
    names = comma_list(text)
    if len(names) < 2:
        raise InputError(f"--models {text!r} names {len(names)} model(s); name at least two.")
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"--models names '{dup}' twice.")
    return names
