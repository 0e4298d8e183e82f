"""The reader registry: every format the product reads is one module and one line, and the
``import`` command, the import workflow and the Data page take their formats from it."""

from __future__ import annotations

import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.io import readers
from lifelong_core.store import Store
from lifelong_core.workflows import imports


def test_the_registry_lists_every_format_in_order():
    names = [r.name for r in readers.readers()]
    assert names == ["long", "matrix", "lm-eval", "inspect", "counts"]
    assert imports.import_kinds() == ["long", "matrix", "lm-eval", "inspect"]
    assert readers.reader("lm-eval").types == ["zip", "json", "jsonl", "gz"]
    assert readers.reader("matrix").types == ["npy", "npz", "csv", "parquet"]
    assert readers.reader("counts").load() is not None
    with pytest.raises(InputError, match="unknown file format 'xml'"):
        readers.reader("xml")
    with pytest.raises(InputError, match="unknown import format 'counts'"):
        imports.source("counts", "x.csv")


@pytest.fixture
def table_format():
    """A format registered in one line (here a second name for long tables)."""
    readers.register_reader(
        "table-copy",
        "lifelong_core.io.long:long_source",
        label="Another long table",
        patterns=("*.tsv.csv",),
        help="a long table under another name",
    )
    yield "table-copy"
    readers.unregister_reader("table-copy")


def test_a_format_registered_in_one_line_imports_from_the_command_line(table_format, tmp_path):
    csv = tmp_path / "in.csv"
    pd.DataFrame(
        {"model": ["a", "a", "b", "b"], "sample": ["s1", "s2"] * 2, "correct": [1, 0, 0, 1]}
    ).to_csv(csv, index=False)
    db = tmp_path / "s.duckdb"
    assert main(["import", "--store", str(db), "--table-copy", str(csv), "--dataset", "d"]) == 0
    with Store.open(db) as st:
        assert st.datasets()["dataset"].tolist() == ["d"]
        assert len(st.models()) == 2
    assert imports.source(table_format, csv).table["model"].tolist() == ["a", "a", "b", "b"]
