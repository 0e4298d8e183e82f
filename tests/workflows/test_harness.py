"""The harness workflow shared by ``select``/``estimate`` and the app: id mapping, choice,
estimates, rank intervals, insertion, and one-line refusals that leave the store alone."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.workflows import harness
from lifelong_core.workflows.selection import Selection


@pytest.fixture()
def store(tmp_path):
    """40 simulated models (2PL) on two tasks of 60 and 40 items, ids <task>/<doc_id>."""
    from lifelong_core.store import Store

    rng = np.random.default_rng(7)
    items = [("alpha", i) for i in range(60)] + [("beta", i) for i in range(40)]
    theta, b = rng.normal(0, 1.3, 40), rng.normal(0, 1.3, len(items))
    A = (rng.random((40, len(items))) < 1 / (1 + np.exp(-(theta[:, None] - b)))).astype(np.uint8)
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.add_dataset("sim", "simulated (test)", synthetic=True)
        st.insert_matrix(
            A,
            [f"m{k}" for k in range(40)],
            pd.DataFrame(
                {
                    "sample_id": [f"{t}/{i}" for t, i in items],
                    "dataset": "sim",
                    "domain": [t for t, _ in items],
                }
            ),
        )
    return path


def cache(path):
    from lifelong_core.store import Store

    with Store.open(path) as st:
        return harness.cache_of(st, "sim")


def test_doc_ids_map_domains_to_tasks_and_back():
    smp = pd.DataFrame(
        {"sample_id": ["ifeval/0", "ifeval/7", "musr/0012"], "domain": ["ifeval", "ifeval", "musr"]}
    )
    ids = harness.doc_ids(smp, {"ifeval": "leaderboard_ifeval"})
    assert ids["task"].tolist() == ["leaderboard_ifeval", "leaderboard_ifeval", "musr"]
    assert ids["doc_id"].tolist() == [0, 7, 12]
    with pytest.raises(InputError, match="not <domain>/<doc_id>"):
        harness.doc_ids(pd.DataFrame({"sample_id": ["img-3"], "domain": ["clean"]}))
    with pytest.raises(InputError, match="same lm-eval item"):
        harness.doc_ids(pd.DataFrame({"sample_id": ["a/1", "a/01"], "domain": ["a", "a"]}))
    with pytest.raises(InputError, match="does not have"):
        harness.doc_ids(smp, {"gsm8k": "gsm8k_cot"})
    with pytest.raises(InputError, match="DOMAIN=TASK"):
        harness.parse_task_names(["ifeval"])


def test_select_is_seeded_and_skips_what_is_evaluated(store):
    c = cache(store)
    a = harness.select_items(c, 20, "neighbours", seed=1, model="m1")
    assert len(a.columns) == 20 and np.array_equal(a.columns, np.sort(a.columns))
    assert np.array_equal(
        a.columns, harness.select_items(c, 20, "neighbours", seed=1, model="m1").columns
    )
    done = dict(zip(a.items["sample_id"], c.A[0, a.columns].tolist()))
    b = harness.select_items(c, 15, "neighbours", seed=2, evaluated=done, model="m1")
    assert len(b.columns) == 15 and not set(b.columns) & set(a.columns)
    samples = harness.lm_eval_samples(a)
    assert sum(map(len, samples.values())) == 20 and set(samples) <= {"alpha", "beta"}
    with pytest.raises(InputError, match="not yet evaluated"):
        harness.select_items(c, 90, "neighbours", evaluated=done, model="m1")


def test_select_draws_each_model_its_own_items_unless_common_items_are_asked(store):
    c = cache(store)
    own = {
        name: harness.select_items(c, 20, "random", seed=3, model=name).columns
        for name in ("org/a", "org/b", "org/c")
    }
    # Different models, different items; the same model, the same items.
    assert not np.array_equal(own["org/a"], own["org/b"])
    assert not np.array_equal(own["org/b"], own["org/c"])
    again = harness.select_items(c, 20, "random", seed=3, model="org/a")
    assert np.array_equal(again.columns, own["org/a"]) and again.model == "org/a"
    assert "org/a" in again.describe()
    common = [
        harness.select_items(c, 20, "random", seed=3, draws="common").columns for _ in range(2)
    ]
    assert np.array_equal(*common)
    # A name given with the common draw changes nothing: the set is the seed's.
    named = harness.select_items(c, 20, "random", seed=3, model="org/a", draws="common")
    assert np.array_equal(named.columns, common[0]) and named.model is None
    assert "common item set of seed 3" in named.describe()
    for bad in (None, "", "  "):
        with pytest.raises(InputError, match="name the new model") as exc:
            harness.select_items(c, 20, "random", seed=3, model=bad)
        assert exc.value.param == "model"
    with pytest.raises(InputError, match="unknown item draw"):
        harness.select_items(c, 20, "random", seed=3, model="x", draws="shared")


def test_select_gives_an_adaptive_method_the_results_in_hand(store, monkeypatch):
    c = cache(store)
    seen = {}

    class Adaptive:
        def select_next(self, n, budget, rng, columns, observed):
            seen["args"] = (n, budget, columns.tolist(), observed.tolist())
            return np.setdiff1d(np.arange(n), columns)[:budget]

    done = {"alpha/3": 1, "beta/0": 0}
    out = harness.select_items(c, 4, "x", evaluated=done, fitted=Adaptive(), model="x")
    assert seen["args"] == (100, 4, [3, 60], [1, 0])
    assert out.items["sample_id"].tolist() == ["alpha/0", "alpha/1", "alpha/2", "alpha/4"]


def test_estimate_of_a_held_out_model_and_its_rank(store):
    c = cache(store)
    held = 5
    keep = np.setdiff1d(np.arange(40), [held])
    rest = Selection(c.A[keep], c.models.iloc[keep].reset_index(drop=True), c.samples, c.synthetic)
    choice = harness.select_items(rest, 40, "neighbours", seed=0, model="held")
    obs = dict(zip(choice.items["sample_id"], c.A[held, choice.columns].tolist()))
    est = harness.estimate_new_model(rest, obs, "neighbours")
    t = est.table.set_index("scope")
    assert list(t.index) == ["alpha", "beta", "overall"]
    assert t.loc["overall", "evaluated"] == 40 and t.loc[["alpha", "beta"], "evaluated"].sum() == 40
    truth = c.A[held].mean()
    assert abs(t.loc["overall", "estimate"] - truth) < 0.1
    assert t.loc["overall", "lo"] <= t.loc["overall", "estimate"] <= t.loc["overall", "hi"]
    acc = rest.A.mean(axis=1)
    assert est.rank == int((acc > t.loc["overall", "estimate"]).sum()) + 1
    assert est.rank_lo == int((acc > t.loc["overall", "hi"]).sum()) + 1 <= est.rank <= est.rank_hi
    assert est.m == 39
    text = harness.format_estimate("held", est)
    assert "overall" in text and f"rank {est.rank} of 40" in text
    # Every item evaluated: the estimate is the truth, with no width.
    full = dict(zip(c.samples["sample_id"], c.A[held].tolist()))
    exact = harness.estimate_new_model(rest, full, "neighbours").overall
    assert exact["estimate"] == pytest.approx(truth) and exact["hi"] - exact["lo"] == pytest.approx(
        0
    )


def test_per_task_fits_of_a_self_tuning_method_reuse_the_whole_datasets_tuning(store, monkeypatch):
    from lifelong_core.methods import auto

    monkeypatch.setenv("LBE_TUNING_CACHE", "")  # count cross-validations, not remembered ones
    c = cache(store)
    calls = []
    real = auto.tune_auto
    monkeypatch.setattr(auto, "tune_auto", lambda *a, **k: calls.append(1) or real(*a, **k))
    choice = harness.select_items(c, 30, "auto", seed=0, model="new")
    obs = dict(zip(choice.items["sample_id"], [1, 0] * 15))
    calls.clear()
    from lifelong_core.sweep.protocol import forget_fits

    forget_fits()  # else the estimate reuses select_items' whole fit, cross-validating nothing
    est = harness.estimate_new_model(c, obs, "auto")
    # One cross-validation, on the whole dataset; both tasks' fits reuse its choice.
    assert len(calls) == 1
    t = est.table.set_index("scope")
    assert t.loc[["alpha", "beta"], "evaluated"].sum() == 30
    for task in ("alpha", "beta"):
        assert t.loc[task, "lo"] <= t.loc[task, "estimate"] <= t.loc[task, "hi"]
    tuned = harness.fit(c, "auto")
    assert harness.shared_tuning("auto", tuned) is tuned.tuning_
    assert harness.shared_tuning("neighbours", harness.fit(c, "neighbours")) is None


def test_results_naming_unknown_samples_are_refused(store):
    c = cache(store)
    with pytest.raises(InputError, match="not in dataset 'sim'"):
        harness.estimate_new_model(c, {"alpha/1": 1, "gamma/2": 0}, "reference")
    with pytest.raises(InputError, match="0 or 1"):
        harness.estimate_new_model(c, {"alpha/1": 2}, "reference")


def test_insert_marks_the_row_estimated_and_keeps_real_results(store):
    from lifelong_core.store import Store

    c = cache(store)
    obs = {"alpha/0": 1, "alpha/5": 0, "beta/3": 1, "beta/9": 0}
    est = harness.estimate_new_model(c, obs, "reference")
    with Store.open(store, read_only=False) as w:
        harness.insert_estimated(w, c, "newbie", est, source="test")
    with Store.open(store) as st:
        m = st.models().set_index("model_id").loc["newbie"]
        assert bool(m["estimated"])
        meta = json.loads(m["metadata"])
        assert meta["evaluated_samples"] == list(obs) and meta["method"] == "reference"
        row = st.matrix([int(m["model_idx"])], st.sample_index(list(obs)))[0]
        assert row.tolist() == list(obs.values())
        # The estimated row does not join the cache the next model is compared with.
        assert harness.cache_of(st, "sim").A.shape[0] == 40


def test_cli_refusals_are_one_line_and_write_nothing(store, tmp_path, capsys):
    before = store.read_bytes()
    out = tmp_path / "x.json"
    cases = [
        (
            ["select", "--store", str(store), "--budget", "0", "--model", "x", "--out", str(out)],
            "--budget: the budget must be a positive",
        ),
        (
            ["select", "--store", str(store), "--budget", "5", "--out", str(out)],
            "name the new model with --model NAME",
        ),
        (
            [
                "select",
                "--store",
                str(store),
                "--budget",
                "5",
                "--method",
                "nope",
                "--common-items",
                "--out",
                str(out),
            ],
            "unknown --method",
        ),
        (
            [
                "select",
                "--store",
                str(store),
                "--dataset",
                "zzz",
                "--budget",
                "5",
                "--common-items",
                "--out",
                str(out),
            ],
            "no dataset 'zzz'",
        ),
        (
            [
                "select",
                "--store",
                str(store),
                "--budget",
                "5",
                "--task",
                "gamma=g",
                "--common-items",
                "--out",
                str(out),
            ],
            "domain 'gamma'",
        ),
        (
            [
                "select",
                "--store",
                str(store),
                "--budget",
                "5",
                "--common-items",
                "--out",
                str(tmp_path / "no" / "x.json"),
            ],
            "does not exist",
        ),
        (
            [
                "estimate",
                "--store",
                str(store),
                "--lm-eval",
                str(tmp_path / "nothing"),
                "--model",
                "x",
            ],
            "does not exist",
        ),
    ]
    for argv, words in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and words in err, (argv, err)
    assert not out.exists() and store.read_bytes() == before


def test_cli_select_csv(store, tmp_path, capsys):
    out = tmp_path / "items.csv"
    assert (
        main(
            [
                "select",
                "--store",
                str(store),
                "--budget",
                "12",
                "--method",
                "reference",
                "--format",
                "csv",
                "--model",
                "org/new-7b",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    table = pd.read_csv(out)
    assert list(table.columns) == ["sample_id", "domain"] and len(table) == 12
    said = capsys.readouterr().out
    assert "12 of 100 items of sim" in said and "items drawn for model 'org/new-7b' alone" in said


def test_cli_select_accepts_every_registered_method_and_lists_them_in_help(store, tmp_path, capsys):
    from lifelong_core.methods import available_methods

    with pytest.raises(SystemExit):
        main(["select", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for name in available_methods():
        assert name in help_text, name
    out = tmp_path / "r.json"
    argv = ["select", "--store", str(store), "--budget", "10", "--method", "random"]
    assert main([*argv, "--model", "org/a", "--out", str(out)]) == 0
    assert "chosen by random" in capsys.readouterr().out
    assert sum(map(len, json.loads(out.read_text()).values())) == 10
    # --model and --common-items exclude each other.
    with pytest.raises(SystemExit):
        main([*argv, "--model", "a", "--common-items", "--out", str(out)])


def test_uploads_zip_is_unpacked_safely_and_must_hold_one_run(store, tmp_path):
    import io
    import zipfile

    c = cache(store)
    line = json.dumps({"doc_id": 3, "filter": "none", "metrics": ["acc"], "acc": 1.0}) + "\n"
    ts = "2026-11-23T05-00-00.000001"

    def zipped(members: dict) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for name, text in members.items():
                zf.writestr(name, text)
        return buf.getvalue()

    one = zipped({f"out/m/samples_alpha_{ts}.jsonl": line})
    obs = harness.observations_from_uploads([("run.zip", one)], c)
    assert obs.values == {"alpha/3": 1}
    # The one extraction of every path: a member outside the archive refuses the upload,
    # as `import --lm-eval x.zip` does, and nothing is written outside it.
    bad = zipped({f"out/m/samples_alpha_{ts}.jsonl": line, "../escape.txt": "x"})
    with pytest.raises(InputError, match="a path outside the archive"):
        harness.observations_from_uploads([("run.zip", bad)], c)
    assert not (tmp_path.parent / "escape.txt").exists()
    two = zipped({f"out/a/samples_alpha_{ts}.jsonl": line, f"out/b/samples_alpha_{ts}.jsonl": line})
    with pytest.raises(InputError, match="2 run folders"):
        harness.observations_from_uploads([("run.zip", two)], c)
    with pytest.raises(InputError, match="neither a samples_"):
        harness.observations_from_uploads([("notes.txt", b"hi")], c)
    with pytest.raises(InputError, match="no files uploaded"):
        harness.observations_from_uploads([], c)


def test_random_baseline_estimates_per_task_and_has_nothing_to_insert(store):
    from lifelong_core.store import Store

    c = cache(store)
    held = 7
    keep = np.setdiff1d(np.arange(40), [held])
    rest = Selection(c.A[keep], c.models.iloc[keep].reset_index(drop=True), c.samples, c.synthetic)
    choice = harness.select_items(rest, 30, "random", seed=0, model="held")
    obs = dict(zip(choice.items["sample_id"], c.A[held, choice.columns].tolist()))
    est = harness.estimate_new_model(rest, obs, "random")
    t = est.table.set_index("scope")
    # The overall estimate is the sample mean; each task's, its own evaluated share.
    assert t.loc["overall", "estimate"] == pytest.approx(np.mean(list(obs.values())))
    for task in ("alpha", "beta"):
        mine = [v for k, v in obs.items() if k.startswith(task + "/")]
        assert t.loc[task, "estimate"] == pytest.approx(np.mean(mine))
        assert t.loc[task, "lo"] <= t.loc[task, "estimate"] <= t.loc[task, "hi"]
    with (
        Store.open(store, read_only=False) as w,
        pytest.raises(InputError, match="no estimated row"),
    ):
        harness.insert_estimated(w, rest, "held", est, source="test")


def test_first_n_runs_what_lm_eval_limit_runs(store, tmp_path):
    """``select --method first-n`` names the first items of each task (5 + 5 of the two
    tasks' 60 and 40, as ``--limit 5`` would), and ``estimate`` gives their share right."""
    out = tmp_path / "items.csv"
    argv = ["select", "--store", str(store), "--budget", "11", "--method", "first-n"]
    argv += ["--model", "org/new", "--format", "csv", "--out", str(out)]
    assert main(argv) == 0
    items = pd.read_csv(out)["sample_id"].tolist()
    assert items == [f"alpha/{i}" for i in range(6)] + [f"beta/{i}" for i in range(5)]
    c = cache(store)
    held = 5
    keep = np.setdiff1d(np.arange(40), [held])
    rest = Selection(c.A[keep], c.models.iloc[keep].reset_index(drop=True), c.samples, c.synthetic)
    cols = c.samples.index[c.samples["sample_id"].isin(items)].to_numpy()
    obs = dict(zip(c.samples["sample_id"].iloc[cols], c.A[held, cols].tolist()))
    t = harness.estimate_new_model(rest, obs, "first-n").table.set_index("scope")
    assert t.loc["overall", "estimate"] == pytest.approx(c.A[held, cols].mean())
    assert t.loc["alpha", "estimate"] == pytest.approx(c.A[held, :6].mean())
