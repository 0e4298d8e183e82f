"""The first-N baseline: what ``lm_eval --limit N`` evaluates, and what its users report.

lm-evaluation-harness's ``--limit N`` runs the *first* ``N`` documents of each task, in the
task's own order (``itertools.islice`` over the task's test or validation documents in
``lm_eval.evaluator.evaluate``), not a random sample of them. Users then read the share
right on those documents, with the harness's standard error (the sample standard
deviation over ``sqrt(N)``, ``lm_eval.api.metrics.mean_stderr``). This module states that
practice as a method, so that every chart and backtest can show what it costs:

- ``select(n, budget)``: the budget is split equally across the tasks, as ``--limit``
  gives every task the same number of documents: ``budget // T`` each for ``T`` tasks,
  and the remainder one more each to the first tasks (in the order the tasks first
  appear among the items). A task with fewer items than its share is evaluated whole and
  the rest of its share goes to the other tasks the same way, so exactly ``budget`` items
  are evaluated. Within a task, its first items in the store's order: for an lm-eval
  import, the order of the run's samples file, which the harness writes in ``doc_id``
  order when it runs in one process; for the bundled leaderboard, the release's order.
- ``estimate``: the share right on the evaluated items (what the harness's group
  aggregate gives when every task ran the same number of documents), with the usual
  normal interval ``p +/- z sqrt(p (1 - p) / (n' - 1))``, the harness's standard error.

**The estimate is biased.** The first documents of a task are not a random sample of it:
benchmark files are often ordered by source, difficulty or topic, so the first ``N`` can
be easier or harder than the rest, and no interval computed from them accounts for that.
An equal split also over-weights small tasks when the accuracy asked for is over every
item. The interval is the one users compute, not a valid one: it has no
finite-population correction, it has zero width when every evaluated item is right (or
wrong), and its coverage of the truth can be far below 95%. The ``random`` baseline
(:mod:`.random_sample`) is the design-unbiased counterpart.

The tasks come from the store's sample table (each item's domain), passed by the
workflows as the ``groups`` setting (:func:`lifelong_core.methods.registry.get_method`,
the ``groups`` capability); without them every item is in one task, and the baseline is
the first ``n'`` items of the store's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lifelong_core.bits import bits_at, row_totals
from lifelong_core.errors import InputError
from lifelong_core.methods.base import (
    BaseMethod,
    Estimate,
    RowScores,
    check_fitted,
    check_observations,
    check_width,
)
from lifelong_core.sortsearch.search import check_budget


def allocate(sizes: ArrayLike, budget: int) -> np.ndarray:
    """Items per task for a total ``budget``: equal shares as ``lm_eval --limit`` gives.

    ``budget // T`` per task and one more to each of the first ``budget % T`` tasks; a
    task smaller than its share is taken whole and what it leaves is shared out again
    the same way among the tasks that still have items (module docstring).

    Parameters
    ----------
    sizes : array_like of int
        The number of items of each task, in task order, each at least 1.
    budget : int
        The total, in ``[1, sum(sizes)]``.

    Returns
    -------
    numpy.ndarray
        int64, items per task, summing to ``budget``.

    Raises
    ------
    InputError
        If ``budget`` is not a whole number in ``[1, sum(sizes)]``.

    Examples
    --------
    >>> allocate([541, 756, 894], 100).tolist()
    [34, 33, 33]
    >>> allocate([3, 50, 50], 30).tolist()
    [3, 14, 13]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    check_budget(int(sizes.sum()), budget)
    alloc = np.zeros(len(sizes), dtype=np.int64)
    left = int(budget)
    while left > 0:
        open_ = np.flatnonzero(alloc < sizes)
        q, r = divmod(left, len(open_))
        for i, t in enumerate(open_):
            give = min(q + (1 if i < r else 0), int(sizes[t] - alloc[t]))
            alloc[t] += give
            left -= give
    return alloc


class FirstN(BaseMethod):
    """The first ``n'`` items, split equally across the tasks: ``lm_eval --limit``.

    Parameters
    ----------
    groups : array_like, optional
        Each item's task, in column order (the store's sample table's domain); None puts
        every item in one task.
    level : float
        The level of the normal interval, in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> m = FirstN(groups=["a"] * 5 + ["b"] * 5).fit(np.zeros((2, 10), dtype=np.uint8))
    >>> m.select(10, 4).tolist()
    [0, 1, 5, 6]
    """

    name = "first-n"

    def __init__(self, groups: Any = None, level: float = 0.95) -> None:
        self.groups = groups
        self.level = level

    def _validate_params(self) -> None:
        if not 0 < self.level < 1:
            raise InputError(f"level must be in (0, 1), got {self.level}.", param="level")
        if self.groups is not None and np.asarray(self.groups, dtype=object).ndim != 1:
            raise InputError("groups must give one task per item.", param="groups")

    def fit(
        self,
        A_sort: np.ndarray | None = None,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> FirstN:
        """Learn the items' tasks; the cache itself plays no part in the first items.

        ``A_sort`` may be None when ``order`` (one entry per item) is given.

        Parameters
        ----------
        A_sort : numpy.ndarray, optional
            The cache (models x items); only its number of columns is used.
        order : numpy.ndarray, optional
            Any per-item order (not used to choose items); gives the number of items
            when ``A_sort`` is None.
        confidence : numpy.ndarray, optional
            Not used.

        Returns
        -------
        FirstN
            The method itself, fitted.

        Raises
        ------
        InputError
            If neither the cache nor an order says how many items there are, or the
            ``groups`` setting names another number of items.
        """
        if A_sort is not None:
            A = np.asarray(A_sort)
            if A.ndim != 2 or A.shape[1] < 1:
                raise InputError(
                    f"the Sort cache must be a matrix (models x samples), got shape {A.shape}."
                )
            n = int(A.shape[1])
        elif order is not None:
            n = len(np.asarray(order))
        else:
            raise InputError("fit needs the cache or its sample order to know the number of items.")
        return self._fit(n)

    def fit_packed(self, P: np.ndarray, n: int, order: np.ndarray, **_: object) -> FirstN:
        """:meth:`fit` for packed rows: only ``n`` is used, nothing is unpacked.

        Parameters
        ----------
        P : numpy.ndarray
            The packed Sort rows (not read).
        n : int
            The number of items.
        order : numpy.ndarray
            Not used.
        **_
            The packed fit's other options, not used.

        Returns
        -------
        FirstN
            The method itself, fitted.
        """
        return self._fit(int(n))

    def _fit(self, n: int) -> FirstN:
        self._validate_params()
        groups = (
            np.zeros(n, dtype=np.int64)
            if self.groups is None
            else np.asarray(self.groups, dtype=object)
        )
        if len(groups) != n:
            raise InputError(
                f"groups gives a task for {len(groups)} items, but the cache has {n}.",
                param="groups",
            )
        # Tasks named by their text, in the order they first appear (factorize numbers
        # them so, hashing the values instead of sorting them; then the few distinct values
        # as text, which may merge some); each task's items in column order.
        import pandas as pd

        code, values = pd.factorize(np.asarray(groups, dtype=object), use_na_sentinel=False)
        if pd.isna(values).any():  # factorize makes None and NaN one value; their texts differ
            task, names = pd.factorize(np.asarray(groups).astype(str))
        else:
            merged, names = pd.factorize(np.asarray(values, dtype=object).astype(str))
            task = merged[code]
        # Few tasks: as uint16 the stable sort is a radix sort (the same order).
        by = np.argsort(task.astype(np.uint16) if len(names) <= 1 << 16 else task, kind="stable")
        self.tasks_ = np.split(by, np.cumsum(np.bincount(task, minlength=len(names)))[:-1])
        self.n_ = n
        return self

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """The first items of each task (module docstring); ``rng`` is not used.

        Parameters
        ----------
        n : int
            The number of items; must be the fitted one.
        budget : int
            How many items to evaluate, in ``[1, n]``.
        rng : numpy.random.Generator, optional
            Not used: the first items are not drawn.

        Returns
        -------
        numpy.ndarray
            ``budget`` distinct int64 column numbers, ascending.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            If ``n`` is not the fitted number of items or ``budget`` is outside ``[1, n]``.
        """
        check_fitted(self, "n_")
        check_width(n, self.n_)
        alloc = allocate([len(t) for t in self.tasks_], budget)
        return np.sort(np.concatenate([t[:k] for t, k in zip(self.tasks_, alloc)])).astype(np.int64)

    def interval_of(self, correct: int, budget: int) -> tuple[float, float] | tuple[None, None]:
        """The interval users compute from ``correct`` right of ``budget`` items.

        Parameters
        ----------
        correct : int
            Items right.
        budget : int
            Items evaluated.

        Returns
        -------
        tuple
            ``p -/+ z sqrt(p (1 - p) / (budget - 1))``, clipped to [0, 1]; ``(None,
            None)`` for one item, which has no standard error.
        """
        if budget < 2:
            return None, None
        p = correct / budget
        z = NormalDist().inv_cdf(0.5 + self.level / 2.0)
        half = z * float(np.sqrt(p * (1.0 - p) / (budget - 1)))
        return max(p - half, 0.0), min(p + half, 1.0)

    def score_rows(
        self, selections: Sequence[np.ndarray], truth: np.ndarray, n: int
    ) -> list[RowScores]:
        """:meth:`estimate` of every row of ``truth`` at every selection, scored against
        the row, without building any row (:class:`~lifelong_core.methods.base.SweepScoring`):
        each row's share right on its evaluated items, the users' interval, and the counts
        of its per-sample row (the observed results, the share's constant elsewhere) from
        the row's total.

        Parameters
        ----------
        selections : sequence of numpy.ndarray
            One per budget, as :meth:`select` returned them.
        truth : numpy.ndarray
            The true rows, packed ((rows, ceil(n / 8)) uint8).
        n : int
            The number of items; must be the fitted one.

        Returns
        -------
        list of RowScores
            One per selection.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            If ``n`` is not the fitted number of items.
        """
        check_fitted(self, "n_")
        check_width(n, self.n_)
        totals = row_totals(truth, n)
        out = []
        for sel in selections:
            b = len(sel)
            right = bits_at(truth, sel).sum(axis=1, dtype=np.int64)
            ends = [self.interval_of(int(c), b) for c in right]
            lo = np.array([np.nan if x is None else x for x, _ in ends], dtype=np.float64)
            hi = np.array([np.nan if y is None else y for _, y in ends], dtype=np.float64)
            acc = right / b
            ones_rest = totals - right  # the row's ones among the items not evaluated
            wrong = np.where(acc >= 0.5, (n - b) - ones_rest, ones_rest)
            ones = np.where(acc >= 0.5, n - b, 0) + right
            out.append(RowScores(acc, lo, hi, wrong.astype(np.int64), ones.astype(np.int64)))
        return out

    def estimate(self, indices: np.ndarray, observed: np.ndarray) -> Estimate:
        """The share right on the evaluated items and the users' interval (biased).

        Parameters
        ----------
        indices : numpy.ndarray
            The evaluated items.
        observed : numpy.ndarray
            Their 0/1 results.

        Returns
        -------
        Estimate
            ``per_sample`` holds the observed results and, elsewhere, the constant the
            share implies (the method predicts no item: its ``per_sample`` capability is
            False).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            On results that do not match the indices.
        """
        check_fitted(self, "n_")
        idx, obs = check_observations(indices, observed, self.n_)
        acc = float(obs.mean())
        lo, hi = self.interval_of(int(obs.sum()), len(obs))
        prob = np.full(self.n_, acc)
        prob[idx] = obs
        per_sample = np.full(self.n_, int(acc >= 0.5), dtype=np.uint8)
        per_sample[idx] = obs
        return Estimate(acc=acc, lo=lo, hi=hi, per_sample=per_sample, prob=prob, level=self.level)
