"""Fitted methods kept for reuse, where the caller says so.

Fitting a model-based method on a cache takes seconds; a page that sweeps other budgets on
the same Sort rows, or a notebook that selects items and then estimates, should not fit
again. Nothing is kept behind the caller's back: a :class:`FitMemory` is passed as
``memory=`` (scikit-learn's convention for opting into caching) to
:func:`~lifelong_core.sweeping.run_sweep`, the API's ``select_items`` and
``estimate_new_model``; without one every call fits afresh. The app holds one for its
server process (``ui.caches.fit_memory``).

A kept fit is shared as it is: a method does not change once fitted, so sharing never
changes a number. A memory can also be backed by the fits a store keeps
(:meth:`FitMemory.backed_by`, :mod:`lifelong_core.store.kept_fits`): a fit missing from
memory is then looked up there before it is made, and a writer keeps the fits it makes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from lifelong_core.errors import InputError

T = TypeVar("T")


class FitMemory:
    """The most recently used fits, by key, up to ``entries`` of them.

    Parameters
    ----------
    entries : int
        How many fits are kept, at least 1; the least recently used goes first.

    Raises
    ------
    InputError
        If ``entries`` is below 1.
    TypeError
        If ``entries`` is not a whole number.

    Examples
    --------
    >>> memory = FitMemory(entries=2)
    >>> memory.get(("a",), lambda: 1), memory.get(("a",), lambda: 2)
    (1, 1)
    >>> len(memory)
    1
    """

    def __init__(self, entries: int = 16) -> None:
        if isinstance(entries, bool) or not isinstance(entries, int):
            raise TypeError(f"entries must be a whole number, got {type(entries).__name__}.")
        if entries < 1:
            raise InputError(f"entries must be at least 1, got {entries}.", param="entries")
        self.entries = entries
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()
        # The app's sessions are threads of one process.
        self._lock = threading.Lock()
        self.store_fits: Any = None

    def backed_by(self, store_fits: Any) -> FitMemory:
        """This memory (the same kept fits, shared) backed by a store's kept fits.

        Parameters
        ----------
        store_fits : lifelong_core.store.kept_fits.KeptFits or None
            Where a fit missing from memory is looked up before it is made (and, for a
            writer, kept once made); None for none.

        Returns
        -------
        FitMemory
            A view: fits kept through it are kept in this memory too.
        """
        view = object.__new__(FitMemory)
        view.entries, view._kept, view._lock = self.entries, self._kept, self._lock
        view.store_fits = store_fits
        return view

    def get(self, key: Hashable, fit: Callable[[], T]) -> T:
        """The fit kept under ``key``, else ``fit()``'s, then kept.

        Parameters
        ----------
        key : hashable
            Everything the fit depends on.
        fit : callable
            Makes the fit (called outside the lock: two threads asking for the same new
            fit may both make it; they make the same one).

        Returns
        -------
        object
        """
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        value = fit()
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)
        return value

    def forget(self) -> None:
        """Drop every kept fit."""
        with self._lock:
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)

    def __repr__(self) -> str:
        return f"FitMemory(entries={self.entries}, kept={len(self)})"
