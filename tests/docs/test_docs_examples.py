"""The documentation's examples run as printed, print what the pages show, and the paths
and names they mention exist.

Every ``bash`` and ``python`` block of README.md and of the Getting started and Tutorials
pages runs, in order, as a reader types it: in a new shell without the project's
environment on the path (a page's first block activates it), in a fresh folder holding a
copy of the shipped demo store at ``data/demo.duckdb`` (so a page can write files and import
into stores without touching the real one). What each block prints must match the
``Output`` block written under it, numbers within the tolerance stated in ``docs/outputs.py``
(``make docs-outputs`` rewrites them). A block that needs a real language model, an
installation or a long run is marked in the Markdown, on the line before it, with
``<!-- docs-test: skip (the reason) -->`` and is skipped with that reason.

Every repository path the documentation names in backticks (``data/vtab1k/``,
``lifelong_core/store/state.py``, ``tests/engine/test_*.py``) must exist, and every dotted name
under ``lifelong_core`` must import.
"""

from __future__ import annotations

import glob
import importlib
import re
import subprocess
from pathlib import Path

import pytest

from docs.outputs import (
    RUN_PAGES,
    blocks,
    check_page,
    clean_env,
    differences,
    prepare,
    run_page,
    with_outputs,
)

ROOT = Path(__file__).resolve().parents[2]
ALL_PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.fixture
def workdir(tmp_path: Path, demo_store_path: Path) -> Path:
    return prepare(tmp_path, demo_store_path)


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in RUN_PAGES])
def test_every_example_of_the_page_runs_and_prints_what_it_shows(page: Path, workdir: Path) -> None:
    if not any(b.runs for b in blocks(page.read_text(encoding="utf-8"))):
        pytest.skip("no runnable example")
    problems = check_page(page, workdir)
    assert not problems, "\n".join(problems)


def test_a_new_shell_has_not_the_environment_on_its_path(workdir: Path) -> None:
    res = subprocess.run(
        ["bash", "-c", "command -v lbe || echo none"],
        cwd=workdir,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert res.stdout.strip() == "none"


def test_a_page_that_does_not_activate_the_environment_fails(workdir: Path) -> None:
    page = workdir / "page.md"
    page.write_text("```bash\nlbe --version\n```\n", encoding="utf-8")
    (run,) = run_page(page, workdir)
    assert run.returncode != 0
    page.write_text("```bash\n. .venv/bin/activate\n```\n\n```bash\nlbe --version\n```\n")
    runs = list(run_page(page, workdir))
    assert [r.returncode for r in runs] == [0, 0]
    assert runs[1].stdout.startswith("lbe ")


def test_outputs_are_written_under_their_block_and_replaced() -> None:
    page = "Text.\n\n```bash\necho 1\n```\n\nMore.\n"
    once = with_outputs(page, {page.index("```bash"): "1\n"})
    assert once == 'Text.\n\n```bash\necho 1\n```\n\n```text title="Output"\n1\n```\n\nMore.\n'
    twice = with_outputs(once, {once.index("```bash"): "2\n"})
    assert twice == once.replace("\n1\n```\n\nMore", "\n2\n```\n\nMore")
    assert with_outputs(once, {once.index("```bash"): ""}) == page


def test_outputs_agree_within_the_tolerance_with_times_masked() -> None:
    shown = "acc 0.512 (0.480 - 0.545) from 100 items in 3.2 s"
    assert differences(shown, "acc 0.515 (0.481 - 0.546) from 100 items in 41 s") == []
    assert differences(shown, "acc 0.600 (0.480 - 0.545) from 100 items in 3.2 s") != []
    assert differences(shown, "acc 0.512 (0.480 - 0.545) from 100 rows in 3.2 s") != []
    assert differences(shown, shown + "\nanother line") != []


def test_skip_marks_give_a_reason() -> None:
    for page in ALL_PAGES:
        for block in blocks(page.read_text(encoding="utf-8")):
            if block.skip is not None:
                assert block.skip.strip(), (
                    f"{page.relative_to(ROOT)}: a skipped {block.lang} block has no reason"
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
