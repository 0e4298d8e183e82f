"""Every public function and class has a numpydoc docstring.

Public means: a name without a leading underscore that its module lists in ``__all__``,
or that code of another package imports (``lifelong_core``'s subpackages, its top-level
modules, ``ui``, ``pages`` and ``app.py`` are each a package here). Public methods and
properties of a public class count too, wherever in the project they are defined (the
store's reads are methods of ``Store`` defined in ``store/reading.py``).

Each must have a docstring, and where it takes parameters a numpydoc ``Parameters``
section naming every one of them (``*args`` and ``**kwargs`` included). A class is
checked against its constructor; a dataclass or named tuple, whose constructor's
parameters are its fields, may name them under ``Attributes`` instead.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import pkgutil
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lifelong_core", "ui")
# Packages whose public names are not all documented yet.
_SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", re.M)


def package_of(module: str) -> str:
    """``lifelong_core.store`` for ``lifelong_core.store.reading``; ``ui`` for ``ui.data``;
    a top-level module of ``lifelong_core`` (``lifelong_core.bits``) is its own package."""
    parts = module.split(".")
    if parts[0] == "lifelong_core" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def module_names() -> Iterator[str]:
    """Every importable module of PACKAGES (``__main__`` modules run on import: left out)."""
    for top in PACKAGES:
        pkg = importlib.import_module(top)
        yield top
        for info in pkgutil.walk_packages(pkg.__path__, f"{top}."):
            if info.name.rsplit(".", 1)[-1] != "__main__":
                yield info.name


def _product_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("lifelong_core", "ui", "pages"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return [f for f in files if f.exists()]


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _file_package(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return package_of(".".join(parts))


@cache
def imported_from_other_packages() -> frozenset[tuple[str, str]]:
    """(module, name) pairs that product code of another package imports or reads as
    ``module.name``."""
    used: set[tuple[str, str]] = set()
    for path in _product_files():
        here = _file_package(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}  # local name -> module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases[a.name] = a.name
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if not node.module.startswith(PACKAGES):
                    continue
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    if _is_module(sub):
                        aliases[a.asname or a.name] = sub
                    elif package_of(node.module) != here:
                        used.add((node.module, a.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                chain = []
                cur: ast.expr = node
                while isinstance(cur, ast.Attribute):
                    chain.append(cur.attr)
                    cur = cur.value
                if isinstance(cur, ast.Name) and cur.id in aliases:
                    # a.b.c.name -> the deepest module of the chain, then the name after it
                    mod = aliases[cur.id]
                    rest = list(reversed(chain))
                    while rest and _is_module(f"{mod}.{rest[0]}"):
                        mod = f"{mod}.{rest.pop(0)}"
                    if rest and mod.startswith(PACKAGES) and package_of(mod) != here:
                        used.add((mod, rest[0]))
    return frozenset(used)


def _defined_here(obj: object) -> bool:
    mod = getattr(obj, "__module__", None) or ""
    return mod.split(".")[0] in PACKAGES


@cache
def public_objects() -> tuple[tuple[str, str, object], ...]:
    """(package, qualified name, object) of every public function and class, each once."""
    used = imported_from_other_packages()
    seen: dict[int, tuple[str, str, object]] = {}
    for name in module_names():
        module = importlib.import_module(name)
        wanted = set(getattr(module, "__all__", ()))
        wanted |= {n for m, n in used if m == name}
        for attr in sorted(wanted):
            if attr.startswith("_") or not hasattr(module, attr):
                continue
            obj = inspect.unwrap(getattr(module, attr))
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or not _defined_here(obj):
                continue
            qual = f"{obj.__module__}.{obj.__qualname__}"
            seen.setdefault(id(obj), (package_of(obj.__module__), qual, obj))
            if inspect.isclass(obj):
                for member_qual, member in _public_members(obj):
                    seen.setdefault(
                        id(member),
                        (package_of(member_qual), member_qual, member),
                    )
    return tuple(sorted(seen.values(), key=lambda t: t[1]))


def _public_members(cls: type) -> Iterator[tuple[str, object]]:
    """Public methods and properties of ``cls`` defined in the project (inherited ones
    included), as (defining module + qualified name, function or property)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not _defined_here(klass):
            continue
        for attr, raw in vars(klass).items():
            if attr.startswith("_") or attr in names:
                continue
            names.add(attr)
            if isinstance(raw, (staticmethod, classmethod)):
                raw = raw.__func__
            if (isinstance(raw, property) and raw.fget is not None) or inspect.isfunction(raw):
                yield f"{klass.__module__}.{klass.__qualname__}.{attr}", raw


def sections(doc: str) -> dict[str, str]:
    """numpydoc sections of a docstring: title -> body."""
    doc = inspect.cleandoc(doc)
    found = list(_SECTION.finditer(doc))
    out = {}
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(doc)
        out[m.group(1).strip()] = doc[m.end() : end]
    return out


def documented_names(body: str) -> set[str]:
    """Names a Parameters (or Attributes) section describes: ``a, b : int`` gives a and b."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines:
        return set()
    indent = min(len(ln) - len(ln.lstrip()) for ln in lines)
    names = set()
    for ln in lines:
        if len(ln) - len(ln.lstrip()) != indent:
            continue
        head = ln.split(" : ", 1)[0] if " : " in ln else ln.rstrip(":")
        for part in head.split(","):
            names.add(part.strip().lstrip("*"))
    return names


def undescribed_names(body: str) -> set[str]:
    """Names of a Parameters (or Attributes) section with nothing written under them:
    ``store : Store`` followed directly by the next entry (or the end) says nothing."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines:
        return set()
    indent = min(len(ln) - len(ln.lstrip()) for ln in lines)
    out: set[str] = set()
    for i, ln in enumerate(lines):
        if len(ln) - len(ln.lstrip()) != indent:
            continue
        following = lines[i + 1] if i + 1 < len(lines) else None
        if following is None or len(following) - len(following.lstrip()) <= indent:
            head = ln.split(" : ", 1)[0] if " : " in ln else ln.rstrip(":")
            out |= {part.strip().lstrip("*") for part in head.split(",")}
    return out


def _signature_params(obj: object) -> list[str] | None:
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        out.append(p.name)
    return out


def _constructor_params(cls: type) -> list[str]:
    """The parameters of the class's own constructor; an inherited one is documented
    where it is written (and one from Python or a library, such as an exception's
    ``*args``, not here)."""
    if "__init__" not in vars(cls) and "__new__" not in vars(cls):
        return []
    return _signature_params(cls) or []


def _is_record(cls: type) -> bool:
    return dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))


def problems(obj: object, qual: str) -> list[str]:
    """What is missing from the docstring of ``obj`` (empty when it is complete)."""
    target = obj.fget if isinstance(obj, property) else obj
    doc = inspect.getdoc(target) if not inspect.isclass(obj) else obj.__doc__
    if inspect.isclass(obj) and _is_record(obj) and doc and doc.startswith(f"{obj.__name__}("):
        doc = None  # the text dataclasses write for a class without a docstring
    if not doc or not doc.strip():
        return [f"{qual}: no docstring"]
    if isinstance(obj, property):
        return []
    if inspect.isclass(obj):
        params = _constructor_params(obj)
        titles = ("Parameters", "Attributes") if _is_record(obj) else ("Parameters",)
    else:
        params = _signature_params(obj) or []
        titles = ("Parameters",)
    if not params:
        return []
    secs = sections(doc)
    if not any(t in secs for t in titles):
        return [f"{qual}: no {' or '.join(titles)} section for {', '.join(params)}"]
    named = set().union(*(documented_names(secs[t]) for t in titles if t in secs))
    missing = [p for p in params if p not in named]
    if missing:
        return [f"{qual}: {', '.join(titles)} does not describe {', '.join(missing)}"]
    empty = set().union(*(undescribed_names(secs[t]) for t in titles if t in secs))
    silent = [p for p in params if p in empty]
    if silent:
        return [f"{qual}: {', '.join(titles)} names {', '.join(silent)} with no description"]
    return []


def gaps(package: str) -> list[str]:
    return [p for pkg, qual, obj in public_objects() if pkg == package for p in problems(obj, qual)]


def packages() -> list[str]:
    return sorted({package_of(m) for m in module_names()})


@pytest.mark.parametrize("package", packages())
def test_public_names_have_numpydoc_docstrings(package):
    found = gaps(package)
    assert not found, f"{len(found)} docstring gaps in {package}:\n" + "\n".join(found)


def test_the_walk_finds_the_public_api():
    quals = {q for _, q, _ in public_objects()}
    # From __all__, through a package's re-export, and methods inherited from a mixin.
    assert "lifelong_core.api.open_store" in quals
    assert "lifelong_core.store.store.Store" in quals
    assert "lifelong_core.store.reading.StoreReader.matrix" in quals
    assert "lifelong_core.sortsearch.search.dp_search" in quals


def test_the_section_reader():
    doc = """Summary.

    Parameters
    ----------
    a, b : int
        Two numbers.
    *args
        More.
    c
        Untyped.

    Returns
    -------
    int
    """
    secs = sections(doc)
    assert set(secs) == {"Parameters", "Returns"}
    assert documented_names(secs["Parameters"]) == {"a", "b", "args", "c"}

    def f(a, b, *args, c=1, d=2):
        pass

    f.__doc__ = doc
    assert problems(f, "f") == ["f: Parameters does not describe d"]
    assert undescribed_names(secs["Parameters"]) == set()
    silent = """Summary.

    Parameters
    ----------
    store : Store
    seed : int
        The seed.
    n
    """
    assert undescribed_names(sections(silent)["Parameters"]) == {"store", "n"}

    def g(store, seed, n):
        pass

    g.__doc__ = silent
    assert problems(g, "g") == ["g: Parameters names store, n with no description"]
