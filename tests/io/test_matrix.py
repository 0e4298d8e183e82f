"""lifelong_core.io.matrix: every format loads the same matrix; every bad input is one
sentence naming the file and the place."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.errors import InputError
from lifelong_core.io.matrix import (
    check_binary,
    load_float_matrix,
    load_index_list,
    load_matrix,
    open_matrix,
)
from lifelong_core.rows import MatrixRows

A = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 0]], dtype=np.uint8)


def write_all(tmp_path):
    paths = {}
    paths["npy"] = tmp_path / "a.npy"
    np.save(paths["npy"], A)
    paths["bool"] = tmp_path / "b.npy"
    np.save(paths["bool"], A.astype(bool))
    paths["float"] = tmp_path / "f.npy"
    np.save(paths["float"], A.astype(np.float64))
    paths["fortran"] = tmp_path / "fo.npy"
    np.save(paths["fortran"], np.asfortranarray(A.astype(np.int64)))
    paths["npz"] = tmp_path / "a.npz"
    np.savez(paths["npz"], A=A)
    paths["csv"] = tmp_path / "a.csv"
    paths["csv"].write_text("\n".join(",".join(map(str, r)) for r in A) + "\n")
    paths["csvh"] = tmp_path / "h.csv"
    paths["csvh"].write_text("s1,s2,s3,s4\n" + "\n".join(",".join(map(str, r)) for r in A) + "\n\n")
    paths["parquet"] = tmp_path / "a.parquet"
    pd.DataFrame(A, columns=list("abcd")).to_parquet(paths["parquet"])
    return paths


def test_every_format_loads_the_same(tmp_path):
    for name, p in write_all(tmp_path).items():
        got = load_matrix(p)
        assert got.dtype == np.uint8 and np.array_equal(got, A), name
        src = open_matrix(p)
        assert src.shape == A.shape
        assert np.array_equal(src.read_rows(np.array([2, 0, 1])), A[[2, 0, 1]]), name
        chunks = list(MatrixRows(p, np.array([0, 1, 2])).dense_chunks(2))
        assert [len(i) for i, _ in chunks] == [2, 1]
        assert np.array_equal(np.vstack([c for _, c in chunks]), A[:3]), name


def expect(match, fn, *args, **kw):
    with pytest.raises(InputError, match=match) as exc:
        fn(*args, **kw)
    msg = str(exc.value)
    assert "\n" not in msg and msg.endswith(".")
    return msg


def test_bad_matrices(tmp_path):
    expect("does not exist", load_matrix, tmp_path / "missing.npy")
    (tmp_path / "empty.csv").write_text("")
    expect("is empty", load_matrix, tmp_path / "empty.csv")
    (tmp_path / "x.txt").write_text("1,0\n")
    expect("unsupported extension", load_matrix, tmp_path / "x.txt")
    (tmp_path / "ragged.csv").write_text("1,0,1\n0,1\n")
    expect("ragged: line 2 has 2 fields", load_matrix, tmp_path / "ragged.csv")
    (tmp_path / "two.csv").write_text("1,0\n0,2\n")
    msg = expect("non-binary value", load_matrix, tmp_path / "two.csv")
    assert "line 2, column 2" in msg
    (tmp_path / "word.csv").write_text("1,0\n0,yes\n")
    expect("non-numeric value 'yes' at line 2, column 2", load_matrix, tmp_path / "word.csv")
    (tmp_path / "nan.csv").write_text("1,0\n0,\n")
    expect(r"NaN\) at line 2, column 2", load_matrix, tmp_path / "nan.csv")
    bad = A.astype(float)
    bad[1, 3] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    expect(r"NaN\) at row 2, column 4", load_matrix, tmp_path / "nan.npy")
    np.save(tmp_path / "one_d.npy", np.array([1, 0, 1]))
    expect("1-dimensional", load_matrix, tmp_path / "one_d.npy")
    expect("1-dimensional", open_matrix, tmp_path / "one_d.npy")
    np.save(tmp_path / "obj.npy", np.array([[{"a": 1}]], dtype=object), allow_pickle=True)
    expect("allow_pickle=False", load_matrix, tmp_path / "obj.npy")
    expect("allow_pickle=False", open_matrix, tmp_path / "obj.npy")
    np.savez(tmp_path / "two.npz", a=A, b=A)
    expect("holds 2 arrays", load_matrix, tmp_path / "two.npz")
    assert np.array_equal(load_matrix(tmp_path / "two.npz", key="b"), A)
    expect("no array named 'c'", load_matrix, tmp_path / "two.npz", key="c")
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    expect("not a readable .npy", load_matrix, tmp_path / "junk.npy")
    expect("not a readable .npy", open_matrix, tmp_path / "junk.npy")
    np.save(tmp_path / "empty.npy", np.zeros((0, 3), dtype=np.uint8))
    expect("empty matrix", load_matrix, tmp_path / "empty.npy")
    pd.DataFrame({"a": ["x", "y"]}).to_parquet(tmp_path / "s.parquet")
    expect("column 1 .'a'. has type", load_matrix, tmp_path / "s.parquet")


def test_streamed_npy_validates_blocks_with_global_row_numbers(tmp_path):
    bad = A.copy()
    bad[2, 1] = 7
    np.save(tmp_path / "bad.npy", bad)
    src = open_matrix(tmp_path / "bad.npy")
    assert np.array_equal(src.read_rows(np.array([0, 1])), A[:2])
    expect("non-binary value 7 at row 3, column 2", src.read_rows, np.array([1, 2]))


def test_truncated_npy(tmp_path):
    np.save(tmp_path / "t.npy", A)
    data = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(data[:-3])
    expect("truncated", open_matrix, tmp_path / "t.npy")


def test_check_binary_row_offset():
    with pytest.raises(InputError, match="row 12, column 1"):
        check_binary(np.array([[2, 0]]), "block", row_offset=11)


def test_float_matrix(tmp_path):
    C = np.array([[0.1, 0.9], [1.0, 0.0]], dtype=np.float32)
    np.save(tmp_path / "c.npy", C)
    assert np.array_equal(load_float_matrix(tmp_path / "c.npy"), C)
    np.save(tmp_path / "big.npy", C * 2)
    expect(
        r"value 1.8.* at row 1, column 2, outside \[0, 1\]", load_float_matrix, tmp_path / "big.npy"
    )


def test_index_lists(tmp_path):
    p = tmp_path / "rows.txt"
    p.write_text("3\n0\n\n2\n")
    assert load_index_list(p, 5).tolist() == [3, 0, 2]
    p.write_text("1\n5\n")
    expect("line 2 holds index 5, outside", load_index_list, p, 5)
    p.write_text("1\n-1\n")
    expect("outside", load_index_list, p, 5)
    p.write_text("1\nx\n")
    expect("line 2 is 'x', not a whole number", load_index_list, p, 5)
    p.write_text("1\n1\n")
    expect("repeats index 1", load_index_list, p, 5)
    p.write_text("\n\n")
    expect("holds no indices", load_index_list, p, 5)
