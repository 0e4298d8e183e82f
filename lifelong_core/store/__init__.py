"""The lifelong store: a DuckDB file of cached per-sample predictions (Prabhu et al., 2024, §2).

The cache is the 0/1 matrix A (rows = models, columns = samples) that grows on both axes:
insert_M adds rows (models), insert_D adds columns (samples). This package is the only
code that imports DuckDB.

Layout (format version 2)
-------------------------
``datasets``  dataset, description, synthetic, source, added_at
``domains``   dataset, domain, category, added_at            (a domain = a task)
``models``    model_idx (dense 0-based insertion index = row of A), model_id (unique),
              name, family, metadata (canonical JSON text), release_order, estimated
              (True for rows inserted from Sort & Search estimates), added_at
``samples``   sample_idx (dense 0-based insertion index = column of A), sample_id
              (unique across the store), dataset, domain, label, split, meta, added_at
``blocks``    block_id, start, length: a run of consecutive sample_idx, at most
              BLOCK_SIZE = 65,536 samples. Every import that adds samples opens new
              blocks for them; an existing block never changes size.
``bits``      model_idx, block_id, correct BLOB, known BLOB: one row per model per block,
              ``correct`` packed with ``np.packbits(bitorder="little")``; ``known`` is NULL
              when every entry of the row is recorded, else a packed mask of which are.
              Unrecorded entries have correct bit 0.
``extras``    model_idx, block_id, confidence DOUBLE[], predicted INTEGER[], true_prob
              DOUBLE[]: one row per model per block that has any extra, one list per
              field of the block's length (NULL list: field absent from the row; NULL
              element: entry without it). Doubles, so imported values come back exactly.
``log``       one row per import: when, action, source, new models, new samples,
              entries written, checksum of the input.
``predictions`` (view) the long format model, sample, correct, confidence, predicted,
              true_prob, label, dataset, domain, category, split for ad-hoc SQL.

Growth without rewriting: new models add rows to ``bits``; new samples add blocks. A row
is replaced only when an import fills in entries of that very (model, block) that were
unrecorded before. Paper scale (31,250 models x 1.7M samples): 27 blocks x 31,250 rows of
8 KiB = 6.6 GB of bits. ``extras`` costs up to 20 bytes per entry before DuckDB's
compression, so it is meant for demo scale (hundreds of models x tens of thousands of
samples); at paper scale it would need ~1 TB and is not supported.

Lock story
----------
One writer rule (:mod:`.locking`): a process that writes a store holds the file's lock
exclusively from before its first read of it until its commit or its rename, and every
reader holds it shared while its handle is open (the app from start-up on), so a writer
is refused, naming the holder, while anything else has the file open. The lock is a
``flock`` of its own, which no other open or close in the process can drop; DuckDB's own
lock (any number of read-only handles, or one writer) stays in force beside it.
:meth:`Store.open` turns a conflict into :class:`~lifelong_core.errors.StoreLockedError`
with one sentence; a build replaces a store only through :func:`held_alone` and
:func:`replace_held`, which looks again at the moment of the rename. Every import
validates everything first (ids, values, shapes, metadata against what the store holds,
conflicts with recorded entries), then writes in one DuckDB transaction, so a failure or
a killed process leaves the store as it was.
"""

from lifelong_core.io.edges import file_checksum
from lifelong_core.store._schema import BLOCK_SIZE, FORMAT_VERSION
from lifelong_core.store._validate import binary_values, numeric_column, text_column
from lifelong_core.store.locking import Hold, hold
from lifelong_core.store.packed_bulk import StoreRows, insert_packed_rows, read_packed_rows
from lifelong_core.store.store import Store, check_readable, held_alone, replace_held
from lifelong_core.store.writing import BlockWrite, WritePlan

__all__ = [
    "BLOCK_SIZE",
    "FORMAT_VERSION",
    "BlockWrite",
    "Hold",
    "Store",
    "StoreRows",
    "WritePlan",
    "binary_values",
    "check_readable",
    "file_checksum",
    "held_alone",
    "hold",
    "insert_packed_rows",
    "numeric_column",
    "read_packed_rows",
    "replace_held",
    "text_column",
]
