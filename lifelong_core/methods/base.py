"""The contract every search method follows (docs/development/contracts.md), and nothing else.

A search method estimates a new row of the cache matrix (a new model's correctness on
every sample, insert_M of Prabhu et al. (2024) §3.2; or a new sample's correctness for every model,
insert_D, §3.3) from a budget of evaluations, in scikit-learn's shape:

- ``__init__(**settings)``: settings only, checked (``InputError`` on a bad one);
- ``fit(A_sort, order=None, confidence=None) -> self``: learn from the cache (rows =
  what is already known, columns = the axis to estimate along); fitted state ends in ``_``;
- ``select(n, budget, rng) -> int64 array``: exactly ``budget`` distinct, sorted indices
  in ``[0, n)`` to evaluate (``n`` is the length of the estimated row);
- ``estimate(indices, observed) -> Estimate``: the estimate from the observed 0/1
  results at those indices.

``select`` and ``estimate`` before ``fit`` raise :class:`~lifelong_core.errors.NotFittedError`.
This module imports no implementation; :mod:`lifelong_core.methods.registry` names them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeGuard, runtime_checkable

import numpy as np

from lifelong_core.errors import InputError, NotFittedError


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
    """

    acc: float
    lo: float | None
    hi: float | None
    per_sample: np.ndarray
    prob: np.ndarray | None = None


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
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> SearchMethod:
        """Learn from the cache.

        Parameters
        ----------
        A_sort : numpy.ndarray
            The cache, 0/1 (rows = what is already known, columns = the axis estimated
            along).
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
        progress: Callable[[float], None] | None = None,
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
    def from_intervals(cls, intervals, wrong: np.ndarray, ones: np.ndarray) -> RowScores:
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

    The sweep (:mod:`lifelong_core.sweep.protocol`) calls :meth:`score_rows` instead of
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

    def with_items(
        self, item: ItemModel, order: np.ndarray, params: dict | None = None
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
        raise NotFittedError(
            f"{type(method).__name__} is not fitted yet; call fit(A_sort, order) first."
        )


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
