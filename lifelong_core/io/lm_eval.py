"""Reading lm-evaluation-harness ``--log_samples`` output (the format is described in
docs/reference/file-formats.md): one run (:func:`read_lm_eval`), and a folder or zip of
runs put together as one import (:func:`lm_eval_source`, the registered reader).

One model's run is a folder with ``results_<timestamp>.json`` and one
``samples_<task>_<timestamp>.jsonl`` (or ``.jsonl.gz``) per task; each line is one test
item with ``doc_id``, ``filter``, ``metrics`` and one field per metric. The store keeps:

- sample id ``<task>/<doc_id>``, domain = task, category = the group that lists the task
  in ``group_subtasks`` (if any), dataset = ``dataset`` argument (default ``lm-eval``);
  ``doc_hash`` goes into the sample's ``meta`` so a re-ordered or edited task is refused
  on a later import instead of being silently mixed;
- correct = the chosen metric, which must be 0/1 on every line (acc, acc_norm,
  exact_match, ...). When a task records several metrics one must be named; ``metric``
  may be a comma-separated preference list (``acc_norm,acc``) for runs over many tasks,
  each task taking the first it records. A metric with any other value (f1, bleu,
  perplexity) is refused, never thresholded;
- one filter per task: a task logged under several filters (e.g. ``strict-match`` and
  ``flexible-extract``) needs the filter named.

Departure: predicted answers and log-likelihoods are not turned into the store's
``predicted``/``confidence`` extras, since their meaning differs between task types.
"""

from __future__ import annotations

import array
import dataclasses
import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError, few
from lifelong_core.io.edges import check_regular_file
from lifelong_core.io.limits import json_depth_rule, json_too_deep
from lifelong_core.io.readers import Source
from lifelong_core.io.text import extract_zip, iter_lines, load_json, read_json_bytes

_SAMPLES = re.compile(
    r"^samples_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl(?P<gz>\.gz)?$"
)
# ``results_<ts>.json``, or ``<stem>_<ts>.json`` when --output_path named a .json file.
_RESULTS = re.compile(r"^(?P<stem>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json$")
_NOT_METRICS = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
}


def family_of(model_name: str) -> str | None:
    """A model's family from its hub name: the organisation of ``org/model``, else None.

    Examples
    --------
    >>> family_of("meta-llama/Llama-3.1-8B"), family_of("my-model")
    ('meta-llama', None)
    """
    org, sep, rest = str(model_name).partition("/")
    return org.strip() or None if sep and rest.strip() else None


def model_name_of(results: dict) -> str | None:
    """The model a run's results file names: its ``model_name`` (lm-eval 0.4.3 and later),
    else the ``pretrained=`` entry of ``config.model_args``; None when it names none."""
    name = results.get("model_name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    config = results.get("config")
    # A results file of another shape names no model here; read_lm_eval says what is wrong.
    args = config.get("model_args") if isinstance(config, dict) else None
    if isinstance(args, dict):
        name = args.get("pretrained")
    elif isinstance(args, str):
        pairs = dict(p.split("=", 1) for p in args.split(",") if "=" in p)
        name = pairs.get("pretrained")
    else:
        name = None
    return name.strip() if isinstance(name, str) and name.strip() else None


def is_run_file(name: str) -> bool:
    """Whether a file name is one lm-eval writes for a run (results or per-sample log).

    Parameters
    ----------
    name : str
        A file name.

    Returns
    -------
    bool
    """
    return bool(_RESULTS.match(name) or _SAMPLES.match(name))


@dataclass(frozen=True)
class LmEvalRun:
    """One model's run (or several put together), ready for the store.

    Attributes
    ----------
    table : pandas.DataFrame
        model, sample, correct, dataset, domain[, category].
    models : pandas.DataFrame
        model_id, name, family, metadata.
    sample_meta : pandas.Series
        sample_id -> canonical JSON text with ``doc_hash``.
    source : str
        What the store's log names.
    checksum : str
        Digest of the files read.
    metrics : dict
        task -> (metric, filter) actually used.
    """

    table: pd.DataFrame  # model, sample, correct, dataset, domain[, category]
    models: pd.DataFrame  # model_id, name, family, metadata
    sample_meta: pd.Series  # sample_id -> canonical JSON text with doc_hash
    source: str
    checksum: str
    metrics: dict  # task -> (metric, filter) actually used


def _find_run(path: Path) -> tuple[Path | None, list[Path], str]:
    """(results file or None, sample files, folder text) of the one run at ``path``."""
    if path.exists() and not path.is_dir():
        check_regular_file(path, "lm-eval")  # never a pipe or a device
        sm = _SAMPLES.match(path.name)
        if sm:
            # One task's file: its run's results file, if present, still gives groups and counts.
            res = path.parent / f"results_{sm.group('ts')}.json"
            return (res if res.exists() else None), [path], str(path.parent)
        m = _RESULTS.match(path.name)
        if not m:
            raise InputError(
                f"{path} is not an lm-eval results_<timestamp>.json or samples_<task>_<timestamp>.jsonl file or a run folder."
            )
        ts = m.group("ts")
        files = sorted(
            p
            for p in path.parent.iterdir()
            if (s := _SAMPLES.match(p.name)) and s.group("ts") == ts
        )
        if not files:
            raise InputError(
                f"{path.parent} holds no samples_<task>_{ts}.jsonl files for {path.name}; was the run made with --log_samples?"
            )
        return path, files, str(path.parent)
    if not path.is_dir():
        raise InputError(f"lm-eval path {path} does not exist.")
    folder = path
    if not any(_RESULTS.match(p.name) or _SAMPLES.match(p.name) for p in folder.iterdir()):
        subs = [
            d
            for d in sorted(folder.iterdir())
            if d.is_dir()
            and any(_RESULTS.match(p.name) or _SAMPLES.match(p.name) for p in d.iterdir())
        ]
        if len(subs) != 1:
            what = (
                "no run folder"
                if not subs
                else f"{len(subs)} run folders ({few([d.name for d in subs])})"
            )
            raise InputError(
                f"lm-eval path {path} holds {what}; give the path of one model's folder."
            )
        folder = subs[0]
    results = sorted(p for p in folder.iterdir() if _RESULTS.match(p.name))
    samples = sorted(p for p in folder.iterdir() if _SAMPLES.match(p.name))
    stamps = sorted(
        {m.group("ts") for p in samples if (m := _SAMPLES.match(p.name))}
        | {m.group("ts") for p in results if (m := _RESULTS.match(p.name))}
    )
    if len(stamps) > 1:
        raise InputError(
            f"lm-eval folder {folder} holds {len(stamps)} runs ({', '.join(stamps)}); pass one results_<timestamp>.json file to choose."
        )
    if not samples:
        raise InputError(
            f"lm-eval folder {folder} holds no samples_<task>_<timestamp>.jsonl files; was the run made with --log_samples?"
        )
    return (results[0] if results else None), samples, str(folder)


# Per-sample fields that hold the item's text and the model's answers (the bulk of each
# line); they are never read, so they are not kept in memory.
_BULKY = ("doc", "arguments", "resps", "filtered_resps", "target")
# A metric's value on a line, as kept: 0 or 1, or why it is neither.
_NOT_BINARY, _MISSING = 2, 3


class _FilterRows:
    """What one filter's lines of a samples file hold, kept compactly while the file streams:
    doc ids, each candidate metric's 0/1 value per line and doc hashes. Lines are never held,
    so memory grows with the items kept, not with the file."""

    def __init__(self, rec: dict, lineno: int) -> None:
        names = rec.get("metrics")
        if not isinstance(names, list) or not names:
            names = [
                k
                for k, v in rec.items()
                if k not in _NOT_METRICS
                and not k.startswith("_")
                and isinstance(v, (int, float, bool))
            ]
        self.names = [str(n) for n in names]
        self.first_line = lineno
        # Kept compactly: 8 bytes per item for its doc_id and its line, one set of the ids
        # seen (a duplicate is refused at once), one byte per item and candidate metric.
        self.docs = array.array("q")
        self.lines = array.array("q")
        self.seen: set[int] = set()
        self.values = {n: bytearray() for n in self.names}
        # metric -> (line, doc_id, value, code) of its first value that is not 0/1 or missing
        self.first_bad: dict[str, tuple[int, int, object, int]] = {}
        self.hashes: list[str | None] = []

    def add(self, rec: dict, lineno: int, flt: str, path: Path) -> None:
        doc = rec.get("doc_id")
        if isinstance(doc, bool) or not isinstance(doc, int):
            raise InputError(f"{path} line {lineno} has no whole-number doc_id.")
        if doc in self.seen:
            first = self.lines[self.docs.index(doc)]  # only on the way to the refusal
            raise InputError(
                f"{path} lines {first} and {lineno} both hold doc_id {doc} under filter {flt!r}."
            )
        if not -(2**63) <= doc < 2**63:
            raise InputError(f"{path} line {lineno} has a doc_id beyond 64 bits.")
        dh = rec.get("doc_hash")
        if dh is not None and not isinstance(dh, str):
            raise InputError(
                f"{path} line {lineno} (doc_id {doc}) field doc_hash must be text; it holds a "
                f"{type(dh).__name__}."
            )
        self.seen.add(doc)
        self.docs.append(doc)
        self.lines.append(lineno)
        self.hashes.append(dh)
        for name, column in self.values.items():
            if name not in rec:
                code = _MISSING
            else:
                v = _binary(rec[name])
                code = _NOT_BINARY if v is None else int(v)
            column.append(code)
            if code > 1 and name not in self.first_bad:
                self.first_bad[name] = (lineno, doc, rec.get(name), code)

    def column(self, met: str, task: str, path: Path) -> np.ndarray:
        """The 0/1 values of ``met``, or the sentence for its first line without one."""
        if met in self.first_bad:
            lineno, doc, value, code = self.first_bad[met]
            if code == _MISSING:
                raise InputError(f"{path} line {lineno} (doc_id {doc}) has no {met!r} field.")
            raise InputError(
                f"Metric {met!r} of task {task!r} is not binary: {path.name} line {lineno} (doc_id {doc}) holds "
                f"{value!r}; only 0/1 metrics such as acc, acc_norm or exact_match map to correct."
            )
        return np.frombuffer(bytes(self.values[met]), dtype=np.uint8)


def _read_lines(path: Path, digest: Any) -> dict[str, _FilterRows]:
    """The lines of a samples file, streamed under the line and unpacked limits (io.text)
    and validated as they come (JSON, nesting, doc ids, duplicates), kept per filter;
    ``digest`` is updated with the file's bytes as stored, as they are read."""
    out: dict[str, _FilterRows] = {}
    for lineno, line in iter_lines(path, str(path), digest):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except RecursionError:
            raise InputError(json_depth_rule(f"{path} line {lineno}")) from None
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text.") from None
        except json.JSONDecodeError:
            raise InputError(
                f"{path} line {lineno} is not valid JSON (is the file truncated?)."
            ) from None
        if not isinstance(rec, dict):
            raise InputError(f"{path} line {lineno} is not a JSON object.")
        for key in _BULKY:
            rec.pop(key, None)
        if json_too_deep(rec):
            raise InputError(json_depth_rule(f"{path} line {lineno}"))
        flt = str(rec.get("filter", "none"))
        rows = out.get(flt)
        if rows is None:
            rows = out[flt] = _FilterRows(rec, lineno)
        rows.add(rec, lineno, flt, path)
    if not out:
        raise InputError(f"{path} holds no samples.")
    return out


def _results_fields(results: dict, path: Path | None) -> tuple[dict, dict, dict]:
    """The fields read from a ``results_*.json``, each checked for the shape lm-eval writes.

    Returns ``(task -> group, task -> declared sample count, config)``: ``group_subtasks``
    maps each group to a list of task names, ``n-samples`` maps each task to an object
    whose ``effective`` is a whole number, ``config`` is an object whose ``model`` is text.
    Anything else is one sentence naming the file and the field, not a traceback halfway
    through the import.
    """

    def wrong(field: str, expected: str, got: object) -> InputError:
        shown = json.dumps(got)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return InputError(f"{path} field {field} must be {expected}; it holds {shown}.")

    def _object(name: str) -> dict:
        value = results.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise wrong(name, "an object", value)
        return value

    parent: dict[str, str] = {}
    for group, subs in _object("group_subtasks").items():
        if subs is None:
            continue
        if not isinstance(subs, list) or not all(isinstance(t, str) for t in subs):
            raise wrong(f"group_subtasks[{json.dumps(group)}]", "a list of task names", subs)
        for t in subs:
            parent.setdefault(t, group)
    declared: dict[str, int] = {}
    for task, counts in _object("n-samples").items():
        if counts is None:
            continue
        if not isinstance(counts, dict):
            raise wrong(f"n-samples[{json.dumps(task)}]", "an object", counts)
        eff = counts.get("effective")
        if eff is not None and (isinstance(eff, bool) or not isinstance(eff, int) or eff < 0):
            raise wrong(f"n-samples[{json.dumps(task)}].effective", "a whole number", eff)
        if eff is not None:
            declared[task] = eff
    cfg = _object("config")
    if cfg.get("model") is not None and not isinstance(cfg["model"], str):
        raise wrong("config.model", "text (the model type)", cfg["model"])
    return parent, declared, cfg


def _binary(v: object) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)) and v in (0, 1):
        return float(v)
    return None


# A metric or filter as asked for: one for every task (a metric may be a comma-separated
# preference list), or per task (what the store recorded at import), None for the task's own.
Wanted = str | Mapping[str, str | None] | None


def _for(wanted: Wanted, task: str) -> str | None:
    if wanted is None or isinstance(wanted, str):
        return wanted
    return wanted.get(task)


def _pick(options: list[str], wanted: str | None, what: str, task: str, path: Path) -> str:
    if wanted is not None:
        if wanted not in options:
            raise InputError(
                f"Task {task!r} ({path.name}) has no {what} {wanted!r}; it has {', '.join(options)}.",
                param=what,
            )
        return wanted
    if len(options) == 1:
        return options[0]
    raise InputError(
        f"Task {task!r} ({path.name}) records {what}s {', '.join(options)}; choose one {what}.",
        param=what,
    )


def _pick_metric(rows: _FilterRows, wanted: str | None, task: str, path: Path) -> str:
    """``wanted`` is a comma-separated preference list; the first metric the task records
    wins. Without one, the task's only 0/1 metric; several are refused, naming them."""
    options = rows.names
    if wanted is None:
        binary = [n for n in options if n not in rows.first_bad]
        if len(binary) == 1:
            return binary[0]
        if len(binary) > 1:
            others = [n for n in options if n not in binary]
            rest = f" (and {', '.join(others)}, which are not 0/1)" if others else ""
            raise InputError(
                f"Task {task!r} ({path.name}) records several 0/1 metrics: {', '.join(binary)}{rest}; "
                "choose one metric (a comma-separated preference list such as acc_norm,acc picks per task).",
                param="metric",
            )
        return _pick(options, None, "metric", task, path)
    prefs = [w.strip() for w in wanted.split(",") if w.strip()]
    for w in prefs:
        if w in options:
            return w
    raise InputError(
        f"Task {task!r} ({path.name}) has no metric {' or '.join(map(repr, prefs))}; it has {', '.join(options)} "
        "(the metric may be a preference list, e.g. acc_norm,acc).",
        param="metric",
    )


def read_lm_eval(
    path: str | os.PathLike[str],
    model_name: str | None,
    metric: Wanted = None,
    dataset: str | None = None,
    filter: Wanted = None,
    default_name: str | None = None,
) -> LmEvalRun:
    """Read one model's ``--log_samples`` run.

    Parameters
    ----------
    path : str or os.PathLike
        A run folder (or the folder holding exactly one model's folder), its
        ``results_*.json`` file, or one task's ``samples_*.jsonl``.
    model_name : str or None
        The model's name; None takes the name the run's results file gives
        (:func:`model_name_of`), else ``default_name``.
    metric : str or mapping, optional
        The 0/1 metric to read, or a comma-separated preference list (``acc_norm,acc``);
        needed when a task records several 0/1 metrics. A mapping gives it per task (a
        task it does not name takes its only 0/1 metric).
    dataset : str, optional
        The dataset the samples join (default ``lm-eval``).
    filter : str or mapping, optional
        The filter to read, when a task was logged under several; a mapping gives it per
        task.
    default_name : str, optional
        The name when neither ``model_name`` nor the results file gives one.

    Returns
    -------
    LmEvalRun

    Raises
    ------
    InputError
        For a path that holds no run or several, unreadable or truncated files, a metric
        that is not 0/1, a task needing a metric or filter named, or no model name.
    """
    if model_name is not None and (not isinstance(model_name, str) or not model_name.strip()):
        raise InputError("An lm-eval import needs a model name.", param="model_name")
    dataset = dataset or "lm-eval"
    results_path, files, folder = _find_run(Path(path))
    h = hashlib.sha256()
    results: dict = {}
    if results_path is not None:
        raw = read_json_bytes(results_path, str(results_path))
        h.update(raw)
        try:
            results = load_json(raw, str(results_path))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InputError(
                f"{results_path} is not valid JSON (is the file truncated?)."
            ) from None
        if not isinstance(results, dict):
            raise InputError(f"{results_path} is not a JSON object.")
    parent, declared, cfg = _results_fields(results, results_path)
    # Sample counts are declared only by a results file, so ``declared`` is empty without one.
    results_name = results_path.name if results_path is not None else "the results file"
    if model_name is None:
        model_name = model_name_of(results) or default_name
        if not model_name:
            raise InputError(
                f"the lm-eval run at {folder} does not name its model (no model_name or pretrained= in a "
                "results file); give the model's name.",
                param="model_name",
            )

    frames, meta, used = [], {}, {}
    seen_tasks: dict[str, Path] = {}
    for f in files:
        sm = _SAMPLES.match(f.name)
        if sm is None:  # _find_run keeps only files of this name, as the format names them
            raise InputError(f"{f} is not an lm-eval samples_<task>_<timestamp>.jsonl file.")
        task = sm.group("task")
        if task in seen_tasks:
            raise InputError(
                f"Task {task!r} has two sample files ({seen_tasks[task].name} and {f.name}); keep one."
            )
        seen_tasks[task] = f
        h.update(f.name.encode())
        by_filter = _read_lines(f, h)
        filters = sorted(by_filter)
        # The filter only matters where a task was logged under several filters.
        flt = (
            filters[0]
            if len(filters) == 1
            else _pick(filters, _for(filter, task), "filter", task, f)
        )
        rows = by_filter[flt]
        if not rows.names:
            raise InputError(f"{f} line {rows.first_line} records no metric field.")
        met = _pick_metric(rows, _for(metric, task), task, f)
        vals = rows.column(met, task, f)
        ids = [f"{task}/{doc}" for doc in rows.docs]
        hashes = rows.hashes
        del by_filter
        want = declared.get(task)
        if want is not None and want != len(ids):
            raise InputError(
                f"{f} holds {len(ids)} samples but {results_name} reports {want} for task {task!r} (is the file truncated?)."
            )
        frame = pd.DataFrame(
            {
                "model": model_name,
                "sample": ids,
                "correct": np.asarray(vals, dtype=np.uint8),
                "dataset": dataset,
                "domain": task,
            }
        )
        frame["category"] = parent.get(task)
        frames.append(frame)
        for sid, dh in zip(ids, hashes):
            meta[sid] = (
                json.dumps({"doc_hash": dh}, sort_keys=True, separators=(",", ":"))
                if dh is not None
                else None
            )
        used[task] = (met, flt)
    table = pd.concat(frames, ignore_index=True)
    # model_args is text in most harness versions and an object in some; JSON keeps either.
    model_meta: dict[str, object] = {"source": "lm-eval"}
    if cfg.get("model_args") is not None:
        model_meta["model_args"] = cfg.get("model_args")
    models = pd.DataFrame(
        {
            "model_id": [model_name],
            "name": [model_name],
            # The organisation of a hub name (org/model); the harness backend (cfg "model",
            # e.g. "hf") says nothing about the model's family.
            "family": [family_of(model_name)],
            "metadata": [json.dumps(model_meta, sort_keys=True, separators=(",", ":"))],
        }
    )
    return LmEvalRun(
        table,
        models,
        pd.Series(meta, dtype=object),
        f"lm-eval:{folder}",
        "sha256:" + h.hexdigest(),
        used,
    )


# ------------------------------------------------------------------ runs, folders and zips
def lm_eval_source(
    path: str | os.PathLike[str],
    model: str | None = None,
    metric: Wanted = None,
    filter: Wanted = None,
    dataset: str | None = None,
    *,
    strict: bool = False,
    progress: Callable[[float, str], object] | None = None,
    shown_as: str | None = None,
    unpack_limit: int | None = None,
) -> Source:
    """lm-evaluation-harness ``--log_samples`` output, read and validated before the store
    is touched: one model's run (a folder, its results file or one samples file), a folder
    of run folders (lm-eval's ``OUT/<org>__<model>/``, one per model), or a ``.zip`` of
    either.

    Parameters
    ----------
    path : str or Path
        The run, the folder of runs or the zip.
    model : str, optional
        The model's name, for one run only; by default each run is named by its results
        file (``model_name``, else ``pretrained=`` of its model arguments), else by its
        folder as lm-eval writes it (``org__model`` -> ``org/model``).
    metric, filter : str or mapping, optional
        As for one run (:func:`read_lm_eval`), for every run.
    dataset : str, optional
        The dataset of the items; by default
        (:func:`lifelong_core.workflows.imports.insert`) the dataset the store already
        keeps them in, else the runs' one group or one task, else ``lm-eval``.
    strict : bool
        A run that cannot be read rejects the whole import (store unchanged); by default
        it is skipped and named with its reason in ``Source.skipped``, and the other runs
        are imported.
    progress : callable, optional
        ``progress(fraction, text)`` as runs are read.
    shown_as : str, optional
        How messages, skipped runs' reasons and the store's log name the input, in place
        of ``path`` (an upload's file name rather than the folder it was saved in); a zip
        is named as given, never by the temporary folder it is unpacked into.
    unpack_limit : int, optional
        For a zip: a smaller budget in bytes for what it unpacks to (what a server
        reserved for an upload), beside the unpacked-size limit every zip has.

    Returns
    -------
    Source
        Of kind ``"lm-eval"``, holding every readable run put together (one transaction
        at import).

    Raises
    ------
    InputError
        On a path that holds no run, ``model`` given with several runs, no readable run,
        or (``strict``) the first bad run.
    """
    path = Path(path)
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise InputError("An lm-eval import needs a non-empty model name.", param="model")
    if path.suffix.lower() == ".zip" and not path.is_dir():
        check_regular_file(path, "lm-eval")
        shown = shown_as or str(path)
        with tempfile.TemporaryDirectory(prefix="lbe-lm-eval-") as tmp:
            root = extract_zip(path, Path(tmp) / path.stem, limit=unpack_limit)
            runs = run_folders(root)
            if model is not None and len(runs) > 1:
                raise InputError(
                    f"a model name names one run, but {shown} holds {len(runs)} runs "
                    f"({few([_rel(r, root) for r in runs])}); give one model's run.",
                    param="model",
                )
            return _named(
                root,
                shown,
                lambda: _read_runs(
                    root, Path(shown), model, metric, filter, dataset, strict, progress, runs
                ),
            )
    if shown_as is not None:
        return _named(
            path,
            shown_as,
            lambda: lm_eval_source(
                path, model, metric, filter, dataset, strict=strict, progress=progress
            ),
        )
    if not path.exists():
        raise InputError(f"lm-eval path {path} does not exist.")
    if not path.is_dir():
        check_regular_file(path, "lm-eval")  # never a pipe or a device
        # One run's results file or one task's samples file: the reader finds the rest.
        return _read_runs(path, path, model, metric, filter, dataset, strict, progress, [path])
    runs = run_folders(path)
    if not runs:
        raise InputError(
            f"lm-eval path {path} holds no run (no results_<timestamp>.json or "
            "samples_<task>_<timestamp>.jsonl file in it or its folders)."
        )
    if model is not None and len(runs) > 1:
        raise InputError(
            f"a model name names one run, but {path} holds {len(runs)} runs "
            f"({few([_rel(r, path) for r in runs])}); leave it out: each run is named by its results file.",
            param="model",
        )
    return _read_runs(path, path, model, metric, filter, dataset, strict, progress, runs)


def read_run(
    path: str | os.PathLike[str],
    metric: Wanted = None,
    filter: Wanted = None,
    *,
    shown_as: str | None = None,
    unpack_limit: int | None = None,
) -> LmEvalRun:
    """One new model's run, to estimate from: its folder, its results file, one samples
    file, or a zip of the folder (or of an output folder holding that one run), unpacked
    by the one extraction with its limits (:func:`lifelong_core.io.text.extract_zip`).

    Parameters
    ----------
    path : str or Path
        The run.
    metric, filter : str or mapping, optional
        As for :func:`read_lm_eval`.
    shown_as : str, optional
        How messages name the run instead of ``path`` (an upload's name).
    unpack_limit : int, optional
        For a zip: a smaller budget in bytes for what it unpacks to.

    Returns
    -------
    LmEvalRun
        The run's items (``sample`` = ``<task>/<doc_id>``) and the metric and filter read
        per task; its model is named ``new-model``.

    Raises
    ------
    InputError
        If the path holds no run or several, or the run cannot be read.
    """
    src = lm_eval_source(
        path,
        "new-model",
        metric,
        filter,
        strict=True,
        shown_as=shown_as,
        unpack_limit=unpack_limit,
    )
    return src.run


def read_uploaded_run(
    files: Sequence[tuple[str, bytes]],
    metric: Wanted = None,
    filter: Wanted = None,
    reserve: Callable[[int, str], object] | None = None,
) -> LmEvalRun:
    """:func:`read_run` of uploaded files: the run's ``samples_*.jsonl`` (``.gz``) files,
    optionally with its ``results_*.json``, or one ``.zip`` of the run folder.

    The files are written to a temporary folder that is removed afterwards; a zip is
    unpacked by the one extraction (:func:`lifelong_core.io.text.extract_zip`: members
    under plain relative paths only, the unpacked-size and file-count limits). An error
    names the upload, never the temporary folder.

    Parameters
    ----------
    files : sequence of (str, bytes)
        The uploaded files as (file name, content).
    metric, filter : str or mapping, optional
        As for :func:`read_lm_eval`.
    reserve : callable, optional
        ``reserve(nbytes, what)`` before ``nbytes`` are written (a server's disk budget for
        uploads), for each file and for a zip's declared unpacked size; it raises
        InputError to refuse.

    Returns
    -------
    LmEvalRun
        As :func:`read_run`.

    Raises
    ------
    InputError
        If nothing was uploaded, a zip comes with other files, a zip is not valid, passes
        a limit or does not hold exactly one run, a loose file is neither ``samples_*`` nor
        ``results_*``, or the run cannot be read.
    """
    from lifelong_core.io.text import check_archive

    if not files:
        raise InputError(
            "no files uploaded; upload the run's samples_<task>_<timestamp>.jsonl files or a zip of its folder."
        )
    zips = [(n, b) for n, b in files if n.lower().endswith(".zip")]
    if zips and len(files) > 1:
        raise InputError("upload either one zip of the run folder or the run's files, not both.")
    with tempfile.TemporaryDirectory(prefix="lbe-lm-eval-") as tmp:
        root = Path(tmp)
        if zips:
            name, data = zips[0]
            shown = f"uploaded file {Path(name).name}"
            # Saved under a plain name: messages name the upload, never this file.
            saved = root / "upload.zip"
            if reserve is not None:
                reserve(len(data), shown)
            saved.write_bytes(data)
            declared = sum(i.file_size for i in check_archive(saved, shown))
            if reserve is not None:
                reserve(declared, f"{shown}, unpacked,")
            return read_run(saved, metric, filter, shown_as=shown, unpack_limit=max(declared, 1))
        for name, data in files:
            base = Path(name).name
            if not base.startswith(("samples_", "results_")) or not is_run_file(base):
                raise InputError(
                    f"uploaded file {name} is neither a samples_<task>_<timestamp>.jsonl nor a "
                    "results_<timestamp>.json file of an lm-eval run."
                )
            if reserve is not None:
                reserve(len(data), f"uploaded file {base}")
            (root / base).write_bytes(data)
        return read_run(root, metric, filter, shown_as="the upload")


def _named(root: Path, name: str, read: Callable[[], Source]) -> Source:
    """``read()`` with every mention of ``root`` (a folder the user never saw: an unpacked
    zip, an upload's temporary folder) written as ``name``, in its error, its skipped runs'
    reasons and the source the store's log keeps."""
    where = str(root)

    def named(text: str) -> str:
        return text.replace(where, name)

    try:
        src = read()
    except InputError as exc:
        raise InputError(named(str(exc)), param=exc.param) from None
    run = dataclasses.replace(src.run, source=named(src.run.source))
    skipped = tuple(SkippedRun(s.run, named(s.reason)) for s in src.skipped)
    return dataclasses.replace(src, source=named(src.source), run=run, skipped=skipped)


def _rel(run: Path, root: Path) -> str:
    try:
        rel = run.relative_to(root)
    except ValueError:
        return run.name
    return str(rel) if str(rel) != "." else run.name


@dataclass(frozen=True)
class SkippedRun:
    """A run left out of an import, and why (one sentence).

    Attributes
    ----------
    run : str
        The run as the user sees it: its folder relative to the path given (or the name
        of the path itself).
    reason : str
        Why it could not be read, the reader's sentence without its final full stop.
    """

    run: str
    reason: str


def _read_runs(
    root: Path,
    shown: str | Path,
    model: str | None,
    metric: Wanted,
    filter: Wanted,
    dataset: str | None,
    strict: bool,
    progress: Callable[[float, str], object] | None,
    runs: list[Path] | None = None,
) -> Source:
    """Read every run under ``root`` (``runs``: the run paths, default every run folder);
    ``shown`` is the path the user gave (messages and the source name use it)."""
    root, shown = Path(root), Path(shown)
    metric, filter = metric or None, filter or None
    runs = run_folders(root) if runs is None else runs
    if not runs:
        raise InputError(f"{shown} holds no lm-eval run.")
    if len(runs) == 1:
        progress = None  # one run reads in a moment: no report
    read: list = []
    names: dict[str, str] = {}
    hashes: dict = {}
    skipped: list[SkippedRun] = []
    for i, run in enumerate(runs):
        label = _rel(run, root) if run != root else shown.name
        if progress is not None:
            progress(i / len(runs), f"Reading run {label} ({i + 1} of {len(runs)})…")
        # lm-eval names a model's folder org__model; a loose folder says nothing.
        folder = run if run.is_dir() else run.parent
        fallback = model_name_from_folder(folder) if "__" in folder.name else None
        try:
            got = read_lm_eval(
                run, model, metric=metric, dataset=dataset, filter=filter, default_name=fallback
            )
            name = str(got.models["model_id"].iloc[0])
            if name in names:
                raise InputError(
                    f"its model {name!r} is also the model of run {names[name]}; import one of them"
                )
            meta = got.sample_meta.dropna()
            clash = [sid for sid, h in meta.items() if hashes.get(sid, h) != h]
            if clash:
                raise InputError(
                    f"its item {clash[0]!r} differs from the same item in the runs before it "
                    f"(doc_hash; {len(clash)} such items): a different version of the task"
                )
        except InputError as exc:
            reason = str(exc).rstrip(".")
            if strict or len(runs) == 1:
                if len(runs) == 1:
                    raise
                raise InputError(
                    f"run {label} of {shown} cannot be imported: {reason}; nothing was imported.",
                    param=getattr(exc, "param", None),
                ) from None
            skipped.append(SkippedRun(label, reason))
            continue
        names[name] = label
        hashes.update(meta.to_dict())
        read.append(got)
    if progress is not None:
        progress(1.0, f"Read {len(read)} of {len(runs)} runs.")
    if not read:
        first = skipped[0]
        raise InputError(
            f"none of the {len(runs)} runs in {shown} could be read ({few([s.run for s in skipped])}); "
            f"the first, {first.run}: {first.reason}."
        )
    if len(read) == 1 and not skipped:
        combined = read[0]
    else:
        h = hashlib.sha256()
        for r in read:
            h.update(r.checksum.encode())
        table = pd.concat([r.table for r in read], ignore_index=True)
        meta = pd.concat([r.sample_meta for r in read])
        metrics: dict = {}
        for r in read:
            for task, used in r.metrics.items():
                metrics.setdefault(task, {}).setdefault(used, 0)
                metrics[task][used] += 1
        combined = LmEvalRun(
            table,
            pd.concat([r.models for r in read], ignore_index=True),
            meta[~meta.index.duplicated()],
            f"lm-eval:{shown}",
            "sha256:" + h.hexdigest(),
            {t: max(c, key=c.get) for t, c in metrics.items()},
        )
        mixed = {t: c for t, c in metrics.items() if len(c) > 1}
        if mixed:
            combined = dataclasses.replace(combined, metrics={**combined.metrics, **_mixed(mixed)})
    return Source(
        "lm-eval",
        combined.source,
        combined.checksum,
        dataset or None,
        path=shown,
        model=model,
        metric=metric or None,
        filter=filter or None,
        run=combined,
        runs=len(runs),
        skipped=tuple(skipped),
        write="lm-eval",
    )


def _mixed(mixed: dict) -> dict:
    """Tasks scored by different metrics in different runs: (metric list, filter list) text."""
    out = {}
    for task, counts in mixed.items():
        parts = [f"{m} in {k} run(s)" for (m, _), k in sorted(counts.items(), key=lambda x: -x[1])]
        filters = sorted({f for _, f in counts})
        out[task] = ("; ".join(parts), ", ".join(filters))
    return out


def run_folders(root: str | os.PathLike[str]) -> list[Path]:
    """Every folder under ``root`` (itself included) that holds an lm-eval run.

    A run folder holds a ``results_<ts>.json`` or ``samples_<task>_<ts>.jsonl[.gz]`` file
    (:func:`is_run_file`); hidden folders and files, and the ``__MACOSX`` folders of zips
    made on a Mac, are passed over.

    Parameters
    ----------
    root : str or Path
        The folder to search, at any depth.

    Returns
    -------
    list of Path
        The run folders, sorted by path; empty when there is none.
    """
    root = Path(root)
    found = set()
    for p in root.rglob("*"):
        if (
            # Not only regular files: a run whose samples file is a pipe or a device is
            # found, and refused with its reason when it is read.
            not p.is_dir()
            and not any(part.startswith(("__MACOSX", ".")) for part in p.relative_to(root).parts)
            and is_run_file(p.name)
        ):
            found.add(p.parent)
    return sorted(found)


def model_name_from_folder(folder: Path) -> str:
    """The model id lm-eval's folder name stands for: it writes ``org/name`` as ``org__name``.

    Parameters
    ----------
    folder : Path
        A run folder as ``lm_eval --output_path`` writes it (``OUT/<org>__<name>``).

    Returns
    -------
    str
        The folder's name with every ``__`` replaced by ``/``
        (``meta-llama__Llama-3-8B`` -> ``meta-llama/Llama-3-8B``).
    """
    return folder.name.replace("__", "/")
