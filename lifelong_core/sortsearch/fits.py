"""Curve fits of error against budget: E = a exp(-b n') + c (Prabhu et al., 2024, §4.2 Key Result 2)
and E_agg = c n'^p (Prabhu et al., 2024, *Lifelong Benchmarks*, §5 Key Result 2).

A fit never raises on data it cannot fit: the result says ``ok=False`` with a reason, so
the app can show the sweep without its curve.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class FitResult:
    """A curve fit of error against budget.

    A fit never raises on data it cannot fit: ``ok`` is False and ``message`` says why.

    Attributes
    ----------
    model : str
        ``exponential`` or ``power``.
    params : dict of str to float
        ``a``, ``b``, ``c`` (exponential) or ``c``, ``p`` (power law).
    r2 : float
        R^2 on the fitted points.
    ok : bool
        Whether the fit succeeded.
    message : str
        Why it did not.
    """

    model: str
    params: dict[str, float] = field(default_factory=dict)
    r2: float = float("nan")
    ok: bool = False
    message: str = ""

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The fitted curve at ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            Budgets.

        Returns
        -------
        numpy.ndarray
            float64, NaN everywhere when the fit failed.
        """
        x = np.asarray(x, dtype=np.float64)
        if not self.ok:
            return np.full(x.shape, np.nan)
        if self.model == "exponential":
            return _exp(x, self.params["a"], self.params["b"], self.params["c"])
        return _power(x, self.params["c"], self.params["p"])


def _exp(x: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    return a * np.exp(-b * x) + c


def _power(x: np.ndarray, c: float, p: float) -> np.ndarray:
    return c * np.power(x, p)


def _r2(y: np.ndarray, fitted: np.ndarray) -> float:
    ss_res = float(((y - fitted) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else float("nan")
    return 1.0 - ss_res / ss_tot


def _clean(
    x: ArrayLike, y: ArrayLike, need: int, model: str
) -> tuple[np.ndarray, np.ndarray] | FitResult:
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    keep = np.isfinite(xs) & np.isfinite(ys)
    xs, ys = xs[keep], ys[keep]
    if len(xs) < need:
        return FitResult(model, message=f"needs at least {need} finite points, got {len(xs)}")
    return xs, ys


def fit_exponential(budgets: ArrayLike, errors: ArrayLike) -> FitResult:
    """Fit E = a exp(-b n') + c with a, b, c >= 0 (Prabhu et al. (2024), *Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress*, §4.2, Key Result 2).

    Initial values: c from the smallest error, a from the first error above it, and b from a
    log-linear fit of E - c against n' (so the decay scale matches the data's budget range,
    which spans orders of magnitude).

    Parameters
    ----------
    budgets : array_like
        Budgets n'.
    errors : array_like
        The error at each budget (non-finite points are dropped).

    Returns
    -------
    FitResult
        ``ok=False`` with a reason when there are too few points or the fit fails.
    """
    # Imported here: every sweep imports sortsearch, only the budget explorer fits curves,
    # and scipy.optimize costs about a second to import.
    from scipy.optimize import curve_fit

    cleaned = _clean(budgets, errors, 3, "exponential")
    if isinstance(cleaned, FitResult):
        return cleaned
    x, y = cleaned
    c0 = max(float(y.min()) * 0.95, 0.0)
    a0 = max(float(y[np.argmin(x)]) - c0, 1e-6)
    resid = y - c0
    pos = resid > 1e-12
    b0 = 1.0 / float(np.median(x))
    if pos.sum() >= 2 and np.ptp(x[pos]) > 0:
        slope = np.polyfit(x[pos], np.log(resid[pos]), 1)[0]
        if slope < 0:
            b0 = -slope
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            popt, _ = curve_fit(
                _exp,
                x,
                y,
                p0=[a0, b0, c0],
                bounds=([0, 0, 0], [np.inf, np.inf, np.inf]),
                maxfev=20000,
            )
    except (RuntimeError, ValueError) as exc:
        return FitResult("exponential", message=f"curve_fit failed: {exc}")
    a, b, c = (float(v) for v in popt)
    return FitResult("exponential", {"a": a, "b": b, "c": c}, _r2(y, _exp(x, a, b, c)), True)


def fit_power_law(budgets: ArrayLike, eagg: ArrayLike) -> FitResult:
    """Fit E_agg = c n'^p, p negative when the error shrinks (Prabhu et al. (2024), *Lifelong
    Benchmarks: Efficient Model Evaluation in an Era of Rapid Progress*, §5, Key Result 2).

    Initialised from least squares on log E_agg vs log n' over the positive points, then
    refined by ``curve_fit`` on the original scale (the paper's figures are on that scale).
    Zero errors are kept in the refinement but cannot enter the log-space start.

    Parameters
    ----------
    budgets : array_like
        Budgets n'.
    eagg : array_like
        E_agg at each budget (non-finite points are dropped).

    Returns
    -------
    FitResult
        ``ok=False`` with a reason when there are too few points or the fit fails.
    """
    from scipy.optimize import curve_fit

    cleaned = _clean(budgets, eagg, 2, "power")
    if isinstance(cleaned, FitResult):
        return cleaned
    x, y = cleaned
    if (x <= 0).any():
        return FitResult("power", message="budgets must be positive")
    pos = y > 0
    if pos.sum() >= 2 and np.ptp(np.log(x[pos])) > 0:
        p0, logc0 = np.polyfit(np.log(x[pos]), np.log(y[pos]), 1)
        c0 = float(np.exp(logc0))
    else:
        p0, c0 = -0.5, max(float(y.max()), 1e-6)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            popt, _ = curve_fit(_power, x, y, p0=[c0, float(p0)], maxfev=20000)
    except (RuntimeError, ValueError) as exc:
        return FitResult("power", message=f"curve_fit failed: {exc}")
    c, p = (float(v) for v in popt)
    if not (np.isfinite(c) and np.isfinite(p)):
        return FitResult("power", message="fit did not converge to finite parameters")
    return FitResult("power", {"c": c, "p": p}, _r2(y, _power(x, c, p)), True)
