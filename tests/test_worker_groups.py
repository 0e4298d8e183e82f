"""``make test``'s scheduler (``tests/conftest.py``): the browser tests and the
documentation's examples each go to one worker as one unit, every other test alone."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import WORKER_GROUPS, pytest_xdist_make_scheduler

ROOT = Path(__file__).resolve().parents[1]


def _config(dist: str) -> SimpleNamespace:
    options = {"dist": dist, "tx": ["3*popen"]}
    return SimpleNamespace(getvalue=options.get)


def test_grouped_tests_share_a_unit_and_the_others_are_alone() -> None:
    scheduler = pytest_xdist_make_scheduler(_config("loadgroup"), None)
    units = {
        "tests/browser/test_smoke.py::test_page_renders_without_exception[home]": "browser",
        "tests/browser/test_smoke.py::test_downloads_deliver_files": "browser",
        "tests/docs/test_docs_examples.py::test_every_example[README.md]": "docs",
        "tests/docs/test_notebooks.py::test_notebook_gives_its_committed_outputs[q]": "docs",
        "tests/docs/test_maths.py::test_formula": "tests/docs/test_maths.py::test_formula",
        "tests/app/test_ui_common.py::test_x[tests/browser/]": "tests/app/test_ui_common.py::test_x[tests/browser/]",
    }
    assert {nodeid: scheduler._split_scope(nodeid) for nodeid in units} == units


def test_every_group_names_files_that_exist() -> None:
    # A renamed folder or file would leave its tests ungrouped without a word.
    for start in WORKER_GROUPS:
        assert (ROOT / start.split("::")[0]).exists(), start


def test_other_distributions_keep_xdists_scheduler() -> None:
    assert pytest_xdist_make_scheduler(_config("load"), None) is None
