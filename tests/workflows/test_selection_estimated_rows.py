"""Rows inserted as *estimated* are left out of every score, on every page and command that scores.

The rule lives once, in ``lifelong_core.workflows.selection.real_models``; these tests
insert one estimated row that would win everything (right on every sample, confident)
and check that no score, leaderboard, map or model list shows it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.store import Store
from lifelong_core.workflows.rankings import newest_estimated_counts
from lifelong_core.workflows.selection import complete_counts, real_models, select
from tests.app.apptest_pages import open_page

FAKE = "estimated-perfect"
N_REAL = 12


def make_store(path: Path) -> Path:
    """12 real models of spread-out skill on 3 categories x 2 domains, with labels,
    predicted labels and confidences; then one estimated row, right everywhere."""
    rng = np.random.default_rng(1)
    domains = [(f"{c}-{k}", c) for c in ("alpha", "beta", "gamma") for k in range(2)]
    per = 40
    smp = pd.DataFrame(
        {
            "sample_id": [f"s{i}" for i in range(len(domains) * per)],
            "dataset": "toy",
            "domain": [d for d, _ in domains for _ in range(per)],
            "category": [c for _, c in domains for _ in range(per)],
            "label": rng.integers(0, 3, len(domains) * per),
            "split": "test",
        }
    )
    n = len(smp)
    skill = np.linspace(0.3, 0.8, N_REAL)[:, None]
    A = (rng.random((N_REAL, n)) < skill).astype(np.uint8)
    labels = smp["label"].to_numpy()
    pred = np.where(A == 1, labels, (labels + 1) % 3).astype(np.int32)
    conf = rng.uniform(0.4, 1.0, (N_REAL, n)).astype(np.float32)
    models = pd.DataFrame(
        {
            "model_id": [f"id{i}" for i in range(N_REAL)],
            "name": [f"model-{i:02d}" for i in range(N_REAL)],
            "family": ["toy"] * N_REAL,
            "release_order": np.arange(1, N_REAL + 1),
        }
    )
    with Store.create(path) as st:
        st.insert_matrix(
            A,
            models=models,
            samples=smp,
            source="toy.npy",
            extras={"predicted": pred, "confidence": conf, "true_prob": conf},
        )
        fake = pd.DataFrame(
            {
                "model_id": [FAKE],
                "name": [FAKE],
                "family": ["estimated"],
                "estimated": [True],
                "release_order": [N_REAL + 1],
            }
        )
        st.insert_matrix(
            np.ones((1, n), dtype=np.uint8),
            models=fake,
            samples=smp["sample_id"].tolist(),
            source="app upload",
            extras={
                "predicted": labels[None, :].astype(np.int32),
                "confidence": np.ones((1, n), np.float32),
                "true_prob": np.ones((1, n), np.float32),
            },
        )
    return path


@pytest.fixture(scope="module")
def store_file(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("estimated") / "toy.duckdb")


@pytest.fixture
def use_store(store_file, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(store_file))
    return store_file


# ------------------------------------------------------------------ the rule, in workflows
def test_real_models_drop_estimated_rows(store_file):
    with Store.open(store_file) as s:
        models = s.models()
        assert FAKE in set(models["name"])
        assert FAKE not in set(real_models(models)["name"])
        assert len(real_models(models)) == N_REAL


def test_every_workflow_that_scores_leaves_the_estimated_row_out(store_file):
    with Store.open(store_file) as s:
        sel = select(s, "toy")
        assert FAKE not in sel.names and len(sel.names) == N_REAL
        counts, dropped = complete_counts(s, "toy")
        assert FAKE not in set(counts["model"]) and FAKE not in dropped
        assert counts["model"].nunique() == N_REAL
        est, true, _ = newest_estimated_counts(s, "toy", 3, 40, "midpoint", 0)
        # The newest *real* models play the new ones; the estimated row is neither cache nor new.
        assert set(est["model"]) == set(true["model"]) == {"model-09", "model-10", "model-11"}


def test_info_summary_scores_evaluated_models_only_and_marks_the_estimated_row(store_file):
    with Store.open(store_file) as s:
        summary = s.summary()
        real = s.counts("toy", models=real_models(s.models())["model_idx"].to_numpy())
    ds = summary["datasets"].set_index("dataset").loc["toy"]
    assert ds["models"] == N_REAL
    assert ds["accuracy"] == round(real["correct"].sum() / real["total"].sum(), 4)
    mdl = summary["models"].set_index("name")
    assert bool(mdl.loc[FAKE, "estimated"]) and not mdl.drop(FAKE)["estimated"].any()


def test_info_says_its_accuracies_leave_the_estimated_row_out(store_file, capsys):
    from lifelong_core.cli import main

    assert main(["info", "--store", str(store_file)]) == 0
    out = capsys.readouterr().out
    assert "the 1 rows inserted as estimates (estimated = True below) are predictions" in out
    assert "left out of their models, entries and accuracy" in out


def test_export_and_sweep_leave_the_estimated_row_out_and_say_so(store_file, tmp_path, capsys):
    from lifelong_core.cli import main

    assert main(["export", "--store", str(store_file), "--matrix", str(tmp_path / "A.npy"),
                 "--models", str(tmp_path / "m.txt")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "left out: 1 inserted as estimates, not evaluated" in out
    assert FAKE not in (tmp_path / "m.txt").read_text()
    assert np.load(tmp_path / "A.npy").shape[0] == N_REAL
    assert main(["export", "--store", str(store_file), "--counts", str(tmp_path / "c.csv")]) == 0
    capsys.readouterr()
    assert FAKE not in set(pd.read_csv(tmp_path / "c.csv")["model"])


# ------------------------------------------------------------------ every page that scores
def run(page: str, **query) -> AppTest:
    return open_page(page, query, no_error=True)


def frames(at: AppTest) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe]


def names_shown(at: AppTest) -> set[str]:
    """Every value of a model/name column of every table on the page."""
    out: set[str] = set()
    for df in frames(at):
        for col in ("model", "name", "winner", "runner_up", "model_a", "model_b"):
            if col in df:
                out |= set(df[col].astype(str))
    return out


def test_rankings_store_leaderboard_leaves_estimated_rows_out(use_store):
    at = run("pages/6_Rankings.py", source="store")
    shown = names_shown(at)
    assert "model-11" in shown
    assert FAKE not in shown


def test_rankings_estimated_source_leaves_estimated_rows_out(use_store):
    at = run("pages/6_Rankings.py", source="estimated")
    shown = names_shown(at)
    assert "model-11" in shown
    assert FAKE not in shown


def test_task_weighting_store_leaves_estimated_rows_out(use_store):
    at = run("pages/7_Task_weighting.py", wsource="store")
    shown = names_shown(at)
    assert shown & {f"model-{i:02d}" for i in range(N_REAL)}
    assert FAKE not in shown


def test_matched_accuracy_leaves_estimated_rows_out(use_store):
    at = run(
        "pages/8_Matched_accuracy.py",
        src_ds="toy",
        tgt_ds="toy",
        src_dom="alpha-0,beta-0,gamma-0",
        tgt_dom="alpha-1,beta-1,gamma-1",
        runs="2",
    )
    assert FAKE not in at.selectbox(key="match-model").options
    table = frames(at)[0]
    assert len(table) == N_REAL and FAKE not in set(table["model"])


@pytest.mark.parametrize(
    "page,query",
    [
        ("pages/1_Budget_explorer.py", {"search": "midpoint", "k": "4"}),
        ("pages/2_Estimated_vs_true.py", {"search": "midpoint", "k": "4"}),
        ("pages/5_Stream.py", {"pool": "4"}),
    ],
)
def test_sort_and_search_pages_leave_estimated_rows_out(use_store, page, query):
    at = run(page, **query)
    assert FAKE not in names_shown(at)
    if page.startswith("pages/1"):
        assert {m.label: m.value for m in at.metric}["evaluated models"] == str(N_REAL - 4)
    if page.startswith("pages/5"):
        assert {m.label: m.value for m in at.metric}["models in the stream"] == str(N_REAL)


def test_evaluate_new_ranks_against_real_models_only(use_store):
    at = run("pages/3_Evaluate_something_new.py", search="midpoint")
    assert FAKE not in at.selectbox(key="demo_model").options


# ------------------------------------------------------------------ every command that scores
def test_cli_select_fits_on_real_models_only(store_file, tmp_path, capsys):
    from lifelong_core.cli import main

    out = tmp_path / "items.csv"
    assert (
        main(
            [
                "select",
                "--store",
                str(store_file),
                "--dataset",
                "toy",
                "--budget",
                "10",
                "--method",
                "reference",
                "--common-items",
                "--format",
                "csv",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert f"fitted on {N_REAL} models" in capsys.readouterr().out
