"""``app``: serve the dashboard (``lbe app [--store S] [--port P]``).

Runs ``python -m ui.serve`` (``streamlit run app.py`` after the heavy imports) from the
folder that holds the app, a checkout's root or the installed ``lifelong_app`` package,
so it works from any directory. Without ``--store`` it serves
:func:`lifelong_core.paths.default_store`, building the demo store there first when it is
missing (about 15 s, once). The engine does not import the app: it is a child process.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from lifelong_core.errors import InputError
from lifelong_core.io.edges import cause


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "app",
        help="serve the dashboard in the browser",
        description=(
            "Serve the Lifelong Benchmark Explorer dashboard in the browser, on a store of your "
            "choice."
        ),
        example="lbe app --store data/demo.duckdb",
    )
    p.add_argument(
        "--store",
        type=Path,
        help="DuckDB store to show (default: the demo store, built on first use)",
    )
    p.add_argument("--port", type=int, default=8501, help="port to listen on (default 8501)")
    p.add_argument(
        "--stores-dir",
        type=Path,
        help="the folder the Data page may open and create stores in (default: the served "
        "store's folder)",
    )
    p.add_argument(
        "--no-headless", dest="headless", action="store_false", help="also open a browser window"
    )
    p.set_defaults(func=run)


def command(
    store: Path, port: int, headless: bool = True, stores_dir: Path | None = None
) -> tuple[list[str], dict]:
    """The server's command line and environment (a separate function so it can be tested)."""
    from lifelong_core.paths import APP_DIR

    if not (APP_DIR / "app.py").is_file():
        raise InputError(
            f"the app is not installed beside lifelong_core (no {APP_DIR / 'app.py'}); reinstall the package."
        )
    env = {
        **os.environ,
        "LBE_STORE": str(Path(store).resolve()),
        **({"LBE_STORES_DIR": str(Path(stores_dir).resolve())} if stores_dir is not None else {}),
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


# Where the server listens unless --server.address or STREAMLIT_SERVER_ADDRESS says
# otherwise (ui.serve adds it to the server's options).
DEFAULT_ADDRESS = "127.0.0.1"


def check_port(port: int, address: str) -> None:
    """Refuse a port the server could not listen on (in use, or not allowed), before
    anything is printed or built: the server would otherwise announce its address and
    then exit."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise InputError(
            f"the server address {address!r} is not an address of this computer."
        ) from None
    family, kind, proto, _, sockaddr = infos[0]
    with socket.socket(family, kind, proto) as s:
        # As the server's own socket does, so a port left in TIME_WAIT counts as free.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(sockaddr)
        except OSError as exc:
            why = "it is in use" if exc.errno == errno.EADDRINUSE else cause(exc)
            raise InputError(
                f"cannot listen on {address} port {port}: {why}; choose another with --port.",
                param="port",
            ) from None


def check_store(store: Path) -> None:
    """Refuse a file that is not a readable, complete store before the server starts."""
    from lifelong_core.store import check_readable

    check_readable(store)


def run(args: argparse.Namespace) -> int:
    from lifelong_core.paths import default_store

    if not 1 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a port number (1-65535).")
    check_port(args.port, os.environ.get("STREAMLIT_SERVER_ADDRESS") or DEFAULT_ADDRESS)
    if args.stores_dir is not None and not args.stores_dir.is_dir():
        raise InputError(f"--stores-dir {args.stores_dir} is not a folder.")
    store = args.store or default_store()
    if args.store is not None and not store.is_file():
        raise InputError(
            f"no store at {store}; build one with `lbe build-demo --store {store}` or `lbe import`."
        )
    if store.is_file():
        check_store(store)
    else:
        from lifelong_core.commands.build_demo import ensure_demo_store

        ensure_demo_store(store)
    argv, env = command(store, args.port, args.headless, args.stores_dir)
    print(f"serving {store} at http://localhost:{args.port} (Ctrl+C stops)", flush=True)
    return serve(argv, env)


def _die_with_parent() -> None:
    # In the server's process, before it runs: Linux sends it SIGTERM when `lbe app` dies,
    # even by SIGKILL, so no server outlives the command that started it.
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# How often the command checks on the server it runs (seconds).
POLL_S = 0.2


def serve(argv: list[str], env: dict[str, str], grace: float = 10.0) -> int:
    """Run the server as a child that lives exactly as long as this command.

    SIGTERM, SIGHUP and Ctrl+C stop the server (SIGTERM, then SIGKILL after ``grace``
    seconds) before this command exits; on Linux the server also dies with it when it
    is killed outright. Returns 0 when stopped so, else the server's exit code.
    """
    linux = sys.platform.startswith("linux")
    proc = subprocess.Popen(argv, env=env, preexec_fn=_die_with_parent if linux else None)
    stopped = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopped
        stopped = True
        proc.terminate()

    previous = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    try:
        # Waited on in short steps, so that a server asked to stop that has not ended
        # within ``grace`` seconds is killed: a wait without a timeout would wait for it
        # for ever.
        deadline: float | None = None
        while True:
            try:
                code = proc.wait(POLL_S)
                return 0 if stopped else code
            except subprocess.TimeoutExpired:
                if stopped and deadline is None:
                    deadline = time.monotonic() + grace
                elif deadline is not None and time.monotonic() > deadline:
                    proc.kill()
            except KeyboardInterrupt:
                # Ctrl+C reached the server too (same process group); make sure it ends.
                stopped = True
                proc.terminate()
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for s, handler in previous.items():
            signal.signal(s, handler)
