"""Store: every bad input is refused with one sentence, and the store is left exactly as
it was (checksum over every table, and the file's bytes)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.store import Store


def store_digest(path: Path) -> str:
    """sha256 over the sorted contents of every table of a DuckDB file."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        h = hashlib.sha256()
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY 1"
            ).fetchall()
        ]
        for t in tables:
            h.update(t.encode())
            for row in con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall():
                h.update(repr(row).encode())
        return h.hexdigest()
    finally:
        con.close()


def file_bytes(path: Path) -> bytes:
    wal = Path(str(path) + ".wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


@pytest.fixture(scope="module")
def base_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("base") / "base.duckdb"
    A = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], np.uint8)
    with Store.create(path) as st:
        st.insert_matrix(
            A,
            pd.DataFrame({"model_id": ["m0", "m1"], "family": ["cnn", "mlp"]}),
            pd.DataFrame(
                {
                    "sample_id": ["s0", "s1", "s2", "s3"],
                    "domain": ["a", "a", "b", "b"],
                    "category": ["c1", "c1", "c2", "c2"],
                    "label": [1, 2, 3, 4],
                }
            ),
            dataset="d",
            extras={"confidence": np.full((2, 4), 0.5, np.float32)},
        )
    return path


@pytest.fixture
def store(base_store, tmp_path) -> Path:
    path = tmp_path / "s.duckdb"
    shutil.copy(base_store, path)
    return path


def _run_cli(argv, capsys) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def _csv(tmp_path: Path, text: str, name: str = "in.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


LONG_CASES = {
    "non-binary correct": (
        "model,sample,correct\nm0,s9,1\nm0,s8,2\n",
        r"row 2 column 'correct' holds '2'; expected 0/1, true/false or yes/no",
    ),
    "NaN correct": (
        "model,sample,correct\nm0,s9,1\nm0,s8,nan\n",
        r"row 2 has a missing value \(NaN\) in column 'correct'",
    ),
    "confidence above 1": (
        "model,sample,correct,confidence\nm0,s9,1,1.5\n",
        r"row 1 column 'confidence' holds 1\.5, outside \[0, 1\]",
    ),
    "confidence negative": ("model,sample,correct,confidence\nm0,s9,1,-0.1\n", r"outside \[0, 1\]"),
    "confidence blank on some rows only": (
        "model,sample,correct,confidence\nm0,s9,1,0.5\nm0,s8,1,\n",
        r"row 2 has a missing value \(NaN\) in column 'confidence'",
    ),
    "repeated pair differs": (
        "model,sample,correct\nm0,s9,1\nm1,s9,0\nm0,s9,0\n",
        r"repeats model 'm0' sample 's9' with different values \(row 1 and row 3\)",
    ),
    "empty model id": (
        "model,sample,correct\nm0,s9,1\n,s8,0\n",
        r"row 2 has no value in column 'model'",
    ),
    "wrong column name": ("modle,sample,correct\nm0,s9,1\n", r"unknown column 'modle'"),
    "missing column": ("model,sample\nm0,s9\n", r"has no column 'correct'"),
    "text in correct": (
        "model,sample,correct\nm0,s9,yes\nm0,s8,maybe\n",
        r"row 2 column 'correct' holds 'maybe'; expected 0/1, true/false or yes/no",
    ),
    "truncated row": (
        "model,sample,correct,confidence\nm0,s9,1,0.5\nm0,s8",
        r"data row 2 \(line 3\) has 2 fields but the header has 4",
    ),
    "header only": ("model,sample,correct\n", r"has no data rows"),
    "empty file": ("", r"is empty"),
    "known sample other domain": (
        "model,sample,correct,domain\nm0,s0,1,b\n",
        r"sample 's0' is already in the store with domain 'a', but this import gives 'b'",
    ),
    "known sample other label": (
        "model,sample,correct,label\nm0,s0,1,9\n",
        r"sample 's0' is already in the store with label 1, but this import gives 9",
    ),
    "known domain other category": (
        "model,sample,correct,dataset,domain,category\nm5,s9,1,d,a,c9\n",
        r"domain 'a' of dataset 'd' is already in the store with category 'c1', but this import gives 'c9'",
    ),
    "stored value differs": (
        "model,sample,correct\nm0,s1,1\n",
        r"already records model 'm0' on sample 's1' with correct 0, but this import gives correct 1",
    ),
    "stored extra differs": (
        "model,sample,correct,confidence\nm0,s0,1,0.25\n",
        r"with confidence 0\.5, but this import gives confidence 0\.25",
    ),
    "extra never stored": (
        "model,sample,correct,true_prob\nm0,s0,1,0.25\n",
        r"with no true_prob, but this import gives true_prob 0\.25",
    ),
    "new sample without dataset": (
        "model,sample,correct\nm0,brand-new,1\n",
        r"sample 'brand-new' is new to the store and no dataset is given",
    ),
    "sample metadata inconsistent": (
        "model,sample,correct,domain,dataset\nm0,s9,1,a,d\nm1,s9,1,b,d\n",
        r"gives sample 's9' two different values in column 'domain'",
    ),
    "domain category inconsistent": (
        "model,sample,correct,dataset,domain,category\nm0,s8,1,d,z,c1\nm0,s9,1,d,z,c2\n",
        r"gives domain 'z' two different values in column 'category' \(row 1 and row 2\)",
    ),
    "fractional label": (
        "model,sample,correct,label,dataset\nm0,s9,1,1.5,d\n",
        r"column 'label' holds 1\.5; expected a whole number",
    ),
    "fractional predicted": (
        "model,sample,correct,predicted,dataset\nm0,s9,1,2.5,d\n",
        r"column 'predicted' holds 2\.5",
    ),
}


@pytest.mark.parametrize("case", sorted(LONG_CASES))
def test_bad_long_csv_leaves_store_unchanged(case, store, tmp_path, capsys):
    text, pattern = LONG_CASES[case]
    before, raw = store_digest(store), file_bytes(store)
    msg = _run_cli(["import", "--store", str(store), "--long", str(_csv(tmp_path, text))], capsys)
    assert re.search(pattern, msg), msg
    assert store_digest(store) == before
    assert file_bytes(store) == raw


def test_bad_long_table_through_api_names_the_problem(store):
    before = store_digest(store)
    with Store.open(store, read_only=False) as st:
        with pytest.raises(InputError, match="column 'model' holds true/false"):
            st.insert_long(pd.DataFrame({"model": [True], "sample": ["s0"], "correct": [1]}))
        with pytest.raises(InputError, match=r"column 'sample' holds 1.5"):
            st.insert_long(pd.DataFrame({"model": ["m0"], "sample": [1.5], "correct": [1]}))
        with pytest.raises(InputError, match=r"column 'model' twice|has column 'model' twice"):
            st.insert_long(
                pd.DataFrame(
                    [["m0", "m0", "s0", 1]], columns=["model", "model", "sample", "correct"]
                )
            )
        with pytest.raises(InputError, match="does not describe"):
            st.insert_long(
                pd.DataFrame({"model": ["mX"], "sample": ["s0"], "correct": [1]}),
                models=pd.DataFrame({"model_id": ["other"]}),
            )
        with pytest.raises(
            InputError,
            match="model 'm0' is already in the store with family 'cnn', but this import gives 'rnn'",
        ):
            st.insert_long(
                pd.DataFrame({"model": ["m0"], "sample": ["s0"], "correct": [1]}),
                models=pd.DataFrame({"model_id": ["m0"], "family": ["rnn"]}),
            )
        with pytest.raises(InputError, match="names dataset 'd' but dataset 'e' was requested"):
            st.insert_long(
                pd.DataFrame({"model": ["m0"], "sample": ["s0"], "correct": [1], "dataset": ["d"]}),
                dataset="e",
            )
    assert store_digest(store) == before


def _write_ids(tmp_path, name, ids):
    p = tmp_path / name
    p.write_text("".join(f"{i}\n" for i in ids))
    return p


def _wide(tmp_path, A, models=("m5", "m6"), samples=("t0", "t1", "t2")):
    mp = _write_ids(tmp_path, "models.txt", models)
    sp = _write_ids(tmp_path, "samples.txt", samples)
    ap = tmp_path / "A.npy"
    np.save(ap, A)
    return ap, mp, sp


@pytest.mark.parametrize(
    "case,matrix,pattern",
    [
        (
            "non-binary",
            np.array([[0, 1, 2], [1, 1, 1]], np.int64),
            r"non-binary value 2 at row 1, column 3",
        ),
        ("NaN", np.array([[0, 1, np.nan], [1, 1, 1]]), r"missing value \(NaN\) at row 1, column 3"),
        (
            "shape mismatch",
            np.zeros((2, 4), np.uint8),
            r"has shape 2 x 4 but 2 model ids and 3 sample ids",
        ),
        ("one-dimensional", np.zeros(6, np.uint8), r"1-dimensional"),
    ],
)
def test_bad_wide_matrix_leaves_store_unchanged(case, matrix, pattern, store, tmp_path, capsys):
    ap, mp, sp = _wide(tmp_path, matrix)
    before, raw = store_digest(store), file_bytes(store)
    msg = _run_cli(
        [
            "import",
            "--store",
            str(store),
            "--matrix",
            str(ap),
            "--models",
            str(mp),
            "--samples",
            str(sp),
            "--dataset",
            "d",
        ],
        capsys,
    )
    assert re.search(pattern, msg), msg
    assert store_digest(store) == before and file_bytes(store) == raw


def test_pickled_npy_is_never_loaded(store, tmp_path, capsys):
    ap = tmp_path / "evil.npy"
    np.save(ap, np.array([[{"a": 1}, None]], dtype=object), allow_pickle=True)
    mp, sp = _write_ids(tmp_path, "m.txt", ["m5"]), _write_ids(tmp_path, "s.txt", ["t0", "t1"])
    before, raw = store_digest(store), file_bytes(store)
    msg = _run_cli(
        [
            "import",
            "--store",
            str(store),
            "--matrix",
            str(ap),
            "--models",
            str(mp),
            "--samples",
            str(sp),
            "--dataset",
            "d",
        ],
        capsys,
    )
    assert "pickled" in msg
    assert store_digest(store) == before and file_bytes(store) == raw


@pytest.mark.parametrize(
    "case",
    ["truncated npy", "empty npy", "empty ids", "duplicate id", "ids table without id column"],
)
def test_bad_wide_files(case, store, tmp_path, capsys):
    ap, mp, sp = _wide(tmp_path, np.ones((2, 3), np.uint8))
    if case == "truncated npy":
        ap.write_bytes(ap.read_bytes()[:-2])
        pattern = "not a readable .npy"
    elif case == "empty npy":
        ap.write_bytes(b"")
        pattern = "is empty"
    elif case == "empty ids":
        sp.write_text("\n\n")
        pattern = "lists no ids"
    elif case == "duplicate id":
        sp.write_text("t0\nt1\nt0\n")
        pattern = "lists sample 't0' twice"
    else:
        sp = tmp_path / "samples.csv"
        sp.write_text("id,domain\nt0,a\n")
        pattern = "has no column 'sample_id'"
    before, raw = store_digest(store), file_bytes(store)
    msg = _run_cli(
        [
            "import",
            "--store",
            str(store),
            "--matrix",
            str(ap),
            "--models",
            str(mp),
            "--samples",
            str(sp),
            "--dataset",
            "d",
        ],
        capsys,
    )
    assert pattern in msg, msg
    assert store_digest(store) == before and file_bytes(store) == raw


def test_bad_extras_through_api(store):
    before = store_digest(store)
    A = np.ones((1, 2), np.uint8)
    with Store.open(store, read_only=False) as st:
        with pytest.raises(
            InputError, match=r"'confidence' holds -0.5 at row 1, column 2, outside \[0, 1\]"
        ):
            st.insert_matrix(
                A, ["m9"], ["u0", "u1"], dataset="d", extras={"confidence": np.array([[0.1, -0.5]])}
            )
        with pytest.raises(
            InputError, match="has shape \\(2, 2\\) but the matrix has shape \\(1, 2\\)"
        ):
            st.insert_matrix(
                A, ["m9"], ["u0", "u1"], dataset="d", extras={"true_prob": np.zeros((2, 2))}
            )
        with pytest.raises(InputError, match="NaN"):
            st.insert_matrix(
                A, ["m9"], ["u0", "u1"], dataset="d", extras={"true_prob": np.array([[np.nan, 0]])}
            )
        with pytest.raises(InputError, match="unknown extra field 'logits'"):
            st.insert_matrix(
                A, ["m9"], ["u0", "u1"], dataset="d", extras={"logits": np.zeros((1, 2))}
            )
        with pytest.raises(InputError, match="Python objects"):
            st.insert_matrix(np.array([[1, None]], dtype=object), ["m9"], ["u0", "u1"], dataset="d")
        with pytest.raises(InputError, match="model ids must be a list"):
            st.insert_matrix(A, "m9", ["u0", "u1"], dataset="d")
    assert store_digest(store) == before


def test_bad_parquet_long(store, tmp_path, capsys):
    p = tmp_path / "l.parquet"
    pd.DataFrame(
        {"model": ["m0"], "sample": ["s9"], "correct": ["maybe"], "dataset": ["d"]}
    ).to_parquet(p)
    before, raw = store_digest(store), file_bytes(store)
    msg = _run_cli(["import", "--store", str(store), "--long", str(p)], capsys)
    assert "column 'correct' holds 'maybe'" in msg
    good = tmp_path / "g.parquet"
    pd.DataFrame(
        {
            "model": ["m0"] * 50,
            "sample": [f"x{i}" for i in range(50)],
            "correct": [1] * 50,
            "dataset": ["d"] * 50,
        }
    ).to_parquet(good)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    msg = _run_cli(["import", "--store", str(store), "--long", str(cut)], capsys)
    assert "not a readable Parquet file" in msg
    assert store_digest(store) == before and file_bytes(store) == raw


def _lm_run(
    folder: Path, tasks: dict, results: dict | None = None, ts="2024-05-14T12-00-00.000001", gz=()
):
    folder.mkdir(parents=True, exist_ok=True)
    for task, lines in tasks.items():
        body = "".join(json.dumps(r) + "\n" for r in lines)
        if task in gz:
            with gzip.open(folder / f"samples_{task}_{ts}.jsonl.gz", "wt") as fh:
                fh.write(body)
        else:
            (folder / f"samples_{task}_{ts}.jsonl").write_text(body)
    (folder / f"results_{ts}.json").write_text(json.dumps(results or {"results": {}}))
    return folder


def _line(doc_id, **metrics):
    return {
        "doc_id": doc_id,
        "doc": {"q": doc_id},
        "target": "x",
        "filter": metrics.pop("filter", "none"),
        "metrics": list(metrics),
        "doc_hash": f"h{doc_id}",
        **metrics,
    }


@pytest.mark.parametrize(
    "case,pattern",
    [
        (
            "non-binary metric",
            r"Metric 'f1' of task 'squad' is not binary: .* line 2 \(doc_id 1\) holds 0\.5",
        ),
        (
            "several metrics",
            r"--metric: .*records several 0/1 metrics: acc, acc_norm; choose one metric",
        ),
        ("several filters", r"--filter: .*records filters flexible, strict; choose one filter\."),
        ("truncated jsonl", r"line 2 is not valid JSON \(is the file truncated\?\)"),
        ("truncated gz", r"is truncated or not a valid gzip file"),
        ("fewer samples than results say", r"holds 2 samples but .* reports 3 for task 'arc'"),
        (
            "known model other metadata",
            # The importer's family guess yields to the store's; its metadata does not.
            r"model 'm0' is already in the store with metadata .*, but this import gives .*lm-eval",
        ),
        ("missing metric", r"has no metric 'exact_match'; it has acc"),
    ],
)
def test_bad_lm_eval_runs(case, pattern, store, tmp_path, capsys):
    run = tmp_path / "run"
    argv_extra, model = [], "lm1"
    if case == "non-binary metric":
        _lm_run(run, {"squad": [_line(0, f1=1.0), _line(1, f1=0.5)]})
    elif case == "several metrics":
        _lm_run(run, {"arc": [_line(0, acc=1.0, acc_norm=0.0)]})
    elif case == "several filters":
        _lm_run(
            run,
            {
                "gsm": [
                    _line(0, exact_match=1.0, filter="strict"),
                    _line(0, exact_match=0.0, filter="flexible"),
                ]
            },
        )
    elif case == "truncated jsonl":
        _lm_run(run, {"arc": [_line(0, acc=1.0), _line(1, acc=0.0)]})
        f = next(run.glob("samples_*"))
        f.write_text(f.read_text()[:-20])
    elif case == "truncated gz":
        _lm_run(run, {"arc": [_line(i, acc=1.0) for i in range(200)]}, gz=("arc",))
        f = next(run.glob("samples_*"))
        f.write_bytes(f.read_bytes()[:-30])
    elif case == "fewer samples than results say":
        _lm_run(
            run,
            {"arc": [_line(0, acc=1.0), _line(1, acc=0.0)]},
            results={"results": {}, "n-samples": {"arc": {"original": 3, "effective": 3}}},
        )
    elif case == "known model other metadata":
        _lm_run(
            run, {"arc": [_line(0, acc=1.0)]}, results={"results": {}, "config": {"model": "hf"}}
        )
        model = "m0"
    else:
        _lm_run(run, {"arc": [_line(0, acc=1.0)]})
        argv_extra = ["--metric", "exact_match"]
    before, raw = store_digest(store), file_bytes(store)
    msg = _run_cli(
        ["import", "--store", str(store), "--lm-eval", str(run), "--model", model] + argv_extra,
        capsys,
    )
    assert re.search(pattern, msg), msg
    assert store_digest(store) == before and file_bytes(store) == raw


def test_failed_import_into_new_store_leaves_no_file(tmp_path, capsys):
    target = tmp_path / "new.duckdb"
    bad = _csv(tmp_path, "model,sample,correct\nm0,s0,1\n")  # no dataset for new samples
    msg = _run_cli(["import", "--store", str(target), "--long", str(bad)], capsys)
    assert "no dataset is given" in msg
    assert not target.exists() and not Path(str(target) + ".wal").exists()


@pytest.mark.slow
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=hst.lists(
        hst.tuples(
            hst.sampled_from(["m0", "m1", "m2"]),
            hst.sampled_from(["a", "b", "c", "d"]),
            hst.integers(0, 1),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_long_tables_with_repeats(tmp_path_factory, rows):
    """A repeated pair is accepted iff all its rows agree; then the store holds exactly the table."""
    df = pd.DataFrame(rows, columns=["model", "sample", "correct"])
    conflict = (df.groupby(["model", "sample"])["correct"].nunique() > 1).any()
    path = tmp_path_factory.mktemp("rep") / "s.duckdb"
    with Store.create(path) as st:
        if conflict:
            with pytest.raises(InputError, match=r"repeats model .* with different values"):
                st.insert_long(df, dataset="d")
            assert st.n_models == 0 and len(st.log()) == 0
            return
        st.insert_long(df, dataset="d")
        truth = df.drop_duplicates(["model", "sample"])
        m = st.model_index(truth["model"])
        s = st.sample_index(truth["sample"])
        known = st.known()
        assert known.sum() == len(truth) and known[m, s].all()
        assert (st.values_and_known(None, None)[0][m, s] == truth["correct"].to_numpy()).all()
