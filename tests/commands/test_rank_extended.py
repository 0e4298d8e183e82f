"""`rank` beyond the contract: --method, --normalize, --pairwise,
--rank-intervals/--schemes, per scope. The contract's ranks.csv is unchanged by default."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.commands.rank import SCHEME_NAMES
from lifelong_core.stats import (
    SCHEMES,
    bootstrap,
    fit_hierarchical,
    from_frame,
    leaderboard,
    normalize,
)
from lifelong_core.stats.hierarchical_views import (
    category_stats_from_hierarchical,
    hierarchical_pairwise,
    hierarchical_rank_intervals,
    pairwise_by_scope,
    rank_intervals_by_scope,
)

# Three models far apart on two categories: every interval is narrow and the order certain.
ACC = {"P": (0.90, 0.80), "Q": (0.70, 0.60), "R": (0.50, 0.40)}


@pytest.fixture()
def counts(tmp_path):
    rows = [
        (m, f"{c}{j}", c, int(a * 5000), 5000)
        for m, accs in ACC.items()
        for c, a in zip(("cat1", "cat2"), accs)
        for j in range(2)
    ]
    path = tmp_path / "counts.csv"
    pd.DataFrame(rows, columns=["model", "task", "category", "correct", "total"]).to_csv(
        path, index=False
    )
    return path


def test_scheme_names_match_the_engine():
    assert tuple(SCHEMES) == SCHEME_NAMES


def test_default_output_unchanged_by_new_flags(counts, tmp_path):
    base = tmp_path / "a.csv"
    assert main(["rank", "--counts", str(counts), "--boot", "200", "--out", str(base)]) == 0
    more = tmp_path / "b.csv"
    assert (
        main(
            [
                "rank",
                "--counts",
                str(counts),
                "--boot",
                "200",
                "--out",
                str(more),
                "--pairwise",
                str(tmp_path / "p.csv"),
                "--rank-intervals",
                str(tmp_path / "r.csv"),
            ]
        )
        == 0
    )
    assert base.read_bytes() == more.read_bytes()


def test_pairwise_and_rank_intervals_hand_checked(counts, tmp_path):
    p, r = tmp_path / "p.csv", tmp_path / "r.csv"
    assert (
        main(
            [
                "rank",
                "--counts",
                str(counts),
                "--boot",
                "300",
                "--out",
                str(tmp_path / "o.csv"),
                "--pairwise",
                str(p),
                "--rank-intervals",
                str(r),
                "--schemes",
                "mean,avg_rank",
            ]
        )
        == 0
    )
    pairs = pd.read_csv(p)
    assert list(pairs.columns) == [
        "scope",
        "model_a",
        "model_b",
        "diff_pct",
        "lo_pct",
        "hi_pct",
        "level",
        "excludes_zero",
    ]
    assert list(pairs["scope"]) == ["overall"] * 3 + ["cat1"] * 3 + ["cat2"] * 3
    # P - Q is 20 points on every task; Bonferroni over 3 pairs: per-comparison level 1 - 0.05 / 3
    pq = pairs[(pairs.model_a == "P") & (pairs.model_b == "Q")]
    np.testing.assert_allclose(pq["diff_pct"], 20.0, atol=0.5)
    assert pairs["excludes_zero"].all() and np.allclose(pairs["level"], 1 - 0.05 / 3)
    ranks = pd.read_csv(r)
    assert list(ranks.columns) == ["scope", "model", "scheme", "mean", "lo", "hi"]
    assert set(ranks["scheme"]) == {"mean", "avg_rank"} and len(ranks) == 3 * 3 * 2
    want = {"P": 1, "Q": 2, "R": 3}
    for _, row in ranks.iterrows():
        assert row["mean"] == row["lo"] == row["hi"] == want[row["model"]]


def test_normalize_and_hierarchical(counts, tmp_path):
    out = tmp_path / "n.csv"
    assert (
        main(["rank", "--counts", str(counts), "--boot", "200", "--normalize", "--out", str(out)])
        == 0
    )
    norm = pd.read_csv(out)
    table = from_frame(pd.read_csv(counts))
    want = leaderboard(normalize(bootstrap(table, n_boot=200, seed=0)))
    np.testing.assert_allclose(norm["mean_pct"], (want["mean"] * 100).round(6))
    hier = tmp_path / "h.csv"
    assert (
        main(
            [
                "rank",
                "--counts",
                str(counts),
                "--method",
                "hierarchical",
                "--chains",
                "2",
                "--draws",
                "200",
                "--warmup",
                "100",
                "--out",
                str(hier),
                "--pairwise",
                str(tmp_path / "hp.csv"),
            ]
        )
        == 0
    )
    h = pd.read_csv(hier)
    assert list(h.columns) == [
        "model", "scope", "rank", "mean_pct", "lo_pct", "hi_pct", "level"
    ]  # fmt: skip
    overall = h[h.scope == "overall"].set_index("model")["mean_pct"]
    for m, accs in ACC.items():
        assert overall[m] == pytest.approx(100 * np.mean(accs), abs=1.0)
    assert pd.read_csv(tmp_path / "hp.csv")["excludes_zero"].all()


@pytest.mark.parametrize(
    "extra,msg",
    [
        (["--method", "hierarchical", "--normalize"], "--normalize applies to the bootstrap"),
        (["--schemes", "mean,median"], "'median' is not one of"),
        (["--pairwise-level", "1.5"], "level"),
    ],
)
def test_bad_flags_one_sentence(counts, tmp_path, capsys, extra, msg):
    assert main(["rank", "--counts", str(counts), "--out", str(tmp_path / "o.csv"), *extra]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


def test_hierarchical_views_on_the_engine(counts):
    table = from_frame(pd.read_csv(counts))
    fit = fit_hierarchical(table, chains=2, draws=200, warmup=100, seed=1)
    pairs = hierarchical_pairwise(fit)
    assert len(pairs) == 3 and pairs["excludes_zero"].all()
    assert pairs.set_index(["model_a", "model_b"]).loc[("P", "R"), "diff"] == pytest.approx(
        0.4, abs=0.01
    )
    r = hierarchical_rank_intervals(fit, schemes=["mean"])
    assert r.set_index("model")["mean"].to_dict() == {"P": 1, "Q": 2, "R": 3}
    by_scope = rank_intervals_by_scope(fit, schemes=["geometric"])
    assert set(by_scope["scope"]) == {"overall", "cat1", "cat2"}
    assert len(pairwise_by_scope(fit)) == 9


def test_category_stats_from_hierarchical_needs_three_categories(counts):
    from lifelong_core.errors import InputError

    fit = fit_hierarchical(from_frame(pd.read_csv(counts)), chains=1, draws=50, warmup=20)
    with pytest.raises(InputError, match="three categories"):
        category_stats_from_hierarchical(fit)
