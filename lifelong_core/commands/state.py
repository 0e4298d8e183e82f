"""``state``: show or refresh the lifelong state kept in a store (Sort state, mirt parameters).

``python -m lifelong_core state --store S`` lists, per dataset, the kept Sort state (Sort
set size, samples, whether an import is not reflected) and the kept ``mirt`` parameters
with how long a refresh takes. ``--refresh DATASET`` brings the Sort state up to date and
fits the default estimator from packed blocks of the cache (progress on stderr), and on the
Sort split the sweep pages open on, then keeps all three in the store, so the app's pages
read them instead of refitting.
"""

from __future__ import annotations

import argparse
import sys
import time
from argparse import _SubParsersAction
from collections.abc import Callable

from lifelong_core.commands._common import add_store, store_dataset
from lifelong_core.methods.registry import kept_method, kept_methods


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "state",
        help="show or refresh the kept Sort state and mirt parameters",
        description=(
            "Show, or refresh, the lifelong state kept in a store: the Sort state, the fitted "
            "parameters of the default estimator, and its fit on the Sort split the Budget explorer "
            "and Estimated vs true open on."
        ),
        example="lbe state --store data/demo.duckdb",
    )
    add_store(p)
    p.add_argument(
        "--refresh",
        metavar="DATASET",
        help="update the Sort state of DATASET, fit the estimator on it and on the pages' default Sort split",
    )
    p.add_argument(
        "--dataset",
        metavar="D",
        help="show this dataset's state only (default: every dataset)",
    )
    p.add_argument(
        "--method",
        default=None,
        choices=kept_methods(),
        help=f"model-based estimator whose parameters are kept (default: {kept_method()})",
    )
    p.add_argument(
        "--max-models",
        type=int,
        default=None,
        help="Sort models the fit uses at most (default 500)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the fit's model and column subsample"
    )
    p.set_defaults(func=run)


def _progress() -> Callable[[float, str], None]:
    t0 = time.perf_counter()
    last = [-1.0]

    def report(f: float, text: str) -> None:
        # One line per 5% (or a new step), so a log of a long fit stays readable.
        if f - last[0] >= 0.05 or f >= 1.0:
            last[0] = f
            print(
                f"[{time.perf_counter() - t0:7.1f} s] {100 * f:5.1f}% {text}",
                file=sys.stderr,
                flush=True,
            )

    return report


def run(args: argparse.Namespace) -> int:
    from lifelong_core.store import Store
    from lifelong_core.store import state as kept
    from lifelong_core.store.kept_fits import kept_fit_count
    from lifelong_core.store.kept_results import kept_result_count
    from lifelong_core.workflows import lifelong_state
    from lifelong_core.workflows.backtest import KEPT_KIND as KEPT_BACKTEST
    from lifelong_core.workflows.matching import KEPT_KIND as KEPT_MATCHING
    from lifelong_core.workflows.stream import KEPT_KIND as KEPT_STREAM

    args.method = kept_method(args.method)
    if args.refresh:
        kw = {} if args.max_models is None else {"max_models": args.max_models}
        with Store.open(args.store, read_only=False) as st:
            sort, item = lifelong_state.refresh(
                st, args.refresh, args.method, seed=args.seed, progress=_progress(), **kw
            )
            also = [
                what
                for what, n in (
                    (
                        "its fit on the sweep pages' default Sort split",
                        kept_fit_count(st, args.refresh),
                    ),
                    (
                        "the Budget explorer's comparison with random",
                        kept_result_count(st, args.refresh, KEPT_BACKTEST),
                    ),
                    (
                        "the Stream page's first view",
                        kept_result_count(st, args.refresh, KEPT_STREAM),
                    ),
                    (
                        "Matched accuracy's first view",
                        kept_result_count(st, args.refresh, KEPT_MATCHING),
                    ),
                )
                if n
            ]
            print(
                f"{args.refresh}: Sort state over {len(sort.members):,} models x {len(sort.samples):,} samples; "
                f"{args.method} fitted on {len(item.fit_models):,} of them in {item.seconds:.1f} s (log row {item.log_id})"
                + (f"; kept too: {', '.join(also)}." if also else ".")
            )
        return 0
    with Store.open(args.store) as st:
        sorts = kept.sort_states(st)
        datasets = st.datasets()["dataset"].tolist()
        if args.dataset is not None:
            datasets = [store_dataset(st, args.dataset)]
        for ds in datasets:
            row = sorts[sorts["dataset"] == ds]
            if len(row) == 0:
                print(
                    f"{ds}: no Sort state kept (python -m lifelong_core state --store {args.store} --refresh {ds})."
                )
            else:
                r = row.iloc[0]
                print(
                    f"{ds}: Sort state over {int(r['models']):,} models x {int(r['samples']):,} samples, log row "
                    f"{int(r['log_id'])}{' (stale: later imports not reflected)' if r['stale'] else ''}."
                )
            print("  " + lifelong_state.status(st, ds, args.method).sentence())
    return 0
