"""``stream``: compare estimation methods on a stream of models as Nevis'22 does.

Bornschein et al. 2023, "NEVIS'22", §4: each method's configuration (sampling grid, for
the threshold rules) is chosen on the early part of the stream and scored on the later
part; cost counts evaluations over the whole stream; methods are ranked by the Pareto
front of meta-test error against evaluations, and a regret view compares each method's
per-model error with a reference method's along the meta-test stream.

    python -m lifelong_core stream (--matrix A.npy [--release-order FILE] | --store S.duckdb [--dataset D])
            [--method midpoint,reference,copy-nearest] [--budgets 8,16,...] [--samplings uniform,random,reference]
            [--train-fraction 0.5] [--inner-fraction 0.5] [--error mae|eagg] [--seed 0]
            --out configs.csv [--front front.csv] [--per-model per_model.csv]
            [--regret regret.csv [--regret-budget B] [--reference METHOD]]

configs.csv: method, budget, sampling, train_error, chosen, test_mae, test_eagg, evaluations, run_seconds
(one row per configuration tried; test columns on the chosen ones). front.csv: the chosen
configurations on the Pareto front. per_model.csv: method, budget, sampling, position,
model_row, est_acc, true_acc, mae, eagg (meta-test models; position = place in the
meta-test stream). regret.csv: method, position, model_row, error, reference_error, regret.
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
from lifelong_core.sortsearch.search import SAMPLING


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "stream",
        help="Nevis'22 protocol on a stream of models: choose early, score late",
        description=(
            "Compare estimation methods on a stream of models as Nevis'22 does: choose a "
            "configuration on the early models, score it on the later ones."
        ),
        example=(
            "lbe stream --store data/demo.duckdb --dataset lifelong-digits --budgets 16,64 --out "
            "configs.csv"
        ),
    )
    add_source(p, "a store: its real models of one dataset, in release order")
    add_dataset(p)
    p.add_argument(
        "--release-order",
        metavar="FILE",
        help="with --matrix: 0-based row indices in release order, one per line (default: row order)",
    )
    add_method(
        p,
        alias="--methods",
        metavar="M1,M2",
        default="midpoint,reference,copy-nearest",
        help="comma-separated search methods (default midpoint,reference,copy-nearest; estimators "
        "such as mirt are slower)",
    )
    p.add_argument(
        "--budgets",
        help="comma-separated budgets n' (default 8, 16, ... up to the number of samples)",
    )
    p.add_argument(
        "--samplings",
        default="uniform,random,reference",
        help="sampling grids the threshold rules choose from (default uniform,random,reference)",
    )
    p.add_argument(
        "--train-fraction",
        type=float,
        default=0.5,
        help="share of the stream in meta-train (default 0.5)",
    )
    p.add_argument(
        "--inner-fraction",
        type=float,
        default=0.5,
        help="share of meta-train used as the cache while tuning (default 0.5)",
    )
    p.add_argument(
        "--error",
        choices=("mae", "eagg"),
        default="mae",
        help="error that chooses and ranks (default mae)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of random sampling and random designs (default 0)"
    )
    p.add_argument("--out", required=True, help="configs.csv")
    p.add_argument("--front", help="front.csv")
    p.add_argument("--per-model", help="per_model.csv")
    p.add_argument("--regret", help="regret.csv")
    p.add_argument(
        "--regret-budget", type=int, help="budget of the regret view (default: the median budget)"
    )
    p.add_argument(
        "--reference",
        help="reference method of the regret view (default: reference, else the first)",
    )
    p.set_defaults(func=run)


def _load(args: Namespace) -> tuple[np.ndarray, np.ndarray]:
    if args.matrix is not None:
        from lifelong_core.io.matrix import load_index_list

        A = matrix_arg(args)
        m = A.shape[0]
        if args.release_order is None:
            return A, np.arange(m, dtype=np.int64)
        order = np.asarray(
            load_index_list(args.release_order, m, "--release-order"), dtype=np.int64
        )
        if len(order) != m or len(np.unique(order)) != m:
            raise InputError(
                f"--release-order file {args.release_order} must list each of the {m} rows once."
            )
        return A, order
    if args.release_order is not None:
        raise InputError("--release-order goes with --matrix; a store brings its release order.")
    from lifelong_core.workflows.sortsets import release_rows

    with store_selection(args.store, args.dataset) as (_, sel):
        return sel.dense(), release_rows(sel.models)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.methods import available_methods
    from lifelong_core.methods.registry import PUBLISHED_METHOD
    from lifelong_core.studies.stream_protocol import regret, stream_protocol
    from lifelong_core.sweeping import power_budgets

    methods = comma_list(args.method)
    known = available_methods()
    for meth in methods:
        if meth not in known:
            raise InputError(
                f"--method entry {meth!r} is not a search method; available: {', '.join(known)}."
            )
    samplings = choices_list(args.samplings, SAMPLING, "--samplings")
    if args.reference is not None and args.reference not in methods:
        raise InputError(f"--reference {args.reference!r} is not among --method.")
    check_out_dirs(
        (args.out, "--out"),
        (args.front, "--front"),
        (args.per_model, "--per-model"),
        (args.regret, "--regret"),
    )
    A, order = _load(args)
    budgets = (
        parse_ints(args.budgets, "--budgets")
        if args.budgets is not None
        else list(power_budgets(A.shape[1]))
    )
    res = stream_protocol(
        A,
        order,
        methods=methods,
        budgets=budgets,
        samplings=samplings,
        train_fraction=args.train_fraction,
        inner_fraction=args.inner_fraction,
        error=args.error,
        seed=args.seed,
    )
    write_csv(res.configs, args.out, "--out")
    if args.front:
        write_csv(res.front, args.front, "--front")
    if args.per_model:
        write_csv(res.per_model, args.per_model, "--per-model")
    if args.regret:
        chosen = sorted(res.per_model["budget"].unique())
        b = args.regret_budget if args.regret_budget is not None else int(chosen[len(chosen) // 2])
        ref = args.reference or (PUBLISHED_METHOD if PUBLISHED_METHOD in methods else methods[0])
        write_csv(regret(res.per_model, b, ref, args.error), args.regret, "--regret")
    return 0
