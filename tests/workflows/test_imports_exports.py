"""The shared import/export floor of the command line and the Data page on a user's store:
categories for uncategorised tasks, ``export --counts`` read back by ``rank``, zipped
lm-eval runs."""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.workflows import categories, imports


def test_fill_categories_keeps_recorded_and_user_categories():
    counts = pd.DataFrame(
        {
            "model": ["a"] * 3,
            "task": ["t1", "t2", "t3"],
            "category": ["g", None, ""],
            "correct": [1, 2, 3],
            "total": [5, 5, 5],
        }
    )
    out = categories.fill_categories(counts)
    assert out["category"].tolist() == ["g", categories.UNCATEGORISED, categories.UNCATEGORISED]
    out = categories.fill_categories(counts, {"t2": "mine", "t1": "other"})
    assert out["category"].tolist() == ["other", "mine", categories.UNCATEGORISED]
    with pytest.raises(InputError, match="task 'nope'"):
        categories.fill_categories(counts, {"nope": "x"})


def test_parse_assignment_round_trips_and_names_bad_lines():
    text = "arc_easy = reasoning\nboolq: reading  # comment\n\npiqa, physical\n"
    got = categories.parse_assignment(text)
    assert got == {"arc_easy": "reasoning", "boolq": "reading", "piqa": "physical"}
    assert categories.parse_assignment(categories.format_assignment(got)) == got
    with pytest.raises(InputError, match="line 2"):
        categories.parse_assignment("a = b\njust-a-task\n")
    with pytest.raises(InputError, match="second category"):
        categories.parse_assignment("a = b\na = c\n")


@pytest.mark.slow
def test_export_counts_is_read_by_rank(user_store_path, tmp_path, capsys):
    out = tmp_path / "counts.csv"
    assert (
        main(
            [
                "export",
                "--store",
                str(user_store_path),
                "--counts",
                str(out),
                "--dataset",
                "lm-eval",
            ]
        )
        == 0
    )
    counts = pd.read_csv(out)
    assert list(counts.columns) == ["model", "task", "category", "correct", "total"]
    assert set(counts["task"]) == {"arc_easy", "boolq", "piqa"}
    assert set(counts["category"]) == {categories.UNCATEGORISED}
    assert (
        main(["rank", "--counts", str(out), "--boot", "50", "--out", str(tmp_path / "ranks.csv")])
        == 0
    )
    assert len(pd.read_csv(tmp_path / "ranks.csv")) > 0
    capsys.readouterr()
    assert (
        main(["export", "--store", str(user_store_path), "--counts", str(tmp_path / "c.txt")]) == 2
    )
    assert "must end in .csv" in capsys.readouterr().err
    assert (
        main(["export", "--store", str(user_store_path), "--counts", str(out), "--dataset", "nope"])
        == 2
    )
    assert "no dataset 'nope'" in capsys.readouterr().err


def test_zipped_runs_are_found_and_unsafe_zips_refused(tmp_path):
    from tests.user_store import lm_eval_runs

    runs = lm_eval_runs(tmp_path / "out")
    archive = tmp_path / "runs.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for folder in runs.values():
            for f in folder.iterdir():
                zf.write(f, f"out/{folder.name}/{f.name}")
    found = imports.run_folders(imports.extract_zip(archive, tmp_path / "x"))
    assert [imports.model_name_from_folder(f) for f in found] == sorted(runs)
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("../evil.txt", "x")
    with pytest.raises(InputError, match="outside the archive"):
        imports.extract_zip(bad, tmp_path / "y")
    (tmp_path / "not.zip").write_text("hello")
    with pytest.raises(InputError, match="not a readable zip"):
        imports.extract_zip(tmp_path / "not.zip", tmp_path / "z")
