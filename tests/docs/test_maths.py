"""The concepts pages' formulas become MathML when the site is built (``docs/maths.py``)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import markdown
import pytest
from mkdocs.exceptions import PluginError

from docs.maths import on_page_content

ROOT = Path(__file__).resolve().parents[2]
CONCEPTS = sorted((ROOT / "docs" / "concepts").glob("*.md"))
PAGE = SimpleNamespace(file=SimpleNamespace(src_uri="page.md"))


def _html(text: str) -> str:
    # The same extensions as mkdocs.yml's that decide where a formula is seen.
    md = markdown.Markdown(
        extensions=["def_list", "md_in_html", "pymdownx.superfences", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    return md.convert(text)


def test_a_formula_becomes_mathml() -> None:
    out = on_page_content(_html("Inline $a_j$ and\n\n$$\n\\frac{1}{n} \\sum_j a_j\n$$\n"), PAGE)
    assert out.count("<math") == 2
    assert "<mfrac>" in out and "arithmatex" not in out


def test_a_command_mathml_cannot_show_fails_the_build() -> None:
    with pytest.raises(PluginError, match=r"page\.md"):
        on_page_content(_html("$$\n\\notacommand x\n$$\n"), PAGE)


@pytest.mark.parametrize("page", CONCEPTS, ids=[p.stem for p in CONCEPTS])
def test_every_formula_of_the_concepts_renders(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    out = on_page_content(_html(text), PAGE)
    assert "arithmatex" not in out, "a formula left as TeX"
    assert not re.search(r"\$\$|\\\[|\\\(", out), "a formula markdown did not see"
    assert out.count("<math") >= text.count("$$") // 2
