"""One reading of a `correct` column: the unit rule, and the same rule on both paths that
use it (an import into a store, as `lbe import` and the Data page run it, and the results
uploaded on the Evaluate something new page)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import lifelong_core as lbe
from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.io.correct import correct_values
from lifelong_core.workflows.arrivals import NEW_MODEL_COLUMNS, read_results

# Spellings and what they mean, written out by hand.
SPELLINGS = {
    "1": 1, "0": 0, "1.0": 1, "0.0": 0, " 1 ": 1, "true": 1, "TRUE": 1, "True": 1,
    "false": 0, "False": 0, "yes": 1, "YES": 1, "Yes": 1, "no": 0, "No": 0, " no ": 0,
}  # fmt: skip
REFUSED = ["maybe", "2", "-1", "0.5", "t", "y", "n", "f", "oui", "1e300", "inf"]


def test_every_accepted_spelling_means_what_it_says():
    got = correct_values(pd.Series(list(SPELLINGS)))
    assert got.dtype == np.uint8
    assert got.tolist() == list(SPELLINGS.values())
    assert correct_values(pd.Series([True, False])).tolist() == [1, 0]
    assert correct_values(pd.Series([1, 0, 1])).tolist() == [1, 0, 1]
    assert correct_values(np.array([0.0, 1.0])).tolist() == [0, 1]


@pytest.mark.parametrize("bad", REFUSED)
def test_anything_else_is_refused_with_its_row(bad):
    with pytest.raises(InputError, match=rf"f.csv row 3 column 'correct' holds '{bad}'; expected"):
        correct_values(pd.Series(["1", "no", bad, "x"]), "correct", "f.csv")


@pytest.mark.parametrize("missing", [None, np.nan, "", "  "])
def test_a_missing_value_is_refused_with_its_row(missing):
    with pytest.raises(InputError, match=r"row 2 has a missing value .* column 'correct'"):
        correct_values(pd.Series(["yes", missing], dtype=object))
    with pytest.raises(InputError, match=r"row 2 has a missing value"):
        correct_values(pd.Series([1.0, np.nan]))


def _table(correct: list[str]) -> str:
    rows = [f"m{i % 2},s{i // 2},{c}" for i, c in enumerate(correct)]
    return "model,sample,correct\n" + "\n".join(rows) + "\n"


WORDS = ["yes", "No", "TRUE", "false", "1", "0"]
NUMBERS = ["1", "0", "1", "0", "1", "0"]


def test_import_reads_words_as_the_numbers(tmp_path, capsys):
    for name, values in (("words", WORDS), ("numbers", NUMBERS)):
        (tmp_path / f"{name}.csv").write_text(_table(values))
        argv = ["import", "--store", str(tmp_path / f"{name}.duckdb"), "--long",
                str(tmp_path / f"{name}.csv"), "--dataset", "d"]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
    for model in ("m0", "m1"):
        with (
            lbe.open_store(tmp_path / "words.duckdb") as a,
            lbe.open_store(tmp_path / "numbers.duckdb") as b,
        ):
            pd.testing.assert_series_equal(
                lbe.results(a, model, dataset="d"), lbe.results(b, model, dataset="d")
            )


def test_import_and_upload_refuse_the_same_value_the_same_way(tmp_path, capsys):
    bad = ["yes", "no", "maybe", "1"]
    (tmp_path / "bad.csv").write_text(_table(bad))
    store = tmp_path / "s.duckdb"
    argv = ["import", "--store", str(store), "--long", str(tmp_path / "bad.csv"), "--dataset", "d"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "row 3 column 'correct' holds 'maybe'; expected 0/1, true/false or yes/no." in err
    assert not store.exists()  # nothing written
    upload = b"sample_id,correct\ns0,yes\ns1,No\ns2,maybe\n"
    with pytest.raises(InputError, match=r"row 3 column 'correct' holds 'maybe'; expected 0/1"):
        read_results(upload, "up.csv", NEW_MODEL_COLUMNS)
    good = read_results(
        b"sample_id,correct\ns0,yes\ns1,No\ns2,TRUE\ns3,0\n", "up.csv", NEW_MODEL_COLUMNS
    )
    assert good["correct"].tolist() == [1, 0, 1, 0]
