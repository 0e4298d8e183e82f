"""Checks on data bound for the store, done completely before anything is written.

Each check raises :class:`~lifelong_core.errors.InputError` with one sentence naming the
problem and where it is: ``<source> row N`` counts data rows from 1 (a CSV header is not
a row), ``column 'x'`` names the column. Nothing here touches DuckDB; the store calls
these, then compares the survivors with what it already holds, then writes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from lifelong_core.errors import InputError
from lifelong_core.io.correct import correct_values
from lifelong_core.io.limits import (
    CONTROL,
    MAX_METADATA_CHARS,
    MAX_TEXT_CHARS,
    check_name,
    control_character,
    json_depth_rule,
    json_too_deep,
    printable_rule,
)
from lifelong_core.io.text import load_json

LONG_REQUIRED = ("model", "sample", "correct")
LONG_OPTIONAL = (
    "confidence",
    "predicted",
    "true_prob",
    "label",
    "dataset",
    "domain",
    "category",
    "split",
)
EXTRA_FIELDS = ("confidence", "predicted", "true_prob")
FLOAT_FIELDS = ("confidence", "true_prob")
MODEL_FIELDS = ("name", "family", "release_order", "metadata", "estimated")
SAMPLE_FIELDS = ("dataset", "domain", "category", "label", "split", "meta")
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Entries:
    """Validated (model id, sample id) -> correct [+ extras] triples, pairs unique."""

    model: np.ndarray  # object array of str, one per entry
    sample: np.ndarray  # object array of str
    correct: np.ndarray  # uint8 0/1
    extras: Mapping[str, np.ndarray]  # field -> float64 / int32, same length
    model_row: np.ndarray  # int64: row of the returned models table for each entry
    sample_row: np.ndarray  # int64: row of the returned samples table for each entry


def _row(i: int) -> str:
    return f"row {i + 1}"


def _is_missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    return isinstance(v, str) and v.strip() == ""


def _blank_number(v: Any) -> bool:
    """A number's cell that holds no value: missing, or the text 'nan' a table writes."""
    return _is_missing(v) or str(v).strip().lower() == "nan"


def text_column(
    values: Sequence[Any] | pd.Series, column: str, source: str, *, required: bool = True
) -> np.ndarray:
    """Ids and names as an object array of ``str``; numbers must be whole (``7`` -> ``"7"``).

    Parameters
    ----------
    values : sequence or pandas.Series
        The column.
    column : str
        Its name, for messages.
    source : str
        The input, for messages.
    required : bool
        A missing value is an error; otherwise it becomes None.

    Returns
    -------
    numpy.ndarray
        object array of ``str`` (and None where allowed).

    Raises
    ------
    InputError
        Naming the row of a missing value (when required), a number that is not whole, or
        text longer than :data:`~lifelong_core.io.limits.MAX_TEXT_CHARS`.
    """
    out = _text_column(values, column, source, required=required)
    check_text_length(out, column, source)
    check_printable(out, column, source)
    return out


def check_printable(values: np.ndarray, column: str, source: str) -> None:
    """Refuse an id, name or label holding a control character (a newline, NUL, tab, ...),
    naming its row; checked on the distinct values, so a long table costs one hash pass."""
    present = pd.Series(values, dtype=object).dropna()
    if present.empty:
        return
    uniq = pd.Series(present.unique(), dtype=object)
    bad = uniq[uniq.str.contains(CONTROL.pattern, regex=True)]
    if bad.empty:
        return
    i = int(np.flatnonzero(pd.Series(values, dtype=object).isin(set(bad)).to_numpy())[0])
    found = control_character(str(values[i]))
    if found is not None:
        raise InputError(printable_rule(f"{source} {_row(i)} column {column!r}", found))


def check_text_length(values: np.ndarray, column: str, source: str) -> None:
    """Refuse an id, name or label longer than ``MAX_TEXT_CHARS``, naming its row."""
    lengths = np.fromiter(
        (len(v) if isinstance(v, str) else 0 for v in values), dtype=np.int64, count=len(values)
    )
    if len(lengths) and lengths.max() > MAX_TEXT_CHARS:
        i = int(lengths.argmax())
        raise InputError(
            f"{source} {_row(i)} column {column!r} holds {lengths[i]:,} characters; "
            f"ids, names and labels may hold at most {MAX_TEXT_CHARS}."
        )


def _text_column(values: ArrayLike, column: str, source: str, *, required: bool) -> np.ndarray:
    s = pd.Series(values, copy=False)
    if s.dtype.kind == "b":
        raise InputError(f"{source} column {column!r} holds true/false values; expected text ids.")
    if s.dtype.kind in "iu" and not s.isna().any():
        return s.astype(str).to_numpy(dtype=object)
    if s.dtype.kind in "iu":
        s = s.astype(object)
    if s.dtype.kind == "f":
        arr = s.to_numpy(dtype=np.float64)
        nan = np.isnan(arr)
        if nan.any() and required:
            raise InputError(
                f"{source} {_row(int(np.argmax(nan)))} has no value in column {column!r}."
            )
        frac = ~nan & (arr != np.round(arr))
        if frac.any():
            i = int(np.argmax(frac))
            raise InputError(
                f"{source} {_row(i)} column {column!r} holds {arr[i].item()!r}; expected text or a whole number."
            )
        return np.array([None if n else str(int(v)) for v, n in zip(arr, nan)], dtype=object)
    if pd.api.types.infer_dtype(s, skipna=False) == "string":
        # All text (the usual case, and the only large one): vectorized.
        stripped = (
            s.astype(object).map(str.strip, na_action="ignore")
            if s.dtype == object
            else s.str.strip()
        )
        # A text column read from Parquet holds its nulls as missing values (NaN), which
        # compare unequal to "" and would reach the store's id lookups as floats.
        empty = (stripped.isna() | (stripped == "")).to_numpy(dtype=bool)
        if empty.any() and required:
            raise InputError(
                f"{source} {_row(int(np.argmax(empty)))} has no value in column {column!r}."
            )
        out = stripped.to_numpy(dtype=object)
        out[empty] = None
        return out
    out = np.empty(len(s), dtype=object)
    for i, v in enumerate(s.tolist()):
        if _is_missing(v):
            if required:
                raise InputError(f"{source} {_row(i)} has no value in column {column!r}.")
            out[i] = None
        elif isinstance(v, (bool, np.bool_)):
            raise InputError(f"{source} {_row(i)} column {column!r} holds {v!r}; expected text.")
        elif isinstance(v, (float, np.floating)):
            if v != round(v):
                raise InputError(
                    f"{source} {_row(i)} column {column!r} holds {v!r}; expected text or a whole number."
                )
            out[i] = str(int(v))
        elif isinstance(v, (list, tuple, set, dict, np.ndarray, bytes, bytearray)):
            # A Parquet list or struct column, or bytes: written out as text it would become
            # an id such as "['a']" that names nothing.
            kind = "bytes" if isinstance(v, (bytes, bytearray)) else type(v).__name__
            kind = "a list" if isinstance(v, (list, tuple, set, np.ndarray)) else kind
            kind = "a mapping" if isinstance(v, dict) else kind
            raise InputError(
                f"{source} {_row(i)} column {column!r} holds {kind}, not a single value; "
                "expected text."
            )
        else:
            out[i] = str(v).strip()
    return out


def _all_missing(values: pd.Series) -> bool:
    """Whether every cell of a column is blank (None, NaN, empty or spaces, or 'nan')."""
    if values.dtype.kind in "iubf":  # numbers, nullable ones included
        return bool(values.isna().all())
    return bool(values.map(_blank_number).to_numpy(dtype=bool).all())


def numeric_column(values: pd.Series | np.ndarray, column: str, source: str) -> np.ndarray:
    """A column as float64, refusing missing values and non-numeric text by row.

    Parameters
    ----------
    values : pandas.Series or numpy.ndarray
        The column.
    column : str
        Its name, for messages.
    source : str
        The input, for messages.

    Returns
    -------
    numpy.ndarray
        float64.

    Raises
    ------
    InputError
        Naming the row of a value that is missing or not a number.
    """
    s = pd.Series(values, copy=False)
    if s.dtype.kind == "b" or s.dtype.kind in "iuf":
        arr = s.to_numpy(dtype=np.float64)
    else:
        if pd.api.types.infer_dtype(s, skipna=True) not in ("string", "empty"):
            s = s.map(lambda v: float(v) if isinstance(v, (bool, np.bool_)) else v)
        arr = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
        # Only the cells that did not parse need a closer look (text such as 'yes' is an
        # error of its own; blanks and 'nan' are missing values, reported below).
        odd = np.flatnonzero(np.isnan(arr))
        if len(odd):
            cells = s.iloc[odd]
            bad = ~cells.map(_blank_number).to_numpy(dtype=bool)
            if bad.any():
                i = int(odd[np.argmax(bad)])
                raise InputError(
                    f"{source} {_row(i)} column {column!r} holds {s.iloc[i]!r}, which is not a number."
                )
    nan = np.isnan(arr)
    if nan.any():
        i = int(np.argmax(nan))
        raise InputError(f"{source} {_row(i)} has a missing value (NaN) in column {column!r}.")
    return arr


def binary_values(arr: np.ndarray, column: str, source: str) -> np.ndarray:
    """0/1 values as uint8, refusing any other value by row.

    Parameters
    ----------
    arr : numpy.ndarray
        Numeric values.
    column : str
        Their column, for messages.
    source : str
        The input, for messages.

    Returns
    -------
    numpy.ndarray
        uint8.

    Raises
    ------
    InputError
        Naming the row and the value of the first entry that is neither 0 nor 1.
    """
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"{source} {_row(i)} column {column!r} holds {arr[i].item()!r}; only 0 and 1 are allowed."
        )
    return arr.astype(np.uint8)


def unit_values(arr: np.ndarray, column: str, source: str) -> np.ndarray:
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"{source} {_row(i)} column {column!r} holds {arr[i].item()!r}, outside [0, 1]."
        )
    return arr.astype(np.float64)


def int_values(
    arr: np.ndarray, column: str, source: str, *, lo: float = -INT32_MAX, hi: float = INT32_MAX
) -> np.ndarray:
    bad = (arr != np.round(arr)) | (arr < lo) | (arr > hi)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"{source} {_row(i)} column {column!r} holds {arr[i].item()!r}; expected a whole number."
        )
    return arr.astype(np.int64)


def _first_appearance(codes: np.ndarray) -> np.ndarray:
    _, first = np.unique(codes, return_index=True)
    return np.sort(first)


def _check_consistent(
    keys: np.ndarray,
    values: np.ndarray,
    what: str,
    column: str,
    source: str,
    key_names: np.ndarray | Sequence[str],
) -> None:
    """Every row with the same key code must carry the same value code."""
    order = np.argsort(keys, kind="stable")
    k, v = keys[order], values[order]
    clash = (k[1:] == k[:-1]) & (v[1:] != v[:-1])
    if clash.any():
        j = int(np.argmax(clash))
        a, b = sorted((int(order[j]), int(order[j + 1])))
        raise InputError(
            f"{source} gives {what} {key_names[k[j]]!r} two different values in column {column!r} "
            f"({_row(a)} and {_row(b)})."
        )


def _codes(values: np.ndarray) -> np.ndarray:
    # None must be a value of its own here, so it cannot be confused with any text.
    return pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)[0]


def validate_long(
    df: pd.DataFrame, source: str, dataset: str | None = None
) -> tuple[Entries, pd.DataFrame, pd.DataFrame]:
    """Validate a long table (``import --long``; docs/reference/file-formats.md).

    Returns the unique entries, the samples it names (``sample_id`` + the metadata columns
    it carries, first-appearance order) and the models it names (``model_id``). A pair
    repeated with identical values is kept once; with different values it is an error.
    ``dataset`` fills the dataset of rows when the table has no ``dataset`` column.
    """
    check_name(dataset, "dataset name")
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{source} is not a table.")
    cols = [str(c) for c in df.columns]
    unknown = [c for c in cols if c not in LONG_REQUIRED + LONG_OPTIONAL]
    if unknown:
        raise InputError(
            f"{source} has unknown column {unknown[0]!r}; the long format has columns "
            f"{', '.join(LONG_REQUIRED)} and optionally {', '.join(LONG_OPTIONAL)}."
        )
    if len(set(cols)) != len(cols):
        dup = next(c for c in cols if cols.count(c) > 1)
        raise InputError(f"{source} has column {dup!r} twice.")
    missing = [c for c in LONG_REQUIRED if c not in cols]
    if missing:
        raise InputError(
            f"{source} has no column {missing[0]!r} (columns found: {', '.join(cols) or 'none'})."
        )
    if len(df) == 0:
        raise InputError(f"{source} has no data rows.")
    df = df.reset_index(drop=True)
    model = text_column(df["model"], "model", source)
    sample = text_column(df["sample"], "sample", source)
    correct = correct_values(df["correct"], "correct", source)
    extras: dict[str, np.ndarray] = {}
    # An extra field blank on every row is not recorded (what `lbe export --long` writes
    # for a dataset without it in a store where another dataset has it); blank on some rows
    # only, it is refused below, naming the first blank row.
    blank = [f for f in EXTRA_FIELDS if f in df and _all_missing(df[f])]
    for f in FLOAT_FIELDS:
        if f in df and f not in blank:
            extras[f] = unit_values(numeric_column(df[f], f, source), f, source)
    if "predicted" in df and "predicted" not in blank:
        extras["predicted"] = int_values(
            numeric_column(df["predicted"], "predicted", source), "predicted", source
        ).astype(np.int32)

    meta: dict[str, np.ndarray] = {}
    if "label" in df:
        meta["label"] = int_values(
            numeric_column(df["label"], "label", source), "label", source, lo=-(2.0**62), hi=2.0**62
        )
    for c in ("dataset", "domain"):
        if c in df:
            meta[c] = text_column(df[c], c, source)
    for c in ("category", "split"):
        if c in df:
            meta[c] = text_column(df[c], c, source, required=False)
    if dataset is not None:
        if "dataset" in meta:
            bad = meta["dataset"] != dataset
            if bad.any():
                i = int(np.argmax(bad))
                raise InputError(
                    f"{source} {_row(i)} names dataset {meta['dataset'][i]!r} but dataset {dataset!r} was requested."
                )
        else:
            meta["dataset"] = np.full(len(df), dataset, dtype=object)

    mcodes, _mnames = pd.factorize(pd.Series(model, dtype=object))
    scodes, snames = pd.factorize(pd.Series(sample, dtype=object))
    key = mcodes.astype(np.int64) * max(len(snames), 1) + scodes
    order = np.argsort(key, kind="stable")
    ks = key[order]
    same = ks[1:] == ks[:-1]
    keep = np.ones(len(df), dtype=bool)
    if same.any():
        a, b = order[:-1][same], order[1:][same]
        diff = correct[a] != correct[b]
        for v in extras.values():
            diff |= v[a] != v[b]
        if diff.any():
            j = int(np.argmax(diff))
            i0, i1 = sorted((int(a[j]), int(b[j])))
            raise InputError(
                f"{source} repeats model {model[i0]!r} sample {sample[i0]!r} with different values "
                f"({_row(i0)} and {_row(i1)})."
            )
        keep[np.maximum(a, b)] = False

    for c, v in meta.items():
        _check_consistent(scodes, _codes(v), "sample", c, source, snames)
    if "category" in meta:
        dom = meta.get("domain", meta.get("dataset"))
        if dom is not None:
            ds_code, dom_code = _codes(meta.get("dataset", dom)), _codes(dom)
            dkey = ds_code.astype(np.int64) * (int(dom_code.max()) + 1) + dom_code
            names = np.empty(int(dkey.max()) + 1, dtype=object)
            names[dkey] = dom
            _check_consistent(dkey, _codes(meta["category"]), "domain", "category", source, names)

    # factorize numbers ids by first appearance, the order of the tables returned below.
    entries = Entries(
        model[keep],
        sample[keep],
        correct[keep],
        {f: v[keep] for f, v in extras.items()},
        mcodes[keep].astype(np.int64),
        scodes[keep].astype(np.int64),
    )
    first = _first_appearance(scodes)
    samples = pd.DataFrame({"sample_id": sample[first]})
    for c, v in meta.items():
        samples[c] = v[first] if c != "label" else pd.array(v[first], dtype="Int64")
    models = pd.DataFrame({"model_id": model[_first_appearance(mcodes)]})
    return entries, samples, models


def _ids(values: Sequence[object] | np.ndarray | pd.Series, what: str, source: str) -> np.ndarray:
    ids = text_column(pd.Series(list(values), dtype=object), what, source)
    codes, uniq = pd.factorize(pd.Series(ids, dtype=object))
    if len(uniq) != len(ids):
        counts = np.bincount(codes)
        dup = int(np.flatnonzero(counts > 1)[0])
        rows = np.flatnonzero(codes == dup)[:2]
        raise InputError(
            f"{source} lists {what} {uniq[dup]!r} twice ({_row(int(rows[0]))} and {_row(int(rows[1]))})."
        )
    if len(ids) == 0:
        raise InputError(f"{source} lists no {what} ids.")
    return ids


def canonical_json(value: Any, source: str, row: int) -> str:
    """Model metadata as canonical JSON text (sorted keys), so equal dicts compare equal."""
    if _is_missing(value):
        return "{}"
    where = f"{source} {_row(row)} column 'metadata'"
    if isinstance(value, str):
        try:
            value = load_json(value, where)
        except json.JSONDecodeError:
            raise InputError(f"{where} is not valid JSON.") from None
    elif json_too_deep(value):
        raise InputError(json_depth_rule(where))
    if not isinstance(value, dict):
        raise InputError(f"{source} {_row(row)} column 'metadata' must be a JSON object.")
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        raise InputError(
            f"{source} {_row(row)} column 'metadata' holds values that are not JSON."
        ) from None
    if len(text) > MAX_METADATA_CHARS:
        raise InputError(
            f"{source} {_row(row)} column 'metadata' holds {len(text):,} characters of JSON; "
            f"metadata may hold at most {MAX_METADATA_CHARS:,}."
        )
    return text


def _id_table(
    table: pd.DataFrame, what: str, fields: tuple[str, ...], named: tuple[str, ...], source: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``table`` with a fresh index, and the output frame holding its checked ``<what>_id``
    column. One sentence for a missing id column or a column outside ``fields`` (the
    sentence lists ``named``)."""
    id_col = f"{what}_id"
    cols = list(table.columns)
    if id_col not in cols:
        raise InputError(
            f"{source} has no column '{id_col}' (columns found: {', '.join(map(str, cols)) or 'none'})."
        )
    unknown = [c for c in cols if c not in (id_col,) + fields]
    if unknown:
        raise InputError(
            f"{source} has unknown column {unknown[0]!r}; {what} columns are {id_col}, {', '.join(named)}."
        )
    table = table.reset_index(drop=True)
    return table, pd.DataFrame({id_col: _ids(table[id_col], what, source)})


def normalize_models(models: Sequence[str] | pd.DataFrame, source: str) -> pd.DataFrame:
    """Model ids (a sequence) or a table with ``model_id`` and optional model fields."""
    if isinstance(models, pd.DataFrame):
        models, out = _id_table(models, "model", MODEL_FIELDS, MODEL_FIELDS, source)
        for c in ("name", "family"):
            if c in models:
                out[c] = text_column(models[c], c, source, required=False)
        if "release_order" in models:
            v = models["release_order"]
            arr = pd.to_numeric(v, errors="coerce").to_numpy(dtype=np.float64)
            bad = np.isnan(arr) & ~v.map(_is_missing).to_numpy(dtype=bool)
            bad |= ~np.isnan(arr) & (arr != np.round(arr))
            if bad.any():
                i = int(np.argmax(bad))
                raise InputError(
                    f"{source} {_row(i)} column 'release_order' holds {v.iloc[i]!r}; expected a whole number."
                )
            out["release_order"] = pd.array(
                [None if math.isnan(x) else int(x) for x in arr], dtype="Int64"
            )
        if "metadata" in models:
            out["metadata"] = [
                canonical_json(v, source, i) for i, v in enumerate(models["metadata"].tolist())
            ]
        if "estimated" in models:
            v = models["estimated"]
            if v.dtype.kind == "b":
                out["estimated"] = v.to_numpy(dtype=bool)
            else:
                arr = numeric_column(v, "estimated", source)
                out["estimated"] = binary_values(arr, "estimated", source).astype(bool)
        return out
    if isinstance(models, (str, bytes)):
        raise InputError(f"{source}: model ids must be a list, not one string.")
    return pd.DataFrame({"model_id": _ids(models, "model", source)})


def normalize_samples(
    samples: Sequence[str] | pd.DataFrame, source: str, dataset: str | None
) -> pd.DataFrame:
    """Sample ids (a sequence) or a table with ``sample_id`` and optional sample fields."""
    check_name(dataset, "dataset name")
    if isinstance(samples, pd.DataFrame):
        samples, out = _id_table(samples, "sample", SAMPLE_FIELDS, SAMPLE_FIELDS[:-1], source)
        for c in ("dataset", "domain"):
            if c in samples:
                out[c] = text_column(samples[c], c, source)
        for c in ("category", "split", "meta"):
            if c in samples:
                out[c] = text_column(samples[c], c, source, required=False)
        if "label" in samples:
            arr = int_values(
                numeric_column(samples["label"], "label", source),
                "label",
                source,
                lo=-(2.0**62),
                hi=2.0**62,
            )
            out["label"] = pd.array(arr, dtype="Int64")
        if "category" in out:
            dom = out.get("domain", out.get("dataset"))
            if dom is not None:
                key = _codes(
                    (out.get("dataset", dom).astype(str) + "\x00" + dom.astype(str)).to_numpy(
                        dtype=object
                    )
                )
                _check_consistent(
                    key,
                    _codes(out["category"].to_numpy(dtype=object)),
                    "domain",
                    "category",
                    source,
                    list(pd.unique(dom)),
                )
    else:
        if isinstance(samples, (str, bytes)):
            raise InputError(f"{source}: sample ids must be a list, not one string.")
        out = pd.DataFrame({"sample_id": _ids(samples, "sample", source)})
    if dataset is not None:
        if "dataset" in out:
            bad = (out["dataset"] != dataset).to_numpy()
            if bad.any():
                i = int(np.argmax(bad))
                raise InputError(
                    f"{source} {_row(i)} names dataset {out['dataset'][i]!r} but dataset {dataset!r} was requested."
                )
        else:
            out["dataset"] = dataset
    return out


def check_extras(
    extras: Mapping[str, np.ndarray] | None, shape: tuple[int, int], source: str
) -> dict[str, np.ndarray]:
    """Per-entry extras of a wide import: same shape as the matrix, values checked."""
    if not extras:
        return {}
    out: dict[str, np.ndarray] = {}
    for f, arr in extras.items():
        if f not in EXTRA_FIELDS:
            raise InputError(
                f"{source}: unknown extra field {f!r}; known fields are {', '.join(EXTRA_FIELDS)}."
            )
        a = np.asarray(arr)
        if a.dtype == object or a.dtype.kind not in "biuf":
            raise InputError(f"{source}: extra field {f!r} has dtype {a.dtype}; expected numbers.")
        if a.shape != shape:
            raise InputError(
                f"{source}: extra field {f!r} has shape {a.shape} but the matrix has shape {shape}."
            )
        if a.dtype.kind == "f":
            nan = np.isnan(a)
            if nan.any():
                r, c = np.unravel_index(int(np.argmax(nan)), a.shape)
                raise InputError(
                    f"{source}: extra field {f!r} has a missing value (NaN) at row {r + 1}, column {c + 1}."
                )
        if f in FLOAT_FIELDS:
            bad = (a < 0) | (a > 1)
            conv = a.astype(np.float64)
        else:
            bad = (
                (a != np.round(a)) | (a < -INT32_MAX) | (a > INT32_MAX)
                if a.dtype.kind == "f"
                else (a < -INT32_MAX) | (a > INT32_MAX)
            )
            conv = a.astype(np.int32)
        if bad.any():
            r, c = np.unravel_index(int(np.argmax(bad)), a.shape)
            what = (
                "outside [0, 1]" if f in FLOAT_FIELDS else "not a whole number in the int32 range"
            )
            raise InputError(
                f"{source}: extra field {f!r} holds {a[r, c].item()!r} at row {r + 1}, column {c + 1}, {what}."
            )
        out[f] = conv
    return out
