"""insert_D (Prabhu et al., 2024, §3.3): the Sort & Search estimate of a new sample.

The search of :mod:`lifelong_core.methods.insert_m` on the transpose of the cache: models
are ordered best first, a budget of models is run on the new sample, and the threshold
predicts which of the others get it right. A search method of kind ``"sample"``
(:mod:`lifelong_core.methods.base`): ``n`` in ``select`` is the number of models.
"""

from __future__ import annotations

import numpy as np

from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, check_fitted
from lifelong_core.methods.insert_m import InsertM
from lifelong_core.sortsearch.search import DEFAULT_RULE
from lifelong_core.sortsearch.sort import order_from_sums, sort_models


class InsertD:
    """insert_D (Prabhu et al., 2024, §3.3): the same search on the transpose of the cache.

    ``fit(A)`` orders models best first (Sorting by Sum on ``A.T``) and keeps the
    per-sample sums; ``select(m, budget, rng)`` returns the model rows to run on a new
    sample; ``estimate(rows, observed)`` predicts its correctness for every model
    (``per_sample`` has length m, original model order; ``acc`` = predicted fraction of
    models that get it right); ``place(rows, observed)`` is its position in the fitted
    easy -> hard sample order.
    """

    name = "insert-d"

    def __init__(self, rule: str = DEFAULT_RULE, sampling: str | None = None) -> None:
        self._m = InsertM(rule=rule, sampling=sampling)
        self.rule = rule
        self.sampling = self._m.sampling

    def fit(
        self,
        A_sort: np.ndarray,
        order: np.ndarray | None = None,
        confidence: np.ndarray | None = None,
    ) -> InsertD:
        """Fit on the cache ``A_sort`` (models x samples). ``order``: the model order,
        best first (default: Sorting by Sum on the transpose, ``sort_models``);
        ``confidence`` is not used (the contract's signature)."""
        A = np.asarray(A_sort)
        if A.ndim != 2 or A.shape[0] == 0 or A.shape[1] == 0:
            raise InputError("insert_D needs a non-empty 2-dimensional cache (models x samples).")
        self.model_order_ = sort_models(A) if order is None else np.asarray(order, dtype=np.int64)
        self._m.fit(A.T, order=self.model_order_)
        self.sample_sums_ = A.sum(axis=0, dtype=np.int64)
        self.sample_order_ = order_from_sums(self.sample_sums_)
        return self

    def fit_sums(self, model_sums: np.ndarray, sample_sums: np.ndarray) -> InsertD:
        """:meth:`fit` from the cache's row sums (per model) and column sums (per sample):
        all insert_D needs, so a large cache is never read whole."""
        self.model_order_ = order_from_sums(np.asarray(model_sums, dtype=np.int64))
        self._m.fit(None, order=self.model_order_)
        self.sample_sums_ = np.asarray(sample_sums, dtype=np.int64)
        self.sample_order_ = order_from_sums(self.sample_sums_)
        return self

    def select(self, m: int, budget: int, rng: np.random.Generator | None = None) -> np.ndarray:
        check_fitted(self, "model_order_")
        return self._m.select(m, budget, rng)

    def estimate(self, rows: np.ndarray, observed: np.ndarray) -> Estimate:
        check_fitted(self, "model_order_")
        return self._m.estimate(rows, observed)

    def place(self, rows: np.ndarray, observed: np.ndarray) -> int:
        """Insertion index into ``sample_order_``: after every sample at least as easy.

        The new sample's predicted column sum is the number of models predicted correct;
        ties go after existing samples, as the stable order of Appendix G requires.
        """
        check_fitted(self, "model_order_")
        s = int(self._m.predict(rows, observed).sum())
        return int((self.sample_sums_ >= s).sum())
