"""``sweep-samples``: insert_D budget sweep, MAE vs model budget m' for new samples.

Prabhu et al. 2024, "Efficient Lifelong Model Evaluation in an Era of Rapid Progress",
§4.3, Fig. 4a: models are ranked on the samples already in the cache (``--rank sum`` =
accuracy, ``--rank confidence`` = summed confidence of the true class), each new sample
is run on m' models along that ranking and its result on every other model is predicted.
New samples are a seeded random fraction (``--split random``) or each domain in turn
(``--split domain``, a held-out-domain split).

    python -m lifelong_core sweep-samples (--matrix A.npy [--confidence C.npy] [--sample-domains D.txt]
            | --store S.duckdb [--dataset D]) [--split random,domain] [--new-fraction 0.2]
            [--held-out DOM1,DOM2] [--rank sum,confidence] [--budgets 8,16,...] [--sampling ...]
            [--method midpoint|reference] [--seed 0] --out curve.csv [--fits fits.csv]
            [--rankings rankings.csv] [--per-sample per_sample.csv]

curve.csv: split, sort, budget, mae, eagg, kappa, pearson, spearman, new_samples (one row
per split, ranking and budget; means over the new samples; ``split`` is ``random`` or
``domain:<name>``). fits.csv: split, sort, a, b, c, r2, ok, message (MAE = a exp(-b m') + c).
rankings.csv: split, sort, model_row, rank (1 = best). per_sample.csv: split, sort,
sample_col, budget, est_acc, true_acc, mae (est_acc = predicted share of models right).
"""

from __future__ import annotations

import argparse
from argparse import Namespace, _SubParsersAction

import numpy as np

from lifelong_core.commands._common import (
    add_dataset,
    add_method,
    add_source,
    check_out_dirs,
    choices_list,
    comma_list,
    matrix_arg,
    parse_ints,
    store_selection,
    write_csv,
)
from lifelong_core.errors import InputError
from lifelong_core.methods.registry import THRESHOLD_RULES
from lifelong_core.sortsearch.search import SAMPLING


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep-samples",
        help="insert_D sweep: MAE vs model budget m' for new samples",
        description=(
            "Estimate new samples from a few models (insert_D) at each model budget m', and "
            "report the error per budget."
        ),
        example=(
            "lbe sweep-samples --store data/demo.duckdb --dataset lifelong-digits --split random "
            "--budgets 8,32,128 --out curve.csv"
        ),
    )
    add_source(p, "a store; its real (not estimated) models and one dataset's samples")
    add_dataset(p)
    p.add_argument(
        "--confidence", metavar="C", help="with --matrix: confidence of the true class, same shape"
    )
    p.add_argument(
        "--sample-domains",
        metavar="FILE",
        help="with --matrix: one domain per line, one line per column",
    )
    p.add_argument(
        "--split", default="random", help="random, domain or both (comma-separated; default random)"
    )
    p.add_argument(
        "--new-fraction",
        type=float,
        default=0.2,
        help="random split: share of new samples (default 0.2)",
    )
    p.add_argument(
        "--held-out",
        help="domain split: the domains to hold out, comma-separated (default: each in turn)",
    )
    p.add_argument(
        "--rank",
        default="sum",
        help="model ranking: sum, confidence or both (comma-separated; default sum)",
    )
    p.add_argument(
        "--budgets",
        help="comma-separated model budgets m' (default 8, 16, ..., 2048 below the model count)",
    )
    p.add_argument(
        "--sampling",
        choices=SAMPLING,
        default=None,
        help="positions along the model ranking (default uniform; reference with --method reference)",
    )
    add_method(
        p,
        choices=THRESHOLD_RULES,
        default="midpoint",
        help="threshold rule (default midpoint)",
        alias="--search",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the random split and random sampling (default 0)",
    )
    p.add_argument("--out", required=True, help="curve.csv")
    p.add_argument("--fits", help="fits.csv")
    p.add_argument("--rankings", help="rankings.csv")
    p.add_argument("--per-sample", help="per_sample.csv")
    p.set_defaults(func=run)


def _read_domains(path: str, n: int) -> list[str]:
    from lifelong_core.io.edges import check_input_file
    from lifelong_core.io.text import read_text

    text = read_text(check_input_file(path, "--sample-domains"), f"--sample-domains file {path}")
    lines = [ln.strip() for ln in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    if len(lines) != n:
        raise InputError(
            f"--sample-domains file {path} has {len(lines)} lines, but the matrix has {n} columns."
        )
    if any(not ln for ln in lines):
        raise InputError(
            f"--sample-domains file {path} has an empty line; every column needs a domain."
        )
    return lines


def _load(
    args: Namespace, ranks: list[str]
) -> tuple[np.ndarray, np.ndarray | None, list[str] | None]:
    """(A, confidence or None, per-column domains or None)."""
    if args.matrix is not None:
        from lifelong_core.io.matrix import load_float_matrix

        A = matrix_arg(args)
        conf = None
        if args.confidence is not None:
            conf = load_float_matrix(args.confidence, "--confidence")
            if conf.shape != A.shape:
                raise InputError(
                    f"--confidence file {args.confidence} has shape {conf.shape}, but --matrix has {A.shape}."
                )
        doms = _read_domains(args.sample_domains, A.shape[1]) if args.sample_domains else None
        return A, conf, doms
    if args.confidence is not None or args.sample_domains is not None:
        raise InputError(
            "--confidence and --sample-domains go with --matrix; a store brings its own."
        )
    from lifelong_core.workflows.selection import selection_confidence

    with store_selection(args.store, args.dataset) as (st, sel):
        conf = (
            selection_confidence(st, sel, range(len(sel.models))) if "confidence" in ranks else None
        )
    return sel.dense(), conf, sel.samples["domain"].astype(str).tolist()


def run(args: argparse.Namespace) -> int:
    from lifelong_core.studies.new_samples import SORTS, SPLITS, new_sample_study
    from lifelong_core.workflows.new_samples import make_splits

    splits_wanted = choices_list(args.split, SPLITS, "--split")
    ranks = choices_list(args.rank, SORTS, "--rank")
    check_out_dirs(
        (args.out, "--out"),
        (args.fits, "--fits"),
        (args.rankings, "--rankings"),
        (args.per_sample, "--per-sample"),
    )
    budgets = parse_ints(args.budgets, "--budgets") if args.budgets is not None else None
    A, conf, doms = _load(args, ranks)
    if "confidence" in ranks and conf is None:
        if args.store is not None:
            raise InputError(
                f"store {args.store} holds no confidences (true_prob) for these models; use --rank sum."
            )
        raise InputError("--rank confidence needs --confidence C (confidence of the true class).")
    held = comma_list(args.held_out) if args.held_out else None
    if "domain" in splits_wanted and doms is None:
        raise InputError(
            "--split domain needs the samples' domains: --sample-domains FILE (or use --store)."
        )
    splits = make_splits(A.shape[1], doms, splits_wanted, args.new_fraction, args.seed, held)
    study = new_sample_study(
        A,
        splits,
        budgets,
        sorts=ranks,
        confidence=conf,
        sampling=args.sampling,
        search=args.method,
        seed=args.seed,
    )
    write_csv(study.curves, args.out, "--out")
    if args.fits:
        write_csv(study.fits, args.fits, "--fits")
    if args.rankings:
        write_csv(study.rankings, args.rankings, "--rankings")
    if args.per_sample:
        write_csv(study.per_sample, args.per_sample, "--per-sample")
    return 0
