"""Per-datapoint model outputs ``(y, y_hat, p_hat)`` and their validation.

Anzaku et al., §2.1-§2.2 represents the output of a model on one datapoint as the tuple
``(y, y_hat, p_hat)``: ground-truth label, predicted label (argmax of the softmax) and
predicted probability (its max). :class:`Predictions` holds those tuples for one model on
one dataset as three aligned arrays; :func:`read_predictions_csv` reads them from the
``y, y_pred, p`` CSV files of the ``match`` command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lifelong_core.errors import InputError
from lifelong_core.io.tables import read_csv_table

COLUMNS = ("y", "y_pred", "p")
# Labels are read as float64 numbers, which hold every whole number exactly only up to
# 2**53; beyond it two labels can read as one, and a cast to int64 overflows (labels near
# 1e20 once became one label with a NumPy warning and an accuracy of 0).
MAX_LABEL = 2**53


@dataclass(frozen=True, eq=False)
class Predictions:
    """Outputs of one model on one dataset.

    Build it with :func:`make_predictions` (or :func:`read_predictions_csv`), which
    validates; the arrays are made read-only so a result can never drift from its input.

    Attributes
    ----------
    y : numpy.ndarray
        int64 ground-truth labels.
    y_pred : numpy.ndarray
        int64 predicted labels.
    p : numpy.ndarray
        float64 predicted probability of ``y_pred``, in [0, 1].
    name : str
        How messages name the dataset.
    """

    y: np.ndarray  # int64 ground-truth labels
    y_pred: np.ndarray  # int64 predicted labels
    p: np.ndarray  # float64 predicted probability of y_pred, in [0, 1]
    name: str = "data"

    def __len__(self) -> int:
        return int(self.y.shape[0])

    @property
    def correct(self) -> np.ndarray:
        """Boolean per datapoint: the prediction equals the label."""
        return self.y == self.y_pred

    @property
    def accuracy(self) -> float:
        """Share of datapoints predicted right."""
        return float(np.mean(self.correct))

    @property
    def mean_confidence(self) -> float:
        """Average predicted probability, the 'confidence' axis of Anzaku et al., Fig. 1."""
        return float(np.mean(self.p))


def _as_int_labels(values: ArrayLike, what: str, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{name}: column {what} must be one-dimensional, got shape {arr.shape}.")
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    try:
        as_float = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name}: column {what} must hold integer labels.") from None
    bad = ~np.isfinite(as_float) | (as_float != np.round(as_float))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{name}, row {row + 1}, column {what}: {arr[row]} is not an integer label."
        )
    _check_label_range(as_float, what, name, lambda row: arr[row])
    return as_float.astype(np.int64)


def _check_label_range(
    values: np.ndarray, what: str, name: str, shown: Callable[..., object]
) -> None:
    big = np.abs(values) > MAX_LABEL
    if big.any():
        row = int(np.flatnonzero(big)[0])
        raise InputError(
            f"{name}, row {row + 1}, column {what}: label {shown(row)} is beyond what can be told "
            f"apart exactly; labels must be whole numbers from -{MAX_LABEL:,} to {MAX_LABEL:,}."
        )


def make_predictions(
    y: ArrayLike, y_pred: ArrayLike, p: ArrayLike, name: str = "data"
) -> Predictions:
    """Validated :class:`Predictions` from three aligned 1-d arrays.

    Parameters
    ----------
    y : array_like
        Whole-number labels.
    y_pred : array_like
        Whole-number predicted labels.
    p : array_like
        Probabilities of the predicted labels, in [0, 1].
    name : str
        How messages name the dataset.

    Returns
    -------
    Predictions

    Raises
    ------
    InputError
        Naming ``name``, the row (from 1) and the column, for mismatched lengths, an empty
        dataset, non-integer labels, NaN or probabilities outside [0, 1].
    """
    y_arr = _as_int_labels(y, "y", name)
    yp_arr = _as_int_labels(y_pred, "y_pred", name)
    p_arr = np.asarray(p, dtype=np.float64)
    if p_arr.ndim != 1:
        raise InputError(f"{name}: column p must be one-dimensional, got shape {p_arr.shape}.")
    if not (len(y_arr) == len(yp_arr) == len(p_arr)):
        raise InputError(
            f"{name}: columns y, y_pred and p have different lengths "
            f"({len(y_arr)}, {len(yp_arr)}, {len(p_arr)})."
        )
    if len(y_arr) == 0:
        raise InputError(f"{name} has no datapoints.")
    nan = np.isnan(p_arr)
    if nan.any():
        row = int(np.flatnonzero(nan)[0])
        raise InputError(f"{name}, row {row + 1}, column p: the value is missing (NaN).")
    outside = (p_arr < 0.0) | (p_arr > 1.0)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise InputError(f"{name}, row {row + 1}, column p: {p_arr[row]:g} is outside [0, 1].")
    for arr in (y_arr, yp_arr, p_arr):
        arr.flags.writeable = False
    return Predictions(y=y_arr, y_pred=yp_arr, p=p_arr, name=name)


def read_predictions_csv(path: str | Path) -> Predictions:
    """Read a ``y, y_pred, p`` CSV (one row per datapoint of one model) and validate it.

    Extra columns are ignored.

    Parameters
    ----------
    path : str or pathlib.Path
        The CSV file.

    Returns
    -------
    Predictions

    Raises
    ------
    InputError
        Naming the file, the data row (1-based, header not counted) and the column.
    """
    path = Path(path)
    name = path.name
    frame = read_csv_table(path, name, skipinitialspace=True)
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(
            f"{name} is missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (expected y, y_pred, p)."
        )
    if len(frame) == 0:
        raise InputError(f"{name} has a header but no datapoints.")
    values = {}
    for col in COLUMNS:
        text = frame[col].str.strip()
        blank = text == ""
        if blank.any():
            row = int(np.flatnonzero(blank.to_numpy())[0])
            raise InputError(f"{name}, row {row + 1}, column {col}: the value is missing.")
        num = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(num)
        if col != "p":
            bad |= ~np.isfinite(num) | (num != np.round(num))
        if col != "p":
            _check_label_range(
                np.where(bad, 0.0, num), col, name, lambda row, text=text: repr(text.iloc[row])
            )
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            cell = text.iloc[row]
            if cell.lower() in ("nan", "na", "n/a", "null", "none"):
                raise InputError(
                    f"{name}, row {row + 1}, column {col}: the value is missing ({cell})."
                )
            kind = "a number" if col == "p" else "an integer label"
            raise InputError(f"{name}, row {row + 1}, column {col}: {cell!r} is not {kind}.")
        values[col] = num
    return make_predictions(values["y"], values["y_pred"], values["p"], name=name)
