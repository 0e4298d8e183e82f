"""The one exception type users see.

Every check on user input raises :class:`InputError` with a single plain sentence that
says what is wrong and where (file, row, column). The command line prints that sentence
and exits non-zero; the app shows it with ``st.error``. Anything else escaping is a bug.
"""


class InputError(ValueError):
    """Bad user input, described in one sentence naming the problem and its location."""


class StoreLockedError(InputError):
    """The store file is held by another writer."""
