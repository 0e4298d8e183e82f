"""Search methods by name: one line per method, no implementation imported until used.

Each entry names a class by dotted path (``"package.module:Class"``) and the settings its
name stands for; :func:`get_method` imports the module on first use, so listing the names
(the CLI's ``--method`` check, the app's method pickers) costs nothing. ``kind`` says
which row a method estimates: ``"model"`` (insert_M: a new model's row over the samples;
what the sweep and the pickers offer) or ``"sample"`` (insert_D: a new sample's column
over the models).

To add a method: write a module with a class that follows
:mod:`lifelong_core.methods.base`, and add one :func:`register` line below (or call
:func:`register` from your own code). It then runs in ``sweep --method NAME``, in every
page's method picker and in the conformance battery (tests/engine/test_methods_conformance.py).
Another installed package registers its methods through the entry-point group
``lifelong_benchmark_explorer.methods`` (:mod:`lifelong_core.registry`): the entry point
names a function of no arguments that calls :func:`register`; a name already taken is
refused there as anywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lifelong_core.errors import InputError, shown
from lifelong_core.methods.base import BaseMethod, SearchMethod
from lifelong_core.registry import METHODS_GROUP, Registry, check_target, load
from lifelong_core.sortsearch.search import RULES

KINDS = ("model", "sample")
FAMILIES = ("sort-search", "baseline", "estimator")


@dataclass(frozen=True)
class Capabilities:
    """What a registered method offers. Pages, commands and workflows ask these; none of
    them compares a method's name to decide what it can do.

    Attributes
    ----------
    family : str
        ``"sort-search"`` (a threshold rule of Prabhu et al., 2024, §3.2), ``"baseline"``
        (a reference point such as CopyNearest&Expand, §4.2) or ``"estimator"`` (a
        model-based estimator of the cache).
    threshold_rule : bool
        Served by the sweep's prefix-count fast path: takes a sampling grid, supports the
        error decomposition (§4.5), the packed kernel and the dask executor.
    interval : bool
        Gives a 95% interval of the accuracy (``est_lo``, ``est_hi``).
    per_sample : bool
        Predicts every unevaluated sample (sample-level MAE and kappa are meaningful).
        A method without (the ``random`` baseline) still returns a full row, as the
        contract asks, but sweeps and backtests report its sample-level MAE and kappa as
        undefined (NaN) instead of scoring that row.
    needs_confidence : bool
        Needs the store's true-class confidences.
    packed : bool
        Runs on packed rows in bounded memory (no dense copy of the cache).
    dask : bool
        Runs as dask tasks (``executor="dask"``).
    self_tuning : bool
        Chooses its own settings by cross-validation on the user's cache.
    kept_state : bool
        Its fitted parameters can be kept in the store and followed across imports.
    cheap : bool
        Costs little enough per evaluated model that an interactive page scores every
        model, not a seeded subset.
    packed_sweep : str or None
        ``"module:function"`` of a whole-sweep implementation on packed rows, used by a
        bounded sweep (``run_sweep(..., bounded=True)``) instead of the generic per-row path.
    groups : bool
        Uses each item's task (its ``groups`` setting: the store's sample table's domain,
        in column order), which the workflows pass through :func:`get_method`.
    batched : bool
        Scores a block of models at every budget at once in a sweep
        (:class:`~lifelong_core.methods.base.SweepScoring`): its cost per estimate grows
        with the evaluations, not with the items.
    rounds : bool
        May choose a budget's items in rounds, each from the results of the rounds before
        (``rounds(n, budget)``, ``select_next``, ``estimate_rounds``:
        :mod:`lifelong_core.methods.active`), where the caller asks for rounds and reads
        the results between them (``select --rounds``, the Python API's ``rounds=True``,
        the ``adaptive`` command); everywhere else (one ``select`` then ``estimate``, sweeps,
        backtests) ``select`` and ``estimate`` are its one-round design.
    """

    family: str = "estimator"
    threshold_rule: bool = False
    interval: bool = False
    per_sample: bool = True
    needs_confidence: bool = False
    packed: bool = False
    dask: bool = False
    self_tuning: bool = False
    kept_state: bool = False
    cheap: bool = False
    packed_sweep: str | None = None
    groups: bool = False
    batched: bool = False
    rounds: bool = False

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise InputError(
                f"unknown method family {shown(self.family)}; use one of {', '.join(FAMILIES)}."
            )
        for name, value in vars(self).items():
            if name not in ("family", "packed_sweep") and not isinstance(value, bool):
                raise TypeError(
                    f"capability {name} must be True or False, got {type(value).__name__}."
                )
        if self.packed_sweep is not None and not isinstance(self.packed_sweep, str):
            raise TypeError(
                f"packed_sweep must be 'module:function' text, got {type(self.packed_sweep).__name__}."
            )


@dataclass(frozen=True)
class MethodSpec:
    """A registered method: where its class lives, the settings its name fixes and what it
    offers."""

    name: str
    target: str | type
    defaults: dict = field(default_factory=dict)
    kind: str = "model"
    capabilities: Capabilities = field(default_factory=Capabilities)

    def load(self) -> type:
        """The method's class (its module is imported on first use).

        Raises
        ------
        TypeError
            If the registered target is not a class.
        """
        cls = load(self.target)
        if not isinstance(cls, type):
            raise TypeError(
                f"the target registered as {self.name!r} ({self.target}) is a "
                f"{type(cls).__name__}, not a search-method class."
            )
        return cls

    def load_packed_sweep(self) -> Any:
        """The method's whole-sweep implementation on packed rows, or None."""
        path = self.capabilities.packed_sweep
        return None if path is None else load(path)


# Third-party packages add methods through the entry-point group METHODS_GROUP
# (lifelong_core.registry): a function there calls register(...) as the lines below do.
_REGISTRY: Registry[MethodSpec] = Registry("search method", METHODS_GROUP, "search")


def _check_target(target: object) -> None:
    """Refuse a target that cannot be a search-method class, without importing what is not
    imported yet: a class, or a dotted path whose module exists (and, when imported, holds
    a class of that name)."""
    if isinstance(target, type):
        return
    if not isinstance(target, str):
        raise TypeError(
            f"a method's target must be a class or 'package.module:Class', got {type(target).__name__}."
        )
    check_target(target, "method target", "Class")
    module, _, attr = target.partition(":")
    loaded = sys.modules.get(module)
    initializing = getattr(getattr(loaded, "__spec__", None), "_initializing", False)
    if (
        loaded is not None
        and not initializing
        and not isinstance(getattr(loaded, attr, None), type)
    ):
        raise InputError(f"method target {shown(target)} is not a class of module {shown(module)}.")


def register(
    name: str,
    target: str | type,
    *,
    kind: str = "model",
    capabilities: Capabilities | None = None,
    replace: bool = False,
    **defaults: Any,
) -> None:
    """Register ``target`` (a class, or ``"module:Class"``) under ``name``.

    Parameters
    ----------
    name : str
        The name users type (``--method NAME``) and pages show.
    target : str or type
        The class, or its dotted path ``"package.module:Class"`` (imported on first use).
    kind : {"model", "sample"}
        Which row the method estimates: a new model's (insert_M) or a new sample's
        (insert_D).
    capabilities : Capabilities, optional
        What the method offers; by default an estimator with no interval.
    replace : bool
        Replace a method already registered under ``name`` (refused otherwise, so that a
        name such as ``random`` is never replaced by accident).
    **defaults
        The settings the name stands for, passed to the class.

    Raises
    ------
    InputError
        If the name is empty, not printable text on one line or already registered (without
        ``replace``), the kind unknown, or the target's module cannot be imported (or, when
        it is imported already, holds no such class).
    TypeError
        If the target is neither a class nor text, or ``capabilities`` is not a
        :class:`Capabilities`.
    """
    from lifelong_core.io.limits import check_name

    if not isinstance(name, str) or not name.strip():
        raise InputError("a search method needs a non-empty name.")
    check_name(name, "method name")
    if kind not in KINDS:
        raise InputError(f"unknown method kind {shown(kind)}; use one of {', '.join(KINDS)}.")
    if capabilities is not None and not isinstance(capabilities, Capabilities):
        raise TypeError(f"capabilities must be a Capabilities, got {type(capabilities).__name__}.")
    _check_target(target)
    _REGISTRY.add(
        name,
        MethodSpec(name, target, dict(defaults), kind, capabilities or Capabilities()),
        replace=replace,
    )


def unregister(name: str) -> None:
    """Remove a method from the registry (no error if it is not there).

    Parameters
    ----------
    name : str
        The registered name, as given to :func:`register`.
    """
    _REGISTRY.remove(name)


_RULE = Capabilities(family="sort-search", threshold_rule=True, packed=True, dask=True, cheap=True)
_ITEM_MODEL = Capabilities(interval=True, packed=True, kept_state=True, batched=True)

# The threshold rules first (the sweep's prefix-count fast path serves them), then the
# baselines and the model-based estimators; insert_D last.
register("midpoint", "lifelong_core.methods.insert_m:InsertM", capabilities=_RULE, rule="midpoint")
register(
    "reference", "lifelong_core.methods.insert_m:InsertM", capabilities=_RULE, rule="reference"
)
register(
    "copy-nearest",
    "lifelong_core.methods.copy_nearest:CopyNearestExpand",
    capabilities=Capabilities(
        family="baseline",
        packed=True,
        cheap=True,
        packed_sweep="lifelong_core.sweeping.copy_nearest:copy_nearest_packed",
        batched=True,
    ),
)
# A uniform random sample of items and its exact interval: the design-unbiased yardstick.
# It predicts no unevaluated item, so sample-level scores are undefined for it.
register(
    "random",
    "lifelong_core.methods.random_sample:RandomSample",
    capabilities=Capabilities(
        family="baseline", interval=True, per_sample=False, packed=True, cheap=True
    ),
)
# What ``lm_eval --limit N`` evaluates: the first items of each task, and the interval its
# users compute from them (biased: the first items are not a random sample).
register(
    "first-n",
    "lifelong_core.methods.first_n:FirstN",
    capabilities=Capabilities(
        family="baseline",
        interval=True,
        per_sample=False,
        packed=True,
        cheap=True,
        groups=True,
        batched=True,
    ),
)
register("mirt", "lifelong_core.methods.irt:MIRTEstimator", capabilities=_ITEM_MODEL)
register("irt", "lifelong_core.methods.irt:MIRTEstimator", capabilities=_ITEM_MODEL, k=1)
register(
    "neighbours",
    "lifelong_core.methods.neighbours:NeighboursEstimator",
    capabilities=Capabilities(interval=True),
)
register(
    "mirt-cv",
    "lifelong_core.methods.tuning:TunedEstimator",
    capabilities=Capabilities(interval=True, self_tuning=True),
)
# The default remembers its cross-validated choice per cache in the user's cache folder
# (methods/tuning_memory.py: $LBE_TUNING_CACHE); get_method("auto", memory=None) does not.
register(
    "auto",
    "lifelong_core.methods.auto:AutoEstimator",
    capabilities=Capabilities(
        interval=True, packed=True, self_tuning=True, kept_state=True, batched=True, rounds=True
    ),
    memory="user",
)
# Active item choice in two rounds: a stratified pilot, then one item per zone where the
# prediction is least sure (Zrnic & Candès, 2024; Kossen et al., 2021).
register(
    "active",
    "lifelong_core.methods.active:ActiveEstimator",
    capabilities=Capabilities(interval=True, rounds=True),
)
register(
    "insert-d",
    "lifelong_core.methods.insert_d:InsertD",
    kind="sample",
    capabilities=Capabilities(family="sort-search"),
)

# The product's one default estimator: the command line, the pages and the Python API
# all start from it. ``auto`` chooses, on the user's own cache and per budget, between
# mirt, Sort & Search's threshold and CopyNearest&Expand (methods/auto.py): a fixed mirt
# loses to Sort & Search on a cache of a dozen models, and wins by far on hundreds.
DEFAULT_METHOD = "auto"
# The published code of Prabhu et al. (2024), Listing 1: the yardstick other methods'
# regret is measured against by default.
PUBLISHED_METHOD = "reference"
# The reference point every chart and backtest compares with: a uniform random sample of
# items (is the chosen method better than random?).
BASELINE_METHOD = "random"
# What users of ``lm_eval --limit`` do today, drawn and reported beside it.
LIMIT_METHOD = "first-n"

THRESHOLD_RULES = RULES


def available_methods(kind: str | None = "model") -> list[str]:
    """Registered method names, in registration order.

    The one list the command line's ``--method`` and the app's method pickers show.

    Parameters
    ----------
    kind : {"model", "sample"} or None
        Methods that estimate a new model's row (insert_M), a new sample's column
        (insert_D), or every kind (None).

    Returns
    -------
    list of str

    Raises
    ------
    InputError
        If ``kind`` is not one of the kinds (or None).
    """
    if kind is not None and kind not in KINDS:
        raise InputError(
            f"unknown method kind {shown(kind)}; use one of {', '.join(KINDS)} (or None for every kind).",
            param="kind",
        )
    return [s.name for _, s in _REGISTRY.items() if kind is None or s.kind == kind]


def method_spec(name: str) -> MethodSpec:
    """The registry entry of a method.

    Parameters
    ----------
    name : str
        A registered method name.

    Returns
    -------
    MethodSpec
        Where its class lives, the settings its name fixes, its kind and capabilities.

    Raises
    ------
    InputError
        If ``name`` is not registered (the sentence lists the available names and
        names the parameter ``search``).
    TypeError
        If ``name`` is not text.
    """
    if not isinstance(name, str):
        raise TypeError(f"a method name must be text, got {type(name).__name__}.")
    if name not in _REGISTRY:
        raise InputError(
            f"unknown search method {shown(name)}; available: {', '.join(available_methods())}.",
            param="search",
        )
    return _REGISTRY.get(name)


def get_method(
    name: str, *, groups: Sequence[object] | np.ndarray | None = None, **kwargs: Any
) -> SearchMethod:
    """A fresh, unfitted method by name.

    Parameters
    ----------
    name : str
        A registered method.
    groups : array_like, optional
        Each item's task, in the cache's column order (the store's sample table's
        domain): passed as the ``groups`` setting to a method that declares the ``groups``
        capability, ignored for any other, so a caller with a sample table passes it
        whatever the method.
    **kwargs
        Settings overriding those the name stands for.

    Returns
    -------
    SearchMethod
        With ``fit(A_sort, order=None)``, ``select(n, budget, rng)`` and
        ``estimate(columns, observed)`` (:mod:`lifelong_core.methods.base`); every
        built-in method is also a :class:`~lifelong_core.methods.base.BaseMethod`
        (``get_params``, ``set_params``, a readable ``repr``).

    Raises
    ------
    InputError
        If no method is registered under ``name``, or a setting is refused by the class.
    TypeError
        If the registered class does not follow :class:`~lifelong_core.methods.base.SearchMethod`
        (a registration bug, not bad input).

    Examples
    --------
    >>> m = get_method("midpoint")
    >>> m.name
    'midpoint'
    """
    spec = method_spec(name)
    if groups is not None and spec.capabilities.groups:
        kwargs["groups"] = groups
    method = spec.load()(**{**spec.defaults, **kwargs})
    # The registered name is the method's name in results, whatever its class calls itself.
    method.name = name
    if isinstance(method, BaseMethod):
        # Settings are checked in fit (scikit-learn's rule); checking them here as well
        # refuses a bad setting where the caller gave it.
        method._validate_params()
    if not isinstance(method, SearchMethod):
        raise TypeError(
            f"the class registered as {name!r} ({spec.target}) does not follow the search-method "
            "contract of lifelong_core.methods.base.SearchMethod (fit, select, estimate)."
        )
    return method


def capabilities(name: str) -> Capabilities:
    """What the method registered as ``name`` declares it offers.

    Parameters
    ----------
    name : str
        A registered method.

    Returns
    -------
    Capabilities

    Raises
    ------
    InputError
        If no method is registered under ``name``.
    """
    return method_spec(name).capabilities


def predicts_samples(method: object) -> bool:
    """Whether a method predicts the samples it was not run on.

    Parameters
    ----------
    method : str or object
        A method name, or a method object (its ``name`` attribute is looked up).

    Returns
    -------
    bool
        The registered ``per_sample`` capability; True for a name or object that is not
        registered (an unregistered method is taken at its word: its row is scored).
    """
    name = method if isinstance(method, str) else getattr(method, "name", None)
    spec = _REGISTRY.find(name) if isinstance(name, str) else None
    return True if spec is None else spec.capabilities.per_sample


def plays_rounds(method: object, n: int | None = None, budget: int | None = None) -> bool:
    """Whether a method chooses its items in rounds (at ``budget`` items of ``n``, when
    given: a method may play one round at some budgets).

    Parameters
    ----------
    method : str or object
        A method name, or a method object (its ``name`` attribute is looked up); a fitted
        object is needed to ask about a budget.
    n : int, optional
        The number of items.
    budget : int, optional
        The total number of items to evaluate.

    Returns
    -------
    bool
        The registered ``rounds`` capability (False for a name or object that is not
        registered) and, with ``budget``, whether the method plans more than one round
        for it.
    """
    name = method if isinstance(method, str) else getattr(method, "name", None)
    spec = _REGISTRY.get(name) if isinstance(name, str) else None
    if spec is None or not spec.capabilities.rounds:
        return False
    plan = getattr(method, "rounds", None)
    if budget is None or plan is None:
        return True
    return len(plan(n, budget)) > 1


def methods_with(kind: str | None = "model", **wanted: object) -> list[str]:
    """Registered names (in registration order) whose capabilities match ``wanted``.

    Parameters
    ----------
    kind : {"model", "sample"} or None
        As for :func:`available_methods`.
    **wanted
        Capability values to match, e.g. ``interval=True``.

    Returns
    -------
    list of str

    Examples
    --------
    >>> methods_with(kept_state=True)
    ['mirt', 'irt', 'auto']
    """
    return [
        name
        for name in available_methods(kind)
        if all(getattr(_REGISTRY.get(name).capabilities, k) == v for k, v in wanted.items())
    ]


def kept_methods() -> list[str]:
    """The registered methods whose fitted parameters the store can keep."""
    return methods_with(kept_state=True)


def kept_method(method: str | None = None) -> str:
    """The method whose fitted state the store keeps.

    Parameters
    ----------
    method : str, optional
        A method the caller chose; returned as given (not checked).

    Returns
    -------
    str
        ``method`` when given; else the product's default estimator when its parameters
        can be kept, else the first registered method that can.
    """
    if method is not None:
        return method
    kept = kept_methods()
    return DEFAULT_METHOD if DEFAULT_METHOD in kept else kept[0]


def is_threshold_rule(name: str) -> bool:
    """Whether a name is a registered threshold rule (the sweep's prefix-count fast path).

    Parameters
    ----------
    name : str
        Any string; an unregistered one is not a threshold rule.

    Returns
    -------
    bool
        The registered ``threshold_rule`` capability; False when ``name`` is unknown.
    """
    spec = _REGISTRY.find(name)
    return spec is not None and spec.capabilities.threshold_rule


def describe_methods(kind: str = "model") -> str:
    """One sentence per family of the registered methods, for a picker's or a flag's help.

    Read from the registry, so a method registered later is described too.

    Parameters
    ----------
    kind : {"model", "sample"}
        Which methods to describe.

    Returns
    -------
    str
    """
    names = available_methods(kind)
    groups = {f: [m for m in names if _REGISTRY.get(m).capabilities.family == f] for f in FAMILIES}
    what = {
        "sort-search": "Sort & Search threshold rules (Prabhu et al., 2024, §3.2)",
        "baseline": "baselines",
        "estimator": "model-based estimators",
    }
    parts = []
    for family, members in groups.items():
        if not members:
            continue
        labelled = [
            f"{m} (95% interval)" if _REGISTRY.get(m).capabilities.interval else m for m in members
        ]
        parts.append(f"{what[family]}: {', '.join(labelled)}")
    default = f"default {DEFAULT_METHOD}; " if DEFAULT_METHOD in names else ""
    return default + "; ".join(parts)
