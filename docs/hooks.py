"""Build-time generation for the documentation site (mkdocs hooks).

Pages that describe something the code defines are generated from the code at build
time, so they cannot drift from it:

- ``reference/cli/<command>.md``, one page per command (what it does, an example, a table
  of its options), and ``<!-- generated: cli -->``, the list of commands, are read from
  the parser the command line builds (``lifelong_core.cli.build_parser``);
- ``<!-- generated: environment -->`` becomes the table of ``LBE_*`` environment
  variables (``lifelong_core.env.VARIABLES``);
- ``<!-- generated: methods -->`` becomes the table of registered search methods and
  their declared capabilities (``lifelong_core.methods.registry``);
- ``<!-- generated: glossary -->`` becomes the glossary every app page links to
  (``ui.glossary.TERMS``).

After the build, each page's Markdown (generated blocks filled in, ``--8<--`` snippets
expanded, notebooks converted, relative links pointed at the copies) is written beside
its HTML as ``index.md``, and ``llms.txt`` (https://llmstxt.org: the site's index for
language-model readers, one linked line per page under the navigation's section titles)
at the site's root.
"""

from __future__ import annotations

import argparse
import posixpath
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"<!-- generated: (\w+) -->")


def _commands() -> dict[str, argparse.ArgumentParser]:
    """The command line's commands, in the order ``lbe --help`` lists them."""
    from lifelong_core.cli import build_parser

    parser = build_parser(prog="lbe")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _cell(text: str) -> str:
    """Plain text as one Markdown table cell (no HTML, no emphasis, no column break)."""
    text = " ".join(str(text).split())
    text = re.sub(r"<(?=[A-Za-z/!])", "&lt;", text)
    return text.replace("|", "\\|").replace("*", "\\*")


def _type(action: argparse.Action) -> str:
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        return "flag"
    if action.choices is not None:
        return "one of " + ", ".join(f"`{c}`" for c in action.choices)
    name = getattr(action.type, "__name__", "")
    kinds = {"int": "integer", "float": "number", "Path": "path"}
    kind = next((k for part, k in kinds.items() if part in name), "text")
    if isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*"):
        kind += ", repeatable" if isinstance(action, argparse._AppendAction) else ", one or more"
    return kind


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if isinstance(action, argparse._StoreTrueAction):
        return "off"
    if isinstance(action, argparse._StoreFalseAction):
        return "on"
    if action.default is None or action.default == argparse.SUPPRESS:
        return ""
    return f"`{action.default}`"


def options_table(command: argparse.ArgumentParser) -> str:
    """A command's options as a Markdown table: name, type, default, help (as ``--help``
    shows it, with its ``%`` expanded); hidden options (older names) are left out."""
    formatter = command._get_formatter()
    groups = {
        id(a): group for group in command._mutually_exclusive_groups for a in group._group_actions
    }
    rows = ["| Option | Type | Default | Description |", "|---|---|---|---|"]
    for action in command._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        metavar = ""
        if action.nargs != 0 and (action.choices is None or action.metavar is not None):
            metavar = formatter._format_args(action, action.dest.upper())
        if action.option_strings:
            name = ", ".join(
                f"`{o}{' ' + metavar if metavar else ''}`" for o in action.option_strings
            )
        else:
            name = f"`{metavar}` (positional)"
        help_text = formatter._expand_help(action) if action.help else ""
        group = groups.get(id(action))
        if group is not None:
            others = [o.option_strings[0] for o in group._group_actions if o is not action]
            note = "required: one of this and " if group.required else "not with "
            help_text += f" ({note}{', '.join(others)})"
        rows.append(f"| {name} | {_type(action)} | {_default(action)} | {_cell(help_text)} |")
    return "\n".join(rows)


def command_page(name: str, command: argparse.ArgumentParser) -> str:
    """One command's reference page: what it does, one example, its options."""
    example = getattr(command, "example", None)
    parts = [f"# lbe {name}", "", _cell(command.description or ""), ""]
    if example:
        parts += ["## Example", "", "```bash", example, "```", ""]
    parts += [
        "## Options",
        "",
        options_table(command),
        "",
        (
            f"The same text, in 80 columns: `lbe {name} --help`. Conventions shared by every "
            "command: [Command line](../cli.md)."
        ),
        "",
    ]
    return "\n".join(parts)


def cli_reference() -> str:
    """The command line's commands, one row each, linking to their own pages."""
    rows = ["| Command | What it does |", "|---|---|"]
    for name, command in _commands().items():
        rows.append(f"| [`lbe {name}`](cli/{name}.md) | {_cell(command.description or '')} |")
    return "\n".join(rows)


def environment_table() -> str:
    """Every ``LBE_*`` environment variable (``lifelong_core.env``) as a table."""
    from lifelong_core.env import VARIABLES

    rows = ["| Variable | Default | What it sets | Read by |", "|---|---|---|---|"]
    for v in VARIABLES:
        rows.append(f"| `{v.name}` | {_cell(v.default)} | {v.meaning} | {v.read_by} |")
    return "\n".join(rows)


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


GENERATORS = {
    "cli": cli_reference,
    "environment": environment_table,
    "methods": methods_table,
    "glossary": glossary,
}

CLI_PAGES = "reference/cli"


def on_files(files, config):
    """One generated page per command, ``reference/cli/<command>.md``."""
    from mkdocs.structure.files import File

    for name, command in _commands().items():
        files.append(
            File.generated(config, f"{CLI_PAGES}/{name}.md", content=command_page(name, command))
        )
    return files


SNIPPET = re.compile(r'^-{1,}8<-{1,} *"([^"]+)" *$', re.M)

# The Markdown each page was built from, as the reader sees it (generated blocks filled
# in, snippets expanded, notebooks converted), by source path: the copies beside the pages
# and llms.txt are written from it after the build.
_MARKDOWN: dict[str, str] = {}


def expand_snippets(markdown: str) -> str:
    """``--8<-- "FILE"`` lines replaced by the file (paths from the repository's root, as
    ``pymdownx.snippets`` is configured here)."""
    return SNIPPET.sub(lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8").rstrip(), markdown)


def notebook_markdown(path: Path) -> str:
    """A notebook as Markdown: its text cells, its code cells as fenced blocks, their
    outputs where it has any."""
    import nbformat
    from nbconvert import MarkdownExporter

    body, _ = MarkdownExporter().from_notebook_node(nbformat.read(path, as_version=4))
    return body


def on_page_markdown(markdown: str, page, config, files) -> str:
    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: unknown generated block {name!r}")
        return GENERATORS[name]()

    markdown = MARKER.sub(fill, markdown)
    src = page.file.src_uri
    if src.endswith(".ipynb"):
        _MARKDOWN[src] = notebook_markdown(Path(page.file.abs_src_path))
    else:
        _MARKDOWN[src] = expand_snippets(markdown)
    return markdown


def markdown_copy(url: str) -> str:
    """Where a page's Markdown copy goes, beside its HTML: ``guides/store/`` ->
    ``guides/store/index.md``, the home page ``""`` -> ``index.md``."""
    return (url if url.endswith("/") or not url else url.rsplit("/", 1)[0] + "/") + "index.md"


LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def relink(markdown: str, src: str, at: str, url_of) -> str:
    """``markdown`` of the page ``src`` with its relative links made to work from ``at``
    (a path in the built site): a link to a page goes to that page's Markdown copy, any
    other file to where the build put it. ``url_of(path)`` is the built URL of the
    documentation file ``path``, or None."""

    def fix(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(src), path))
        url = url_of(resolved)
        if url is None:
            return match.group(0)
        if resolved.endswith((".md", ".ipynb")):
            url = markdown_copy(url)
        new = posixpath.relpath(url, posixpath.dirname(at) or ".")
        return f"{match.group(1)}{new}{'#' + anchor if anchor else ''}{match.group(3)}"

    return LINK.sub(fix, markdown)


def _first_paragraph(text: str) -> str:
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if block and not block.startswith(("#", "<!--", "!!!", "```", "|", "!", "<", "---")):
            return " ".join(block.split())
    return ""


def _markdown_of(page) -> str:
    src = page.file.src_uri
    if src not in _MARKDOWN:  # a page the build did not render (not expected)
        raise ValueError(f"{src}: no Markdown recorded for llms.txt")
    return _MARKDOWN[src]


def llms_txt(nav, site_name: str, description: str, url_of) -> str:
    """The site's index for language-model readers (https://llmstxt.org): the site's name,
    its description, then per navigation section (titled as the navigation titles it) one
    line per page: its title linked to its Markdown copy, and its first paragraph."""
    lines = [f"# {site_name}", "", f"> {description}", ""]

    def walk(items, depth: int) -> None:
        for item in items:
            if item.is_section:
                lines.extend(["", f"{'#' * min(depth + 2, 4)} {item.title}", ""])
                walk(item.children, depth + 1)
            elif item.is_page:
                text = relink(_markdown_of(item), item.file.src_uri, "llms.txt", url_of)
                summary = _first_paragraph(text)
                link = f"- [{item.title}]({markdown_copy(item.url)})"
                lines.append(link + (f": {summary}" if summary else ""))

    walk(nav.items, 0)
    return "\n".join(lines) + "\n"


_BUILT: dict = {}


def on_nav(nav, config, files):
    _BUILT.update(nav=nav, files=files)
    return nav


def on_post_build(config) -> None:
    site = Path(config["site_dir"])
    nav, files = _BUILT["nav"], _BUILT["files"]

    def url_of(path: str) -> str | None:
        file = files.get_file_from_path(path)
        return None if file is None else file.url

    for page in nav.pages:
        at = markdown_copy(page.url)
        target = site / at
        target.parent.mkdir(parents=True, exist_ok=True)
        text = relink(_markdown_of(page), page.file.src_uri, at, url_of)
        target.write_text(text, encoding="utf-8")
    text = llms_txt(nav, config["site_name"], config["site_description"], url_of)
    (site / "llms.txt").write_text(text, encoding="utf-8")
