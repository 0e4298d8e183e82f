"""The reader registry: every format the product reads is one module and one line, and the
``import`` command, the import workflow, the Python API and the Data page take their formats
and options from it. The registry itself (lifelong_core.registry) is the one the search
methods use too."""

from __future__ import annotations

import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.io import readers
from lifelong_core.store import Store
from lifelong_core.workflows import imports


def test_the_registry_holds_the_built_in_formats():
    names = [r.name for r in readers.readers()]
    assert {"long", "matrix", "lm-eval", "inspect", "counts"} <= set(names)
    assert "counts" not in imports.import_kinds()
    assert {"long", "matrix", "lm-eval", "inspect"} <= set(imports.import_kinds())
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


def _write_tsv(path):
    path.write_text("model\tsample\tcorrect\na\ts1\t1\na\ts2\t0\nb\ts1\t0\nb\ts2\t1\n")
    return path


@pytest.fixture
def tsv_format():
    """A format with an option, registered in one line: its function is in this module."""
    readers.register_reader(
        "tsv-test",
        "tests.io.test_registry:read_tsv",
        label="Tab-separated long table",
        patterns=("*.tsv",),
        options=(readers.Option("family", "family of every model", label="Family"),),
    )
    yield "tsv-test"
    readers.unregister_reader("tsv-test")


def read_tsv(path, dataset=None, family=None):
    """A tab-separated long table; ``family`` names every model's family."""
    table = pd.read_csv(path, sep="\t", dtype=str)
    models = None
    if family is not None:
        ids = sorted(table["model"].unique())
        models = pd.DataFrame({"model_id": ids, "name": ids, "family": family})
    return readers.Source("tsv-test", str(path), dataset=dataset, table=table, models=models)


def test_a_format_with_an_option_gets_its_flag_api_and_checks(tsv_format, tmp_path, capsys):
    import lifelong_core as lbe

    tsv = _write_tsv(tmp_path / "in.tsv")
    db = tmp_path / "s.duckdb"
    args = ["import", "--store", str(db), "--tsv-test", str(tsv), "--family", "fam"]
    assert main([*args, "--dataset", "d"]) == 0
    with Store.open(db) as st:
        assert sorted(st.models()["family"]) == ["fam", "fam"]
    # The option is offered by the format that declares it only.
    assert main(["import", "--store", str(db), "--long", str(tsv), "--family", "x"]) == 2
    assert "--family only goes with --tsv-test" in capsys.readouterr().err
    # The generic Python import reads it with the same option, and refuses an unknown one.
    db2 = tmp_path / "t.duckdb"
    lbe.import_file(db2, tsv_format, tsv, dataset="d", family="api")
    with Store.open(db2) as st:
        assert sorted(st.models()["family"]) == ["api", "api"]
    with pytest.raises(InputError, match="takes no option 'colour'") as info:
        imports.source(tsv_format, tsv, colour="red")
    assert info.value.param == "colour"


def test_a_required_option_is_asked_for(tmp_path):
    with pytest.raises(InputError, match="matrix import needs models") as info:
        imports.source("matrix", tmp_path / "A.npy")
    assert info.value.param == "models"
    assert imports.option_values("inspect", {"epoch": " 2 ", "model": ""}) == {"epoch": 2}
    with pytest.raises(InputError, match="epoch 'two' is not a whole number"):
        imports.option_values("inspect", {"epoch": "two"})


def test_a_name_collision_is_refused_unless_replacement_is_said(tsv_format):
    with pytest.raises(InputError, match="already registered as 'long'"):
        readers.register_reader("long", "tests.io.test_registry:read_tsv", label="x", patterns=())
    assert readers.reader("long").target == "lifelong_core.io.long:long_source"
    readers.register_reader(
        tsv_format, "tests.io.test_registry:read_tsv", label="again", patterns=(), replace=True
    )
    assert readers.reader(tsv_format).label == "again"
    with pytest.raises(InputError, match="cannot be imported"):
        readers.register_reader("nowhere", "no_such_module:f", label="x", patterns=())


class _EntryPoint:
    def __init__(self, name, fn):
        self.name, self.value, self._fn = name, f"plugin:{name}", fn

    def load(self):
        return self._fn


def test_plugins_register_through_entry_points_and_cannot_take_a_name():
    """Another package's entry point names a function that registers its entries; one that
    takes a built-in name is left out with a warning, and the built-in stays."""
    from lifelong_core.methods import registry as methods
    from lifelong_core.registry import METHODS_GROUP, READERS_GROUP

    def add_reader():
        readers.register_reader(
            "plugin-tsv", "tests.io.test_registry:read_tsv", label="Plugin", patterns=("*.tsv",)
        )

    def take_auto():
        methods.register("auto", "lifelong_core.methods.insert_m:InsertM")

    def add_method():
        methods.register("plugin-rule", "lifelong_core.methods.insert_m:InsertM")

    seen = []
    try:
        readers._READERS.discover(lambda g: seen.append(g) or [_EntryPoint("p", add_reader)])
        with pytest.warns(UserWarning, match="'bad' .* already registered as 'auto'"):
            methods._REGISTRY.discover(
                lambda g: (
                    seen.append(g) or [_EntryPoint("bad", take_auto), _EntryPoint("ok", add_method)]
                )
            )
        assert seen == [READERS_GROUP, METHODS_GROUP]
        assert "plugin-tsv" in imports.import_kinds()
        assert "plugin-rule" in methods.available_methods()
        assert type(methods.get_method("auto")).__name__ == "AutoEstimator"
    finally:
        readers.unregister_reader("plugin-tsv")
        methods.unregister("plugin-rule")


def test_methods_and_readers_share_one_registry_implementation():
    from lifelong_core.methods import registry as methods
    from lifelong_core.registry import Registry

    assert isinstance(methods._REGISTRY, Registry) and isinstance(readers._READERS, Registry)
