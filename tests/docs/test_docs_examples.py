"""The documentation's examples run as written, and the paths it names exist.

Every ``bash`` and ``python`` block of README.md and of the Getting started and Tutorials
pages runs, in order, in a fresh folder holding a copy of the shipped demo store at
``data/demo.duckdb`` (so a page can write files and import into stores without touching
the real one). A block that needs a real language model, an installation or a long run is
marked in the Markdown, on the line before it, with
``<!-- docs-test: skip (the reason) -->`` and is skipped with that reason.

Every repository path the documentation names in backticks (``data/vtab1k/``,
``lifelong_core/store/state.py``, ``tests/engine/test_*.py``) must exist, and every dotted name
under ``lifelong_core`` must import.
"""

from __future__ import annotations

import glob
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN_PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs" / "getting-started").glob("*.md")),
    *sorted((ROOT / "docs" / "tutorials").glob("*.md")),
]
ALL_PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(
    r"(?P<mark><!-- docs-test: skip \((?P<why>[^)]*)\) -->\n)?```(?P<lang>[a-z]*)[^\n]*\n(?P<body>.*?)\n```",
    re.S,
)
BLOCK_SECONDS = 300


def blocks(page: Path) -> list[tuple[str, str, str | None]]:
    """``(language, code, skip reason or None)`` of every fenced block, in page order."""
    return [
        (m["lang"], m["body"], m["why"]) for m in FENCE.finditer(page.read_text(encoding="utf-8"))
    ]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    # `python -m benchmarks...` and the package resolve to this checkout from any folder.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.fixture
def workdir(tmp_path: Path, demo_store_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    shutil.copy2(demo_store_path, tmp_path / "data" / "demo.duckdb")
    return tmp_path


def _run(lang: str, code: str, cwd: Path, where: str) -> None:
    if lang in ("bash", "sh"):
        cmd = ["bash", "-euo", "pipefail", "-c", code]
    else:
        cmd = [sys.executable, "-c", code]
    res = subprocess.run(
        cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=BLOCK_SECONDS
    )
    assert res.returncode == 0, (
        f"{where} failed (exit {res.returncode}):\n{code}\n--- stdout\n{res.stdout[-3000:]}"
        f"\n--- stderr\n{res.stderr[-3000:]}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in RUN_PAGES])
def test_every_example_of_the_page_runs(page: Path, workdir: Path) -> None:
    ran = 0
    skipped = []
    for i, (lang, code, why) in enumerate(blocks(page)):
        if lang not in ("bash", "sh", "python"):
            continue
        if why is not None:
            skipped.append(why)
            continue
        _run(lang, code, workdir, f"{page.relative_to(ROOT)} block {i + 1} ({lang})")
        ran += 1
    if ran == 0:
        pytest.skip("no runnable example: " + "; ".join(skipped) if skipped else "no example")


def test_skip_marks_give_a_reason() -> None:
    for page in ALL_PAGES:
        for lang, _code, why in blocks(page):
            if why is not None:
                assert why.strip(), (
                    f"{page.relative_to(ROOT)}: a skipped {lang} block has no reason"
                )


# Backticked repository paths: a top-level folder of the repository, then a path.
PATH = re.compile(
    r"`((?:data|docs|lifelong_core|benchmarks|tests|pages|ui|examples|\.ci)/[^`\s]*)`"
)
DOTTED = re.compile(r"`(lifelong_core(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _named_paths(text: str) -> set[str]:
    return {m.rstrip(".,:;)") for m in PATH.findall(text)}


def test_every_repository_path_the_docs_name_exists() -> None:
    missing = []
    for page in ALL_PAGES:
        for rel in sorted(_named_paths(page.read_text(encoding="utf-8"))):
            if "<" in rel or "{" in rel:
                continue  # a placeholder such as OUT/<model dir>
            if any(ch in rel for ch in "*?["):
                found = glob.glob(str(ROOT / rel))
            else:
                found = (ROOT / rel).exists()
            if not found and not rel.startswith("data/demo.duckdb"):
                missing.append(f"{page.relative_to(ROOT)}: {rel}")
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_dotted_name_the_docs_name_imports() -> None:
    missing = []
    for page in ALL_PAGES:
        for name in sorted(set(DOTTED.findall(page.read_text(encoding="utf-8")))):
            if not _resolves(name):
                missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert not missing, "names in the docs that do not resolve:\n" + "\n".join(missing)
