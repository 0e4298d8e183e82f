"""AppTest of the 'Evaluate something new' page: download list, upload, estimate, insert."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_pages import open_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "3_Evaluate_something_new.py")


def run(query: dict | None = None) -> AppTest:
    return open_page(PAGE, query, timeout=180)


@pytest.fixture()
def store_env(demo_store_path, monkeypatch):
    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    return demo_store_path


@pytest.fixture()
def store_copy(tmp_path, demo_store_path, monkeypatch):
    """A copy of the demo store for the page to write to."""
    store = tmp_path / "copy.duckdb"
    shutil.copy(demo_store_path, store)
    monkeypatch.setenv("LBE_STORE", str(store))
    return store


def _digits(store_path: Path):
    """The digits dataset's selection (the store also holds the leaderboard's models)."""
    from lifelong_core.store import Store
    from lifelong_core.workflows.selection import select

    with Store.open(store_path, read_only=True) as s:
        return select(s, "lifelong-digits")


def _truth(store_path: Path):
    sel = _digits(store_path)
    return sel.models, sel.samples, sel.A[:5]


def _fitted(store_path: Path, search: str, budget: int, seed: int = 0, name: str = "new-model"):
    # The page's fit: every model of the dataset, Sort by sum; the list it offers to the
    # model named ``name`` (the page's default name): its own draw.
    from lifelong_core.methods import get_method
    from lifelong_core.methods.draws import model_rng
    from lifelong_core.sortsearch import compute_order

    sel = _digits(store_path)
    samples, A = sel.samples, sel.A
    method = get_method(search).fit(A, compute_order(A, "sum"))
    cols = method.select(A.shape[1], budget, model_rng(name, seed))
    return method, cols, samples["sample_id"].to_numpy(dtype=object)[cols].tolist()


def _selected(store_path: Path, search: str, budget: int, seed: int = 0) -> list[str]:
    return _fitted(store_path, search, budget, seed)[2]


def _upload_stored_row(
    store_path: Path, search: str, budget: int, row: int
) -> tuple[AppTest, list[str]]:
    """The page with ``search`` at ``budget`` given stored model ``row``'s results on the
    samples it lists (a new model whose every result is known), and those sample ids."""
    ids = _selected(store_path, search, budget)
    _, samples, A = _truth(store_path)
    truth = dict(zip(samples["sample_id"], A[row]))
    csv = (
        pd.DataFrame({"sample_id": ids, "correct": [int(truth[i]) for i in ids]})
        .to_csv(index=False)
        .encode()
    )
    at = run({"search": search, "budget": str(budget)})
    at.file_uploader[0].upload("results.csv", csv, "text/csv").run()
    return at, ids


def test_default_state_offers_the_sample_list(store_env):
    at = run()
    assert at.title[0].value == "Evaluate something new"
    labels = [b.label for b in at.get("download_button")]
    assert any("sample ids" in lab for lab in labels), labels
    assert any("Download its results" in lab for lab in labels), labels
    assert len(at.file_uploader) == 1
    assert not at.error


def test_upload_gives_estimate_rank_and_per_sample(store_env):
    method, cols, ids = _fitted(store_env, "midpoint", 256)
    models, samples, A = _truth(store_env)
    # Results of an existing model (row 0) on the requested samples: the estimate must
    # come back close to its true accuracy.
    truth = dict(zip(samples["sample_id"], A[0]))
    csv = (
        pd.DataFrame({"sample_id": ids, "correct": [int(truth[i]) for i in ids]})
        .to_csv(index=False)
        .encode()
    )
    at = run({"search": "midpoint", "budget": "256"})
    at.file_uploader[0].upload("results.csv", csv, "text/csv").run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    expected = method.estimate(cols, A[0][cols])
    assert metrics["estimated accuracy"] == f"{expected.acc:.3f}"
    assert metrics["items evaluated"] == f"256 of {len(samples):,}"
    # The one estimate and its table, as every new-model tab shows them.
    table = next(d.value for d in at.dataframe if "scope" in d.value).set_index("scope")
    assert table.loc["overall", "observed"] == pytest.approx(A[0][cols].mean())
    assert metrics["would rank"].endswith(f"of {len(models) + 1}")
    assert any(b.label.startswith("Insert") for b in at.button)


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"sample_id,correct\nclean/0000,2\n", "expected 0/1, true/false or yes/no"),
        (b"sample,correct\nclean/0000,1\n", "no column 'sample_id'"),
        (b"sample_id,correct\nnot-a-sample,1\n", "has no result for sample_id"),
        (b"", "empty"),
    ],
)
def test_bad_upload_gives_one_sentence(store_env, content, needle):
    at = run({"search": "midpoint", "budget": "256"})
    at.file_uploader[0].upload("results.csv", content, "text/csv").run()
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.error) == 1
    msg = at.error[0].value.replace("\\", "")  # shown as text: Markdown characters escaped
    assert needle in msg and "Traceback" not in msg and msg.count("\n") == 0, msg


def test_the_downloaded_list_with_its_result_column_filled_is_accepted(store_env):
    ids = _selected(store_env, "midpoint", 256)
    _, samples, A = _truth(store_env)
    truth = dict(zip(samples["sample_id"], A[0]))
    at = run({"search": "midpoint", "budget": "256"})
    from lifelong_core.workflows.arrivals import samples_to_run
    from lifelong_core.workflows.selection import Selection

    sel = _digits(store_env)
    pos = pd.Index(sel.samples["sample_id"]).get_indexer(ids)
    back = samples_to_run(Selection(sel.A, sel.models, sel.samples, False), pos)
    # What the page offers: the ids, their domain and an empty column to fill in.
    assert list(back.columns) == ["sample_id", "domain", "correct"]
    assert back["sample_id"].tolist() == ids and (back["correct"] == "").all()
    back["correct"] = ["True" if truth[i] else "false" for i in ids]
    at.file_uploader[0].upload("list.csv", back.to_csv(index=False).encode(), "text/csv").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # The list's own columns come back expected: nothing is reported as ignored.
    assert not any("ignored" in i.value for i in at.info), [i.value for i in at.info]
    assert {m.label for m in at.metric} >= {"estimated accuracy", "would rank"}
    # A column the list did not have is still named.
    back["note"] = "x"
    at.file_uploader[0].upload("list.csv", back.to_csv(index=False).encode(), "text/csv").run()
    assert any("ignored: note" in i.value for i in at.info)


def test_estimator_with_interval(store_env):
    at, _ = _upload_stored_row(store_env, "neighbours", 64, row=1)
    assert not at.exception and not at.error
    labels = [m.label for m in at.metric]
    assert "95% interval" in labels


def test_insert_marks_model_estimated(store_copy):
    store = store_copy
    at, ids = _upload_stored_row(store, "midpoint", 128, row=2)
    _, samples, A = _truth(store)
    at.text_input(key="new_name").set_value("my-new-model").run()
    at.button(key="insert_model").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("Inserted model 'my-new-model'" in s.value.replace("\\", "") for s in at.success)

    from lifelong_core.store import Store

    with Store.open(store, read_only=True) as s:
        models = s.models()
        new = models[models["model_id"] == "my-new-model"]
        assert len(new) == 1 and bool(new["estimated"].iloc[0])
        row = s.matrix(new["model_idx"].to_numpy(), samples["sample_idx"].to_numpy())[0]
    # The evaluated samples keep the observed results.
    pos = samples.set_index("sample_id").loc[ids, "sample_idx"].to_numpy()
    assert np.array_equal(
        row[np.searchsorted(samples["sample_idx"].to_numpy(), pos)],
        A[2][np.searchsorted(samples["sample_idx"].to_numpy(), pos)],
    )


def test_new_samples_flow(store_env):
    from lifelong_core.methods import InsertD

    sel = _digits(store_env)
    models, A = sel.models, sel.A
    rows = InsertD().fit(A).select(A.shape[0], 32, np.random.default_rng(0))
    # Two "new" samples: copies of stored samples 0 and 5000 under new ids.
    recs = []
    for new_id, col in (("fresh-a", 0), ("fresh-b", 5000)):
        for r in rows:
            recs.append(
                {
                    "model_id": models["model_id"].iloc[r],
                    "sample_id": new_id,
                    "correct": int(A[r, col]),
                }
            )
    csv = pd.DataFrame(recs).to_csv(index=False).encode()
    at = run({"tab": "New samples (insert_D)", "models_budget": "32"})
    assert len(at.file_uploader) == 1
    at.file_uploader[0].upload("new.csv", csv, "text/csv").run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert len(at.dataframe) >= 1
    table = at.dataframe[0].value
    assert list(table["sample_id"]) == ["fresh-a", "fresh-b"]
    assert table["predicted_share_right"].between(0, 1).all()


def test_new_samples_reject_known_ids(store_env):
    csv = b"model_id,sample_id,correct\nm,clean/0000,1\n"
    at = run({"tab": "New samples (insert_D)"})
    at.file_uploader[0].upload("new.csv", csv, "text/csv").run()
    assert not at.exception
    assert len(at.error) == 1 and "already holds" in at.error[0].value


def test_insert_into_locked_store_gives_one_sentence(store_copy):
    import subprocess
    import sys

    store = store_copy
    at, _ = _upload_stored_row(store, "midpoint", 128, row=3)
    # Another process reading the store (e.g. a second app) keeps writers out.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, duckdb; c = duckdb.connect(sys.argv[1], read_only=True); "
                "print('ready', flush=True); sys.stdin.read()"
            ),
            str(store),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        at.button(key="insert_model").click().run()
    finally:
        holder.communicate("", timeout=30)
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.error) == 1 and "locked" in at.error[0].value
    assert not at.success
    from lifelong_core.store import Store

    with Store.open(store, read_only=True) as s:
        assert not s.models()["estimated"].astype(bool).any()


@pytest.mark.slow
def test_insert_new_samples_writes_only_real_evaluations(store_copy):
    from lifelong_core.methods import InsertD
    from lifelong_core.store import Store

    store = store_copy
    sel = _digits(store)
    models, samples, A = sel.models, sel.samples, sel.A
    rows = InsertD().fit(A).select(A.shape[0], 16, np.random.default_rng(0))
    recs = [
        {"model_id": models["model_id"].iloc[r], "sample_id": "fresh-x", "correct": int(A[r, 7])}
        for r in rows
    ]
    at = run({"tab": "New samples (insert_D)", "models_budget": "16"})
    at.file_uploader[0].upload(
        "new.csv", pd.DataFrame(recs).to_csv(index=False).encode(), "text/csv"
    ).run()
    at.button(key="insert_samples").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("Inserted 16 evaluations" in s.value for s in at.success)
    with Store.open(store, read_only=True) as s:
        new = s.samples("lifelong-digits-new")
        assert list(new["sample_id"]) == ["fresh-x"]
        known = s.known(None, new["sample_idx"].to_numpy())[:, 0]
        assert known.sum() == 16 and set(np.flatnonzero(known)) == set(
            models["model_idx"].to_numpy()[rows]
        )
        assert np.array_equal(
            s.matrix(models["model_idx"].to_numpy()[rows], new["sample_idx"].to_numpy())[:, 0],
            A[rows, 7],
        )
        # The original dataset keeps every model complete.
        assert s.known(models["model_idx"].to_numpy(), samples["sample_idx"].to_numpy()[:5]).all()
    # Every page of this part still opens on the new one-sample dataset and on the old one.
    for page in (
        "app.py",
        "pages/1_Budget_explorer.py",
        "pages/2_Estimated_vs_true.py",
        "pages/5_Stream.py",
        "pages/4_How_Sort_and_Search_works.py",
    ):
        for ds in ("lifelong-digits-new", "lifelong-digits"):
            other = AppTest.from_file(str(ROOT / page), default_timeout=180)
            other.query_params["ds"] = ds
            other.run()
            assert not other.exception, (page, ds, [e.message for e in other.exception])


def test_random_sample_estimates_without_predicting_and_offers_no_insert(store_env):
    at, ids = _upload_stored_row(store_env, "random", 64, row=1)
    assert not at.exception and not at.error, [e.value for e in at.error]
    _, samples, A = _truth(store_env)
    truth = dict(zip(samples["sample_id"], A[1]))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["estimated accuracy"] == f"{np.mean([truth[i] for i in ids]):.3f}"
    assert "95% interval" in metrics
    assert not any(b.label.startswith("Insert") for b in at.button)
    assert any("no estimated row to insert" in c.value for c in at.caption)
