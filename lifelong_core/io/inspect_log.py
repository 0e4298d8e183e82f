"""Reading Inspect AI evaluation logs (``import --inspect LOG``).

An Inspect log (``.eval`` or ``.json``, written by ``inspect eval``) holds one task run by
one model: per sample its ``id``, ``epoch`` and ``scores`` (scorer name -> ``Score``). It
is read through Inspect's own ``inspect_ai.log.read_eval_log``, so every log format
Inspect writes is understood. The store keeps:

- sample id ``<task>/<sample id>``, domain = the task's name, dataset = ``dataset``
  argument (default ``inspect``); model id = the log's model (``openai/gpt-4o``, ...)
  unless a name is given;
- correct = the chosen scorer's value, which must be ``C``/``I`` (Inspect's CORRECT /
  INCORRECT) or 0/1 (``True``/``False`` included) on every sample. Any other value
  (``P`` for partial credit, 0.5, a dict of several values) is refused with one sentence
  naming the scorer, never thresholded. A log with several scorers needs one named; a log
  with several epochs needs one chosen (the store holds one result per sample).

Only logs of finished runs (status ``success``) are read: an errored or cancelled run
has samples without scores, and importing the rest would look like a complete run.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from lifelong_core.errors import InputError
from lifelong_core.io.edges import check_regular_file, file_checksum
from lifelong_core.io.readers import Source
from lifelong_core.io.text import check_archive, check_json_size

_LETTERS = {"C": 1, "I": 0}


@dataclass(frozen=True)
class InspectRun:
    """One Inspect log, ready for ``Store.insert_long``."""

    table: pd.DataFrame  # model, sample, correct, dataset, domain
    models: pd.DataFrame  # model_id, name, family, metadata
    source: str
    checksum: str
    scorer: str
    task: str


def _correct(value: object) -> int | None:
    if isinstance(value, str):
        return _LETTERS.get(value)
    if isinstance(value, bool):
        return int(value)
    if (
        isinstance(value, (int, float))
        and not (isinstance(value, float) and math.isnan(value))
        and value in (0, 1)
    ):
        return int(value)
    return None


def read_inspect_log(
    path: str | os.PathLike[str],
    model_name: str | None = None,
    scorer: str | None = None,
    epoch: int | None = None,
    dataset: str | None = None,
) -> InspectRun:
    """Read one Inspect log file into the long import format (see the module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        A ``.eval`` or ``.json`` log.
    model_name : str, optional
        The model's name (default: the one the log records).
    scorer : str, optional
        The scorer to read, when the log has several.
    epoch : int, optional
        The epoch to read, when the log has several.
    dataset : str, optional
        The dataset the samples join (default: the log's task).

    Returns
    -------
    InspectRun

    Raises
    ------
    InputError
        If ``inspect_ai`` is not installed, the file is missing or unreadable, or a score is
        not 0/1.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(
            "reading Inspect logs needs the inspect_ai package (pip install 'lifelong-benchmark-explorer[harness]')."
        ) from None
    path = Path(path)
    if path.is_dir():
        raise InputError(
            f"Inspect log {path} is a folder; give one log file (.eval or .json) written by `inspect eval`."
        )
    check_regular_file(path, "Inspect log")  # never a pipe or a device
    # Inspect reads a log whole: its size is checked first (io.text's limits).
    if zipfile.is_zipfile(path):
        check_archive(path, f"Inspect log {path}")
    else:
        check_json_size(path, f"Inspect log {path}")
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # Inspect raises many types for a file it cannot read
        raise InputError(
            f"{path} is not an Inspect evaluation log ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'unreadable'})."
        ) from None
    if log.status != "success":
        raise InputError(
            f"Inspect log {path} records a run with status {log.status!r}; only finished runs (status 'success') are imported."
        )
    samples = log.samples or []
    if not samples:
        raise InputError(
            f"Inspect log {path} holds no samples (was it written with --no-log-samples?)."
        )
    task = str(log.eval.task)
    epochs = sorted({int(s.epoch) for s in samples})
    if epoch is None:
        if len(epochs) > 1:
            raise InputError(
                f"Inspect log {path} holds {len(epochs)} epochs per sample; choose one (1-{epochs[-1]}).",
                param="epoch",
            )
        epoch = epochs[0]
    elif epoch not in epochs:
        raise InputError(
            f"Inspect log {path} has no epoch {epoch}; it has {', '.join(map(str, epochs))}.",
            param="epoch",
        )
    samples = [s for s in samples if int(s.epoch) == epoch]
    names = sorted({k for s in samples for k in (s.scores or {})})
    if not names:
        raise InputError(
            f"Inspect log {path} holds no scores (task {task!r} was run without a scorer)."
        )
    if scorer is None:
        if len(names) > 1:
            raise InputError(
                f"Inspect log {path} records scorers {', '.join(names)}; choose one.",
                param="scorer",
            )
        scorer = names[0]
    elif scorer not in names:
        raise InputError(
            f"Inspect log {path} has no scorer {scorer!r}; it has {', '.join(names)}.",
            param="scorer",
        )
    model = model_name or str(log.eval.model)
    if not model.strip():
        raise InputError(
            f"Inspect log {path} names no model; give the model a name.", param="model_name"
        )
    ids, vals = [], []
    for s in samples:
        score = (s.scores or {}).get(scorer)
        if score is None:
            raise InputError(
                f"Sample {s.id!r} of task {task!r} in {path.name} has no score from scorer {scorer!r}."
            )
        v = _correct(score.value)
        if v is None:
            raise InputError(
                f"Scorer {scorer!r} gave {score.value!r} for sample {s.id!r} of task {task!r} ({path.name}); only C/I "
                "or 0/1 scores map to correct."
            )
        ids.append(f"{task}/{s.id}")
        vals.append(v)
    table = pd.DataFrame(
        {
            "model": model,
            "sample": ids,
            "correct": vals,
            "dataset": dataset or "inspect",
            "domain": task,
        }
    )
    # Per model, not per run: the same model imported from several tasks' logs must agree.
    meta = {"source": "inspect", "log_model": str(log.eval.model)}
    models = pd.DataFrame(
        {
            "model_id": [model],
            "name": [model],
            "family": [str(log.eval.model).split("/")[0]],
            "metadata": [json.dumps(meta, sort_keys=True, separators=(",", ":"))],
        }
    )
    return InspectRun(table, models, f"inspect:{path}", file_checksum(path), scorer, task)


def inspect_source(
    path: str | os.PathLike[str],
    model: str | None = None,
    scorer: str | None = None,
    epoch: int | None = None,
    dataset: str | None = None,
) -> Source:
    """One Inspect AI log (``.eval`` or ``.json``), read through Inspect's own reader.

    Returns
    -------
    Source
        ``write="long"``: the log's long table with its model row.
    """
    run = read_inspect_log(
        path, model or None, scorer=scorer or None, epoch=epoch, dataset=dataset or None
    )
    return Source("inspect", run.source, run.checksum, table=run.table, models=run.models, run=run)
