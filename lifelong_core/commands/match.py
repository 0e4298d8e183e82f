"""Matched accuracy of one model on a source and a target set (Anzaku et al., Algorithms 1 and 2).

S.csv and T.csv hold ``y, y_pred, p`` (one row per datapoint of one model); match.json
holds the means over runs of the keys listed in docs/reference/file-formats.md. An accuracy that is undefined in every
run (``acc_unmatched`` when every target datapoint found a match, matched accuracies
when none did) is written as JSON ``null``.
"""

from __future__ import annotations

import argparse
import json
from argparse import _SubParsersAction
from pathlib import Path

from lifelong_core.errors import InputError


def _float_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None
    return value


def _int_arg(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "match",
        help="matched accuracy on two similar-but-non-identical test sets (Anzaku et al.)",
        description=(
            "Compare one model's accuracy on a source and a target test set on matched samples "
            "(Anzaku et al., Algorithms 1 and 2)."
        ),
        example="lbe match --source source.csv --target target.csv --out match.json",
    )
    p.add_argument("--source", required=True, help="CSV with columns y, y_pred, p (source dataset)")
    p.add_argument("--target", required=True, help="CSV with columns y, y_pred, p (target dataset)")
    p.add_argument(
        "--eps",
        type=_float_arg,
        default=0.005,
        help="match if |p_source - p_target| <= eps (default 0.005, as in the paper)",
    )
    p.add_argument(
        "--criterion",
        choices=("label-prob", "prob"),
        default="label-prob",
        help="label-prob: same predicted label and probability (Alg. 1); prob: probability only (Alg. 2)",
    )
    p.add_argument(
        "--runs", type=_int_arg, default=10, help="seeded runs to average over (default 10)"
    )
    p.add_argument("--seed", type=_int_arg, default=0, help="random seed (default 0)")
    p.add_argument("--out", required=True, help="output JSON file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.matching import check_params, matched_accuracy, read_predictions_csv

    check_params(args.eps, args.criterion, args.runs, args.seed)
    out = Path(args.out)
    if not out.parent.is_dir():
        raise InputError(f"--out {out}: the folder {out.parent} does not exist.")
    source = read_predictions_csv(args.source)
    target = read_predictions_csv(args.target)
    summary = matched_accuracy(
        source, target, eps=args.eps, criterion=args.criterion, runs=args.runs, seed=args.seed
    )
    try:
        out.write_text(json.dumps(summary.to_json_dict(), indent=2) + "\n")
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write the file ({exc.strerror}).") from None
    return 0
