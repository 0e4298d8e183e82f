"""``select`` and ``estimate``: the lifelong loop with lm-evaluation-harness.

    python -m lifelong_core select --store S [--dataset D] --budget N (--model NAME | --common-items)
            [--method mirt] [--seed 0] [--format lm-eval|csv] [--task DOMAIN=TASK ...] --out samples.json
    lm_eval --model ... --tasks ... --samples samples.json --log_samples --output_path OUT
    python -m lifelong_core estimate --store S [--dataset D] --lm-eval OUT/<model dir> --model NAME
            [--method mirt] [--task DOMAIN=TASK ...] [--metric M] [--filter F] [--out estimate.csv] [--insert]

``select`` writes the items a new model should run (lm-eval 0.4's ``--samples`` JSON,
``{"task": [doc_id, ...]}``, or a CSV of sample ids); ``estimate`` reads the run back and
prints per task and overall the estimated accuracy with its 95% interval and the model's
rank among the stored models with a rank interval; ``--insert`` stores the row marked
estimated. The rules live in :mod:`lifelong_core.workflows.harness`, shared with the app.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lifelong_core.commands._common import add_dataset, add_store, open_store, store_dataset
from lifelong_core.errors import InputError
from lifelong_core.methods.registry import DEFAULT_METHOD

if TYPE_CHECKING:
    from lifelong_core.workflows.selection import Selection

TASK_HELP = (
    "map a domain of the dataset to its lm-eval task name, e.g. ifeval=leaderboard_ifeval (repeatable; "
    "default: the domain's own name)"
)


def _method_help() -> str:
    from lifelong_core.methods.registry import describe_methods

    return "search method: " + describe_methods().replace("%", "%%")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "select",
        help="write the items a new model should run (lm-eval --samples JSON or CSV)",
        description=__doc__.splitlines()[0],
    )
    add_store(p)
    add_dataset(p)
    p.add_argument("--budget", type=int, required=True, metavar="N", help="number of items to run")
    p.add_argument("--method", default=DEFAULT_METHOD, help=_method_help())
    p.add_argument("--seed", type=int, default=0, help="seed of the random choices (default 0)")
    who = p.add_mutually_exclusive_group()
    who.add_argument(
        "--model",
        metavar="NAME",
        help="the new model's name: its items are its own random draw (from the name and --seed), "
        "so several new models' errors are independent",
    )
    who.add_argument(
        "--common-items",
        dest="common_items",
        action="store_true",
        help="the seed's item set, the same for every model (to compare models on identical items)",
    )
    p.add_argument(
        "--format",
        choices=("lm-eval", "csv"),
        default="lm-eval",
        help='lm-eval: {"task": [doc_id, ...]} for lm_eval --samples; csv: sample_id, domain',
    )
    p.add_argument("--task", action="append", metavar="DOMAIN=TASK", help=TASK_HELP)
    p.add_argument("--out", required=True, type=Path, help="file to write")
    p.set_defaults(func=run_select)

    p = sub.add_parser(
        "estimate",
        help="estimate a new model's accuracy and rank from its lm-eval run",
        description="Estimate a new model from an lm-eval --log_samples run on the selected items.",
    )
    add_store(p)
    add_dataset(p)
    p.add_argument(
        "--lm-eval",
        dest="lm_eval",
        required=True,
        metavar="PATH",
        help="the run's output folder for this model (OUT/<model dir>), its results_*.json, one "
        "samples_*.jsonl, or a .zip of the run's folder",
    )
    p.add_argument(
        "--model", required=True, metavar="NAME", help="the new model's name (its id if inserted)"
    )
    p.add_argument("--method", default=DEFAULT_METHOD, help=_method_help())
    p.add_argument("--task", action="append", metavar="DOMAIN=TASK", help=TASK_HELP)
    p.add_argument(
        "--metric",
        help="the 0/1 metric when a task records several (a preference list such as acc_norm,acc)",
    )
    p.add_argument("--filter", help="the filter to keep when a task was logged under several")
    p.add_argument(
        "--out",
        type=Path,
        help="also write the table as CSV: scope, items, evaluated, observed, estimate, lo, hi",
    )
    p.add_argument(
        "--insert",
        action="store_true",
        help="store the model's row marked estimated: real results on the evaluated items, predictions elsewhere",
    )
    p.set_defaults(func=run_estimate)


def _cache(store_path: str, dataset: str | None) -> Selection:
    from lifelong_core.workflows import harness

    with open_store(store_path) as st:
        return harness.cache_of(st, store_dataset(st, dataset))


def _kept(store_path: str, cache: Selection, method: str) -> Any:
    """The method's parameters kept in the store (``lbe state --refresh``) when they cover
    the cache's samples, else None (the command fits them); a stale state is said on
    standard error."""
    import sys

    from lifelong_core.workflows import lifelong_state

    dataset = str(cache.samples["dataset"].iloc[0])
    with open_store(store_path) as st:
        est, stat = lifelong_state.fitted_on(
            st, dataset, method, cache.samples["sample_idx"].to_numpy()
        )
    if est is not None and stat is not None and (stat.models_since_fit or stat.sort_stale):
        print(stat.sentence(), file=sys.stderr)
    return est


def run_select(args: argparse.Namespace) -> int:
    from lifelong_core.methods import available_methods
    from lifelong_core.methods.draws import COMMON, PER_MODEL
    from lifelong_core.workflows import harness

    if not args.common_items and not (args.model or "").strip():
        raise InputError(
            "name the new model with --model NAME (its items are its own random draw) or pass "
            "--common-items for the seed's item set shared by every model."
        )
    if args.method not in available_methods():
        raise InputError(
            f"unknown --method {args.method!r}; available: {', '.join(available_methods())}."
        )
    if not args.out.parent.is_dir():
        raise InputError(f"cannot write {args.out}: folder {args.out.parent} does not exist.")
    names = harness.parse_task_names(args.task)
    cache = _cache(args.store, args.dataset)
    if args.format == "lm-eval":
        harness.doc_ids(
            cache.samples, names
        )  # refuse ids lm-eval cannot take before fitting anything
    choice = harness.select_items(
        cache,
        args.budget,
        args.method,
        args.seed,
        fitted=_kept(args.store, cache, args.method),
        model=args.model,
        draws=COMMON if args.common_items else PER_MODEL,
    )
    harness.write_choice(choice, args.out, args.format, names)
    per = choice.items.groupby("domain", sort=False).size()
    print(
        f"wrote {args.out}: {choice.budget} of {choice.n} items of {choice.dataset} "
        f"({', '.join(f'{d} {k}' for d, k in per.items())}), chosen by {choice.method} fitted on {choice.m} models; "
        f"{choice.describe()}"
    )
    return 0


def run_estimate(args: argparse.Namespace) -> int:
    from lifelong_core.methods import available_methods
    from lifelong_core.workflows import harness

    if args.method not in available_methods():
        raise InputError(
            f"unknown --method {args.method!r}; available: {', '.join(available_methods())}."
        )
    if args.out is not None and not args.out.parent.is_dir():
        raise InputError(f"cannot write {args.out}: folder {args.out.parent} does not exist.")
    names = harness.parse_task_names(args.task)
    cache = _cache(args.store, args.dataset)
    obs = harness.observations_from_lm_eval(
        args.lm_eval, cache, names, metric=args.metric, filter=args.filter
    )
    kept = _kept(args.store, cache, args.method)
    est = harness.estimate_new_model(
        cache,
        obs.values,
        args.method,
        fitter=None
        if kept is None
        else (lambda d, tuning: kept if d is None else harness.fit(cache, args.method, d, tuning)),
    )
    print(harness.format_estimate(args.model, est))
    if args.out is not None:
        est.table.to_csv(args.out, index=False)
    if args.insert:
        from lifelong_core.store import Store

        with Store.open(args.store, read_only=False) as w:
            summary = harness.insert_estimated(
                w,
                cache,
                args.model,
                est,
                source=obs.source,
                extra_meta={"lm_eval_metrics": {t: list(v) for t, v in obs.metrics.items()}},
            )
        print(
            f"inserted {args.model} into {args.store} marked estimated ({summary.get('entries', cache.A.shape[1])} "
            f"entries, {len(est.new.cols)} of them real results)"
        )
    return 0
