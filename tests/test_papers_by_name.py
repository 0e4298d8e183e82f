"""Papers are cited by authors, year and title, never by reading-copy file numbers or by
paths outside the repository (README, pages, CLI help, docstrings: every tracked text file)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(r"(?i)\bseeds? 00\d|seeds/|\.\./shared|\d{3}_[0-9a-f]{16}\.txt")


def test_no_seed_numbers_or_outside_paths():
    files = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.toml", "Makefile"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    hits = []
    for f in files:
        if f == "tests/test_papers_by_name.py":
            continue
        for n, line in enumerate((ROOT / f).read_text(encoding="utf-8").splitlines(), start=1):
            if FORBIDDEN.search(line):
                hits.append(f"{f}:{n}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)


def test_the_references_page_names_the_papers():
    refs = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    for needle in (
        "Prabhu",
        "arXiv:2402.19472",
        "LA-UR-24-25289",
        "Bornschein",
        "Anzaku",
        "Zhang, Florian E. Dorner",
    ):
        assert needle in refs, needle


def test_readme_says_how_to_cite_the_papers():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    cite = text[text.index("## How to cite") :]
    for needle in ("Prabhu", "LA-UR-24-25289", "Bornschein", "Anzaku"):
        assert needle in cite, needle
