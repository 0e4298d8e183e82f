"""Build-time generation for the documentation site (mkdocs hooks).

Pages that describe something the code defines are generated from the code at build
time, so they cannot drift from it:

- ``<!-- generated: cli -->`` becomes the help of ``lbe`` and of every command, read from
  the parser the command line builds (``lifelong_core.cli.build_parser``);
- ``<!-- generated: methods -->`` becomes the table of registered search methods and
  their declared capabilities (``lifelong_core.methods.registry``);
- ``<!-- generated: glossary -->`` becomes the glossary every app page links to
  (``ui.glossary.TERMS``).

After the build, ``llms.txt`` (the site's index as plain Markdown, for language-model
readers) is written at the site's root.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"<!-- generated: (\w+) -->")


def _help(parser: argparse.ArgumentParser) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        parser.print_help()
    return out.getvalue().rstrip()


def cli_reference() -> str:
    """Every command's ``--help``, as the command line prints it (80 columns)."""
    import os

    from lifelong_core.cli import build_parser

    os.environ["COLUMNS"] = "88"
    parser = build_parser(prog="lbe")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parts = ["```text", _help(parser), "```", ""]
    for name, command in sub.choices.items():
        parts += [f"## `lbe {name}`", "", "```text", _help(command), "```", ""]
    return "\n".join(parts)


def methods_table() -> str:
    """The registered search methods and what each declares it offers."""
    from dataclasses import fields

    from lifelong_core.methods.registry import (
        DEFAULT_METHOD,
        Capabilities,
        available_methods,
        method_spec,
    )

    flags = [f.name for f in fields(Capabilities) if f.type in (bool, "bool")]
    head = ["method", "estimates", "family", *flags]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in available_methods(kind=None):
        spec = method_spec(name)
        caps = spec.capabilities
        label = f"`{name}` (default)" if name == DEFAULT_METHOD else f"`{name}`"
        what = "a new model" if spec.kind == "model" else "a new sample"
        cells = [label, what, caps.family, *("yes" if getattr(caps, f) else "" for f in flags)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def glossary() -> str:
    """The app's glossary, one entry per term."""
    from ui.glossary import TERMS

    return "\n".join(f"**{term}**\n:   {text}\n" for term, text in TERMS.items())


GENERATORS = {"cli": cli_reference, "methods": methods_table, "glossary": glossary}


def on_page_markdown(markdown: str, page, config, files) -> str:
    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: unknown generated block {name!r}")
        return GENERATORS[name]()

    return MARKER.sub(fill, markdown)


def _first_paragraph(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if block and not block.startswith(("#", "<!--", "!!!", "```", "|", "!")):
            return " ".join(block.split())
    return ""


def _walk(nav, depth: int = 0):
    for item in nav:
        if isinstance(item, str):
            yield depth, None, item
        elif isinstance(item, dict):
            for title, value in item.items():
                if isinstance(value, list):
                    yield depth, title, None
                    yield from _walk(value, depth + 1)
                else:
                    yield depth, title, value


def on_post_build(config) -> None:
    docs = Path(config["docs_dir"])
    base = config.get("site_url") or ""  # relative links when the site has no address
    lines = [f"# {config['site_name']}", "", f"> {config['site_description']}", ""]
    for depth, title, src in _walk(config["nav"]):
        if src is None:
            lines += ["", f"{'#' * min(depth + 2, 4)} {title}", ""]
            continue
        url = (
            base
            + src.removesuffix(".md").removesuffix("index")
            + ("/" if not src.endswith("index.md") else "")
        )
        url = url.replace("//", "/").replace(":/", "://")
        summary = _first_paragraph(docs / src)
        name = title or src
        lines.append(f"- [{name}]({url})" + (f": {summary}" if summary else ""))
    (Path(config["site_dir"]) / "llms.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
