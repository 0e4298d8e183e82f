"""One registry implementation: named entries of one kind, loaded lazily, never replaced by
accident, and open to other packages through entry points.

The search methods (:mod:`lifelong_core.methods.registry`) and the file readers
(:mod:`lifelong_core.io.readers`) are each one :class:`Registry`. An entry names its code
by dotted path (``"package.module:object"``, :func:`load`), so listing the names costs no
import; a name registered twice is refused unless the second registration says
``replace=True``; and another installed package adds entries by declaring an entry point
in the registry's group (``[project.entry-points."lifelong_benchmark_explorer.methods"]``
or ``"lifelong_benchmark_explorer.readers"``), whose object is a function called with no
arguments that makes its own ``register`` calls. The pattern follows
lm-evaluation-harness's registry and Python's entry points (``importlib.metadata``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from lifelong_core.errors import InputError, shown

E = TypeVar("E")

# The entry-point groups another package declares its methods and readers in.
METHODS_GROUP = "lifelong_benchmark_explorer.methods"
READERS_GROUP = "lifelong_benchmark_explorer.readers"


def load(target: str | object) -> object:
    """The object ``target`` names, importing its module on first use.

    Parameters
    ----------
    target : str or object
        ``"package.module:attribute"``; anything else is returned as it is (a class or a
        function registered directly).

    Returns
    -------
    object
    """
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def check_target(target: object, what: str, attribute: str = "name") -> None:
    """Refuse a dotted path that cannot name an object, without importing what is not
    imported yet (listing must stay free): its module must exist, and an attribute of a
    module already imported must be there.

    Parameters
    ----------
    target : object
        A ``"package.module:attribute"`` text, or an object (accepted as it is).
    what : str
        What the target is, for the sentence (``"method target"``).
    attribute : str
        What the part after the colon names, for the sentence (``"Class"``).

    Raises
    ------
    InputError
        If the text is not of that form, or its module cannot be imported, or an imported
        module has no such attribute.
    """
    if not isinstance(target, str):
        return
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr.isidentifier():
        raise InputError(f"{what} {shown(target)} is not of the form 'package.module:{attribute}'.")
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise InputError(
            f"{what} {shown(target)} names module {shown(module)}, which cannot be imported."
        )
    loaded = sys.modules.get(module)
    # A module still being imported (its own import registering it) is not looked into.
    initializing = getattr(getattr(loaded, "__spec__", None), "_initializing", False)
    if loaded is not None and not initializing and not hasattr(loaded, attr):
        raise InputError(f"{what} {shown(target)}: module {shown(module)} has no {shown(attr)}.")


class Registry(Generic[E]):
    """Entries of one kind by name, in registration order.

    Parameters
    ----------
    what : str
        What an entry is, for sentences (``"search method"``, ``"file format"``).
    group : str
        The entry-point group other packages register in (:data:`METHODS_GROUP`,
        :data:`READERS_GROUP`).
    param : str
        The parameter an unknown name is reported against (``"search"``, ``"kind"``).

    Examples
    --------
    >>> r = Registry("colour", "no.such.group", "colour")
    >>> r.add("red", 1)
    >>> r.add("red", 2)
    Traceback (most recent call last):
    ...
    lifelong_core.errors.InputError: a colour is already registered as 'red'; pass replace=True to replace it.
    >>> r.add("red", 2, replace=True); r.get("red")
    2
    """

    def __init__(self, what: str, group: str, param: str) -> None:
        self.what = what
        self.group = group
        self.param = param
        self._entries: dict[str, E] = {}
        self._discovered = False

    def add(self, name: str, entry: E, *, replace: bool = False) -> None:
        """Register ``entry`` under ``name``.

        Parameters
        ----------
        name : str
            The name users type.
        entry : object
            What the registry keeps for it.
        replace : bool
            Replace an entry already registered under ``name`` (refused otherwise, so a
            plugin cannot replace a built-in by taking its name).

        Raises
        ------
        InputError
            If ``name`` is taken and ``replace`` is not True.
        TypeError
            If ``replace`` is not True or False.
        """
        if not isinstance(replace, bool):
            raise TypeError(f"replace must be True or False, got {type(replace).__name__}.")
        if name in self._entries and not replace:
            raise InputError(
                f"a {self.what} is already registered as {shown(name)}; "
                "pass replace=True to replace it."
            )
        self._entries[name] = entry

    def remove(self, name: str) -> None:
        """Remove ``name`` (no error if it is not there).

        Parameters
        ----------
        name : str
            A registered name.
        """
        self._entries.pop(name, None)

    def get(self, name: str) -> E:
        """The entry registered as ``name``.

        Parameters
        ----------
        name : str
            A registered name.

        Returns
        -------
        object

        Raises
        ------
        InputError
            If nothing is registered as ``name``; the sentence lists the names and names
            the registry's parameter.
        """
        self.discover()
        if name not in self._entries:
            raise InputError(
                f"unknown {self.what} {shown(name)}; available: {', '.join(self._entries)}.",
                param=self.param,
            )
        return self._entries[name]

    def find(self, name: str) -> E | None:
        """The entry registered as ``name``, or None.

        Parameters
        ----------
        name : str
            Any name.

        Returns
        -------
        object or None
        """
        self.discover()
        return self._entries.get(name)

    def items(self) -> list[tuple[str, E]]:
        """Every (name, entry), in registration order.

        Returns
        -------
        list of tuple
        """
        self.discover()
        return list(self._entries.items())

    def __contains__(self, name: object) -> bool:
        self.discover()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self.discover()
        return iter(list(self._entries))

    def discover(self, hooks: Callable[[str], list] | None = None) -> None:
        """Run, once, the registration function of every installed entry point in the
        registry's group.

        A plugin that fails (it cannot be imported, or takes a name already registered)
        is left out with a warning naming it: the product runs on without it.

        Parameters
        ----------
        hooks : callable, optional
            ``hooks(group) -> entry points``; by default
            ``importlib.metadata.entry_points(group=group)`` (a test passes its own).
        """
        if self._discovered and hooks is None:
            return
        self._discovered = True
        found = entry_points(group=self.group) if hooks is None else hooks(self.group)
        for ep in found:
            try:
                ep.load()()
            except Exception as exc:  # a broken plugin must not stop the product
                warnings.warn(
                    f"the {self.what} plugin {ep.name!r} ({ep.value}) was not loaded: {exc}",
                    stacklevel=2,
                )
