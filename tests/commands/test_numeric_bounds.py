"""Every numeric argument of every command, given an absurd value, is refused at once.

``tests/commands/absurd_args.py`` walks each command's parser for its numeric arguments and runs
the command with ``-1``, ``10**12``, ``10**30`` (whole numbers) or NaN, infinities and
``-1e300`` (reals). The property: exit code 2 with one line on stderr and no traceback,
for every case, and the store unchanged. The subprocess's timeout is the guard against
a value that starts unbounded work (it would overrun instead of answering).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from lifelong_core import limits
from lifelong_core.cli import build_parser
from lifelong_core.errors import InputError
from tests.commands.absurd_args import bases, make_inputs, numeric_options
from tests.store_content import content

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return [c for c in sub.choices if numeric_options(c)]


def test_every_command_with_numbers_has_a_base_command_line():
    # A new command with a numeric argument needs a valid command line in absurd_args.
    missing = sorted(set(_commands()) - set(bases(defaultdict(str))))
    assert not missing, f"add a base command line for {missing} to tests/commands/absurd_args.py"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    return make_inputs(tmp_path_factory.mktemp("absurd"))


@pytest.mark.slow
@pytest.mark.parametrize("command", _commands())
def test_absurd_numbers_are_refused(command, inputs):
    before = content(inputs["store"])
    work = Path(inputs["store"]).parent
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "commands" / "absurd_args.py"), str(work), command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    done = [r for r in results if "rc" in r]
    assert done and len(done) == len(results) // 2
    bad = [
        (r["argv"][-1], r["rc"], r["stderr"])
        for r in done
        if r["rc"] != 2 or r["stderr"].count("\n") != 1 or "Traceback" in r["stderr"]
    ]
    assert not bad, bad
    assert content(inputs["store"]) == before


# ------------------------------------------------------------------ the rules themselves
@pytest.mark.parametrize("seed", [-1, 2**32, 10**30, 1.5, "7", True, None, float("nan")])
def test_check_seed_refuses(seed):
    with pytest.raises(InputError, match="seed must be a whole number") as info:
        limits.check_seed(seed)
    assert info.value.param == "seed"


def test_check_seed_takes_the_range():
    assert limits.check_seed(0) == 0 and limits.check_seed(limits.MAX_SEED) == limits.MAX_SEED


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), "x", None])
def test_check_real_refuses_what_is_not_a_finite_number(value):
    with pytest.raises(InputError, match=r"must be a (finite )?number") as info:
        limits.check_real(value, "the multiplier", 0.0, param="k")
    assert info.value.param == "k"


def test_check_real_bounds_name_the_range():
    assert limits.check_real(0.5, "f", 0, 1, open_lo=True, open_hi=True) == 0.5
    with pytest.raises(InputError, match="strictly between 0 and 1"):
        limits.check_real(1.0, "f", 0, 1, open_lo=True, open_hi=True)
    with pytest.raises(InputError, match="at least 0"):
        limits.check_real(-0.1, "f", 0)


def test_check_count_names_the_bound():
    with pytest.raises(InputError, match=r"at most 64 \(a bound on the work"):
        limits.check_count(65, "the depth", 1, 64, "depth")
    with pytest.raises(InputError, match="whole number"):
        limits.check_count(2.5, "the depth", 1, 64)


def test_bootstrap_replicate_array_is_bounded_in_bytes():
    # Within the replicate count bound, the replicate array has its own bound.
    from lifelong_core.stats import bootstrap
    from lifelong_core.stats.counts import from_frame

    rows = [(f"m{i}", f"t{j}", "c", 1, 2) for i in range(40) for j in range(10)]
    table = from_frame(
        pd.DataFrame(rows, columns=["model", "task", "category", "correct", "total"])
    )
    with pytest.raises(InputError, match="use at most 375000 replicates"):
        bootstrap(table, n_boot=limits.MAX_BOOT)
