"""``select`` and ``estimate``: the lifelong loop with an evaluation harness.

    python -m lifelong_core select --store S [--dataset D] --budget N (--model NAME | --common-items)
            [--method M] [--seed 0] [--format lm-eval|inspect|csv] [--task TASK=HARNESS_TASK ...]
            [--rounds [--lm-eval OUT1 ...]] --out FILE
    lm_eval --model ... --tasks ... --samples samples.json --log_samples --output_path OUT
    inspect eval TASK --model ... --sample-id "$(cat ids.txt)"
    python -m lifelong_core estimate --store S [--dataset D] (--lm-eval OUT/<model dir> ... | --inspect LOG ...)
            --model NAME [--method M] [--task TASK=HARNESS_TASK ...] [--metric M] [--filter F]
            [--scorer S] [--epoch E] [--out estimate.csv] [--insert]

``select`` writes the items a new model should run (lm-eval 0.4's ``--samples`` JSON, the
value of Inspect AI's ``--sample-id``, or a CSV of sample ids); ``estimate`` reads the run
back and prints per task and overall the estimated accuracy with its interval and the
model's rank among the stored models with a rank interval; ``--insert`` stores the row
marked estimated. With ``--rounds`` a method that plays a budget in rounds (the active
design) writes one round at a time, each after the runs of the rounds before, and
``estimate`` takes one run per round, in order. The rules live in :mod:`lifelong_core.workflows.item_choice` and
:mod:`lifelong_core.workflows.new_model`, shared with the app and the Python API.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lifelong_core.commands._common import add_dataset, add_store, open_store, store_dataset
from lifelong_core.errors import InputError
from lifelong_core.methods.registry import DEFAULT_METHOD

if TYPE_CHECKING:
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import Selection

TASK_HELP = (
    "map a task of the dataset's sample ids (<task>/<id>) to the harness's name for it, e.g. "
    "arith=toy_arith (repeatable; default: the task's own name)"
)


def _method_help() -> str:
    from lifelong_core.methods.registry import describe_methods

    return "search method: " + describe_methods().replace("%", "%%")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "select",
        help="write the items a new model should run (lm-eval --samples, Inspect --sample-id or CSV)",
        description=(
            "Write the items a new model should run, in the form its evaluation harness reads "
            "(lm-eval --samples, Inspect --sample-id, or a CSV)."
        ),
        example=(
            "lbe select --store data/demo.duckdb --dataset open-llm-leaderboard-v2 --budget 100 "
            "--model YOUR/MODEL --method midpoint --out samples.json"
        ),
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
        choices=("lm-eval", "inspect", "csv"),
        default="lm-eval",
        help='lm-eval: {"task": [doc_id, ...]} for lm_eval --samples; inspect: task:id,... for '
        'inspect eval --sample-id "$(cat FILE)"; csv: sample_id, domain',
    )
    p.add_argument("--task", action="append", metavar="TASK=HARNESS_TASK", help=TASK_HELP)
    p.add_argument(
        "--rounds",
        action="store_true",
        help="play the method's rounds for --budget items where it has them (active, and the "
        "default where it chose the active design): write the next round, after the runs of "
        "the rounds before given with --lm-eval or --inspect",
    )
    _add_runs(p, "with --rounds: an earlier round's", required=False)
    p.add_argument("--out", required=True, type=Path, help="file to write")
    p.set_defaults(func=run_select)

    p = sub.add_parser(
        "estimate",
        help="estimate a new model's accuracy and rank from its lm-eval run or Inspect logs",
        description=(
            "Estimate a new model's accuracy per task and overall, with an interval and a rank, "
            "from its lm-eval --log_samples run or Inspect logs of the selected items."
        ),
        example=(
            "lbe estimate --store data/demo.duckdb --dataset open-llm-leaderboard-v2 --lm-eval "
            "out/YOUR__MODEL --model YOUR/MODEL"
        ),
    )
    add_store(p)
    add_dataset(p)
    _add_runs(p, "the", required=True)
    p.add_argument(
        "--model", required=True, metavar="NAME", help="the new model's name (its id if inserted)"
    )
    p.add_argument("--method", default=DEFAULT_METHOD, help=_method_help())
    p.add_argument("--task", action="append", metavar="TASK=HARNESS_TASK", help=TASK_HELP)
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


def _add_runs(p: argparse.ArgumentParser, whose: str, required: bool) -> None:
    """The run flags ``select --rounds`` and ``estimate`` share: each ``--lm-eval`` or
    ``--inspect`` is one round's run, in round order."""
    run = p.add_mutually_exclusive_group(required=required)
    run.add_argument(
        "--lm-eval",
        dest="lm_eval",
        action="append",
        metavar="PATH",
        help=f"{whose} lm-eval run: its output folder for this model (OUT/<model dir>), its "
        "results_*.json, one samples_*.jsonl, or a .zip of the run's folder (repeat for each "
        "round, in order)",
    )
    run.add_argument(
        "--inspect",
        action="append",
        nargs="+",
        metavar="LOG",
        help=f"{whose} Inspect AI logs (.eval or .json), one per task (repeat the flag for each "
        "round, in order)",
    )
    p.add_argument(
        "--metric",
        help="with --lm-eval: the 0/1 metric when a task records several (a preference list such "
        "as acc_norm,acc); default the metric each task was imported with",
    )
    p.add_argument(
        "--filter",
        help="with --lm-eval: the filter to keep when a task was logged under several; default "
        "the filter each task was imported with",
    )
    p.add_argument("--scorer", help="with --inspect: the scorer to read when a log has several")
    p.add_argument(
        "--epoch", type=int, help="with --inspect: the epoch to read when a log has several"
    )


def _check_method(method: str) -> None:
    from lifelong_core.methods import available_methods

    if method not in available_methods():
        raise InputError(
            f"unknown --method {method!r}; available: {', '.join(available_methods())}."
        )


def _kept(st: Store, cache: Selection, method: str) -> Any:
    """The method's parameters kept in the store (``lbe state --refresh``) when they cover
    the cache's samples, else None (the command fits them); a stale state is said on
    standard error."""
    import sys

    from lifelong_core.workflows import lifelong_state

    dataset = str(cache.samples["dataset"].iloc[0])
    est, stat = lifelong_state.fitted_on(
        st, dataset, method, cache.samples["sample_idx"].to_numpy()
    )
    if est is not None and stat is not None and (stat.models_since_fit or stat.sort_stale):
        print(stat.sentence(), file=sys.stderr)
    return est


def run_select(args: argparse.Namespace) -> int:
    from lifelong_core.io.harness_items import item_ids, parse_task_names, write_items
    from lifelong_core.methods.draws import COMMON, PER_MODEL
    from lifelong_core.workflows import item_choice

    if not args.common_items and not (args.model or "").strip():
        raise InputError(
            "name the new model with --model NAME (its items are its own random draw) or pass "
            "--common-items for the seed's item set shared by every model."
        )
    _check_method(args.method)
    if not args.out.parent.is_dir():
        raise InputError(f"cannot write {args.out}: folder {args.out.parent} does not exist.")
    names = parse_task_names(args.task)
    _check_run_flags(args)
    if (args.lm_eval or args.inspect) and not args.rounds:
        raise InputError(
            "--lm-eval and --inspect give the runs of earlier rounds, with --rounds.",
            param="rounds",
        )
    with open_store(args.store) as st:
        cache = item_choice.cache_of(st, store_dataset(st, args.dataset))
        if args.format != "csv":
            # Refuse ids the harness cannot take before fitting anything.
            item_ids(cache.samples, names, args.format)
        earlier = _observations(args, st, cache) if (args.lm_eval or args.inspect) else []
        kept = _kept(st, cache, args.method)
    done: dict[str, int] = {}
    for obs in earlier:
        done.update(obs.values)
    choice = item_choice.select_items(
        cache,
        args.budget,
        args.method,
        args.seed,
        evaluated=done,
        fitted=kept,
        model=args.model,
        draws=COMMON if args.common_items else PER_MODEL,
        rounds=args.rounds,
    )
    write_items(choice.items, args.out, args.format, names)
    per = choice.items.groupby("domain", sort=False).size()
    print(
        f"wrote {args.out}: {len(choice.columns)} of {choice.n} items of {choice.dataset} "
        f"({', '.join(f'{d} {k}' for d, k in per.items())}), chosen by {choice.method} fitted on {choice.m} models; "
        f"{choice.describe()}"
    )
    if choice.round < len(choice.plan):
        print(
            f"next: run them, then the same command with --rounds and the run of every round so "
            f"far (--lm-eval or --inspect, in order) writes round {choice.round + 1}; "
            "estimate takes one --lm-eval or --inspect per round."
        )
    if args.format == "lm-eval":
        from lifelong_core.io.harness_items import lm_eval_samples

        print(f"lm_eval tasks: {','.join(lm_eval_samples(choice.items, names))}")
    return 0


def _check_run_flags(args: argparse.Namespace) -> None:
    """The reading flags go with the run they read."""
    if not args.lm_eval and (args.metric is not None or args.filter is not None):
        raise InputError("--metric and --filter go with --lm-eval; an Inspect log has --scorer.")
    if not args.inspect and (args.scorer is not None or args.epoch is not None):
        raise InputError("--scorer and --epoch go with --inspect.")


def _observations(args: argparse.Namespace, st: Store, cache: Selection) -> list:
    """The new model's results per round, from each ``--lm-eval`` or ``--inspect``, on the
    cache's ids."""
    from lifelong_core.workflows.new_model import (
        Observations,
        inspect_observations,
        metric_and_filter,
        results_from_run,
    )

    names = _task_names(args)
    if args.lm_eval:
        from lifelong_core.io.lm_eval import read_run

        dataset = str(cache.samples["dataset"].iloc[0])
        metric, flt = metric_and_filter(st.harness_metrics(dataset), args.metric, args.filter)
        out = []
        for path in args.lm_eval:
            run = read_run(path, metric, flt)
            got = results_from_run(run.table, cache, names, "lm-eval", f"the lm-eval run at {path}")
            out.append(Observations(got, run.source, dict(run.metrics)))
        return out
    return [
        inspect_observations(logs, cache, names, args.scorer, args.epoch) for logs in args.inspect
    ]


def _task_names(args: argparse.Namespace) -> dict[str, str]:
    from lifelong_core.io.harness_items import parse_task_names

    return parse_task_names(args.task)


def run_estimate(args: argparse.Namespace) -> int:
    from lifelong_core.workflows import item_choice, new_model

    _check_method(args.method)
    if args.out is not None and not args.out.parent.is_dir():
        raise InputError(f"cannot write {args.out}: folder {args.out.parent} does not exist.")
    _task_names(args)  # a malformed --task is refused before anything is read
    _check_run_flags(args)
    with open_store(args.store) as st:
        cache = item_choice.cache_of(st, store_dataset(st, args.dataset))
        runs = _observations(args, st, cache)
        kept = _kept(st, cache, args.method)
    est = new_model.estimate_new_model(cache, [r.values for r in runs], args.method, fitted=kept)
    print(est.summary(args.model))
    if args.out is not None:
        est.table.to_csv(args.out, index=False)
    if args.insert:
        from lifelong_core.store import Store

        key = "lm_eval_metrics" if args.lm_eval is not None else "inspect_scorers"
        with Store.open(args.store, read_only=False) as w:
            summary = new_model.insert_estimated(
                w,
                cache,
                args.model,
                est,
                source="; ".join(r.source for r in runs),
                extra_meta={
                    key: {
                        t: list(v) if isinstance(v, tuple) else v
                        for r in runs
                        for t, v in r.metrics.items()
                    },
                    "rounds": [len(r.values) for r in runs],
                },
            )
        print(
            f"inserted {args.model} into {args.store} marked estimated ({summary.get('entries', cache.A.shape[1])} "
            f"entries, {len(est.cols)} of them real results)"
        )
    return 0
