"""What the models chosen for display may and may not change in a ranking.

Normalisation bounds are the source's (every model's replicates, LA-UR-24-25289 report,
2024, §2.4), so a model's normalised score is the same whichever models are shown; a
source of at most 20 models shows them all by default (VTAB-1k's 16: Table A.3); and
``rank --pairwise --models`` compares the chosen models only, with the family-wise
correction over their pairs (the report's Table 3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.stats import (
    bootstrap,
    from_frame,
    leaderboard,
    normalization_bounds,
    normalize,
)
from lifelong_core.stats.vtab import counts_from_leaderboard
from lifelong_core.workflows.rankings import DEFAULT_TOP, SHOW_ALL_UP_TO, default_models
from tests.app.apptest_pages import open_page

TOP3 = ["Sup-Rotation-100%", "Sup-Exemplar-100%", "Sup-100%"]


@pytest.fixture(scope="module")
def vtab(vtab_csv):
    return counts_from_leaderboard(vtab_csv)


# ------------------------------------------------------------------ the engine
def test_a_models_replicates_do_not_depend_on_the_others(vtab):
    whole = bootstrap(vtab, n_boot=300, seed=4)
    part = bootstrap(vtab.subset(models=TOP3[::-1]), n_boot=300, seed=4)
    for j, name in enumerate(TOP3[::-1]):
        np.testing.assert_array_equal(part.scores[:, j], whole.scores[:, vtab.models.index(name)])


def test_bounds_are_the_extremes_of_every_models_replicates(vtab):
    whole = bootstrap(vtab, n_boot=300, seed=4)
    low, high = normalization_bounds(vtab, 300, 4)
    np.testing.assert_array_equal(low, whole.scores.min(axis=(0, 1)))
    np.testing.assert_array_equal(high, whole.scores.max(axis=(0, 1)))
    # A reading with fewer replicates gives narrower bounds, never wider.
    low100, high100 = normalization_bounds(vtab, 300, 4, bound_replicates=100)
    assert (low100 >= low).all() and (high100 <= high).all()


def test_normalised_scores_do_not_depend_on_the_models_chosen(vtab):
    whole = leaderboard(normalize(bootstrap(vtab, n_boot=400, seed=0)))
    chosen = normalize(bootstrap(vtab.subset(models=TOP3), n_boot=400, seed=0), source=vtab)
    part = leaderboard(chosen)
    merged = part.merge(whole, on=["model", "scope"], suffixes=("", "_whole"))
    assert len(merged) == 3 * 4
    np.testing.assert_allclose(merged["mean"], merged["mean_whole"])
    np.testing.assert_allclose(merged["lo"], merged["lo_whole"])
    # Normalised over the three alone (the old behaviour), the figures move by tens of points.
    alone = leaderboard(normalize(bootstrap(vtab.subset(models=TOP3), n_boot=400, seed=0)))
    sr = "Sup-Rotation-100%"
    moved = alone.set_index(["model", "scope"]).loc[(sr, "overall"), "mean"]
    kept = part.set_index(["model", "scope"]).loc[(sr, "overall"), "mean"]
    assert abs(moved - kept) > 0.2
    # The report's reversal survives the small selection: Exemplar above Rotation.
    ov = part[part["scope"] == "overall"].set_index("model")["mean"]
    assert ov["Sup-Exemplar-100%"] > ov[sr]


def test_default_models_show_a_small_source_whole():
    assert default_models([f"m{i}" for i in range(SHOW_ALL_UP_TO)]) == [
        f"m{i}" for i in range(SHOW_ALL_UP_TO)
    ]
    many = [f"m{i}" for i in range(SHOW_ALL_UP_TO + 1)]
    assert default_models(many) == many[:DEFAULT_TOP]


# ------------------------------------------------------------------ the pages
def _overall(at) -> pd.Series:
    board = next(d.value for d in at.dataframe if "scope" in d.value.columns)
    return board[board["scope"] == "overall"].set_index("model")["mean"]


def test_rankings_normalised_score_is_the_same_whichever_models_are_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(tmp_path / "absent.duckdb"))
    page = "pages/6_Rankings.py"
    every = open_page(page, {"source": "vtab", "normalized": "1"}, timeout=300, no_error=True)
    assert len(every.multiselect(key="models-vtab").value) == 16  # Table A.3's 16 by default
    three = open_page(
        page,
        {"source": "vtab", "normalized": "1", "models": ",".join(TOP3)},
        timeout=300,
        no_error=True,
    )
    a, b = _overall(every), _overall(three)
    assert list(b.index).count("Sup-Rotation-100%") == 1 and len(b) == 3
    for m in TOP3:
        assert abs(a[m] - b[m]) <= 0.5, m
    assert b["Sup-Exemplar-100%"] > b["Sup-Rotation-100%"]


def test_task_weighting_maps_all_16_vtab_models_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(tmp_path / "absent.duckdb"))
    at = open_page("pages/7_Task_weighting.py", {"wsource": "vtab"}, timeout=300, no_error=True)
    assert len(at.multiselect(key="wmodels-vtab").value) == 16


# ------------------------------------------------------------------ the command line
@pytest.fixture()
def vtab_counts(vtab, tmp_path):
    path = tmp_path / "vtab.csv"
    vtab.to_frame().to_csv(path, index=False)
    return path


def _rank(capsys, *args):
    code = main(["rank", *map(str, args)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("method", ["bootstrap", "hierarchical"])
def test_rank_pairwise_models_compares_the_chosen_pairs_only(vtab_counts, tmp_path, capsys, method):
    out, pairs = tmp_path / "r.csv", tmp_path / "p.csv"
    extra = (
        ["--draws", "200", "--warmup", "100", "--chains", "2"] if method == "hierarchical" else []
    )
    code, err = _rank(
        capsys,
        "--counts",
        vtab_counts,
        "--out",
        out,
        "--boot",
        "300",
        "--method",
        method,
        *extra,
        "--pairwise",
        pairs,
        "--models",
        ",".join(TOP3),
    )
    assert code == 0, err
    got = pd.read_csv(pairs)
    overall = got[got["scope"] == "overall"]
    # Table 3's three comparisons, in its order, each at 1 - 0.05 / 3.
    assert list(zip(overall["model_a"], overall["model_b"])) == [
        (TOP3[0], TOP3[1]),
        (TOP3[0], TOP3[2]),
        (TOP3[1], TOP3[2]),
    ]
    assert np.allclose(got["level"], 1 - 0.05 / 3)
    assert len(got) == 3 * 4  # overall and the three categories
    # The leaderboard still ranks every model of the file.
    assert pd.read_csv(out)["model"].nunique() == 16


@pytest.mark.parametrize(
    "models,pairwise,message",
    [
        ("Sup-100%", True, "name at least two"),
        ("Sup-100%,Sup-100%", True, "names 'Sup-100%' twice"),
        ("Sup-100%,Nobody", True, "names 'Nobody', which"),
        ("Sup-100%,Rotation", False, "--models chooses the models of --pairwise"),
    ],
)
def test_rank_models_refuses_bad_choices_in_one_sentence(
    vtab_counts, tmp_path, capsys, models, pairwise, message
):
    args = ["--counts", vtab_counts, "--out", tmp_path / "r.csv", "--models", models]
    if pairwise:
        args += ["--pairwise", tmp_path / "p.csv"]
    code, err = _rank(capsys, *args)
    assert code == 2 and message in err and "Traceback" not in err
    assert err.count("\n") == 1
    assert not (tmp_path / "r.csv").exists()


def test_from_frame_round_trip_keeps_model_order(vtab):
    # The pages bootstrap a subset of a frame: the subset's order is the choice's.
    table = from_frame(vtab.to_frame())
    assert table.subset(models=TOP3).models == tuple(TOP3)
