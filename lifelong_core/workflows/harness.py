"""The lifelong loop with an evaluation harness: which items a new model should run, what
its results say about its accuracy and rank, and what goes into the store.

Shared by ``select`` / ``estimate`` on the command line and the lm-eval section of the
"Evaluate something new" page, so each rule exists once:

1. :func:`select_items`: a search method (Sort & Search's threshold rules, the
   CopyNearest&Expand baseline, or the estimators with a 95% interval, e.g. ``mirt``) is
   fitted on every real model evaluated on the whole dataset and picks ``budget`` items.
   :func:`lm_eval_samples` writes them in lm-evaluation-harness 0.4's ``--samples``
   format, ``{"task": [doc_id, ...]}``.
2. The user runs ``lm_eval ... --samples samples.json --log_samples --output_path OUT``.
3. :func:`observations_from_lm_eval` reads the run back (through the importer,
   :func:`lifelong_core.io.lm_eval.read_lm_eval`) and :func:`estimate_new_model` gives
   the estimated accuracy per task and overall with its 95% interval and the rank among
   the stored models with a rank interval.
4. :func:`insert_estimated` stores the row, marked estimated.

The sample-id mapping is explicit: a dataset's sample id must read ``<domain>/<doc_id>``
(what ``import --lm-eval`` writes, ``doc_id`` being lm-eval's index of the item within its
task), and the lm-eval task of a domain is the domain's name unless ``task_names`` maps it
to another (``--task DOMAIN=TASK``). For the bundled Open LLM Leaderboard data the number
is the item's position in the release, which is not necessarily the harness's doc_id: the
mapping is written out, but its truth for a given harness version is the user's to check.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.methods.base import Estimate, SearchMethod
from lifelong_core.methods.draws import COMMON, PER_MODEL, check_draws, model_rng
from lifelong_core.methods.registry import DEFAULT_METHOD, capabilities
from lifelong_core.workflows import arrivals
from lifelong_core.workflows.arrivals import estimate_new_model as estimate_overall
from lifelong_core.workflows.arrivals import estimated_model_rows, fit_new_model_method
from lifelong_core.workflows.selection import Selection, resolve_dataset, select

if TYPE_CHECKING:
    from lifelong_core.store import Store

_DOC = re.compile(r"^(?P<domain>.+)/(?P<doc>\d+)$")


# ------------------------------------------------------------------ the cache
def cache_of(store: Store, dataset: str) -> Selection:
    """The matrix a new model is compared with: :func:`workflows.selection.select` on the
    whole dataset (every real model evaluated on all of its samples).

    ``select`` and ``estimate`` on the command line and the app's lm-eval section all
    start from it, so a new model is always compared with the same models and items.

    Parameters
    ----------
    store : Store
        An open store (read-only will do).
    dataset : str or None
        The dataset to compare with; None for the store's only dataset
        (:func:`~lifelong_core.workflows.selection.resolve_dataset`).

    Returns
    -------
    Selection
        Every real model evaluated on all of the dataset's samples (rows) x those samples
        (columns), in store order.

    Raises
    ------
    InputError
        If the store does not hold ``dataset`` (or holds several and none is named), or
        fewer than two models were evaluated on every one of its samples.
    """
    return select(store, resolve_dataset(store, dataset))


def _dataset(sel: Selection) -> str:
    return str(sel.samples["dataset"].iloc[0])


def fit(
    cache: Selection, method: str = DEFAULT_METHOD, domain: str | None = None, tuning: Any = None
) -> SearchMethod:
    """``method`` fitted on the cache as the new-model page fits it
    (:func:`workflows.arrivals.fit_new_model_method`: Sort by sum over every model), or on
    one domain's columns only (the per-task estimates of :func:`estimate_new_model`).

    Parameters
    ----------
    cache : Selection
        The dataset's cache (:func:`cache_of`).
    method : str
        A registered search method (``lifelong_core.methods.registry``); default the
        product's ``DEFAULT_METHOD``.
    domain : str, optional
        Fit on the columns of this domain only; None fits on every column.
    tuning : object, optional
        For a self-tuning method, the settings its fit on the whole dataset chose
        (:func:`shared_tuning`): the per-task fit skips its own cross-validation.

    Returns
    -------
    object
        The fitted method: it has ``select(n, budget, rng)`` (and ``select_next`` when it
        chooses adaptively) and ``estimate(columns, observed)``.

    Raises
    ------
    InputError
        If ``method`` is not registered.
    lifelong_core.limits.DenseReadError
        If the cache is a packed cache beyond the dense-read limit.
    """
    if domain is None:
        return fit_new_model_method(cache, method, tuning)
    cols = (cache.samples["domain"] == domain).to_numpy()
    sub = Selection(
        cache.A[:, cols], cache.models, cache.samples[cols].reset_index(drop=True), cache.synthetic
    )
    return fit_new_model_method(sub, method, tuning)


def shared_tuning(method: str, fitted: SearchMethod) -> Any:
    """The settings a self-tuning method's fit on the whole dataset chose, for its per-task
    fits to reuse.

    The per-task estimates of :func:`estimate_new_model` fit the method again on each
    task's items; a self-tuning method would cross-validate on each of them again. Its
    choice on the whole dataset (same models, a superset of the items) is reused instead:
    the intervals stay design-based whatever predictor the choice makes, so reusing it
    changes at most how narrow a task's interval is, not whether it holds.

    Parameters
    ----------
    method : str
        A registered search method.
    fitted : object
        ``method`` fitted on the whole dataset.

    Returns
    -------
    object or None
        The fit's ``tuning_`` for a self-tuning method
        (:attr:`~lifelong_core.methods.registry.Capabilities.self_tuning`), else None.
    """
    if not capabilities(method).self_tuning:
        return None
    return getattr(fitted, "tuning_", None)


# ------------------------------------------------------------------ sample ids <-> lm-eval
def parse_task_names(specs: Sequence[str] | None) -> dict[str, str]:
    """The ``--task DOMAIN=TASK`` arguments as a mapping from a dataset's domain to the
    lm-eval task that runs its items.

    Parameters
    ----------
    specs : sequence of str, optional
        ``["DOMAIN=TASK", ...]`` (e.g. ``"ifeval=leaderboard_ifeval"``); None or empty
        for none (every domain's task is then its own name).

    Returns
    -------
    dict of str to str
        Domain -> lm-eval task name, both stripped of surrounding spaces.

    Raises
    ------
    InputError
        (``param="task_names"``) If a spec is not ``DOMAIN=TASK`` with both sides
        non-empty, names a domain twice, or two domains map to the same task.
    """
    out: dict[str, str] = {}
    for spec in specs or []:
        domain, sep, task = str(spec).partition("=")
        if not sep or not domain.strip() or not task.strip():
            raise InputError(
                f"task name {spec!r} is not DOMAIN=TASK (e.g. ifeval=leaderboard_ifeval).",
                param="task_names",
            )
        if domain.strip() in out:
            raise InputError(
                f"the task names name domain {domain.strip()!r} twice.", param="task_names"
            )
        out[domain.strip()] = task.strip()
    if len(set(out.values())) != len(out):
        raise InputError(
            "the task names map two domains to the same lm-eval task.", param="task_names"
        )
    return out


def doc_ids(samples: pd.DataFrame, task_names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The lm-eval item of each sample whose id is ``<domain>/<doc_id>`` (what an
    ``import --lm-eval`` writes).

    Parameters
    ----------
    samples : pandas.DataFrame
        Sample rows with at least ``sample_id`` and ``domain`` (a selection's ``samples``
        or an :class:`ItemChoice`'s ``items``).
    task_names : mapping of str to str, optional
        Domain -> lm-eval task (:func:`parse_task_names`); a domain not named runs as the
        task of its own name.

    Returns
    -------
    pandas.DataFrame
        One row per sample, in the order given: ``sample_id``, ``domain``, ``task`` (the
        lm-eval task) and ``doc_id`` (int64, lm-eval's index of the item in its task).

    Raises
    ------
    InputError
        If ``task_names`` names a domain the samples do not have (``param="task_names"``);
        naming the first sample id that is not ``<domain>/<doc_id>`` of its own domain
        (such a dataset was not imported from lm-eval, and its items cannot be named to the
        harness); or naming a sample that is the same lm-eval item as another (``x/01``
        and ``x/1``).
    """
    task_names = dict(task_names or {})
    unknown = sorted(set(task_names) - set(samples["domain"]))
    if unknown:
        raise InputError(
            f"the task names name domain {unknown[0]!r}, which the dataset does not have.",
            param="task_names",
        )
    ids = samples["sample_id"].astype(str)
    parts = ids.str.extract(_DOC)
    bad = parts["domain"].isna() | (parts["domain"] != samples["domain"].astype(str))
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise InputError(
            f"sample id {ids.iloc[i]!r} (domain {samples['domain'].iloc[i]!r}) is not <domain>/<doc_id>; lm-eval's "
            "--samples needs the ids an lm-eval import writes (a CSV list of sample ids works for any dataset)."
        )
    out = pd.DataFrame(
        {
            "sample_id": ids.to_numpy(dtype=object),
            "domain": samples["domain"].astype(str).to_numpy(dtype=object),
            "task": samples["domain"]
            .astype(str)
            .map(lambda d: task_names.get(d, d))
            .to_numpy(dtype=object),
            "doc_id": parts["doc"].astype(np.int64).to_numpy(),
        }
    )
    # "x/01" and "x/1" would both be doc 1 of task x.
    dup = out.duplicated(["task", "doc_id"])
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise InputError(
            f"sample id {out['sample_id'].iloc[i]!r} names the same lm-eval item as another sample "
            f"(task {out['task'].iloc[i]!r}, doc_id {out['doc_id'].iloc[i]})."
        )
    return out


# ------------------------------------------------------------------ select
@dataclass(frozen=True)
class ItemChoice:
    """The items to run: ``items`` (sample_id, domain; column order) and their columns.

    ``model`` is the model they were drawn for (None for a common item set) and ``draws``
    which draw it was (:mod:`lifelong_core.methods.draws`)."""

    dataset: str
    method: str
    budget: int
    seed: int
    columns: np.ndarray
    items: pd.DataFrame
    n: int
    m: int
    model: str | None = None
    draws: str = PER_MODEL

    def describe(self) -> str:
        """Whose draw the items are, for a front end's message."""
        if self.draws == COMMON:
            return f"the common item set of seed {self.seed} (every model named with it gets these items)"
        return f"items drawn for model {self.model!r} alone (seed {self.seed})"


def select_items(
    cache: Selection,
    budget: int,
    method: str = DEFAULT_METHOD,
    seed: int = 0,
    evaluated: Mapping[str, int] | None = None,
    fitted: SearchMethod | None = None,
    *,
    model: str | None = None,
    draws: str = PER_MODEL,
) -> ItemChoice:
    """The ``budget`` items a new model should run next.

    Parameters
    ----------
    cache : Selection
        The dataset's cache (:func:`cache_of`).
    budget : int
        How many items to run.
    method : str
        A registered search method.
    seed : int
        The user's seed.
    evaluated : mapping, optional
        Sample id -> 0/1 results already in hand. A method that chooses adaptively (it
        has ``select_next(n, budget, rng, columns, observed)``) is given them; any other
        method's choice does not depend on results, so its selection at the combined
        budget is taken and the items not yet evaluated are returned (at most
        ``budget``, a random subset when more remain).
    fitted : object, optional
        A method already fitted by :func:`fit`.
    model : str, optional
        The new model's name: with ``draws="per-model"`` (the default) its items are its
        own random draw (:func:`lifelong_core.methods.draws.model_rng`), so the errors of
        several new models are independent.
    draws : {"per-model", "common"}
        ``"common"``: the seed's item set, the same for every model (to compare models on
        identical items).

    Returns
    -------
    ItemChoice

    Raises
    ------
    InputError
        On a bad budget, an unknown draw, or a per-model draw without a model name.
    """
    n, m = cache.A.shape[1], cache.A.shape[0]
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise InputError(
            f"the budget must be a positive whole number, got {budget!r}.", param="budget"
        )
    check_draws(draws)
    if draws == PER_MODEL and (not isinstance(model, str) or not model.strip()):
        raise InputError(
            "name the new model (its items are its own random draw) or ask for the common item "
            "set shared by every model.",
            param="model",
        )
    cols_done, obs_done = observed_columns(cache, evaluated or {})
    left = n - len(cols_done)
    if budget > left:
        raise InputError(
            f"budget {budget} exceeds the {left} items of {_dataset(cache)!r} not yet evaluated.",
            param="budget",
        )
    model = model.strip() if draws == PER_MODEL and model is not None else None
    rng = model_rng(model or "", limits.check_seed(seed), draws)
    fitted = fitted if fitted is not None else fit(cache, method)
    if hasattr(fitted, "select_next"):
        cols = np.asarray(fitted.select_next(n, budget, rng, cols_done, obs_done), dtype=np.int64)
    else:
        cols = np.asarray(fitted.select(n, min(len(cols_done) + budget, n), rng), dtype=np.int64)
        cols = np.setdiff1d(cols, cols_done)
        if len(cols) > budget:
            cols = np.sort(rng.choice(cols, size=budget, replace=False))
    items = cache.samples.iloc[cols][["sample_id", "domain"]].reset_index(drop=True)
    return ItemChoice(
        _dataset(cache), method, int(budget), int(seed), cols, items, n, m, model, draws
    )


def lm_eval_samples(
    choice: ItemChoice, task_names: Mapping[str, str] | None = None
) -> dict[str, list[int]]:
    """The ``--samples`` argument of lm-evaluation-harness 0.4: ``{task: [doc_id, ...]}``.

    Parameters
    ----------
    choice : ItemChoice
        The items to run (:func:`select_items`).
    task_names : mapping of str to str, optional
        Domain -> lm-eval task (:func:`parse_task_names`); default each domain's own name.

    Returns
    -------
    dict of str to list of int
        Each lm-eval task (in the order its first item appears) -> its doc_ids, ascending.

    Raises
    ------
    InputError
        If an item's sample id is not ``<domain>/<doc_id>`` or the task names do not fit
        the items (:func:`doc_ids`).
    """
    ids = doc_ids(choice.items, task_names)
    return {str(t): sorted(int(d) for d in g["doc_id"]) for t, g in ids.groupby("task", sort=False)}


def write_choice(
    choice: ItemChoice,
    path: str | os.PathLike[str],
    fmt: str,
    task_names: Mapping[str, str] | None = None,
) -> None:
    """Write the items to run to a file, as ``lbe select --out`` does.

    Parameters
    ----------
    choice : ItemChoice
        The items to run (:func:`select_items`).
    path : str or Path
        The file to write (replaced if it exists).
    fmt : {"lm-eval", "csv"}
        ``"lm-eval"``: the JSON of :func:`lm_eval_samples`, one task per line, ready for
        ``lm_eval --samples``; ``"csv"``: the items' ``sample_id, domain`` table, for any
        other harness.
    task_names : mapping of str to str, optional
        Domain -> lm-eval task, for ``"lm-eval"`` (:func:`parse_task_names`).

    Raises
    ------
    InputError
        On an unknown format (``param="format"``), or for ``"lm-eval"`` when the items'
        ids are not lm-eval items (:func:`doc_ids`).
    """
    if fmt == "lm-eval":
        tasks = lm_eval_samples(choice, task_names)
        text = (
            "{\n"
            + ",\n".join(f" {json.dumps(t)}: {json.dumps(d)}" for t, d in tasks.items())
            + "\n}\n"
        )
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    elif fmt == "csv":
        choice.items.to_csv(path, index=False)
    else:
        raise InputError(f"unknown format {fmt!r}; use lm-eval or csv.", param="format")


# ------------------------------------------------------------------ read results back
def observed_columns(
    cache: Selection, observed: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Columns and 0/1 values (column order) of ``observed`` (sample id -> 0/1)."""
    if not len(observed):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    pos = pd.Series(
        np.arange(len(cache.samples)), index=cache.samples["sample_id"].astype(str).to_numpy()
    )
    ids = pd.Index([str(s) for s in observed])
    missing = ~ids.isin(pos.index)
    if missing.any():
        raise InputError(
            f"sample {ids[missing][0]!r} is not in dataset {_dataset(cache)!r} "
            f"({int(missing.sum())} of {len(ids)} results name samples it does not have)."
        )
    cols = pos.loc[ids].to_numpy(dtype=np.int64)
    vals = np.asarray([int(v) for v in observed.values()], dtype=np.int64)
    if ((vals != 0) & (vals != 1)).any():
        raise InputError("results must be 0 or 1.")
    order = np.argsort(cols)
    return cols[order], vals[order].astype(np.uint8)


@dataclass(frozen=True)
class Observations:
    """A new model's results on some items of a dataset (sample id -> 0/1)."""

    values: dict
    source: str
    metrics: dict = field(default_factory=dict)  # task -> (metric, filter) used


def observations_from_lm_eval(
    path: str | os.PathLike[str],
    cache: Selection,
    task_names: Mapping[str, str] | None = None,
    metric: str | None = None,
    filter: str | None = None,
    shown_as: str | None = None,
) -> Observations:
    """One model's ``lm_eval --log_samples`` run as results on the dataset's sample ids.

    The run is read by the store's importer (same metric/filter rules as ``import
    --lm-eval``; a ``.zip`` of the run folder is unpacked as the import unpacks one,
    :func:`lifelong_core.io.text.extract_zip`); task ``T`` with ``doc_id`` ``d`` is sample
    ``<domain>/<d>`` where domain is the one ``task_names`` maps to ``T`` (default: the
    domain named ``T``).

    Parameters
    ----------
    path : str or Path
        The run: its output folder, its ``results_*.json``, one ``samples_*.jsonl``, or a
        ``.zip`` of its folder (or of the output folder holding exactly one model's run).
    cache : Selection
        The dataset's cache (:func:`cache_of`).
    task_names : mapping of str to str, optional
        Domain -> lm-eval task (:func:`parse_task_names`).
    metric : str, optional
        The lm-eval metric that says whether an item was answered correctly; default each
        task's own (as ``import --lm-eval --metric``).
    filter : str, optional
        The lm-eval filter whose metric is read; default each task's own.
    shown_as : str, optional
        How messages name the run instead of ``path`` (an upload's name).

    Returns
    -------
    Observations
        Sample id -> 0/1 for every item of the run, the run's source, and the metric and
        filter used per task.

    Raises
    ------
    InputError
        If the run cannot be read (:func:`lifelong_core.io.lm_eval.read_lm_eval`), a zip
        does not hold exactly one run, the dataset's ids are not lm-eval items
        (:func:`doc_ids`), or the run has a task or a doc_id the dataset does not hold (the
        sentence names them).
    """
    import tempfile

    from lifelong_core.io.lm_eval import run_folders
    from lifelong_core.io.text import extract_zip

    path = Path(path)
    if path.suffix.lower() == ".zip" and not path.is_dir():
        shown = shown_as or str(path)
        with tempfile.TemporaryDirectory(prefix="lbe-lm-eval-") as tmp:
            root = extract_zip(path, Path(tmp) / "run")
            runs = run_folders(root)
            if len(runs) != 1:
                what = (
                    "no samples_<task>_<timestamp>.jsonl file"
                    if not runs
                    else f"{len(runs)} run folders"
                )
                raise InputError(
                    f"{shown} holds {what}; zip one model's run folder (made with --log_samples)."
                )
            return _observations(
                runs[0], cache, task_names, metric, filter, root, shown, shown + "/"
            )
    return _observations(path, cache, task_names, metric, filter, path, shown_as, None)


def _observations(
    path: Path,
    cache: Selection,
    task_names: Mapping[str, str] | None,
    metric: str | None,
    filter: str | None,
    root: Path,
    name: str | None,
    inside: str | None,
) -> Observations:
    """:func:`observations_from_lm_eval` of a run folder or file. When ``name`` is given,
    messages never show ``root`` (a temporary folder the user did not see): a file in it
    is written as ``inside`` + its path there, the folder itself as ``name``."""
    from lifelong_core.io.lm_eval import read_lm_eval

    shown = name or str(path)
    try:
        run = read_lm_eval(path, "new-model", metric=metric, filter=filter)
    except InputError as exc:
        if name is None:
            raise
        text = str(exc).replace(str(root) + "/", inside or "").replace(str(root), name)
        raise InputError(text, param=exc.param) from None
    ids = doc_ids(cache.samples, task_names)
    sample_of = dict(zip(zip(ids["task"], ids["doc_id"].tolist()), ids["sample_id"]))
    tasks = set(ids["task"])
    values: dict[str, int] = {}
    for sid, v in zip(run.table["sample"], run.table["correct"]):
        task, _, doc = str(sid).rpartition("/")
        if task not in tasks:
            raise InputError(
                f"the lm-eval run at {shown} has task {task!r}, which is no task of {_dataset(cache)!r} "
                f"({', '.join(sorted(tasks))}); map a domain to it with a task name DOMAIN={task}.",
                param="task_names",
            )
        key = (task, int(doc))
        if key not in sample_of:
            raise InputError(
                f"the lm-eval run at {shown} has doc_id {doc} of task {task!r}, which {_dataset(cache)!r} "
                "does not hold."
            )
        values[sample_of[key]] = int(v)
    source = run.source if name is None else f"lm-eval:{name}"
    return Observations(values, source, dict(run.metrics))


def observations_from_uploads(
    files: Sequence[tuple[str, bytes]],
    cache: Selection,
    task_names: Mapping[str, str] | None = None,
    metric: str | None = None,
    filter: str | None = None,
    reserve: Callable[[int, str], object] | None = None,
) -> Observations:
    """The same as :func:`observations_from_lm_eval` for uploaded files: the run's
    ``samples_*.jsonl`` (``.gz``) files, optionally with its ``results_*.json``, or one
    ``.zip`` of the run folder (or of the output folder holding exactly one model's run).

    The files are written to a temporary folder that is removed afterwards, a zip unpacked
    by the one extraction (:func:`lifelong_core.io.text.extract_zip`: members under plain
    relative paths only, the unpacked-size and file-count limits). ``reserve`` is asked for
    the disk each file and each zip's unpacked content will take, before it is written.
    An error names the upload, not the temporary folder.

    Parameters
    ----------
    files : sequence of (str, bytes)
        The uploaded files as (file name, content).
    cache : Selection
        The dataset's cache (:func:`cache_of`).
    task_names : mapping of str to str, optional
        Domain -> lm-eval task (:func:`parse_task_names`).
    metric : str, optional
        The lm-eval metric read per item; default each task's own.
    filter : str, optional
        The lm-eval filter whose metric is read; default each task's own.
    reserve : callable, optional
        ``reserve(nbytes, what)`` before ``nbytes`` are written (the app's disk budget for
        uploads); it raises InputError to refuse.

    Returns
    -------
    Observations
        As :func:`observations_from_lm_eval`, with source ``"app upload <names>"``.

    Raises
    ------
    InputError
        If nothing was uploaded, a zip comes with other files, a zip is not valid, passes
        a limit or does not hold exactly one run folder, a loose file is neither
        ``samples_*`` nor ``results_*``, or the run does not fit the dataset
        (:func:`observations_from_lm_eval`).
    """
    import tempfile

    from lifelong_core.io.lm_eval import run_folders
    from lifelong_core.io.text import check_archive, extract_zip

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
            # Saved under its own name (ordinary characters only): messages name it so.
            saved = root / (
                re.sub(r"[^A-Za-z0-9_.=+-]+", "_", Path(name).name).strip(".") or "upload.zip"
            )
            shown = f"uploaded file {Path(name).name}"
            if reserve is not None:
                reserve(len(data), shown)
            saved.write_bytes(data)
            declared = sum(i.file_size for i in check_archive(saved, saved.name))
            if reserve is not None:
                reserve(declared, f"{shown}, unpacked,")
            unpacked = extract_zip(saved, root / "run", limit=max(declared, 1))
            runs = run_folders(unpacked)
            if len(runs) != 1:
                what = (
                    "no samples_<task>_<timestamp>.jsonl file"
                    if not runs
                    else f"{len(runs)} run folders"
                )
                raise InputError(
                    f"{shown} holds {what}; zip one model's run folder (made with --log_samples)."
                )
            folder = runs[0]
        else:
            for name, data in files:
                base = Path(name).name
                if not (base.startswith(("samples_", "results_"))):
                    raise InputError(
                        f"uploaded file {name} is neither a samples_<task>_<timestamp>.jsonl nor a "
                        "results_<timestamp>.json file of an lm-eval run."
                    )
                if reserve is not None:
                    reserve(len(data), f"uploaded file {base}")
                (root / base).write_bytes(data)
            folder = root
        obs = _observations(folder, cache, task_names, metric, filter, root, "the upload", "")
    names = ", ".join(n for n, _ in files)
    return Observations(obs.values, f"app upload {names}", obs.metrics)


# ------------------------------------------------------------------ estimate
@dataclass(frozen=True)
class NewModelEstimate:
    """Per-task and overall estimates of one new model, and its rank among the cache's
    (what :func:`estimate_new_model` returns and ``lbe estimate`` prints).

    Attributes
    ----------
    dataset : str
        The dataset of the cache.
    method : str
        The registered method that estimated.
    table : pandas.DataFrame
        One row per domain, then ``overall``: scope, items, evaluated, observed (accuracy
        on the evaluated items), estimate, lo, hi (95% interval; NaN when the method gives
        none, or for a domain without results); accuracies are fractions.
    new : lifelong_core.workflows.arrivals.NewModelEstimate
        The new-model page's estimate: the overall estimate, rank (1 = best, among the
        ``m`` stored models plus the new one, by accuracy over every item), predictions
        per sample, and the evaluated columns.
    rank_lo, rank_hi : int or None
        The best and worst ranks the overall 95% interval allows; None when the method
        gives no interval.
    """

    dataset: str
    method: str
    table: pd.DataFrame
    new: arrivals.NewModelEstimate
    rank_lo: int | None
    rank_hi: int | None

    @property
    def overall(self) -> pd.Series:
        """The ``overall`` row of :attr:`table` (items, evaluated, observed, estimate, lo,
        hi over every item of the dataset)."""
        return self.table.iloc[-1]

    @property
    def rank(self) -> int:
        """The overall estimate's rank among the stored models plus the new one (1 = best)."""
        return int(self.new.rank)

    @property
    def m(self) -> int:
        """How many stored models the new one is ranked among (the cache's rows)."""
        return len(self.new.accuracies)

    def summary(self, name: str = "new model") -> str:
        """The per-task table, the overall estimate with its interval, and the rank, as
        ``lbe estimate`` prints them.

        Parameters
        ----------
        name : str
            What the text calls the new model.

        Returns
        -------
        str
            :func:`format_estimate` of this estimate, several lines.
        """
        return format_estimate(name, self)


def _row(scope: str, items: int, obs: np.ndarray, est: Estimate | None) -> dict:
    nan = float("nan")
    return {
        "scope": scope,
        "items": items,
        "evaluated": len(obs),
        "observed": float(obs.mean()) if len(obs) else nan,
        "estimate": float(est.acc) if est is not None else nan,
        "lo": float(est.lo) if est is not None and est.lo is not None else nan,
        "hi": float(est.hi) if est is not None and est.hi is not None else nan,
    }


def estimate_new_model(
    cache: Selection,
    observed: Mapping[str, int],
    method: str = DEFAULT_METHOD,
    fitter: Callable[[str | None, Any], SearchMethod] | None = None,
) -> NewModelEstimate:
    """Estimated accuracy per task (domain) and overall, with 95% intervals, and the rank.

    Overall: the new-model page's estimate (``method`` fitted on every item of the
    dataset, from every result). Per task: the same method fitted on that task's items
    estimates from the results on them (a task without results gets NaN). The rank
    compares the overall estimate with the stored models' accuracies over the same items;
    its interval comes from the estimate's interval alone (the stored accuracies are
    exact, not estimated). For Sort & Search this is insert_M of Prabhu et al. (2024),
    *Efficient Lifelong Model Evaluation in an Era of Rapid Progress*, §3.2.

    Parameters
    ----------
    cache : Selection
        The dataset's cache (:func:`cache_of`).
    observed : mapping of str to int
        Sample id -> 0/1 result of the new model (e.g. :attr:`Observations.values`).
    method : str
        A registered search method; default the product's ``DEFAULT_METHOD``.
    fitter : callable, optional
        ``fitter(domain or None, tuning)`` returns the fitted method (default :func:`fit`
        on ``cache``; the app passes a cached one). ``tuning`` is None for the whole
        dataset, and for a task the whole dataset's fit's settings (:func:`shared_tuning`).

    Returns
    -------
    NewModelEstimate

    Raises
    ------
    InputError
        If there are no results, a result names a sample the dataset does not have, or a
        value is not 0 or 1.
    """
    fitter = fitter or (lambda d, tuning: fit(cache, method, d, tuning))
    cols, obs = observed_columns(cache, observed)
    if len(cols) == 0:
        raise InputError("no results to estimate from.")
    overall = fitter(None, None)
    tuning = shared_tuning(method, overall)
    new = estimate_overall(cache, overall, cols, obs)
    est = new.estimate
    domains = cache.samples["domain"].astype(str).to_numpy()
    rows = []
    for d in pd.unique(domains):
        in_d = np.flatnonzero(domains == d)
        mask = np.isin(cols, in_d)
        sub = None
        if mask.any():
            sub = fitter(d, tuning).estimate(np.searchsorted(in_d, cols[mask]), obs[mask])
        rows.append(_row(d, len(in_d), obs[mask], sub))
    rows.append(_row("overall", len(domains), obs, est))
    acc = new.accuracies["accuracy"].to_numpy()
    lo = hi = None
    if est.lo is not None and est.hi is not None:
        lo, hi = int((acc > est.hi).sum()) + 1, int((acc > est.lo).sum()) + 1
    return NewModelEstimate(_dataset(cache), method, pd.DataFrame(rows), new, lo, hi)


def format_estimate(name: str, est: NewModelEstimate) -> str:
    """The text ``estimate`` prints: the per-task table, the overall row and the rank.

    Parameters
    ----------
    name : str
        What the text calls the new model.
    est : NewModelEstimate
        The estimate (:func:`estimate_new_model`).

    Returns
    -------
    str
        A heading line, a fixed-width table (task, items, evaluated, observed, estimate,
        95% interval; ``-`` where there is none) and a line with the rank and its interval.
    """
    t = est.table
    lines = [
        (
            f"model {name} on {est.dataset}: {int(t['evaluated'].iloc[-1])} of {int(t['items'].iloc[-1])} items "
            f"evaluated; method {est.method}"
        ),
        f"{'task':<24} {'items':>6} {'evaluated':>9} {'observed':>8} {'estimate':>8}  95% interval",
    ]
    r: Any  # a row of itertuples: its fields are typed as any pandas scalar
    for r in t.itertuples():
        iv = "-" if np.isnan(r.lo) else f"{r.lo:.3f} - {r.hi:.3f}"
        obs = "-" if np.isnan(r.observed) else f"{r.observed:.3f}"
        val = "-" if np.isnan(r.estimate) else f"{r.estimate:.3f}"
        lines.append(f"{r.scope:<24} {r.items:>6} {r.evaluated:>9} {obs:>8} {val:>8}  {iv}")
    rank = (
        f"rank {est.rank} of {est.m + 1} (among the {est.m} stored models evaluated on every item)"
    )
    if est.rank_lo is not None:
        rank += f"; 95% rank interval {est.rank_lo} - {est.rank_hi}"
    else:
        rank += f"; method {est.method} gives no interval"
    lines.append(rank)
    return "\n".join(lines)


# ------------------------------------------------------------------ insert
def insert_estimated(
    writer: Store,
    cache: Selection,
    name: str,
    est: NewModelEstimate,
    source: str,
    extra_meta: Mapping[str, object] | None = None,
) -> dict:
    """Store the new model's row as the new-model page does
    (:func:`workflows.arrivals.estimated_model_rows`: real results on the evaluated items,
    the method's prediction elsewhere, marked estimated). Metadata records the method, the
    estimate with its interval and which items are real evaluations.

    Parameters
    ----------
    writer : Store
        A store opened for writing; the row goes in in one transaction.
    cache : Selection
        The cache the estimate was made on (:func:`cache_of`).
    name : str
        The new model's id and name.
    est : NewModelEstimate
        Its estimate (:func:`estimate_new_model`).
    source : str
        What the store's import log names as the origin.
    extra_meta : dict, optional
        More metadata to record beside the method's, e.g. the item draw.

    Returns
    -------
    dict
        The store's import summary (entries, new_models, new_samples, log_id).

    Raises
    ------
    InputError
        If ``name`` is empty, the method predicts no sample it was not run on (there is no
        row to insert), or the store refuses the row (entries that conflict with what it
        holds; the store is then unchanged).
    """
    if not isinstance(name, str) or not name.strip():
        raise InputError("the new model needs a name.")
    o = est.overall
    cols = est.new.cols
    meta = {
        "method": est.method,
        "source": source,
        "estimate": {
            "accuracy": round(float(o["estimate"]), 6),
            "lo": None if np.isnan(o["lo"]) else round(float(o["lo"]), 6),
            "hi": None if np.isnan(o["hi"]) else round(float(o["hi"]), 6),
        },
        "evaluated": len(cols),
        "evaluated_samples": cache.samples["sample_id"].astype(str).to_numpy()[cols].tolist(),
        **(extra_meta or {}),
    }
    row, models = estimated_model_rows(est.new, name, meta)
    return writer.insert_matrix(row, models, cache.samples["sample_id"].tolist(), source=source)
