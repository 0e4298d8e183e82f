"""The stream done as Nevis'22 does it: configurations chosen on the early part of the
stream, scored on the later part (Bornschein et al. 2023, "NEVIS'22: A Stream of 100 Tasks
Sampled from 30 Years of Computer Vision Research", JMLR, §4, Algorithm 1, Fig. 5).

Here the stream is models arriving in release order and a "method" is a way to estimate a
new model from n' evaluations (the Sort & Search threshold rules, CopyNearest&Expand and
the estimators). Nevis'22 forbids choosing hyper-parameters on the whole stream, since that
uses the future; so:

1. **Meta-train** = the first ``train_fraction`` of the stream. Inside it, the earlier
   ``inner_fraction`` is the cache (Sort set, evaluated in full) and the rest is estimated
   at every budget n' with every configuration of the method (its sampling grid, for the
   threshold rules; the estimators bring their own design). For each (method, n') the
   configuration with the lowest meta-train error is chosen.
2. **Meta-test** = the later models. The chosen configuration runs once, with the whole
   meta-train part as the cache, and is scored on the meta-test models only.
3. Cost counts the whole stream, as Nevis'22 counts the compute of both phases:
   evaluations = (meta-train models x n) + (meta-test models x n'). Every method spends the
   same sample evaluations at a given n'; the estimator's own run time is reported beside.

The Pareto front of meta-test error against evaluations ranks the methods (§4, footnote 4);
the regret view (Fig. 5) is the cumulative difference of each method's per-model error
from a reference method's over the meta-test stream, at one budget: a falling curve beats
the reference, a flat one ties it.

Departure: estimated meta-test models do not join the cache (the cache stays the meta-train
part), so every method is scored on the same Sort set.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.methods import is_threshold_rule
from lifelong_core.methods.registry import predicts_samples
from lifelong_core.sortsearch.search import SAMPLING
from lifelong_core.sweeping import run_sweep, sweep_samplings

ERRORS = ("mae", "eagg")
CONFIG_COLUMNS = [
    "method",
    "budget",
    "sampling",
    "train_error",
    "chosen",
    "test_mae",
    "test_eagg",
    "evaluations",
    "run_seconds",
]


def pareto_front(df: pd.DataFrame, cost: str, error: str) -> pd.DataFrame:
    """Rows not dominated in (cost, error), sorted by cost (Bornschein et al. (2023), *NEVIS'22: A
    Stream of 100 Tasks Sampled from 30 Years of Computer Vision Research*, §4).

    A row is dominated when another is at most as costly and strictly better, or strictly
    cheaper and at most as bad.

    Parameters
    ----------
    df : pandas.DataFrame
        The candidates.
    cost, error : str
        The columns to minimise.

    Returns
    -------
    pandas.DataFrame
        The rows of the front.
    """
    d = df.sort_values([cost, error], kind="stable")
    best = np.inf
    keep = []
    for idx, e in zip(d.index, d[error].to_numpy()):
        if e < best:
            keep.append(idx)
            best = e
    return d.loc[keep]


@dataclass(frozen=True)
class StreamProtocolResult:
    """``configs``: every (method, budget, sampling) with its meta-train error, whether it
    was chosen, and (chosen rows only) its meta-test errors, evaluations and the wall time
    of its meta-test run (all budgets of that method and sampling together);
    ``front``: the chosen configurations on the Pareto front of meta-test ``error`` vs
    evaluations; ``per_model``: meta-test per-model errors of every chosen configuration
    (release position, model row); ``split``: sizes of the phases."""

    configs: pd.DataFrame
    front: pd.DataFrame
    per_model: pd.DataFrame
    split: dict


def split_sizes(m: int, train_fraction: float, inner_fraction: float = 0.5) -> tuple[int, int]:
    """(cache, meta-train) sizes for ``m`` models.

    The first ``cache`` models are the cache while tuning, the first ``meta-train`` the
    meta-train part; the rest is meta-test.

    Parameters
    ----------
    m : int
        Models in the stream.
    train_fraction : float
        Share of the stream in meta-train.
    inner_fraction : float
        Share of meta-train in the cache while tuning.

    Returns
    -------
    tuple of int

    Raises
    ------
    InputError
        If a fraction is not strictly between 0 and 1, or a part would be empty.
    """
    for f, name, param in (
        (train_fraction, "meta-train fraction", "train_fraction"),
        (inner_fraction, "cache fraction of meta-train", "inner_fraction"),
    ):
        limits.check_real(f, f"the {name}", 0, 1, open_lo=True, open_hi=True, param=param)
    t = round(train_fraction * m)
    inner = round(inner_fraction * t)
    if not (1 <= inner < t < m):
        raise InputError(
            f"{m} models cannot be split into a cache, the rest of meta-train and a meta-test part "
            f"with these fractions (cache {inner}, meta-train {t}); use more models or other fractions."
        )
    return inner, t


def _configs_of(method: str, samplings: Sequence[str]) -> list[str | None]:
    # Only the threshold rules take a sampling grid; the others bring their own design.
    return list(samplings) if is_threshold_rule(method) else [None]


def stream_protocol(
    A: np.ndarray,
    release: np.ndarray,
    *,
    methods: Sequence[str] = ("midpoint", "reference", "copy-nearest"),
    budgets: Sequence[int],
    samplings: Sequence[str] = ("uniform", "random", "reference"),
    train_fraction: float = 0.5,
    inner_fraction: float = 0.5,
    error: str = "mae",
    seed: int = 0,
    progress: Callable[[float], object] | None = None,
) -> StreamProtocolResult:
    """Run the Nevis'22 protocol on ``A`` with models arriving in the order ``release``
    (Bornschein et al. (2023), *NEVIS'22: A Stream of 100 Tasks Sampled from 30 Years of Computer
    Vision Research*, §4, Algorithm 1; see the module docstring).

    Parameters
    ----------
    A : numpy.ndarray
        (models, samples) 0/1 matrix.
    release : numpy.ndarray
        Row numbers in release order (every row once).
    methods : sequence of str
        Methods compared.
    budgets : sequence of int
        Budgets n' (those outside 1..samples are dropped).
    samplings : sequence of str
        The sampling grid of the threshold rules.
    train_fraction, inner_fraction : float
        See :func:`split_sizes`.
    error : str
        ``mae`` or ``eagg``: the error that chooses configurations.
    seed : int
        Seed of every sweep.
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    StreamProtocolResult

    Raises
    ------
    InputError
        If the release order, error, sampling, method or budgets are invalid.
    """
    limits.check_seed(seed)
    A = np.asarray(A)
    release = np.asarray(release, dtype=np.int64)
    m, n = A.shape
    if sorted(release.tolist()) != list(range(m)):
        raise InputError(f"the release order must name every one of the {m} rows once.")
    if error not in ERRORS:
        raise InputError(f"unknown error {error!r}; use one of {', '.join(ERRORS)}.")
    for s in samplings:
        if s not in SAMPLING:
            raise InputError(f"unknown sampling {s!r}; use one of {', '.join(SAMPLING)}.")
    if not methods:
        raise InputError("choose at least one method.")
    if error == "mae":
        unscored = [meth for meth in methods if not predicts_samples(meth)]
        if unscored:
            raise InputError(
                f"method {unscored[0]!r} predicts no sample it was not run on, so its sample-level "
                "error (mae) is undefined; compare with eagg or leave it out.",
                param="methods",
            )
    inner, t = split_sizes(m, train_fraction, inner_fraction)
    budgets = sorted({int(b) for b in budgets if 1 <= int(b) <= n})
    if not budgets:
        raise InputError(f"no budget between 1 and the number of samples ({n}).")
    cache, tune = release[:inner], release[inner:t]
    train, test = release[:t], release[t:]

    jobs = {meth: _configs_of(meth, samplings) for meth in methods}
    steps, done = sum(map(len, jobs.values())) + len(methods) * len(budgets), 0
    rows = []
    for meth, cfgs in jobs.items():
        # A threshold rule's samplings share one Sort and one pass of prefix counts.
        runs = sweep_samplings(A[cache], A[tune], budgets, cfgs, search=meth, seed=seed)
        for cfg, res in zip(cfgs, runs):
            for b, err in zip(
                res.table["budget"].to_numpy(dtype=np.int64),
                res.table[error].to_numpy(dtype=float),
            ):
                rows.append(
                    {
                        "method": meth,
                        "budget": int(b),
                        "sampling": cfg or "own design",
                        "train_error": float(err),
                    }
                )
        done += len(cfgs)
        if progress is not None:
            progress(done / steps)
    configs = pd.DataFrame(rows)
    best = configs.groupby(["method", "budget"], sort=False)["train_error"].idxmin()
    configs["chosen"] = False
    configs.loc[best.to_numpy(), "chosen"] = True

    pos = {int(r): i for i, r in enumerate(test)}
    per_model, tested = [], {}
    chosen_rows = configs.loc[best.to_numpy()]
    # One meta-test run per chosen (method, sampling) with all its budgets: a model-based
    # estimator is fitted once, as in the meta-train phase.
    for (meth, smp), grp in chosen_rows.groupby(["method", "sampling"], sort=False):
        chosen = None if smp == "own design" else str(smp)
        start = time.perf_counter()
        res = run_sweep(
            A[train],
            A[test],
            grp["budget"].tolist(),
            sampling=chosen,
            search=meth,
            seed=seed,
            eval_row_ids=test,
        )
        secs = time.perf_counter() - start
        pm = res.per_model.assign(method=meth, sampling=smp)
        pm["position"] = pm["model_row"].map(pos)
        per_model.append(
            pm[
                [
                    "method",
                    "budget",
                    "sampling",
                    "position",
                    "model_row",
                    "est_acc",
                    "true_acc",
                    "mae",
                    "eagg",
                ]
            ]
        )
        for idx, b in zip(grp.index, grp["budget"]):
            at = pm[pm["budget"] == b]
            tested[idx] = (float(at["mae"].mean()), float(at["eagg"].mean()), secs)
        done += len(grp)
        if progress is not None:
            progress(min(done / steps, 1.0))
    for col, k in (("test_mae", 0), ("test_eagg", 1), ("run_seconds", 2)):
        configs[col] = [tested[i][k] if i in tested else np.nan for i in configs.index]
    configs["evaluations"] = np.where(
        configs["chosen"], t * n + (m - t) * configs["budget"], np.nan
    )
    configs = configs[CONFIG_COLUMNS]
    chosen = configs[configs["chosen"]].reset_index(drop=True)
    front = pareto_front(chosen, "evaluations", f"test_{error}").reset_index(drop=True)
    split = {
        "models": m,
        "samples": n,
        "cache": inner,
        "meta_train": t,
        "meta_test": m - t,
        "full_evaluations": m * n,
    }
    return StreamProtocolResult(
        configs,
        front,
        pd.concat(per_model, ignore_index=True)
        .sort_values(["method", "budget", "position"], kind="stable")
        .reset_index(drop=True),
        split,
    )


def regret(
    per_model: pd.DataFrame, budget: int, reference: str, error: str = "mae"
) -> pd.DataFrame:
    """Cumulative ``error`` of each method minus the ``reference`` method's over the meta-test
    stream, at one budget (Bornschein et al. (2023), *NEVIS'22: A Stream of 100 Tasks Sampled from
    30 Years of Computer Vision Research*, Fig. 5).

    Parameters
    ----------
    per_model : pandas.DataFrame
        ``StreamProtocolResult.per_model``.
    budget : int
        The budget n'.
    reference : str
        The method subtracted.
    error : str
        The per-model error column.

    Returns
    -------
    pandas.DataFrame
        method, position, model_row, error, reference_error, regret (cumulative sum of the
        difference).

    Raises
    ------
    InputError
        If there are no results at ``budget`` or the reference method was not run.
    """
    at = per_model[per_model["budget"] == budget]
    if at.empty:
        raise InputError(f"no meta-test results at budget {budget}.")
    ref = at[at["method"] == reference].set_index("position")[error]
    if ref.empty:
        raise InputError(f"the reference method {reference!r} was not run.")
    frames = []
    for meth, g in at.groupby("method", sort=False):
        g = g.sort_values("position")
        diff = g[error].to_numpy() - ref.reindex(g["position"]).to_numpy()
        frames.append(
            pd.DataFrame(
                {
                    "method": meth,
                    "position": g["position"].to_numpy(),
                    "model_row": g["model_row"].to_numpy(),
                    "error": g[error].to_numpy(),
                    "reference_error": ref.reindex(g["position"]).to_numpy(),
                    "regret": np.cumsum(diff),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
