"""A griffe extension for the API reference: Sphinx roles in docstrings become links,
doctests code.

The package's docstrings cross-reference with Sphinx roles (``:func:`flag_for```,
``:class:`~lifelong_core.errors.InputError```), which ``help()`` and editors show as
they are. For the site, every role is rewritten, when the package is loaded, into an
optional mkdocs-autorefs reference: a link where the target is documented on the site,
plain code where it is not. A name is resolved in the scope of the docstring's object
(its class, module and imports), as Sphinx does; ``~`` shows only the last part.
"""

from __future__ import annotations

import html
import re

import griffe

DIRECTIVE = re.compile(r"\s*# doctest: [^\n]*")
SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}$", re.M)
ROLE = re.compile(r":(?:py:)?(func|meth|mod|class|data|attr|obj|exc|const):`(~?)([^`<>]+?)`")


def _resolve(obj: griffe.Object, name: str) -> str:
    """The full path of ``name`` as written in ``obj``'s docstring (itself if unresolved)."""
    name = name.strip().removesuffix("()")
    if name.startswith("."):  # relative to the docstring's package, as Sphinx reads it
        return f"{obj.module.path.rsplit('.', 1)[0]}{name}"
    head, _, rest = name.partition(".")
    scope = obj if isinstance(obj, griffe.Class | griffe.Module) else obj.parent
    for where in (scope, obj.module) if scope is not None else (obj.module,):
        try:
            full = where.resolve(head)
        except (griffe.NameResolutionError, AttributeError, KeyError):
            continue
        return f"{full}.{rest}" if rest else full
    return name


def rewrite(text: str, obj: griffe.Object) -> str:
    """``text`` with every Sphinx role replaced by an optional autorefs reference."""

    def link(match: re.Match[str]) -> str:
        short, name = match.group(2), match.group(3).strip()
        target = _resolve(obj, name)
        shown = name.removesuffix("()").rsplit(".", 1)[-1] if short else name
        shown += "()" if match.group(1) in ("func", "meth") and not shown.endswith("()") else ""
        return (
            f'<autoref identifier="{html.escape(target)}" optional>'
            f"<code>{html.escape(shown)}</code></autoref>"
        )

    return ROLE.sub(link, text)


def fence_doctests(text: str) -> str:
    """Doctest lines outside an ``Examples`` section (a module's description, say) as a
    fenced ``pycon`` block, which Markdown would otherwise read as a quotation; doctest
    directives are dropped from the shown code everywhere."""
    text = DIRECTIVE.sub("", text)
    parts = SECTION.split(text)
    # Free text, then (title, body) pairs: the sections are griffe's to read.
    out = _fence(parts[0])
    for title, body in zip(parts[1::2], parts[2::2]):
        out += f"{title}\n{'-' * len(title)}{body}"
    return out


def _fence(text: str) -> str:
    lines, out, block = text.split("\n"), [], []
    for line in [*lines, ""]:
        if line.lstrip().startswith((">>>", "...")) or (block and line.strip()):
            block.append(line)
            continue
        if block:
            out += ["```pycon", *block, "```"]
            block = []
        out.append(line)
    return "\n".join(out[:-1])


class SphinxRoles(griffe.Extension):
    """Rewrite the Sphinx roles of every docstring of a loaded package."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        seen: set[int] = set()

        def walk(obj: griffe.Object) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = fence_doctests(rewrite(obj.docstring.value, obj))
            for member in obj.members.values():
                if not member.is_alias:
                    walk(member)

        walk(pkg)
