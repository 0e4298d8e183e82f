"""Readers refuse what they cannot represent, in one sentence, before memory grows.

Hostile and unusual inputs that once gave a traceback or passed silently: lm-eval ``results_*.json`` fields of the
wrong shape (tracebacks in import, estimate and the Data page), Parquet ids that are null
(an ``ArrowTypeError``), ids holding a newline, NUL or tab (stored as given: an export's
``models.txt`` then had more lines than the matrix has rows), labels near 1e20 in
``match`` (a silent overflow), a matrix CSV with a byte-order mark (refused while a long
CSV with one was accepted), and text inputs with one huge line or a compressed file that
unpacks to far more than it weighs (gigabytes of memory before an unrelated refusal).
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lifelong_core.cli import main
from lifelong_core.store import Store
from tests.store_content import content
from tests.user_store import TS, lm_eval_runs

MIB = 1 << 20


def fail(argv, capsys) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and err.count("\n") == 1, (rc, err)
    assert "Traceback" not in err
    return err


@pytest.fixture
def small_store(tmp_path) -> Path:
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["x", "y", "z"], dataset="d")
    return path


@pytest.fixture
def run(tmp_path) -> Path:
    """One model's lm-eval run (three tasks, with its results file)."""
    return next(iter(lm_eval_runs(tmp_path / "runs").values()))


def _results(run: Path) -> Path:
    return run / f"results_{TS}.json"


def _set_field(run: Path, field: str, value) -> None:
    res = json.loads(_results(run).read_text())
    res[field] = value
    _results(run).write_text(json.dumps(res))


# ------------------------------------------------------------------ lm-eval JSON shapes
SHAPES = [
    ("group_subtasks", {"g": 5}, 'group_subtasks["g"] must be a list of task names'),
    ("group_subtasks", ["arc_easy"], "group_subtasks must be an object"),
    ("group_subtasks", {"g": [{"t": 1}]}, 'group_subtasks["g"] must be a list of task names'),
    ("config", [1], "config must be an object"),
    ("config", {"model": {"x": 1}}, "config.model must be text"),
    ("n-samples", [1], "n-samples must be an object"),
    ("n-samples", {"boolq": 60}, 'n-samples["boolq"] must be an object'),
    ("n-samples", {"boolq": {"effective": "60"}}, 'n-samples["boolq"].effective must be a whole'),
]


@pytest.mark.parametrize(("field", "value", "message"), SHAPES)
def test_lm_eval_results_fields_of_the_wrong_shape(run, small_store, capsys, field, value, message):
    _set_field(run, field, value)
    before = content(small_store)
    argv = ["import", "--store", small_store, "--lm-eval", run, "--model", "new"]
    err = fail(argv, capsys)
    assert message in err and str(_results(run)) in err
    assert content(small_store) == before


def test_estimate_reads_the_same_checked_fields(run, tmp_path, capsys):
    # A store of the run's own tasks, then an estimate from a run with a bad field.
    store = tmp_path / "lm.duckdb"
    others = lm_eval_runs(tmp_path / "others", seed=1)
    for model, folder in list(others.items())[:6]:
        assert (
            main(["import", "--store", str(store), "--lm-eval", str(folder), "--model", model]) == 0
        )
    capsys.readouterr()
    _set_field(run, "group_subtasks", {"g": 5})
    err = fail(["estimate", "--store", store, "--lm-eval", run, "--model", "new"], capsys)
    assert 'group_subtasks["g"] must be a list' in err


def test_samples_line_with_a_doc_hash_that_is_not_text(run, small_store, capsys):
    f = next(run.glob("samples_boolq_*.jsonl"))
    lines = f.read_text().splitlines()
    rec = json.loads(lines[3])
    rec["doc_hash"] = {"x": 1}
    lines[3] = json.dumps(rec)
    f.write_text("\n".join(lines) + "\n")
    err = fail(["import", "--store", small_store, "--lm-eval", run, "--model", "new"], capsys)
    assert "line 4 (doc_id 3) field doc_hash must be text" in err


# ------------------------------------------------------------------ nulls and control characters
@pytest.mark.parametrize(("column", "row"), [("model", 2), ("sample", 1)])
def test_parquet_long_table_with_a_null_id(tmp_path, small_store, capsys, column, row):
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = {"model": ["m1", "m2"], "sample": ["x", "y"], "correct": [1, 0]}
    cols[column][row - 1] = None
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({k: pa.array(v) for k, v in cols.items()}), path)
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--long", path], capsys)
    assert f"row {row} has no value in column '{column}'" in err
    assert content(small_store) == before


CONTROL_IDS = [
    ("a\nb", "a line break (U+000A)"),
    ("a\x00b", "a NUL character (U+0000)"),
    ("a\tb", "a tab (U+0009)"),
    ("a\u202eb", "the control character U+202E"),
]


@pytest.mark.parametrize(("model", "found"), CONTROL_IDS)
def test_ids_with_control_characters_are_refused(tmp_path, small_store, capsys, model, found):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    table = {"model": ["ok", model], "sample": ["x", "y"], "correct": [1, 0]}
    pq.write_table(pa.table(table), path)
    before = content(small_store)
    err = fail(["import", "--store", small_store, "--long", path], capsys)
    assert f"row 2 column 'model' holds {found} at character 2" in err
    assert content(small_store) == before


def test_id_list_with_a_control_character_names_its_line(tmp_path, small_store, capsys):
    np.save(tmp_path / "A.npy", np.ones((2, 1), np.uint8))
    (tmp_path / "m.txt").write_bytes(b"ok\n\nm\x1eb\n")  # a record separator, on line 3
    (tmp_path / "s.txt").write_text("w\n")
    argv = ["import", "--store", small_store, "--matrix", tmp_path / "A.npy"]
    err = fail([*argv, "--models", tmp_path / "m.txt", "--samples", tmp_path / "s.txt"], capsys)
    assert "--models file" in err and "line 3 holds the control character U+001E" in err


def test_model_name_with_a_line_break_is_refused(run, small_store, capsys):
    err = fail(["import", "--store", small_store, "--lm-eval", run, "--model", "a\nb"], capsys)
    assert "holds a line break" in err


# ------------------------------------------------------------------ numbers a reader cannot hold
def test_match_refuses_labels_it_cannot_represent(tmp_path, capsys):
    p = tmp_path / "p.csv"
    p.write_text("y,y_pred,p\n100000000000000000000,100000000000000000000,0.9\n1,2,0.5\n")
    err = fail(["match", "--source", p, "--target", p, "--out", tmp_path / "m.json"], capsys)
    assert "row 1, column y: label '100000000000000000000' is beyond" in err


def test_match_labels_up_to_2_to_the_53_are_exact():
    from lifelong_core.matching.data import make_predictions

    big = float(2**53)
    pred = make_predictions([big, 1.0], [big, 2.0], [0.9, 0.5])
    assert pred.y[0] == 2**53 and pred.accuracy == 0.5


def test_matrix_csv_with_a_byte_order_mark_reads_as_without(tmp_path):
    from lifelong_core.io.matrix import load_matrix

    (tmp_path / "plain.csv").write_text("0,1\n1,0\n")
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf0,1\n1,0\n")
    assert np.array_equal(load_matrix(tmp_path / "bom.csv"), load_matrix(tmp_path / "plain.csv"))


def test_inspect_log_path_that_is_a_folder(tmp_path, small_store, capsys):
    pytest.importorskip("inspect_ai")
    err = fail(["import", "--store", small_store, "--inspect", tmp_path], capsys)
    assert "is a folder; give one log file" in err


# ------------------------------------------------------------------ size limits while reading
@pytest.fixture
def one_mib_lines(monkeypatch):
    """The line limit at 1 MiB, so a 2 MiB line shows what a 1 GiB one would."""
    monkeypatch.setenv("LBE_MAX_LINE_MB", "1")


def test_gzip_samples_file_with_a_huge_line(run, small_store, capsys, one_mib_lines):
    f = next(run.glob("samples_boolq_*.jsonl"))
    with gzip.open(f.with_name(f.name + ".gz"), "wb") as gz:
        gz.write(b'{"doc_id": 0, "acc": 1, "x": "' + b"a" * (2 * MIB) + b'"}\n')
    f.unlink()
    err = fail(["import", "--store", small_store, "--lm-eval", run, "--model", "new"], capsys)
    assert (
        "line 1 is longer than the limit of 1 MiB on one line of a text file (LBE_MAX_LINE_MB)"
        in err
    )


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_long_csv_with_a_huge_line(tmp_path, small_store, capsys, one_mib_lines, where):
    rows = ["model,sample,correct"] + [f"m,s{j},1" for j in range(5)]
    at = {"first": 1, "middle": 3, "last": 6}[where]
    rows[at - 1] = rows[at - 1] + "x" * (MIB + 10)
    (tmp_path / "l.csv").write_text("\n".join(rows))
    err = fail(["import", "--store", small_store, "--long", tmp_path / "l.csv"], capsys)
    assert f"line {at} is longer than the limit of 1 MiB" in err


def test_id_and_index_lists_with_a_huge_line(tmp_path, small_store, capsys, one_mib_lines):
    (tmp_path / "rows.txt").write_text("0\n" + "1" * (2 * MIB) + "\n")
    np.save(tmp_path / "A.npy", np.eye(4, dtype=np.uint8))
    argv = ["sweep", "--matrix", tmp_path / "A.npy", "--sort-rows", tmp_path / "rows.txt"]
    err = fail([*argv, "--out", tmp_path / "o.csv"], capsys)
    assert "--sort-rows file" in err and "line 2 is longer than the limit" in err
    (tmp_path / "m.txt").write_text("a" * (2 * MIB))
    (tmp_path / "s.txt").write_text("w\n")
    argv = ["import", "--store", small_store, "--matrix", tmp_path / "A.npy"]
    err = fail([*argv, "--models", tmp_path / "m.txt", "--samples", tmp_path / "s.txt"], capsys)
    assert "--models file" in err and "line 1 is longer than the limit" in err


def test_gzip_that_unpacks_past_the_limit(run, small_store, capsys, monkeypatch):
    monkeypatch.setenv("LBE_MAX_UNPACKED_MB", "1")
    f = next(run.glob("samples_boolq_*.jsonl"))
    rec = json.loads(f.read_text().splitlines()[0])
    with gzip.open(f.with_name(f.name + ".gz"), "wt") as gz:
        for i in range(2 * MIB // len(json.dumps(rec)) + 1):
            gz.write(json.dumps({**rec, "doc_id": i}) + "\n")  # distinct items, all valid
    f.unlink()
    err = fail(["import", "--store", small_store, "--lm-eval", run, "--model", "new"], capsys)
    assert "unpacks to more than the limit of 1 MiB" in err and "LBE_MAX_UNPACKED_MB" in err


def test_results_file_past_the_json_limit(run, small_store, capsys, monkeypatch):
    monkeypatch.setenv("LBE_MAX_JSON_MB", "1")
    res = json.loads(_results(run).read_text())
    res["padding"] = "x" * (2 * MIB)
    _results(run).write_text(json.dumps(res))
    err = fail(["import", "--store", small_store, "--lm-eval", run, "--model", "new"], capsys)
    assert "more than the limit of 1 MiB on one JSON document (LBE_MAX_JSON_MB)" in err


def test_npz_and_zip_archives_past_the_unpacked_limit(tmp_path, small_store, capsys, monkeypatch):
    from lifelong_core.errors import InputError
    from lifelong_core.workflows.imports import extract_zip

    monkeypatch.setenv("LBE_MAX_UNPACKED_MB", "1")
    np.savez_compressed(tmp_path / "A.npz", a=np.zeros((1024, 2048), np.uint8))  # 2 MiB
    (tmp_path / "m.txt").write_text("".join(f"m{i}\n" for i in range(1024)))
    (tmp_path / "s.txt").write_text("".join(f"s{i}\n" for i in range(2048)))
    argv = ["import", "--store", small_store, "--matrix", tmp_path / "A.npz"]
    err = fail([*argv, "--models", tmp_path / "m.txt", "--samples", tmp_path / "s.txt"], capsys)
    assert "unpacks to more than the limit of 1 MiB" in err
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("run/x.json", b"0" * (2 * MIB))
    (tmp_path / "up.zip").write_bytes(buf.getvalue())
    with pytest.raises(InputError, match="unpacks to more than the limit of 1 MiB"):
        extract_zip(tmp_path / "up.zip", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_gigabyte_line_in_a_megabyte_gzip_at_the_default_limit(run, small_store, capsys):
    # A gigabyte line in a megabyte gzip at the default limit: refused at 16 MiB, not after 3 GB.
    import resource

    f = next(run.glob("samples_boolq_*.jsonl"))
    with gzip.open(f.with_name(f.name + ".gz"), "wb", compresslevel=9) as gz:
        gz.write(b'{"doc_id": 0, "acc": 1, "x": "')
        block = b"a" * MIB
        for _ in range(1024):
            gz.write(block)
        gz.write(b'"}\n')
    f.unlink()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = fail(["import", "--store", small_store, "--lm-eval", run, "--model", "new"], capsys)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "line 1 is longer than the limit of 16 MiB" in err
    assert grown_mb < 200, grown_mb


@pytest.mark.slow
def test_800_mb_one_line_csv_at_the_default_limit(tmp_path, small_store, capsys):
    import resource

    with open(tmp_path / "one.csv", "wb") as fh:
        block = b"a" * (8 * MIB)
        for _ in range(100):
            fh.write(block)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = fail(["import", "--store", small_store, "--long", tmp_path / "one.csv"], capsys)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "line 1 is longer than the limit of 16 MiB" in err
    assert grown_mb < 200, grown_mb


def test_data_page_upload_of_a_bad_results_file(tmp_path, run, monkeypatch):
    """The Data page's zip upload reads with the same checks: one error box."""
    from streamlit.testing.v1 import AppTest

    ROOT = Path(__file__).resolve().parents[2]
    store = tmp_path / "page.duckdb"
    with Store.create(store):
        pass
    monkeypatch.setenv("LBE_STORE", str(store))
    _set_field(run, "config", [1])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in run.iterdir():
            zf.write(f, f"out/{run.name}/{f.name}")
    at = AppTest.from_file(str(ROOT / "pages" / "9_Data.py"), default_timeout=240)
    at.run()
    at.radio(key="fmt").set_value("lm-eval")
    at.run()
    at.file_uploader(key="up_lm-eval").set_value(("runs.zip", buf.getvalue(), "application/zip"))
    at.run()
    at.button(key="import_btn").click()
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "config must be an object" in at.error[0].value
    with Store.open(store) as st:
        assert st.n_models == 0


def test_data_page_upload_of_a_parquet_with_a_null_model(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from streamlit.testing.v1 import AppTest

    ROOT = Path(__file__).resolve().parents[2]
    store = tmp_path / "page.duckdb"
    with Store.create(store):
        pass
    monkeypatch.setenv("LBE_STORE", str(store))
    buf = io.BytesIO()
    pq.write_table(pa.table({"model": ["a", None], "sample": ["x", "y"], "correct": [1, 0]}), buf)
    at = AppTest.from_file(str(ROOT / "pages" / "9_Data.py"), default_timeout=240)
    at.run()
    at.file_uploader(key="up_long").set_value(
        ("t.parquet", buf.getvalue(), "application/octet-stream")
    )
    at.run()
    at.button(key="import_btn").click()
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "row 2 has no value in column 'model'" in at.error[0].value
    with Store.open(store) as st:
        assert st.n_models == 0


# ------------------------------------------------------------------ messages that say what is wrong
@pytest.mark.parametrize("keep", [300_000, 100_000])
def test_truncated_store_is_called_cut_short(tmp_path, demo_store_path, capsys, keep):
    cut = tmp_path / "cut.duckdb"
    with open(demo_store_path, "rb") as src:
        cut.write_bytes(src.read(keep))
    err = fail(["info", "--store", cut], capsys)
    assert f"Store {cut} cannot be read" in err
    assert f"the file holds {keep:,} bytes, less than the" in err and "cut short" in err


def test_output_that_cannot_be_written_names_its_path(tmp_path, capsys):
    counts = tmp_path / "c.csv"
    counts.write_text("model,task,category,correct,total\nm,t,c,1,2\nn,t,c,2,2\n")
    target = Path("/proc/version")
    if not target.exists():
        pytest.skip("needs Linux's /proc")
    err = fail(["rank", "--counts", counts, "--out", target], capsys)
    assert "cannot write --out file /proc/version" in err and "disk" not in err


def test_sweep_on_a_one_row_matrix_says_why(tmp_path, capsys):
    np.save(tmp_path / "one.npy", np.ones((1, 1), np.uint8))
    argv = [
        "sweep",
        "--matrix",
        tmp_path / "one.npy",
        "--sort-models",
        "1",
        "--out",
        tmp_path / "o.csv",
    ]
    err = fail(argv, capsys)
    assert "the matrix has 1 row; a sweep needs at least 2 models" in err and "and 0" not in err
