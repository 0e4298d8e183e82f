"""The CopyNearest&Expand baseline of Prabhu et al. (2024) (§4.2 Key Result 3) as a search method."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lifelong_core.bits import bits_at, mask_tail, pack_rows, row_totals
from lifelong_core.errors import InputError
from lifelong_core.methods.base import (
    BaseMethod,
    Estimate,
    RowScores,
    check_fitted,
    check_observations,
    check_width,
)
from lifelong_core.methods.parallel import one_blas_thread
from lifelong_core.sortsearch.search import check_budget

# Every term of the distances is a whole number of at most twice the evaluated samples:
# exact in float32 while that stays below 2**24.
_EXACT_FLOAT32 = 1 << 23


def nearest_rows(cache_at: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """The cache row nearest each observed row: the rule CopyNearest&Expand copies by.

    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §4.2 Key Result 3: the smallest Hamming distance on the evaluated samples,
    the lowest row on ties. The distances of every row to every cache row are one matrix
    product, ``|o| + |s| - 2 o.s``, exact because every term is a whole number.

    Parameters
    ----------
    cache_at : numpy.ndarray
        (models, n') 0/1: the cache's results on the evaluated samples.
    observed : numpy.ndarray
        (rows, n') 0/1: each new row's results on the same samples, in the same order.

    Returns
    -------
    numpy.ndarray
        int64 (rows,): the nearest cache row of each observed row.
    """
    dtype = np.float32 if cache_at.shape[1] < _EXACT_FLOAT32 else np.float64
    s = np.asarray(cache_at).astype(dtype)
    o = np.asarray(observed).astype(dtype)
    # A sweep makes many such modest products; BLAS threads gain little on them and on a
    # busy machine (the app's sessions side by side) mostly wait for each other.
    with one_blas_thread():
        dot = o @ s.T
    dist = o.sum(axis=1)[:, None] + s.sum(axis=1)[None, :] - 2 * dot
    return np.argmin(dist, axis=1).astype(np.int64)


def copied_counts(
    cache: np.ndarray,
    cache_totals: np.ndarray,
    cache_at: np.ndarray,
    truth: np.ndarray,
    columns: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Ones and mistakes of each row's CopyNearest&Expand estimate, from packed rows.

    The estimate is the :func:`nearest_rows` cache row with the evaluated samples set to
    the row's own results; its ones and its disagreements with the true row are counted
    without building it: popcounts of the copied row, minus what the evaluated samples
    put back.

    Parameters
    ----------
    cache : numpy.ndarray
        The cache packed (``(models, ceil(n / 8))`` uint8, :func:`lifelong_core.bits.pack_rows`).
    cache_totals : numpy.ndarray
        int64 (models,): ones in each cache row.
    cache_at : numpy.ndarray
        uint8 (models, n'): the cache at ``columns``.
    truth : numpy.ndarray
        The true rows packed (``(rows, ceil(n / 8))`` uint8).
    columns : numpy.ndarray
        The evaluated samples.
    n : int
        The length of a row.

    Returns
    -------
    tuple of numpy.ndarray
        int64 (rows,) ones of each estimate and int64 (rows,) samples where it differs
        from the true row.
    """
    obs = bits_at(truth, columns)
    near = nearest_rows(cache_at, obs)
    at = cache_at[near]
    differ = mask_tail(cache[near] ^ truth, n)
    wrong = np.bitwise_count(differ).sum(axis=1, dtype=np.int64) - np.count_nonzero(
        at != obs, axis=1
    )
    ones = cache_totals[near] - at.sum(axis=1, dtype=np.int64) + obs.sum(axis=1, dtype=np.int64)
    return ones, wrong


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
        return int(nearest_rows(self.A_[:, columns], observed[None, :])[0])

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

    def score_rows(
        self, selections: Sequence[np.ndarray], truth: np.ndarray, n: int
    ) -> list[RowScores]:
        """:meth:`estimate` of every row of ``truth`` at every selection, scored against
        the row, without building any row (:class:`~lifelong_core.methods.base.SweepScoring`):
        the nearest cache rows of all rows in one matrix product per selection, the counts
        from popcounts (:func:`copied_counts`).

        Parameters
        ----------
        selections : sequence of numpy.ndarray
            One per budget, as :meth:`select` returned them.
        truth : numpy.ndarray
            The true rows, packed ((rows, ceil(n / 8)) uint8).
        n : int
            The number of samples; must be the fitted one.

        Returns
        -------
        list of RowScores
            One per selection; no intervals.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InputError
            If ``n`` is not the fitted number of samples.
        """
        check_fitted(self, "A_")
        check_width(n, self.n_)
        cache = pack_rows(self.A_)
        totals = row_totals(cache, n)
        out = []
        for sel in selections:
            cols = np.asarray(sel, dtype=np.int64)
            ones, wrong = copied_counts(cache, totals, self.A_[:, cols], truth, cols, n)
            out.append(RowScores(ones / n, None, None, wrong, ones))
        return out
