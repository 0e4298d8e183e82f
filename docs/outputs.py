"""Run the documentation's examples as a reader would, and write what each prints.

``python -m docs.outputs`` (``make docs-outputs``) runs every ``bash`` and ``python`` block
of README.md and of the Getting started and Tutorials pages, in page order, in a fresh
folder holding a copy of the demo store at ``data/demo.duckdb``, and writes what each block
prints into a ``text`` block titled ``Output`` right after it (README.md, a landing page,
only where it already shows one). It then executes the
notebooks under ``examples/`` and commits their outputs into the files.
``python -m docs.outputs --check`` compares instead of writing (the docs test does the same).

Each page starts in a fresh shell: the project's environment (``.venv/bin``) is not on the
``PATH`` until a block of the page activates it (``. .venv/bin/activate``), as in a new
terminal. A block marked ``<!-- docs-test: skip (reason) -->`` on the line before it is not
run. Python blocks run with the ``python`` the shell finds.

Shown and produced outputs agree when their text is the same once run times and the
run's folder are masked, and every number is within ``REL_TOL`` of the shown one (or
``ABS_TOL``, whichever is larger): estimators refit on another machine's floating point may
move the last digits.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs" / "getting-started").glob("*.md")),
    *sorted((ROOT / "docs" / "tutorials").glob("*.md")),
]
# README is a landing page: it shows the output of a block where it chooses to (the outputs
# shown are kept current and checked), while every block of the other pages shows its own.
OPTIONAL_OUTPUTS = {ROOT / "README.md"}
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))
BLOCK_SECONDS = 300
REL_TOL = 0.02
ABS_TOL = 0.01
OUTPUT_INFO = 'text title="Output"'

FENCE = re.compile(
    r"(?P<mark><!-- docs-test: skip \((?P<why>[^)]*)\) -->\n)?"
    r"```(?P<lang>[a-z]*)(?P<info>[^\n]*)\n(?P<body>.*?)\n```[ \t]*\n?",
    re.S,
)
ACTIVATE = re.compile(r"^\s*(?:\.|source)\s+\.venv/bin/activate\b", re.M)
TIME = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?|min|minutes?)\b")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass
class Block:
    """One fenced block of a page.

    Parameters
    ----------
    lang : str
        The fence's language (``bash``, ``python``, ``text``, ...).
    body : str
        The code.
    skip : str or None
        The reason it is not run, or None.
    output : bool
        Whether it is an ``Output`` block (what the block before it prints).
    start, end : int
        Its place in the page's text (the skip mark included).
    """

    lang: str
    body: str
    skip: str | None
    output: bool
    start: int
    end: int

    @property
    def runs(self) -> bool:
        """Whether the block is run (a shell or Python block, not skipped)."""
        return self.lang in ("bash", "sh", "python") and self.skip is None


def blocks(text: str) -> list[Block]:
    """Every fenced block of a page, in page order.

    Parameters
    ----------
    text : str
        The page's Markdown.

    Returns
    -------
    list of Block
        The blocks.
    """
    return [
        Block(
            m["lang"],
            m["body"],
            m["why"],
            m["lang"] == "text" and 'title="Output"' in m["info"],
            m.start(),
            m.end(),
        )
        for m in FENCE.finditer(text)
    ]


def clean_env() -> dict[str, str]:
    """The environment of a new terminal: the project's ``.venv/bin`` not on the path.

    Returns
    -------
    dict
        The environment variables.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    venv_bins = {Path(sys.prefix, "bin").resolve(), (ROOT / ".venv" / "bin").resolve()}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() not in venv_bins
    )
    # The run's folder stands in for the checkout: `python -m benchmarks...` resolves there.
    env["PYTHONPATH"] = str(ROOT)
    env["MPLBACKEND"] = "Agg"
    return env


def prepare(folder: Path, store: Path) -> Path:
    """Make ``folder`` look like the checkout to the examples: the store and the environment.

    Parameters
    ----------
    folder : Path
        An empty folder.
    store : Path
        The demo store to copy to ``folder/data/demo.duckdb`` (the examples write into it).

    Returns
    -------
    Path
        ``folder``.
    """
    (folder / "data").mkdir(exist_ok=True)
    shutil.copy2(store, folder / "data" / "demo.duckdb")
    venv = Path(sys.prefix)
    if not (folder / ".venv").exists() and (venv / "bin" / "activate").exists():
        (folder / ".venv").symlink_to(venv, target_is_directory=True)
    return folder


@dataclass
class Run:
    """What one block did.

    Parameters
    ----------
    block : Block
        The block.
    returncode : int
        The shell's exit status.
    stdout, stderr : str
        What it printed.
    """

    block: Block
    returncode: int
    stdout: str
    stderr: str


def run_page(page: Path, folder: Path) -> Iterator[Run]:
    """Run a page's blocks in order, each in a new shell of the same terminal session.

    Parameters
    ----------
    page : Path
        The Markdown page.
    folder : Path
        The folder prepared by :func:`prepare`.

    Yields
    ------
    Run
        One per block that runs, in page order; stops after the first that fails.
    """
    prelude = ""
    env = clean_env()
    for block in blocks(page.read_text(encoding="utf-8")):
        if not block.runs:
            continue
        if block.lang == "python":
            script, stdin = prelude + "exec python -", block.body
        else:
            script, stdin = prelude + block.body, None
        res = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=folder,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=BLOCK_SECONDS,
        )
        yield Run(block, res.returncode, mask_folder(res.stdout, folder), res.stderr)
        if res.returncode != 0:
            return
        if block.lang != "python" and ACTIVATE.search(block.body):
            prelude = ". .venv/bin/activate\n"


def mask_folder(text: str, folder: Path) -> str:
    """``text`` with the run's folder written as a relative path.

    Parameters
    ----------
    text : str
        An output.
    folder : Path
        The run's folder.

    Returns
    -------
    str
        The output as it reads in the checkout.
    """
    for f in {str(folder), str(folder.resolve())}:
        text = text.replace(f + "/", "").replace(f, ".")
    return text


def differences(shown: str, produced: str) -> list[str]:
    """Where a produced output departs from the shown one, beyond the tolerance.

    Parameters
    ----------
    shown : str
        The output written in the page.
    produced : str
        The output of the run.

    Returns
    -------
    list of str
        One line per difference (empty when they agree).
    """
    a_lines = TIME.sub("<time>", shown.strip()).splitlines()
    b_lines = TIME.sub("<time>", produced.strip()).splitlines()
    if len(a_lines) != len(b_lines):
        return [f"{len(a_lines)} lines shown, {len(b_lines)} produced"]
    out = []
    for k, (a, b) in enumerate(zip(a_lines, b_lines), 1):
        if NUMBER.sub("#", a).rstrip() != NUMBER.sub("#", b).rstrip():
            out.append(f"line {k}: shown {a!r}, produced {b!r}")
            continue
        for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
            u, v = float(x), float(y)
            if not math.isclose(u, v, rel_tol=REL_TOL, abs_tol=ABS_TOL):
                out.append(f"line {k}: {x} shown, {y} produced")
    return out


def with_outputs(text: str, outputs: dict[int, str], every_block: bool = True) -> str:
    """The page with each block's output written after it.

    Parameters
    ----------
    text : str
        The page's Markdown.
    outputs : dict
        What each run block printed, by the block's start in ``text``.
    every_block : bool
        Give every block that prints something an ``Output`` block; when False, only
        the blocks that already have one get it rewritten.

    Returns
    -------
    str
        The page: old ``Output`` blocks replaced, a block that prints nothing has none.
    """
    parts = []
    pos = 0
    all_blocks = blocks(text)
    shown = {a.start for a, b in itertools.pairwise(all_blocks) if b.output}
    for block in all_blocks:
        if block.output:
            parts.append(text[pos : block.start])
            pos = block.end
            continue
        if block.start in outputs and (every_block or block.start in shown):
            parts.append(text[pos : block.end])
            pos = block.end
            printed = outputs[block.start].rstrip()
            if printed:
                parts.append(f"\n```{OUTPUT_INFO}\n{printed}\n```\n")
    parts.append(text[pos:])
    return re.sub(r"```\n\n\n+", "```\n\n", "".join(parts)).rstrip("\n") + "\n"


def check_page(page: Path, folder: Path) -> list[str]:
    """Run a page and compare each block's output with the one shown.

    Parameters
    ----------
    page : Path
        The Markdown page.
    folder : Path
        The folder prepared by :func:`prepare`.

    Returns
    -------
    list of str
        The problems (a block failed, printed something not shown, or differs).
    """
    name = page.relative_to(ROOT).as_posix()
    all_blocks = blocks(page.read_text(encoding="utf-8"))
    shown = {}
    for before, after in itertools.pairwise(all_blocks):
        if after.output:
            shown[before.start] = after.body
    problems = []
    for run in run_page(page, folder):
        where = f"{name}, the block at character {run.block.start}"
        if run.returncode != 0:
            problems.append(
                f"{where} failed (exit {run.returncode}):\n{run.block.body}\n--- stdout\n"
                f"{run.stdout[-3000:]}\n--- stderr\n{run.stderr[-3000:]}"
            )
            break
        if run.block.start not in shown and page in OPTIONAL_OUTPUTS:
            continue
        want = shown.pop(run.block.start, "")
        for diff in differences(want, run.stdout):
            problems.append(f"{where}: {diff} (make docs-outputs rewrites the outputs)")
    problems += [f"{name}: an Output block after a block that does not run" for _ in shown]
    return problems


def write_page(page: Path, folder: Path) -> None:
    """Run a page and write each block's output into it.

    Parameters
    ----------
    page : Path
        The Markdown page.
    folder : Path
        The folder prepared by :func:`prepare`.

    Raises
    ------
    RuntimeError
        When a block fails (the page is left as it was).
    """
    outputs = {}
    for run in run_page(page, folder):
        if run.returncode != 0:
            raise RuntimeError(
                f"{page.relative_to(ROOT)}: a block failed (exit {run.returncode}):\n"
                f"{run.block.body}\n{run.stderr[-3000:]}"
            )
        outputs[run.block.start] = run.stdout
    text = page.read_text(encoding="utf-8")
    every_block = page not in OPTIONAL_OUTPUTS
    page.write_text(with_outputs(text, outputs, every_block), encoding="utf-8")


def execute_notebook(path: Path, store: Path) -> object:
    """Execute a notebook from the checkout on ``store`` (``lbe.demo_store()`` opens it).

    Parameters
    ----------
    path : Path
        The notebook.
    store : Path
        The demo store.

    Returns
    -------
    nbformat.NotebookNode
        The executed notebook.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    old = {k: os.environ.get(k) for k in ("LBE_STORE", "MPLBACKEND")}
    os.environ.update(LBE_STORE=str(store), MPLBACKEND="Agg")
    try:
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
        ).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def cell_text(cell: object) -> str:
    """The text a code cell shows: its streams and plain-text results.

    Parameters
    ----------
    cell : nbformat.NotebookNode
        A code cell.

    Returns
    -------
    str
        The text, images left out.
    """
    parts = []
    for out in cell.outputs:  # type: ignore[attr-defined]
        if out.output_type == "stream" and out.name == "stdout":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    return "\n".join(p.rstrip("\n") for p in parts)


def check_notebook(path: Path, store: Path) -> list[str]:
    """Re-execute a committed notebook and compare each cell's text with the committed one.

    Parameters
    ----------
    path : Path
        The notebook.
    store : Path
        The demo store.

    Returns
    -------
    list of str
        The problems.
    """
    import nbformat

    committed = nbformat.read(path, as_version=4)
    fresh = execute_notebook(path, store)
    problems = []
    code = [c for c in committed.cells if c.cell_type == "code"]
    ran = [c for c in fresh.cells if c.cell_type == "code"]  # type: ignore[attr-defined]
    for k, (old, new) in enumerate(zip(code, ran), 1):
        if any(o.output_type == "error" for o in new.outputs):
            problems.append(f"{path.name}, code cell {k} raised: {cell_text(new)}")
        for diff in differences(cell_text(old), cell_text(new)):
            problems.append(f"{path.name}, code cell {k}: {diff}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Write (or, with ``--check``, compare) the outputs of the pages and notebooks.

    Parameters
    ----------
    argv : list of str, optional
        The command line (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when everything ran (and, with ``--check``, agreed).
    """
    parser = argparse.ArgumentParser(prog="python -m docs.outputs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("--store", default=str(ROOT / "data" / "demo.duckdb"))
    parser.add_argument("pages", nargs="*", help="pages or notebooks (default: all)")
    args = parser.parse_args(argv)
    store = Path(args.store)
    chosen = [Path(p).resolve() for p in args.pages] or [*RUN_PAGES, *NOTEBOOKS]
    problems: list[str] = []
    for path in chosen:
        print(path.relative_to(ROOT), flush=True)
        if path.suffix == ".ipynb":
            if args.check:
                problems += check_notebook(path, store)
            else:
                import nbformat

                nb = execute_notebook(path, store)
                for cell in nb.cells:  # type: ignore[attr-defined]
                    # When each cell ran changes on every run and says nothing to a reader.
                    cell.metadata.pop("execution", None)
                nbformat.write(nb, path)  # type: ignore[arg-type]
            continue
        with tempfile.TemporaryDirectory() as tmp:
            folder = prepare(Path(tmp), store)
            if args.check:
                problems += check_page(path, folder)
            else:
                write_page(path, folder)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
