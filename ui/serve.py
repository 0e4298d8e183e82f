"""Serve the app: ``python -m ui.serve [streamlit options]`` = ``streamlit run app.py`` with
the heavy imports done before the server starts listening.

``streamlit run`` imports a page's modules when the first visitor opens it, so the first
page view of a fresh server also paid for scipy, plotly's figure classes, DuckDB and the
engine (about 1.5 s of a 5 s first render here; the documentation's Benchmarks page). Importing them first
moves that cost to start-up, where nobody is waiting on a page. Options after the module
name go to ``streamlit run`` unchanged (``--server.port 8502``, ...).

The server listens on 127.0.0.1 only unless ``--server.address`` (or
``STREAMLIT_SERVER_ADDRESS``) says otherwise, wherever it is started from (the repository's
``.streamlit/config.toml`` says the same, but is only read from the repository root). On
any other address the app refuses writes unless ``LBE_APP_WRITES=1`` (``ui.shared_store``).

Every session's script runs in a thread of this one process, so what a page view costs in
Python is paid under one interpreter lock, and the server's event loop (which answers
``GET /`` and moves every message) waits behind it. Profiled with 20 sessions, most of that
cost was not the app's: Streamlit collected all garbage (``gc.collect(2)``, a walk of every
object of the process) after each script run, about 70% of the lock's time, and re-scanned
every imported module's path for its source watcher after each run, on the event loop.
Served, the app turns both off (:data:`SERVING_OPTIONS`, unless given on the command line)
and freezes the objects made at start-up, so the collections Python still makes walk only
what page views create.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"


def warm_imports() -> None:
    """Import what every page needs; no store is opened and no page state is touched."""
    import logging

    # Outside a running server, Streamlit logs one warning per cached function it meets
    # (nine lines that look like a fault at every start); they say nothing here.
    # (A filter, not a level: Streamlit resets its loggers' levels when its config loads.)
    quiet = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    no_runtime = _DropNoRuntime()
    quiet.addFilter(no_runtime)
    try:
        _warm()
    finally:
        quiet.removeFilter(no_runtime)


class _DropNoRuntime:
    def filter(self, record) -> bool:
        return not record.getMessage().startswith("No runtime found")


def _warm() -> None:
    # Plotly builds its figure and layout validators on first use, not on import: draw the
    # budget chart every Sort & Search page opens with once, fit line and top axis included
    # (0.1-0.2 s of the first page view otherwise).
    import matplotlib
    import pandas as pd
    import plotly.io as pio
    import scipy.optimize
    import scipy.stats  # noqa: F401 - correlations, intervals

    import lifelong_core.methods.irt
    import lifelong_core.methods.neighbours
    import lifelong_core.sortsearch
    import lifelong_core.stats
    import lifelong_core.store  # noqa: F401
    import ui.caches
    import ui.charts
    import ui.controls
    import ui.ternary
    from lifelong_core.sortsearch import fit_exponential
    from ui.common import page_summary, plain_figure

    # The Task weighting page's static map: about 0.3 s of imports on its first view.
    matplotlib.use("Agg")
    import matplotlib.pyplot

    # Home's list of pages, read before any session thread runs (page_summary says why).
    for page in sorted((APP.parent / "pages").glob("*.py")):
        page_summary(page)

    table = pd.DataFrame({"budget": [8, 16, 32, 64], "mae": [0.30, 0.21, 0.16, 0.14]})
    fig = ui.charts.budget_lines(
        table, "mae", n_total=128, fits={"": fit_exponential(table["budget"], table["mae"])}
    )
    pio.to_json(plain_figure(fig))


# Streamlit options the served app sets unless the command line gives them (module
# docstring): no full garbage collection after every script run, no source watching.
# The last: a research tool run locally has no use for Streamlit's "Deploy" button.
SERVING_OPTIONS = {
    "runner.postScriptGC": "false",
    "server.fileWatcherType": "none",
    "client.toolbarMode": "viewer",
}


def _given(argv: list[str], option: str) -> bool:
    return any(a == f"--{option}" or a.startswith(f"--{option}=") for a in argv)


def _address(argv: list[str]) -> str | None:
    """The address the command line gives the server, if any."""
    for i, a in enumerate(argv):
        if a == "--server.address" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--server.address="):
            return a.split("=", 1)[1]
    return None


def streamlit_args(argv: list[str]) -> list[str]:
    """``argv`` with ``--server.address 127.0.0.1`` added unless an address is given, and
    the :data:`SERVING_OPTIONS` not given. Served beyond loopback, a failure shows no
    traceback to the visitor (``client.showErrorDetails none``, unless given): a traceback
    names the server's files."""
    from lifelong_core.commands.app import DEFAULT_ADDRESS
    from ui.shared_store import LOOPBACK

    extra = []
    if not _given(argv, "server.address") and not os.environ.get("STREAMLIT_SERVER_ADDRESS"):
        extra += ["--server.address", DEFAULT_ADDRESS]
    for option, value in SERVING_OPTIONS.items():
        if not _given(argv, option):
            extra += [f"--{option}", value]
    address = _address(argv) or os.environ.get("STREAMLIT_SERVER_ADDRESS") or DEFAULT_ADDRESS
    if address.strip() not in LOOPBACK and not _given(argv, "client.showErrorDetails"):
        extra += ["--client.showErrorDetails", "none"]
    return [*extra, *argv]


def main(argv: list[str] | None = None) -> None:
    import gc

    from lifelong_core.errors import InputError
    from ui.shared_store import hold_served_store
    from ui.stores import served_store

    try:
        # Served is held (one writer rule): no other process replaces or writes the store
        # while this server runs, whether or not a page has been viewed yet.
        hold_served_store(served_store())
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    warm_imports()
    from lifelong_core.methods.parallel import keep_freed_memory

    keep_freed_memory()  # the estimators' passes reuse their freed arrays
    # Modules, plotly's validators and the engine live as long as the server: frozen, the
    # garbage collector never walks them again.
    gc.collect()
    gc.freeze()
    from streamlit.web import cli

    sys.argv = [
        "streamlit",
        "run",
        str(APP),
        *streamlit_args(sys.argv[1:] if argv is None else argv),
    ]
    cli.main()


if __name__ == "__main__":
    main()
