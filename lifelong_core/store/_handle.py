"""What every part of a store shares: the DuckDB connection, the file, the block table.

:class:`StoreHandle` is the base of the store's reading, summary and writing methods
(:mod:`.reading`, :mod:`.summaries`, :mod:`.writing`); :class:`~lifelong_core.store.Store`
opens the file and fills these attributes in. Declaring them here, once, is what lets each
part use them knowing their types.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
from numpy.typing import NDArray

from lifelong_core.errors import InputError


class StoreHandle:
    """An open store file: connection, path, mode, lock, block table and sizes.

    Attributes
    ----------
    path : pathlib.Path
        The store file.
    read_only : bool
        Whether the handle was opened read-only.
    n_models, n_samples : int
        Rows of ``models`` and ``samples`` (the shape of the 0/1 matrix A).
    """

    _con: duckdb.DuckDBPyConnection | None
    path: Path
    read_only: bool
    # Serialises this handle's writes (a DuckDB connection runs one transaction at a time).
    _lock: threading.Lock
    # ``block_id``, ``start``, ``length`` of every block, int64, ordered by ``start``.
    _blocks: dict[str, NDArray[np.int64]]
    n_models: int
    n_samples: int

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A fresh DuckDB cursor on the store, for the store's own modules.

        Everything outside :mod:`lifelong_core.store` reads and writes through the
        store's methods.

        Returns
        -------
        duckdb.DuckDBPyConnection
            A cursor of its own: a DuckDB connection must not be shared between
            threads, and the app shares one read-only handle between sessions.

        Raises
        ------
        InputError
            If the store has been closed.
        """
        return self._connection().cursor()

    def _connection(self) -> duckdb.DuckDBPyConnection:
        """The handle's own connection (writes run their transaction on it)."""
        if self._con is None:
            raise InputError(f"Store {self.path} is closed.")
        return self._con

    def _one(
        self,
        sql: str,
        params: Sequence[object] = (),
        con: duckdb.DuckDBPyConnection | None = None,
    ) -> tuple[Any, ...]:
        """The single row of ``sql``: an aggregate, or a lookup by a key already checked.

        Runs on ``con`` when given (inside a write's transaction), else on a fresh cursor.
        A lookup that finds nothing means the store changed under the handle or is damaged,
        which is said in one sentence instead of failing on ``None``.
        """
        row = (con or self.cursor()).execute(sql, list(params)).fetchone()
        if row is None:
            raise InputError(
                f"Store {self.path} has no row where one was expected ({' '.join(sql.split()[:6])} ...); "
                "it may have been changed by another process or be damaged (`check --store` verifies it)."
            )
        return row

    def _refresh(self) -> None:
        """Re-read the block table and the sizes after the file changed."""
        cur = self.cursor()
        blocks = cur.execute(
            "SELECT block_id, start, length FROM blocks ORDER BY start"
        ).fetchnumpy()
        self._blocks = {k: np.asarray(v, dtype=np.int64) for k, v in blocks.items()}
        self.n_models = int(self._one("SELECT count(*) FROM models")[0])
        self.n_samples = int(self._one("SELECT count(*) FROM samples")[0])

    @property
    def block_table(self) -> dict[str, NDArray[np.int64]]:
        """The store's blocks of samples: ``block_id``, ``start``, ``length``.

        Returns
        -------
        dict of str to numpy.ndarray
            int64 arrays, ordered by ``start``.
        """
        return self._blocks
