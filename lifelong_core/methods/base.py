"""The contract every search method follows (docs/development/contracts.md), and nothing else.

A search method estimates a new row of the cache matrix (a new model's correctness on
every sample, insert_M of Prabhu et al. (2024) §3.2; or a new sample's correctness for every model,
insert_D, §3.3) from a budget of evaluations, in scikit-learn's shape:

- ``__init__(**settings)``: stores its settings as given, under their own names, and does
  nothing else (scikit-learn's rule, so that :meth:`BaseMethod.get_params`,
  :meth:`BaseMethod.set_params` and the ``repr`` read them back);
- ``fit(A_sort, order=None, confidence=None) -> self``: checks the settings
  (``InputError`` on a bad one) and learns from the cache (rows = what is already known,
  columns = the axis to estimate along); a method that needs the easy -> hard order and
  is given none derives it from the cache as the Sort does (Sorting by Sum, ties stable:
  :meth:`BaseMethod._order_of`); fitted state ends in ``_``;
- ``select(n, budget, rng) -> int64 array``: exactly ``budget`` distinct, sorted indices
  in ``[0, n)`` to evaluate (``n`` is the length of the estimated row);
- ``estimate(indices, observed) -> Estimate``: the estimate from the observed 0/1
  results at those indices.

``select`` and ``estimate`` before ``fit`` raise :class:`~lifelong_core.errors.NotFittedError`.
:class:`BaseMethod` gives every built-in method its parameters, ``repr`` and the order
rule; a method of one's own inherits it, or follows :class:`SearchMethod` on its own.
This module imports no implementation; :mod:`lifelong_core.methods.registry` names them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, TypeVar, cast, runtime_checkable

import numpy as np

from lifelong_core.errors import InputError, NotFittedError
from lifelong_core.sortsearch.sort import sort_by_sum

_Self = TypeVar("_Self", bound="BaseMethod")


@dataclass(frozen=True)
class Estimate:
    """One estimated row from ``n'`` evaluations (docs/development/contracts.md).

    Attributes
    ----------
    acc : float
        The estimated fraction of ones in the row: a model's accuracy (insert_M), or for
        insert_D the fraction of models that get the sample right.
    lo, hi : float or None
        The interval of ``acc`` (95% unless the method was given another level), or None
        when the method gives none.
    per_sample : numpy.ndarray
        The predicted 0/1 row (uint8, length ``n``); the evaluated entries carry their
        observed results.
    prob : numpy.ndarray or None
        The predicted P(1) of every entry, when the method has one.
    level : float or None
        The level of the interval (``lo``, ``hi``), or None without one.

    Examples
    --------
    >>> import numpy as np
    >>> print(Estimate(0.7125, 0.65, 0.77, np.ones(400, dtype=np.uint8), level=0.95))
    acc 0.7125, 95% interval [0.6500, 0.7700], over 400 entries
    """

    acc: float
    lo: float | None
    hi: float | None
    per_sample: np.ndarray
    prob: np.ndarray | None = None
    level: float | None = None

    def __str__(self) -> str:
        """A one-line summary: the estimate, its interval and level, the row's length.

        Returns
        -------
        str
        """
        n = len(self.per_sample)
        if self.lo is None or self.hi is None:
            return f"acc {self.acc:.4f}, no interval, over {n} entries"
        level = "" if self.level is None else f"{self.level:.0%} "
        return (
            f"acc {self.acc:.4f}, {level}interval [{self.lo:.4f}, {self.hi:.4f}], over {n} entries"
        )


@runtime_checkable
class SearchMethod(Protocol):
    """The contract of the module docstring: ``fit``, ``select``, ``estimate`` and a ``name``.

    :func:`~lifelong_core.methods.registry.get_method` returns every registered method as
    one (and checks at run time that the registered class has these members).

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol is not instantiated; a method's class follows it.

    Attributes
    ----------
    name : str
        The registered name, as results and pages show it.
    """

    name: str

    def fit(
        self,
        A_sort: np.ndarray | None,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> SearchMethod:
        """Learn from the cache.

        Parameters
        ----------
        A_sort : numpy.ndarray or None
            The cache, 0/1 (rows = what is already known, columns = the axis estimated
            along); None with an ``order`` for a method whose fit needs only the order
            and the number of samples (a large store's kept Sort order; the others refuse
            it).
        order : numpy.ndarray, optional
            The easy -> hard order of the columns, when the caller has one.
        confidence : numpy.ndarray, optional
            The true-class confidences of ``A_sort``, for a method that sorts by them.

        Returns
        -------
        SearchMethod
            The method itself, fitted.

        Raises
        ------
        InputError
            On a cache the method cannot use.
        """
        ...

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """The entries of a new row to evaluate.

        Parameters
        ----------
        n : int
            The length of the estimated row (the fitted cache's number of columns).
        budget : int
            How many entries to evaluate.
        rng : numpy.random.Generator, optional
            The random draw, for a method that samples at random.

        Returns
        -------
        numpy.ndarray
            Exactly ``budget`` distinct, sorted int64 indices in ``[0, n)``.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            On a budget outside ``[1, n]`` or an ``n`` other than the fitted one.
        """
        ...

    def estimate(self, indices: np.ndarray, observed: np.ndarray) -> Estimate:
        """The estimated row from the observed results.

        Parameters
        ----------
        indices : numpy.ndarray
            The evaluated entries (as :meth:`select` returned them).
        observed : numpy.ndarray
            Their 0/1 results, in the same order.

        Returns
        -------
        Estimate

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            On results that do not match the indices (length, 0/1, range).
        """
        ...


class BaseMethod:
    """What every search method shares: its settings as parameters, a readable ``repr``,
    and the rule that gives ``fit`` an order when the caller has none.

    Modelled on scikit-learn's ``BaseEstimator`` (Buitinck et al., 2013, "API design for
    machine learning software: experiences from the scikit-learn project", §2): the
    parameters are the arguments of ``__init__``, which stores each under its own name
    and does nothing else; :meth:`_validate_params` checks them and ``fit`` calls it
    first (:func:`~lifelong_core.methods.registry.get_method` calls it too, so a bad
    setting is refused when the method is made). A subclass writes ``fit``, ``select``
    and ``estimate`` (:class:`SearchMethod`).

    Parameters
    ----------
    **params
        None here; a subclass's ``__init__`` declares its own.

    Attributes
    ----------
    name : str
        The registered name, as results and pages show it; the class's own name until
        :func:`~lifelong_core.methods.registry.get_method` sets the registered one.

    Examples
    --------
    >>> from lifelong_core.methods import get_method
    >>> get_method("irt")
    MIRTEstimator(k=1)
    >>> get_method("irt").set_params(iters=5).get_params()["iters"]
    5
    """

    name: str = ""

    @classmethod
    def _param_names(cls) -> list[str]:
        """The names of ``__init__``'s parameters, in their declared order."""
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(
                    f"{cls.__name__}.__init__ takes *args or **kwargs; a search method "
                    "declares each setting by name."
                )
        return [p.name for p in params if p.name != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The method's settings, as ``__init__`` took them.

        Parameters
        ----------
        deep : bool
            Accepted for scikit-learn's signature; a setting that is itself a method is
            returned as it is.

        Returns
        -------
        dict
            Setting name -> value.
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self: _Self, **params: Any) -> _Self:
        """Change settings; they are checked when the method is next fitted.

        Parameters
        ----------
        **params
            Setting name -> new value.

        Returns
        -------
        BaseMethod
            The method itself.

        Raises
        ------
        InputError
            If a name is not one of the method's settings.
        """
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise InputError(
                    f"{type(self).__name__} has no setting {key!r}; its settings are "
                    f"{', '.join(valid) or 'none'}.",
                    param=key,
                )
            setattr(self, key, value)
        return self

    def estimate_many(self, designs: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[Estimate]:
        """:meth:`estimate` of several new rows, each with its own evaluated entries.

        The estimates of calling :meth:`estimate` on each design in turn; a method whose
        estimates share work across rows (a backtest's held-out models at one budget) does
        that work once.

        Parameters
        ----------
        designs : sequence of (numpy.ndarray, numpy.ndarray)
            ``(indices, observed)`` of each row, as :meth:`estimate` takes them.

        Returns
        -------
        list of Estimate
            One per design, in order.
        """
        estimate = cast(Any, self).estimate
        return [estimate(idx, obs) for idx, obs in designs]

    def __repr__(self) -> str:
        """``Class(setting=value, ...)``, with the settings that differ from their default.

        Returns
        -------
        str
        """
        signature = inspect.signature(type(self).__init__).parameters
        shown = []
        for key, value in self.get_params().items():
            default = signature[key].default
            same = default is not inspect.Parameter.empty and _same(value, default)
            if not same:
                shown.append(f"{key}={_short(value)}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def _validate_params(self) -> None:
        """Check the settings (``fit`` calls it first); nothing to check by default.

        Raises
        ------
        InputError
            In a subclass, on a bad setting, naming it.
        """

    @staticmethod
    def _order_of(A_sort: Any, order: Any) -> np.ndarray:
        """``order`` when given, else the cache's easy -> hard order as the Sort makes it
        (Sorting by Sum, equal sums in column order: Prabhu et al. (2024), *Efficient
        Lifelong Model Evaluation in an Era of Rapid Progress*, §3.1.1).

        Parameters
        ----------
        A_sort : array_like
            The (models, samples) 0/1 cache.
        order : array_like or None
            The caller's order.

        Returns
        -------
        numpy.ndarray
            int64, one entry per column of ``A_sort`` (checked by the method).

        Raises
        ------
        InputError
            If there is neither an order nor a cache matrix to sort.
        """
        if order is not None:
            return np.asarray(order, dtype=np.int64)
        A = None if A_sort is None else np.asarray(A_sort)
        if A is None or A.ndim != 2:
            raise InputError(
                "fit needs the cache as a (models x samples) matrix to order its samples.",
                param="A_sort",
            )
        return np.asarray(sort_by_sum(A), dtype=np.int64)


def _same(value: object, default: object) -> bool:
    """Whether a setting equals its default, for the ``repr`` (arrays by value)."""
    if value is default:
        return True
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):
        return False


def _short(value: object) -> str:
    """A setting as the ``repr`` shows it: arrays and long sequences by their size."""
    if isinstance(value, np.ndarray):
        return f"<array of {value.size}>"
    if isinstance(value, (list, tuple)) and len(value) > 6:
        return f"<{type(value).__name__} of {len(value)}>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@runtime_checkable
class PackedFitMethod(SearchMethod, Protocol):
    """A search method that can also fit from packed rows in bounded memory: what a
    method declaring :attr:`~lifelong_core.methods.registry.Capabilities.packed` offers
    besides its own whole-sweep implementation (a bounded sweep calls it)."""

    def fit_packed(
        self,
        P: np.ndarray,
        n: int,
        order: np.ndarray,
        progress: Callable[[float], object] | None = None,
        block_bytes: int | None = None,
        max_columns: int | None = None,
        seed: int = 0,
    ) -> PackedFitMethod:
        """:meth:`fit` from packed rows.

        Parameters
        ----------
        P : numpy.ndarray
            The Sort rows packed 8 samples a byte, ``(m, ceil(n / 8))`` uint8
            (:mod:`lifelong_core.bits`).
        n : int
            The number of samples.
        order : numpy.ndarray
            The easy -> hard order of the samples.
        progress : callable, optional
            ``progress(fraction)`` as the fit advances.
        block_bytes : int, optional
            The working memory of a block of columns.
        max_columns : int, optional
            Beyond this many samples, a fit on a seeded subset of columns first.
        seed : int
            The seed of that subset.

        Returns
        -------
        PackedFitMethod
            The method itself, fitted.
        """
        ...


@dataclass(frozen=True)
class RowScores:
    """One budget's estimates of many rows, as a sweep scores them, without their rows.

    What :meth:`SweepScoring.score_rows` returns per budget: for each row, what
    :meth:`SearchMethod.estimate` would give and how its per-sample row compares with the
    true row (the sample-level error and the kappa of the sweep need no more).

    Attributes
    ----------
    acc : numpy.ndarray
        (rows,) estimated accuracies.
    lo, hi : numpy.ndarray or None
        (rows,) interval ends (NaN where an estimate has none), or None for a method
        without intervals.
    wrong : numpy.ndarray
        (rows,) int64 entries of the per-sample row that differ from the true row.
    ones : numpy.ndarray
        (rows,) int64 ones in the per-sample row.
    """

    acc: np.ndarray
    lo: np.ndarray | None
    hi: np.ndarray | None
    wrong: np.ndarray
    ones: np.ndarray

    @classmethod
    def from_intervals(
        cls, intervals: Sequence[Any], wrong: np.ndarray, ones: np.ndarray
    ) -> RowScores:
        """From one interval per row (objects with ``acc``, ``lo``, ``hi``; ``lo`` None
        where there is no interval).

        Parameters
        ----------
        intervals : sequence
            One per row, e.g. :class:`~lifelong_core.methods.design.AccuracyInterval`.
        wrong, ones : numpy.ndarray
            As the attributes.

        Returns
        -------
        RowScores
        """

        def ends(name: str) -> np.ndarray:
            return np.array(
                [np.nan if getattr(iv, name) is None else getattr(iv, name) for iv in intervals],
                dtype=np.float64,
            )

        return cls(
            np.array([iv.acc for iv in intervals], dtype=np.float64),
            ends("lo"),
            ends("hi"),
            np.asarray(wrong, dtype=np.int64),
            np.asarray(ones, dtype=np.int64),
        )


@runtime_checkable
class SweepScoring(Protocol):
    """A search method that scores many evaluated rows at once, for a sweep.

    The sweep (:mod:`lifelong_core.sweeping.protocol`) calls :meth:`score_rows` instead of
    :meth:`SearchMethod.estimate` row by row when a method offers it: the same numbers,
    at a cost that grows with the evaluations rather than with the rows' length.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol is not instantiated; a method's class follows it.
    """

    def score_rows(
        self, selections: Sequence[np.ndarray], truth: np.ndarray, n: int
    ) -> list[RowScores]:
        """Estimate every row of ``truth`` from its entries at each selection, and score it.

        Parameters
        ----------
        selections : sequence of numpy.ndarray
            One per budget: the indices :meth:`SearchMethod.select` returned, checked
            (sorted, distinct, in ``[0, n)``).
        truth : numpy.ndarray
            The true rows, packed 8 entries a byte (``(rows, ceil(n / 8))`` uint8,
            :mod:`lifelong_core.bits`); a row's observations are its entries at a
            selection.
        n : int
            The length of a row.

        Returns
        -------
        list of RowScores
            One per selection, in order.
        """
        ...


@dataclass(frozen=True)
class ItemModel:
    """Fitted item parameters and the empirical prior over model abilities: the state a
    kept-state method keeps in the store (fitted by :mod:`lifelong_core.methods.irt`).

    Attributes
    ----------
    d : numpy.ndarray
        (n,) easiness of each sample.
    w : numpy.ndarray
        (n, k) discriminations.
    prior_mean : numpy.ndarray
        (k,) mean of the cache models' abilities.
    prior_prec : numpy.ndarray
        (k, k) inverse covariance of the cache models' abilities.
    theta : numpy.ndarray
        (m, k) the cache models' abilities.
    """

    d: np.ndarray
    w: np.ndarray
    prior_mean: np.ndarray
    prior_prec: np.ndarray
    theta: np.ndarray


class KeptStateMethod(PackedFitMethod, Protocol):
    """A search method whose fitted parameters the store keeps and follows across imports
    (:attr:`~lifelong_core.methods.registry.Capabilities.kept_state`): fitted from packed
    rows, its item model saved, and rebuilt from it without a refit.

    Not checked with ``isinstance``: ``item_`` exists only once fitted. Use
    :func:`is_kept_state_method`, which checks the methods.
    """

    @property
    def item_(self) -> ItemModel:
        """The fitted item model (what the store keeps)."""
        ...

    def kept_params(self) -> dict:
        """The settings the store keeps beside the item parameters.

        Returns
        -------
        dict
            JSON-able; :meth:`with_items` reads it back.
        """
        ...

    @property
    def has_items(self) -> bool:
        """Whether the fit made an item model (a self-tuning method may choose none)."""
        ...

    def with_items(
        self,
        item: ItemModel,
        order: np.ndarray,
        params: dict | None = None,
        rows: np.ndarray | None = None,
    ) -> KeptStateMethod:
        """This method from kept item parameters, without a refit.

        Parameters
        ----------
        item : ItemModel
            The kept item model.
        order : numpy.ndarray
            The kept easy -> hard order of the samples.
        params : dict, optional
            What :meth:`kept_params` returned when the items were kept.
        rows : numpy.ndarray, optional
            The dense 0/1 Sort rows the items were fitted on, for choices that read them.

        Returns
        -------
        KeptStateMethod
            The method itself, fitted.
        """
        ...


def is_kept_state_method(method: object) -> TypeGuard[KeptStateMethod]:
    """Whether ``method`` has the members of :class:`KeptStateMethod` that exist before a
    fit (``fit_packed``, ``kept_params``, ``with_items`` and the search-method contract).

    Parameters
    ----------
    method : object
        Typically what :func:`~lifelong_core.methods.registry.get_method` returned.

    Returns
    -------
    bool
    """
    return isinstance(method, PackedFitMethod) and all(
        callable(getattr(method, name, None)) for name in ("kept_params", "with_items")
    )


def check_fitted(method: object, attribute: str) -> None:
    """Check that ``method`` was fitted.

    Parameters
    ----------
    method : object
        A search method.
    attribute : str
        A fitted attribute its ``fit`` sets (ending in ``_``).

    Raises
    ------
    NotFittedError
        If ``method`` has no ``attribute``: it is used before ``fit``.
    """
    if not hasattr(method, attribute):
        raise NotFittedError(f"{type(method).__name__} is not fitted yet; call fit(A_sort) first.")


def check_width(n: int, fitted: int, what: str = "method") -> None:
    """Check that a call names the number of samples the method was fitted on.

    Parameters
    ----------
    n : int
        The number of samples the call names.
    fitted : int
        The number the method was fitted on.
    what : str
        How the message names the method ("method" or "estimator").

    Raises
    ------
    InputError
        If the two differ.
    """
    if n != fitted:
        raise InputError(f"the {what} was fitted on {fitted} samples, not {n}.")


def check_observations(
    positions: np.ndarray, observed: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated indices and their results, checked.

    Parameters
    ----------
    positions : numpy.ndarray
        The evaluated indices: 1-D, at least one, distinct, in ``[0, n)``.
    observed : numpy.ndarray
        Their 0/1 results, the same shape.
    n : int
        The length of the estimated row.

    Returns
    -------
    positions : numpy.ndarray
        int64.
    observed : numpy.ndarray
        uint8.

    Raises
    ------
    InputError
        If the shapes differ, nothing was evaluated, an index repeats or lies outside
        ``[0, n)``, or a result is not 0 or 1.
    """
    pos = np.asarray(positions, dtype=np.int64)
    obs = np.asarray(observed)
    if pos.ndim != 1 or obs.shape != pos.shape:
        raise InputError("positions and observed results must be 1-D arrays of the same length.")
    if len(pos) == 0:
        raise InputError("at least one evaluated sample is needed for an estimate.")
    # Linear in the evaluations: sorted indices (what select returns) are distinct when
    # strictly increasing; only unsorted ones are sorted to find a repeat.
    ascending = bool(np.all(pos[1:] > pos[:-1]))
    distinct = ascending or len(np.unique(pos)) == len(pos)
    if pos.min() < 0 or pos.max() >= n or not distinct:
        raise InputError(f"evaluated sample indices must be distinct and in [0, {n}).")
    if obs.dtype == bool:
        return pos, obs.astype(np.uint8)
    if not (np.issubdtype(obs.dtype, np.number) and ((obs == 0) | (obs == 1)).all()):
        raise InputError("observed results must be 0/1 correctness values.")
    return pos, obs.astype(np.uint8)
