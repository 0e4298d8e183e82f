"""Naming a dataset's items to an evaluation harness, and writing the items to run.

A sample id ``<task>/<id>`` names item ``id`` of the harness task ``task`` (the text before
the first ``/``; a task name holds none). This is what ``import --lm-eval`` writes
(``id`` is lm-eval's ``doc_id``, the item's index in its task), what ``import --inspect``
writes (``id`` is the Inspect sample's id) and what the bundled Open LLM Leaderboard v2
uses (the release's columns mapped to the leaderboard's lm-eval subtasks, see
``data/open_llm_leaderboard_v2/README.md``). A task known to the harness under another
name is mapped with ``TASK=HARNESS_TASK`` (:func:`parse_task_names`).

Written files (:func:`write_items`):

- ``lm-eval``: lm-evaluation-harness 0.4's ``--samples`` argument, ``{"task": [doc_id,
  ...]}``;
- ``inspect``: the value of Inspect AI's ``inspect eval --sample-id``, ids scoped to their
  task as ``task:id`` and separated by commas (Inspect 0.3.285 and later read a
  ``task:`` prefix that names a task of the run as a selector for that task alone);
- ``csv``: ``sample_id, domain``, for any other harness.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError

FORMATS = ("lm-eval", "inspect", "csv")


def parse_task_names(specs: Sequence[str] | None) -> dict[str, str]:
    """``TASK=HARNESS_TASK`` arguments as a mapping from a task named in the sample ids to
    the harness's name for it.

    Parameters
    ----------
    specs : sequence of str, optional
        ``["TASK=HARNESS_TASK", ...]``; None or empty for none (every task then runs under
        the name the sample ids give it).

    Returns
    -------
    dict of str to str
        Task -> harness task, both stripped of surrounding spaces.

    Raises
    ------
    InputError
        (``param="task_names"``) If a spec is not ``TASK=HARNESS_TASK`` with both sides
        non-empty, names a task twice, or two tasks map to the same harness task.
    """
    out: dict[str, str] = {}
    for spec in specs or []:
        task, sep, harness_task = str(spec).partition("=")
        if not sep or not task.strip() or not harness_task.strip():
            raise InputError(
                f"task name {spec!r} is not TASK=HARNESS_TASK (e.g. arith=toy_arith).",
                param="task_names",
            )
        if task.strip() in out:
            raise InputError(
                f"the task names name task {task.strip()!r} twice.", param="task_names"
            )
        out[task.strip()] = harness_task.strip()
    if len(set(out.values())) != len(out):
        raise InputError(
            "the task names map two tasks to the same harness task.", param="task_names"
        )
    return out


def item_ids(
    samples: pd.DataFrame, task_names: Mapping[str, str] | None = None, harness: str = "lm-eval"
) -> pd.DataFrame:
    """The harness item of each sample: its task and its id within the task.

    Parameters
    ----------
    samples : pandas.DataFrame
        Sample rows with ``sample_id`` and ``domain``, in any order.
    task_names : mapping of str to str, optional
        Task named in the sample ids -> the harness's task name (:func:`parse_task_names`).
    harness : {"lm-eval", "inspect"}
        ``lm-eval`` needs a whole-number ``doc_id`` after the ``/``; ``inspect`` takes any
        id without a comma (the separator of ``--sample-id``).

    Returns
    -------
    pandas.DataFrame
        One row per sample, in the order given: ``sample_id``, ``domain``, ``task`` (the
        harness's task name) and ``item`` (the id within the task: int64 for lm-eval,
        text for Inspect).

    Raises
    ------
    InputError
        Naming the first sample id that is not ``<task>/<id>`` (such a dataset was not
        imported from a harness; a CSV list of sample ids works for any dataset), a task
        name for a task the ids do not have (``param="task_names"``), or two samples that
        are the same harness item (``x/01`` and ``x/1`` for lm-eval).
    """
    if harness not in ("lm-eval", "inspect"):
        raise InputError(f"unknown harness {harness!r}; use lm-eval or inspect.", param="format")
    names = dict(task_names or {})
    ids = samples["sample_id"].astype(str)
    parts = ids.str.partition("/")
    task, sep, item = parts[0], parts[1], parts[2]
    bad = (sep != "/") | (task.str.len() == 0) | (item.str.len() == 0)
    if harness == "lm-eval":
        bad |= ~item.str.fullmatch(r"\d{1,18}").fillna(False).astype(bool)
    else:
        bad |= item.str.contains(",", regex=False)
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        want = "<task>/<doc_id>" if harness == "lm-eval" else "<task>/<sample id> without a comma"
        who = "an lm-eval" if harness == "lm-eval" else "an Inspect"
        raise InputError(
            f"sample id {ids.iloc[i]!r} is not {want}; the harness's item list needs the ids "
            f"{who} import writes (a CSV list of sample ids works for any dataset)."
        )
    unknown = sorted(set(names) - set(task))
    if unknown:
        have = ", ".join(sorted(set(task))[:8])
        raise InputError(
            f"the task names name task {unknown[0]!r}, which the sample ids do not have (they have {have}).",
            param="task_names",
        )
    out = pd.DataFrame(
        {
            "sample_id": ids.to_numpy(dtype=object),
            "domain": samples["domain"].astype(str).to_numpy(dtype=object),
            "task": task.map(lambda t: names.get(t, t)).to_numpy(dtype=object),
            "item": item.astype(np.int64).to_numpy()
            if harness == "lm-eval"
            else item.to_numpy(dtype=object),
        }
    )
    dup = out.duplicated(["task", "item"])
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise InputError(
            f"sample id {out['sample_id'].iloc[i]!r} names the same {harness} item as another sample "
            f"(task {out['task'].iloc[i]!r}, item {out['item'].iloc[i]})."
        )
    return out


def lm_eval_samples(
    items: pd.DataFrame, task_names: Mapping[str, str] | None = None
) -> dict[str, list[int]]:
    """lm-evaluation-harness 0.4's ``--samples`` argument: ``{task: [doc_id, ...]}``.

    Parameters
    ----------
    items : pandas.DataFrame
        The items to run, with ``sample_id`` and ``domain``.
    task_names : mapping of str to str, optional
        Task -> lm-eval task (:func:`parse_task_names`).

    Returns
    -------
    dict of str to list of int
        Each lm-eval task (in the order its first item appears) -> its doc_ids, ascending.

    Raises
    ------
    InputError
        As :func:`item_ids`.
    """
    ids = item_ids(items, task_names, "lm-eval")
    return {str(t): sorted(int(d) for d in g["item"]) for t, g in ids.groupby("task", sort=False)}


def inspect_sample_ids(items: pd.DataFrame, task_names: Mapping[str, str] | None = None) -> str:
    """The value of ``inspect eval --sample-id``: ``task:id`` for every item, comma-separated.

    Parameters
    ----------
    items : pandas.DataFrame
        The items to run, with ``sample_id`` and ``domain``.
    task_names : mapping of str to str, optional
        Task -> Inspect task (:func:`parse_task_names`).

    Returns
    -------
    str
        One line, tasks in the order their first item appears, ids in the items' order.

    Raises
    ------
    InputError
        As :func:`item_ids`.
    """
    ids = item_ids(items, task_names, "inspect")
    return ",".join(f"{t}:{i}" for t, i in zip(ids["task"], ids["item"]))


def write_items(
    items: pd.DataFrame,
    path: str | os.PathLike[str],
    fmt: str,
    task_names: Mapping[str, str] | None = None,
) -> None:
    """Write the items to run to a file (``lbe select --out``).

    Parameters
    ----------
    items : pandas.DataFrame
        The items, with ``sample_id`` and ``domain``, in the order to write.
    path : str or Path
        The file to write (replaced if it exists).
    fmt : {"lm-eval", "inspect", "csv"}
        ``lm-eval``: :func:`lm_eval_samples` as JSON, one task per line, for
        ``lm_eval --samples``; ``inspect``: :func:`inspect_sample_ids` and a newline, for
        ``inspect eval --sample-id "$(cat FILE)"``; ``csv``: ``sample_id, domain``.
    task_names : mapping of str to str, optional
        Task -> harness task (:func:`parse_task_names`); not used by ``csv``.

    Raises
    ------
    InputError
        On an unknown format (``param="format"``), or for ``lm-eval`` and ``inspect`` when
        the ids are not harness items (:func:`item_ids`).
    """
    if fmt == "lm-eval":
        tasks = lm_eval_samples(items, task_names)
        text = (
            "{\n"
            + ",\n".join(f" {json.dumps(t)}: {json.dumps(d)}" for t, d in tasks.items())
            + "\n}\n"
        )
    elif fmt == "inspect":
        text = inspect_sample_ids(items, task_names) + "\n"
    elif fmt == "csv":
        items[["sample_id", "domain"]].to_csv(path, index=False)
        return
    else:
        raise InputError(f"unknown format {fmt!r}; use {', '.join(FORMATS)}.", param="format")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
