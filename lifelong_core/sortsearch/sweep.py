"""Budget sweep of insert_M (seed 001 §4.2): Sort on some models, then for every budget
``n'`` estimate every other model from ``n'`` evaluations and score it against its full row.

Threshold rules take the prefix-count fast path (docs/CONTRACTS.md, "boundary counts"):
one pass per block of evaluated rows computes prefix counts at every cut any budget
needs, then each budget costs O(rows * n') from those counts. Nothing of size
(models x samples) beyond one block is ever held. Other search methods (the
``SearchMethod`` protocol) are run model by model on dense rows and scored the same way.

For every budget all evaluated models are evaluated on the same samples (one draw per
budget, in budget order, from ``default_rng(seed)`` when sampling is random), as a
benchmark maintainer would pick one subset and run every new model on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.sortsearch.kernels import Backend, RowBlocks, dense_backend, plan_sweep
from lifelong_core.sortsearch.methods import compute_order, get_method, is_threshold_rule
from lifelong_core.sortsearch.metrics import correlations, kappa_from, threshold_metrics
from lifelong_core.sortsearch.search import DEFAULT_RULE, resolve_sampling, rule_thresholds
from lifelong_core.sortsearch.sort import order_from_sums

TABLE_COLUMNS = ["budget", "mae", "eagg", "kappa", "pearson", "spearman"]
RECORD_KEYS = ("model_row", "budget", "est_acc", "true_acc", "mae", "eagg", "kappa")
# Seed 000 §6: the error and the normalized agreement kappa, each split into the part
# more samples cannot remove (against the best threshold y*) and the part they can.
DECOMP_KEYS = ("aleatoric", "epistemic", "kappa_aleatoric", "kappa_epistemic")
PER_MODEL_COLUMNS = ["model_row", "budget", "est_acc", "true_acc", "mae"]


def power_budgets(n: int, lo: int = 8, hi: int = 32768) -> tuple[int, ...]:
    """The paper's 13 budgets 8, 16, ..., 32768 (§4.2), keeping those <= n."""
    out = []
    b = lo
    while b <= min(hi, n):
        out.append(b)
        b *= 2
    if not out:
        raise InputError(f"no power-of-two budget between {lo} and {hi} fits {n} samples.")
    return tuple(out)


def check_budgets(budgets: Sequence[int], n: int) -> tuple[int, ...]:
    """Sorted distinct budgets, each a whole number in [1, n]."""
    out = []
    for b in budgets:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)):
            raise InputError(f"budget {b!r} is not a whole number.")
        if not 1 <= b <= n:
            raise InputError(f"budget {b} must be between 1 and the number of samples ({n}).")
        out.append(int(b))
    if not out:
        raise InputError("no budgets given.")
    return tuple(sorted(set(out)))


@dataclass(frozen=True)
class SweepResult:
    """``table``: one row per budget (means over evaluated models, correlations across
    them); ``per_model``: one row per (model, budget). With ``decompose=True`` both also
    carry ``aleatoric`` and ``epistemic`` (seed 001 §4.5) and the same split of kappa,
    ``kappa_aleatoric`` = kappa(a, y*) and ``kappa_epistemic`` = kappa(y*, y) (seed 000 §6)."""

    table: pd.DataFrame
    per_model: pd.DataFrame
    order: np.ndarray
    config: dict = field(default_factory=dict)


def _as_blocks(A: np.ndarray | RowBlocks, row_ids: np.ndarray | None, block_rows: int | None) -> RowBlocks:
    if isinstance(A, RowBlocks):
        return A
    A = np.asarray(A)
    if A.ndim != 2:
        raise InputError(f"the evaluated matrix must be 2-dimensional, got {A.ndim} dimensions.")
    return RowBlocks.from_array(A, row_ids, block_rows)


def _sort_order(A_sort, sort: str, confidence, ties: str, depth: int, backend: Backend) -> tuple[np.ndarray, int]:
    if isinstance(A_sort, RowBlocks):
        if sort != "sum":
            raise InputError(f"sort {sort!r} needs the Sort rows in memory, not streamed blocks.", param="sort")
        sums = np.zeros(A_sort.n_cols, dtype=np.int64)
        for _, block in A_sort.blocks():
            sums += backend.column_sums(block)
        return order_from_sums(sums, ties), A_sort.n_cols
    A_sort = np.asarray(A_sort)
    if A_sort.ndim != 2 or A_sort.shape[0] == 0:
        raise InputError("the Sort matrix must be 2-dimensional with at least one row.")
    if confidence is not None and np.shape(confidence) != A_sort.shape:
        raise InputError(
            f"the confidence matrix has shape {np.shape(confidence)}, the Sort rows {A_sort.shape}; they must match."
        )
    if sort == "sum":
        sums = backend.column_sums(A_sort)
        return order_from_sums(sums, ties), A_sort.shape[1]
    return compute_order(A_sort, sort, confidence, ties, depth), A_sort.shape[1]


def run_sweep(
    A_sort: np.ndarray | RowBlocks,
    A_eval: np.ndarray | RowBlocks,
    budgets: Sequence[int] | None = None,
    *,
    sort: str = "sum",
    sampling: str | None = None,
    search: str = DEFAULT_RULE,
    confidence: np.ndarray | None = None,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
    ties: str | None = None,
    depth: int = 2,
    decompose: bool = False,
    backend: Backend | None = None,
    eval_row_ids: np.ndarray | None = None,
    block_rows: int | None = None,
    threads: int = 1,
) -> SweepResult:
    """Run Sort once and Search at every budget; score against the evaluated rows.

    ``ties`` defaults to ``"reference"`` for ``search="reference"`` (so that mode
    reproduces the published code end to end, Listing 1's ``np.flip(np.argsort(.))``)
    and ``"stable"`` otherwise; ``sampling`` likewise defaults to the published grid
    (``"reference"``) for that rule and to stratum centres (``"uniform"``) otherwise.
    ``A_sort``/``A_eval`` may be uint8 0/1 arrays (not re-validated here) or :class:`RowBlocks` (streamed, possibly packed, rows;
    ``backend`` supplies ``column_sums`` and ``boundary_counts`` for them; default: the
    dense uint8 backend). ``eval_row_ids`` labels array rows in ``per_model`` (default
    0..m-1). ``progress(fraction)`` is called after every block. ``threads > 1``
    processes blocks of the threshold fast path concurrently (same results).
    """
    sampling = resolve_sampling(sampling, search)
    backend = backend or dense_backend()
    threshold = is_threshold_rule(search)
    method = None if threshold else get_method(search)
    ties = ties or ("reference" if search == "reference" else "stable")
    order, n = _sort_order(A_sort, sort, confidence, ties, depth, backend)
    blocks = _as_blocks(A_eval, eval_row_ids, block_rows)
    if blocks.n_cols != n:
        raise InputError(f"the evaluated rows have {blocks.n_cols} samples but the Sort rows have {n}.")
    if blocks.n_rows == 0:
        raise InputError("there are no rows to evaluate: every row is in the Sort set.")
    budgets = check_budgets(power_budgets(n) if budgets is None else budgets, n)
    rng = np.random.default_rng(seed)
    config = dict(sort=sort, sampling=sampling, search=search, seed=seed, ties=ties, n=n)

    if threshold:
        records, decomp = _fast_path(blocks, order, n, budgets, sampling, search, rng, backend, decompose, progress,
                                     threads)
    else:
        if decompose:
            raise InputError("the error decomposition applies to threshold rules only.")
        dense = None if isinstance(A_sort, RowBlocks) else np.asarray(A_sort)
        if dense is None:
            raise InputError(f"search method {search!r} needs the Sort rows in memory.")
        method.fit(dense, order, confidence)
        records = _protocol_path(method, blocks, n, budgets, rng, backend, progress)
        decomp = None
    per_model = pd.DataFrame(records)
    if decomp is not None:
        for k in DECOMP_KEYS:
            per_model[k] = decomp[k]
    return SweepResult(_summarise(per_model), per_model, order, config)


def _fast_path(blocks: RowBlocks, order, n, budgets, sampling, search, rng, backend, decompose, progress, threads):
    plan = plan_sweep(n, budgets, sampling, rng, rules=(search,))
    # Every sampled position of any budget, once: observations are read for all of them
    # in one pair of gathers per block, then each budget picks its own (uint8) subset.
    sampled = np.unique(np.concatenate(plan.positions))
    lo, hi = plan.index(sampled), plan.index(sampled + 1)
    pick = [np.searchsorted(sampled, p) for p in plan.positions]
    total_col = int(plan.index(np.array([n]))[0])
    if decompose and backend.best_prefix is None:
        raise InputError("this backend cannot compute the error decomposition.")

    def one_block(row_ids, block) -> dict[str, np.ndarray]:
        counts = backend.boundary_counts(block, order, plan.cuts)
        rows = counts.shape[0]
        totals = counts[:, total_col].astype(np.int64)
        # np.take along an axis is several times faster than fancy indexing here.
        observed_all = (np.take(counts, hi, axis=1) - np.take(counts, lo, axis=1)).astype(np.uint8)
        if decompose:
            t_star, c_star = backend.best_prefix(block, order)
            ale = ((t_star - c_star) + (totals - c_star)) / n
        parts: dict[str, list] = {k: [] for k in RECORD_KEYS + (DECOMP_KEYS if decompose else ())}
        for b, p, sel in zip(budgets, plan.positions, pick):
            t = rule_thresholds(search, p, np.take(observed_all, sel, axis=1), n)
            c_t = counts[np.arange(rows), plan.index(t)]
            met = threshold_metrics(t, c_t, totals, n)
            parts["model_row"].append(np.asarray(row_ids, dtype=np.int64))
            parts["budget"].append(np.full(rows, b, dtype=np.int64))
            for k in ("est_acc", "true_acc", "mae", "eagg", "kappa"):
                parts[k].append(met[k])
            if decompose:
                parts["aleatoric"].append(ale)
                parts["epistemic"].append(np.abs(t - t_star) / n)
                parts["kappa_aleatoric"].append(kappa_from(ale, totals / n, t_star / n))
                parts["kappa_epistemic"].append(kappa_from(np.abs(t - t_star) / n, t_star / n, t / n))
        return {k: np.concatenate(v) for k, v in parts.items()}

    results = _map_blocks(one_block, blocks, threads, progress)
    if not results:
        raise InputError("the evaluated rows produced no blocks to score.")
    records = {k: np.concatenate([r[k] for r in results]) for k in results[0]}
    order_idx = np.lexsort((records["model_row"], records["budget"]))
    records = {k: v[order_idx] for k, v in records.items()}
    decomp = {k: records.pop(k) for k in DECOMP_KEYS} if decompose else None
    return records, decomp


def _map_blocks(fn, blocks: RowBlocks, threads: int, progress) -> list[dict[str, np.ndarray]]:
    """Apply ``fn`` to every block; with ``threads > 1`` blocks are processed
    concurrently (NumPy releases the GIL in the gathers and running sums) while the main
    thread reads the next ones. At most ``threads + 1`` blocks are in flight, so memory
    stays bounded. Results keep block order."""
    out: list[dict[str, np.ndarray]] = []
    done = 0

    def finished(res: dict[str, np.ndarray]) -> None:
        nonlocal done
        out.append(res)
        done += len(res["model_row"]) // max(1, len(set(res["budget"].tolist())))
        if progress is not None:
            progress(min(done / blocks.n_rows, 1.0))

    if threads <= 1:
        for row_ids, block in blocks.blocks():
            finished(fn(row_ids, block))
        return out
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for row_ids, block in blocks.blocks():
            pending.append(pool.submit(fn, row_ids, block))
            if len(pending) > threads:
                finished(pending.popleft().result())
        while pending:
            finished(pending.popleft().result())
    return out


def _protocol_path(method, blocks: RowBlocks, n, budgets, rng, backend, progress):
    selections = [np.asarray(method.select(n, b, rng), dtype=np.int64) for b in budgets]
    for b, sel in zip(budgets, selections):
        if len(sel) != b:
            raise InputError(f"search method {getattr(method, 'name', method)!r} selected {len(sel)} samples for budget {b}.")
    out: dict[str, list] = {k: [] for k in ("model_row", "budget", "est_acc", "true_acc", "mae", "eagg", "kappa",
                                            "est_lo", "est_hi")}
    done = 0
    for row_ids, block in blocks.blocks():
        dense = np.asarray(backend.to_dense(block))
        for b, sel in zip(budgets, selections):
            for rid, row in zip(row_ids, dense):
                est = method.estimate(sel, row[sel])
                y = np.asarray(est.per_sample)
                if y.shape != (n,):
                    raise InputError(f"search method returned a per-sample vector of length {y.size}, expected {n}.")
                err = float(np.count_nonzero(y != row)) / n
                true = float(row.sum(dtype=np.int64)) / n
                out["model_row"].append(int(rid))
                out["budget"].append(b)
                out["est_acc"].append(float(est.acc))
                out["true_acc"].append(true)
                out["mae"].append(err)
                out["eagg"].append(abs(float(est.acc) - true))
                out["kappa"].append(float(kappa_from(err, true, float(y.mean()))))
                out["est_lo"].append(np.nan if est.lo is None else float(est.lo))
                out["est_hi"].append(np.nan if est.hi is None else float(est.hi))
        done += len(row_ids)
        if progress is not None:
            progress(done / blocks.n_rows)
    if done == 0:
        raise InputError("the evaluated rows produced no blocks to score.")
    df = pd.DataFrame(out).sort_values(["budget", "model_row"], kind="stable").reset_index(drop=True)
    if df["est_lo"].isna().all() and df["est_hi"].isna().all():
        df = df.drop(columns=["est_lo", "est_hi"])
    return {k: df[k].to_numpy() for k in df.columns}


def _summarise(per_model: pd.DataFrame) -> pd.DataFrame:
    rows = []
    extra = [c for c in DECOMP_KEYS if c in per_model]
    for b, g in per_model.groupby("budget", sort=True):
        pear, spear = correlations(g["est_acc"].to_numpy(), g["true_acc"].to_numpy())
        row = {"budget": int(b), "mae": g["mae"].mean(), "eagg": g["eagg"].mean(), "kappa": g["kappa"].mean(),
               "pearson": pear, "spearman": spear}
        for c in extra:
            row[c] = g[c].mean()
        rows.append(row)
    return pd.DataFrame(rows, columns=TABLE_COLUMNS + extra)
