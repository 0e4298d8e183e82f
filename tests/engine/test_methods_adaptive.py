"""Adaptive evaluation: its rounds are the active design's (whose unbiasedness
tests/engine/test_methods_active.py checks), coverage in a seeded simulation, the stopping
rule, replay of rounds, self-tuning and the command line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.methods.adaptive import (
    AdaptiveSampler,
    IRTPredictor,
    ThresholdPredictor,
    simulate,
)
from lifelong_core.methods.adaptive_method import AdaptiveMethod
from lifelong_core.methods.irt import fit_item_model
from lifelong_core.methods.tuning import TunedEstimator, tune
from lifelong_core.sortsearch.sort import order_from_sums


class RunningMean:
    """A predictor that adapts to every result: P(correct) = (successes + 1) / (results + 2)
    for every sample, plus a per-sample tilt so the design is not uniform."""

    def __init__(self, n):
        self.n = n
        self.tilt = np.linspace(-0.3, 0.3, n)

    def predict(self, cols, obs):
        base = (np.sum(obs) + 1.0) / (len(obs) + 2.0)
        return np.clip(base + self.tilt, 0.01, 0.99)


def _irt_data(seed=0, m=80, n=400, shift=0.0):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(m, 2))
    w = rng.gamma(2.0, 0.6, size=(n, 2))
    d = rng.normal(size=n)
    P = 1 / (1 + np.exp(-(d + theta @ w.T)))
    A = (rng.random((m, n)) < P).astype(np.uint8)
    new_theta = rng.normal(size=(40, 2)) + shift
    Pn = 1 / (1 + np.exp(-(d + new_theta @ w.T)))
    return A, (rng.random((40, n)) < Pn).astype(np.uint8)


def test_the_rounds_are_the_active_design_s():
    """The first round is the stratified pilot (two items per stratum along the order), every
    later one a zone round of the active design over what is left: the design's own
    estimator takes the rounds as they were recorded (it refuses any round it would not
    draw) and gives the sampler's estimate."""
    from lifelong_core.methods.design import strata_bounds

    A, new = _irt_data()
    n = A.shape[1]
    pred = IRTPredictor(fit_item_model(A, k=2))
    s = AdaptiveSampler(pred, n, order=np.arange(n))
    run = simulate(s, new[0], seed=4, max_budget=60, min_round=12)
    first = s.rounds[0][0]
    assert len(first) == 15  # a quarter of the 60, above the smallest round
    per = np.bincount(np.searchsorted(strata_bounds(n, 15), first, side="right") - 1)
    assert per.min() >= 2 and len(per) == 7
    again = s.design.interval(s.rounds)
    assert (again[0], again[1], again[2]) == pytest.approx(
        (run.estimate.acc, run.estimate.lo, run.estimate.hi)
    )
    # A second round of the first items along the order is not one per zone: refused.
    zones = s.design.zones(*s.rounds[0], len(s.rounds[1][0]))
    bad = np.sort(zones.rest[: len(s.rounds[1][0])])
    with pytest.raises(InputError, match="not the ones its design draws"):
        s.design.interval([s.rounds[0], (bad, new[0][bad])])


@pytest.mark.parametrize("shift", [0.0, 2.5])
def test_interval_coverage_in_seeded_simulation(shift):
    """95% intervals cover 89-99.5% of runs, also for models better than every cached one,
    and the estimate is unbiased within its simulation error (the widths against a random
    sample's are measured on the benchmarks page)."""
    A, new = _irt_data(shift=shift)
    if shift:
        assert new.mean(axis=1).min() > np.median(A.mean(axis=1))
    n, b = A.shape[1], 80
    pred = IRTPredictor(fit_item_model(A, k=2))
    hits, errs, widths, srs = [], [], [], []
    for rep in range(5):
        for i, row in enumerate(new):
            run = simulate(AdaptiveSampler(pred, n), row, seed=rep * 100 + i, max_budget=b)
            e = run.estimate
            mu = row.mean()
            hits.append(e.lo <= mu <= e.hi)
            errs.append(e.acc - mu)
            widths.append(e.hi - e.lo)
            srs.append(2 * 1.96 * np.sqrt(mu * (1 - mu) / b * (1 - b / n)))
    assert 0.89 <= np.mean(hits) <= 0.995
    # Simulated unbiasedness of the default estimator: mean error within 4 SE of 0.
    assert abs(np.mean(errs)) <= 4 * np.std(errs) / np.sqrt(len(errs))


def test_stopping_rule_stops_at_target_and_respects_max_budget():
    A, new = _irt_data()
    pred = IRTPredictor(fit_item_model(A, k=2))
    run = simulate(AdaptiveSampler(pred, A.shape[1]), new[0], seed=1, until_halfwidth=0.05)
    assert run.stopped == "target"
    assert run.rounds[-1].half <= 0.05 and all(
        r.half > 0.05 for r in run.rounds[:-1] if r.evaluated >= 16
    )
    assert len(run.columns) == run.rounds[-1].evaluated < A.shape[1]
    capped = simulate(
        AdaptiveSampler(pred, A.shape[1]), new[0], seed=1, until_halfwidth=0.001, max_budget=50
    )
    assert capped.stopped == "budget" and len(capped.columns) == 50
    assert len(np.unique(capped.columns)) == 50
    full = simulate(AdaptiveSampler(pred, A.shape[1]), new[0], seed=1)
    assert full.stopped == "exhausted"
    assert full.estimate.acc == full.estimate.lo == full.estimate.hi == pytest.approx(new[0].mean())


def test_checkpoints_are_hit_exactly_and_replay_rebuilds_the_state():
    A, new = _irt_data()
    pred = IRTPredictor(fit_item_model(A, k=2))
    run = simulate(
        AdaptiveSampler(pred, A.shape[1]), new[3], seed=7, max_budget=100, checkpoints=(32, 64, 100)
    )
    assert sorted(run.checkpoints) == [32, 64, 100]
    sizes = np.diff([0] + [r.evaluated for r in run.rounds])
    bounds = np.cumsum(sizes)
    rounds = [(run.columns[b - s : b], run.observed[b - s : b]) for s, b in zip(sizes, bounds)]
    from lifelong_core.methods.adaptive import replay

    again = replay(AdaptiveSampler(pred, A.shape[1]), rounds, seed=7)
    assert again.estimate().acc == pytest.approx(run.estimate.acc)
    with pytest.raises(InputError, match="not the ones this design drew"):
        replay(AdaptiveSampler(pred, A.shape[1]), rounds, seed=8)


def test_sampler_rejects_bad_rounds():
    A, new = _irt_data()
    s = AdaptiveSampler(IRTPredictor(fit_item_model(A, k=1)), A.shape[1])
    with pytest.raises(InputError):
        s.estimate()
    cols = s.propose(4, np.random.default_rng(0))
    with pytest.raises(InputError, match="results have not been recorded"):
        s.propose(4, np.random.default_rng(1))
    with pytest.raises(InputError, match="round just proposed"):
        s.record(cols[::-1], new[0][cols])
    with pytest.raises(InputError, match="0/1"):
        s.record(cols, np.full(4, 2))


def test_threshold_predictor_is_sort_and_search():
    order = np.array([2, 0, 1, 3])
    p = ThresholdPredictor(order, 0.5).predict(np.array([2, 3]), np.array([1, 0]))
    assert set(np.unique(p)) <= {0.0, 1.0} and p[2] == 1 and p[3] == 0


def test_tuning_small_and_larger_cache():
    A, _ = _irt_data(m=12, n=200)
    res = tune(A)
    assert res.kind in ("irt", "threshold") and res.folds == 5
    assert res.table[0]["kind"] == "threshold" and len(res.table) >= 2
    order = order_from_sums(A.sum(axis=0))
    est = TunedEstimator().fit(A, order)
    cols = est.select(200, 40, np.random.default_rng(0))
    e = est.estimate(cols, A[0, cols])
    assert e.lo <= e.acc <= e.hi and e.per_sample.shape == (200,)
    tiny = tune(A[:5])
    assert tiny.folds == 5  # leave-one-out below 10 models


def test_tuned_estimator_falls_back_to_threshold_and_keeps_a_valid_interval():
    # A Guttman cache (every model a threshold on one order) is exactly Sort & Search's model.
    n = 120
    acc = np.linspace(0.1, 0.9, 9)
    A = (np.arange(n)[None, :] < (acc[:, None] * n)).astype(np.uint8)
    est = TunedEstimator().fit(A, order_from_sums(A.sum(axis=0)))
    assert est.tuning_.kind == "threshold"
    row = (np.arange(n) < 50).astype(np.uint8)
    cols = est.select(n, 20, np.random.default_rng(0))
    e = est.estimate(cols, row[cols])
    assert e.lo <= 50 / n <= e.hi


def test_adaptive_method_end_to_end():
    A, new = _irt_data(m=30, n=150)
    method = AdaptiveMethod().fit(A)
    run = method.simulate(new[0], seed=0, until_halfwidth=0.1, max_budget=120)
    assert run.stopped in ("target", "budget") and len(run.columns) <= 120
    assert run.estimate.per_sample.shape == (150,)


def _cli_matrix(tmp_path):
    A, _ = _irt_data(m=25, n=120)
    path = tmp_path / "A.npy"
    np.save(path, A)
    return path, A


def test_cli_adaptive_writes_rounds(tmp_path, capsys):
    path, _A = _cli_matrix(tmp_path)
    out = tmp_path / "rounds.csv"
    assert (
        main(
            [
                "adaptive",
                "--matrix",
                str(path),
                "--row",
                "3",
                "--until-halfwidth",
                "0.08",
                "--max-budget",
                "100",
                "--no-tune",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    df = pd.read_csv(out)
    assert list(df.columns) == ["round", "evaluated", "acc", "lo", "hi", "half"]
    assert df.evaluated.is_monotonic_increasing and df.evaluated.iloc[-1] <= 100
    assert df.half.iloc[-1] <= 0.08 or df.evaluated.iloc[-1] == 100
    assert "simulated" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--row", "99", "--until-halfwidth", "0.05"], "--row 99"),
        (["--row", "1", "--until-halfwidth", "5"], "--until-halfwidth"),
        (["--row", "1", "--max-budget", "0"], "--max-budget"),
        (["--row", "1"], "--until-halfwidth"),
        (["--row", "x", "--max-budget", "5"], "invalid int"),
    ],
)
def test_cli_adaptive_bad_input_one_line_exit_2(tmp_path, capsys, extra, needle):
    path, _ = _cli_matrix(tmp_path)
    with pytest.raises(SystemExit) if extra[1] == "x" else _nullcontext() as ctx:
        code = main(["adaptive", "--matrix", str(path), *extra, "--out", str(tmp_path / "r.csv")])
    code = ctx.value.code if extra[1] == "x" else code
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.csv").exists()


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def test_round_trip_through_files_matches_simulation():
    from lifelong_core.methods.adaptive import advance

    A, new = _irt_data()
    pred = IRTPredictor(fit_item_model(A, k=2))
    n = A.shape[1]
    row = new[5]
    sim = simulate(AdaptiveSampler(pred, n), row, seed=3, until_halfwidth=0.06, max_budget=200)
    results: dict[int, int] = {}
    for _ in range(100):
        prog = advance(
            AdaptiveSampler(pred, n), results, seed=3, until_halfwidth=0.06, max_budget=200
        )
        if prog.next_columns is None:
            break
        results.update({int(c): int(row[c]) for c in prog.next_columns})  # "run the harness"
    assert prog.stopped == sim.stopped
    assert [r.evaluated for r in prog.rounds] == [r.evaluated for r in sim.rounds]
    assert prog.rounds[-1].acc == pytest.approx(sim.estimate.acc)
    partial = dict(list(results.items())[:-1])
    with pytest.raises(InputError, match="incomplete"):
        advance(AdaptiveSampler(pred, n), partial, seed=3, until_halfwidth=0.06, max_budget=200)


def test_cli_round_trip_through_files_matches_simulation(tmp_path, capsys):
    path, A = _cli_matrix(tmp_path)
    rows = tmp_path / "cache.txt"
    rows.write_text("\n".join(str(i) for i in range(1, 25)))
    common = [
        "--matrix",
        str(path),
        "--sort-rows",
        str(rows),
        "--until-halfwidth",
        "0.1",
        "--max-budget",
        "90",
        "--seed",
        "4",
        "--no-tune",
    ]
    sim_out = tmp_path / "sim.csv"
    assert main(["adaptive", *common, "--row", "0", "--out", str(sim_out)]) == 0
    done = tmp_path / "done.csv"
    nxt, out = tmp_path / "next.csv", tmp_path / "rounds.csv"
    results = pd.DataFrame({"column": [], "correct": []})
    for _ in range(30):
        extra = ["--results", str(done)] if len(results) else []
        assert main(["adaptive", *common, *extra, "--next", str(nxt), "--out", str(out)]) == 0
        cols = pd.read_csv(nxt)["column"].to_numpy()
        if len(cols) == 0:
            break
        # "Run the model": row 0's stored results on the listed columns.
        results = pd.concat([results, pd.DataFrame({"column": cols, "correct": A[0, cols]})])
        results.astype(int).to_csv(done, index=False)
    assert "stopped on" in capsys.readouterr().out
    pd.testing.assert_frame_equal(pd.read_csv(out), pd.read_csv(sim_out))


@pytest.mark.parametrize(
    "content, needle",
    [
        ("column,correct\n0,1\n0,1\n", "repeats column 0"),
        ("column,correct\n999,1\n", "not a sample index"),
        ("col,correct\n1,1\n", "exactly the columns"),
    ],
)
def test_cli_round_trip_bad_results_one_line(tmp_path, capsys, content, needle):
    path, _ = _cli_matrix(tmp_path)
    res = tmp_path / "done.csv"
    res.write_text(content)
    code = main(
        [
            "adaptive",
            "--matrix",
            str(path),
            "--results",
            str(res),
            "--next",
            str(tmp_path / "n.csv"),
            "--max-budget",
            "50",
            "--no-tune",
            "--out",
            str(tmp_path / "r.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
