"""The import contract of docs/development/architecture.md, checked over the real import graph.

Floors, top to bottom; a module imports only from its own floor or the floors below,
never up, and no set of modules imports each other in a circle (function-level imports
count: hiding an import in a function does not make a circle go away). Only the store
imports DuckDB; the core imports neither streamlit nor plotly. Every module of the
package must sit on a floor: a new package gets a line in ``FLOORS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (floor name, module prefixes). A prefix names a module and everything under it.
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("pages", ("pages", "app")),
    ("ui", ("ui",)),
    (
        "workflows | cli",
        (
            "workflows",
            "lifelong_core.workflows",
            "lifelong_core.api",
            "lifelong_core.cli",
            "lifelong_core.commands",
            "lifelong_core.__main__",
        ),
    ),
    (
        "engine",
        (
            "lifelong_core.sweeping",
            "lifelong_core.methods",
            "lifelong_core.stats",
            "lifelong_core.matching",
            "lifelong_core.datasets",
            "lifelong_core.studies",
        ),
    ),
    ("sortsearch, store", ("lifelong_core.sortsearch", "lifelong_core.store")),
    ("rows, bits, io", ("lifelong_core.rows", "lifelong_core.bits", "lifelong_core.io")),
    (
        "errors, paths, limits",
        (
            "lifelong_core.errors",
            "lifelong_core.paths",
            "lifelong_core.limits",
            "lifelong_core.registry",
            "lifelong_core.env",
        ),
    ),
]
# The package itself (``lifelong_core/__init__.py``) sits on the bottom floor; only the
# exact name, so a module missing from FLOORS is reported instead of landing there.
ROOT_PACKAGE = "lifelong_core"
# Source trees whose modules are checked (those that exist: workflows/ may not yet).
TREES = ("lifelong_core", "ui", "pages", "workflows", "app.py")
DB_OWNER = "lifelong_core.store"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    # Page files are named like "1_Budget_explorer"; they are modules of `pages` all the same.
    return ".".join(parts)


def source_files() -> list[Path]:
    out = []
    for tree in TREES:
        p = ROOT / tree
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out += sorted(p.rglob("*.py"))
    return out


def imports_of(path: Path, name: str) -> set[str]:
    """Every module ``path`` imports, at module level or inside functions."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            # `from pkg import submodule` imports the submodule.
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in source_files()}
    return {name: imports_of(path, name) for name, path in files.items()}


def floor_of(module: str) -> int | None:
    if module == ROOT_PACKAGE:
        return len(FLOORS) - 1
    best, at = -1, None
    for i, (_, prefixes) in enumerate(FLOORS):
        for pre in prefixes:
            if (module == pre or module.startswith(pre + ".")) and len(pre) > best:
                best, at = len(pre), i
    return at


def test_every_module_is_on_a_floor(graph):
    lost = sorted(m for m in graph if floor_of(m) is None)
    assert not lost, f"modules on no floor (add them to FLOORS in tests/test_layers.py): {lost}"


def test_imports_only_go_down(graph):
    known = set(graph)
    bad = []
    for mod, deps in graph.items():
        here = floor_of(mod)
        for dep in deps:
            if dep not in known:
                continue
            there = floor_of(dep)
            if there is not None and here is not None and there < here:
                bad.append(f"{mod} ({FLOORS[here][0]}) imports {dep} ({FLOORS[there][0]})")
    assert not bad, "imports that go up a floor:\n" + "\n".join(sorted(bad))


def test_no_import_circles(graph):
    """Tarjan's strongly connected components over module -> imported module edges."""
    known = set(graph)
    edges = {m: sorted(d for d in deps if d in known and d != m) for m, deps in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not cycles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_only_the_store_imports_duckdb_and_the_core_draws_nothing(graph):
    bad = []
    for mod, deps in graph.items():
        if any(d == "duckdb" or d.startswith("duckdb.") for d in deps) and not (
            mod == DB_OWNER or mod.startswith(DB_OWNER + ".")
        ):
            bad.append(f"{mod} imports duckdb")
        if mod.startswith("lifelong_core") and any(
            d.split(".")[0] in ("streamlit", "plotly") for d in deps
        ):
            bad.append(f"{mod} imports streamlit or plotly")
    assert not bad, "\n".join(sorted(bad))


def test_the_contract_itself_can_fail(tmp_path):
    """The checks above see function-level imports and relative imports."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from lifelong_core.cli import main\n    from . import sibling\n")
    got = imports_of(src, "lifelong_core.sweeping.m")
    assert "lifelong_core.cli" in got and "lifelong_core.sweeping.sibling" in got
    assert floor_of("lifelong_core.cli") < floor_of("lifelong_core.sweeping.engine")
