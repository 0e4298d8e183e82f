"""The reader registry: every kind of user file the product reads, one line each.

A reader is a function in its own module of :mod:`lifelong_core.io`, named here by dotted
path (``"package.module:function"``) and imported on first use, so listing the formats
(the ``import`` command's flags, the Data page's choices) costs nothing. Each entry says
what a person picks (``label``), which file names it reads (``patterns``, from which an
uploader's accepted types follow) and the function.

Readers of importable kinds (``importable=True``) take the file and keyword options and
return a :class:`Source`: the input read and validated, nothing written yet; the store
writes it by its ``write`` form (a long table, a wide matrix, lm-eval runs). A reader that
feeds the statistics instead of a store (``counts``) returns its table.

To add a format: a module in ``lifelong_core/io/`` whose function returns a
:class:`Source` (``write="long"`` with a long table is the simplest), and one
:func:`register_reader` line below, declaring the keyword options the function takes
(:class:`Option`). ``lbe import`` then has a flag for it (``--<name> PATH``) and one per
option, the Data page offers it with a field per option, and
:func:`lifelong_core.workflows.imports.source` (the API's ``import_file``) reads it.
Another installed package registers readers through the entry-point group
``lifelong_benchmark_explorer.readers`` (:mod:`lifelong_core.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lifelong_core.errors import InputError
from lifelong_core.registry import READERS_GROUP, Registry, check_target, load

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

# How the store writes a source: ``insert_long`` (a long table, with optional model
# rows), ``insert_matrix`` (a wide matrix with its ids and extras) or
# ``insert_lm_eval_run`` (lm-eval runs, with their items' doc hashes).
WRITES = ("long", "matrix", "lm-eval")


@dataclass(frozen=True)
class Source:
    """A validated input, ready for :func:`lifelong_core.workflows.imports.insert`.

    A reader fills the fields of its ``write`` form and leaves the others at their
    defaults; nothing is written to a store until ``insert`` is called.

    Attributes
    ----------
    kind : str
        The name of the reader that made it (``"long"``, ``"matrix"``, ``"lm-eval"``,
        ``"inspect"``).
    source : str
        What the store's import log names as the origin (usually the path given).
    checksum : str, optional
        ``"sha256:<hex>"`` over the bytes of the file(s) read
        (:func:`lifelong_core.io.edges.file_checksum`), recorded in the log.
    dataset : str, optional
        The dataset the user named for samples that name none; None lets the store (or
        the lm-eval rules) decide.
    table : pandas.DataFrame, optional
        ``write="long"``: the long table, one row per (model, sample), as text cells or
        as read; the store validates its values.
    matrix : numpy.ndarray of uint8, shape (models, samples), optional
        ``write="matrix"``: the 0/1 matrix.
    models : list of str or pandas.DataFrame, optional
        ``write="matrix"``: the model ids, one per matrix row (a list, or a table with
        ``model_id`` and metadata). ``write="long"``: optional model rows (``model_id,
        name, family, metadata``) written with the table.
    samples : list of str or pandas.DataFrame, optional
        ``write="matrix"``: the sample ids, one per matrix column (a list, or a table with
        ``sample_id`` and metadata).
    extras : mapping of str to numpy.ndarray
        ``write="matrix"``: per-entry matrices of the matrix's shape by name
        (``confidence``, ``predicted``, ``true_prob``); empty when none.
    path : Path, optional
        ``write="lm-eval"``: the path the user gave (a run, a folder of runs or a zip).
    model : str, optional
        ``write="lm-eval"``: the model name the user gave for a single run, else None.
    metric : str, optional
        ``write="lm-eval"``: the metric asked for, else None (each task's default).
    filter : str, optional
        ``write="lm-eval"``: the lm-eval filter asked for, else None.
    run : object, optional
        The read run: for ``"lm-eval"`` the runs put together
        (:class:`~lifelong_core.io.lm_eval.LmEvalRun`); for ``"inspect"`` the read log
        (``InspectRun``, its task and scorer shown after an import).
    runs : int
        ``write="lm-eval"``: how many run folders were found, read or skipped.
    skipped : tuple of SkippedRun
        ``write="lm-eval"``: each run left out, with its reason
        (:class:`~lifelong_core.io.lm_eval.SkippedRun`).
    write : {"long", "matrix", "lm-eval"}
        How the store writes it (:data:`WRITES`): ``insert_long``, ``insert_matrix`` or
        ``insert_lm_eval_run``.
    """

    kind: str
    source: str
    checksum: str | None = None
    dataset: str | None = None
    table: pd.DataFrame | None = None  # long
    matrix: np.ndarray | None = None  # matrix
    models: Any = None
    samples: Any = None
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)
    path: Path | None = None  # lm-eval
    model: str | None = None
    metric: str | Mapping[str, str | None] | None = None
    filter: str | Mapping[str, str | None] | None = None
    run: Any = None  # inspect: the read log (InspectRun); lm-eval: the runs read (LmEvalRun)
    runs: int = 0  # lm-eval: run folders found
    skipped: tuple = ()  # lm-eval: SkippedRun of each run left out
    write: str = "long"


OPTION_KINDS = ("text", "path", "int", "flag")


@dataclass(frozen=True)
class Option:
    """A keyword option a reader's function takes: the ``import`` command's flag, a field
    of the Data page's form and a keyword of the generic import.

    Attributes
    ----------
    name : str
        The keyword (``true_prob``); the flag is ``--true-prob``.
    help : str
        What it is, for the flag's help and the field's tooltip.
    kind : {"text", "path", "int", "flag"}
        Text, a file (an upload on the page), a whole number, or on/off.
    required : bool
        The format cannot be read without it.
    label : str
        What the page's field shows (default: the name).
    metavar : str
        The flag's placeholder.
    types : tuple of str
        For a file: the endings an uploader accepts.
    """

    name: str
    help: str
    kind: str = "text"
    required: bool = False
    label: str = ""
    metavar: str = ""
    types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in OPTION_KINDS:
            raise InputError(
                f"unknown option kind {self.kind!r}; use one of {', '.join(OPTION_KINDS)}."
            )
        if not self.name.isidentifier():
            raise InputError(f"an option's name must be a Python keyword name, not {self.name!r}.")

    @property
    def flag(self) -> str:
        """The command line's flag: ``--`` and the name with dashes."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Reader:
    """A registered reader: its name, what a person picks, the file names it reads, its
    options and where its function lives.

    Attributes
    ----------
    name : str
        The format's name; the ``import`` flag is ``--<name>``.
    target : str
        ``"package.module:function"``.
    label : str
        What a picker shows.
    patterns : tuple of str
        File-name patterns it reads.
    importable : bool
        Whether it returns a :class:`Source` for a store.
    help : str
        The ``import`` flag's help.
    metavar : str
        The ``import`` flag's placeholder.
    options : tuple of Option
        The keyword options its function takes besides the file and ``dataset``.
    about : str
        What the Data page says above its uploader.
    many : bool
        The page accepts several files at once, each read as one source.
    progress : bool
        Its function takes ``progress(fraction, text)``.
    """

    name: str
    target: str
    label: str
    patterns: tuple[str, ...]
    importable: bool = True
    help: str = ""
    metavar: str = "PATH"
    options: tuple[Option, ...] = ()
    about: str = ""
    many: bool = False
    progress: bool = False

    def load(self) -> Callable[..., Any]:
        """The reader's function (its module is imported on first use).

        Returns
        -------
        callable
        """
        fn = load(self.target)
        if not callable(fn):
            raise TypeError(f"the reader {self.name!r} ({self.target}) is not a function.")
        return fn

    def option(self, name: str) -> Option | None:
        """The option called ``name``, or None.

        Parameters
        ----------
        name : str

        Returns
        -------
        Option or None
        """
        return next((o for o in self.options if o.name == name), None)

    @property
    def types(self) -> list[str]:
        """File endings an uploader accepts, from the patterns, in order, once each:
        ``samples_*.jsonl.gz`` accepts ``gz``."""
        out: list[str] = []
        for pattern in self.patterns:
            ending = pattern.rsplit(".", 1)[-1].lower()
            if ending not in out:
                out.append(ending)
        return out

    @property
    def dest(self) -> str:
        """The command line's name for the reader's path (``lm-eval`` -> ``lm_eval``)."""
        return self.name.replace("-", "_")


_READERS: Registry[Reader] = Registry("file format", READERS_GROUP, "kind")


def register_reader(
    name: str,
    target: str,
    *,
    label: str,
    patterns: tuple[str, ...],
    importable: bool = True,
    help: str = "",
    metavar: str = "PATH",
    options: tuple[Option, ...] = (),
    about: str = "",
    many: bool = False,
    progress: bool = False,
    replace: bool = False,
) -> None:
    """Register the reader ``target`` (``"module:function"``) under ``name``.

    Parameters
    ----------
    name : str
        The format's name: the ``import`` command's flag is ``--<name>``.
    target : str
        ``"package.module:function"``, imported on first use.
    label : str
        What a picker shows.
    patterns : tuple of str
        File-name patterns it reads (``"*.csv"``, ``"results_*.json"``).
    importable : bool
        Whether it returns a :class:`Source` to write into a store.
    help : str
        The ``import`` flag's help.
    metavar : str
        The ``import`` flag's placeholder.
    options : tuple of Option
        The keyword options the function takes besides its file and ``dataset``.
    about : str
        What the Data page says above the uploader.
    many : bool
        The Data page takes several files, one source each.
    progress : bool
        The function takes ``progress(fraction, text)``.
    replace : bool
        Replace a reader already registered as ``name`` (refused otherwise).

    Raises
    ------
    InputError
        If ``name`` is empty, holds characters other than letters, digits and dashes, or
        is taken (without ``replace``), or ``target`` cannot name a function.
    """
    if not name or not name.replace("-", "").isalnum():
        raise InputError(f"a reader needs a name of letters, digits and dashes, not {name!r}.")
    check_target(target, "reader target")
    entry = Reader(
        name,
        target,
        label,
        tuple(patterns),
        importable,
        help,
        metavar,
        tuple(options),
        about,
        many,
        progress,
    )
    _READERS.add(name, entry, replace=replace)


def unregister_reader(name: str) -> None:
    """Remove ``name`` from the registry (no error if it is not there).

    Parameters
    ----------
    name : str
        A registered format.
    """
    _READERS.remove(name)


def readers(importable: bool | None = None) -> list[Reader]:
    """The registered readers, in registration order.

    Parameters
    ----------
    importable : bool, optional
        True: only the readers that return a :class:`Source` for a store (the ``import``
        command's flags, the Data page's choices); False: only the others (``counts``);
        None: all.

    Returns
    -------
    list of Reader
    """
    return [r for _, r in _READERS.items() if importable is None or r.importable == importable]


def reader(name: str) -> Reader:
    """The reader registered as ``name``.

    Parameters
    ----------
    name : str
        A registered name (``"long"``, ``"matrix"``, ``"lm-eval"``, ``"inspect"``,
        ``"counts"``).

    Returns
    -------
    Reader

    Raises
    ------
    InputError
        If no reader is registered as ``name``; the sentence names the registered ones
        (``param="kind"``).
    """
    if name not in _READERS:
        raise InputError(
            f"unknown file format {name!r}; use one of {', '.join(_READERS)}.", param="kind"
        )
    return _READERS.get(name)


def read(name: str, *args: Any, **options: Any) -> Any:
    """Read with the reader registered as ``name``: its function called with ``args`` and
    ``options``.

    Parameters
    ----------
    name : str
        A registered reader's name.
    *args
        Positional arguments of the reader's function (for every built-in reader, the
        path first).
    **options
        Its keyword options (``dataset``, ``model``, ``metric``, ...).

    Returns
    -------
    Source or pandas.DataFrame
        What the reader returns: a :class:`Source` for an importable reader, the table
        for ``counts``.

    Raises
    ------
    InputError
        If ``name`` is not registered, or whatever the reader refuses in its input.
    """
    return reader(name).load()(*args, **options)


_ID_TYPES = ("txt", "csv", "parquet")
_EXTRA_TYPES = ("npy", "npz")


def _extra(name: str, what: str) -> Option:
    return Option(
        name,
        f"{what} per entry, .npy/.npz of the matrix's shape",
        kind="path",
        metavar="F",
        types=_EXTRA_TYPES,
    )


# One line per format: its function, what a person picks, the files it reads and the
# keyword options it takes (the import command's flags and the Data page's fields).
register_reader(
    "long",
    "lifelong_core.io.long:long_source",
    label="Long table (.csv / .parquet)",
    patterns=("*.csv", "*.parquet"),
    metavar="F",
    help="long table .csv/.parquet: model, sample, correct[, confidence, "
    "predicted, true_prob, label, dataset, domain, category, split]",
    about="Columns: **model, sample, correct** (0/1, true/false or yes/no, in any case) and "
    "optionally **dataset, domain, category** (what the Rankings and "
    "Task weighting pages group by), **confidence, true_prob** (the confidence Sort and the "
    "Evaluate page's confidence views), **predicted, label** (Matched accuracy), **split**.",
)
register_reader(
    "matrix",
    "lifelong_core.io.wide:wide_source",
    label="Wide 0/1 matrix + model and sample ids",
    patterns=("*.npy", "*.npz", "*.csv", "*.parquet"),
    metavar="F",
    help="0/1 matrix .npy/.npz/.csv/.parquet (rows = models); needs --models and --samples",
    about="Rows = models, columns = samples. Id files: one id per line, or a .csv/.parquet "
    "table with model_id (resp. sample_id) and optional metadata columns (samples: dataset, "
    "domain, category, label).",
    options=(
        Option(
            "models",
            "model ids: one per line, or .csv/.parquet with model_id",
            kind="path",
            required=True,
            label="Model ids",
            metavar="F",
            types=_ID_TYPES,
        ),
        Option(
            "samples",
            "sample ids: one per line, or .csv/.parquet with sample_id",
            kind="path",
            required=True,
            label="Sample ids",
            metavar="F",
            types=_ID_TYPES,
        ),
        _extra("confidence", "max-softmax confidence"),
        _extra("predicted", "predicted label"),
        _extra("true_prob", "probability of the true class"),
    ),
)
register_reader(
    "lm-eval",
    "lifelong_core.io.lm_eval:lm_eval_source",
    label="lm-evaluation-harness runs (--log_samples)",
    patterns=("*.zip", "results_*.json", "samples_*.jsonl", "samples_*.jsonl.gz"),
    help="lm-evaluation-harness --log_samples output: one model's run (folder, results_*.json or one "
    "samples_*.jsonl), a folder of run folders (one per model, as lm_eval --output_path writes them) or a "
    ".zip of either; each run is named by its results file; all runs go in in one transaction",
    about="Upload a **zip** of one or more run folders (lm-eval writes one folder per model under "
    "--output_path), or one run's **results_<timestamp>.json** with its "
    "**samples_<task>_<timestamp>.jsonl** files. Tasks become domains; a task's group (from "
    "group_subtasks) becomes its category, tasks outside any group have none.",
    many=True,
    progress=True,
    options=(
        Option(
            "model",
            "model id for one run (default: the name its results file gives)",
            label="Model name (one run)",
            metavar="NAME",
        ),
        Option(
            "metric",
            "the 0/1 metric when a task records several; a preference list such as "
            "acc_norm,acc picks per task",
            label="Metric",
        ),
        Option("filter", "the filter to keep when a task was logged under several", label="Filter"),
        Option(
            "strict",
            "with several runs: a run that cannot be read rejects the whole import and the "
            "store is left unchanged (default: it is skipped, named with its reason, and the "
            "other runs are imported)",
            kind="flag",
            label="Strict",
        ),
    ),
)
register_reader(
    "inspect",
    "lifelong_core.io.inspect_log:inspect_source",
    label="Inspect AI logs (.eval / .json)",
    patterns=("*.eval", "*.json"),
    metavar="LOG",
    help="an Inspect AI evaluation log (.eval or .json); scores C/I or 0/1 become correct",
    about="One or more logs written by `inspect eval` (one task run by one model each). Each "
    "sample's score must be C/I or 0/1; the task becomes the domain, the log's model the model "
    "(unless named below).",
    many=True,
    options=(
        Option(
            "model",
            "model id (default: the log's model)",
            label="Model name (default: the log's model)",
            metavar="NAME",
        ),
        Option("scorer", "the scorer to use when the log records several", label="Scorer"),
        Option("epoch", "the epoch to use when the log holds several", kind="int", label="Epoch"),
    ),
)
register_reader(
    "counts",
    "lifelong_core.io.counts:read_counts",
    label="counts.csv (model, task, category, correct, total)",
    patterns=("*.csv",),
    importable=False,
)
