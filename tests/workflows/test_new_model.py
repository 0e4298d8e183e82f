"""The new-model loop shared by ``select``/``estimate``, the API and the app: harness item
names, choice, estimates, rank intervals, insertion, and one-line refusals that leave the
store alone."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lifelong_core.cli import main
from lifelong_core.errors import InputError
from lifelong_core.io import harness_items
from lifelong_core.workflows import item_choice, new_model
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
        return item_choice.cache_of(st, "sim")


def test_item_ids_name_tasks_and_items_and_refuse_what_a_harness_cannot_take():
    smp = pd.DataFrame(
        {
            "sample_id": ["ifeval/0", "ifeval/7", "musr/0012", "x/a:b/c"],
            "domain": ["ifeval", "ifeval", "musr", "x"],
        }
    )
    lm = smp.iloc[:3]
    ids = harness_items.item_ids(lm, {"ifeval": "leaderboard_ifeval"})
    assert ids["task"].tolist() == ["leaderboard_ifeval", "leaderboard_ifeval", "musr"]
    assert ids["item"].tolist() == [0, 7, 12]
    # The task is the text before the first slash: an Inspect id may hold slashes and colons.
    got = harness_items.item_ids(smp, harness="inspect")
    assert got["task"].tolist()[-1] == "x" and got["item"].tolist()[-1] == "a:b/c"
    assert harness_items.inspect_sample_ids(smp.iloc[[0, 3]]) == "ifeval:0,x:a:b/c"
    # A domain need not be the task: the bundled leaderboard's MuSR spans three subtasks.
    mixed = pd.DataFrame({"sample_id": ["sub_a/0", "sub_b/0"], "domain": ["musr", "musr"]})
    assert harness_items.lm_eval_samples(mixed) == {"sub_a": [0], "sub_b": [0]}
    with pytest.raises(InputError, match="not <task>/<doc_id>"):
        harness_items.item_ids(pd.DataFrame({"sample_id": ["img-3"], "domain": ["clean"]}))
    with pytest.raises(InputError, match="not <task>/<doc_id>"):
        harness_items.item_ids(smp)  # x/a:b/c is no doc_id
    with pytest.raises(InputError, match="without a comma"):
        harness_items.item_ids(
            pd.DataFrame({"sample_id": ["t/a,b"], "domain": ["t"]}), harness="inspect"
        )
    with pytest.raises(InputError, match="same lm-eval item"):
        harness_items.item_ids(pd.DataFrame({"sample_id": ["a/1", "a/01"], "domain": ["a", "a"]}))
    with pytest.raises(InputError, match="do not have") as exc:
        harness_items.item_ids(lm, {"gsm8k": "gsm8k_cot"})
    assert exc.value.param == "task_names"
    with pytest.raises(InputError, match="TASK=HARNESS_TASK"):
        harness_items.parse_task_names(["ifeval"])


def test_select_is_seeded_and_skips_what_is_evaluated(store):
    c = cache(store)
    a = item_choice.select_items(c, 20, "neighbours", seed=1, model="m1")
    assert len(a.columns) == 20 and np.array_equal(a.columns, np.sort(a.columns))
    assert np.array_equal(
        a.columns, item_choice.select_items(c, 20, "neighbours", seed=1, model="m1").columns
    )
    done = dict(zip(a.items["sample_id"], c.A[0, a.columns].tolist()))
    b = item_choice.select_items(c, 15, "neighbours", seed=2, evaluated=done, model="m1")
    assert len(b.columns) == 15 and not set(b.columns) & set(a.columns)
    samples = harness_items.lm_eval_samples(a.items)
    assert sum(map(len, samples.values())) == 20 and set(samples) <= {"alpha", "beta"}
    with pytest.raises(InputError, match="not yet evaluated"):
        item_choice.select_items(c, 90, "neighbours", evaluated=done, model="m1")


def test_select_draws_each_model_its_own_items_unless_common_items_are_asked(store):
    c = cache(store)
    own = {
        name: item_choice.select_items(c, 20, "random", seed=3, model=name).columns
        for name in ("org/a", "org/b", "org/c")
    }
    # Different models, different items; the same model, the same items.
    assert not np.array_equal(own["org/a"], own["org/b"])
    assert not np.array_equal(own["org/b"], own["org/c"])
    again = item_choice.select_items(c, 20, "random", seed=3, model="org/a")
    assert np.array_equal(again.columns, own["org/a"]) and again.model == "org/a"
    assert "org/a" in again.describe()
    common = [
        item_choice.select_items(c, 20, "random", seed=3, draws="common").columns for _ in range(2)
    ]
    assert np.array_equal(*common)
    # A name given with the common draw changes nothing: the set is the seed's.
    named = item_choice.select_items(c, 20, "random", seed=3, model="org/a", draws="common")
    assert np.array_equal(named.columns, common[0]) and named.model is None
    assert "common item set of seed 3" in named.describe()
    for bad in (None, "", "  "):
        with pytest.raises(InputError, match="name the new model") as exc:
            item_choice.select_items(c, 20, "random", seed=3, model=bad)
        assert exc.value.param == "model"
    with pytest.raises(InputError, match="unknown item draw"):
        item_choice.select_items(c, 20, "random", seed=3, model="x", draws="shared")


def test_estimate_of_a_held_out_model_and_its_rank(store):
    c = cache(store)
    held = 5
    keep = np.setdiff1d(np.arange(40), [held])
    rest = Selection(c.A[keep], c.models.iloc[keep].reset_index(drop=True), c.samples, c.synthetic)
    choice = item_choice.select_items(rest, 40, "neighbours", seed=0, model="held")
    obs = dict(zip(choice.items["sample_id"], c.A[held, choice.columns].tolist()))
    est = new_model.estimate_new_model(rest, obs, "neighbours")
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
    text = est.summary("held")
    assert "overall" in text and f"rank {est.rank} of 40" in text
    # Every item evaluated: the estimate is the truth, with no width.
    full = dict(zip(c.samples["sample_id"], c.A[held].tolist()))
    exact = new_model.estimate_new_model(rest, full, "neighbours").overall
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
    choice = item_choice.select_items(c, 30, "auto", seed=0, model="new")
    obs = dict(zip(choice.items["sample_id"], [1, 0] * 15))
    calls.clear()
    est = new_model.estimate_new_model(c, obs, "auto")
    # One cross-validation, on the whole dataset; both tasks' fits reuse its choice.
    assert len(calls) == 1
    t = est.table.set_index("scope")
    assert t.loc[["alpha", "beta"], "evaluated"].sum() == 30
    for task in ("alpha", "beta"):
        assert t.loc[task, "lo"] <= t.loc[task, "estimate"] <= t.loc[task, "hi"]
    tuned = item_choice.fit(c, "auto")
    assert item_choice.shared_tuning("auto", tuned) is tuned.tuning_
    assert item_choice.shared_tuning("neighbours", item_choice.fit(c, "neighbours")) is None


def test_a_task_s_item_model_is_the_whole_fit_s_restricted_to_its_items(store, monkeypatch):
    """A method whose item model is kept fits it once, on the whole dataset: a task takes
    that model's parameters of its own items, and its estimate is the one that restricted
    model gives from the task's results (a second construction, by hand)."""
    from lifelong_core.methods import irt
    from lifelong_core.methods.base import ItemModel
    from lifelong_core.sortsearch import compute_order

    c = cache(store)
    fits = []
    real = irt.fit_item_model
    monkeypatch.setattr(irt, "fit_item_model", lambda *a, **k: fits.append(1) or real(*a, **k))
    whole = item_choice.fit(c, "mirt")
    choice = item_choice.select_items(c, 30, "mirt", seed=1, fitted=whole, model="new")
    obs = dict(zip(choice.items["sample_id"], c.A[3, choice.columns].tolist()))
    fits.clear()
    t = new_model.estimate_new_model(c, obs, "mirt", fitted=whole).table.set_index("scope")
    assert fits == []  # no item model fitted again for the tasks
    beta = np.flatnonzero((c.samples["domain"] == "beta").to_numpy())
    item = whole.item_
    part = ItemModel(item.d[beta], item.w[beta], item.prior_mean, item.prior_prec, item.theta)
    by_hand = irt.MIRTEstimator().with_items(
        part, compute_order(c.A[:, beta], "sum"), whole.kept_params()
    )
    mine = np.flatnonzero(np.isin(beta, choice.columns))
    est = by_hand.estimate(mine, c.A[3, beta[mine]])
    assert t.loc["beta", "estimate"] == pytest.approx(est.acc)
    assert (t.loc["beta", "lo"], t.loc["beta", "hi"]) == pytest.approx((est.lo, est.hi))


def test_results_naming_unknown_samples_are_refused(store):
    c = cache(store)
    with pytest.raises(InputError, match="not in dataset 'sim'"):
        new_model.estimate_new_model(c, {"alpha/1": 1, "gamma/2": 0}, "reference")
    with pytest.raises(InputError, match="0 or 1"):
        new_model.estimate_new_model(c, {"alpha/1": 2}, "reference")


def test_insert_marks_the_row_estimated_and_keeps_real_results(store):
    from lifelong_core.store import Store

    c = cache(store)
    obs = {"alpha/0": 1, "alpha/5": 0, "beta/3": 1, "beta/9": 0}
    est = new_model.estimate_new_model(c, obs, "reference")
    with Store.open(store, read_only=False) as w:
        new_model.insert_estimated(w, c, "newbie", est, source="test")
    with Store.open(store) as st:
        m = st.models().set_index("model_id").loc["newbie"]
        assert bool(m["estimated"])
        meta = json.loads(m["metadata"])
        assert meta["evaluated_samples"] == list(obs) and meta["method"] == "reference"
        row = st.matrix([int(m["model_idx"])], st.sample_index(list(obs)))[0]
        assert row.tolist() == list(obs.values())
        # The estimated row does not join the cache the next model is compared with.
        assert item_choice.cache_of(st, "sim").A.shape[0] == 40


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
            "task 'gamma'",
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

    from lifelong_core.io.lm_eval import read_uploaded_run

    c = cache(store)
    line = json.dumps({"doc_id": 3, "filter": "none", "metrics": ["acc"], "acc": 1.0}) + "\n"
    ts = "2026-11-23T05-00-00.000001"

    def zipped(members: dict) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for name, text in members.items():
                zf.writestr(name, text)
        return buf.getvalue()

    def results(files):
        run = read_uploaded_run(files)
        return new_model.results_from_run(run.table, c, None, "lm-eval", "the upload")

    one = zipped({f"out/m/samples_alpha_{ts}.jsonl": line})
    assert results([("run.zip", one)]) == {"alpha/3": 1}
    # The one extraction of every path: a member outside the archive refuses the upload,
    # as `import --lm-eval x.zip` does, and nothing is written outside it.
    bad = zipped({f"out/m/samples_alpha_{ts}.jsonl": line, "../escape.txt": "x"})
    with pytest.raises(InputError, match="a path outside the archive"):
        results([("run.zip", bad)])
    assert not (tmp_path.parent / "escape.txt").exists()
    two = zipped({f"out/a/samples_alpha_{ts}.jsonl": line, f"out/b/samples_alpha_{ts}.jsonl": line})
    with pytest.raises(InputError, match="holds 2 runs") as exc:
        results([("run.zip", two)])
    assert "uploaded file run.zip" in str(exc.value) and "lbe-lm-eval" not in str(exc.value)
    with pytest.raises(InputError, match="neither a samples_"):
        results([("notes.txt", b"hi")])
    with pytest.raises(InputError, match="no files uploaded"):
        results([])


def test_random_baseline_estimates_per_task_and_has_nothing_to_insert(store):
    from lifelong_core.store import Store

    c = cache(store)
    held = 7
    keep = np.setdiff1d(np.arange(40), [held])
    rest = Selection(c.A[keep], c.models.iloc[keep].reset_index(drop=True), c.samples, c.synthetic)
    choice = item_choice.select_items(rest, 30, "random", seed=0, model="held")
    obs = dict(zip(choice.items["sample_id"], c.A[held, choice.columns].tolist()))
    est = new_model.estimate_new_model(rest, obs, "random")
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
        new_model.insert_estimated(w, rest, "held", est, source="test")


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
    t = new_model.estimate_new_model(rest, obs, "first-n").table.set_index("scope")
    assert t.loc["overall", "estimate"] == pytest.approx(c.A[held, cols].mean())
    assert t.loc["alpha", "estimate"] == pytest.approx(c.A[held, :6].mean())


def _run_folder(folder, docs: dict[int, tuple[int, int]], task: str = "alpha"):
    """An lm-eval run of ``task`` recording two 0/1 metrics per item: doc -> (acc, acc_norm)."""
    folder.mkdir(parents=True)
    ts = "2026-11-23T05-00-00.000001"
    lines = [
        json.dumps(
            {"doc_id": d, "filter": "none", "metrics": ["acc", "acc_norm"], "acc": a, "acc_norm": b}
        )
        for d, (a, b) in docs.items()
    ]
    (folder / f"samples_{task}_{ts}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_two_metrics_are_refused_naming_the_flag_and_the_import_s_choice_is_reused(
    store, tmp_path, capsys
):
    from lifelong_core.store import Store

    docs = {i: (i % 2, int(i % 3 == 0)) for i in range(10)}
    run = _run_folder(tmp_path / "new", docs)
    argv = ["estimate", "--store", str(store), "--lm-eval", str(run), "--model", "n"]
    assert main([*argv, "--method", "reference"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --metric: ") and err.count("\n") == 1
    assert "several 0/1 metrics: acc, acc_norm" in err
    # A model imported with --metric acc_norm: the store keeps the choice for task alpha ...
    assert (
        main(
            [
                "import",
                "--store",
                str(store),
                "--lm-eval",
                str(_run_folder(tmp_path / "old", dict.fromkeys(range(60), (1, 0)))),
                "--model",
                "m-old",
                "--dataset",
                "sim",
                "--metric",
                "acc_norm",
            ]
        )
        == 0
    )
    with Store.open(store) as st:
        assert st.harness_metrics("sim") == {"alpha": ("acc_norm", "none")}
    capsys.readouterr()
    # ... and estimate reads the new run with it, unless told otherwise.
    out = tmp_path / "e.csv"
    assert main([*argv, "--method", "reference", "--out", str(out)]) == 0
    observed = pd.read_csv(out).set_index("scope").loc["overall", "observed"]
    assert observed == pytest.approx(np.mean([b for _, b in docs.values()]))
    assert main([*argv, "--method", "reference", "--metric", "acc", "--out", str(out)]) == 0
    observed = pd.read_csv(out).set_index("scope").loc["overall", "observed"]
    assert observed == pytest.approx(np.mean([a for a, _ in docs.values()]))


def _lm_eval_run(folder, values: dict[str, int]):
    """A model's lm-eval run (metric acc) of the items ``values`` names (``task/doc``)."""
    folder.mkdir(parents=True)
    ts = "2026-11-23T05-00-00.000001"
    by_task: dict[str, list[str]] = {}
    for sid, v in values.items():
        task, doc = sid.split("/")
        by_task.setdefault(task, []).append(
            json.dumps({"doc_id": int(doc), "filter": "none", "metrics": ["acc"], "acc": v})
        )
    for task, lines in by_task.items():
        (folder / f"samples_{task}_{ts}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_rounds_through_the_command_line_the_api_and_the_workflow_agree(store, tmp_path, capsys):
    """The active design in two rounds: select writes the pilot, then (with the pilot's run)
    the zone round; estimate takes one run per round. Its overall estimate is the method's
    own rounds estimate, and its tasks' are domain estimates from the same rounds."""
    from lifelong_core.methods import get_method
    from lifelong_core.sortsearch import compute_order

    c = cache(store)
    rng = np.random.default_rng(9)
    truth = dict(zip(c.samples["sample_id"], (rng.random(100) < 0.6).astype(int).tolist()))
    argv = ["select", "--store", str(store), "--budget", "40", "--method", "active"]
    argv += ["--model", "org/new", "--rounds", "--format", "csv"]
    assert main([*argv, "--out", str(tmp_path / "r1.csv")]) == 0
    said = capsys.readouterr().out
    assert "round 1 of 2 of the 40 items (10 + 30)" in said and "next:" in said
    first = pd.read_csv(tmp_path / "r1.csv")["sample_id"].tolist()
    run1 = _lm_eval_run(tmp_path / "run1", {i: truth[i] for i in first})
    assert main([*argv, "--lm-eval", str(run1), "--out", str(tmp_path / "r2.csv")]) == 0
    assert "round 2 of 2" in capsys.readouterr().out
    second = pd.read_csv(tmp_path / "r2.csv")["sample_id"].tolist()
    assert len(first) == 10 and len(second) == 30 and not set(first) & set(second)
    run2 = _lm_eval_run(tmp_path / "run2", {i: truth[i] for i in second})
    out = tmp_path / "e.csv"
    est_argv = ["estimate", "--store", str(store), "--method", "active", "--model", "org/new"]
    est_argv += ["--lm-eval", str(run1), "--lm-eval", str(run2), "--out", str(out)]
    assert main(est_argv) == 0
    table = pd.read_csv(out).set_index("scope")
    # By hand: the method fitted on the cache, its rounds estimator on the two rounds.
    method = get_method("active").fit(c.A, compute_order(c.A, "sum"))
    col = {s: j for j, s in enumerate(c.samples["sample_id"])}
    rounds = [
        (np.array([col[i] for i in ids]), np.array([truth[i] for i in ids]))
        for ids in (first, second)
    ]
    whole = method.estimate_rounds(rounds)
    assert table.loc["overall", "estimate"] == pytest.approx(whole.acc)
    assert (table.loc["overall", "lo"], table.loc["overall", "hi"]) == pytest.approx(
        (whole.lo, whole.hi)
    )
    alpha = (c.samples["domain"] == "alpha").to_numpy()
    part = method.estimate_rounds(rounds, alpha)
    assert table.loc["alpha", "estimate"] == pytest.approx(part.acc)
    assert table.loc["alpha", "evaluated"] == sum(i.startswith("alpha/") for i in first + second)
    # The same through the workflow, one mapping per round.
    est = new_model.estimate_new_model(
        c, [{i: truth[i] for i in first}, {i: truth[i] for i in second}], "active"
    )
    assert est.overall["estimate"] == pytest.approx(whole.acc)
    # Results that are not whole rounds of the plan are refused, naming the plan.
    with pytest.raises(InputError, match=r"not whole rounds .* \(10 \+ 30\)"):
        item_choice.select_items(
            c, 40, "active", model="org/new", evaluated={first[0]: 1}, rounds=True
        )
    # Without --rounds, the method plays one round: mirt's stratified design.
    one = item_choice.select_items(c, 40, "active", model="org/new")
    assert len(one.columns) == 40 and one.plan == ()
