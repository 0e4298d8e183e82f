"""Reading back what a user returns after running a model on the samples they were given.

People send back the list they downloaded with a result column added, in whatever words
their tools write: 0/1, 1.0/0.0, true/false, yes/no. Those all mean right or wrong;
anything else is refused with the row that holds it. Columns the page does not need
(the list's own domain and label, notes) are set aside and named, not refused.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError

TRUE_WORDS = frozenset({"1", "1.0", "true", "t", "yes", "y"})
FALSE_WORDS = frozenset({"0", "0.0", "false", "f", "no", "n"})


def result_values(values: pd.Series, column: str, source: str) -> np.ndarray:
    """0/1 as uint8 from 0/1, true/false or yes/no (any case); InputError naming the first
    row (1-based, header not counted) that holds anything else or nothing."""
    text = values.astype("string").str.strip().str.lower()
    right = text.isin(TRUE_WORDS).to_numpy(dtype=bool)
    wrong = text.isin(FALSE_WORDS).to_numpy(dtype=bool)
    bad = ~(right | wrong)
    if bad.any():
        i = int(np.argmax(bad))
        shown = values.iloc[i]
        what = "no value" if pd.isna(shown) or str(shown).strip() == "" else repr(shown)
        raise InputError(
            f"{source} row {i + 1} column {column!r} holds {what}; expected 0/1, true/false or yes/no."
        )
    return right.astype(np.uint8)


def split_columns(columns: Iterable[str], wanted: Iterable[str]) -> tuple[list[str], list[str]]:
    """(missing wanted columns, extra columns that will be ignored), in file order."""
    cols = [str(c) for c in columns]
    return [c for c in wanted if c not in cols], [c for c in cols if c not in wanted]
