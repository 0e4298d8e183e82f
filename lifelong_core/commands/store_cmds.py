"""``import``, ``export`` and ``info``: getting predictions into and out of a store.

``import`` validates the whole input before writing and writes in one transaction; a
store that did not exist is created, and removed again if the import fails. A folder (or
zip) of lm-eval runs is one import: every run is read first, a run that cannot be read is
skipped and named on stderr with its reason (``--strict``: the whole import is refused),
and the readable runs are written together. ``export``
writes the matrix as ``.npy`` (with optional id lists) and/or every recorded entry as a
long ``.parquet``/``.csv`` table. ``info`` prints counts per dataset, domain and model (per
family beyond a few dozen models, or with ``--summary``; ``--models`` lists every one).
"""

from __future__ import annotations

import argparse
import os
import sys
from argparse import _SubParsersAction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lifelong_core.commands._common import add_store, open_store, store_dataset
from lifelong_core.errors import InputError
from lifelong_core.io.readers import readers

if TYPE_CHECKING:
    from lifelong_core.store import Store

# ``info`` lists every model up to this many; beyond, it gives counts per family unless
# asked for the list (a 200-model store printed 200 rows nobody reads).
INFO_LISTED_MODELS = 30
INFO_FAMILIES = 15  # families listed in the summary, largest first


def add_parser(subparsers: _SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="add predictions to a store (long table, wide matrix or lm-eval logs)",
        description=(
            "Add predictions to a store (created if missing): a long table, a wide 0/1 matrix, "
            "lm-eval runs or Inspect logs."
        ),
        example=(
            "lbe import --store mine.duckdb --matrix llm.npy --models models.txt "
            "--samples samples.txt --dataset llm"
        ),
    )
    add_store(p, "DuckDB store file (created if missing)")
    # One flag per format the reader registry can import, and one per option the formats
    # declare (lifelong_core.io.readers); an option several formats take is one flag.
    src = p.add_mutually_exclusive_group(required=True)
    for reader in readers(importable=True):
        src.add_argument(
            f"--{reader.name}", dest=reader.dest, metavar=reader.metavar, help=reader.help
        )
    for name, (opt, helps) in _import_options().items():
        kwargs: dict = {"dest": name, "help": "; ".join(helps)}
        if opt.kind == "flag":
            kwargs["action"] = "store_true"
        else:
            kwargs["metavar"] = opt.metavar or opt.name.upper()
            kwargs["type"] = int if opt.kind == "int" else None
        p.add_argument(opt.flag, **kwargs)
    p.add_argument(
        "--dataset",
        metavar="NAME",
        help="dataset of new samples (default: the file's dataset column; lm-eval: the dataset the "
        "store already keeps the items in, else the runs' one group or task, else 'lm-eval')",
    )
    p.set_defaults(func=run_import)

    p = subparsers.add_parser(
        "export",
        help="write a store's matrix (.npy) or long table (.parquet/.csv)",
        description=(
            "Write a store's predictions as a 0/1 matrix (.npy), a long table (.parquet or .csv) "
            "or a table of counts."
        ),
        example=(
            "lbe export --store data/demo.duckdb --dataset open-llm-leaderboard-v2 --matrix llm.npy "
            "--models models.txt --samples samples.txt"
        ),
    )
    add_store(p)
    p.add_argument(
        "--matrix",
        metavar="OUT.npy",
        help="write the dataset's 0/1 matrix as uint8 .npy: its models evaluated on every one of "
        "its samples x its samples (a line says which models were left out)",
    )
    p.add_argument(
        "--models", metavar="OUT.txt", help="with --matrix: write the row model ids, one per line"
    )
    p.add_argument(
        "--samples",
        metavar="OUT.txt",
        help="with --matrix: write the column sample ids, one per line",
    )
    for flag, what in (
        ("--confidence", "confidence (float32)"),
        ("--predicted", "predicted labels (int32)"),
        ("--true-prob", "true-class probabilities (float32)"),
    ):
        p.add_argument(flag, metavar="OUT.npy", help=f"with --matrix: write the {what}, same shape")
    p.add_argument(
        "--long", metavar="OUT", help="write every recorded entry as a long .parquet or .csv table"
    )
    p.add_argument(
        "--counts",
        metavar="OUT.csv",
        help="write the dataset's counts.csv (model, task, category, correct, total; "
        "task = domain, tasks without a category get 'uncategorised') for rank and weights: "
        "its models evaluated on every domain",
    )
    p.add_argument(
        "--dataset",
        metavar="D",
        help="the dataset of --matrix and --counts (needed when the store holds several; default: "
        "its only one); --long writes every dataset unless one is named",
    )
    p.set_defaults(func=run_export)

    p = subparsers.add_parser(
        "info",
        help="counts per dataset, domain and model",
        description="Describe a store: its datasets, domains and models, with their counts.",
        example="lbe info --store data/demo.duckdb --summary",
    )
    add_store(p)
    p.add_argument(
        "--dataset",
        metavar="D",
        help="describe this dataset only: its domains and the models with predictions on it "
        "(default: every dataset)",
    )
    listing = p.add_mutually_exclusive_group()
    listing.add_argument(
        "--summary",
        action="store_true",
        help="counts only: datasets, domains and models per family, no row per model "
        f"(the default beyond {INFO_LISTED_MODELS} models)",
    )
    listing.add_argument(
        "--models",
        dest="all_models",
        action="store_true",
        help="list every model, however many",
    )
    p.set_defaults(func=run_info)

    p = subparsers.add_parser(
        "check",
        help="verify a store's integrity (exit 1 and one line per problem if broken)",
        description="Verify a store: format, indices, blocks, blob lengths, ids, log counts, "
        "and that every page of the file reads.",
        example="lbe check --store data/demo.duckdb",
    )
    add_store(p)
    p.set_defaults(func=run_check)

    p = subparsers.add_parser(
        "undo",
        help="remove exactly what one import added (by its log id), in one logged transaction",
        description=(
            "Undo one import: remove the models, samples and entries it added, in one logged "
            "transaction."
        ),
        example="lbe undo --store mine.duckdb 0",
    )
    add_store(p)
    p.add_argument(
        "log_id",
        type=int,
        metavar="LOG_ID",
        help="the import's log entry (see `info` or the app's Home page)",
    )
    p.set_defaults(func=run_undo)


def _import_options() -> dict:
    """Option name -> (its first declaration, its help for each format that takes it)."""
    out: dict = {}
    for reader in readers(importable=True):
        for opt in reader.options:
            out.setdefault(opt.name, (opt, []))[1].append(f"--{reader.name}: {opt.help}")
    return out


def run_import(args: argparse.Namespace) -> int:
    given = next(r for r in readers(importable=True) if getattr(args, r.dest) is not None)
    values = {name: getattr(args, name) for name in _import_options()}
    for name, value in values.items():
        if value not in (None, False) and given.option(name) is None:
            takers = [f"--{r.name}" for r in readers(importable=True) if r.option(name)]
            flag = "--" + name.replace("_", "-")
            raise InputError(f"{flag} only goes with {' or '.join(takers)}.")
    for opt in given.options:
        if opt.required and values.get(opt.name) is None:
            needed = [o.flag for o in given.options if o.required]
            raise InputError(f"--{given.name} needs {' and '.join(needed)} too.")

    from lifelong_core.commands._common import stderr_progress
    from lifelong_core.workflows import imports

    # An existing store is held from here on; the input files are read and validated
    # before it is written (a new store is created only for a valid input).
    with imports.held_store(args.store) as held:
        src = imports.source(
            given.name,
            getattr(args, given.dest),
            args.dataset,
            progress=stderr_progress(),
            **imports.option_values(given.name, values),
        )
        for s in src.skipped:
            print(f"skipped run {s.run}: {s.reason}.", file=sys.stderr)
        summary = imports.import_into(args.store, src, store=held)
    print(imports.summary_text(summary, Path(args.store)))
    for task, (metric, flt) in sorted(summary.get("metrics", {}).items()):
        print(f"  {task}: correct = {metric} (filter {flt})")
    if src.kind == "inspect":
        print(f"  {src.run.task}: correct = scorer {src.run.scorer!r} (C/I or 0/1)")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from lifelong_core.io.edges import atomic_output, check_output_path
    from lifelong_core.store.files import export_long, write_ids

    if args.matrix is None and args.long is None and args.counts is None:
        raise InputError(
            "export needs --matrix OUT.npy, --long OUT.parquet and/or --counts OUT.csv."
        )
    if args.counts is not None and not args.counts.lower().endswith(".csv"):
        raise InputError(f"--counts output {args.counts} must end in .csv.")
    extras_out = {
        "confidence": args.confidence,
        "predicted": args.predicted,
        "true_prob": args.true_prob,
    }
    extras_out = {f: v for f, v in extras_out.items() if v is not None}
    if args.matrix is None and (args.models or args.samples or extras_out):
        raise InputError(
            "--models, --samples, --confidence, --predicted and --true-prob only go with --matrix."
        )
    npy_flags = [("--matrix", args.matrix)] + [
        ("--" + f.replace("_", "-"), v) for f, v in extras_out.items()
    ]
    for flag, out in npy_flags:
        if out is not None and not out.lower().endswith(".npy"):
            raise InputError(f"{flag} output {out} must end in .npy.")
    # Every output is checked before the first is written, so a bad path writes nothing.
    for flag, out in npy_flags + [
        ("--models", args.models),
        ("--samples", args.samples),
        ("--long", args.long),
    ]:
        if out is not None:
            check_output_path(out, flag)
    flag_of = {out: flag for flag, out in npy_flags if out is not None}
    with open_store(args.store) as st:
        if args.long is not None and args.dataset is not None:
            store_dataset(st, args.dataset)  # a name the store does not hold: one sentence
        if args.matrix is not None:
            from lifelong_core.workflows.selection import dataset_models

            found = dataset_models(st, store_dataset(st, args.dataset))
            if len(found.complete) == 0:
                raise InputError(found.note().rstrip(".") + "; there is no matrix to export.")
            midx = found.complete["model_idx"].to_numpy()
            sidx = found.samples["sample_idx"].to_numpy()
            A = st.matrix(midx, sidx)
            arrays = {args.matrix: A}
            if extras_out:
                got = st.extras(midx, sidx, fields=tuple(extras_out))
                arrays.update({extras_out[f]: got[f] for f in extras_out})
            for out, arr in arrays.items():
                with atomic_output(out, flag_of[out], suffix=".npy") as tmp:
                    np.save(tmp, arr, allow_pickle=False)
            if args.models:
                write_ids(found.complete["model_id"], args.models, "--models")
            if args.samples:
                write_ids(found.samples["sample_id"], args.samples, "--samples")
            print(found.note())
            print(f"wrote {A.shape[0]} x {A.shape[1]} matrix to {args.matrix}")
        if args.long is not None:
            n = export_long(st, args.long, args.dataset)
            print(f"wrote {n} rows to {args.long}")
        if args.counts is not None:
            from lifelong_core.workflows.exports import counts_table

            counts = counts_table(st, store_dataset(st, args.dataset))
            if counts.attrs.get("note"):
                print(counts.attrs["note"])
            tmp = args.counts + ".tmp"
            counts.to_csv(tmp, index=False)
            os.replace(tmp, args.counts)
            print(f"wrote {len(counts)} model x task counts to {args.counts}")
    return 0


def _table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    rows = [
        [("" if v is None or v != v else str(v)) for v in r] for r in df.itertuples(index=False)
    ]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    line = lambda vals: "| " + " | ".join(v.ljust(w) for v, w in zip(vals, widths)) + " |"  # noqa: E731
    return "\n".join(
        [line(cols), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows]
    )


def _families(models: pd.DataFrame) -> pd.DataFrame:
    """Models, estimated rows and recorded predictions per family (largest first)."""
    fam = models.assign(family=models["family"].fillna("(none)").astype(str))
    out = fam.groupby("family", sort=False).agg(
        models=("model_id", "size"),
        estimated=("estimated", "sum"),
        entries=("entries", "sum"),
        correct=("correct", "sum"),
    )
    out["accuracy"] = (out["correct"] / out["entries"].where(out["entries"] > 0)).round(4)
    out["estimated"] = out["estimated"].astype(int)
    return (
        out.drop(columns="correct")
        .reset_index()
        .sort_values(["models", "family"], ascending=[False, True], kind="stable")
    )


def run_info(args: argparse.Namespace) -> int:
    with open_store(args.store) as st:
        summary = st.summary()
        size = Path(args.store).stat().st_size
        cells = st.n_models * st.n_samples
        n_est = int(summary["models"]["estimated"].astype(bool).sum())
        lines = [
            f"store {args.store}: {len(st.datasets())} datasets, {st.n_models} models, {st.n_samples} samples, "
            f"{summary['models']['entries'].sum()} recorded predictions"
            + (
                f" ({summary['models']['entries'].sum() / cells:.1%} of the matrix)"
                if cells
                else ""
            )
            + f", file {size / 1e6:.1f} MB",
            "Dataset and domain rows count evaluated models only"
            + (
                f"; the {n_est} rows inserted as estimates (estimated = True below) are predictions "
                "and are left out of their models, entries and accuracy."
                if n_est
                else "."
            ),
        ]
        if args.dataset is not None:
            summary = _dataset_summary(st, summary, store_dataset(st, args.dataset))
            lines.append(f"Showing dataset {args.dataset} only.")
        for name in ("datasets", "domains"):
            lines += ["", f"{name}:", _table(summary[name]) if len(summary[name]) else "(none)"]
        models = summary["models"]
        listed = args.all_models or (not args.summary and len(models) <= INFO_LISTED_MODELS)
        if listed or not len(models):
            lines += ["", "models:", _table(models) if len(models) else "(none)"]
        else:
            fams = _families(models)
            head = f"models: {len(models)} in {len(fams)} families"
            lines += [
                "",
                head + (f", the {INFO_FAMILIES} largest:" if len(fams) > INFO_FAMILIES else ":"),
            ]
            lines.append(_table(fams.head(INFO_FAMILIES)))
            if len(fams) > INFO_FAMILIES:
                rest = fams.iloc[INFO_FAMILIES:]
                lines.append(
                    f"(and {len(rest)} more families with {int(rest['models'].sum())} models)"
                )
            if not args.summary:
                lines.append(
                    f"({len(models)} models: more than {INFO_LISTED_MODELS}, so counted per family; "
                    "--models lists every one)"
                )
    try:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # `info | head` closed the pipe early: not an error; keep Python quiet at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _dataset_summary(st: Store, summary: dict, dataset: str) -> dict:
    """``summary`` cut to ``dataset``: its row, its domains, and the models with predictions
    on it, their entries, correct answers and accuracy counted on its samples only."""
    counts = st.counts(dataset=dataset)
    per = counts.assign(model_id=counts["model"]).groupby("model_id")[["total", "correct"]].sum()
    models = summary["models"]
    models = models[models["model_id"].isin(per.index)].drop(columns=["entries", "correct"])
    models = models.join(per.rename(columns={"total": "entries"}), on="model_id")
    models["accuracy"] = (models["correct"] / models["entries"]).round(4)
    return {
        "datasets": summary["datasets"][summary["datasets"]["dataset"] == dataset],
        "domains": summary["domains"][summary["domains"]["dataset"] == dataset],
        "models": models[summary["models"].columns].reset_index(drop=True),
    }


def run_check(args: argparse.Namespace) -> int:
    from lifelong_core.store import Store
    from lifelong_core.store.maintenance import verify

    with Store.open(args.store, read_only=True) as st:
        problems = verify(st)
    if problems:
        for p in problems:
            print(f"problem: {p}")
        print(
            f"store {args.store} fails its integrity check ({len(problems)} problem(s)).",
            file=sys.stderr,
        )
        return 1
    print(f"store {args.store}: ok")
    return 0


def run_undo(args: argparse.Namespace) -> int:
    from lifelong_core.store import Store
    from lifelong_core.store.maintenance import check_sound, undo

    with Store.open(args.store, read_only=False) as st:
        check_sound(st)
        row = undo(st, args.log_id)
    print(
        f"undid log entry {args.log_id}: removed {-row['new_models']} models, {-row['new_samples']} samples and "
        f"{-row['entries']} entries (log entry {row['log_id']})."
    )
    return 0
