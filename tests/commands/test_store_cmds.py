"""CLI `import` / `export` / `info`: round trips reproduce the input exactly."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def ok(argv, capsys) -> str:
    rc = main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out


def fail(argv, capsys) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture
def long_df():
    rng = np.random.default_rng(3)
    rows = []
    for m in ("alpha", "beta", "gamma"):
        for j in range(25):
            if m == "gamma" and j % 3 == 0:
                continue  # a model that saw only some samples
            rows.append(
                {
                    "model": m,
                    "sample": f"img-{j:03d}",
                    "correct": int(rng.integers(0, 2)),
                    "confidence": float(np.float32(rng.random())),
                    "predicted": int(rng.integers(0, 10)),
                    "true_prob": float(np.float32(rng.random())),
                    "label": j % 10,
                    "dataset": "digits",
                    "domain": ["clean", "blur"][j % 2],
                    "category": ["natural", "specialized"][j % 2],
                    "split": "test",
                }
            )
    return pd.DataFrame(rows)


def _canon(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype(str).sort_values(["model", "sample"]).reset_index(drop=True)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_long_round_trip_is_exact(fmt, long_df, tmp_path, capsys):
    src = tmp_path / f"in.{fmt}"
    long_df.to_csv(src, index=False) if fmt == "csv" else long_df.to_parquet(src, index=False)
    db = tmp_path / "s.duckdb"
    out = ok(["import", "--store", str(db), "--long", str(src)], capsys)
    assert "imported 66 predictions" in out and "3 new models, 25 new samples" in out
    back = tmp_path / f"out.{fmt}"
    ok(["export", "--store", str(db), "--long", str(back)], capsys)
    got = pd.read_csv(back) if fmt == "csv" else pd.read_parquet(back)
    assert list(got.columns) == list(long_df.columns)
    if fmt == "csv":
        assert _canon(got).equals(_canon(long_df))
        # and byte-for-byte, once both are in the store's (model, sample) order
        order = long_df.sort_values(
            ["model", "sample"],
            key=lambda s: s.map({"alpha": 0, "beta": 1, "gamma": 2}) if s.name == "model" else s,
        )
        assert back.read_text() == order.to_csv(index=False)
    else:
        for c in long_df.columns:
            a = got.sort_values(["model", "sample"])[c].to_numpy()
            b = long_df.sort_values(["model", "sample"])[c].to_numpy()
            assert (a == b).all(), c
    # Re-importing the export is a no-op: same values, nothing new.
    out = ok(["import", "--store", str(db), "--long", str(back)], capsys)
    assert "imported 0 predictions" in out


@pytest.mark.parametrize("fmt", ["npy", "npz", "csv", "parquet"])
def test_wide_round_trip_is_exact(fmt, tmp_path, capsys):
    rng = np.random.default_rng(4)
    A = rng.integers(0, 2, (7, 37), dtype=np.uint8)
    src = tmp_path / f"A.{fmt}"
    if fmt == "npy":
        np.save(src, A)
    elif fmt == "npz":
        np.savez(src, A=A)
    elif fmt == "csv":
        np.savetxt(src, A, fmt="%d", delimiter=",")
    else:
        pd.DataFrame(A, columns=[f"c{j}" for j in range(37)]).to_parquet(src)
    models = [f"net-{i}" for i in range(7)]
    samples = [f"x{j}" for j in range(37)]
    (tmp_path / "m.txt").write_text("\n".join(models) + "\n")
    (tmp_path / "s.txt").write_text("\n".join(samples) + "\n")
    db = tmp_path / "s.duckdb"
    ok(
        [
            "import",
            "--store",
            str(db),
            "--matrix",
            str(src),
            "--models",
            str(tmp_path / "m.txt"),
            "--samples",
            str(tmp_path / "s.txt"),
            "--dataset",
            "toy",
        ],
        capsys,
    )
    ok(
        [
            "export",
            "--store",
            str(db),
            "--matrix",
            str(tmp_path / "B.npy"),
            "--models",
            str(tmp_path / "m2.txt"),
            "--samples",
            str(tmp_path / "s2.txt"),
        ],
        capsys,
    )
    B = np.load(tmp_path / "B.npy")
    assert B.dtype == np.uint8 and np.array_equal(B, A)
    assert (tmp_path / "m2.txt").read_text() == (tmp_path / "m.txt").read_text()
    assert (tmp_path / "s2.txt").read_text() == (tmp_path / "s.txt").read_text()


def test_wide_import_with_metadata_tables_and_growth(tmp_path, capsys):
    rng = np.random.default_rng(5)
    A = rng.integers(0, 2, (3, 10), dtype=np.uint8)
    C = rng.integers(0, 2, (5, 6), dtype=np.uint8)
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "C.npy", C)
    pd.DataFrame(
        {"model_id": ["a", "b", "c"], "family": ["cnn", "cnn", "mlp"], "release_order": [1, 2, 3]}
    ).to_csv(tmp_path / "m.csv", index=False)
    pd.DataFrame(
        {
            "sample_id": [f"s{j}" for j in range(10)],
            "domain": ["p"] * 5 + ["q"] * 5,
            "category": ["cat1"] * 5 + ["cat2"] * 5,
            "label": list(range(10)),
        }
    ).to_csv(tmp_path / "s.csv", index=False)
    (tmp_path / "m2.txt").write_text("a\nb\nc\nd\ne\n")
    (tmp_path / "s2.txt").write_text("".join(f"t{j}\n" for j in range(6)))
    db = str(tmp_path / "s.duckdb")
    ok(
        [
            "import",
            "--store",
            db,
            "--matrix",
            str(tmp_path / "A.npy"),
            "--models",
            str(tmp_path / "m.csv"),
            "--samples",
            str(tmp_path / "s.csv"),
            "--dataset",
            "d1",
        ],
        capsys,
    )
    ok(
        [
            "import",
            "--store",
            db,
            "--matrix",
            str(tmp_path / "C.npy"),
            "--models",
            str(tmp_path / "m2.txt"),
            "--samples",
            str(tmp_path / "s2.txt"),
            "--dataset",
            "d2",
        ],
        capsys,
    )
    with Store.open(db) as st:
        assert np.array_equal(st.matrix(range(3), range(10)), A)
        assert np.array_equal(st.matrix(None, range(10, 16)), C)
        assert st.models()["family"].tolist()[:3] == ["cnn", "cnn", "mlp"]
        assert st.samples("d1")["label"].tolist() == list(range(10))
    # A matrix is one dataset's: with two in the store, the command names them.
    err = fail(["export", "--store", db, "--matrix", str(tmp_path / "X.npy")], capsys)
    assert "the store holds 2 datasets; name one of d1, d2." in err
    ok(["export", "--store", db, "--matrix", str(tmp_path / "X.npy"), "--dataset", "d2"], capsys)
    assert np.array_equal(np.load(tmp_path / "X.npy"), C)
    out = ok(["info", "--store", db], capsys)
    assert "2 datasets, 5 models, 16 samples, 60 recorded predictions" in out
    assert "| d1      | p      | cat1" in out


def _lm_line(doc_id, task_filter="none", **metrics):
    return {
        "doc_id": doc_id,
        "doc": {"question": f"q{doc_id}"},
        "target": "A",
        "arguments": {},
        "resps": [],
        "filtered_resps": [],
        "filter": task_filter,
        "metrics": list(metrics),
        "doc_hash": f"dh{doc_id}",
        "prompt_hash": "p",
        "target_hash": "t",
        **metrics,
    }


def _write_run(folder: Path, ts: str, truth: dict, gz_tasks=()):
    folder.mkdir(parents=True, exist_ok=True)
    for task, lines in truth.items():
        body = "".join(json.dumps(line) + "\n" for line in lines)
        name = folder / f"samples_{task}_{ts}.jsonl"
        if task in gz_tasks:
            with gzip.open(str(name) + ".gz", "wt") as fh:
                fh.write(body)
        else:
            name.write_text(body)
    results = {
        "results": {t: {} for t in truth},
        "group_subtasks": {"mmlu_stem": ["mmlu_physics"], "arc_easy": []},
        "n-samples": {
            t: {
                "original": len({l["doc_id"] for l in v}),
                "effective": len({l["doc_id"] for l in v}),
            }
            for t, v in truth.items()
        },
        "config": {"model": "hf", "model_args": "pretrained=tiny"},
    }
    (folder / f"results_{ts}.json").write_text(json.dumps(results))


def test_lm_eval_round_trip(tmp_path, capsys):
    rng = np.random.default_rng(6)
    ts = "2024-05-14T12-34-56.123456"
    truth = {
        "arc_easy": [
            _lm_line(i, acc=float(rng.integers(0, 2)), acc_norm=float(rng.integers(0, 2)))
            for i in range(30)
        ],
        "mmlu_physics": [_lm_line(i, acc=float(rng.integers(0, 2))) for i in range(12)],
        "gsm8k": [
            _lm_line(i, task_filter=f, exact_match=float(rng.integers(0, 2)))
            for i in range(8)
            for f in ("strict-match", "flexible-extract")
        ],
    }
    run = tmp_path / "out" / "tiny__model"
    _write_run(run, ts, truth, gz_tasks=("mmlu_physics",))
    db = str(tmp_path / "s.duckdb")
    # acc_norm exists only for arc_easy: a single metric name cannot cover every task...
    err = fail(
        [
            "import",
            "--store",
            db,
            "--lm-eval",
            str(tmp_path / "out"),
            "--model",
            "tiny",
            "--metric",
            "acc_norm",
            "--filter",
            "strict-match",
        ],
        capsys,
    )
    assert "has no metric 'acc_norm'; it has exact_match" in err and not Path(db).exists()
    # ...a preference list can, and --filter picks gsm8k's filter.
    out = ok(
        [
            "import",
            "--store",
            db,
            "--lm-eval",
            str(tmp_path / "out"),
            "--model",
            "tiny",
            "--metric",
            "acc_norm,acc,exact_match",
            "--filter",
            "strict-match",
        ],
        capsys,
    )
    assert "imported 50 predictions" in out
    assert (
        "arc_easy: correct = acc_norm (filter none)" in out
        and "gsm8k: correct = exact_match (filter strict-match)" in out
    )
    ok(["export", "--store", db, "--long", str(tmp_path / "back.csv")], capsys)
    back = pd.read_csv(tmp_path / "back.csv")
    got = dict(zip(back["sample"], back["correct"]))
    want = {f"arc_easy/{l['doc_id']}": l["acc_norm"] for l in truth["arc_easy"]}
    want |= {f"mmlu_physics/{l['doc_id']}": l["acc"] for l in truth["mmlu_physics"]}
    want |= {
        f"gsm8k/{l['doc_id']}": l["exact_match"]
        for l in truth["gsm8k"]
        if l["filter"] == "strict-match"
    }
    assert got == want
    assert set(back["model"]) == {"tiny"} and set(back["dataset"]) == {"lm-eval"}
    cats = back.drop_duplicates("domain").set_index("domain")["category"]
    assert cats["mmlu_physics"] == "mmlu_stem" and pd.isna(cats["arc_easy"])
    with Store.open(db) as st:
        m = st.models()
        # "tiny" names no organisation, so no family (the harness backend "hf" is not one).
        assert m["family"].isna().all() and json.loads(m["metadata"][0]) == {
            "model_args": "pretrained=tiny",
            "source": "lm-eval",
        }
        assert st.log()["action"].tolist() == ["insert_lm_eval"]
    # The same run again adds nothing; a second model grows the store on the model axis.
    out = ok(
        [
            "import",
            "--store",
            db,
            "--lm-eval",
            str(run / f"results_{ts}.json"),
            "--model",
            "tiny",
            "--metric",
            "acc_norm,acc,exact_match",
            "--filter",
            "strict-match",
        ],
        capsys,
    )
    assert "imported 0 predictions" in out
    run2 = tmp_path / "run2"
    _write_run(
        run2, "2024-06-01T00-00-00.000001", {"arc_easy": [_lm_line(i, acc=1.0) for i in range(30)]}
    )
    ok(["import", "--store", db, "--lm-eval", str(run2), "--model", "other"], capsys)
    with Store.open(db) as st:
        assert st.n_models == 2 and st.n_samples == 50
        arc = st.samples(domains=["arc_easy"])["sample_idx"].to_numpy()
        assert st.matrix([1], arc).tolist() == [[1] * 30]
    # Documents whose hash changed (re-ordered task) are refused.
    run3 = tmp_path / "run3"
    lines = [_lm_line(i, acc=1.0) for i in range(30)]
    lines[4]["doc_hash"] = "something-else"
    _write_run(run3, "2024-07-01T00-00-00.000001", {"arc_easy": lines})
    err = fail(["import", "--store", db, "--lm-eval", str(run3), "--model", "third"], capsys)
    assert "sample 'arc_easy/4' is already in the store with meta" in err


def test_lm_eval_folder_with_two_runs_needs_a_choice(tmp_path, capsys):
    run = tmp_path / "run"
    _write_run(run, "2024-05-14T12-34-56.123456", {"arc_easy": [_lm_line(0, acc=1.0)]})
    _write_run(run, "2024-05-15T12-34-56.123456", {"arc_easy": [_lm_line(0, acc=0.0)]})
    db = str(tmp_path / "s.duckdb")
    err = fail(["import", "--store", db, "--lm-eval", str(run), "--model", "x"], capsys)
    assert "holds 2 runs" in err
    ok(
        [
            "import",
            "--store",
            db,
            "--lm-eval",
            str(run / "results_2024-05-15T12-34-56.123456.json"),
            "--model",
            "x",
        ],
        capsys,
    )
    with Store.open(db) as st:
        assert st.matrix().tolist() == [[0]]


def test_argument_errors_are_one_line(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert "needs --models and --samples" in fail(
        ["import", "--store", db, "--matrix", "A.npy"], capsys
    )
    assert "holds no run" in fail(["import", "--store", db, "--lm-eval", str(tmp_path)], capsys)
    assert "only goes with --lm-eval" in fail(
        ["import", "--store", db, "--long", "x.csv", "--metric", "acc"], capsys
    )
    assert "does not exist" in fail(
        ["import", "--store", db, "--long", str(tmp_path / "missing.csv")], capsys
    )
    assert "No store" in fail(["info", "--store", db], capsys)
    assert "export needs" in fail(["export", "--store", db], capsys)
    assert not Path(db).exists()


def test_cli_subprocess_exit_codes(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("model,sample,correct\nm,s,7\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "lifelong_core",
            "import",
            "--store",
            str(tmp_path / "s.duckdb"),
            "--long",
            str(bad),
            "--dataset",
            "d",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


def test_wide_extras_round_trip_and_errors(tmp_path, capsys):
    rng = np.random.default_rng(8)
    A = rng.integers(0, 2, (4, 9), dtype=np.uint8)
    conf = rng.random((4, 9)).astype(np.float32)
    pred = rng.integers(0, 10, (4, 9)).astype(np.int32)
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "conf.npy", conf)
    np.savez(tmp_path / "pred.npz", pred=pred)
    (tmp_path / "m.txt").write_text("".join(f"m{i}\n" for i in range(4)))
    (tmp_path / "s.txt").write_text("".join(f"s{j}\n" for j in range(9)))
    db = str(tmp_path / "s.duckdb")
    base = [
        "import",
        "--store",
        db,
        "--matrix",
        str(tmp_path / "A.npy"),
        "--models",
        str(tmp_path / "m.txt"),
        "--samples",
        str(tmp_path / "s.txt"),
        "--dataset",
        "d",
    ]
    bad = tmp_path / "bad.npy"
    np.save(bad, np.full((4, 9), 1.5))
    assert "holds 1.5 at row 1, column 1, outside [0, 1]" in fail(
        base + ["--true-prob", str(bad)], capsys
    )
    np.save(bad, np.zeros((4, 8)))
    assert "has shape (4, 8) but the matrix has shape (4, 9)" in fail(
        base + ["--confidence", str(bad)], capsys
    )
    np.save(bad, np.array([[object()]], dtype=object), allow_pickle=True)
    assert "pickled" in fail(base + ["--confidence", str(bad)], capsys)
    assert "only goes with --matrix" in fail(
        ["import", "--store", db, "--long", "x.csv", "--confidence", str(bad)], capsys
    )
    assert not Path(db).exists()
    ok(
        base
        + ["--confidence", str(tmp_path / "conf.npy"), "--predicted", str(tmp_path / "pred.npz")],
        capsys,
    )
    ok(
        [
            "export",
            "--store",
            db,
            "--matrix",
            str(tmp_path / "B.npy"),
            "--confidence",
            str(tmp_path / "c2.npy"),
            "--predicted",
            str(tmp_path / "p2.npy"),
        ],
        capsys,
    )
    assert np.array_equal(np.load(tmp_path / "B.npy"), A)
    c2, p2 = np.load(tmp_path / "c2.npy"), np.load(tmp_path / "p2.npy")
    assert c2.dtype == np.float32 and np.array_equal(c2, conf)
    assert p2.dtype == np.int32 and np.array_equal(p2, pred)
    assert "no true_prob" in fail(
        [
            "export",
            "--store",
            db,
            "--matrix",
            str(tmp_path / "B.npy"),
            "--true-prob",
            str(tmp_path / "t.npy"),
        ],
        capsys,
    )


def test_lm_eval_single_task_file(tmp_path, capsys):
    run = tmp_path / "run"
    ts = "2024-05-14T12-34-56.123456"
    _write_run(
        run,
        ts,
        {
            "arc_easy": [_lm_line(i, acc=float(i % 2)) for i in range(4)],
            "mmlu_physics": [_lm_line(i, acc=1.0) for i in range(3)],
        },
    )
    db = str(tmp_path / "s.duckdb")
    out = ok(
        [
            "import",
            "--store",
            db,
            "--lm-eval",
            str(run / f"samples_mmlu_physics_{ts}.jsonl"),
            "--model",
            "x",
        ],
        capsys,
    )
    assert "imported 3 predictions" in out
    with Store.open(db) as st:
        assert st.samples()["category"].tolist() == ["mmlu_stem"] * 3
    (run / "notes.txt").write_text("hello")
    assert "is not an lm-eval" in fail(
        ["import", "--store", db, "--lm-eval", str(run / "notes.txt"), "--model", "x"], capsys
    )
    assert "does not exist" in fail(
        ["import", "--store", db, "--lm-eval", str(run / "nope"), "--model", "x"], capsys
    )


def test_log_records_the_source_file_checksum(long_df, tmp_path, capsys):
    import hashlib

    src = tmp_path / "in.csv"
    long_df.to_csv(src, index=False)
    db = str(tmp_path / "s.duckdb")
    ok(["import", "--store", db, "--long", str(src)], capsys)
    with Store.open(db) as st:
        log = st.log()
    assert log["checksum"].tolist() == ["sha256:" + hashlib.sha256(src.read_bytes()).hexdigest()]
    assert log[["action", "source", "new_models", "new_samples", "entries"]].values.tolist() == [
        ["insert_long", str(src), 3, 25, 66]
    ]
