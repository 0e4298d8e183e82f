"""``python -m lifelong_core <command>``: the stable command-line contracts of DESIGN.md.

Each subcommand lives in its own module under ``lifelong_core.commands`` and exposes
``add_parser(subparsers)`` (which sets ``func`` on its parser) so that commands stay
independent. Errors from bad input are :class:`~lifelong_core.errors.InputError`: one
line on stderr, exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Module names under lifelong_core.commands, in the order shown by --help.
COMMAND_MODULES = (
    "sweep",
    "rank",
    "weights",
    "match",
    "store_cmds",
    "build_demo",
    "harness",
    "app",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line, like every other error here."""

    def error(self, message: str) -> None:  # noqa: D401 - argparse API
        self.exit(2, f"error: {self.prog}: {message}\n")


def build_parser(prog: str = "python -m lifelong_core") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"lifelong_core.commands.{name}")
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m lifelong_core") -> int:
    from lifelong_core.errors import InputError

    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return int(result or 0)


def lbe() -> int:
    """The ``lbe`` console script (pyproject.toml): the same commands under a short name."""
    return main(prog="lbe")
