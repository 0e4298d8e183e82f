"""run_sweep plans once: the rows' form, the method's registered capabilities and the
request decide the path, the kernel and how the Sort rows are read (sweeping.plan)."""

from __future__ import annotations

import numpy as np
import pytest

from lifelong_core.errors import InputError
from lifelong_core.rows import PackedArray
from lifelong_core.sweeping import plan_sweep, run_sweep


@pytest.fixture(scope="module")
def A():
    rng = np.random.default_rng(2)
    return (rng.random((30, 400)) < 0.6).astype(np.uint8)


def plan(rows, search, **kw):
    kw.setdefault("sampling", "random" if search == "copy-nearest" else "uniform")
    return plan_sweep(rows, search=search, **kw)


def test_plans(A):
    packed = PackedArray.from_dense(A)
    p = plan(A, "midpoint")
    assert (p.form, p.path, p.kernel, p.sort_step) == ("dense", "threshold", "packed", "streamed")
    p = plan(A, "midpoint", decompose=True)
    assert (p.form, p.path, p.kernel, p.sort_step) == ("dense", "threshold", "dense", "in place")
    assert plan(A, "midpoint", sort="confidence").kernel == "dense"
    p = plan(packed, "midpoint", bounded=True)
    assert (p.form, p.kernel, p.sort_step) == ("packed", "packed", "streamed")
    assert plan(packed, "midpoint", bounded=True, decompose=True).kernel == "dense"
    assert plan(packed, "copy-nearest", bounded=True).path == "packed-sweep"
    p = plan(packed, "copy-nearest", bounded=True, sort="recursive")
    assert (p.path, p.fit, p.sort_step) == ("method", "dense", "read")
    p = plan(packed, "mirt", bounded=True)
    assert (p.path, p.fit, p.sort_step, p.sort_kernel) == ("method", "packed", "streamed", "packed")
    assert plan(packed, "mirt").fit == "dense"
    assert plan(A, "midpoint", threads=4).executor == "threads"
    with pytest.raises(InputError, match="threshold rules only") as err:
        plan(A, "mirt", decompose=True)
    assert err.value.param == "decompose"
    with pytest.raises(InputError, match="packed kernel runs the threshold rules only"):
        plan(A, "mirt", kernel="packed")


def test_a_bounded_packed_fit_reports_progress_in_order(A):
    seen = []
    res = run_sweep(
        PackedArray.from_dense(A, np.arange(10)),
        PackedArray.from_dense(A, np.arange(10, 30)),
        (8, 32),
        search="irt",
        bounded=True,
        progress=seen.append,
    )
    assert set(res.per_model["model_row"]) == set(range(10, 30))
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    assert res.config["kernel"] == "dense" and res.config["search"] == "irt"
