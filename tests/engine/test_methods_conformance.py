"""One conformance battery for every registered search method (lifelong_core.methods).

In the spirit of scikit-learn's ``parametrize_with_checks``: every check runs on every
name in the registry, so a method is added by writing its module and one ``register``
line, and it is checked here with no test of its own. ``TinyMajority`` below is such a
method, defined and registered in this file: it passes the battery and runs in the
command line's ``sweep``. Every check calls ``fit(A)`` as the contract allows, without
an order: a method that needs one derives it from the cache.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError, NotFittedError
from lifelong_core.methods import (
    DEFAULT_METHOD,
    BaseMethod,
    Estimate,
    SearchMethod,
    available_methods,
    capabilities,
    check_fitted,
    check_observations,
    get_method,
    method_spec,
    methods_with,
    register,
    unregister,
)
from lifelong_core.methods.registry import kept_method
from lifelong_core.sortsearch.search import check_budget
from lifelong_core.sortsearch.sort import choose_sort_rows, sort_by_sum
from lifelong_core.sweeping import run_sweep


class TinyMajority(BaseMethod):
    """Evaluate the first ``budget`` samples; predict the rest as their majority."""

    name = "tiny-majority"

    def __init__(self, tie: int = 1):
        self.tie = tie

    def _validate_params(self):
        if self.tie not in (0, 1):
            raise InputError(f"tie must be 0 or 1, got {self.tie!r}.", param="tie")

    def fit(self, A_sort, order=None, confidence=None):
        self._validate_params()
        self.n_ = np.asarray(A_sort).shape[1]
        return self

    def select(self, n, budget, rng=None):
        check_fitted(self, "n_")
        if n != self.n_:
            raise InputError(f"fitted on {self.n_} samples, not {n}.")
        check_budget(n, budget)
        return np.arange(budget, dtype=np.int64)

    def estimate(self, indices, observed):
        check_fitted(self, "n_")
        idx, obs = check_observations(indices, observed, self.n_)
        majority = 2 * obs.sum() > len(obs) or (2 * obs.sum() == len(obs) and self.tie == 1)
        y = np.full(self.n_, int(majority), dtype=np.uint8)
        y[idx] = obs
        return Estimate(float(y.mean()), None, None, y)


TINY = "tiny-majority"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def tiny_registered():
    register(TINY, TinyMajority)  # the one line that adds a method
    yield
    unregister(TINY)


NAMES = [*available_methods(kind=None), TINY]


def cache(seed: int = 0, m: int = 14, n: int = 60) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logit = rng.normal(0.3, 1, (m, 1)) - rng.normal(0, 1.5, (1, n))
    return (rng.random((m, n)) < 1 / (1 + np.exp(-logit))).astype(np.uint8)


def setup(name: str):
    """A fitted method, the length ``n`` of the row it estimates and a true new row."""
    A = cache()
    kind = method_spec(name).kind
    if kind == "model":
        A_sort, new = A[:-1], A[-1]
    else:
        A_sort, new = A[:, :-1], A[:, -1]
    return get_method(name).fit(A_sort), len(new), new


@pytest.mark.parametrize("name", NAMES)
def test_follows_the_protocol_and_fit_returns_self(name):
    method = get_method(name)
    assert isinstance(method, SearchMethod) and isinstance(method, BaseMethod)
    assert method.name == name
    A = cache()
    assert method.fit(A) is method


@pytest.mark.parametrize("name", [n for n in NAMES if n == TINY or method_spec(n).kind == "model"])
def test_fit_without_an_order_uses_the_sort_order(name):
    """``fit(A)`` is ``fit(A, order)`` with the Sort's order (Sorting by Sum; ties stable,
    or as Listing 1 breaks them for the published ``reference`` rule): the same selections
    and estimates."""
    A = cache(3)
    A_sort, new = A[:-1], A[-1]
    a = get_method(name).fit(A_sort)
    ties = "reference" if a.get_params().get("rule") == "reference" else "stable"
    b = get_method(name).fit(A_sort, sort_by_sum(A_sort, ties))
    n = A.shape[1]
    for budget in (3, 11):
        ia = a.select(n, budget, np.random.default_rng(7))
        ib = b.select(n, budget, np.random.default_rng(7))
        assert np.array_equal(ia, ib)
        ea, eb = a.estimate(ia, new[ia]), b.estimate(ib, new[ib])
        assert ea.acc == eb.acc and np.array_equal(ea.per_sample, eb.per_sample)


@pytest.mark.parametrize("name", NAMES)
def test_parameters_repr_and_no_work_in_init(name):
    """scikit-learn's estimator rules: ``get_params`` returns the settings ``__init__``
    took, ``set_params`` and a rebuild from them give the same method, the ``repr`` names
    the class and its changed settings, and ``__init__`` stores its settings and nothing
    else (no fitted state, no check)."""
    method = get_method(name)
    params = method.get_params()
    text = repr(method)
    assert text.startswith(type(method).__name__ + "(") and " at 0x" not in text
    rebuilt = type(method)(**params)
    assert rebuilt.get_params().keys() == params.keys() and repr(rebuilt) == text
    assert not [k for k in vars(rebuilt) if k.endswith("_") and not k.startswith("_")]
    assert method.set_params(**params) is method
    with pytest.raises(InputError, match="no setting"):
        method.set_params(no_such_setting=1)


def test_settings_are_checked_in_fit_and_by_the_registry():
    A = cache()
    method = get_method(TINY).set_params(tie=5)  # stored as given
    with pytest.raises(InputError, match="tie must be 0 or 1"):
        method.fit(A)
    with pytest.raises(InputError, match="tie must be 0 or 1"):
        get_method(TINY, tie=5)
    assert repr(get_method(TINY, tie=0)) == "TinyMajority(tie=0)"


def test_a_name_collision_is_refused_unless_replacement_is_said():
    with pytest.raises(InputError, match="already registered"):
        register(DEFAULT_METHOD, TinyMajority)
    assert get_method(DEFAULT_METHOD).name == DEFAULT_METHOD
    assert type(get_method(DEFAULT_METHOD)).__name__ != "TinyMajority"
    register(TINY, TinyMajority, replace=True, tie=0)
    assert get_method(TINY).get_params() == {"tie": 0}


@pytest.mark.parametrize("name", NAMES)
def test_unfitted_methods_raise_not_fitted(name):
    method = get_method(name)
    with pytest.raises(NotFittedError):
        method.select(10, 2, np.random.default_rng(0))
    with pytest.raises(NotFittedError):
        method.estimate(np.array([0, 1]), np.array([1, 0]))
    assert not issubclass(NotFittedError, InputError)


@pytest.mark.parametrize("name", NAMES)
def test_select_returns_exactly_budget_sorted_distinct_indices(name):
    method, n, _ = setup(name)
    for budget in (1, 2, 7, n):
        got = method.select(n, budget, np.random.default_rng(3))
        assert got.dtype == np.int64 and got.ndim == 1 and len(got) == budget
        assert np.all(np.diff(got) > 0) and got[0] >= 0 and got[-1] < n
        again = setup(name)[0]
        assert np.array_equal(got, again.select(n, budget, np.random.default_rng(3)))


@pytest.mark.parametrize("name", NAMES)
def test_select_refuses_bad_budgets_and_sizes(name):
    method, n, _ = setup(name)
    for budget in (0, n + 1):
        with pytest.raises(InputError):
            method.select(n, budget, np.random.default_rng(0))
    with pytest.raises(InputError):
        method.select(n + 5, 2, np.random.default_rng(0))


@pytest.mark.parametrize("name", NAMES)
def test_estimate_contract(name):
    method, n, new = setup(name)
    for budget in (1, 8, n):
        idx = method.select(n, budget, np.random.default_rng(1))
        est = method.estimate(idx, new[idx])
        assert isinstance(est, Estimate)
        y = np.asarray(est.per_sample)
        assert y.dtype == np.uint8 and y.shape == (n,) and set(np.unique(y)) <= {0, 1}
        assert 0.0 <= est.acc <= 1.0
        if est.lo is not None:
            assert 0.0 <= est.lo <= est.acc + 1e-12 and est.acc <= est.hi + 1e-12 and est.hi <= 1.0
        if est.prob is not None:
            assert est.prob.shape == (n,) and np.all((est.prob >= 0) & (est.prob <= 1))


@pytest.mark.parametrize("name", NAMES)
def test_estimate_refuses_bad_observations(name):
    method, n, new = setup(name)
    idx = method.select(n, 6, np.random.default_rng(2))
    obs = new[idx]
    with pytest.raises(InputError):
        method.estimate(idx, obs[:-1])
    bad = obs.copy()
    bad[0] = 2
    with pytest.raises(InputError):
        method.estimate(idx, bad)
    with pytest.raises(InputError):
        method.estimate(np.append(idx[:-1], n + 3), obs)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_and_inputs_untouched(name):
    A = cache()
    before = A.copy()
    one, n, new = setup(name)
    two = setup(name)[0]
    idx = one.select(n, 9, np.random.default_rng(4))
    obs = new[idx].copy()
    a, b = one.estimate(idx, obs), two.estimate(idx, obs)
    assert a.acc == b.acc and np.array_equal(a.per_sample, b.per_sample)
    assert np.array_equal(obs, new[idx]) and np.array_equal(A, before)


@pytest.mark.parametrize("name", [n for n in NAMES if n == TINY or method_spec(n).kind == "model"])
def test_runs_in_the_sweep(name):
    A = cache(5, m=20, n=80)
    res = run_sweep(A[:8], A[8:], [4, 16], search=name, seed=1)
    assert res.table["budget"].tolist() == [4, 16]
    assert res.per_model["eagg"].between(0, 1).all() and len(res.per_model) == 2 * 12
    # Sample-level scores exist exactly for the methods that declare per-sample prediction.
    per_sample = name == TINY or capabilities(name).per_sample
    for col in ("mae", "kappa"):
        scored = res.per_model[col].notna()
        assert scored.all() if per_sample else not scored.any()
    if per_sample:
        assert res.per_model["mae"].between(0, 1).all()


def test_a_method_registered_in_one_line_runs_in_the_command_line(tmp_path, capsys):
    A = cache(6, m=20, n=80)
    np.save(tmp_path / "A.npy", A)
    assert TINY in available_methods()
    code = main(
        [
            "sweep",
            "--matrix",
            str(tmp_path / "A.npy"),
            "--sort-models",
            "5",
            "--budgets",
            "4,40",
            "--method",
            TINY,
            "--out",
            str(tmp_path / "s.csv"),
            "--per-model",
            str(tmp_path / "p.csv"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    pm = pd.read_csv(tmp_path / "p.csv")
    # At budget 40 the first 40 samples are observed and the other 40 take their majority.
    rows = pm[pm["budget"] == 40].sort_values("model_row")
    ev = np.setdiff1d(np.arange(20), choose_sort_rows(20, 5, 0))
    maj = (2 * A[ev, :40].sum(axis=1) >= 40).astype(float)
    want = (A[ev, :40].sum(axis=1) + 40 * maj) / 80
    np.testing.assert_allclose(rows["est_acc"].to_numpy(), want)


def test_unregistered_names_are_refused_in_one_sentence():
    unregister(TINY)
    assert TINY not in available_methods()
    with pytest.raises(InputError, match="unknown search method 'tiny-majority'"):
        get_method(TINY)


def test_a_method_registered_in_one_line_is_offered_by_the_page_pickers(
    demo_store_path, monkeypatch
):
    """The app's pickers list the registry: the tiny method is offered, and runs, on the
    "Evaluate something new" page (AppTest runs the page in this process)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("LBE_STORE", str(demo_store_path))
    at = AppTest.from_file(str(ROOT / "pages" / "3_Evaluate_something_new.py"), default_timeout=240)
    at.query_params["search"] = TINY
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    picker = next(w for w in at.selectbox if w.label == "Method")
    assert TINY in picker.options and picker.value == TINY


@pytest.mark.parametrize("name", NAMES)
def test_declared_interval_matches_the_estimates(name):
    """A method declaring an interval returns one that holds its estimate; one that
    declares none returns none (pages label methods by this declaration)."""
    method, n, new = setup(name)
    cols = method.select(n, 9, np.random.default_rng(1))
    est = method.estimate(cols, new[cols])
    if capabilities(name).interval:
        assert est.lo is not None and est.hi is not None
        assert est.lo <= est.acc <= est.hi
        # The result records its level (every method's default is 95%) and says it.
        assert est.level == 0.95 and f"95% interval [{est.lo:.4f}, {est.hi:.4f}]" in str(est)
    else:
        assert est.lo is None and est.hi is None and "no interval" in str(est)


@pytest.mark.parametrize("name", NAMES)
def test_declared_per_sample_prediction_is_a_full_row(name):
    method, n, new = setup(name)
    cols = method.select(n, 9, np.random.default_rng(2))
    est = method.estimate(cols, new[cols])
    if capabilities(name).per_sample:
        assert est.per_sample is not None and len(est.per_sample) == n
        assert set(np.unique(est.per_sample)) <= {0, 1}


def test_threshold_rules_declare_what_the_fast_path_gives():
    rules = methods_with(threshold_rule=True)
    assert rules, "the threshold rules are registered"
    for name in rules:
        caps = capabilities(name)
        assert caps.family == "sort-search" and caps.packed and caps.dask and caps.cheap
    # The dask executor refuses a method that does not declare it, before any work.
    A = cache(m=20, n=40)
    for name in methods_with(dask=False):
        with pytest.raises(InputError, match="dask"):
            run_sweep(A[:10], A[10:], [4], search=name, executor="dask")


def test_default_method_is_registered_and_estimates_a_model():
    assert DEFAULT_METHOD in available_methods(kind="model")
    assert kept_method() in methods_with(kept_state=True)


# Front ends (pages, ui, commands, workflows) decide what a method can do from its
# declared capabilities. A literal comparison with a registered name is a decision taken
# by name, which a newly registered method would silently miss.
FRONT_ENDS = ("pages", "ui", "app.py", "lifelong_core/commands", "lifelong_core/workflows")


def test_front_ends_never_compare_a_method_name():
    import re

    names = "|".join(re.escape(m) for m in available_methods(kind=None))
    compare = re.compile(
        rf"""(==|!=|\bin\b|\bnot in\b)\s*\(?\s*["']({names})["']|["']({names})["']\s*(==|!=|\bin\b)"""
    )
    found = []
    for tree in FRONT_ENDS:
        path = ROOT / tree
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for f in files:
            for i, line in enumerate(f.read_text().splitlines(), 1):
                if compare.search(line):
                    found.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, "decided by method name:\n" + "\n".join(found)


# first-n reports the interval its users compute (zero width when every item is right): its
# own tests check that; it does not depend on the cache.
SMALL = [n for n in available_methods() if capabilities(n).interval and n != "first-n"]


@pytest.mark.parametrize("models", [1, 2, 3])
@pytest.mark.parametrize("name", SMALL)
def test_no_zero_width_interval_on_a_cache_too_small(name, models):
    """On a cache of one to three models, a method either refuses it in one sentence or
    gives a 95% interval of positive width that holds what the evaluated share allows:
    4 of 5 right is consistent with 57.5%, all 5 right with 100% (a cache of two models
    once gave 0.7675 [0.7675, 0.7675] and 0.930 [0.930, 0.930] there)."""
    A = cache(9, m=models, n=40)
    try:
        method = get_method(name).fit(A, sort_by_sum(A))
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).endswith(".")
        return
    cols = method.select(40, 5, np.random.default_rng(4))
    for obs, truth in (([1, 1, 1, 1, 0], 0.575), ([1] * 5, 1.0), ([0] * 5, 0.0)):
        est = method.estimate(cols, np.asarray(obs, dtype=np.uint8))
        assert est.lo is not None and est.hi is not None
        assert est.hi - est.lo > 0.1, (obs, est.lo, est.hi)
        assert est.lo <= truth <= est.hi, (obs, est.lo, est.hi)
