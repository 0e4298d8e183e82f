"""Reading back what a user returns after running a model on the samples they were given.

People send back the list they downloaded with a result column added; its ``correct``
column is read by the one rule of every import (:func:`lifelong_core.io.correct.correct_values`).
Columns the page does not need (the list's own domain and label, notes) are set aside and
named, not refused.
"""

from __future__ import annotations

from collections.abc import Iterable


def split_columns(columns: Iterable[str], wanted: Iterable[str]) -> tuple[list[str], list[str]]:
    """(missing wanted columns, extra columns that will be ignored), in file order."""
    cols = [str(c) for c in columns]
    return [c for c in wanted if c not in cols], [c for c in cols if c not in wanted]
