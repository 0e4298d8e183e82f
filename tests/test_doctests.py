"""Every example in the package's docstrings runs and prints what it shows.

The examples are those of the API reference; they run here as doctests, module by module,
with the demo store as the default store (``LBE_STORE``), so an example may open it. The
modules whose examples fit models on it take seconds and are marked slow.
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SLOW = {"lifelong_core.api"}


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted((ROOT / "lifelong_core").rglob("*.py")):
        if ">>> " in path.read_text(encoding="utf-8") and path.name != "__main__.py":
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join(p for p in parts if p != "__init__"))
    return names


MODULES = _modules_with_examples()


def test_the_walk_finds_the_examples():
    assert {
        "lifelong_core.api",
        "lifelong_core.methods.registry",
        "lifelong_core.io.correct",
    } <= set(MODULES)


@pytest.mark.parametrize(
    "name",
    [pytest.param(m, marks=pytest.mark.slow) if m in SLOW else m for m in MODULES],
)
def test_docstring_examples_run(name, demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    runner = doctest.DocTestRunner(optionflags=flags)
    out = io.StringIO()
    tests = doctest.DocTestFinder().find(module, name)
    for test in tests:
        runner.run(test, out=out.write)
    assert sum(len(t.examples) for t in tests) > 0, f"{name}: no example found"
    assert runner.failures == 0, out.getvalue()
