"""All models at once (Figs. 3, 4), accuracy vs confidence (Fig. 1), subsets (Fig. 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.errors import InputError
from lifelong_core.matching import (
    SUBSETS,
    TABLE_COLUMNS,
    accuracy_vs_confidence,
    compare_models,
    make_predictions,
    matched_accuracy,
    reliability,
    subset_density,
    subset_reliability,
)


def fake_models(seed=0, m=4, n_src=300, n_tgt=120, k=5):
    rng = np.random.default_rng(seed)
    y_s, y_t = rng.integers(k, size=n_src), rng.integers(k, size=n_tgt)

    def outputs(y, skill, scale):
        p = np.clip(scale * rng.beta(2 + 6 * skill, 2, size=(m, y.size)), 1 / k, 1).astype(
            np.float32
        )
        right = rng.random((m, y.size)) < p
        return np.where(right, y, (y + 1) % k).astype(np.int32), p

    skill = np.linspace(0.2, 1.0, m)[:, None]
    # Calibrated on both sets (right with probability p), less confident on the target.
    pred_s, conf_s = outputs(y_s, skill, 1.0)
    pred_t, conf_t = outputs(y_t, skill, 0.75)
    return [f"m{i}" for i in range(m)], y_s, pred_s, conf_s, y_t, pred_t, conf_t


def test_table_sorted_by_source_accuracy_and_equal_to_single_model_runs():
    names, y_s, pred_s, conf_s, y_t, pred_t, conf_t = fake_models()
    seen = []
    res = compare_models(
        names[::-1],
        y_s,
        pred_s[::-1],
        conf_s[::-1],
        y_t,
        pred_t[::-1],
        conf_t[::-1],
        eps=0.02,
        runs=3,
        seed=5,
        progress=seen.append,
    )
    assert seen == pytest.approx([0.25, 0.5, 0.75, 1.0])
    t = res.table
    assert list(t.columns) == list(TABLE_COLUMNS)
    assert t["acc_source"].is_monotonic_increasing
    assert sorted(t["model"]) == names
    for k, name in enumerate(names):
        src = make_predictions(y_s, pred_s[k], conf_s[k])
        tgt = make_predictions(y_t, pred_t[k], conf_t[k])
        one = matched_accuracy(src, tgt, eps=0.02, runs=3, seed=5)
        row = t.set_index("model").loc[name]
        assert row["acc_source"] == pytest.approx(np.mean(y_s == pred_s[k]))
        assert row["matched_acc_source"] == pytest.approx(one.matched_acc_source)
        assert row["matched_acc_target"] == pytest.approx(one.matched_acc_target)
        assert row["fraction_unmatched"] == pytest.approx(one.fraction_unmatched)
        assert row["acc_diff"] == pytest.approx(row["acc_source"] - row["acc_target"])
        assert row["matched_acc_diff"] == pytest.approx(
            row["matched_acc_source"] - row["matched_acc_target"]
        )
        assert row["conf_target"] == pytest.approx(np.mean(conf_t[k].astype(np.float64)))
        assert res.summary(name).n_target == len(y_t)


def test_matching_narrows_the_gap_when_confidence_tracks_accuracy():
    # Simulated calibrated models whose target confidences drop: Anzaku et al.'s §4 finding in
    # miniature (matched gap well inside the raw gap).
    names, y_s, pred_s, conf_s, y_t, pred_t, conf_t = fake_models(
        seed=2, m=3, n_src=3000, n_tgt=1000
    )
    t = compare_models(names, y_s, pred_s, conf_s, y_t, pred_t, conf_t, eps=0.01, runs=2).table
    assert (t["acc_diff"] > 0.05).all()
    assert (t["matched_acc_diff"].abs() < t["acc_diff"] / 2).all()


def test_fig1_points():
    names, *arrays = fake_models(m=3)
    t = compare_models(names, *arrays, eps=0.02, runs=1).table
    pts = accuracy_vs_confidence(t)
    assert list(pts.columns) == ["model", "dataset", "accuracy", "confidence", "gap"]
    assert len(pts) == 6 and set(pts["dataset"]) == {"source", "target"}
    tgt = pts[pts["dataset"] == "target"].set_index("model")
    assert tgt["accuracy"].to_dict() == t.set_index("model")["acc_target"].to_dict()
    assert np.allclose(pts["gap"], pts["confidence"] - pts["accuracy"])


def test_bad_matrices():
    names, y_s, pred_s, conf_s, y_t, pred_t, conf_t = fake_models(m=2)
    with pytest.raises(InputError, match="confidence matrix has shape"):
        compare_models(names, y_s, pred_s, conf_s[:, :-1], y_t, pred_t, conf_t)
    with pytest.raises(InputError, match="at least one model"):
        compare_models([], y_s, pred_s[:0], conf_s[:0], y_t, pred_t[:0], conf_t[:0])
    conf_t = conf_t.copy()
    conf_t[1, 7] = np.nan
    with pytest.raises(InputError, match=r"target \(model m1\), row 8, column p"):
        compare_models(names, y_s, pred_s, conf_s, y_t, pred_t, conf_t)


def test_reliability_by_hand():
    p = [0.05, 0.15, 0.18, 0.95, 1.0]
    c = [1, 0, 1, 1, 0]
    r = reliability(p, c, bins=10)
    assert r["count"].tolist() == [1, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert r.loc[1, "confidence"] == pytest.approx(0.165)
    assert r.loc[1, "accuracy"] == 0.5
    assert r.loc[9, "accuracy"] == 0.5  # p = 1 falls in the last bin
    assert np.isnan(r.loc[5, "accuracy"])
    assert r["lo"].iloc[0] == 0.0 and r["hi"].iloc[-1] == 1.0
    with pytest.raises(InputError, match="bins"):
        reliability(p, c, bins=0)


def test_subset_tables_pool_runs():
    src = make_predictions([0, 0, 1, 1], [0, 1, 1, 1], [0.9, 0.6, 0.8, 0.3])
    tgt = make_predictions([0, 1, 1], [0, 1, 0], [0.91, 0.79, 0.2])
    s = matched_accuracy(src, tgt, eps=0.02, runs=3, seed=0)  # forced: t0->s0, t1->s2
    rel = subset_reliability(src, tgt, s.matches, bins=5)
    assert list(rel["subset"].unique()) == list(SUBSETS)
    counts = rel.groupby("subset", sort=False)["count"].sum()
    assert counts.to_dict() == {
        "source": 4,
        "target": 3,
        "matched source": 6,
        "matched target": 6,
        "unmatched target": 3,
    }
    ms = rel[rel["subset"] == "matched source"].set_index("bin")
    assert ms.loc[4, "count"] == 6 and ms.loc[4, "accuracy"] == 1.0  # s0, s2 (both right) x 3 runs
    den = subset_density(src, tgt, s.matches, bins=10)
    for _name, part in den.groupby("subset"):
        assert part["density"].sum() / 10 == pytest.approx(1.0)
    assert isinstance(den, pd.DataFrame)
    # An empty subset (nothing unmatched) gives zero density, not an error.
    s = matched_accuracy(src, src, eps=0.0, runs=1)
    den = subset_density(src, src, s.matches, bins=4)
    assert (den[den["subset"] == "unmatched target"]["density"] == 0).all()
