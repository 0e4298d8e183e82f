"""Where the committed data and the app live, in a checkout and when installed.

A checkout holds ``app.py``, ``pages/``, ``ui/`` and ``data/`` beside ``lifelong_core/``;
``pip install`` puts the same files in the package ``lifelong_app`` beside
``lifelong_core`` in site-packages (pyproject.toml / setup.py). Both cases are read off
this file's location, so nothing here imports the app.
"""

from __future__ import annotations

import os
from pathlib import Path

_PARENT = Path(__file__).resolve().parents[1]
# A checkout: the repository root holds app.py. Installed: site-packages/lifelong_app does.
APP_DIR = _PARENT if (_PARENT / "app.py").is_file() else _PARENT / "lifelong_app"
DATA_DIR = APP_DIR / "data"
IN_CHECKOUT = APP_DIR == _PARENT


def default_store() -> Path:
    """The store ``lbe app`` serves when none is named: ``$LBE_STORE``; in a checkout its
    ``data/demo.duckdb`` (what ``make run`` builds); installed, ``demo.duckdb`` in the
    user's cache folder (``$XDG_CACHE_HOME/lbe``, default ``~/.cache/lbe``), since
    site-packages is no place to write."""
    if os.environ.get("LBE_STORE"):
        return Path(os.environ["LBE_STORE"])
    if IN_CHECKOUT:
        return DATA_DIR / "demo.duckdb"
    return user_cache_dir() / "demo.duckdb"


def user_cache_dir() -> Path:
    """The user's cache folder for this product: ``$XDG_CACHE_HOME/lbe``, default
    ``~/.cache/lbe`` (the installed demo store, the default estimator's remembered
    choices)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lbe"
