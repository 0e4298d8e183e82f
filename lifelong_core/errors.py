"""The floor of the package: the exceptions every layer raises.

Every check on user input raises :class:`InputError` with a single plain sentence that
says what is wrong and where (file, row, column). The command line prints that sentence
and exits non-zero; the app shows it with ``st.error``. Anything else escaping is a bug.

Core messages name *parameters*, never command-line flags: an :class:`InputError` may
carry ``param`` (the keyword argument at fault, e.g. ``"sort_models"``), and the command
line prints the flag that sets it (``--sort-models``) in front of the sentence, while the
app shows the sentence alone next to the widget.
"""

from collections.abc import Sequence


class InputError(ValueError):
    """Bad user input, described in one sentence naming the problem and its location.

    Parameters
    ----------
    message : str
        The sentence: what is wrong and where (file, row, column).
    param : str, optional
        The parameter (keyword argument) at fault, if one is; the command line puts the
        flag that sets it in front of the sentence.
    """

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class StoreLockedError(InputError):
    """The store file is held by another writer."""


class NotFittedError(RuntimeError):
    """A method was used before ``fit``: a bug in the calling code, not bad input.

    Distinct from :class:`InputError` so that callers never show it to a user as if the
    user's data were at fault (after scikit-learn's ``NotFittedError``).
    """


def few(names: Sequence[object], limit: int = 3) -> str:
    """At most ``limit`` names, then how many more: what a one-sentence message lists.

    Parameters
    ----------
    names : iterable
        The names, shown with ``str``.
    limit : int
        How many to show.

    Returns
    -------
    str
        The names joined by commas, with "and N more" when some are left out.

    Examples
    --------
    >>> few(["a", "b"])
    'a, b'
    >>> few(["a", "b", "c", "d", "e"])
    'a, b, c and 2 more'
    """
    texts = [str(n) for n in names]
    shown = ", ".join(texts[:limit])
    return shown if len(texts) <= limit else f"{shown} and {len(texts) - limit} more"


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a one-sentence message, cut to ``limit`` characters: a
    100,000-character name given by mistake must not become a 100,000-character message.

    Parameters
    ----------
    value : object
        What the caller gave.
    limit : int
        The most characters shown.

    Returns
    -------
    str

    Examples
    --------
    >>> shown("x" * 100, limit=12)
    "'xxxxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
