"""insert_M (Prabhu et al., 2024, §3.2): the Sort & Search estimate of a new model.

The threshold rules ``midpoint`` and ``reference`` (:func:`lifelong_core.sortsearch.rule_thresholds`)
as a search method (:mod:`lifelong_core.methods.base`). The sweep serves the same rules on
its prefix-count fast path; this class gives the same numbers one model at a time.
"""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.base import BaseMethod, Estimate, check_fitted, check_width
from lifelong_core.sortsearch.search import (
    DEFAULT_RULE,
    RULES,
    positions_for,
    resolve_sampling,
    rule_thresholds,
)
from lifelong_core.sortsearch.sort import compute_order


def columns_to_sorted(
    rank: np.ndarray, columns: np.ndarray, observed: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Evaluated columns and their observations, as sorted positions.

    Parameters
    ----------
    rank : numpy.ndarray
        (n,) int64, the sorted position of each column (the inverse of the Sort order:
        ``rank[order[i]] == i``).
    columns : numpy.ndarray
        The evaluated column numbers, 1-D, distinct, in ``[0, n)``.
    observed : numpy.ndarray
        Their 0/1 results, in the order of ``columns``.

    Returns
    -------
    positions : numpy.ndarray
        int64 sorted positions of the evaluated columns, ascending.
    observed : numpy.ndarray
        uint8 results in the order of ``positions``.

    Raises
    ------
    InputError
        If ``columns`` and ``observed`` differ in length or are empty, a column lies
        outside ``[0, n)`` or repeats, or a result is not 0 or 1.
    """
    columns = np.asarray(columns, dtype=np.int64)
    observed = np.asarray(observed).astype(np.uint8).ravel()
    if columns.ndim != 1 or len(columns) != len(observed) or len(columns) == 0:
        raise InputError(
            f"need as many observations as evaluated samples ({len(observed)} vs {columns.size})."
        )
    if columns.min() < 0 or columns.max() >= len(rank):
        raise InputError(f"evaluated sample indices must lie in [0, {len(rank) - 1}].")
    if (observed > 1).any():
        raise InputError("observations must be 0 or 1.")
    pos = rank[columns]
    by = np.argsort(pos, kind="stable")
    pos = pos[by]
    if len(np.unique(pos)) != len(pos):
        raise InputError("evaluated sample indices must be distinct.")
    return pos, observed[by]


class InsertM(BaseMethod):
    """insert_M: evaluate a new model on ``n'`` samples, predict the rest.

    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §3.2 (Sort & Search; the Sort step of §3.1). Configure in ``__init__``;
    ``fit(A_sort)`` learns the easy -> hard order from the cache (or takes ``order``);
    ``select(n, budget, rng)`` returns the column numbers to evaluate;
    ``estimate(columns, observed)`` returns an :class:`Estimate` whose ``per_sample`` is
    the threshold prediction ``[1_t, 0_{n-t}]`` mapped back to column order and
    ``acc = t / n``; ``predict`` returns just the vector. The point estimate has no
    interval (``lo`` and ``hi`` are None).

    Parameters
    ----------
    rule : {"midpoint", "reference"}
        The threshold rule of :mod:`lifelong_core.sortsearch.search`: ``midpoint``
        (DP-search over the observations with the boundary placed midway between
        sampled positions) or ``reference`` (the published code's argmax).
    sampling : {"uniform", "random", "reference", "listing"}, optional
        Which sorted positions a budget evaluates; None is ``reference`` for the
        ``reference`` rule and ``uniform`` (stratum centres) otherwise.
    sort : {"sum", "confidence", "recursive"}
        The Sort method of §3.1.1 used by :meth:`fit`.
    ties : {"stable", "reference"}, optional
        The tie rule of the Sort; None is ``reference`` for the ``reference`` rule (the
        published code end to end) and ``stable`` otherwise.
    depth : int
        Levels of the ``recursive`` Sort.

    Attributes
    ----------
    name : str
        The registered name; the rule until one is set.
    sampling_ : str
        After :meth:`fit`: the sampling used (``sampling``, or the rule's default).
    order_ : numpy.ndarray
        After :meth:`fit`: the int64 easy -> hard order of the ``n_`` columns.
    rank_ : numpy.ndarray
        After :meth:`fit`: each column's position in ``order_``.

    Raises
    ------
    InputError
        For an unknown rule or sampling (when made by the registry, or at :meth:`fit`).
    """

    def __init__(
        self,
        rule: str = DEFAULT_RULE,
        sampling: str | None = None,
        sort: str = "sum",
        ties: str | None = None,
        depth: int = 2,
    ) -> None:
        self.rule = rule
        self.sampling = sampling
        self.sort = sort
        self.ties = ties
        self.depth = depth

    @property
    def name(self) -> str:
        """The registered name; the rule until one is set."""
        return self.__dict__.get("_name") or self.rule

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def _validate_params(self) -> None:
        if self.rule not in RULES:
            raise InputError(
                f"unknown threshold rule {self.rule!r}; use one of {', '.join(RULES)}.",
                param="rule",
            )
        self.sampling_ = resolve_sampling(self.sampling, self.rule)

    def fit(
        self,
        A_sort: np.ndarray | None,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> InsertM:
        """Learn the easy -> hard order of the samples (§3.1).

        Parameters
        ----------
        A_sort : numpy.ndarray or None
            (models, samples) 0/1 cache; may be None when ``order`` is given.
        order : numpy.ndarray, optional
            The easy -> hard order of the samples, used as is instead of sorting
            ``A_sort``.
        confidence : numpy.ndarray, optional
            Confidence of the true class, shaped like ``A_sort``; needed for
            ``sort="confidence"``.

        Returns
        -------
        InsertM
            The method itself, fitted.

        Raises
        ------
        InputError
            If neither ``A_sort`` nor ``order`` is given, or the Sort cannot run (an
            unknown sort or tie rule, a confidence sort without ``confidence``).
        """
        self._validate_params()
        ties = self.ties or ("reference" if self.rule == "reference" else "stable")
        if order is not None:
            self.order_ = np.asarray(order, dtype=np.int64)
        elif A_sort is None:
            raise InputError("insert_M needs the cache's rows or a sample order to fit.")
        else:
            self.order_ = compute_order(A_sort, self.sort, confidence, ties, self.depth)
        self.n_ = len(self.order_)
        self.rank_ = np.empty(self.n_, dtype=np.int64)
        self.rank_[self.order_] = np.arange(self.n_)
        return self

    def select_positions(self, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """The sorted positions (not column numbers) a budget evaluates.

        Parameters
        ----------
        budget : int
            How many samples to evaluate, ``n'``.
        rng : numpy.random.Generator, optional
            The random draw, needed for ``sampling="random"``.

        Returns
        -------
        numpy.ndarray
            int64 positions into :attr:`order_`, ascending (0 = easiest).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            For random sampling without ``rng``, or a budget the sampling's grid holds
            no position for.
        """
        check_fitted(self, "order_")
        return positions_for(self.sampling_, self.n_, budget, rng)

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """The column numbers of the samples to evaluate the new model on.

        Parameters
        ----------
        n : int
            The number of samples; must be the fitted one.
        budget : int
            How many samples to evaluate, ``n'``.
        rng : numpy.random.Generator, optional
            The random draw, needed for ``sampling="random"``.

        Returns
        -------
        numpy.ndarray
            ``budget`` distinct int64 column numbers, ascending.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            If ``n`` is not the fitted number of samples, or as :meth:`select_positions`.
        """
        check_fitted(self, "order_")
        check_width(n, self.n_)
        return np.sort(self.order_[self.select_positions(budget, rng)])

    def threshold(self, columns: np.ndarray, observed: np.ndarray) -> int:
        """The Search step's threshold ``t`` from the observed results (§3.2).

        Parameters
        ----------
        columns : numpy.ndarray
            The evaluated column numbers (as :meth:`select` returned them).
        observed : numpy.ndarray
            Their 0/1 results, in the same order.

        Returns
        -------
        int
            ``t`` in ``[0, n]``: the first ``t`` samples of the order are predicted
            correct.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            As :func:`columns_to_sorted`: mismatched, empty, repeated or out-of-range
            columns, or results other than 0/1.
        """
        check_fitted(self, "order_")
        pos, obs = columns_to_sorted(self.rank_, columns, observed)
        return int(rule_thresholds(self.rule, pos, obs, self.n_)[0])

    def predict(self, columns: np.ndarray, observed: np.ndarray) -> np.ndarray:
        """The predicted correctness of the new model on every sample.

        Parameters
        ----------
        columns : numpy.ndarray
            The evaluated column numbers.
        observed : numpy.ndarray
            Their 0/1 results, in the same order.

        Returns
        -------
        numpy.ndarray
            (n,) uint8 in column order: 1 on the ``t`` easiest samples of the order
            (:meth:`threshold`), 0 elsewhere. Evaluated samples are predicted like the
            others (their observed value is not copied in).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            As :meth:`threshold`.
        """
        t = self.threshold(columns, observed)
        y = np.zeros(self.n_, dtype=np.uint8)
        y[self.order_[:t]] = 1
        return y

    def estimate(self, columns: np.ndarray, observed: np.ndarray) -> Estimate:
        """The new model's estimated accuracy and per-sample prediction.

        Parameters
        ----------
        columns : numpy.ndarray
            The evaluated column numbers.
        observed : numpy.ndarray
            Their 0/1 results, in the same order.

        Returns
        -------
        Estimate
            ``acc = t / n``, no interval, ``per_sample`` = :meth:`predict`.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            As :meth:`threshold`.
        """
        y = self.predict(columns, observed)
        return Estimate(float(y.sum()) / self.n_, None, None, y)
