"""How often intervals held the truth, and how sure that share is.

Coverage counted over a handful of models is itself an estimate: 8 of 12 intervals
holding the truth is 67%, but any true coverage from 35% to 90% could give that count.
:func:`clopper_pearson` is the exact binomial interval of such a share (Clopper &
Pearson, 1934, "The use of confidence or fiducial limits illustrated in the case of the
binomial", *Biometrika* 26(4)); it treats the intervals as independent trials, which they
are when every model's items are its own random draw
(:mod:`lifelong_core.methods.draws`) and are not when all share one item set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of a share ``k / n`` (Clopper and Pearson, 1934, "The use of
    confidence or fiducial limits illustrated in the case of the binomial").

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials.
    level : float
        Coverage.

    Returns
    -------
    tuple of float
        (lo, hi); NaN bounds when ``n`` is 0.

    Examples
    --------
    >>> lo, hi = clopper_pearson(8, 12)
    >>> round(lo, 3), round(hi, 3)
    (0.349, 0.901)
    """
    from scipy.stats import beta

    if n <= 0:
        return float("nan"), float("nan")
    a = (1.0 - level) / 2.0
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1.0 - a, k + 1, n - k))
    return lo, hi


@dataclass(frozen=True)
class Coverage:
    """How many intervals held the truth, with an exact interval on that share.

    Attributes
    ----------
    covered : int
        Intervals that held the truth.
    total : int
        Intervals.
    lo, hi : float
        The exact 95% interval of ``covered / total``.
    """

    covered: int
    total: int
    lo: float
    hi: float

    @property
    def share(self) -> float:
        """``covered / total`` (NaN when there are no intervals)."""
        return self.covered / self.total if self.total else float("nan")


def coverage_of(truth: ArrayLike, lo: ArrayLike, hi: ArrayLike) -> Coverage:
    """How many of the intervals ``[lo, hi]`` hold ``truth``.

    Parameters
    ----------
    truth, lo, hi : array_like
        Arrays of the same length.

    Returns
    -------
    Coverage
    """
    truth, lo, hi = (np.asarray(x, dtype=np.float64) for x in (truth, lo, hi))
    inside = (lo <= truth) & (truth <= hi)
    k, n = int(inside.sum()), len(inside)
    return Coverage(k, n, *clopper_pearson(k, n))
