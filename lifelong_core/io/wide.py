"""Wide matrices: a 0/1 matrix (rows = models, columns = samples) with a model-id file, a
sample-id file and optional per-entry extras.

- the matrix: any file :func:`lifelong_core.io.matrix.load_matrix` reads (.npy, .npz,
  .csv, .parquet; never unpickled);
- an id file: one id per line, or a ``.csv``/``.parquet`` table with a ``model_id``
  (resp. ``sample_id``) column and optional metadata columns (models: name, family,
  release_order, metadata, estimated; samples: dataset, domain, category, label, split);
- extras (``confidence``, ``predicted``, ``true_prob``): ``.npy``/``.npz`` arrays of the
  matrix's shape, read as stored.

Shapes and values are checked by the store with the matrix at hand, before anything is
written (docs/reference/file-formats.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.arrays import check_npy_header
from lifelong_core.io.edges import check_input_file, file_checksum, os_error
from lifelong_core.io.limits import control_character, printable_rule
from lifelong_core.io.matrix import load_matrix
from lifelong_core.io.readers import Source
from lifelong_core.io.tables import read_table
from lifelong_core.io.text import check_archive, read_text

# What the id files and the extras may be (an uploader's accepted types).
ID_TYPES = ("txt", "csv", "parquet")
EXTRA_TYPES = ("npy", "npz")


def read_ids(path: str | os.PathLike[str], kind: str) -> list[str] | pd.DataFrame:
    """Model or sample ids: a list of str (one per line) or a table with ``<kind>_id``."""
    what = f"--{kind}s"
    p = check_input_file(path, what)
    if p.suffix.lower() in (".csv", ".parquet"):
        df = read_table(p, what)
        if f"{kind}_id" not in df.columns:
            raise InputError(
                f"{what} file {p} has no column '{kind}_id' (columns found: {', '.join(map(str, df.columns))})."
            )
        if len(df) == 0:
            raise InputError(f"{what} file {p} has no data rows.")
        return df
    text = read_text(p, f"{what} file {p}")
    ids = []
    # Lines end at "\n" only: str.splitlines would also split at form feeds, record
    # separators and U+2028, turning one id with such a character into two.
    for lineno, line in enumerate(text.split("\n"), start=1):
        s = line.removesuffix("\r").strip()
        if not s:
            continue
        found = control_character(s)
        if found:
            raise InputError(printable_rule(f"{what} file {p} line {lineno}", found))
        ids.append(s)
    if not ids:
        raise InputError(f"{what} file {p} lists no ids.")
    return ids


def read_extra_matrix(path: str | os.PathLike[str], flag: str) -> np.ndarray:
    """A per-entry extras matrix (``--confidence`` etc. of a wide import) from .npy/.npz.

    Read as stored (no narrowing to float32, so values come back exactly); never
    unpickled. Shape and value checks happen in the store with the matrix at hand.
    """
    p = check_input_file(path, flag)
    suffix = p.suffix.lower()
    if suffix not in (".npy", ".npz"):
        raise InputError(f"{flag} file {p} must be .npy or .npz.")
    try:
        if suffix == ".npy":
            check_npy_header(p, flag)
            arr = np.load(p, allow_pickle=False)
        else:
            check_archive(p, f"{flag} file {p}")
            with np.load(p, allow_pickle=False) as z:
                if len(z.files) != 1:
                    raise InputError(
                        f"{flag} file {p} holds {len(z.files)} arrays; it must hold exactly one."
                    )
                arr = z[z.files[0]]
    except InputError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise InputError(
                f"{flag} file {p} holds pickled Python objects, which are never loaded."
            ) from None
        raise InputError(f"{flag} file {p} is not a readable array ({exc}).") from None
    except OSError as exc:
        if getattr(exc, "errno", None) is not None:
            raise os_error(exc, p, f"{flag} file", "read") from None
        raise InputError(f"{flag} file {p} is not a readable array ({exc}).") from None
    except EOFError as exc:
        raise InputError(f"{flag} file {p} is not a readable array ({exc}).") from None
    except MemoryError:
        raise InputError(
            f"{flag} file {p} holds an array too large for this machine's memory."
        ) from None
    return arr


def wide_source(
    matrix: str | Path,
    models: str | Path | None = None,
    samples: str | Path | None = None,
    dataset: str | None = None,
    *,
    confidence: str | Path | None = None,
    predicted: str | Path | None = None,
    true_prob: str | Path | None = None,
) -> Source:
    """A wide 0/1 matrix with its model-id and sample-id files and optional extras
    (``confidence``, ``predicted``, ``true_prob``: .npy/.npz of the same shape).

    Parameters
    ----------
    matrix : str or Path
        The 0/1 matrix, rows = models.
    models, samples : str or Path
        The id files naming its rows and columns (needed).
    dataset : str, optional
        The dataset of new samples.
    confidence, predicted, true_prob : str or Path, optional
        Per-entry extras of the matrix's shape.

    Returns
    -------
    Source
        ``write="matrix"``, with one checksum over every file.

    Raises
    ------
    InputError
        If an id file is missing, or on the first thing wrong with a file.
    """
    if models is None or samples is None:
        raise InputError(
            "a matrix import needs the models and samples files naming its rows and columns.",
            param="models" if models is None else "samples",
        )
    extras = {"confidence": confidence, "predicted": predicted, "true_prob": true_prob}
    given: dict[str, Any] = {f: v for f, v in extras.items() if v is not None}
    ids_m = read_ids(models, "model")
    ids_s = read_ids(samples, "sample")
    A = load_matrix(matrix, what="--matrix")
    ext = {f: read_extra_matrix(v, "--" + f.replace("_", "-")) for f, v in given.items()}
    return Source(
        "matrix",
        str(matrix),
        file_checksum(matrix, models, samples, *given.values()),
        dataset or None,
        matrix=A,
        models=ids_m,
        samples=ids_s,
        extras=ext,
        write="matrix",
    )
