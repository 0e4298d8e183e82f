"""``app``: serve the dashboard (``lbe app [--store S] [--port P]``).

Runs ``python -m ui.serve`` (``streamlit run app.py`` after the heavy imports) from the
folder that holds the app, a checkout's root or the installed ``lifelong_app`` package,
so it works from any directory. Without ``--store`` it serves
:func:`lifelong_core.paths.default_store`, building the demo store there first when it is
missing (about 15 s, once). The engine does not import the app: it is a child process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from lifelong_core.errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "app",
        help="serve the dashboard in the browser",
        description="Serve the Lifelong Benchmark Explorer dashboard.",
    )
    p.add_argument(
        "--store",
        type=Path,
        help="DuckDB store to show (default: the demo store, built on first use)",
    )
    p.add_argument("--port", type=int, default=8501, help="port to listen on (default 8501)")
    p.add_argument(
        "--no-headless", dest="headless", action="store_false", help="also open a browser window"
    )
    p.set_defaults(func=run)


def command(store: Path, port: int, headless: bool = True) -> tuple[list[str], dict]:
    """The server's command line and environment (a separate function so it can be tested)."""
    from lifelong_core.paths import APP_DIR

    if not (APP_DIR / "app.py").is_file():
        raise InputError(
            f"the app is not installed beside lifelong_core (no {APP_DIR / 'app.py'}); reinstall the package."
        )
    env = {
        **os.environ,
        "LBE_STORE": str(Path(store).resolve()),
        "PYTHONPATH": os.pathsep.join(
            [str(APP_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    argv = [
        sys.executable,
        "-m",
        "ui.serve",
        "--server.headless",
        "true" if headless else "false",
        "--browser.gatherUsageStats",
        "false",
        "--server.port",
        str(port),
    ]
    return argv, env


def run(args: argparse.Namespace) -> int:
    from lifelong_core.paths import default_store

    if not 1 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a port number (1-65535).")
    store = args.store or default_store()
    if args.store is not None and not store.is_file():
        raise InputError(
            f"no store at {store}; build one with `lbe build-demo --store {store}` or `lbe import`."
        )
    if not store.is_file():
        from lifelong_core.commands.build_demo import build_store

        store.parent.mkdir(parents=True, exist_ok=True)
        print(f"building the demo store at {store} (once, about 15 s) ...", flush=True)
        build_store(store)
    argv, env = command(store, args.port, args.headless)
    print(f"serving {store} at http://localhost:{args.port} (Ctrl+C stops)", flush=True)
    try:
        return subprocess.call(argv, env=env)
    except KeyboardInterrupt:
        return 0
