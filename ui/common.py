"""Presentation helpers shared by every page: the store handle, URL state, downloads.

Pages stay thin: widgets -> ui -> ``lifelong_core.workflows`` -> the helpers here and in
``ui.charts``. Nothing in this package computes results or decides a rule; it only moves
them to the screen (docs/development/architecture.md, "The app side").
"""

from __future__ import annotations

import ast
import copy
import functools
import html
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from lifelong_core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_STORE = ROOT / "data" / "demo.duckdb"


# What a page says on a store with no dataset yet (a store just created on the Data page).
NO_DATA = (
    "The store holds no dataset yet: import your results on the Data page "
    "(or with `python -m lifelong_core import`)."
)
# Session-state key of the store opened on the Data page (a per-session choice: another
# visitor of the same server keeps reading $LBE_STORE).
STORE_CHOICE = "lbe_store_path"


T = TypeVar("T")


def picked(value: T | None) -> T:
    """A choice widget's value, which is never None when the widget has options and a
    default (Streamlit's types allow None for a widget without options).

    Parameters
    ----------
    value : object or None
        What ``st.selectbox``, ``st.radio`` or ``st.select_slider`` returned.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    RuntimeError
        If it is None: a widget was built without options (a bug of the page).
    """
    if value is None:
        raise RuntimeError("a choice widget without options returned no value.")
    return value


def store_path() -> Path:
    """The store this browser session reads: the one opened on the Data page, else ``$LBE_STORE``,
    else the bundled demo store."""
    chosen = st.session_state.get(STORE_CHOICE)
    return Path(chosen) if chosen else Path(os.environ.get("LBE_STORE", DEFAULT_STORE))


def get_store():
    """The shared read-only store (``ui.shared_store.SharedStore``), or stop the page with one sentence."""
    from ui.shared_store import SharedStore

    path = store_path()
    if not path.exists():
        st.error(
            f"No store at {plain(shown_path(path))}. Open or create one on the Data page, build the "
            "demo store with `make store`, or point LBE_STORE at an existing DuckDB file."
        )
        st.stop()
    store = SharedStore(path)
    with input_errors():
        # Every page reads through the dense-read guard (64 MB, or LBE_DENSE_LIMIT_MB): a
        # larger store is read as packed blocks, never as one dense matrix.
        from lifelong_core import limits

        limits.set_dense_limit(limits.app_limit_bytes())
        store.n_models  # noqa: B018 - opens the handle now, so a bad file stops here with its sentence
    return store


def store_key() -> str:
    """Cache key of the store file: path and modification time."""
    get_store()  # stops the page with one sentence when there is no usable store
    p = store_path()
    return f"{p}:{p.stat().st_mtime_ns}"


@st.cache_resource(show_spinner=False, max_entries=8)
def store_facts(key: str) -> dict:
    """What every page reads about the store on every view, read once per store version.

    One shared object, not a copy per call (copying the table cost as much as reading it
    on every view): pages only read it.

    Parameters
    ----------
    key : str
        The store's cache key (:func:`store_key`): a store changed on disk is read again.

    Returns
    -------
    dict
        ``datasets`` (the store's datasets table) and ``true_prob`` (whether it records
        each model's probability of the true class, which Sorting by confidence needs).
    """
    s = get_store()
    return {"datasets": s.datasets(), "true_prob": s.has_extra("true_prob")}


class ErrorBox:
    """What :func:`input_errors` saw: ``ok`` is False once an InputError was shown."""

    ok: bool = True


@contextmanager
def input_errors(stop: bool = True, cleanup: Callable[[], Any] | None = None) -> Iterator[ErrorBox]:
    """Show an InputError raised in the block as one error box, without a traceback.

    An :class:`~lifelong_core.errors.InputError` (bad input, one sentence) is caught,
    shown with :func:`plain` and the page stopped; any other exception goes through.

    Parameters
    ----------
    stop : bool
        Stop the page after the box (default). With False the page goes on after the
        block, with ``box.ok`` False so that it can skip what needed the result.
    cleanup : callable, optional
        Run before the box is shown, e.g. to remove a progress bar the block started.

    Yields
    ------
    ErrorBox
        ``ok`` is True, and False once an InputError was shown.

    Examples
    --------
    >>> with input_errors(stop=False) as box:  # doctest: +SKIP
    ...     value = parse(text)
    >>> if box.ok:  # doctest: +SKIP
    ...     st.write(value)
    """
    box = ErrorBox()
    try:
        yield box
    except InputError as exc:
        box.ok = False
        if cleanup is not None:
            cleanup()
        st.error(plain(hide_paths(str(exc))))
        if stop:
            st.stop()


@contextmanager
def page_errors() -> Iterator[None]:
    """The backstop around every page (``app.py``): bad input, and a read of a damaged
    store file, that a page did not catch itself are one error box, never a traceback."""
    from lifelong_core.store.maintenance import store_error_sentence

    try:
        with input_errors():
            yield
    except Exception as exc:
        sentence = store_error_sentence(exc, store_path())
        if sentence is None:
            raise
        st.error(plain(hide_paths(sentence)))


def refresh_store() -> None:
    """Drop derived tables after this browser session wrote to the store (handles reopen by themselves)."""
    st.cache_data.clear()


def app_writes_enabled() -> tuple[bool, str]:
    """Whether this server lets visitors write, and the sentence saying why not."""
    from ui.shared_store import writes_enabled

    return writes_enabled(st.get_option("server.address"))


# ---------------------------------------------------------------- text from the store
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def code(text) -> str:
    """``text`` as inline code in Markdown, whatever backticks it holds.

    A name inside a plain `` `...` `` span could close it with a backtick of its own and be
    read as Markdown after it; the fence here is one backtick longer than the longest run
    in the text (CommonMark's rule).

    Parameters
    ----------
    text : object
        Anything; it is shown as ``str(text)``.

    Returns
    -------
    str
        The code span, backticks included.
    """
    text = str(text)
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# ---------------------------------------------------------------- server paths
def beyond_loopback() -> bool:
    """Whether this server listens beyond this computer (``server.address`` is not a
    loopback address): its visitors may be anyone who can reach it, so the app shows them
    file names only, never paths on the server (:func:`shown_path`, :func:`hide_paths`)."""
    from ui.shared_store import LOOPBACK

    return (st.get_option("server.address") or "").strip() not in LOOPBACK


def shown_path(path) -> str:
    """How the app names a file on the server: its name only when served beyond loopback,
    else the whole path.

    Parameters
    ----------
    path : str or os.PathLike
        A path on the server.

    Returns
    -------
    str
    """
    return Path(path).name if beyond_loopback() else str(path)


# An absolute path of two or more parts inside a sentence (not a URL's, not an id's such as
# org/model): the server's folders are in every part but the last.
_SERVER_PATH = re.compile(
    r"(?<![\w:/.~-])/(?:[^\s'\"`()\[\]{}<>,;|/]+/)+([^\s'\"`()\[\]{}<>,;|/]*)"
)


def hide_paths(text: str) -> str:
    """``text`` with every absolute server path written as its last part when served beyond
    loopback (a store, an upload's temporary folder, the app's own files), else unchanged.

    Parameters
    ----------
    text : str
        A sentence the app shows (an error, a caption, an import's summary).

    Returns
    -------
    str
    """
    if not beyond_loopback():
        return text
    return _SERVER_PATH.sub(lambda m: m.group(1) or "the server", text)


def plain(text) -> str:
    """``text`` escaped so that Streamlit's Markdown shows it literally.

    Store text (model ids and names, dataset and domain names) and error sentences that
    quote it are user input: rendered as Markdown, a name like ``![x](http://host/t.png)``
    would make every visitor's browser fetch that URL.

    Parameters
    ----------
    text : object
        Anything; it is shown as ``str(text)``.

    Returns
    -------
    str
        The text with every Markdown special character backslash-escaped.
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text))


# ---------------------------------------------------------------- URL state
def query_default(key: str, default: Any, cast=str) -> Any:
    """Value of ``key`` from the URL (``st.query_params``) cast to the default's type.

    Invalid values fall back to the default instead of raising, since URLs are shared
    by hand and may be stale.

    Parameters
    ----------
    key : str
        Name of the URL parameter.
    default : object
        Returned when the URL lacks ``key`` or its value does not cast.
    cast : callable
        Turns the URL's text into the value (``int``, ``float``, ``str``); with ``bool``,
        ``1``, ``true`` and ``yes`` are True and anything else False.

    Returns
    -------
    object
        The cast value, or ``default``.
    """
    raw = st.query_params.get(key)
    if raw is None:
        return default
    try:
        if cast is bool:
            return raw.lower() in ("1", "true", "yes")
        return cast(raw)
    except (TypeError, ValueError):
        return default


def query_list(key: str, default: Sequence[str], allowed: Iterable[str] | None = None) -> list[str]:
    """Comma-separated list from the URL, filtered to ``allowed`` when given.

    An empty value is an empty list (the user emptied the selection, and a shared link
    shows it empty too); a value none of whose items is allowed gives the default.

    Parameters
    ----------
    key : str
        Name of the URL parameter.
    default : sequence of str
        Returned when the URL lacks ``key`` or keeps nothing of it.
    allowed : iterable of str, optional
        The values that may be chosen; others are dropped (a stale or hand-edited link).

    Returns
    -------
    list of str
    """
    raw = st.query_params.get(key)
    if raw is None:
        return list(default)
    if raw == "":
        return []  # the user emptied the selection: a shared link shows it empty too
    values = [v for v in raw.split(",") if v]
    if allowed is not None:
        allowed = set(allowed)
        values = [v for v in values if v in allowed]
    return values or list(default)


def sync_query(**values: Any) -> None:
    """Write the current widget values into the URL so that the view can be shared.

    Lists and tuples are written comma-separated, booleans as ``1`` / ``0``; a value the
    URL already holds is left as it is.

    Parameters
    ----------
    **values
        URL parameter name to value.
    """
    for key, value in values.items():
        if isinstance(value, (list, tuple)):
            text = ",".join(str(v) for v in value)
        elif isinstance(value, bool):
            text = "1" if value else "0"
        else:
            text = str(value)
        if st.query_params.get(key) != text:
            st.query_params[key] = text


# ---------------------------------------------------------------- downloads
def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "download"


def download_table(df: pd.DataFrame, name: str, label: str | None = None) -> None:
    """A CSV download button for a table.

    The CSV is made only when the button is clicked, and the click does not rerun the page.

    Parameters
    ----------
    df : pandas.DataFrame
        The table, written without its index.
    name : str
        Name of the file (made safe for a file name) and of the button's key.
    label : str, optional
        The button's text, Markdown (default ``Download <name> (CSV)``, the name escaped
        with :func:`plain`); a caller's label escapes the store's text it quotes.
    """
    # A callable is run only when the button is clicked, so reruns stay cheap; a click
    # needs no rerun of the page.
    st.download_button(
        label or f"Download {plain(name)} (CSV)",
        lambda: df.to_csv(index=False).encode(),
        file_name=f"{_slug(name)}.csv",
        mime="text/csv",
        key=f"dl-table-{_slug(name)}",
        on_click="ignore",
    )


def download_figure(fig, name: str) -> None:
    """A download button for a plotly figure as a self-contained interactive HTML file."""
    # Inline plotly.js: the file must open offline, like the app itself.
    st.download_button(
        f"Download {plain(name)} (HTML)",
        lambda: fig.to_html(include_plotlyjs=True, full_html=True).encode(),
        file_name=f"{_slug(name)}.html",
        mime="text/html",
        key=f"dl-fig-{_slug(name)}",
        on_click="ignore",
    )


# The figure's own markup, kept as markup after every string is escaped: line breaks in
# titles, hover and cell text, and the hover box's secondary part. A name that holds one of
# these breaks a line or moves its hover text, and can do nothing else.
_FIGURE_TAGS = {"&lt;br&gt;": "<br>", "&lt;extra&gt;": "<extra>", "&lt;/extra&gt;": "</extra>"}
_FIGURE_TAG = re.compile("|".join(map(re.escape, _FIGURE_TAGS)))


def plain_html(text: object) -> str:
    """``text`` escaped so that Plotly (titles, labels, hover text, legends) shows it
    literally, with the figure's own line breaks and hover boxes kept.

    Plotly renders a subset of HTML in every text it draws (``<b>``, ``<i>``, ``<a
    href>``, ...); a model named ``<a href="...">x</a>`` would be a link in every
    visitor's browser.

    Parameters
    ----------
    text : object
        Anything; it is shown as ``str(text)``.

    Returns
    -------
    str
        The text with ``&``, ``<`` and ``>`` escaped, except ``<br>``, ``<extra>`` and
        ``</extra>``.
    """
    escaped = html.escape(str(text), quote=False)
    return _FIGURE_TAG.sub(lambda m: _FIGURE_TAGS[m.group()], escaped)


def _escape_strings(values):
    """``values`` with every string escaped by :func:`plain_html`; numbers, None and
    nested sequences and mappings keep their shape."""
    if isinstance(values, str):
        return plain_html(values)
    if isinstance(values, np.ndarray):
        return (
            np.vectorize(_escape_strings, otypes=[object])(values)
            if values.dtype.kind in "OUS" and values.size
            else values
        )
    if isinstance(values, (list, tuple)):
        return [_escape_strings(v) for v in values]
    if isinstance(values, dict):
        return {k: _escape_strings(v) for k, v in values.items()}
    return values


def plain_figure(fig):
    """``fig`` with every text in it shown as text: trace names, labels, cell and hover
    text and templates, titles of the figure, its axes, legend and colour bars,
    annotations and tick labels are escaped (:func:`plain_html`), so a model called
    ``<b>x</b>`` (or one carrying a link) is drawn as typed, wherever a chart puts it.
    Only the template (the app's own styling) is left as it is. Works on a copy: a cached
    figure shown again must not be escaped twice.

    The copy is made as plain data and put back together without plotly's validation (the
    figure was valid, and only strings are replaced by strings): validating every property
    again cost 5-7 ms of the interpreter lock per figure, for every visitor.
    """
    import plotly.graph_objects as go

    spec = fig.to_dict() if hasattr(fig, "to_dict") else go.Figure(fig).to_dict()
    spec["data"] = [_escape_strings(trace) for trace in spec.get("data", ())]
    layout = spec.get("layout", {})
    template = layout.pop("template", None)
    layout = _escape_strings(layout)
    if template is not None:
        layout["template"] = template
    spec["layout"] = layout
    return go.Figure(spec, _validate=False)


def page_label(page: Path) -> str:
    """A page's label in the navigation: its file name without the order prefix.

    Parameters
    ----------
    page : pathlib.Path
        The page's file, e.g. ``pages/1_Budget_explorer.py``.

    Returns
    -------
    str
        E.g. ``Budget explorer``.
    """
    return re.sub(r"^\d+[_ -]*", "", page.stem).replace("_", " ")


def page_files(folder: Path) -> list[Path]:
    """The page scripts of ``folder`` in navigation order: by their numeric prefix.

    A plain sort of the names would put ``10_Backtest.py`` before ``1_Budget_explorer.py``.

    Parameters
    ----------
    folder : pathlib.Path
        The app's ``pages/`` folder.

    Returns
    -------
    list of pathlib.Path
        Every ``*.py`` file of ``folder``, by prefix, then name (a file without a numeric
        prefix goes last).
    """

    def key(p: Path) -> tuple[float, str]:
        m = re.match(r"^(\d+)", p.stem)
        return (float(m.group(1)) if m else float("inf"), p.stem)

    return sorted(folder.glob("*.py"), key=key)


# CPython 3.11's parser is not safe to run in two threads at once ("AST constructor
# recursion depth mismatch"), and Streamlit compiles page scripts in session threads.
_PARSE_LOCK = threading.Lock()


@functools.cache
def page_summary(page: Path) -> str:
    """First paragraph of the page's docstring, without a leading "Label:".

    Read once per server (``ui.serve`` reads them all before it serves): Home lists every
    page on every view, and parsing ten page files for it was a sixth of the server's time
    under load.

    Parameters
    ----------
    page : pathlib.Path
        The page's file.

    Returns
    -------
    str
        The paragraph on one line (empty when the page has no docstring).
    """
    with _PARSE_LOCK:
        doc = ast.get_docstring(ast.parse(page.read_text(encoding="utf-8"))) or ""
    desc = " ".join(doc.split("\n\n")[0].split())
    prefix = page_label(page) + ":"
    if desc.lower().startswith(prefix.lower()):
        desc = desc[len(prefix) :].strip()
        desc = desc[:1].upper() + desc[1:]
    return desc


class Memo:
    """A small thread-safe LRU of results that are slow to compute and need a progress bar.

    ``st.cache_data`` records every element a cached function touches and replays it on a
    hit, which fails for a progress bar created outside the function; sweeps are memoised
    here instead (keys include the store's modification time, like every cache here).
    Results are returned as deep copies so a page cannot alter the memo, unless ``copies``
    is False (values only ever read, such as the figures :func:`show_chart` shares).
    """

    def __init__(self, size: int, copies: bool = True) -> None:
        self.size = size
        self.copies = copies
        self.items: OrderedDict = OrderedDict()
        self.lock = threading.Lock()
        self.pending: dict = {}  # key -> Event set when the session computing it is done

    def get_or_compute(self, key, compute):
        # One computation per key at a time: sessions asking for a key that another is
        # computing wait for it (20 visitors opening a page together once ran the same
        # sweep 20 times side by side). If that computation fails, the next one tries.
        while True:
            with self.lock:
                if key in self.items:
                    self.items.move_to_end(key)
                    return self._out(self.items[key])
                done = self.pending.get(key)
                if done is None:
                    done = self.pending[key] = threading.Event()
                    break
            done.wait()
        try:
            value = compute()
            with self.lock:
                self.items[key] = value
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
            return self._out(value)
        finally:
            with self.lock:
                self.pending.pop(key, None)
            done.set()

    def _out(self, value):
        return copy.deepcopy(value) if self.copies else value


_FIGURES = Memo(128, copies=False)


def show_chart(fig, name: str, key: Hashable | None = None) -> None:
    """Render a plotly figure with its download button underneath.

    The store's text in the figure is escaped (:func:`plain_figure`). With ``key`` (a
    hashable value that names everything the figure depends on, such as the store key and
    the page's settings), the escaped figure is built once per server and shared by every
    session: building and escaping a figure holds the interpreter lock for 10-20 ms, which
    many visitors of the same view would otherwise each pay (the figure is only read
    afterwards).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure or callable
        The figure, or a function without arguments that builds it (built only when
        ``key`` is not in the shared memo yet).
    name : str
        Name of the downloaded file and of the chart's widget key.
    key : hashable, optional
        Shares the built figure between sessions under ``(name, key)``.
    """
    if key is None:
        fig = plain_figure(fig() if callable(fig) else fig)
    else:
        fig = _FIGURES.get_or_compute(
            (name, key), lambda: plain_figure(fig() if callable(fig) else fig)
        )
    st.plotly_chart(fig, width="stretch", key=f"chart-{_slug(name)}")
    download_figure(fig, name)


def show_table(df: pd.DataFrame, name: str, **kwargs) -> None:
    """Render a table with its CSV download button underneath (server paths in its text
    written as file names when served beyond loopback, :func:`hide_paths`).

    Parameters
    ----------
    df : pandas.DataFrame
        The table, shown without its index.
    name : str
        Name of the downloaded file and of the button's key.
    **kwargs
        Passed on to ``st.dataframe`` (e.g. ``column_config``).
    """
    if beyond_loopback():
        # Store text may hold server paths (an import's source file in the log).
        df = df.copy()
        for col in df.columns:
            if df[col].dtype == object or pd.api.types.is_string_dtype(df[col]):
                df[col] = df[col].map(lambda v: hide_paths(v) if isinstance(v, str) else v)
    st.dataframe(df, width="stretch", hide_index=True, **kwargs)
    download_table(df, name)


def provenance_note(synthetic: bool | None = None, dataset: str | None = None) -> None:
    """One caption per dataset saying what the data are.

    In the words of the store's own metadata: its description and source as recorded at
    import, and whether it is synthetic.

    Parameters
    ----------
    synthetic : bool, optional
        Call the data synthetic whatever the store records (a page that generated them).
    dataset : str, optional
        The one dataset to describe (default: every dataset of the store).
    """
    ds = store_facts(store_key())["datasets"]
    if dataset is not None:
        ds = ds[ds["dataset"] == dataset]
    for row in ds.itertuples():
        kind = (
            "**synthetic** (seeded generator), not real model predictions"
            if bool(row.synthetic) or synthetic
            else "predictions as recorded at import"
        )
        desc = str(row.description or "").strip() or "no description recorded"
        src = hide_paths(str(getattr(row, "source", "") or "").strip())
        st.caption(
            f"Data: **{plain(row.dataset)}**, {kind}: {plain(desc)}"
            + (f" (source: {plain(src)})" if src else "")
            + "."
        )


def url_index(key: str, options: Sequence, default) -> int:
    """The ``index=`` of a select box or radio whose value lives in the URL.

    Parameters
    ----------
    key : str
        Name of the URL parameter.
    options : sequence
        The widget's options, matched against the URL as text.
    default : object
        The option chosen when the URL names none of them.

    Returns
    -------
    int
        Index of the URL's value in ``options``, else of ``default``, else 0.
    """
    texts = [str(o) for o in options]
    raw = st.query_params.get(key)
    if raw is not None and raw in texts:
        return texts.index(raw)
    return texts.index(str(default)) if str(default) in texts else 0


def url_sync_keys(*keys: str) -> None:
    """Write the current values of the widgets with these keys into the URL, under the same names.

    Parameters
    ----------
    *keys : str
        Widget keys (``st.session_state``); a key without a widget yet is skipped.
    """
    sync_query(**{k: st.session_state[k] for k in keys if k in st.session_state})
