"""Every notebook under examples/ is committed executed, and re-executing it gives its outputs.

The documentation renders the committed outputs; ``make docs-outputs`` rewrites them. Here
each notebook runs again from top to bottom (nbclient, a real kernel) on the shipped demo
store, and every code cell's text must agree with the committed one, numbers within the
tolerance of ``docs/outputs.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docs.outputs import NOTEBOOKS, check_notebook


def test_there_are_example_notebooks() -> None:
    assert len(NOTEBOOKS) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_executed(path: Path) -> None:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    for k, cell in enumerate(code, 1):
        assert cell.execution_count == k, f"{path.name}: code cell {k} was not run in order"
        assert all(o.output_type != "error" for o in cell.outputs), f"{path.name}: cell {k}"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_gives_its_committed_outputs(path: Path, demo_store_path: Path) -> None:
    problems = check_notebook(path, demo_store_path)
    assert not problems, "\n".join(problems)
