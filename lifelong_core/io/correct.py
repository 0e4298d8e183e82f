"""The one reading of a ``correct`` column, for every import and every upload.

People write right and wrong in whatever words their tools use. One rule, documented on
the Data page, the Evaluate something new page and the long table's format: 0 and 1 (as
numbers, 0.0 and 1.0 included), true/false and yes/no in any case, spaces around ignored.
Anything else, a missing value included, is refused with the row that holds it (1-based,
the header not counted), never guessed at.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from lifelong_core.errors import InputError

__all__ = ["CORRECT_RULE", "correct_values"]

TRUE_WORDS = frozenset({"true", "yes"})
FALSE_WORDS = frozenset({"false", "no"})
# What the messages and the pages say is accepted.
CORRECT_RULE = "0/1, true/false or yes/no"


def correct_values(
    values: pd.Series | NDArray[np.generic], column: str = "correct", source: str = "the file"
) -> NDArray[np.uint8]:
    """A ``correct`` column as 0/1.

    Parameters
    ----------
    values : pandas.Series or numpy.ndarray
        The column as read: numbers, booleans or text.
    column : str
        Its name, for messages.
    source : str
        The file or upload it comes from, for messages.

    Returns
    -------
    numpy.ndarray
        uint8, 1 for right (1, true, yes) and 0 for wrong (0, false, no).

    Raises
    ------
    InputError
        Naming the first row (1-based, header not counted) whose value is missing or is
        not one of 0/1, true/false, yes/no.

    Examples
    --------
    >>> correct_values(pd.Series(["1", "Yes", " false", "0.0", "TRUE"])).tolist()
    [1, 1, 0, 0, 1]
    """
    s = pd.Series(values, copy=False).reset_index(drop=True)
    if s.dtype.kind == "b":
        return s.to_numpy(dtype=np.uint8)
    if s.dtype.kind in "iuf":
        number = s.to_numpy(dtype=np.float64)
        right, wrong = number == 1, number == 0
    else:
        # Numbers first (a large CSV import is all 0 and 1); only the rest are read as words.
        number = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        right, wrong = number == 1, number == 0
        rest = np.flatnonzero(~(right | wrong))
        if len(rest):
            text = s.iloc[rest].astype("string").str.strip().str.lower()
            right[rest] = text.isin(TRUE_WORDS).to_numpy(dtype=bool, na_value=False)
            wrong[rest] = text.isin(FALSE_WORDS).to_numpy(dtype=bool, na_value=False)
    bad = ~(right | wrong)
    if bad.any():
        i = int(np.argmax(bad))
        shown = s.iloc[i]
        shown = shown.item() if isinstance(shown, np.generic) else shown
        if pd.isna(shown) or str(shown).strip() in ("", "nan", "NaN"):
            raise InputError(
                f"{source} row {i + 1} has a missing value (NaN) in column {column!r}."
            )
        raise InputError(
            f"{source} row {i + 1} column {column!r} holds {shown!r}; expected {CORRECT_RULE}."
        )
    return right.astype(np.uint8)
