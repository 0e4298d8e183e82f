"""Checks on ``.npy`` files before NumPy allocates what their header claims."""

from __future__ import annotations

import os

import numpy as np

from lifelong_core.errors import InputError


def check_npy_header(path: str | os.PathLike[str], what: str) -> None:
    """Refuse a ``.npy`` file whose header promises more data than the file holds.

    ``np.load`` allocates the array the header describes before reading; a 100-byte file
    claiming 10^13 elements would ask for terabytes. Pickled (object) arrays are left to
    ``np.load(allow_pickle=False)``, which refuses them.
    """
    from lifelong_core.io.edges import open_input

    try:
        with open_input(path, f"{what} file") as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                return  # newer formats: np.load decides
            data_start = f.tell()
    except (ValueError, EOFError) as exc:
        raise InputError(
            f"{what} file {os.fspath(path)} is not a readable .npy array ({exc})."
        ) from None
    except OSError:
        return  # the caller's read reports OS errors with their cause
    if dtype.hasobject:
        return
    n = 1
    for d in shape:
        n *= int(d)
    need = n * dtype.itemsize
    have = os.path.getsize(path) - data_start
    if need > have:
        raise InputError(
            f"{what} file {os.fspath(path)} is not a readable .npy array: its header claims shape {tuple(shape)} "
            f"({need:,} bytes of data) but the file holds only {have:,} bytes (truncated or corrupt)."
        )
