"""``lbe select`` and ``lbe estimate`` load the default estimator's kept state.

``lbe state --refresh`` keeps ``auto``'s item model and its cross-validated choice in the
store; the commands then rebuild the estimator from it instead of fitting on the whole
cache again. Fits are counted, not timed; a store without a usable kept state (none, or
one that predates new samples) is fitted as before.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.methods import auto
from lifelong_core.methods.registry import DEFAULT_METHOD

TS = "2026-11-23T05-00-00.000001"
ITEMS = [("alpha", i) for i in range(70)] + [("beta", i) for i in range(50)]


def write_store(path, n_models: int = 40) -> np.ndarray:
    from lifelong_core.store import Store

    rng = np.random.default_rng(3)
    theta, b = rng.normal(0, 1.3, n_models), rng.normal(0, 1.3, len(ITEMS))
    A = (rng.random((n_models, len(ITEMS))) < 1 / (1 + np.exp(-(theta[:, None] - b)))).astype(
        np.uint8
    )
    with Store.create(path) as st:
        st.add_dataset("sim", "simulated (test)", synthetic=True)
        st.insert_matrix(
            A,
            [f"m{k}" for k in range(n_models)],
            pd.DataFrame(
                {
                    "sample_id": [f"{t}/{i}" for t, i in ITEMS],
                    "dataset": "sim",
                    "domain": [t for t, _ in ITEMS],
                }
            ),
        )
    return A


def refresh(path) -> None:
    from lifelong_core.store import Store
    from lifelong_core.workflows import lifelong_state

    with Store.open(path, read_only=False) as st:
        _, item = lifelong_state.refresh(st, "sim")
    assert item.method == DEFAULT_METHOD


@pytest.fixture()
def fits(monkeypatch):
    """Counts of the whole-cache fits and of the cross-validations of the default."""
    seen = {"whole": 0, "cv": 0}
    fit, fit_packed, tune = auto.AutoEstimator.fit, auto.AutoEstimator.fit_packed, auto.tune_auto

    def counted_fit(self, A_sort, *args, **kwargs):
        seen["whole"] += np.shape(A_sort)[1] == len(ITEMS)
        return fit(self, A_sort, *args, **kwargs)

    def counted_packed(self, P, n, *args, **kwargs):
        seen["whole"] += n == len(ITEMS)
        return fit_packed(self, P, n, *args, **kwargs)

    def counted_tune(*args, **kwargs):
        seen["cv"] += 1
        return tune(*args, **kwargs)

    monkeypatch.setattr(auto.AutoEstimator, "fit", counted_fit)
    monkeypatch.setattr(auto.AutoEstimator, "fit_packed", counted_packed)
    monkeypatch.setattr(auto, "tune_auto", counted_tune)
    monkeypatch.setenv("LBE_TUNING_CACHE", "")  # every cross-validation runs, and is counted
    return seen


def run_folder(tmp_path, A_row: np.ndarray, items) -> str:
    """An lm-eval ``--log_samples`` run of one model on ``items`` (sample ids)."""
    folder = tmp_path / "run"
    folder.mkdir()
    index = {f"{t}/{i}": j for j, (t, i) in enumerate(ITEMS)}
    lines: dict[str, list[str]] = {}
    for sid in items:
        task, doc = sid.split("/")
        lines.setdefault(task, []).append(
            json.dumps(
                {
                    "doc_id": int(doc),
                    "filter": "none",
                    "metrics": ["acc"],
                    "acc": float(A_row[index[sid]]),
                    "doc_hash": f"h{sid}",
                }
            )
        )
    for task, rows in lines.items():
        (folder / f"samples_{task}_{TS}.jsonl").write_text("\n".join(rows) + "\n")
    return str(folder)


def select(path, tmp_path, capsys) -> list[str]:
    out = tmp_path / "items.json"
    argv = ["select", "--store", str(path), "--budget", "24", "--model", "new", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    return [f"{task}/{doc}" for task, docs in json.loads(out.read_text()).items() for doc in docs]


def test_select_and_estimate_load_the_kept_state_without_fitting(tmp_path, fits, capsys):
    path = tmp_path / "s.duckdb"
    A = write_store(path)
    refresh(path)
    fits.update(whole=0, cv=0)
    items = select(path, tmp_path, capsys)
    assert len(items) == 24 and fits == {"whole": 0, "cv": 0}
    argv = ["estimate", "--store", str(path), "--lm-eval", run_folder(tmp_path, A[0], items)]
    assert main([*argv, "--model", "new"]) == 0
    said = capsys.readouterr().out
    assert "new" in said
    # The per-task estimates refit on one task's items with the kept choice: no CV either.
    assert fits == {"whole": 0, "cv": 0}


def test_without_a_kept_state_the_commands_fit_as_before(tmp_path, fits, capsys):
    path = tmp_path / "s.duckdb"
    write_store(path)
    select(path, tmp_path, capsys)
    assert fits["whole"] == 1 and fits["cv"] == 1


def test_a_kept_state_that_predates_new_samples_is_not_used(tmp_path, fits, capsys):
    from lifelong_core.store import Store

    path = tmp_path / "s.duckdb"
    write_store(path)
    refresh(path)
    with Store.open(path, read_only=False) as st:  # two models on one new item
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["m0", "m1"],
                    "sample": ["beta/50", "beta/50"],
                    "correct": [1, 0],
                    "dataset": "sim",
                    "domain": "beta",
                }
            ),
            source="more.csv",
        )
    fits.update(whole=0, cv=0)
    select(path, tmp_path, capsys)
    # The cache is now the two models on all 121 items: fitted afresh, not from the state.
    assert fits["cv"] == 1
