"""Size limits on text that enters a store, so one hostile cell cannot grow every reader.

Why: ``info`` pads each column to its widest cell and the app renders names in tables, so
a single 20 MiB model id once made ``info`` need 23 GB. The limits are far above any real
id or name (Hugging Face repository ids are at most 96 characters) and checked before
anything is written.
"""

from __future__ import annotations

# Ids, names, dataset/domain/category/split labels: characters after stripping.
MAX_TEXT_CHARS = 512
# Model metadata (canonical JSON).
MAX_METADATA_CHARS = 65_536
# Any CSV cell a reader accepts (the metadata column is the largest legitimate one).
MAX_CELL_CHARS = MAX_METADATA_CHARS


def check_name(text: str | None, what: str) -> None:
    """Refuse a single name (``--dataset``, ``--model``, a text box) over the limit."""
    from lifelong_core.errors import InputError

    if text is not None and len(text) > MAX_TEXT_CHARS:
        raise InputError(
            f"The {what} is {len(text):,} characters long; names may hold at most {MAX_TEXT_CHARS}."
        )
