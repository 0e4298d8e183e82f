"""Store: read API, layout invariants, growth on both axes, extras, counts, SQL view."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from lifelong_core.errors import InputError
from lifelong_core.store import BLOCK_SIZE, Store


def ids(prefix: str, n: int, start: int = 0) -> list[str]:
    return [f"{prefix}{i}" for i in range(start, start + n)]


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_create_open_and_empty_reads(tmp_path):
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        assert st.n_models == 0 and st.n_samples == 0
        assert list(st.models().columns) == [
            "model_idx",
            "model_id",
            "name",
            "family",
            "release_order",
            "estimated",
            "added_at",
            "metadata",
        ]
        assert list(st.samples().columns) == [
            "sample_idx",
            "sample_id",
            "dataset",
            "domain",
            "category",
            "label",
            "split",
            "added_at",
        ]
        assert list(st.datasets().columns) == ["dataset", "description", "synthetic", "source"]
        assert list(st.domains().columns) == ["dataset", "domain", "category", "n_samples"]
        assert st.matrix().shape == (0, 0)
        assert len(st.log()) == 0
    with Store.open(path) as st:
        assert st.read_only
        with pytest.raises(InputError, match="read-only"):
            st.insert_matrix(np.zeros((1, 1), np.uint8), ["m"], ["s"], dataset="d")
    with pytest.raises(InputError, match="already exists"):
        Store.create(path)


def test_open_refuses_missing_and_foreign_files(tmp_path):
    with pytest.raises(InputError, match="No store"):
        Store.open(tmp_path / "nope.duckdb")
    (tmp_path / "empty.duckdb").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        Store.open(tmp_path / "empty.duckdb")
    (tmp_path / "text.duckdb").write_text("hello, I am not a database\n" * 100)
    with pytest.raises(InputError, match="not a DuckDB store"):
        Store.open(tmp_path / "text.duckdb")
    con = duckdb.connect(str(tmp_path / "other.duckdb"))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    with pytest.raises(InputError, match="not a lifelong store"):
        Store.open(tmp_path / "other.duckdb")


def test_matrix_orders_and_subsets(tmp_path, rng):
    A = rng.integers(0, 2, (6, 30), dtype=np.uint8)
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(A, ids("m", 6), ids("s", 30), dataset="d")
        assert np.array_equal(st.matrix(), A)
        rows, cols = [4, 0, 4], [29, 3, 3, 0]
        assert np.array_equal(st.matrix(rows, cols), A[np.ix_(rows, cols)])
        packed, n = st.read_packed(rows)
        assert n == 30 and np.array_equal(packed, np.packbits(A[rows], axis=1, bitorder="little"))
        packed, n = st.read_packed(rows, cols)
        assert n == 4 and np.array_equal(
            packed, np.packbits(A[np.ix_(rows, cols)], axis=1, bitorder="little")
        )
        assert st.known().all()
        with pytest.raises(InputError, match="outside"):
            st.matrix([6])
        with pytest.raises(InputError, match="outside"):
            st.matrix(None, [-1])


def test_growth_on_both_axes_keeps_earlier_bits_identical(tmp_path, rng):
    path = tmp_path / "s.duckdb"
    A = rng.integers(0, 2, (5, 21), dtype=np.uint8)  # 21: later blocks start off a byte boundary
    B = rng.integers(0, 2, (3, 21), dtype=np.uint8)  # new models, same samples
    C = rng.integers(0, 2, (8, 13), dtype=np.uint8)  # every model, new samples
    with Store.create(path) as st:
        st.insert_matrix(A, ids("m", 5), ids("s", 21), dataset="d")
    before = (
        duckdb.connect(str(path), read_only=True)
        .execute("SELECT model_idx, block_id, correct, known FROM bits ORDER BY ALL")
        .fetchall()
    )
    with Store.open(path, read_only=False) as st:
        st.insert_matrix(B, ids("m", 3, 5), ids("s", 21), dataset="d")
        st.insert_matrix(C, ids("m", 8), ids("s", 13, 21), dataset="d")
        full = np.vstack([A, B])
        full = np.hstack([full, C])
        assert np.array_equal(st.matrix(), full)
        assert np.array_equal(st.matrix(range(5), range(21)), A)
        packed, n = st.read_packed()
        assert n == 34 and np.array_equal(packed, np.packbits(full, axis=1, bitorder="little"))
        assert list(st.models()["model_idx"]) == list(range(8))
        assert list(st.samples()["sample_idx"]) == list(range(34))
    con = duckdb.connect(str(path), read_only=True)
    after = con.execute(
        "SELECT model_idx, block_id, correct, known FROM bits ORDER BY ALL"
    ).fetchall()
    # Earlier (model, block) rows are untouched: growth added rows and blocks only.
    assert set(before) <= set(after)
    assert con.execute("SELECT count(*) FROM blocks").fetchone()[0] == 2
    con.close()


def test_large_import_spans_blocks(tmp_path, rng):
    n = BLOCK_SIZE + 1000
    A = rng.integers(0, 2, (3, n), dtype=np.uint8)
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(A, ids("m", 3), ids("s", n), dataset="d")
        assert len(st.block_table["block_id"]) == 2
        assert np.array_equal(st.matrix(), A)
        cols = [0, BLOCK_SIZE - 1, BLOCK_SIZE, n - 1]
        assert np.array_equal(st.matrix([2, 1], cols), A[np.ix_([2, 1], cols)])


def test_partial_rows_known_mask_and_unknown_error(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(np.array([[1, 0, 1, 1]], np.uint8), ["a"], ids("s", 4), dataset="d")
        st.insert_long(
            pd.DataFrame({"model": ["b", "b"], "sample": ["s1", "s3"], "correct": [1, 0]})
        )
        assert st.known().tolist() == [[True] * 4, [False, True, False, True]]
        assert st.matrix([1], [1, 3]).tolist() == [[1, 0]]
        with pytest.raises(InputError, match="no prediction of model 'b' on sample 's0'"):
            st.matrix()
        with pytest.raises(InputError, match="never recorded"):
            st.read_packed()
        # Filling the gaps later replaces only that model's row of that block.
        st.insert_long(
            pd.DataFrame({"model": ["b", "b"], "sample": ["s0", "s2"], "correct": [0, 1]})
        )
        assert st.matrix().tolist() == [[1, 0, 1, 1], [0, 1, 1, 0]]
        rows = st.sql("SELECT model_idx, known IS NULL AS full FROM bits ORDER BY model_idx")
        assert rows["full"].tolist() == [True, True] and len(rows) == 2


def test_identical_reimport_is_a_no_op_and_logged(tmp_path, rng):
    A = rng.integers(0, 2, (2, 9), dtype=np.uint8)
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(A, ["a", "b"], ids("s", 9), dataset="d")
        out = st.insert_matrix(A, ["a", "b"], ids("s", 9), dataset="d")
        assert out["entries"] == 0 and out["new_models"] == 0 and out["new_samples"] == 0
        log = st.log()
        assert log["entries"].tolist() == [18, 0]
        assert log["checksum"].nunique() == 1 and log["checksum"][0].startswith("sha256:")
        assert np.array_equal(st.matrix(), A)


def test_extras_round_trip_and_missing_field(tmp_path, rng):
    A = rng.integers(0, 2, (3, 10), dtype=np.uint8)
    conf = rng.random((3, 10)).astype(np.float32)
    pred = rng.integers(0, 10, (3, 10)).astype(np.int32)
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(
            A,
            ids("m", 3),
            ids("s", 10),
            dataset="d",
            extras={"confidence": conf, "predicted": pred},
        )
        got = st.extras(fields=("confidence", "predicted"))
        assert np.array_equal(got["confidence"], conf) and got["confidence"].dtype == np.float32
        assert np.array_equal(got["predicted"], pred) and got["predicted"].dtype == np.int32
        sub = st.extras([2, 0, 2], [9, 1], fields=("confidence",))
        assert np.array_equal(sub["confidence"], conf[np.ix_([2, 0, 2], [9, 1])])
        with pytest.raises(InputError, match="no true_prob"):
            st.extras(fields=("true_prob",))
        with pytest.raises(InputError, match="Unknown extra field"):
            st.extras(fields=("logits",))
        assert st.has_extra("confidence") and not st.has_extra("true_prob")


def test_counts_shape_and_values(tmp_path):
    A = np.array([[1, 1, 0, 1, 0], [0, 0, 1, 1, 1]], np.uint8)
    samples = pd.DataFrame(
        {
            "sample_id": ids("s", 5),
            "domain": ["x", "x", "y", "y", "z"],
            "category": ["natural", "natural", "natural", "structured", "structured"][:5],
        }
    )
    samples.loc[3, "category"] = "natural"
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(A, ["a", "b"], samples, dataset="d")
        st.insert_long(pd.DataFrame({"model": ["c"], "sample": ["s4"], "correct": [1]}))
        c = st.counts("d")
        assert list(c.columns) == ["model", "task", "category", "correct", "total"]
        got = {(r.model, r.task): (r.category, r.correct, r.total) for r in c.itertuples()}
        assert got == {
            ("a", "x"): ("natural", 2, 2),
            ("a", "y"): ("natural", 1, 2),
            ("a", "z"): ("structured", 0, 1),
            ("b", "x"): ("natural", 0, 2),
            ("b", "y"): ("natural", 2, 2),
            ("b", "z"): ("structured", 1, 1),
            ("c", "z"): ("structured", 1, 1),
        }
        assert st.counts("d", domains=["x"], models=[1]).to_dict("records") == [
            {"model": "b", "task": "x", "category": "natural", "correct": 0, "total": 2}
        ]
        assert st.counts("other").empty
        s = st.summary()
        assert s["models"]["entries"].tolist() == [5, 5, 1] and s["models"]["correct"].tolist() == [
            3,
            3,
            1,
        ]
        assert s["domains"].set_index("domain")["entries"].to_dict() == {"x": 4, "y": 4, "z": 3}
        assert s["datasets"][["domains", "samples", "models", "entries"]].iloc[0].tolist() == [
            3,
            5,
            3,
            11,
        ]


def test_counts_equal_a_dense_count_with_gaps_and_interleaved_domains(tmp_path, rng):
    """counts() popcounts packed blocks under per-domain masks; a dense count of
    values & known is the reference (gaps, domains interleaved within a block, a second
    dataset in the same block, models asked out of order and twice)."""
    n = 203  # a block whose last byte has padding bits
    A = rng.integers(0, 2, (5, n), dtype=np.uint8)
    samples = pd.DataFrame({"sample_id": ids("s", n), "domain": rng.choice(["x", "y", "z"], n)})
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(A, ids("m", 5), samples, dataset="d")
        gaps = pd.DataFrame(
            {
                "model": ["g"] * 40,
                "sample": [f"s{i}" for i in rng.choice(n, 40, replace=False)],
                "correct": rng.integers(0, 2, 40),
            }
        )
        st.insert_long(gaps)
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["m0", "g"],
                    "sample": ["o0", "o1"],
                    "correct": [1, 1],
                    "dataset": ["other", "other"],
                    "domain": ["x", "x"],
                }
            )
        )
        models = [5, 2, 0, 5]
        got = st.counts("d", models=models)
        smp = st.samples("d")
        vals, known = st.values_and_known(models, smp["sample_idx"].to_numpy())
        names = st.models().set_index("model_idx")["model_id"]
        want = {}
        for r, mi in enumerate(models):
            for dom in ("x", "y", "z"):
                cols = (smp["domain"] == dom).to_numpy()
                total = int(known[r, cols].sum())
                if total:
                    want.setdefault((names[mi], dom), []).append(
                        (int((vals[r, cols] & known[r, cols]).sum()), total)
                    )
        have = {}
        for row in got.itertuples():
            have.setdefault((row.model, row.task), []).append((row.correct, row.total))
        assert have == want


def test_recorded_models_from_key_columns_equal_the_counted_ones(tmp_path, rng):
    """dataset_rows.recorded_models answers from the bits table's key columns (and checks
    partly recorded blocks entry by entry): the models it returns are exactly those with
    a counted prediction, for every dataset and domain choice (a model recorded on a few
    samples of one domain, one only on another dataset sharing the block, one estimated)."""
    from lifelong_core.store.dataset_rows import recorded_models
    from lifelong_core.workflows.selection import recorded_models as offered

    n = 203
    A = rng.integers(0, 2, (3, n), dtype=np.uint8)
    domain = np.where(np.arange(n) % 3 == 0, "x", np.where(np.arange(n) % 3 == 1, "y", "z"))
    samples = pd.DataFrame({"sample_id": ids("s", n), "domain": domain})
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(A, ids("m", 3), samples, dataset="d")
        only_x = [f"s{i}" for i in range(0, n, 3)][:5]
        st.insert_long(
            pd.DataFrame({"model": ["g"] * 5, "sample": only_x, "correct": [1, 0, 1, 0, 1]})
        )
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["o", "o"],
                    "sample": ["o0", "o1"],
                    "correct": [1, 0],
                    "dataset": ["other", "other"],
                    "domain": ["x", "x"],
                }
            )
        )
        st.insert_matrix(
            np.ones((1, 3), np.uint8),
            pd.DataFrame({"model_id": ["est"], "estimated": [True]}),
            ["s0", "s1", "s2"],
        )
        models = st.models()
        for dataset, domains in (("d", None), ("d", ["x"]), ("d", ["y", "z"]), ("other", None)):
            counted = set(st.counts(dataset=dataset, domains=domains)["model"])
            got = recorded_models(st, models, st.sample_indices(dataset, domains))
            assert set(got["model_id"]) == counted, (dataset, domains)
            real = counted - {"est"}
            assert set(offered(st, dataset, domains)["model_id"]) == real, (dataset, domains)
        assert set(offered(st, "d", ["y"])["model_id"]) == {"m0", "m1", "m2"}  # g has no y sample
        assert (
            st.sample_indices("d", ["x"]).tolist() == st.samples("d", ["x"])["sample_idx"].tolist()
        )


def test_counts_prefix_colliding_domain_names(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["a", "a"],
                    "sample": ["p", "q"],
                    "correct": [1, 0],
                    "dataset": ["d1", "d2"],
                    "domain": ["same", "same"],
                }
            )
        )
        assert sorted(st.counts()["task"]) == ["d1/same", "d2/same"]
        assert st.counts("d1")["task"].tolist() == ["same"]


def test_predictions_view_matches_matrix(tmp_path, rng):
    A = rng.integers(0, 2, (3, 11), dtype=np.uint8)
    conf = rng.random((3, 11)).astype(np.float32)
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(A, ids("m", 3), ids("s", 11), dataset="d", extras={"confidence": conf})
        st.insert_long(pd.DataFrame({"model": ["z"], "sample": ["s5"], "correct": [1]}))
        v = st.sql(
            "SELECT model_idx, sample_idx, correct, confidence FROM predictions ORDER BY ALL"
        )
        assert len(v) == 34
        dense = v[v.model_idx < 3]
        assert np.array_equal(dense["correct"].to_numpy().reshape(3, 11), A)
        assert np.allclose(dense["confidence"].to_numpy().reshape(3, 11), conf)
        z = v[v.model_idx == 3]
        assert z[["sample_idx", "correct"]].values.tolist() == [[5, 1]]
        with pytest.raises(InputError, match="SQL query failed"):
            st.sql("SELECT * FROM no_such_table")


def test_models_and_samples_metadata(tmp_path):
    models = pd.DataFrame(
        {
            "model_id": ["a", "b"],
            "name": ["Model A", None],
            "family": ["cnn", "mlp"],
            "release_order": [2, 1],
            "metadata": [{"depth": 3}, '{"w": 1, "a": 2}'],
            "estimated": [False, True],
        }
    )
    samples = pd.DataFrame(
        {
            "sample_id": ["x", "y"],
            "dataset": ["digits"] * 2,
            "domain": ["clean", "blur"],
            "category": ["natural", "specialized"],
            "label": [3, 7],
            "split": ["test", "test"],
        }
    )
    with Store.create(tmp_path / "s.duckdb") as st:
        st.add_dataset("digits", description="8x8 digits", synthetic=False, source="sklearn")
        st.add_dataset("digits", description="8x8 digits", synthetic=False, source="sklearn")
        st.insert_matrix(np.ones((2, 2), np.uint8), models, samples)
        m = st.models()
        assert m["name"].tolist() == ["Model A", "b"]
        assert m["metadata"].tolist() == ['{"depth":3}', '{"a":2,"w":1}']
        assert m["release_order"].tolist() == [2, 1] and m["estimated"].tolist() == [False, True]
        s = st.samples()
        assert s["label"].tolist() == [3, 7] and s["category"].tolist() == [
            "natural",
            "specialized",
        ]
        assert st.datasets().to_dict("records") == [
            {
                "dataset": "digits",
                "description": "8x8 digits",
                "synthetic": False,
                "source": "sklearn",
            }
        ]
        assert st.domains()["domain"].tolist() == ["clean", "blur"]
        assert st.samples(domains=["blur"])["sample_id"].tolist() == ["y"]
        # Some columns only: the same values as those columns of the whole read, in the
        # table's order whatever the order asked.
        some = st.samples(domains=["blur"], columns=["category", "sample_idx", "label"])
        whole = st.samples(domains=["blur"])
        assert list(some.columns) == ["sample_idx", "category", "label"]
        pd.testing.assert_frame_equal(some, whole[["sample_idx", "category", "label"]])
        with pytest.raises(InputError, match="no column 'labels'") as err:
            st.samples(columns=["sample_id", "labels"])
        assert err.value.param == "columns"
        with pytest.raises(InputError, match="different fields"):
            st.add_dataset("digits", description="changed")


@pytest.mark.slow
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=hst.integers(0, 2**31 - 1),
    steps=hst.lists(
        hst.tuples(
            hst.sampled_from(["rows", "cols", "long"]), hst.integers(1, 12), hst.integers(1, 19)
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_random_growth_matches_a_dense_model(tmp_path_factory, seed, steps):
    """Any sequence of wide/long imports equals a dense model with a known mask."""
    rng = np.random.default_rng(seed)
    path = tmp_path_factory.mktemp("prop") / "s.duckdb"
    vals = np.zeros((0, 0), np.uint8)
    known = np.zeros((0, 0), bool)
    with Store.create(path) as st:
        for kind, a, b in steps:
            m, n = vals.shape
            if kind == "rows" or m == 0 or n == 0:
                new = rng.integers(0, 2, (a, max(n, b) if n == 0 else n), dtype=np.uint8)
                cols = max(n, b) if n == 0 else n
                st.insert_matrix(new, ids("m", a, m), ids("s", cols), dataset="d")
                vals = np.vstack([np.hstack([vals, np.zeros((m, cols - n), np.uint8)]), new])
                known = np.vstack(
                    [np.hstack([known, np.zeros((m, cols - n), bool)]), np.ones((a, cols), bool)]
                )
            elif kind == "cols":
                new = rng.integers(0, 2, (m, b), dtype=np.uint8)
                st.insert_matrix(new, ids("m", m), ids("s", b, n), dataset="d")
                vals, known = np.hstack([vals, new]), np.hstack([known, np.ones((m, b), bool)])
            else:
                k = min(a * b, m * n)
                flat = rng.choice(m * n, size=k, replace=False)
                r, c = np.unravel_index(flat, (m, n))
                v = np.where(known[r, c], vals[r, c], rng.integers(0, 2, k)).astype(np.uint8)
                st.insert_long(
                    pd.DataFrame(
                        {
                            "model": [f"m{i}" for i in r],
                            "sample": [f"s{j}" for j in c],
                            "correct": v,
                        }
                    )
                )
                vals[r, c], known[r, c] = v, True
            assert np.array_equal(st.known(), known)
            got, _kn = st.values_and_known(None, None)
            assert np.array_equal(got[known], vals[known]) and not got[~known].any()
            if known.all():
                assert np.array_equal(
                    st.read_packed()[0], np.packbits(vals, axis=1, bitorder="little")
                )
            pick = rng.integers(0, vals.shape[1], 5)
            assert np.array_equal(st.known(None, pick), known[:, pick])


def test_extras_of_some_samples_equal_the_same_columns_of_every_sample(tmp_path, rng):
    # A read of a few samples takes only their span of each block's lists out of DuckDB;
    # it must give the columns of the whole read, gaps and all, across blocks.
    conf = rng.random((3, 30))
    pred = rng.integers(0, 9, (3, 30)).astype(np.int32)
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(
            rng.integers(0, 2, (3, 30), dtype=np.uint8),
            ids("m", 3),
            ids("s", 30),
            dataset="d",
            extras={"confidence": conf, "predicted": pred},
        )
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["m0", "m1", "m0"],
                    "sample": ["t0", "t1", "t3"],
                    "correct": [1, 0, 0],
                    "confidence": [0.25, 0.5, 0.75],
                }
            ),
            dataset="e",
        )
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["m1", "m2"],
                    "sample": ["t2", "t3"],
                    "correct": [1, 1],
                    "predicted": [4, 2],
                }
            ),
            dataset="e",
        )
        assert st.n_samples == 34 and len(st._blocks["block_id"]) >= 2
        whole = st.extras_partial(fields=("confidence", "predicted"))
        for cols in ([5], [29, 3, 3, 30], [31, 2, 33, 30], list(range(34))[::-1], [17, 18]):
            for models in ([0, 1, 2], [2, 0]):
                part = st.extras_partial(models, cols, fields=("confidence", "predicted"))
                for f, (values, have) in part.items():
                    assert np.array_equal(values, whole[f][0][np.ix_(models, cols)])
                    assert np.array_equal(have, whole[f][1][np.ix_(models, cols)])
        assert np.array_equal(whole["predicted"][0][:, :30], pred)
        # Samples t0, t1, t3 come before t2, first recorded in the second import.
        assert whole["confidence"][1][:, 30:].tolist() == [
            [True, False, True, False],
            [False, True, False, False],
            [False, False, False, False],
        ]


def test_extras_survive_gap_filling_and_mixed_fields(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["a", "a"],
                    "sample": ["s0", "s1"],
                    "correct": [1, 0],
                    "confidence": [0.9, 0.125],
                    "predicted": [3, 4],
                }
            ),
            dataset="d",
        )
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["a"],
                    "sample": ["s2"],
                    "correct": [1],
                    "confidence": [0.5],
                    "predicted": [5],
                }
            ),
            dataset="d",
        )
        st.insert_long(
            pd.DataFrame({"model": ["b"], "sample": ["s0"], "correct": [0], "true_prob": [0.25]})
        )
        st.insert_long(
            pd.DataFrame({"model": ["b"], "sample": ["s1"], "correct": [1], "true_prob": [0.75]})
        )
        st.insert_long(
            pd.DataFrame({"model": ["a"], "sample": ["s0"], "correct": [1], "confidence": [0.9]})
        )  # same: no-op
        ext = st.extras_partial(fields=("confidence", "predicted", "true_prob"))
        conf, have_c = ext["confidence"]
        assert conf[0].tolist() == [0.9, 0.125, 0.5] and have_c.tolist() == [
            [True] * 3,
            [False] * 3,
        ]
        assert ext["predicted"][0][0].tolist() == [3, 4, 5]
        tp, have_t = ext["true_prob"]
        assert tp[1, :2].tolist() == [0.25, 0.75] and have_t.tolist() == [
            [False] * 3,
            [True, True, False],
        ]
        assert st.extras([0], fields=("confidence",))["confidence"].dtype == np.float32
        v = st.sql(
            "SELECT model, sample, confidence, true_prob FROM predictions ORDER BY model, sample"
        )
        assert v.fillna(-1).values.tolist() == [
            ["a", "s0", 0.9, -1],
            ["a", "s1", 0.125, -1],
            ["a", "s2", 0.5, -1],
            ["b", "s0", -1, 0.25],
            ["b", "s1", -1, 0.75],
        ]
        assert (
            int(st.sql("SELECT count(*) AS n FROM extras")["n"][0]) == 3
        )  # (a, block 0), (a, block 1), (b, block 0)


def test_known_samples_keep_their_domain_when_a_file_names_only_the_dataset(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["a"],
                    "sample": ["s0"],
                    "correct": [1],
                    "dataset": ["d"],
                    "domain": ["blur"],
                }
            )
        )
        st.insert_long(
            pd.DataFrame(
                {
                    "model": ["b", "b"],
                    "sample": ["s0", "s1"],
                    "correct": [0, 1],
                    "dataset": ["d", "d"],
                }
            )
        )
        assert st.samples()[["sample_id", "domain"]].values.tolist() == [
            ["s0", "blur"],
            ["s1", "d"],
        ]
        assert sorted(st.domains()["domain"]) == ["blur", "d"]


def test_ids_to_indices(tmp_path):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ["a", "b", "c"], ["x", "y", "z"], dataset="d")
        assert st.model_index(["c", "a", "c"]).tolist() == [2, 0, 2]
        assert st.sample_index(["y"]).tolist() == [1]
        with pytest.raises(InputError, match=r"no model with id 'q' \(1 of 2 ids are unknown\)"):
            st.model_index(["a", "q"])
        with pytest.raises(InputError, match="no sample with id ''"):
            st.sample_index([""])
        with pytest.raises(InputError, match="must be a list"):
            st.model_index("abc")


def test_other_format_version_is_refused_with_a_hint(tmp_path):
    path = tmp_path / "s.duckdb"
    Store.create(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE store_meta SET value = '1' WHERE key = 'format_version'")
    con.close()
    with pytest.raises(
        InputError, match=r"has format version 1; this program reads version 2 .*rebuild"
    ):
        Store.open(path)


def test_sql_never_writes(tmp_path):
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(2, dtype=np.uint8), ["a", "b"], ["x", "y"], dataset="d")
        st.sql("DELETE FROM bits")
        assert np.array_equal(st.matrix(), np.eye(2, dtype=np.uint8))
    with Store.open(path) as st:
        with pytest.raises(InputError, match="SQL query failed"):
            st.sql("DELETE FROM bits")
        assert st.sql("SELECT count(*) AS n FROM predictions WHERE correct = 1")["n"][0] == 2


def test_import_mixing_known_and_new_samples_and_progress(tmp_path, rng):
    with Store.create(tmp_path / "s.duckdb") as st:
        st.insert_matrix(np.array([[1, 0]], np.uint8), ["a"], ["s0", "s1"], dataset="d")
        # Columns: new, known, new, known -> the new ones form one new block out of file order.
        A = rng.integers(0, 2, (2, 4), dtype=np.uint8)
        conf = rng.random((2, 4))
        seen = []
        st.insert_matrix(
            A,
            ["b", "c"],
            ["n0", "s0", "n1", "s1"],
            dataset="d",
            extras={"confidence": conf},
            progress=seen.append,
        )
        assert seen == sorted(seen) and seen[-1] == 1.0
        assert st.samples()["sample_id"].tolist() == ["s0", "s1", "n0", "n1"]
        order = st.sample_index(["n0", "s0", "n1", "s1"])
        assert np.array_equal(st.matrix([1, 2], order), A)
        assert np.array_equal(
            st.extras([1, 2], order, fields=("confidence",))["confidence"], conf.astype(np.float32)
        )
        assert st.known([0]).tolist() == [[True, True, False, False]]


def test_limit_memory_caps_duckdb_and_refuses_a_non_size(tmp_path):
    path = tmp_path / "s.duckdb"
    with Store.create(path) as st:
        st.insert_matrix(np.eye(3, dtype=np.uint8), ids("m", 3), ids("s", 3), dataset="d")
    with Store.open(path) as st:
        st.limit_memory("512MB")
        assert (
            st.cursor().execute("SELECT current_setting('memory_limit')").fetchone()[0]
            == "488.2 MiB"
        )
        with pytest.raises(InputError, match="not a size"):
            st.limit_memory("512; DROP TABLE bits")
        assert st.matrix().sum() == 3
