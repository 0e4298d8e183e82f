"""insert_D studies: how many models must a new sample be run on? (Prabhu et al. 2024,
"Efficient Lifelong Model Evaluation in an Era of Rapid Progress", §3.3 and §4.3, Fig. 4a).

insert_D is Sort & Search on the transpose of the cache: the *models* are sorted best
first by their results on the samples already in the cache (Sorting by Sum = accuracy, or
Sorting by Confidence Sum = summed confidence of the true class, the two rankings of
§4.3), a new sample is run on ``m'`` models spread along that order, and the threshold
found there predicts its result on every other model. The error is the sample-level MAE
over models, as in Fig. 4a; ``eagg`` is the error of the predicted share of models that
get the sample right (its difficulty).

Splits of the samples into "cache" and "new":

``random``
    A seeded random fraction of the samples is new (the paper's protocol: new samples
    from the same distribution).
``domain``
    Each domain in turn is new and the others are the cache: a held-out-domain split,
    which asks whether a model order learnt on some shifts transfers to another.

Each (split, sort) pair is one :func:`~lifelong_core.sweeping.run_sweep` on the
transposed matrix, so the threshold rules, sampling grids and streaming are the engine's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.sortsearch import fit_exponential
from lifelong_core.sweeping import SweepResult, power_budgets, run_sweep

SPLITS = ("random", "domain")
RANDOM_SPLIT, DOMAIN_SPLIT = SPLITS
SORTS = ("sum", "confidence")
CURVE_COLUMNS = [
    "split",
    "sort",
    "budget",
    "mae",
    "eagg",
    "kappa",
    "pearson",
    "spearman",
    "new_samples",
]
PER_SAMPLE_COLUMNS = ["split", "sort", "sample_col", "budget", "est_acc", "true_acc", "mae"]
FIT_COLUMNS = ["split", "sort", "a", "b", "c", "r2", "ok", "message"]


@dataclass(frozen=True)
class SampleSplit:
    """Column numbers of the cache (``old``) and of the new samples (``new``).

    Attributes
    ----------
    name : str
        ``random`` or ``domain:<name>``.
    old, new : numpy.ndarray
        int64 column numbers of the cache and of the new samples.
    """

    name: str
    old: np.ndarray
    new: np.ndarray


def random_split(n: int, fraction: float, seed: int) -> SampleSplit:
    """A seeded random ``fraction`` of the ``n`` samples is new: the protocol of
    Prabhu et al. (2024), "Efficient Lifelong Model Evaluation in an Era of Rapid Progress", §4.3
    (new samples from the same distribution).

    Parameters
    ----------
    n : int
        Samples.
    fraction : float
        Share of new samples, strictly between 0 and 1.
    seed : int
        Seed of the draw.

    Returns
    -------
    SampleSplit

    Raises
    ------
    InputError
        If the fraction leaves no sample on one side, or the seed is out of range.
    """
    limits.check_real(
        fraction,
        "the fraction of new samples",
        0,
        1,
        open_lo=True,
        open_hi=True,
        param="new_fraction",
    )
    limits.check_seed(seed)
    k = round(fraction * n)
    if not 1 <= k < n:
        raise InputError(
            f"a fraction {fraction} of {n} samples leaves no sample on one side of the split."
        )
    new = np.sort(np.random.default_rng(seed).choice(n, k, replace=False)).astype(np.int64)
    return SampleSplit("random", np.setdiff1d(np.arange(n, dtype=np.int64), new), new)


def domain_splits(
    domains: Sequence[str], held_out: Sequence[str] | None = None
) -> list[SampleSplit]:
    """One split per held-out domain, named ``domain:<name>``.

    Parameters
    ----------
    domains : sequence of str
        The domain of every sample.
    held_out : sequence of str, optional
        Domains to hold out, one split each (default: every domain in turn).

    Returns
    -------
    list of SampleSplit

    Raises
    ------
    InputError
        If the samples span fewer than two domains, or ``held_out`` names an unknown one.
    """
    dom = np.asarray(domains, dtype=object)
    names = list(dict.fromkeys(dom.tolist()))
    if len(names) < 2:
        raise InputError("a held-out-domain split needs samples from at least two domains.")
    chosen = names if held_out is None else list(held_out)
    unknown = [d for d in chosen if d not in names]
    if unknown:
        raise InputError(
            f"domain {unknown[0]!r} is not among the samples' domains ({', '.join(map(str, names))})."
        )
    out = []
    for d in chosen:
        mask = dom == d
        out.append(
            SampleSplit(
                f"domain:{d}",
                np.flatnonzero(~mask).astype(np.int64),
                np.flatnonzero(mask).astype(np.int64),
            )
        )
    return out


def default_model_budgets(m: int) -> tuple[int, ...]:
    """The paper's model budgets 8 ... 2,048 (§4.3), those below ``m`` (at least one must fit)."""
    return power_budgets(m, 8, 2048)


def sweep_new_samples(
    A: np.ndarray,
    split: SampleSplit,
    budgets: Sequence[int] | None = None,
    *,
    sort: str = "sum",
    confidence: np.ndarray | None = None,
    sampling: str | None = None,
    search: str = "midpoint",
    seed: int = 0,
) -> SweepResult:
    """insert_D sweep for one split: sort models on ``A[:, split.old]``, estimate every
    new sample's column from ``m'`` models, score it against the full column.

    Returns the engine's ``SweepResult``; ``per_model.model_row`` holds the new samples'
    column numbers (one row per new sample and budget).
    """
    A = np.asarray(A)
    if A.ndim != 2:
        raise InputError(f"the matrix must be 2-dimensional, got {A.ndim} dimensions.")
    m = A.shape[0]
    if m < 2:
        raise InputError("insert_D needs at least two models.")
    if sort not in SORTS:
        raise InputError(f"unknown model ranking {sort!r}; use one of {', '.join(SORTS)}.")
    conf = None
    if sort == "confidence":
        if confidence is None:
            raise InputError(
                "ranking models by confidence sum needs the confidence of the true class."
            )
        confidence = np.asarray(confidence)
        if confidence.shape != A.shape:
            raise InputError(
                f"the confidence matrix has shape {confidence.shape}, the matrix {A.shape}; they must match."
            )
        conf = np.ascontiguousarray(confidence[:, split.old].T)
    budgets = default_model_budgets(m) if budgets is None else budgets
    return run_sweep(
        np.ascontiguousarray(A[:, split.old].T),
        np.ascontiguousarray(A[:, split.new].T),
        budgets,
        sort=sort,
        confidence=conf,
        sampling=sampling,
        search=search,
        seed=seed,
        eval_row_ids=split.new,
    )


@dataclass(frozen=True)
class NewSampleStudy:
    """``curves``: one row per (split, sort, budget) with the sweep's columns and the
    number of new samples; ``fits``: ``MAE = a exp(-b m') + c`` per (split, sort);
    ``rankings``: models by Sum and by Confidence Sum on the cache of each split, with
    Spearman's rho between the two (``agreement``); ``per_sample``: one row per (split,
    sort, new sample, budget)."""

    curves: pd.DataFrame
    fits: pd.DataFrame
    rankings: pd.DataFrame
    agreement: pd.DataFrame
    per_sample: pd.DataFrame


def new_sample_study(
    A: np.ndarray,
    splits: Sequence[SampleSplit],
    budgets: Sequence[int] | None = None,
    *,
    sorts: Sequence[str] = ("sum",),
    confidence: np.ndarray | None = None,
    sampling: str | None = None,
    search: str = "midpoint",
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
) -> NewSampleStudy:
    """insert_D for every split x model ranking: MAE vs m' curves with fits, and the two
    rankings (Prabhu et al. (2024), "Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress", §3.3 and §4.3, Fig. 4a).

    Parameters
    ----------
    A : numpy.ndarray
        (models, samples) 0/1 cache.
    splits : sequence of SampleSplit
        Splits of the samples into cache and new.
    budgets : sequence of int, optional
        Model budgets m' (default: a spread up to the number of models).
    sorts : sequence of str
        Model rankings: ``sum`` (accuracy) and/or ``confidence`` (summed confidence of the
        true class).
    confidence : numpy.ndarray, optional
        (models, samples) confidences, needed for ``confidence``.
    sampling : str, optional
        Sampling of the m' models along the order (default: the method's own).
    search : str
        The search method.
    seed : int
        Seed of the sampling.
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    NewSampleStudy

    Raises
    ------
    InputError
        If no split is given, a ranking needs a missing or mis-shaped confidence matrix, or
        a budget or method is invalid.
    """
    if not splits:
        raise InputError("no split of the samples given.")
    sorts = list(dict.fromkeys(sorts))
    for s in sorts:
        if s not in SORTS:
            raise InputError(f"unknown model ranking {s!r}; use one of {', '.join(SORTS)}.")
    curves, fits, ranks, agree, per = [], [], [], [], []
    total, done = len(splits) * len(sorts), 0
    for split in splits:
        orders = {}
        for s in sorts:
            res = sweep_new_samples(
                A,
                split,
                budgets,
                sort=s,
                confidence=confidence,
                sampling=sampling,
                search=search,
                seed=seed,
            )
            orders[s] = res.order
            t = res.table.assign(split=split.name, sort=s, new_samples=len(split.new))
            curves.append(t[CURVE_COLUMNS])
            per.append(
                res.per_model[["model_row", "budget", "est_acc", "true_acc", "mae"]]
                .rename(columns={"model_row": "sample_col"})
                .assign(split=split.name, sort=s)
            )
            f = fit_exponential(t["budget"].to_numpy(), t["mae"].to_numpy())
            fits.append(
                {
                    "split": split.name,
                    "sort": s,
                    **{k: f.params.get(k, np.nan) for k in "abc"},
                    "r2": f.r2,
                    "ok": f.ok,
                    "message": f.message,
                }
            )
            done += 1
            if progress is not None:
                progress(done / total)
        m = A.shape[0]
        rank = {}
        for s, order in orders.items():
            rank[s] = np.empty(m, dtype=np.int64)
            rank[s][order] = np.arange(1, m + 1)
            ranks.append(
                pd.DataFrame(
                    {"split": split.name, "sort": s, "model_row": np.arange(m), "rank": rank[s]}
                )
            )
        if len(rank) == 2:
            top = min(10, m)
            agree.append(
                {
                    "split": split.name,
                    "spearman": float(stats.spearmanr(rank["sum"], rank["confidence"])[0]),
                    "same_top10": len(
                        set(orders["sum"][:top].tolist()) & set(orders["confidence"][:top].tolist())
                    ),
                }
            )
    return NewSampleStudy(
        pd.concat(curves, ignore_index=True),
        pd.DataFrame(fits, columns=FIT_COLUMNS),
        pd.concat(ranks, ignore_index=True),
        pd.DataFrame(agree, columns=["split", "spearman", "same_top10"]),
        pd.concat(per, ignore_index=True)[PER_SAMPLE_COLUMNS],
    )
