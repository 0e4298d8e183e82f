"""benchmarks.bench_estimators stays runnable and its target checks read the table right."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from benchmarks import bench_estimators as bench


def test_bench_runs_end_to_end_on_a_small_matrix(tmp_path):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(30, 1)) + rng.normal(size=(1, 400)) + 0.5 * rng.normal(size=(30, 400))
    path = tmp_path / "A.npy"
    np.save(path, (rng.random((30, 400)) < 1 / (1 + np.exp(-logits))).astype(np.uint8))
    out = tmp_path / "r.json"
    assert (
        bench.main(
            [
                "--matrix",
                str(path),
                "--seeds",
                "1",
                "--budgets",
                "16,64",
                "--method",
                "mirt",
                "--timing-n",
                "300",
                "--timing-reps",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    table = pd.DataFrame(res["table"])
    assert set(table["method"]) == {"reference", "copy-nearest", "mirt"}
    assert table[table.method == "mirt"][["coverage", "coverage_fresh"]].notna().all().all()
    assert res["best"] == "mirt" and set(res["criteria"]) == {"mirt"}
    assert {t["method"] for t in res["timing"]} == {"reference", "copy-nearest", "mirt"}


def test_criteria_compare_against_the_right_rows():
    rows = []
    for b in (64, 1024):
        rows += [
            dict(
                method="reference",
                budget=b,
                mae=0.20,
                eagg=0.06,
                coverage=np.nan,
                coverage_fresh=np.nan,
            ),
            dict(
                method="copy-nearest",
                budget=b,
                mae=0.19,
                eagg=0.05,
                coverage=np.nan,
                coverage_fresh=np.nan,
            ),
            dict(
                method="x",
                budget=b,
                mae=0.17 if b == 64 else 0.18,
                eagg=0.019,
                coverage=0.95,
                coverage_fresh=0.98,
            ),
        ]
    verdict = bench.criteria(pd.DataFrame(rows), "x")
    assert (
        verdict["eagg <= 1/3 S&S at n'=1024"] and verdict["eagg <= 1/2 S&S at every budget >= 64"]
    )
    assert verdict["coverage in [0.93, 0.97] at every budget >= 64"]
    assert not verdict["fresh-draw coverage in [0.93, 0.97] at every budget >= 64"]
    assert verdict["mae >= 10% below S&S at n'=64"]  # 0.17 <= 0.18
    assert not verdict["mae >= 15% below S&S at n'=1024"]  # 0.18 > 0.17
