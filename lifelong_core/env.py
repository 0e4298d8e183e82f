"""The environment variables the command line, the library and the app read, in one table.

Each variable is read where it acts (the module named in ``where``); this table is what
the documentation's environment-variables page shows, and the suite checks that every
``LBE_*`` name the code reads is listed here with the default the code uses.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VARIABLES", "Variable"]


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, its default, what it sets and who reads it.

    Parameters
    ----------
    name : str
        The variable's name (``LBE_...``).
    default : str
        What applies when it is unset, in words or as the value.
    meaning : str
        What it sets, in a sentence.
    read_by : str
        Which front ends read it: the command line, the Python API, the app.
    where : str
        The module that reads it.
    """

    name: str
    default: str
    meaning: str
    read_by: str
    where: str


VARIABLES: tuple[Variable, ...] = (
    Variable(
        "LBE_STORE",
        "data/demo.duckdb in a checkout; demo.duckdb in the user's cache folder when installed",
        "The store `lbe app` serves and the Python API's `demo_store()` names when no store is given.",
        "command line, Python API, app",
        "lifelong_core.paths",
    ),
    Variable(
        "LBE_STORES_DIR",
        "the folder of the served store",
        "The folder in which the app creates new stores and lists the ones it may open "
        "(`lbe app --stores-dir` sets it).",
        "app",
        "ui.stores",
    ),
    Variable(
        "LBE_TUNING_CACHE",
        "auto-tuning/ in the user's cache folder (~/.cache/lbe)",
        "Where the default estimator `auto` remembers its cross-validated choice per cache; "
        "set to the empty string to remember nothing.",
        "command line, Python API, app",
        "lifelong_core.methods.tuning_memory",
    ),
    Variable(
        "LBE_THREADS",
        "the cores, at most 4",
        "Threads the estimators' independent pieces run on (at most 64); results do not depend on it.",
        "command line, Python API, app",
        "lifelong_core.methods.parallel",
    ),
    Variable(
        "LBE_DENSE_LIMIT_MB",
        "64",
        "The largest models x samples array (MB) the app reads at once; larger stores are read "
        "in packed blocks. The command line and the API have no such limit.",
        "app",
        "lifelong_core.limits",
    ),
    Variable(
        "LBE_MAX_LINE_MB",
        "16",
        "The longest line (MiB) of a text file a reader accepts.",
        "command line, Python API, app",
        "lifelong_core.io.limits",
    ),
    Variable(
        "LBE_MAX_UNPACKED_MB",
        "4096",
        "The most (MiB) a compressed file or archive may unpack to.",
        "command line, Python API, app",
        "lifelong_core.io.limits",
    ),
    Variable(
        "LBE_MAX_JSON_MB",
        "256",
        "The largest JSON document (MiB) a reader accepts.",
        "command line, Python API, app",
        "lifelong_core.io.limits",
    ),
    Variable(
        "LBE_MAX_ARCHIVE_FILES",
        "100000",
        "The most files one archive (a zip of runs) may hold.",
        "command line, Python API, app",
        "lifelong_core.io.limits",
    ),
    Variable(
        "LBE_VTAB_LEADERBOARD",
        "data/vtab1k/leaderboard_results.csv",
        "The VTAB-1k results table the Rankings and Task weighting pages and `vtab_counts()` read.",
        "Python API, app",
        "lifelong_core.stats.vtab",
    ),
    Variable(
        "LBE_APP_WRITES",
        "on when the server listens on this computer only, off otherwise",
        "Whether the app may write to the store: 1 (or true, yes, on) allows it, 0 (or false, "
        "no, off) forbids it.",
        "app",
        "ui.shared_store",
    ),
    Variable(
        "LBE_APP_UPLOAD_MB",
        "1024",
        "Disk (MiB) the uploads being processed may take at once, all sessions together.",
        "app",
        "ui.stores",
    ),
    Variable(
        "LBE_APP_WORK",
        "120",
        "The most work one page view may ask for, in units of about a second of one core; "
        "a larger request is refused with a sentence.",
        "app",
        "ui.controls",
    ),
    Variable(
        "LBE_APP_DUCKDB_MEMORY",
        "2GB",
        "DuckDB's memory cap for the app's shared read handle (a DuckDB size such as 4GB).",
        "app",
        "ui.shared_store",
    ),
)
