"""Every page on a store whose names are Markdown and HTML: shown as typed, never rendered.

Dataset, domain, category, model and family names are the user's text. A dataset named
``<b>ds</b>![z](http://127.0.0.1:9/z.png)`` made the Backtest page fetch that URL (its
``st.info`` and download labels rendered the name as Markdown) and Plotly titles rendered
``<b>``. Here every element Streamlit renders as Markdown (bodies, labels, help, radio
options, expander and tab labels) and every Plotly figure of every page is read back from
the page's messages, and no name may arrive there unescaped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import DATASET  # noqa: F401 - the names the fixture uses

ROOT = Path(__file__).resolve().parents[2]

# Unescaped Markdown or HTML from the names: an image or link opening, a tag, bold.
MARKDOWN_LEAK = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)<(?:b|i|a)[ >]|(?<!\\)\*\*bold|(?<!\\)\[l\]")
# In a Plotly figure only HTML matters (it renders <b>, <i>, <a href>): none of the names'
# tags may be there as tags.
HTML_LEAK = re.compile(r"<b>\d|<i>x|<a href|<b>ds")


PAGES = ["app.py"] + [f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("*.py"))]
VARIANTS = (
    [(p, {}) for p in PAGES]
    + [
        ("pages/10_Backtest.py", {"run": "1", "repeats": "1", "holdout": "2", "budgets": "16,32"}),
        ("pages/6_Rankings.py", {"source": "store"}),
        ("pages/6_Rankings.py", {"source": "store", "tab": "Pairwise differences"}),
        ("pages/6_Rankings.py", {"source": "store", "tab": "Rank intervals"}),
        ("pages/7_Task_weighting.py", {"wsource": "store"}),
        ("pages/7_Task_weighting.py", {"wsource": "store", "wtab": "Interactive (plotly)"}),
        ("pages/6_Rankings.py", {"source": "estimated"}),
    ]
    + [
        ("pages/1_Budget_explorer.py", {"tab": tab})
        for tab in (
            "vs CopyNearest&Expand",
            "Aleatoric vs epistemic",
            "Design choices",
            "Model correlation",
            "New samples (insert_D)",
        )
    ]
    + [
        ("pages/3_Evaluate_something_new.py", {"tab": tab})
        for tab in (
            "New samples (insert_D)",
            "Until sure (adaptive)",
            "A new model with lm-eval or Inspect",
        )
    ]
)
IDS = [
    f"{Path(p).stem}-{'-'.join(f'{k}={v[:10]}' for k, v in q.items()) or 'default'}"
    for p, q in VARIANTS
]


def _markdown_fields(proto, path=""):
    """(where, text) of every field of ``proto`` that Streamlit renders as Markdown."""
    for field, value in proto.ListFields():
        name = field.name
        if isinstance(value, (bool, int, float, bytes)):
            continue
        items = [value] if isinstance(value, str) or hasattr(value, "ListFields") else value
        if field.type == field.TYPE_MESSAGE:
            for item in items:
                yield from _markdown_fields(item, f"{path}.{name}")
        elif name in ("body", "label", "help", "captions") or (
            name == "options" and type(proto).__name__ == "Radio"
        ):
            for item in items:
                if isinstance(item, str):
                    yield f"{type(proto).__name__}{path}.{name}", item


def _strings(value, where=""):
    """(where, text) of every string in a figure's JSON."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def leaks(at: AppTest) -> list[str]:
    found = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        kind = type(proto).__name__
        if kind == "PlotlyChart":
            # The figure's JSON escapes "<" as \u003c: read it back to see what Plotly sees.
            for where, text in _strings(json.loads(proto.spec or "{}")):
                m = HTML_LEAK.search(text)
                if m:
                    found.append(f"plotly {where}: {text[max(0, m.start() - 40) : m.end() + 40]!r}")
            continue
        if kind in ("Arrow", "DataFrame"):
            continue  # tables show text as text
        for where, text in _markdown_fields(proto):
            m = MARKDOWN_LEAK.search(text)
            if m:
                found.append(f"{where}: {text[max(0, m.start() - 40) : m.end() + 40]!r}")
    return found


@pytest.mark.parametrize("page,query", VARIANTS, ids=IDS)
def test_no_name_reaches_the_browser_as_markdown_or_html(page, query, hostile_store, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(hostile_store))
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not leaks(at), leaks(at)[:5]


def _all_strings(proto):
    """Every string of a page element's message, at any depth."""
    for _field, value in proto.ListFields():
        if isinstance(value, (bool, int, float, bytes)):
            continue
        items = [value] if isinstance(value, str) or hasattr(value, "ListFields") else value
        for item in items:
            if isinstance(item, str):
                yield item
            elif hasattr(item, "ListFields"):
                yield from _all_strings(item)


def shown_strings(at: AppTest) -> list[str]:
    """Everything a page sends to the browser as text: its elements' strings, its tables'
    cells and its figures' text."""
    out = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        if type(proto).__name__ == "PlotlyChart":
            out += [t for _, t in _strings(json.loads(proto.spec or "{}"))]
        else:
            out += list(_all_strings(proto))
    for df in at.dataframe:
        out += [str(v) for v in df.value.astype(str).to_numpy().ravel()]
        out += [str(c) for c in df.value.columns]
    return out


@pytest.fixture
def beyond_loopback():
    from streamlit import config as st_config

    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    yield
    st_config.set_option("server.address", before)


@pytest.mark.parametrize("page,query", VARIANTS, ids=IDS)
def test_served_beyond_loopback_no_page_shows_a_server_path(
    page, query, hostile_store, monkeypatch, beyond_loopback
):
    import tempfile

    monkeypatch.setenv("LBE_STORE", str(hostile_store))
    monkeypatch.delenv("LBE_APP_WRITES", raising=False)
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    server = {str(hostile_store.parent), str(ROOT), tempfile.gettempdir() + "/"}
    found = [s for s in shown_strings(at) if any(p in s.replace("\\", "") for p in server)]
    assert not found, found[:5]
