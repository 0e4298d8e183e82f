"""Property test (hypothesis) of the importer on malformed long, wide and lm-eval inputs.

Each example starts from a valid input and applies one mutation that makes it invalid
(a ragged row, an unquoted comma, a bad 0/1 value, an empty or over-long id, a conflicting
repeat, bytes that are not UTF-8, a truncated JSON line, a matrix that does not fit its
id lists ...), with hypothesis choosing the mutation, where it goes and what it writes.
The property: exit code 2, exactly one line on stderr starting ``error:``, no traceback,
and the store's content unchanged. Derandomized and bounded, so CI runs the same
examples every time in well under a minute.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lifelong_core.cli import main
from lifelong_core.store import Store
from tests.store_content import content

FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

MODELS = ["m-a", "m-b", "m-c"]
SAMPLES = ["w", "x", "y", "z"]
WORK = Path(tempfile.mkdtemp(prefix="lbe-fuzz-"))


def _store() -> Path:
    p = WORK / "store.duckdb"
    if not p.exists():
        with Store.create(p) as st_:
            A = (np.add.outer(np.arange(3), np.arange(4)) % 2).astype(np.uint8)
            st_.insert_matrix(A, MODELS, SAMPLES, dataset="d")
    return p


STORE = _store()
BEFORE = content(STORE)


def run_refused(argv) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse refusals
            rc = exc.code
    text = err.getvalue()
    assert rc == 2, (rc, text)
    assert text.startswith("error: ") and text.count("\n") == 1 and "Traceback" not in text, text
    assert content(STORE) == BEFORE
    return text


# ------------------------------------------------------------------ long tables
text_cell = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)


@st.composite
def bad_long(draw) -> bytes:
    rows = [
        [m, s, str((i + j) % 2)]
        for i, m in enumerate(["new-1", "new-2"])
        for j, s in enumerate(["q1", "q2", "q3"])
    ]
    header = ["model", "sample", "correct"]
    kind = draw(
        st.sampled_from(
            [
                "ragged_long",
                "ragged_short",
                "comma_in_id",
                "bad_correct",
                "empty_id",
                "long_id",
                "conflict",
                "unknown_column",
                "not_utf8",
                "blank_header",
            ]
        )
    )
    r = draw(st.integers(0, len(rows) - 1))
    if kind == "ragged_long":
        rows[r] = rows[r] + [draw(text_cell)]
    elif kind == "ragged_short":
        rows[r] = rows[r][: draw(st.integers(1, 2))]
    elif kind == "comma_in_id":
        rows = [[f"{m}[a=1,b={draw(st.integers(0, 9))}]", s, c] for m, s, c in rows]
        return ("\n".join([",".join(header)] + [",".join(x) for x in rows]) + "\n").encode()
    elif kind == "bad_correct":
        rows[r][2] = draw(st.sampled_from(["2", "-1", "0.5", "yes", "", "nan", "1e300", "inf"]))
    elif kind == "empty_id":
        rows[r][draw(st.integers(0, 1))] = draw(st.sampled_from(["", " ", "  "]))
    elif kind == "long_id":
        rows[r][0] = "x" * draw(st.integers(513, 5_000))
    elif kind == "conflict":
        rows.append([rows[r][0], rows[r][1], "1" if rows[r][2] == "0" else "0"])
    elif kind == "unknown_column":
        header = header + [
            draw(
                st.text(alphabet="abcdefghij_", min_size=1, max_size=8).filter(
                    lambda c: (
                        c
                        not in (
                            "confidence",
                            "predicted",
                            "true_prob",
                            "label",
                            "dataset",
                            "domain",
                            "category",
                            "split",
                        )
                    )
                )
            )
        ]
        rows = [x + ["v"] for x in rows]
    elif kind == "blank_header":
        header[draw(st.integers(0, 2))] = ""
    if kind in ("ragged_long", "ragged_short"):
        # Written by hand: a CSV writer would never produce rows of different lengths.
        data = ("\n".join([",".join(header)] + [",".join(x) for x in rows]) + "\n").encode()
    else:
        buf = io.StringIO()
        pd.DataFrame(rows, columns=header).to_csv(buf, index=False)
        data = buf.getvalue().encode()
    if kind == "not_utf8":
        data = data.replace(b"new-1", b"new-\xff\xfe", 1)
    return data


@pytest.mark.slow
@FUZZ
@given(bad_long())
def test_malformed_long_tables_are_refused(data):
    p = WORK / "bad.csv"
    p.write_bytes(data)
    run_refused(["import", "--store", STORE, "--long", p])


# ------------------------------------------------------------------ wide matrices
@st.composite
def bad_wide(draw):
    n_m, n_s = 2, 3
    A = np.zeros((n_m, n_s), dtype=np.uint8)
    models = ["w-1", "w-2"]
    samples = ["v1", "v2", "v3"]
    kind = draw(
        st.sampled_from(
            [
                "value",
                "nan",
                "rows",
                "cols",
                "dup_model",
                "dup_sample",
                "long_id",
                "object",
                "huge_header",
                "extras_shape",
            ]
        )
    )
    extras = None
    if kind == "value":
        A = A.astype(np.float64)
        A[draw(st.integers(0, n_m - 1)), draw(st.integers(0, n_s - 1))] = draw(
            st.sampled_from([2.0, -1.0, 0.5, 1e300])
        )
    elif kind == "nan":
        A = A.astype(np.float64)
        A[0, draw(st.integers(0, n_s - 1))] = np.nan
    elif kind == "rows":
        models = models + ["w-3"] * draw(st.integers(1, 3))
        models = models[:2] + [f"w-{k}" for k in range(3, len(models) + 1)]
    elif kind == "cols":
        samples = samples[: draw(st.integers(1, 2))]
    elif kind == "dup_model":
        models = [models[0], models[0]]
    elif kind == "dup_sample":
        samples = [samples[0], samples[1], samples[0]]
    elif kind == "long_id":
        samples[draw(st.integers(0, 2))] = "s" * draw(st.integers(513, 3_000))
    elif kind == "object":
        A = np.array([[object(), 1, 0], [0, 1, 0]], dtype=object)
    elif kind == "extras_shape":
        extras = np.zeros((draw(st.integers(1, 4)), 7), dtype=np.float32)
    return kind, A, models, samples, extras


@pytest.mark.slow
@FUZZ
@given(bad_wide())
def test_malformed_wide_matrices_are_refused(case):
    kind, A, models, samples, extras = case
    mat = WORK / "A.npy"
    if kind == "object":
        np.save(mat, A, allow_pickle=True)
    elif kind == "huge_header":
        with open(mat, "wb") as f:
            np.lib.format.write_array_header_1_0(
                f, {"descr": "|u1", "fortran_order": False, "shape": (10**7, 10**6)}
            )
            f.write(b"\x00" * 64)
    else:
        np.save(mat, A)
    (WORK / "m.txt").write_text("".join(f"{m}\n" for m in models))
    (WORK / "s.txt").write_text("".join(f"{s}\n" for s in samples))
    argv = [
        "import",
        "--store",
        STORE,
        "--matrix",
        mat,
        "--models",
        WORK / "m.txt",
        "--samples",
        WORK / "s.txt",
    ]
    if extras is not None:
        np.save(WORK / "c.npy", extras)
        argv += ["--confidence", WORK / "c.npy"]
    run_refused(argv)


# ------------------------------------------------------------------ lm-eval logs
TS = "2024-05-14T12-34-56.123456"


def _line(doc_id: int, acc: float) -> dict:
    return {
        "doc_id": doc_id,
        "doc": {"q": f"q{doc_id}"},
        "target": "A",
        "arguments": {},
        "resps": [],
        "filtered_resps": [],
        "filter": "none",
        "metrics": ["acc"],
        "doc_hash": f"dh{doc_id}",
        "prompt_hash": "p",
        "target_hash": "t",
        "acc": acc,
    }


@st.composite
def bad_lm_eval(draw):
    lines = [json.dumps(_line(i, float(i % 2))) for i in range(5)]
    kind = draw(
        st.sampled_from(["truncated", "not_object", "not_utf8", "empty", "long_model", "bad_gzip"])
    )
    model = "lm-model"
    r = draw(st.integers(0, len(lines) - 1))
    if kind == "truncated":
        lines[r] = lines[r][: draw(st.integers(1, len(lines[r]) - 1))]
    elif kind == "not_object":
        lines[r] = json.dumps(draw(st.sampled_from([[1, 2], "text", 3, None])))
    elif kind == "empty":
        lines = []
    elif kind == "long_model":
        model = "m" * draw(st.integers(513, 2_000))
    data = ("\n".join(lines) + ("\n" if lines else "")).encode()
    if kind == "not_utf8":
        data = data.replace(b'"q', b'"\xff', 1)
    return kind, data, model


@pytest.mark.slow
@FUZZ
@given(bad_lm_eval())
def test_malformed_lm_eval_logs_are_refused(case):
    kind, data, model = case
    run = WORK / "run"
    run.mkdir(exist_ok=True)
    for f in run.iterdir():
        f.unlink()
    name = f"samples_arc_easy_{TS}.jsonl" + (".gz" if kind == "bad_gzip" else "")
    (run / name).write_bytes(data[: len(data) // 2] if kind == "bad_gzip" else data)
    run_refused(["import", "--store", STORE, "--lm-eval", run, "--model", model])


@pytest.fixture(scope="module", autouse=True)
def _cleanup():
    yield
    import shutil

    shutil.rmtree(WORK, ignore_errors=True)
