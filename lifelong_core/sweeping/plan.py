"""How a sweep runs, decided once before any row is read.

:func:`plan_sweep` looks at the rows' form (a dense array, packed rows, another row
source), at what the method declares in the registry
(:func:`lifelong_core.methods.registry.capabilities`) and at the caller's request, and
returns a :class:`SweepPlan`; :func:`lifelong_core.sweeping.run_sweep` then follows that
plan straight down. The plan decides how, never the numbers (the kernels and paths give
the same numbers, tested against each other and against Prabhu et al. (2024)'s Listing 1).

Paths:

- ``"threshold"``: a threshold rule (Prabhu et al., 2024, *Efficient Lifelong Model
  Evaluation in an Era of Rapid Progress*, §3.2) on prefix counts, through the dense or
  packed kernel and an executor;
- ``"packed-sweep"``: the method's own whole-sweep implementation on packed rows (its
  ``packed_sweep`` capability), used when memory is bounded and the Sort is by Sum;
- ``"method"``: any other search method, fitted once on the Sort rows and run model by
  model (the ``SearchMethod`` protocol of :mod:`lifelong_core.methods.base`).

With ``bounded=True`` (the app on a store larger than its dense-read limit) no step may
hold a whole selection dense: rows are read in blocks of at most
:func:`lifelong_core.limits.block_rows`, a method that can fit from packed rows does
(``packed`` capability), and any step that needs the Sort rows dense passes the dense-read
guard first (:func:`lifelong_core.limits.check_dense`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lifelong_core import limits
from lifelong_core.errors import InputError
from lifelong_core.methods.registry import Capabilities, capabilities
from lifelong_core.rows import DEFAULT_CHUNK_ROWS, DenseRows, PackedArray, RowSource
from lifelong_core.sortsearch.kernels import default_block_rows
from lifelong_core.sortsearch.search import SAMPLING
from lifelong_core.sweeping.dense import DenseKernel
from lifelong_core.sweeping.executors import EXECUTORS
from lifelong_core.sweeping.packed import PackedKernel

KERNELS: dict[str, type[DenseKernel] | type[PackedKernel]] = {
    "dense": DenseKernel,
    "packed": PackedKernel,
}
FORMS = ("dense", "packed", "source")
PATHS = ("threshold", "packed-sweep", "method")
# A model-based method takes long per row: blocks this small let a progress bar move.
BOUNDED_METHOD_BLOCK_ROWS = 4


def form_of(A: object) -> str:
    """How rows are held: ``"dense"`` (an array, or :class:`~lifelong_core.rows.DenseRows`),
    ``"packed"`` (:class:`~lifelong_core.rows.PackedArray`) or ``"source"`` (any other
    :class:`~lifelong_core.rows.RowSource`: a ``.npy`` file, the store)."""
    if isinstance(A, DenseRows) or not isinstance(A, RowSource):
        return "dense"
    return "packed" if isinstance(A, PackedArray) else "source"


@dataclass(frozen=True)
class SweepPlan:
    """What :func:`~lifelong_core.sweeping.run_sweep` does, in order.

    Attributes
    ----------
    form : str
        The Sort rows' form (:func:`form_of`).
    path : {"threshold", "packed-sweep", "method"}
        Which path scores the evaluated rows.
    kernel : {"dense", "packed"}
        How evaluated rows are read and scored on the threshold path; ``"dense"`` on the
        method path (it reads uint8 rows).
    executor : {"serial", "threads", "dask"}
        Where chunk tasks run.
    sort_step : {"in place", "read", "streamed"}
        The Sort rows used where they lie (a dense array), read whole, or streamed through
        ``sort_kernel`` as column sums.
    sort_kernel : {"dense", "packed"}
        The kernel that streams the Sort rows when ``sort_step == "streamed"``.
    fit : {"dense", "packed"} or None
        How the method is fitted on the method path (None elsewhere).
    bounded : bool
        Reads are bounded: blocks within the dense-read limit, whole reads guarded.
    """

    form: str
    path: str
    kernel: str
    executor: str
    sort_step: str
    sort_kernel: str
    fit: str | None
    bounded: bool

    def chunk_rows(self, n: int, requested: int | None = None) -> int:
        """Rows per task for ``n`` samples: ``requested``, else the plan's default.

        The default keeps one task's block small: the packed kernel takes
        :data:`~lifelong_core.rows.DEFAULT_CHUNK_ROWS` rows; a bounded plan as many as fit
        the dense-read limit (:func:`lifelong_core.limits.block_rows`, at most
        ``DEFAULT_CHUNK_ROWS``), and on the method path no more than
        ``BOUNDED_METHOD_BLOCK_ROWS`` so that a progress bar moves; otherwise the dense
        kernel's block size (:func:`lifelong_core.sortsearch.kernels.default_block_rows`).
        The numbers of a sweep do not depend on it.

        Parameters
        ----------
        n : int
            Samples per row (columns of the matrix).
        requested : int, optional
            The caller's ``chunk_rows``, already checked by
            :func:`~lifelong_core.sweeping.engine.check_bounds`; returned as is when given.

        Returns
        -------
        int
            Rows per task, at least 1.
        """
        if requested is not None:
            return requested
        if self.kernel == "packed":
            return DEFAULT_CHUNK_ROWS
        if self.bounded:
            step = limits.block_rows(n, 1, cap=DEFAULT_CHUNK_ROWS)
            return min(step, BOUNDED_METHOD_BLOCK_ROWS) if self.path == "method" else step
        return default_block_rows(n)


def plan_sweep(
    A_sort: object,
    *,
    search: str,
    sort: str = "sum",
    sampling: str,
    decompose: bool = False,
    kernel: str | None = None,
    executor: str | None = None,
    threads: int | None = None,
    bounded: bool = False,
) -> SweepPlan:
    """Decide how a sweep runs, and refuse a combination nothing can run.

    Parameters
    ----------
    A_sort : array or RowSource
        The Sort rows (only their form is looked at).
    search, sort, sampling, decompose
        As for :func:`~lifelong_core.sweeping.run_sweep` (``sampling`` already resolved).
    kernel : {"dense", "packed"}, optional
        Default: ``"packed"`` for a threshold rule with Sorting by Sum and no error
        decomposition, else ``"dense"``.
    executor : {"serial", "threads", "dask"}, optional
        Default ``"threads"`` when ``threads > 1``, else ``"serial"``.
    threads : int, optional
        Threads of the executor (default: the executor's own choice; never changes the
        numbers).
    bounded : bool
        Keep every read bounded (see the module docstring).

    Returns
    -------
    SweepPlan

    Raises
    ------
    InputError
        On an unknown kernel, executor or sampling, or a method, Sort or decomposition the
        chosen kernel or executor cannot run.
    """
    caps = capabilities(search)
    threshold = caps.threshold_rule
    executor = executor or ("threads" if (threads or 1) > 1 else "serial")
    if kernel is None:
        # Where it runs, the packed kernel gives the dense kernel's numbers for a fraction
        # of the work: it reads each rule's observations and the ones before its threshold
        # from the packed sorted rows, without counting at every cut.
        packed = threshold and sort == "sum" and not decompose
        kernel = "packed" if packed else "dense"
    _check(caps, search, kernel, executor, sort, sampling, decompose)
    form = form_of(A_sort)
    if threshold:
        path, fit = "threshold", None
    elif bounded and caps.packed_sweep is not None and sort == "sum":
        path, fit = "packed-sweep", None
    else:
        path = "method"
        fit = "packed" if bounded and caps.packed and caps.packed_sweep is None else "dense"
    # Sorting by Sum streams the Sort rows as column sums; they are read whole only for
    # another Sort or a method fitted on dense rows, and used in place when the dense
    # kernel was handed an array.
    needs_dense = sort != "sum" or fit == "dense"
    if form == "dense" and kernel == "dense" and not bounded:
        sort_step = "in place"
    elif needs_dense:
        sort_step = "read"
    else:
        sort_step = "streamed"
    sort_kernel = "packed" if path == "method" else kernel
    return SweepPlan(form, path, kernel, executor, sort_step, sort_kernel, fit, bounded)


def _check(
    caps: Capabilities,
    search: str,
    kernel: str,
    executor: str,
    sort: str,
    sampling: str,
    decompose: bool,
) -> None:
    if kernel not in KERNELS:
        raise InputError(
            f"unknown kernel {kernel!r}; use one of {', '.join(KERNELS)}.", param="kernel"
        )
    if executor not in EXECUTORS:
        raise InputError(
            f"unknown executor {executor!r}; use one of {', '.join(EXECUTORS)}.", param="executor"
        )
    if sampling not in SAMPLING:
        raise InputError(
            f"unknown sampling {sampling!r}; use one of {', '.join(SAMPLING)}.", param="sampling"
        )
    threshold = caps.threshold_rule
    if kernel == "packed":
        if sort != "sum":
            raise InputError(
                f"the packed kernel sorts by sum only; sort {sort!r} needs the dense kernel.",
                param="sort",
            )
        if not threshold:
            raise InputError(
                f"the packed kernel runs the threshold rules only; search {search!r} needs the dense "
                "kernel.",
                param="search",
            )
    if executor == "dask" and not caps.dask:
        raise InputError(
            f"the dask executor runs the threshold rules only; search {search!r} runs in the calling "
            "thread (serial or threads executor).",
            param="search",
        )
    if decompose and not threshold:
        raise InputError(
            "the error decomposition applies to threshold rules only.", param="decompose"
        )
    if decompose and not KERNELS[kernel].decomposes:
        raise InputError(
            f"the {kernel} kernel cannot compute the error decomposition; use the dense kernel.",
            param="decompose",
        )


def dense_sort_rows(plan: SweepPlan, rows: RowSource, what: str) -> np.ndarray:
    """The Sort rows as one dense array, as the plan says: in place, or read whole (after
    the dense-read guard when the plan is bounded)."""
    if plan.sort_step == "in place" and isinstance(rows, DenseRows):
        return rows.A
    if plan.bounded:
        limits.check_dense(rows.n_rows, rows.n, 1, what)
    return rows.read_dense(0, rows.n_rows)
