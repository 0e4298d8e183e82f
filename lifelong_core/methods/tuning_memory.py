"""The default estimator's cross-validated choice, remembered per cache.

:func:`~lifelong_core.methods.auto.tune_auto` is deterministic: the rows and columns it
cross-validates on (:func:`~lifelong_core.methods.design.cv_block`, drawn with the seed),
their 0/1 values, the cache's size, the seed, the number of alternating steps and the
candidates fix its outcome. It costs seconds on a leaderboard-sized cache, and every
``select``, ``estimate``, notebook cell or page that fits the default estimator on the
same cache would pay it again. So the outcome is remembered under a digest of exactly
those inputs and of the estimator's own code, in a :class:`TuningMemory` the estimator is
given as its ``memory`` setting (``AutoEstimator(memory=...)``; without one it remembers
nothing and writes nothing):

- in memory, for the life of the :class:`TuningMemory` object;
- on disk, one small JSON file per choice in its folder, shared by every process that
  uses the same folder.

Where the product's choices live: the registered name ``auto`` stands for
``memory="user"`` (its one line in :mod:`lifelong_core.methods.registry`), the process's
:func:`user` memory, whose folder is ``$LBE_TUNING_CACHE`` (default ``auto-tuning/`` in the
user's cache folder, :func:`lifelong_core.paths.user_cache_dir`). So every front end
(pages, commands, API) that asks the registry for ``auto`` remembers there, and
``get_method("auto", memory=None)`` does not.

A remembered choice is the one the cross-validation would make again, so remembering
changes how long a fit takes, never what it gives. A cache that gains a model or a sample
has other inputs, hence another digest, and is cross-validated afresh; so is every cache
after the estimator's code changes. An unreadable or damaged file is treated as missing
and rewritten; a folder that cannot be written keeps the choice in memory only. Setting
``LBE_TUNING_CACHE`` to the empty string turns remembering off (the benchmarks do, to time
the cross-validation itself).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.design import cv_block

ENV = "LBE_TUNING_CACHE"
FORMAT = 1  # of the JSON files; a change makes every older file a miss
MEMORY_ENTRIES = 64
DISK_ENTRIES = 512  # the oldest files beyond this many are removed when one is written
# The modules whose code decides the choice: the candidates, their fits and scores, the
# design's draws and the threshold rule. Their source is read, not imported (they import
# this module).
CODE = (
    "lifelong_core.methods.auto",
    "lifelong_core.methods.design",
    "lifelong_core.methods.irt",
    "lifelong_core.sortsearch.search",
)

T = TypeVar("T")


def folder() -> Path | None:
    """Where choices are kept on disk: ``$LBE_TUNING_CACHE``, else ``auto-tuning/`` in the
    user's cache folder; None when ``LBE_TUNING_CACHE`` is set to the empty string
    (remembering is off).

    Returns
    -------
    pathlib.Path or None
    """
    value = os.environ.get(ENV)
    if value is None:
        from lifelong_core.paths import user_cache_dir

        return user_cache_dir() / "auto-tuning"
    return Path(value) if value else None


# And the modules whose code decides a fit kept in the store (store.kept_fits): the choice's
# modules, the packed item fit and the round-by-round design.
FIT_CODE = (*CODE, "lifelong_core.methods.irt_fit", "lifelong_core.methods.active")


@cache
def _code_digest(modules: tuple[str, ...] = CODE) -> str:
    h = hashlib.blake2b(digest_size=16)
    for name in modules:
        spec = importlib.util.find_spec(name)
        h.update(Path(str(spec and spec.origin)).read_bytes())
    return h.hexdigest()


def code_digest() -> str:
    """A digest of the source of the modules that decide a fit of the default estimator.

    Returns
    -------
    str
        Hexadecimal; any change to those modules changes it.
    """
    return _code_digest(FIT_CODE)


@cache
def package_digest() -> str:
    """A digest of the source of the whole package, for what is kept from a computation
    too broad to name its modules (a backtest: :mod:`lifelong_core.store.kept_results`).

    Returns
    -------
    str
        Hexadecimal; any change to any module of the package changes it.
    """
    root = Path(__file__).resolve().parents[1]
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def key(A: np.ndarray, seed: int, settings: list) -> str:
    """The digest of everything :func:`~lifelong_core.methods.auto.tune_auto` depends on.

    Parameters
    ----------
    A : ndarray
        The cache, models x samples, 0/1.
    seed : int
        The cross-validation's seed.
    settings : list
        Its other settings, JSON-able (the alternating steps and the candidates).

    Returns
    -------
    str
        Hexadecimal; equal for two calls exactly when their cross-validations are.
    """
    m, n = A.shape
    rows, cols = cv_block(m, n, np.random.default_rng(seed))
    block = np.ascontiguousarray(A[np.ix_(rows, cols)], dtype=np.uint8)
    h = hashlib.blake2b(digest_size=20)
    h.update(json.dumps([FORMAT, _code_digest(), m, n, int(seed), settings]).encode())
    h.update(block.tobytes())
    return h.hexdigest()


def _read(path: Path, load: Callable[[dict], T]) -> T | None:
    try:
        return load(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, unreadable or damaged: cross-validate again


def _write(where: Path, name: str, record: dict) -> None:
    # Best effort: a read-only or full disk costs the next process a cross-validation,
    # nothing else. Written whole to a temporary file then renamed, so a concurrent
    # reader sees the old file or the new one, never half of one.
    with contextlib.suppress(OSError):
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f)
            os.replace(tmp, where / f"{name}.json")
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        files = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in files[:-DISK_ENTRIES]:
            old.unlink(missing_ok=True)


class TuningMemory:
    """Remembered cross-validated choices: in memory, and in ``folder`` when one is given.

    Parameters
    ----------
    folder : str or Path, optional
        Where one JSON file per choice is kept; None keeps choices in memory only.
    entries : int
        How many choices are kept in memory.
    """

    def __init__(self, folder: str | Path | None = None, entries: int = MEMORY_ENTRIES) -> None:
        self.folder = None if folder is None else Path(folder)
        self.entries = entries
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()  # the app's sessions are threads of one process

    def __repr__(self) -> str:
        return f"TuningMemory({str(self.folder) if self.folder else None!r})"

    def remembered(
        self,
        A: np.ndarray,
        seed: int,
        settings: list,
        tune: Callable[[], T],
        dump: Callable[[T], dict],
        load: Callable[[dict], T],
    ) -> T:
        """The remembered choice for these inputs, else ``tune()``'s, then remembered.

        Parameters
        ----------
        A : ndarray
            The cache, models x samples, 0/1.
        seed : int
            The cross-validation's seed.
        settings : list
            Its other settings, JSON-able.
        tune : callable
            Runs the cross-validation on exactly these inputs.
        dump, load : callable
            The choice to a JSON-able record and back; ``load`` raises KeyError,
            TypeError or ValueError on a record it cannot read (a damaged file is
            cross-validated again).

        Returns
        -------
        object
            What ``tune`` returns, or returned before on the same inputs.
        """
        name = key(A, seed, settings)
        with self._lock:
            if name in self._memory:
                self._memory.move_to_end(name)
                return self._memory[name]
        found = None if self.folder is None else _read(self.folder / f"{name}.json", load)
        if found is None:
            found = tune()
            if self.folder is not None:
                _write(self.folder, name, dump(found))
        with self._lock:
            self._memory[name] = found
            while len(self._memory) > self.entries:
                self._memory.popitem(last=False)
        return found

    def forget(self) -> None:
        """Empty the choices kept in memory (the files stay)."""
        with self._lock:
            self._memory.clear()


_USER: dict[Path, TuningMemory] = {}
_USER_LOCK = threading.Lock()


def user() -> TuningMemory | None:
    """The process's memory in the user's folder (:func:`folder`), or None when
    ``LBE_TUNING_CACHE`` is set to the empty string (remembering off).

    Returns
    -------
    TuningMemory or None
    """
    where = folder()
    if where is None:
        return None
    with _USER_LOCK:
        return _USER.setdefault(where, TuningMemory(where))


def resolve(memory: object) -> TuningMemory | None:
    """A ``memory`` setting as the memory it names.

    Parameters
    ----------
    memory : TuningMemory, "user" or None
        A memory, the user's (:func:`user`), or none.

    Returns
    -------
    TuningMemory or None

    Raises
    ------
    InputError
        For any other value.
    """
    if memory is None or isinstance(memory, TuningMemory):
        return memory
    if memory == "user":
        return user()
    raise InputError(
        f"memory must be a TuningMemory, 'user' or None, not {memory!r}.", param="memory"
    )


def forget() -> None:
    """Empty the in-memory choices of the process's user memories (the files on disk
    stay)."""
    with _USER_LOCK:
        for memory in _USER.values():
            memory.forget()
