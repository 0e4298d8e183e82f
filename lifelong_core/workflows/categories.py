"""Task categories of a counts table when the data carry none, or the user gives their own.

Counts tables (``model, task, category, correct, total``) need a category on every row
(the rankings' per-category scopes, the three corners of the task-weighting map). An
import often carries none: lm-evaluation-harness tasks outside any group, a long table
without a ``category`` column. The rule, for the app and the command line alike: a task
the user assigned keeps the user's category; a task with a recorded category keeps it;
every other task gets :data:`UNCATEGORISED`.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from lifelong_core.errors import InputError

UNCATEGORISED = "uncategorised"


def fill_categories(
    counts: pd.DataFrame, assigned: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """A counts table with every row's category set, by the rule of the module docstring.

    Parameters
    ----------
    counts : pandas.DataFrame
        A counts table with at least ``task`` and ``category`` columns (``category``
        may be missing or blank on any row).
    assigned : mapping of str to str, optional
        The user's categories, task -> category (e.g. from :func:`parse_assignment`);
        each task named must be in ``counts``.

    Returns
    -------
    pandas.DataFrame
        A copy of ``counts`` whose ``category`` is ``assigned[task]``, else the recorded
        category (stripped), else :data:`UNCATEGORISED`; ``counts`` is not changed.

    Raises
    ------
    InputError
        If ``assigned`` names a task that ``counts`` does not have.
    """
    out = counts.copy()
    assigned = dict(assigned or {})
    unknown = sorted(set(assigned) - set(out["task"].astype(str)))
    if unknown:
        raise InputError(f"category given for task {unknown[0]!r}, which the data do not have.")
    recorded = out["category"].astype("string").str.strip()
    recorded = recorded.where(recorded.notna() & (recorded != ""), UNCATEGORISED)
    by_user = out["task"].astype(str).map(assigned)
    out["category"] = by_user.where(by_user.notna(), recorded).astype(str).to_numpy(dtype=object)
    return out


def has_categories(counts: pd.DataFrame) -> bool:
    """Whether any row of a counts table carries a recorded category.

    Parameters
    ----------
    counts : pandas.DataFrame
        A counts table with a ``category`` column.

    Returns
    -------
    bool
        True when at least one row's category is neither missing nor blank.
    """
    text = counts["category"].astype("string").str.strip()
    return bool((text.notna() & (text != "")).any())


def parse_assignment(text: str) -> dict[str, str]:
    """Read the user's categories from ``task = category`` lines.

    Parameters
    ----------
    text : str
        One ``task = category`` per line (``:`` or ``,`` also separate; the first
        separator on the line splits it); blank lines and ``#`` comments are ignored,
        spaces around names stripped.

    Returns
    -------
    dict of str to str
        task -> category, in the order of the lines; a task given twice with the same
        category is kept once.

    Raises
    ------
    InputError
        Naming the first bad line: one without a separator, with an empty task or
        category, or giving a task a second, different category.
    """
    out: dict[str, str] = {}
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        for sep in ("=", ":", ","):
            if sep in line:
                task, cat = (s.strip() for s in line.split(sep, 1))
                break
        else:
            raise InputError(
                f"category line {no} ({raw.strip()!r}) has no '=': write task = category."
            )
        if not task or not cat:
            raise InputError(
                f"category line {no} ({raw.strip()!r}) needs both a task and a category."
            )
        if task in out and out[task] != cat:
            raise InputError(
                f"category line {no} gives task {task!r} a second category ({cat!r}, before {out[task]!r})."
            )
        out[task] = cat
    return out


def format_assignment(assigned: Mapping[str, str]) -> str:
    """Write the user's categories as the text :func:`parse_assignment` reads back.

    Parameters
    ----------
    assigned : mapping of str to str
        task -> category.

    Returns
    -------
    str
        One ``task = category`` line per entry, in the mapping's order, each ending in a
        newline; empty for an empty mapping.
    """
    return "".join(f"{t} = {c}\n" for t, c in assigned.items())
