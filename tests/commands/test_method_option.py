"""`--method` is the method option's one name on every command; the older names still work."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import build_parser, main

# The older names, kept working but left out of --help.
OLD_NAMES = {"sweep": "--search", "sweep-samples": "--search", "stream": "--methods",
             "backtest": "--methods"}  # fmt: skip


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _shown(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions if a.help != argparse.SUPPRESS for s in a.option_strings}


def test_every_method_option_is_called_method():
    commands = _commands()
    with_method = {name for name, p in commands.items() if "--method" in _shown(p)}
    assert set(OLD_NAMES) | {"select", "estimate", "rank", "state"} <= with_method
    for name, p in commands.items():
        assert not _shown(p) & {"--search", "--methods"}, name


@pytest.mark.parametrize("command,old", sorted(OLD_NAMES.items()))
def test_old_name_sets_the_same_value_and_is_hidden(command, old):
    p = _commands()[command]
    hidden = [a for a in p._actions if old in a.option_strings]
    assert len(hidden) == 1 and hidden[0].help == argparse.SUPPRESS
    assert hidden[0].dest == "method"
    assert old not in p.format_help()
    value = "midpoint"
    required = {"sweep": ["--matrix", "A.npy", "--sort-models", "4", "--out", "o.csv"],
                "sweep-samples": ["--matrix", "A.npy", "--out", "o.csv"],
                "stream": ["--matrix", "A.npy", "--out", "o.csv"],
                "backtest": ["--store", "s.duckdb"]}[command]  # fmt: skip
    old_args = p.parse_args([*required, old, value])
    new_args = p.parse_args([*required, "--method", value])
    assert old_args.method == new_args.method == value
    # Without either, the command reads the default of --method, not the alias's.
    (method,) = [a for a in p._actions if "--method" in a.option_strings]
    assert p.parse_args(required).method == method.default


def test_sweep_with_the_old_name_gives_the_same_table(tmp_path, capsys):
    rng = np.random.default_rng(3)
    A = (rng.random((16, 120)) < np.linspace(0.2, 0.9, 16)[:, None]).astype(np.uint8)
    np.save(tmp_path / "A.npy", A)
    common = ["sweep", "--matrix", str(tmp_path / "A.npy"), "--sort-models", "8",
              "--budgets", "8,32", "--no-baselines"]  # fmt: skip
    assert main([*common, "--search", "midpoint", "--out", str(tmp_path / "old.csv")]) == 0
    assert main([*common, "--method", "midpoint", "--out", str(tmp_path / "new.csv")]) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "old.csv"), pd.read_csv(tmp_path / "new.csv")
    )


def test_bad_method_names_the_new_flag(tmp_path, capsys):
    np.save(tmp_path / "A.npy", np.eye(6, dtype=np.uint8))
    argv = ["stream", "--matrix", str(tmp_path / "A.npy"), "--methods", "oracle",
            "--out", str(tmp_path / "c.csv")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--method entry 'oracle' is not a search method" in err
    assert "--methods" not in err
