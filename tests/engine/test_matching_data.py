"""Validation of the (y, y_pred, p) inputs: one sentence naming file, row and column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong_core.errors import InputError
from lifelong_core.matching import make_predictions, read_predictions_csv


def write(tmp_path, text, name="S.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_reads_a_good_file(tmp_path):
    path = write(tmp_path, "y,y_pred,p,extra\n1,1,0.9,a\n2,0,0.4,b\n 3 , 3 ,1,\n")
    pr = read_predictions_csv(path)
    assert pr.y.tolist() == [1, 2, 3] and pr.y_pred.tolist() == [1, 0, 3]
    assert pr.p.tolist() == [0.9, 0.4, 1.0]
    assert pr.correct.tolist() == [True, False, True]
    assert pr.accuracy == pytest.approx(2 / 3)
    assert pr.mean_confidence == pytest.approx(2.3 / 3)
    assert pr.name == "S.csv"
    with pytest.raises(ValueError):
        pr.p[0] = 0.1  # results cannot drift from their input


def test_spreadsheet_exports_with_bom_and_crlf(tmp_path):
    path = tmp_path / "S.csv"
    path.write_bytes("\ufeffy,y_pred,p\r\n1,1,0.5\r\n0,1,0.75\r\n".encode("utf-8"))
    pr = read_predictions_csv(path)
    assert pr.y.tolist() == [1, 0] and pr.p.tolist() == [0.5, 0.75]


def test_float_written_integer_labels_are_accepted(tmp_path):
    pr = read_predictions_csv(write(tmp_path, "y,y_pred,p\n1.0,2.0,0.5\n"))
    assert pr.y.tolist() == [1] and pr.y_pred.tolist() == [2]


@pytest.mark.parametrize(
    "text, pieces",
    [
        ("", ["S.csv", "empty"]),
        ("y,y_pred,p\n", ["S.csv", "no datapoints"]),
        ("y,p\n1,0.5\n", ["S.csv", "missing column", "y_pred"]),
        ("label,pred\n1,1\n", ["y, y_pred, p (expected"]),
        ("y,y_pred,p\n1,1,0.5\n1,1,1.5\n", ["S.csv, row 2, column p", "outside [0, 1]"]),
        ("y,y_pred,p\n1,1,-0.01\n", ["row 1, column p", "outside"]),
        ("y,y_pred,p\n1,1,0.5\n1,1,nan\n", ["row 2, column p", "missing"]),
        ("y,y_pred,p\n1,1,\n", ["row 1, column p", "missing"]),
        ("y,y_pred,p\n1,1,high\n", ["row 1, column p", "'high' is not a number"]),
        ("y,y_pred,p\n1,1,0.5\n1.5,1,0.5\n", ["row 2, column y", "'1.5' is not an integer label"]),
        ("y,y_pred,p\n1,cat,0.5\n", ["row 1, column y_pred", "'cat'"]),
        ("y,y_pred,p\n1,,0.5\n", ["row 1, column y_pred", "missing"]),
        ("y,y_pred,p\n1,inf,0.5\n", ["row 1, column y_pred", "integer"]),
    ],
)
def test_bad_files(tmp_path, text, pieces):
    with pytest.raises(InputError) as info:
        read_predictions_csv(write(tmp_path, text))
    msg = str(info.value)
    assert "\n" not in msg
    for piece in pieces:
        assert piece in msg


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_predictions_csv(tmp_path / "nope.csv")


def test_array_validation():
    with pytest.raises(InputError, match="different lengths"):
        make_predictions([1, 2], [1], [0.5, 0.5], name="target")
    with pytest.raises(InputError, match="target has no datapoints"):
        make_predictions([], [], [], name="target")
    with pytest.raises(InputError, match=r"model m1\), row 2, column p"):
        make_predictions(
            [0, 1], [0, 1], np.array([0.5, np.nan], np.float32), name="source (model m1)"
        )
    with pytest.raises(InputError, match=r"row 1, column y: 0.5"):
        make_predictions([0.5], [0], [0.5])
    pr = make_predictions(
        np.array([1, 2], np.int32), np.array([True, False]), np.array([0.25, 1.0], np.float32)
    )
    assert pr.y.dtype == np.int64 and pr.p.dtype == np.float64


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-5, 2000), st.integers(-5, 2000), st.floats(0, 1)),
        min_size=1,
        max_size=30,
    )
)
def test_csv_round_trip(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("rt") / "T.csv"
    pd.DataFrame(rows, columns=["y", "y_pred", "p"]).to_csv(path, index=False)
    pr = read_predictions_csv(path)
    assert pr.y.tolist() == [r[0] for r in rows]
    assert pr.y_pred.tolist() == [r[1] for r in rows]
    assert pr.p.tolist() == [r[2] for r in rows]  # repr of a float64 reads back exactly
