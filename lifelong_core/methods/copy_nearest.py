"""The CopyNearest&Expand baseline of Prabhu et al. (2024) (§4.2 Key Result 3) as a search method."""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.base import (
    BaseMethod,
    Estimate,
    check_fitted,
    check_observations,
    check_width,
)
from lifelong_core.sortsearch.search import check_budget


class CopyNearestExpand(BaseMethod):
    """CopyNearest&Expand baseline, as a search method.

    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §4.2 Key Result 3 (a baseline after Vivek et al.). ``n'`` samples drawn
    uniformly at random *without* the Sort order; the Sort model whose row agrees most
    with the new model on those samples (smallest Hamming distance, lowest row on ties)
    lends its row for the other ``n - n'`` samples; the evaluated samples keep their
    observed values. ``acc`` is the mean of that vector; there is no interval. Takes no
    settings.

    Attributes
    ----------
    name : str
        The registered name, ``copy-nearest``.
    A_ : numpy.ndarray
        After :meth:`fit`: the cache, uint8 (models, samples).
    n_ : int
        After :meth:`fit`: the number of samples.
    """

    name = "copy-nearest"

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> CopyNearestExpand:
        """Keep the cache whose rows are lent.

        Parameters
        ----------
        A_sort : numpy.ndarray
            (models, samples) 0/1 cache.
        order : numpy.ndarray, optional
            Not used: the baseline samples without the Sort order (the contract's
            signature has it).
        confidence : numpy.ndarray, optional
            Not used (the contract's signature has it).

        Returns
        -------
        CopyNearestExpand
            The method itself, fitted.
        """
        self.A_ = np.asarray(A_sort).astype(np.uint8, copy=False)
        self.n_ = self.A_.shape[1]
        return self

    def select(self, n: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """Draw the samples to evaluate, uniformly at random without replacement.

        Parameters
        ----------
        n : int
            The number of samples; must be the fitted one.
        budget : int
            How many samples to evaluate, ``n'``, in ``[1, n]``.
        rng : numpy.random.Generator
            The random draw; required despite the default (the signature is the
            contract's).

        Returns
        -------
        numpy.ndarray
            ``budget`` distinct int64 column numbers, ascending.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            If ``n`` is not the fitted number of samples, the budget is not a whole
            number in ``[1, n]``, or ``rng`` is None.
        """
        check_fitted(self, "A_")
        check_width(n, self.n_)
        check_budget(n, budget)
        if rng is None:
            raise InputError(
                "copy-nearest samples at random and needs a random generator (pass a seed)."
            )
        return np.sort(rng.choice(n, size=budget, replace=False)).astype(np.int64)

    def nearest(self, columns: np.ndarray, observed: np.ndarray) -> int:
        """The cache row closest to the new model on the evaluated samples.

        Parameters
        ----------
        columns : numpy.ndarray
            The evaluated column numbers.
        observed : numpy.ndarray
            The new model's 0/1 results on them, in the same order.

        Returns
        -------
        int
            The row of the cache with the smallest Hamming distance to ``observed`` on
            ``columns``; the lowest such row on ties.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            As :func:`~lifelong_core.methods.base.check_observations`: mismatched,
            empty, repeated or out-of-range columns, or results other than 0/1.
        """
        check_fitted(self, "A_")
        columns, observed = check_observations(columns, observed, self.n_)
        dist = (self.A_[:, columns] != observed).sum(axis=1)
        return int(np.argmin(dist))

    def estimate(self, columns: np.ndarray, observed: np.ndarray) -> Estimate:
        """The nearest row, expanded: the estimate of the new model.

        Parameters
        ----------
        columns : numpy.ndarray
            The evaluated column numbers.
        observed : numpy.ndarray
            The new model's 0/1 results on them, in the same order.

        Returns
        -------
        Estimate
            ``per_sample`` is the :meth:`nearest` row with the evaluated entries set to
            their observed values; ``acc`` its mean; no interval.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            As :meth:`nearest`.
        """
        check_fitted(self, "A_")
        columns, observed = check_observations(columns, observed, self.n_)
        y = self.A_[self.nearest(columns, observed)].copy()
        y[columns] = observed
        return Estimate(float(y.mean()), None, None, y)
