"""insert_D (Prabhu et al., 2024, §3.3): the Sort & Search estimate of a new sample.

The search of :mod:`lifelong_core.methods.insert_m` on the transpose of the cache: models
are ordered best first, a budget of models is run on the new sample, and the threshold
predicts which of the others get it right. A search method of kind ``"sample"``
(:mod:`lifelong_core.methods.base`): ``n`` in ``select`` is the number of models.
"""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.base import BaseMethod, Estimate, check_fitted
from lifelong_core.methods.insert_m import InsertM
from lifelong_core.sortsearch.search import DEFAULT_RULE
from lifelong_core.sortsearch.sort import order_from_sums, sort_models


class InsertD(BaseMethod):
    """insert_D: the Sort & Search of insert_M on the transpose of the cache.

    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §3.3 (the insertion of new samples, kept stable as Appendix G requires).
    ``fit(A)`` orders models best first (Sorting by Sum on ``A.T``) and keeps the
    per-sample sums; ``select(m, budget, rng)`` returns the model rows to run on a new
    sample; ``estimate(rows, observed)`` predicts its correctness for every model
    (``per_sample`` has length m, original model order; ``acc`` = predicted fraction of
    models that get it right); ``place(rows, observed)`` is its position in the fitted
    easy -> hard sample order.

    Parameters
    ----------
    rule : {"midpoint", "reference"}
        The threshold rule of the search over models (as for
        :class:`~lifelong_core.methods.insert_m.InsertM`).
    sampling : {"uniform", "random", "reference", "listing"}, optional
        Which positions of the model order a budget evaluates; None picks the rule's
        default (``reference`` for the ``reference`` rule, ``uniform`` otherwise).

    Attributes
    ----------
    model_order_ : numpy.ndarray
        After a fit: the int64 model rows, best first.
    sample_sums_ : numpy.ndarray
        After a fit: each sample's number of models that get it right.
    sample_order_ : numpy.ndarray
        After a fit: the samples' easy -> hard order by those sums, ties stable.

    Raises
    ------
    InputError
        For an unknown rule or sampling.
    """

    name = "insert-d"

    def __init__(self, rule: str = DEFAULT_RULE, sampling: str | None = None) -> None:
        self.rule = rule
        self.sampling = sampling

    def _validate_params(self) -> None:
        InsertM(rule=self.rule, sampling=self.sampling)._validate_params()

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> InsertD:
        """Fit on the cache: order the models best first and keep the sample sums.

        Parameters
        ----------
        A_sort : numpy.ndarray
            (models, samples) 0/1 cache.
        order : numpy.ndarray, optional
            The model order, best first (default: Sorting by Sum on the transpose,
            :func:`~lifelong_core.sortsearch.sort.sort_models`).
        confidence : numpy.ndarray, optional
            Not used; in the signature because the search-method contract has it.

        Returns
        -------
        InsertD
            The method itself, fitted.

        Raises
        ------
        InputError
            If ``A_sort`` is not a non-empty 2-dimensional array.
        """
        self._validate_params()
        A = np.asarray(A_sort)
        if A.ndim != 2 or A.shape[0] == 0 or A.shape[1] == 0:
            raise InputError("insert_D needs a non-empty 2-dimensional cache (models x samples).")
        self.model_order_ = sort_models(A) if order is None else np.asarray(order, dtype=np.int64)
        self._m = InsertM(rule=self.rule, sampling=self.sampling)
        self._m.fit(A.T, order=self.model_order_)
        self.sample_sums_ = A.sum(axis=0, dtype=np.int64)
        self.sample_order_ = order_from_sums(self.sample_sums_)
        return self

    def fit_sums(self, model_sums: np.ndarray, sample_sums: np.ndarray) -> InsertD:
        """:meth:`fit` from the cache's sums alone, so a large cache is never read whole.

        Parameters
        ----------
        model_sums : numpy.ndarray
            (models,) the cache's row sums: each model's number of correct samples.
        sample_sums : numpy.ndarray
            (samples,) the cache's column sums: each sample's number of correct models.

        Returns
        -------
        InsertD
            The method itself, fitted; the same state as :meth:`fit` with the default
            order on the matrix those sums came from.
        """
        self._validate_params()
        self.model_order_ = order_from_sums(np.asarray(model_sums, dtype=np.int64))
        self._m = InsertM(rule=self.rule, sampling=self.sampling)
        self._m.fit(None, order=self.model_order_)
        self.sample_sums_ = np.asarray(sample_sums, dtype=np.int64)
        self.sample_order_ = order_from_sums(self.sample_sums_)
        return self

    def select(self, m: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """The model rows to run on a new sample.

        Parameters
        ----------
        m : int
            The number of models; must be the fitted one.
        budget : int
            How many models to run, ``m'``.
        rng : numpy.random.Generator, optional
            The random draw, needed for ``sampling="random"``.

        Returns
        -------
        numpy.ndarray
            ``budget`` distinct int64 model rows, ascending.

        Raises
        ------
        NotFittedError
            Before a fit.
        InputError
            If ``m`` is not the fitted number of models, for random sampling without
            ``rng``, or a budget the sampling's grid holds no position for.
        """
        check_fitted(self, "model_order_")
        return self._m.select(m, budget, rng)

    def estimate(self, rows: np.ndarray, observed: np.ndarray) -> Estimate:
        """The new sample's predicted correctness for every model.

        Parameters
        ----------
        rows : numpy.ndarray
            The model rows run on the sample (as :meth:`select` returned them).
        observed : numpy.ndarray
            Whether each of them got it right (0/1), in the same order.

        Returns
        -------
        Estimate
            ``per_sample`` of length m in the original model order; ``acc`` the
            predicted fraction of models that get the sample right; no interval.

        Raises
        ------
        NotFittedError
            Before a fit.
        InputError
            If ``rows`` and ``observed`` differ in length or are empty, a row lies
            outside ``[0, m)`` or repeats, or a result is not 0 or 1.
        """
        check_fitted(self, "model_order_")
        return self._m.estimate(rows, observed)

    def place(self, rows: np.ndarray, observed: np.ndarray) -> int:
        """Insertion index into ``sample_order_``: after every sample at least as easy.

        The new sample's predicted column sum is the number of models predicted correct;
        ties go after existing samples, as the stable order of Appendix G requires.

        Parameters
        ----------
        rows : numpy.ndarray
            The model rows run on the new sample.
        observed : numpy.ndarray
            Whether each of them got it right (0/1), in the same order.

        Returns
        -------
        int
            The index in ``[0, n]`` at which the sample enters the easy -> hard order.

        Raises
        ------
        NotFittedError
            Before a fit.
        InputError
            As :meth:`estimate`.
        """
        check_fitted(self, "model_order_")
        s = int(self._m.predict(rows, observed).sum())
        return int((self.sample_sums_ >= s).sum())
