"""Search methods by name: one line per method, no implementation imported until used.

Each entry names a class by dotted path (``"package.module:Class"``) and the settings its
name stands for; :func:`get_method` imports the module on first use, so listing the names
(the CLI's ``--search`` check, the app's method pickers) costs nothing. ``kind`` says
which row a method estimates: ``"model"`` (insert_M: a new model's row over the samples;
what the sweep and the pickers offer) or ``"sample"`` (insert_D: a new sample's column
over the models).

To add a method: write a module with a class that follows
:mod:`lifelong_core.methods.base`, and add one :func:`register` line below (or call
:func:`register` from your own code). It then runs in ``sweep --search NAME``, in every
page's method picker and in the conformance battery (tests/test_methods_conformance.py).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from lifelong_core.errors import InputError
from lifelong_core.sortsearch.search import RULES

KINDS = ("model", "sample")


@dataclass(frozen=True)
class MethodSpec:
    """A registered method: where its class lives and the settings its name fixes."""

    name: str
    target: str | type
    defaults: dict = field(default_factory=dict)
    kind: str = "model"

    def load(self) -> type:
        if not isinstance(self.target, str):
            return self.target
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


_REGISTRY: dict[str, MethodSpec] = {}


def register(name: str, target: str | type, *, kind: str = "model", **defaults) -> None:
    """Register ``target`` (a class, or ``"module:Class"``) under ``name`` with ``defaults``.

    Re-registering a name replaces it (so a test can register and remove its own).
    """
    if not isinstance(name, str) or not name.strip():
        raise InputError("a search method needs a non-empty name.")
    if kind not in KINDS:
        raise InputError(f"unknown method kind {kind!r}; use one of {', '.join(KINDS)}.")
    _REGISTRY[name] = MethodSpec(name, target, dict(defaults), kind)


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (no error if it is not there)."""
    _REGISTRY.pop(name, None)


# The threshold rules first (the sweep's prefix-count fast path serves them), then the
# baselines and the model-based estimators; insert_D last.
register("midpoint", "lifelong_core.methods.insert_m:InsertM", rule="midpoint")
register("reference", "lifelong_core.methods.insert_m:InsertM", rule="reference")
register("copy-nearest", "lifelong_core.methods.copy_nearest:CopyNearestExpand")
register("mirt", "lifelong_core.methods.irt:MIRTEstimator")
register("irt", "lifelong_core.methods.irt:MIRTEstimator", k=1)
register("neighbours", "lifelong_core.methods.neighbours:NeighboursEstimator")
register("mirt-cv", "lifelong_core.methods.tuning:TunedEstimator")
register("insert-d", "lifelong_core.methods.insert_d:InsertD", kind="sample")

THRESHOLD_RULES = RULES


def available_methods(kind: str | None = "model") -> list[str]:
    """Registered names in registration order: those of ``kind`` (None = every kind).

    The one list the command line's ``--search`` and the app's method pickers show."""
    return [s.name for s in _REGISTRY.values() if kind is None or s.kind == kind]


def method_spec(name: str) -> MethodSpec:
    """The registry entry of ``name``; InputError listing the names if unknown."""
    if name not in _REGISTRY:
        raise InputError(
            f"unknown search method {name!r}; available: {', '.join(available_methods())}.",
            param="search",
        )
    return _REGISTRY[name]


def get_method(name: str, **kwargs) -> object:
    """A fresh, unfitted method by name (``kwargs`` override the registered settings)."""
    spec = method_spec(name)
    method = spec.load()(**{**spec.defaults, **kwargs})
    # The registered name is the method's name in results, whatever its class calls itself.
    method.name = name
    return method


def is_threshold_rule(name: str) -> bool:
    """Whether ``name`` is a threshold rule (served by the sweep's prefix-count fast path)."""
    return name in THRESHOLD_RULES
