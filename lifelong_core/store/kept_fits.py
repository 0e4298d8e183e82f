"""Fits of a model-based method on given Sort rows, kept in the store by what they were fitted on.

A page that opens on a large cache spends most of its first view fitting the default
estimator on its Sort rows: the cross-validation of its choices and the item model.
``lbe state --refresh`` (and the demo's build) makes that fit once for each dataset's
default Sort split and keeps it here, so the page rebuilds it instead of fitting.

A kept fit is found by its key: a digest of everything the fit depends on (the method's
registration, the Sort rows' bits, the order, the seed and the estimator's code; see
:func:`lifelong_core.sweeping.protocol.fitted_method`). Only an identical fit is ever
found, so reading one changes how long a view takes, never what it shows; a cache that
gains a model or a sample, or a new version of the estimator, has other keys and fits
afresh. The item parameters are kept in double precision for the same reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from lifelong_core.store.state import KeptTable, forget_kept, kept_count, replace_row
from lifelong_core.store.writing import StoreWriter, utc_now

DDL = """
CREATE TABLE IF NOT EXISTS kept_fits (
    key VARCHAR PRIMARY KEY, dataset VARCHAR NOT NULL, method VARCHAR NOT NULL,
    params VARCHAR NOT NULL, d BLOB NOT NULL, w BLOB NOT NULL, theta BLOB NOT NULL,
    computed_at TIMESTAMP NOT NULL, seconds DOUBLE NOT NULL);
"""


@dataclass(frozen=True)
class KeptFit:
    """One kept fit: the method's settings and choices, and its item parameters.

    Attributes
    ----------
    key : str
        The digest the fit is found by.
    dataset : str
        The dataset whose Sort rows it was fitted on.
    method : str
        The registered method.
    params : dict
        What the method's ``kept_params`` returned.
    d : numpy.ndarray
        (n,) easiness of each sample.
    w : numpy.ndarray
        (n, k) discriminations.
    theta : numpy.ndarray
        (m, k) abilities of the Sort models.
    seconds : float
        How long the fit took.
    """

    key: str
    dataset: str
    method: str
    params: dict
    d: np.ndarray
    w: np.ndarray
    theta: np.ndarray
    seconds: float


class KeptFits(KeptTable):
    """The store's kept fits, read (and, on a writer handle with ``dataset``, written).

    What :class:`~lifelong_core.methods.memory.FitMemory` is backed by
    (``FitMemory.backed_by``): a fit missing from memory is looked up here first.

    Parameters
    ----------
    store : Store
        An open store (a read-only handle reads).
    dataset : str, optional
        The dataset new fits are kept for; without it nothing is written.
    """

    def load(self, key: str) -> KeptFit | None:
        """The fit kept under ``key``, or None.

        Parameters
        ----------
        key : str
            The fit's digest.

        Returns
        -------
        KeptFit or None
        """
        row = self._row("kept_fits", "key, dataset, method, params, d, w, theta, seconds", key)
        if row is None:
            return None
        k_, dataset, method, params, d, w, theta, seconds = row
        d = np.frombuffer(d, dtype=np.float64).copy()
        n = len(d)
        w = np.frombuffer(w, dtype=np.float64).copy()
        k = len(w) // n if n else 0
        return KeptFit(
            k_,
            dataset,
            method,
            json.loads(params),
            d,
            w.reshape(n, k),
            np.frombuffer(theta, dtype=np.float64).copy().reshape(-1, k),
            float(seconds),
        )

    def save(self, fit: KeptFit) -> None:
        """Keep ``fit`` (replacing one under the same key), when :attr:`writes`.

        Parameters
        ----------
        fit : KeptFit
            The fit and its key.
        """
        if not self.writes:  # KeptTable: a writer handle and a dataset
            return
        st: StoreWriter = self.store
        st.require_writer()
        replace_row(
            st,
            "kept_fits",
            "key = ?",
            [fit.key],
            [
                fit.key,
                fit.dataset,
                fit.method,
                json.dumps(fit.params, sort_keys=True),
                np.ascontiguousarray(fit.d, dtype=np.float64).tobytes(),
                np.ascontiguousarray(fit.w, dtype=np.float64).tobytes(),
                np.ascontiguousarray(fit.theta, dtype=np.float64).tobytes(),
                utc_now(),
                float(fit.seconds),
            ],
            ddl=DDL,
        )


def forget_kept_fits(st: StoreWriter, dataset: str, method: str) -> None:
    """Drop the fits of ``method`` kept for ``dataset`` (before a refresh keeps new ones).

    Parameters
    ----------
    st : Store
        A writer handle.
    dataset, method : str
        Whose fits.
    """
    forget_kept(st, "kept_fits", DDL, dataset, "method", method)


def kept_fit_count(st: Any, dataset: str | None = None) -> int:
    """How many fits the store keeps (for ``dataset``, or in all).

    Parameters
    ----------
    st : Store
        An open store.
    dataset : str, optional
        Count only this dataset's.

    Returns
    -------
    int
    """
    return kept_count(st, "kept_fits", dataset)
