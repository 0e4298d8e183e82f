"""The sweep's one summary per budget (``sweeping.result.summarise``) against a plain
pandas group-by of the same records: the same means (NaN left out), correlations and
columns, to the last bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.sortsearch.metrics import correlations
from lifelong_core.sweeping.result import DECOMP_KEYS, TABLE_COLUMNS, summarise


def by_group(per_model: pd.DataFrame) -> pd.DataFrame:
    extra = [c for c in DECOMP_KEYS if c in per_model]
    rows = []
    for b, g in per_model.groupby("budget", sort=True):
        pear, spear = correlations(g["est_acc"].to_numpy(), g["true_acc"].to_numpy())
        row = {"budget": int(b), "pearson": pear, "spearman": spear}
        for c in ("mae", "eagg", "kappa", *extra):
            row[c] = g[c].mean()
        rows.append(row)
    return pd.DataFrame(rows, columns=TABLE_COLUMNS + extra)


@pytest.mark.parametrize("decomposed", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_the_summary_is_the_group_means_and_correlations(seed, decomposed):
    rng = np.random.default_rng(seed)
    k = 300
    per_model = pd.DataFrame(
        {
            "model_row": rng.integers(0, 50, k),
            # unsorted budgets, one of them with a single model
            "budget": np.r_[rng.choice([64, 8, 16, 1000], k - 1), 3],
            "est_acc": rng.random(k),
            "true_acc": np.round(rng.random(k), 1),  # ties for the ranks
            "mae": rng.random(k) * 1e-3,
            "eagg": rng.random(k),
            "kappa": np.where(rng.random(k) < 0.2, np.nan, rng.normal(size=k)),
        }
    )
    if decomposed:
        for c in DECOMP_KEYS:
            per_model[c] = rng.random(k)
    per_model.loc[per_model["budget"] == 16, "mae"] = np.nan  # a budget with no MAE
    pd.testing.assert_frame_equal(summarise(per_model), by_group(per_model), check_exact=True)


def test_no_records_no_rows():
    empty = pd.DataFrame(
        {c: [] for c in ("model_row", "budget", "est_acc", "true_acc", "mae", "eagg", "kappa")}
    )
    assert summarise(empty).empty
    assert list(summarise(empty).columns) == TABLE_COLUMNS
