"""AppTest of the lm-eval tab of 'Evaluate something new': samples.json, upload, estimate, insert.

The store holds simulated models (a 2PL item-response model) on two lm-eval-style tasks
(ids ``<task>/<doc_id>``); the uploads are files in lm-eval's ``--log_samples`` format
holding a held-out simulated model's results on the chosen items (the real harness
writing such files is tested in tests/commands/test_harness_lm_eval.py).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lifelong_core.workflows import item_choice, new_model
from tests.app.apptest_pages import ok, open_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "3_Evaluate_something_new.py")
TAB = "A new model with lm-eval or Inspect"
TS = "2026-11-23T05-00-00.000001"


@pytest.fixture()
def store(tmp_path, monkeypatch):
    from lifelong_core.store import Store

    rng = np.random.default_rng(11)
    items = [("alpha", i) for i in range(60)] + [("beta", i) for i in range(40)]
    theta, b = rng.normal(0, 1.3, 41), rng.normal(0, 1.3, len(items))
    A = (rng.random((41, len(items))) < 1 / (1 + np.exp(-(theta[:, None] - b)))).astype(np.uint8)
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.add_dataset("sim", "simulated (test)", synthetic=True)
        st.insert_matrix(
            A[:40],
            [f"m{k}" for k in range(40)],
            pd.DataFrame(
                {
                    "sample_id": [f"{t}/{i}" for t, i in items],
                    "dataset": "sim",
                    "domain": [t for t, _ in items],
                }
            ),
        )
    monkeypatch.setenv("LBE_STORE", str(path))
    return path, A[40], [f"{t}/{i}" for t, i in items]


def run(query: dict) -> AppTest:
    return open_page(PAGE, query, timeout=180, no_error=True)


def chosen(path: Path, budget: int, seed: int = 0) -> list[str]:
    """What the page offers: the workflow's choice with the same method, budget and seed."""
    from lifelong_core.store import Store

    with Store.open(path) as st:
        return (
            item_choice.select_items(
                item_choice.cache_of(st, "sim"), budget, "neighbours", seed, model="new-llm"
            )
            .items["sample_id"]
            .tolist()
        )


def sample_files(ids: list[str], truth: dict) -> dict[str, bytes]:
    """The run's samples_<task>_<ts>.jsonl files, as lm_eval --log_samples writes them."""
    out: dict[str, list[str]] = {}
    for sid in ids:
        task, doc = sid.split("/")
        out.setdefault(task, []).append(
            json.dumps(
                {
                    "doc_id": int(doc),
                    "filter": "none",
                    "metrics": ["acc"],
                    "acc": float(truth[sid]),
                    "doc_hash": f"h{sid}",
                }
            )
        )
    return {
        f"samples_{t}_{TS}.jsonl": ("\n".join(lines) + "\n").encode() for t, lines in out.items()
    }


QUERY = {"tab": TAB, "lm_search": "neighbours", "lm_budget": "32"}


def test_download_upload_estimate_insert(store):
    from lifelong_core.store import Store

    path, new_row, ids = store
    truth = dict(zip(ids, new_row.tolist()))
    at = run(QUERY)
    assert any(b.label == "Download samples.json" for b in at.get("download_button"))
    assert any("--samples samples.json" in c.value for c in at.code)
    items = chosen(path, 32)
    files = sample_files(items, truth)
    assert len(files) == 2  # both tasks
    at.file_uploader(key="lm_upload").set_value(
        [(n, d, "application/json") for n, d in files.items()]
    ).run()
    ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["items evaluated"] == "32 of 100"
    with Store.open(path) as st:
        est = new_model.estimate_new_model(
            item_choice.cache_of(st, "sim"), {i: truth[i] for i in items}, "neighbours"
        )
    assert metrics["estimated accuracy"] == f"{est.overall['estimate']:.3f}"
    assert metrics["would rank"] == f"{est.rank} of 41"
    table = at.dataframe[0].value
    assert table["scope"].tolist() == ["alpha", "beta", "overall"]
    # A zip of the output folder (out/<model dir>/...) gives the same estimate.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(f"out/my-model/{name}", data)
    at.file_uploader(key="lm_upload").set_value(
        ("run.zip", buf.getvalue(), "application/zip")
    ).run()
    ok(at)
    assert {m.label: m.value for m in at.metric} == metrics

    at.text_input(key="lm_name").set_value("held-out").run()
    at.button(key="lm_insert").click().run()
    ok(at)
    assert any("Inserted 'held-out' as estimated" in s.value.replace("\\", "") for s in at.success)
    with Store.open(path) as st:
        m = st.models().set_index("model_id").loc["held-out"]
        assert bool(m["estimated"]) and json.loads(m["metadata"])["evaluated"] == 32
        row = st.matrix([int(m["model_idx"])], st.sample_index(items))[0]
        assert row.tolist() == [truth[i] for i in items]


def test_a_single_samples_file_and_bad_uploads(store):
    path, new_row, ids = store
    truth = dict(zip(ids, new_row.tolist()))
    items = [i for i in chosen(path, 32) if i.startswith("alpha/")]
    name, data = next(iter(sample_files(items, truth).items()))
    at = run(QUERY)
    at.file_uploader(key="lm_upload").upload(name, data, "application/json").run()
    ok(at)
    table = at.dataframe[0].value.set_index("scope")
    assert table.loc["beta", "evaluated"] == 0 and table.loc["alpha", "evaluated"] == len(items)

    bad = {
        f"samples_gamma_{TS}.jsonl": json.dumps(
            {"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1.0}
        ).encode()
    }
    at.file_uploader(key="lm_upload").upload(*next(iter(bad.items())), "application/json").run()
    assert not at.exception
    assert (
        len(at.error) == 1
        and "task 'gamma'" in at.error[0].value
        and "/tmp" not in at.error[0].value
    )
    at.file_uploader(key="lm_upload").upload("run.zip", b"not a zip", "application/zip").run()
    assert len(at.error) == 1 and "run\\.zip is not a readable zip archive" in at.error[0].value


def test_dataset_without_doc_ids_says_so(tmp_path, monkeypatch):
    from lifelong_core.store import Store

    path = tmp_path / "t.duckdb"
    with Store.create(path) as st:
        st.add_dataset("plain", "ids without doc numbers (test)", synthetic=True)
        st.insert_matrix(
            (np.arange(12).reshape(3, 4) % 2).astype(np.uint8),
            ["a", "b", "c"],
            pd.DataFrame({"sample_id": ["w", "x", "y", "z"], "dataset": "plain"}),
        )
    monkeypatch.setenv("LBE_STORE", str(path))
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["tab"] = TAB
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "not <task>/<doc_id>" in at.error[0].value.replace("\\", "")
    assert any("cannot be named to lm-evaluation-harness" in i.value for i in at.info)


@pytest.mark.harness
def test_an_inspect_log_is_read_back(inspect_logs, tmp_path, monkeypatch):
    """Inspect AI both ways on the page: the item list for ``--sample-id`` and a real log
    uploaded back (the toy task's mock model answers the even questions right)."""
    from lifelong_core.store import Store

    rng = np.random.default_rng(3)
    ids = [f"toy_match/q{i}" for i in range(8)]
    A = (rng.random((12, 8)) < 0.5).astype(np.uint8)
    path = tmp_path / "i.duckdb"
    with Store.create(path) as st:
        st.add_dataset("toy", "simulated models on the toy Inspect task (test)", synthetic=True)
        st.insert_matrix(
            A,
            [f"m{k}" for k in range(12)],
            pd.DataFrame({"sample_id": ids, "dataset": "toy", "domain": "toy_match"}),
        )
    monkeypatch.setenv("LBE_STORE", str(path))
    at = run({"tab": TAB, "harness": "inspect", "lm_search": "neighbours", "lm_budget": "8"})
    assert any(b.label == "Download sample_ids.txt" for b in at.get("download_button"))
    assert any("--sample-id" in c.value for c in at.code)
    log = inspect_logs["toy-match"]
    at.file_uploader(key="inspect_upload").set_value(
        (log.name, log.read_bytes(), "application/octet-stream")
    ).run()
    ok(at)
    metrics = {m.label: m.value for m in at.metric}
    # Every item evaluated: the estimate is the log's own share right, exactly.
    assert metrics["items evaluated"] == "8 of 8"
    assert metrics["estimated accuracy"] == "0.500"
