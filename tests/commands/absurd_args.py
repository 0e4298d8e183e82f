"""Run one command with every absurd value of every numeric argument it takes.

    python tests/commands/absurd_args.py WORKDIR COMMAND

Used by ``tests/commands/test_numeric_bounds.py``, which runs it in a subprocess with a timeout:
a value that starts unbounded work (a recursion a million levels deep, a hundred million
repeats, a 2.6 TiB allocation) makes the subprocess overrun instead of the test hanging.

The numeric arguments are found by walking the command's parser (every option whose
``type`` makes numbers, and the comma-separated lists of budgets), so an argument added
later is walked without a change here. Each case is run in this process through
``lifelong_core.cli.main`` and printed as one JSON line: the arguments, the exit code and
what went to stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lifelong_core.cli import build_parser, main  # noqa: E402

ABSURD_INTS = ("-1", "1000000000000", str(10**30))
ABSURD_REALS = ("nan", "inf", "-inf", "-1e300")
# Options that hold comma-separated whole numbers (parsed by the command, not by argparse).
INT_LISTS = {"--budgets"}
# Positional numbers (``undo LOG_ID``).
POSITIONAL = {"undo": ("log_id",)}
# What an option needs beside it to be used at all ({command: {option: extra arguments}}).
CONTEXT = {
    "rank": {o: ["--method", "hierarchical"] for o in ("--chains", "--draws", "--warmup")},
    "stream": {"--regret-budget": ["--regret", "{out2}"]},
}


def make_inputs(work: Path) -> dict[str, str]:
    """Small valid inputs for every command, under ``work`` (made once, reused)."""
    from lifelong_core.store import Store

    work.mkdir(parents=True, exist_ok=True)
    paths = {k: str(work / v) for k, v in _FILES.items()}
    if Path(paths["store"]).exists():
        return paths
    rng = np.random.default_rng(0)
    A = (rng.random((12, 40)) < np.linspace(0.2, 0.9, 40)).astype(np.uint8)
    np.save(paths["matrix"], A)
    np.save(paths["confidence"], rng.random((12, 40)).astype(np.float32))
    Path(paths["sort_rows"]).write_text("0\n1\n2\n3\n")
    domains = [f"d{j % 3}" for j in range(40)]
    Path(paths["sample_domains"]).write_text("".join(f"{d}\n" for d in domains))
    samples = {
        "sample_id": [f"s{j}" for j in range(40)],
        "domain": domains,
        "category": [f"c{j % 3}" for j in range(40)],
    }
    import pandas as pd

    with Store.create(paths["store"]) as st:
        st.insert_matrix(A, [f"m{i}" for i in range(12)], pd.DataFrame(samples), dataset="d")
    rows = [
        f"m{i},t{t},c{t % 3},{int(A[i, t * 4 : t * 4 + 4].sum())},4"
        for i in range(12)
        for t in range(6)
    ]
    Path(paths["counts"]).write_text("model,task,category,correct,total\n" + "\n".join(rows) + "\n")
    Path(paths["preds"]).write_text(
        "y,y_pred,p\n" + "".join(f"{j % 3},{(j * 7) % 3},{0.5 + (j % 5) / 10}\n" for j in range(30))
    )
    run = Path(paths["lm_eval"])
    run.mkdir()
    (run / "samples_d0_2024-01-01T00-00-00.jsonl").write_text(
        "".join(json.dumps({"doc_id": j, "acc": j % 2}) + "\n" for j in range(3))
    )
    return paths


_FILES = {
    "store": "s.duckdb",
    "matrix": "A.npy",
    "confidence": "C.npy",
    "sort_rows": "sort_rows.txt",
    "sample_domains": "domains.txt",
    "counts": "counts.csv",
    "preds": "p.csv",
    "lm_eval": "run",
    "out": "out.csv",
    "out2": "out2.csv",
    "json": "out.json",
}


def bases(p: dict[str, str]) -> dict[str, list[str]]:
    """A valid command line per command: every absurd value is added to it."""
    return {
        "sweep": ["sweep", "--matrix", p["matrix"], "--sort-models", "4", "--out", p["out"]],
        "sweep-samples": ["sweep-samples", "--matrix", p["matrix"], "--out", p["out"]],
        "stream": ["stream", "--matrix", p["matrix"], "--out", p["out"]],
        "rank": ["rank", "--counts", p["counts"], "--out", p["out"]],
        "weights": ["weights", "--counts", p["counts"], "--out", p["out"]],
        "match": ["match", "--source", p["preds"], "--target", p["preds"], "--out", p["json"]],
        "import": ["import", "--store", p["store"], "--inspect", p["lm_eval"]],
        "undo": ["undo", "--store", p["store"]],
        "select": ["select", "--store", p["store"], "--budget", "5", "--out", p["json"]],
        "estimate": ["estimate", "--store", p["store"], "--lm-eval", p["lm_eval"], "--model", "x"],
        "app": ["app", "--store", p["store"]],
        "adaptive": ["adaptive", "--matrix", p["matrix"], "--row", "0", "--out", p["out"]],
        "state": ["state", "--store", p["store"], "--refresh", "d"],
        "backtest": [
            "backtest",
            "--store",
            p["store"],
            "--holdout",
            "2",
            "--repeats",
            "1",
            "--budgets",
            "8",
            "--out",
            p["out"],
        ],
    }


def numeric_options(command: str) -> list[tuple[str, tuple[str, ...]]]:
    """``(option, absurd values)`` for every numeric argument of ``command``."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    out = []
    for action in sub.choices[command]._actions:
        kind = getattr(action.type, "__name__", "")
        name = action.option_strings[-1] if action.option_strings else action.dest
        if name in INT_LISTS or kind in ("int", "int_arg", "_int_arg", "count_arg"):
            out.append((name, ABSURD_INTS))
        elif kind in ("float", "real_arg", "_float_arg"):
            out.append((name, ABSURD_REALS))
    return out


def cases(command: str, p: dict[str, str]) -> list[list[str]]:
    base = bases(p)[command]
    out = []
    for option, values in numeric_options(command):
        for v in values:
            if option in POSITIONAL.get(command, ()):
                out.append([*base, v])
                continue
            extra = CONTEXT.get(command, {}).get(option, [])
            argv = list(base) + [a.format(**p) for a in extra]
            if option in argv:  # replace the base's own value
                argv[argv.index(option) + 1] = v
            else:
                argv += [f"{option}={v}"]
            out.append(argv)
    return out


def run_case(argv: list[str]) -> dict:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse refusals
            rc = exc.code
        except BaseException as exc:  # a traceback is what the test reports
            rc = f"{type(exc).__name__}: {exc}"
    return {"argv": argv, "rc": rc, "stderr": err.getvalue()}


if __name__ == "__main__":
    work, command = Path(sys.argv[1]), sys.argv[2]
    inputs = make_inputs(work)
    for argv in cases(command, inputs):
        # Printed before the run too, so an overrun names the case that hung.
        print(json.dumps({"start": argv}), flush=True)
        print(json.dumps(run_case(argv)), flush=True)
