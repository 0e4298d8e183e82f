"""``python -m lifelong_core <command>`` (and ``lbe <command>``): the command line.

Each subcommand lives in its own module under ``lifelong_core.commands`` and exposes
``add_parser(subparsers)`` (which sets ``func`` on its parser) so that commands stay
independent. Every command module is imported to build ``--help``, so a command imports
the engine it runs (scipy, DuckDB: seconds on a loaded machine) inside its ``run``
function: start-up pays only for the command that runs. Errors from bad input are
:class:`~lifelong_core.errors.InputError`: one line on stderr, exit code 2. The core
names parameters, not flags: when an error carries ``param``, the line starts with the
flag that sets it (:func:`flag_for`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, NoReturn

from lifelong_core.errors import InputError

DESCRIPTION = (
    "Lifelong Benchmark Explorer: estimate models from a few evaluations on a store of "
    "per-sample predictions, rank them with intervals, and manage the store."
)

# Module names under lifelong_core.commands, in the order shown by --help.
COMMAND_MODULES = (
    "sweep",
    "sweep_samples",
    "stream",
    "rank",
    "weights",
    "match",
    "store_cmds",
    "build_demo",
    "harness",
    "backtest",
    "app",
    "adaptive",
    "state",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line, like every other error here, and
    ends a command's help with one example (``example=``, shown as written, not rewrapped;
    the command-line reference shows it too)."""

    def __init__(self, *args: Any, example: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.example = example

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}\n")

    def format_help(self) -> str:
        text = super().format_help()
        return text if self.example is None else f"{text}\nexample:\n  {self.example}\n"


def version() -> str:
    """The installed distribution's version (the package's own when run from a checkout).

    Both come from ``lifelong_core.__version__``, the one place it is written
    (pyproject.toml reads it at build time).
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(DISTRIBUTION)
    except PackageNotFoundError:
        from lifelong_core import __version__

        return __version__


DISTRIBUTION = "lifelong-benchmark-explorer"


def build_parser(prog: str = "python -m lifelong_core") -> argparse.ArgumentParser:
    """The command line's parser: one subparser per module of :data:`COMMAND_MODULES`."""
    parser = _Parser(prog=prog, description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"lifelong_core.commands.{name}")
        module.add_parser(sub)
    return parser


# Core parameter names whose command-line dest differs.
PARAM_DESTS = {
    "model_name": "model",
    "task_names": "task",
    "n_boot": "boot",
    "search": "method",
    "methods": "method",
}


def flag_for(parser: argparse.ArgumentParser, param: str | None) -> str | None:
    """The option string of ``parser`` that sets parameter ``param`` (its ``dest``)."""
    if param is None:
        return None
    param = PARAM_DESTS.get(param, param)
    for action in parser._actions:
        if action.dest == param and action.option_strings:
            return max(action.option_strings, key=len)
    return None


def error_line(exc: InputError, parser: argparse.ArgumentParser) -> str:
    """The one line printed for bad input: ``error: [--flag: ]<sentence>``."""
    flag = flag_for(parser, getattr(exc, "param", None))
    return f"error: {flag}: {exc}" if flag else f"error: {exc}"


def main(argv: list[str] | None = None, prog: str = "python -m lifelong_core") -> int:
    """Run one command of the command line and return its exit status.

    Bad input is one line on standard error and exit status 2, never a traceback; so is a
    file the operating system refuses and a store DuckDB cannot read.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).
    prog : str
        The program name shown in usage and help.

    Returns
    -------
    int
        0 on success, 2 for bad input, 130 when interrupted, or the command's own status.
    """
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except InputError as exc:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        print(error_line(exc, sub.choices[args.command]), file=sys.stderr)
        return 2
    except OSError as exc:
        # A backstop at the edge: readers and writers name their file themselves; an OS
        # error that slipped past them still gets one sentence with its real cause.
        from lifelong_core.io.edges import cause

        if exc.filename:
            print(f"error: cannot access {exc.filename}: {cause(exc)}.", file=sys.stderr)
        else:
            print(f"error: a file could not be read or written: {cause(exc)}.", file=sys.stderr)
        return 2
    except Exception as exc:
        from lifelong_core.store.maintenance import store_error_sentence

        sentence = store_error_sentence(exc, getattr(args, "store", None))
        if sentence is None:
            raise
        print(f"error: {sentence}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return int(result or 0)


def lbe() -> int:
    """The ``lbe`` console script (pyproject.toml): the same commands under a short name."""
    return main(prog="lbe")
