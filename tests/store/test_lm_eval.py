"""``import --lm-eval DIR``: a folder (or zip) of lm-eval runs, one per model, in one command
and one transaction; a bad run skipped and named, or with ``--strict`` the whole import
refused with the store unchanged."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.store import Store
from lifelong_core.workflows import imports
from tests.store.lm_eval_runs import TASK, TS, correctness, model_names, write_run, write_runs


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """200 models' runs on one 60-item task (the generator's full size, few items)."""
    out = tmp_path_factory.mktemp("zoo") / "out"
    runs = write_runs(out, n_models=200, n_items=60)
    return out, runs


def _import(argv, capsys):
    rc = main(["import", *argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _error(err: str) -> str:
    """The error line: the last of stderr, after any progress lines, and the only one."""
    lines = err.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    return errors[0]


def test_a_folder_of_200_runs_is_one_import(zoo, tmp_path, capsys):
    out, runs = zoo
    store = tmp_path / "s.duckdb"
    rc, said, err = _import(["--store", str(store), "--lm-eval", str(out)], capsys)
    assert rc == 0, err
    assert "imported 12000 predictions from 200 of 200 runs" in said and "200 new models" in said
    assert "100.0%" in err and "Reading run" in err  # progress over the runs, on stderr
    with Store.open(store) as st:
        log = st.log()
        assert len(log) == 1 and log["action"].tolist() == ["insert_lm_eval"]  # one transaction
        models = st.models().set_index("model_id")
        assert sorted(models.index) == sorted(runs)
        # Named by each run's own results file; family from the organisation prefix.
        assert models.loc["Qwen/model-002", "family"] == "Qwen"
        assert set(models["family"]) == {n.split("/")[0] for n in runs}
        ds = st.datasets()
        # The dataset is the task; its source is the folder of runs, not one model's folder.
        assert ds["dataset"].tolist() == [TASK]
        assert ds["source"].iloc[0] == f"lm-eval:{out}"
        A = st.matrix(
            st.model_index(model_names(200)), st.sample_index([f"{TASK}/{j}" for j in range(60)])
        )
    assert np.array_equal(A, correctness(200, 60))


def test_a_zip_of_the_runs_gives_the_same_store(zoo, tmp_path, capsys):
    _, runs = zoo
    archive = tmp_path / "runs.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for folder in list(runs.values())[:20]:
            for f in folder.iterdir():
                zf.write(f, f"out/{folder.name}/{f.name}")
    store = tmp_path / "z.duckdb"
    rc, said, err = _import(["--store", str(store), "--lm-eval", str(archive)], capsys)
    assert rc == 0, err
    assert "from 20 of 20 runs" in said
    with Store.open(store) as st:
        assert sorted(st.models()["model_id"]) == sorted(list(runs)[:20])
        assert st.datasets()["dataset"].tolist() == [TASK]


def _with_a_bad_run(tmp_path, n=12):
    out = tmp_path / "out"
    runs = write_runs(out, n_models=n, n_items=30)
    bad = runs[model_names(n)[n // 2]]
    # A run cut off mid-write: its last line is half a JSON object.
    f = bad / f"samples_{TASK}_{TS}.jsonl"
    f.write_text(f.read_text()[:-40])
    return out, runs, bad


def test_a_bad_run_in_the_middle_is_skipped_and_named(tmp_path, capsys):
    out, _, bad = _with_a_bad_run(tmp_path)
    store = tmp_path / "s.duckdb"
    rc, said, err = _import(["--store", str(store), "--lm-eval", str(out)], capsys)
    assert rc == 0
    skipped = [line for line in err.splitlines() if line.startswith("skipped run")]
    assert len(skipped) == 1 and bad.name in skipped[0] and "not valid JSON" in skipped[0]
    assert "from 11 of 12 runs" in said and f"1 run(s) skipped ({bad.name})" in said
    with Store.open(store) as st:
        assert len(st.models()) == 11 and len(st.log()) == 1
        assert bad.name.replace("__", "/") not in set(st.models()["model_id"])


def test_strict_rejects_the_whole_import_and_leaves_the_store_unchanged(tmp_path, capsys):
    out, _, bad = _with_a_bad_run(tmp_path)
    # Into a store that does not exist yet: it must not be left behind.
    fresh = tmp_path / "new.duckdb"
    rc, _, err = _import(["--store", str(fresh), "--lm-eval", str(out), "--strict"], capsys)
    err = _error(err)
    assert rc == 2 and f"run {bad.name} of {out} cannot be imported" in err
    assert "not valid JSON" in err and "nothing was imported" in err
    assert not fresh.exists()
    # Into an existing store: not one byte changes.
    store = tmp_path / "s.duckdb"
    first = write_run(tmp_path / "first" / "org__first", "org/first", np.ones(30, dtype=np.uint8))
    assert _import(["--store", str(store), "--lm-eval", str(first)], capsys)[0] == 0
    before = store.read_bytes()
    rc, _, err = _import(["--store", str(store), "--lm-eval", str(out), "--strict"], capsys)
    assert rc == 2 and bad.name in err
    assert store.read_bytes() == before


def test_every_run_bad_is_one_sentence(tmp_path, capsys):
    out = tmp_path / "out"
    for i in range(5):
        folder = out / f"org__m{i}"
        folder.mkdir(parents=True)
        (folder / f"samples_{TASK}_{TS}.jsonl").write_text("{not json\n")
    rc, _, err = _import(["--store", str(tmp_path / "s.duckdb"), "--lm-eval", str(out)], capsys)
    err = _error(err)
    assert rc == 2 and "none of the 5 runs" in err and "org__m0, org__m1, org__m2 and 2 more" in err


def test_model_with_a_folder_of_runs_is_one_short_sentence(zoo, tmp_path, capsys):
    out, _ = zoo
    store = tmp_path / "s.duckdb"
    rc, _, err = _import(["--store", str(store), "--lm-eval", str(out), "--model", "x"], capsys)
    assert rc == 2 and err.startswith("error: --model: ") and err.count("\n") == 1
    assert "holds 200 runs" in err and "and 197 more" in err and len(err) < 400
    assert not store.exists()


def test_the_same_model_twice_keeps_the_first_run(tmp_path, capsys):
    out = tmp_path / "out"
    row = np.ones(20, dtype=np.uint8)
    write_run(out / "a" / "org__m", "org/m", row)
    write_run(out / "b" / "org__m", "org/m", 1 - row)
    store = tmp_path / "s.duckdb"
    rc, _, err = _import(["--store", str(store), "--lm-eval", str(out)], capsys)
    assert (
        rc == 0
        and "skipped run b/org__m: its model 'org/m' is also the model of run a/org__m" in err
    )
    with Store.open(store) as st:
        assert st.matrix().tolist() == [row.tolist()]


def test_a_run_of_another_task_version_is_skipped(tmp_path, capsys):
    out = tmp_path / "out"
    write_run(out / "org__a", "org/a", np.ones(10, dtype=np.uint8))
    other = write_run(out / "org__b", "org/b", np.zeros(10, dtype=np.uint8))
    f = other / f"samples_{TASK}_{TS}.jsonl"
    f.write_text(f.read_text().replace(f'"{TASK}-3"', '"edited"'))
    rc, _, err = _import(["--store", str(tmp_path / "s.duckdb"), "--lm-eval", str(out)], capsys)
    assert rc == 0 and "skipped run org__b: its item 'arc_challenge/3' differs" in err


def test_later_imports_go_to_the_dataset_that_holds_the_items(tmp_path, capsys):
    store = tmp_path / "s.duckdb"
    A = correctness(6, 25)
    names = model_names(6)
    first = [
        write_run(tmp_path / "one" / n.replace("/", "__"), n, A[i]) for i, n in enumerate(names[:3])
    ]
    assert (
        _import(
            ["--store", str(store), "--lm-eval", str(first[0].parent), "--dataset", "arc"], capsys
        )[0]
        == 0
    )
    for i, n in enumerate(names[3:], start=3):
        write_run(tmp_path / "two" / n.replace("/", "__"), n, A[i])
    rc, _, err = _import(["--store", str(store), "--lm-eval", str(tmp_path / "two")], capsys)
    assert rc == 0, err
    with Store.open(store) as st:
        assert st.datasets()["dataset"].tolist() == ["arc"] and len(st.models()) == 6


def test_one_run_is_named_by_its_results_file_and_model_still_overrides(tmp_path, capsys):
    run = write_run(tmp_path / "out" / "org__solo", "org/solo", np.ones(8, dtype=np.uint8))
    store = tmp_path / "s.duckdb"
    assert _import(["--store", str(store), "--lm-eval", str(run)], capsys)[0] == 0
    other = write_run(tmp_path / "x" / "org__two", "org/two", np.zeros(8, dtype=np.uint8))
    assert (
        _import(["--store", str(store), "--lm-eval", str(other), "--model", "mine"], capsys)[0] == 0
    )
    with Store.open(store) as st:
        assert sorted(st.models()["model_id"]) == ["mine", "org/solo"]


def test_python_api_reads_first_and_writes_once(zoo, tmp_path):
    out, _ = zoo
    seen = []
    src = imports.lm_eval_source(out, progress=lambda f, t: seen.append(f))
    assert src.runs == 200 and not src.skipped and seen[-1] == 1.0
    summary = imports.import_into(tmp_path / "s.duckdb", src)
    assert summary["new_models"] == 200 and summary["runs"] == 200
    with pytest.raises(InputError, match="holds no run"):
        imports.lm_eval_source(tmp_path)


def test_results_name_the_model_by_model_name_else_pretrained(tmp_path):
    from lifelong_core.io.lm_eval import family_of, model_name_of

    assert model_name_of({"model_name": "a/b"}) == "a/b"
    assert model_name_of({"config": {"model_args": "pretrained=c/d,dtype=float16"}}) == "c/d"
    assert model_name_of({"config": {"model_args": {"pretrained": "e/f"}}}) == "e/f"
    assert model_name_of({}) is None
    assert family_of("c/d") == "c" and family_of("plain") is None
    # A run whose results name no model, in a folder that says nothing: the name is asked for.
    run = write_run(tmp_path / "loose", "x/y", np.ones(4, dtype=np.uint8))
    res = run / f"results_{TS}.json"
    data = json.loads(res.read_text())
    del data["model_name"], data["config"]["model_args"]
    res.write_text(json.dumps(data))
    with pytest.raises(InputError, match="does not name its model"):
        imports.lm_eval_source(run)


def test_a_single_run_reader_given_a_folder_of_runs_lists_a_few(zoo):
    from lifelong_core.errors import few
    from lifelong_core.io.lm_eval import read_lm_eval

    out, _ = zoo
    with pytest.raises(InputError) as exc:
        read_lm_eval(out, "x")
    text = str(exc.value)
    assert "holds 200 run folders" in text and "and 197 more" in text and len(text) < 300
    assert few(list("abcde")) == "a, b, c and 2 more" and few(["a"]) == "a"


def test_info_counts_a_large_store_per_family_and_lists_models_on_request(zoo, tmp_path, capsys):
    out, runs = zoo
    store = tmp_path / "s.duckdb"
    assert _import(["--store", str(store), "--lm-eval", str(out)], capsys)[0] == 0
    assert main(["info", "--store", str(store)]) == 0
    said = capsys.readouterr().out
    assert "models: 200 in 7 families:" in said and "--models lists every one" in said
    assert "meta-llama" in said and "model-199" not in said
    assert len(said.splitlines()) < 40
    assert main(["info", "--store", str(store), "--summary"]) == 0
    assert "--models lists" not in capsys.readouterr().out
    assert main(["info", "--store", str(store), "--models"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in runs)
    # A small store lists its models as before.
    small = tmp_path / "small.duckdb"
    one = write_run(tmp_path / "one" / "org__solo", "org/solo", np.ones(5, dtype=np.uint8))
    assert _import(["--store", str(small), "--lm-eval", str(one)], capsys)[0] == 0
    assert main(["info", "--store", str(small)]) == 0
    assert "org/solo" in capsys.readouterr().out
