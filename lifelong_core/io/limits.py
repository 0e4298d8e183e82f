"""Size limits on what a user hands in, so one hostile file or cell cannot grow every reader.

Why: ``info`` pads each column to its widest cell and the app renders names in tables, so
a single 20 MiB model id once made ``info`` need 23 GB; a 1 MiB gzip holding one 1 GiB
line cost 3.1 GB and 23 s before an unrelated refusal, and an 800 MB one-line CSV needed
2.6-3.5 GB before it was refused. The text limits are far above any real id or name
(Hugging Face repository ids are at most 96 characters) and checked before anything is
written; the size limits are checked while a file is read (:mod:`lifelong_core.io.text`),
so memory never grows past them:

- a line of any text input (CSV, JSON Lines, id and index lists): 16 MiB
  (``LBE_MAX_LINE_MB``; a matrix CSV row of 8 million samples fits);
- what a compressed input unpacks to (``.jsonl.gz``, a zip upload, an ``.npz`` or
  Inspect ``.eval`` archive): 4 GiB (``LBE_MAX_UNPACKED_MB``);
- one JSON document read whole (an lm-eval ``results_*.json``, an Inspect ``.json`` log):
  256 MiB (``LBE_MAX_JSON_MB``);
- the files one archive unpacks to (a zip upload of many runs): 100,000
  (``LBE_MAX_ARCHIVE_FILES``), so an archive of millions of empty members cannot fill a
  folder either;
- arrays and objects nested inside each other in any JSON a user hands in (a results file,
  a samples line, a metadata cell): :data:`MAX_JSON_DEPTH` levels. Python's parser fails
  with a ``RecursionError`` a few hundred levels deeper; lm-eval writes five or six.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

# Ids, names, dataset/domain/category/split labels: characters after stripping.
MAX_TEXT_CHARS = 512
# Model metadata (canonical JSON).
MAX_METADATA_CHARS = 65_536
# Any CSV cell a reader accepts (the metadata column is the largest legitimate one).
MAX_CELL_CHARS = MAX_METADATA_CHARS


# Characters no id, name or label may hold: C0 and C1 controls and DEL (a newline or NUL
# in a model id gave an exported models.txt more lines than the matrix has rows and broke
# `info`'s table), the Unicode line and paragraph separators, and the invisible
# bidirectional overrides and isolates that make text display other than it reads.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_NAMES = {
    "\n": "a line break",
    "\r": "a carriage return",
    "\t": "a tab",
    "\x00": "a NUL character",
}


def control_character(text: str) -> tuple[str, int] | None:
    """How a message names the first control character in ``text``, and its position.

    Control characters are those of :data:`CONTROL`: C0 and C1 controls, DEL, the
    Unicode line and paragraph separators and the bidirectional overrides and isolates.

    Parameters
    ----------
    text : str
        An id, name or label.

    Returns
    -------
    tuple of (str, int) or None
        The character as a message names it (``"a line break (U+000A)"``, ``"the control
        character U+202E"``) and its position counted from 1; None if ``text`` has none.
    """
    m = CONTROL.search(text)
    if m is None:
        return None
    ch = m.group()
    code = f"U+{ord(ch):04X}"
    name = _CONTROL_NAMES.get(ch)
    return (f"{name} ({code})" if name else f"the control character {code}"), m.start() + 1


def printable_rule(where: str, found: tuple[str, int]) -> str:
    """The one sentence for text holding a control character.

    Parameters
    ----------
    where : str
        Where the text was found, starting the sentence (``"models.txt line 3"``,
        ``"The model id"``).
    found : tuple of (str, int)
        What :func:`control_character` returned for the text.

    Returns
    -------
    str
        ``"<where> holds <character> at character <position>; ids, names and labels must
        be printable text on one line."``
    """
    what, position = found
    return (
        f"{where} holds {what} at character {position}; ids, names and labels must be "
        "printable text on one line."
    )


def check_name(text: str | None, what: str) -> None:
    """Refuse a single name (``--dataset``, ``--model``, a text box) over the limit or
    holding a control character.

    Parameters
    ----------
    text : str or None
        The name as given; None (not given) passes.
    what : str
        What the name is to the user (``"dataset name"``), for the message.

    Raises
    ------
    InputError
        If ``text`` is longer than :data:`MAX_TEXT_CHARS` characters or holds a control
        character (:func:`control_character`).
    """
    from lifelong_core.errors import InputError

    if text is not None and len(text) > MAX_TEXT_CHARS:
        raise InputError(
            f"The {what} is {len(text):,} characters long; names may hold at most {MAX_TEXT_CHARS}."
        )
    found = control_character(text) if text is not None else None
    if found:
        raise InputError(printable_rule(f"The {what}", found))


# Arrays and objects inside each other in one JSON value (module docstring).
MAX_JSON_DEPTH = 64


def json_depth_rule(what: str) -> str:
    """The one sentence for JSON nested too deeply.

    Parameters
    ----------
    what : str
        The JSON's place, starting the sentence (``"results_x.json"``, ``"runs.csv row 3
        column 'metadata'"``).

    Returns
    -------
    str
    """
    return f"{what} nests arrays or objects more than {MAX_JSON_DEPTH} levels deep."


def json_too_deep(value: object, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a parsed JSON value nests arrays and objects more than ``limit`` levels.

    Walked without recursion, so it cannot fail on what it is asked to bound.

    Parameters
    ----------
    value : object
        A value as ``json.loads`` returns it (dicts, lists, scalars).
    limit : int
        The levels allowed.

    Returns
    -------
    bool
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend(
            (child, depth + 1) for child in children if isinstance(child, (dict, list, tuple))
        )
    return False


# ------------------------------------------------------------------ sizes of input files
MIB = 1 << 20
# kind -> (environment variable, default in MiB, what the limit is on)
SIZE_LIMITS = {
    "line": ("LBE_MAX_LINE_MB", 16, "one line of a text file"),
    "unpacked": ("LBE_MAX_UNPACKED_MB", 4096, "what a compressed file unpacks to"),
    "json": ("LBE_MAX_JSON_MB", 256, "one JSON document"),
}


def size_limit(kind: str) -> int:
    """The ``kind`` limit in bytes: its environment variable (MiB) if set, else the default.

    Read at each use, so a server started with the variable and a test that sets it both
    see it.

    Parameters
    ----------
    kind : {"line", "unpacked", "json"}
        Which limit (a key of :data:`SIZE_LIMITS`).

    Returns
    -------
    int
        The limit in bytes, at least 1.

    Raises
    ------
    InputError
        If the environment variable is set to something other than a positive, finite
        number of megabytes.
    """
    from lifelong_core.errors import InputError

    env, default, _ = SIZE_LIMITS[kind]
    raw = os.environ.get(env, "").strip()
    try:
        mib = float(raw) if raw else float(default)
    except ValueError:
        raise InputError(f"{env}={raw!r} is not a number of megabytes.") from None
    if not 0 < mib < float("inf"):
        raise InputError(f"{env} must be a positive number of megabytes, got {raw!r}.")
    return max(1, int(mib * MIB))


# kind -> (environment variable, default, what is counted)
COUNT_LIMITS = {"files": ("LBE_MAX_ARCHIVE_FILES", 100_000, "the files in one archive")}


def count_limit(kind: str) -> int:
    """The ``kind`` count limit: its environment variable if set, else the default.

    Parameters
    ----------
    kind : {"files"}
        Which limit (a key of :data:`COUNT_LIMITS`).

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    InputError
        If the environment variable is not a positive whole number.
    """
    from lifelong_core.errors import InputError

    env, default, _ = COUNT_LIMITS[kind]
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(f"{env}={raw!r} is not a positive whole number.")
    return int(raw)


def count_rule(kind: str) -> str:
    """How a message names the ``kind`` count limit: ``the limit of 100,000 on the files in
    one archive (LBE_MAX_ARCHIVE_FILES)``.

    Parameters
    ----------
    kind : {"files"}
        Which limit.

    Returns
    -------
    str
    """
    env, _, what = COUNT_LIMITS[kind]
    return f"the limit of {count_limit(kind):,} on {what} ({env})"


def size_rule(kind: str) -> str:
    """How a message names the ``kind`` limit: ``the limit of 16 MiB on one line of a text
    file (LBE_MAX_LINE_MB)``.

    Parameters
    ----------
    kind : {"line", "unpacked", "json"}
        Which limit (a key of :data:`SIZE_LIMITS`).

    Returns
    -------
    str
        The phrase, with the limit in force (:func:`size_limit`) in MiB.

    Raises
    ------
    InputError
        If the limit's environment variable is not a positive number (:func:`size_limit`).
    """
    env, _, what = SIZE_LIMITS[kind]
    n = size_limit(kind)
    shown = f"{n / MIB:,.0f} MiB" if n % MIB == 0 else f"{n / MIB:,.3g} MiB"
    return f"the limit of {shown} on {what} ({env})"
