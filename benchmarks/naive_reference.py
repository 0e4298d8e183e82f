"""A naive, dense transcription of the published Sort & Search reference code.

The baseline of ``benchmarks.bench_sweep``: Listing 1 of Prabhu et al. (2024) (``sort_by_sum`` with
``np.flip(np.argsort(.))``, ``dp_search`` with ``query[query == 0] = -1`` and
``np.argmax(np.cumsum(.))``), the reference uniform grid and threshold rule
(predicted-correct region = sorted positions ``< p[i*]``), and, for every budget, the
full (models x samples) prediction matrix compared with the sorted truth. It loads the
whole matrix and shares no code with ``lifelong_core`` on purpose.

    python -m benchmarks.naive_reference --matrix A.npy --sort-models 400 --seed 0 \
        --budgets 8,16,...,32768 --out naive.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy import stats


def sort_by_sum(A):
    sum_ranking = A.sum(axis=0)
    order = np.flip(np.argsort(sum_ranking))
    return order


def uniform_sampling(n, k):
    step = n // k
    offset = step // 2 if k * step == n else n - k * step
    return np.arange(offset, offset + k * step, step)


def dp_search(query):
    query = query.astype(np.int64)
    query[query == 0] = -1
    cumsum = np.cumsum(query)
    return np.argmax(cumsum)


def kappa(err, acc_a, acc_y):
    p_e = acc_a * acc_y + (1 - acc_a) * (1 - acc_y)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = ((1 - err) - p_e) / (1 - p_e)
    return np.where(1 - p_e <= 1e-15, 1.0, k)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--matrix", required=True)
    ap.add_argument("--sort-models", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budgets", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    A = np.load(args.matrix)
    m, n = A.shape
    sort_rows = np.sort(np.random.default_rng(args.seed).choice(m, args.sort_models, replace=False))
    eval_rows = np.setdiff1d(np.arange(m), sort_rows)
    order = sort_by_sum(A[sort_rows])
    truth = A[eval_rows][:, order]
    true_acc = truth.sum(axis=1) / n
    rows = []
    for budget in [int(b) for b in args.budgets.split(",")]:
        idx = uniform_sampling(n, budget)
        preds = np.zeros_like(truth)
        for i in range(truth.shape[0]):
            preds[i, : idx[dp_search(truth[i, idx])]] = 1
        err = (preds != truth).mean(axis=1)
        est_acc = preds.sum(axis=1) / n
        rows.append(
            {
                "budget": budget,
                "mae": err.mean(),
                "eagg": np.abs(est_acc - true_acc).mean(),
                "kappa": kappa(err, true_acc, est_acc).mean(),
                "pearson": stats.pearsonr(est_acc, true_acc).statistic,
                "spearman": stats.spearmanr(est_acc, true_acc).statistic,
            }
        )
        del preds
    pd.DataFrame(rows).to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
