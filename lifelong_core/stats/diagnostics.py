"""MCMC convergence diagnostics: split R-hat and effective sample size.

Both follow Gelman et al., *Bayesian Data Analysis* (3rd ed., §11.4-11.5): R-hat on
chains split in halves, and the ESS from the multi-chain autocorrelation with Geyer's
initial monotone positive-pair truncation. The LA-UR-24-25289 report (2024) §2.2 only says several chains were
run; these are the standard checks that the draws can be trusted.
"""

from __future__ import annotations

import numpy as np


def _split(draws: np.ndarray) -> np.ndarray:
    """(chains, n, ...) -> (2 * chains, n // 2, ...), dropping a middle draw if n is odd."""
    n = draws.shape[1] // 2
    return np.concatenate([draws[:, :n], draws[:, -n:]], axis=0)


def split_rhat(draws: np.ndarray) -> np.ndarray:
    """Split R-hat of every scalar parameter (Gelman et al. (2013), *Bayesian Data Analysis*, 3rd
    ed., §11.4).

    Parameters
    ----------
    draws : numpy.ndarray
        (chains, draws, ...).

    Returns
    -------
    numpy.ndarray
        One value per scalar parameter (the trailing shape).
    """
    x = _split(np.asarray(draws, dtype=float))
    n = x.shape[1]
    if n < 2:
        return np.full(x.shape[2:], np.nan)
    between = n * x.mean(axis=1).var(axis=0, ddof=1)
    within = x.var(axis=1, ddof=1).mean(axis=0)
    var_plus = (n - 1) / n * within + between / n
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(var_plus / within)
    # A parameter that never moves (e.g. pinned by the data to a bound) is converged.
    return np.where(within > 0, r, 1.0)


def _autocovariance(x: np.ndarray) -> np.ndarray:
    """Autocovariance along axis 1 of (chains, n, k), via FFT."""
    n = x.shape[1]
    centred = x - x.mean(axis=1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(centred, n=size, axis=1)
    acov = np.fft.irfft(f * np.conjugate(f), n=size, axis=1)[:, :n]
    return acov / n


def effective_sample_size(draws: np.ndarray) -> np.ndarray:
    """Multi-chain effective sample size of every scalar parameter (Gelman et al. (2013), *Bayesian
    Data Analysis*, 3rd ed., §11.5, with Geyer's
    initial monotone positive-pair truncation).

    Parameters
    ----------
    draws : numpy.ndarray
        (chains, draws, ...).

    Returns
    -------
    numpy.ndarray
        One value per scalar parameter (the trailing shape).
    """
    x = np.asarray(draws, dtype=float)
    chains, n = x.shape[:2]
    shape = x.shape[2:]
    x = x.reshape(chains, n, -1)
    if n < 4:
        return np.full(shape, np.nan)
    acov = _autocovariance(x)
    within = acov[:, 0].mean(axis=0) * n / (n - 1)
    var_plus = within * (n - 1) / n
    if chains > 1:
        var_plus = var_plus + x.mean(axis=1).var(axis=0, ddof=1)
    out = np.empty(x.shape[2])
    for k in range(x.shape[2]):
        if var_plus[k] <= 0:
            out[k] = chains * n
            continue
        rho = 1.0 - (within[k] - acov[:, :, k].mean(axis=0)) / var_plus[k]
        rho[0] = 1.0
        # Geyer: sum autocorrelations in pairs while the pair sums stay positive and
        # non-increasing.
        pairs = rho[: (n // 2) * 2].reshape(-1, 2).sum(axis=1)
        positive = np.flatnonzero(pairs <= 0)
        pairs = pairs[: positive[0]] if positive.size else pairs
        pairs = np.minimum.accumulate(pairs)
        tau = -1.0 + 2.0 * pairs.sum()
        out[k] = chains * n / max(tau, 1.0 / np.log10(chains * n + 10))
    return out.reshape(shape)
