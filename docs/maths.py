"""Formulas rendered as MathML when the site is built: no script to load, no network.

``pymdownx.arithmatex`` (generic mode) leaves ``$...$`` and ``$$...$$`` in the HTML as
``\\(...\\)`` and ``\\[...\\]``; this hook converts each to MathML with ``latex2mathml``,
which every current browser draws itself. A command the converter does not know would be
printed as its raw name, so the build (strict) fails on it instead.
"""

from __future__ import annotations

import html
import re
from typing import Any

from latex2mathml.converter import convert
from mkdocs.exceptions import PluginError

BLOCK = re.compile(r'<div class="arithmatex">\s*\\\[(?P<tex>.*?)\\\]\s*</div>', re.S)
INLINE = re.compile(r'<span class="arithmatex">\\\((?P<tex>.*?)\\\)</span>', re.S)
# latex2mathml writes an unknown command as an identifier or operator holding its name.
UNKNOWN = re.compile(r"<m[io][^>]*>\\[A-Za-z]+")


def to_mathml(tex: str, display: str, where: str) -> str:
    """One formula as MathML.

    Parameters
    ----------
    tex : str
        The formula, HTML-escaped as arithmatex leaves it.
    display : str
        ``"block"`` or ``"inline"``.
    where : str
        The page, named in the error.

    Returns
    -------
    str
        The ``<math>`` element.

    Raises
    ------
    PluginError
        When the formula holds a command the converter does not render.
    """
    tex = html.unescape(tex).strip()
    out = convert(tex, display=display)
    if UNKNOWN.search(out):
        raise PluginError(f"{where}: the formula {tex!r} uses a command MathML cannot show")
    return out


def on_page_content(text: str, page: Any, **kwargs: Any) -> str:
    """Replace the page's arithmatex formulas by MathML.

    Parameters
    ----------
    text : str
        The page's HTML.
    page : mkdocs.structure.pages.Page
        The page.
    **kwargs
        What mkdocs passes besides.

    Returns
    -------
    str
        The HTML with MathML formulas.
    """
    where = page.file.src_uri
    text = BLOCK.sub(lambda m: to_mathml(m["tex"], "block", where), text)
    return INLINE.sub(lambda m: to_mathml(m["tex"], "inline", where), text)
