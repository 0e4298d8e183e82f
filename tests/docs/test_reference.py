"""The generated references: one page per command, the environment variables, llms.txt.

The command-line pages are built from the parser (``docs/hooks.py``); these tests check
what they are built from (a plain description and a running example per command, help
without reStructuredText, the older option names hidden), that the navigation lists every
command, that the environment table lists every ``LBE_*`` variable the code reads with
the code's default, and that a strict build writes a correct ``llms.txt`` with a Markdown
copy of every page.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lifelong_core.cli import build_parser, main
from lifelong_core.env import VARIABLES

ROOT = Path(__file__).resolve().parents[2]
RST = re.compile(r"``|:(func|meth|mod|class|data|attr):`")
# Examples the suite does not run, and why.
NOT_RUN = {
    "app": "serves the app until stopped",
    "build-demo": "takes about a minute; `make store` runs it",
    "estimate": "reads a harness run of the items `select` chose",
    "match": "reads two predictions files of one model",
}


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(
        a for a in build_parser(prog="lbe")._actions if isinstance(a, argparse._SubParsersAction)
    )
    return dict(sub.choices)


def test_every_command_says_what_it_does_and_shows_an_example():
    for name, command in _commands().items():
        text = command.description or ""
        assert text.endswith(".") and not RST.search(text), (name, text)
        assert not re.search(r"\bcontract\b|docs/|\.md\b", text), (name, text)
        assert (command.example or "").startswith(f"lbe {name} "), name
        assert f"example:\n  {command.example}" in command.format_help()


def test_help_strings_are_plain_text():
    for name, command in _commands().items():
        for action in command._actions:
            if action.help in (None, argparse.SUPPRESS):
                continue
            assert not RST.search(action.help), (name, action.option_strings)
            assert not re.search(r"\bcontract\b", action.help), (name, action.option_strings)


def test_command_page_tables_every_shown_option_and_no_hidden_one():
    hooks = _hooks()
    commands = _commands()
    page = hooks.command_page("sweep", commands["sweep"])
    assert page.startswith("# lbe sweep\n\n" + commands["sweep"].description)
    assert "```bash\n" + commands["sweep"].example + "\n```" in page
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    shown = [a for a in commands["sweep"]._actions if a.help not in (argparse.SUPPRESS,)]
    assert len(rows) == len(shown) - 1  # -h is left out
    assert any(r.startswith("| `--method METHOD` | text | `auto` |") for r in rows)
    assert not any("--search" in r.split("|")[1] for r in rows)
    assert any(r.startswith("| `--out OUT` | text | required |") for r in rows)
    assert any(r.startswith("| `--decompose` | flag | off |") for r in rows)
    # argparse's %% is shown as one %, and a table cell never breaks on a |.
    method_row = next(r for r in rows if r.startswith("| `--method"))
    assert "95% interval" in method_row and "%%" not in method_row
    assert "midpoint\\|reference" in page
    undo = hooks.command_page("undo", commands["undo"])
    assert "| `LOG_ID` (positional) | integer | required |" in undo


def test_navigation_lists_every_command_once_under_the_reference():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    reference = next(item["Reference"] for item in nav if "Reference" in item)
    cli = next(item["Command line"] for item in reference if "Command line" in item)
    pages = [next(iter(e.values())) for e in cli if isinstance(e, dict)]
    assert pages[0] == "reference/cli.md"
    assert pages[1:] == [f"reference/cli/{name}.md" for name in _commands()]
    assert {"Environment variables": "reference/environment.md"} in reference


def _read_variables() -> set[str]:
    names = set()
    for folder in ("lifelong_core", "ui", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            names |= set(re.findall(r"\bLBE_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    names |= set(re.findall(r"\bLBE_[A-Z0-9_]+", (ROOT / "app.py").read_text(encoding="utf-8")))
    return names


def test_environment_table_lists_every_variable_the_code_reads():
    listed = [v.name for v in VARIABLES]
    assert len(listed) == len(set(listed))
    assert set(listed) == _read_variables()
    for v in VARIABLES:
        assert importlib.util.find_spec(v.where) is not None, v.where
        source = importlib.util.find_spec(v.where).origin
        assert v.name in Path(source).read_text(encoding="utf-8"), (v.name, v.where)


def test_environment_defaults_are_the_codes():
    from lifelong_core import limits
    from lifelong_core.io.limits import COUNT_LIMITS, SIZE_LIMITS
    from lifelong_core.methods import parallel

    default = {v.name: v.default for v in VARIABLES}
    for env, value, _ in (*SIZE_LIMITS.values(), *COUNT_LIMITS.values()):
        assert default[env] == str(value), env
    assert float(default[limits.ENV]) == limits.DEFAULT_APP_LIMIT_MB
    assert default[parallel.ENV] == f"the cores, at most {parallel.MAX_THREADS}"
    from ui import controls, shared_store, stores

    assert float(default[controls.WORK_ENV]) == controls.DEFAULT_WORK
    assert int(default[stores.UPLOAD_ENV]) == stores.DEFAULT_UPLOAD_MB
    assert default[shared_store.MEMORY_ENV] == "2GB"


def test_environment_page_shows_the_table():
    table = _hooks().environment_table()
    assert table.count("\n| `LBE_") == len(VARIABLES)


def test_markdown_copies_keep_links_working():
    hooks = _hooks()
    urls = {"data.md": "data/", "index.md": "", "images/a.png": "images/a.png"}
    text = "See [data](../data.md#top), [home](../index.md), ![x](../images/a.png), [web](https://x.org)."
    out = hooks.relink(text, "guides/store.md", "guides/store/index.md", urls.get)
    assert out == (
        "See [data](../../data/index.md#top), [home](../../index.md), "
        "![x](../../images/a.png), [web](https://x.org)."
    )
    assert hooks.markdown_copy("") == "index.md"
    assert hooks.markdown_copy("guides/store/") == "guides/store/index.md"
    assert hooks.expand_snippets('--8<-- "CHANGELOG.md"\n').startswith("# Changelog")


@pytest.mark.slow
def test_strict_build_writes_llms_txt_and_markdown_copies(tmp_path):
    site = tmp_path / "site"
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert res.returncode == 0, res.stderr[-3000:]
    text = (site / "llms.txt").read_text(encoding="utf-8")
    assert "]()" not in text and "--8<--" not in text and '"cell_type"' not in text
    links = re.findall(r"^- \[([^\]]+)\]\(([^)]+)\)", text, re.M)
    assert len(links) >= 60
    for title, link in links:
        assert title and not title.endswith(".md"), title
        copy = site / link
        assert copy.is_file(), link
        body = copy.read_text(encoding="utf-8")
        assert "--8<--" not in body and '"cell_type"' not in body, link
    assert not re.search(r"^#+ .*\.md$", text, re.M)  # sections titled, not file paths
    assert "### Command line" in text
    for name in _commands():
        assert f"- [{name}](reference/cli/{name}/index.md): " in text
    changelog = (site / "changelog" / "index.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog")
    notebook = (site / "examples" / "quickstart" / "index.md").read_text(encoding="utf-8")
    assert "```python\nimport lifelong_core as lbe" in notebook
    # Every relative link of every copy leads to a file of the site.
    for copy in site.rglob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", copy.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:|#|/", target):
                continue
            assert (copy.parent / target.split("#")[0]).exists(), (copy, target)


@pytest.mark.slow
def test_every_example_runs_as_printed(tmp_path, demo_store_path, monkeypatch, capsys):
    (tmp_path / "data").mkdir()
    shutil.copy2(demo_store_path, tmp_path / "data" / "demo.duckdb")
    monkeypatch.chdir(tmp_path)
    commands = _commands()
    # What the examples read: the counts table `lbe export --counts` writes (rank,
    # weights), the long table of export's own example (import), the import undone (undo).
    setup = (
        "lbe export --store data/demo.duckdb --dataset open-llm-leaderboard-v2 --counts counts.csv"
    )
    order = ["export", "import", "undo"] + [
        n for n in commands if n not in ("export", "import", "undo")
    ]
    for name in ["-", *order]:
        line = setup if name == "-" else commands[name].example
        if name in NOT_RUN:
            continue
        argv = shlex.split(line)
        assert argv[0] == "lbe"
        code = main(argv[1:], prog="lbe")
        err = capsys.readouterr().err
        assert code == 0, (line, err[-2000:])
