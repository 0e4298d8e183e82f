"""The seeded synthetic generator: determinism, block invariance, the knobs do what they say."""

from __future__ import annotations

import numpy as np
import pytest

from lifelong_core.datasets import synthetic as syn
from lifelong_core.errors import InputError


def _spec(**kw):
    base = dict(
        n_models=40, n_samples=1500, seed=7, n_clusters=3, cluster_spread=0.8, label_noise=0.05
    )
    base.update(kw)
    return syn.SyntheticSpec(**base)


def test_same_seed_same_bits_different_seed_different_bits():
    a = syn.generate(_spec())
    b = syn.generate(_spec())
    c = syn.generate(_spec(seed=8))
    assert a.dtype == np.uint8 and a.shape == (40, 1500)
    assert set(np.unique(a)) <= {0, 1}
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("rows", [1, 7, 40, 1000])
def test_blocks_do_not_depend_on_block_size(rows):
    spec = _spec()
    full = syn.generate(spec)
    blocks = list(syn.iter_blocks(spec, rows))
    assert [b.start for b in blocks] == list(range(0, 40, rows))
    assert np.array_equal(np.concatenate([b.correct for b in blocks]), full)


def test_packed_blocks_unpack_to_the_dense_rows_and_row_ranges_agree():
    spec = _spec(n_samples=1003)
    full = syn.generate(spec)
    packed = np.concatenate([b.correct for b in syn.iter_blocks(spec, 6, packed=True)])
    assert packed.shape == (40, (1003 + 7) // 8)
    assert np.array_equal(np.unpackbits(packed, axis=1, count=1003, bitorder="little"), full)
    middle = np.concatenate([b.correct for b in syn.iter_blocks(spec, 4, start=13, stop=29)])
    assert np.array_equal(middle, full[13:29])


def test_probabilities_are_in_unit_interval_and_track_the_bits():
    spec = _spec(n_models=200, n_samples=3000, label_noise=0.0)
    A, P = syn.generate(spec, with_prob=True)
    assert P.dtype == np.float32 and P.shape == A.shape
    assert P.min() >= 0.0 and P.max() <= 1.0
    # Bernoulli draws: the mean bit in each probability decile is near the decile's mean p.
    edges = np.quantile(P, np.linspace(0, 1, 11))
    which = np.clip(np.searchsorted(edges, P, side="right") - 1, 0, 9)
    for k in range(10):
        sel = which == k
        assert abs(A[sel].mean() - P[sel].mean()) < 0.02


def test_ability_trend_makes_later_models_better():
    spec = syn.SyntheticSpec(n_models=300, n_samples=2000, seed=1, ability_trend=3.0)
    acc = syn.generate(spec).mean(axis=1)
    assert acc[-100:].mean() > acc[:100].mean() + 0.15


def test_mislabeled_samples_are_right_only_by_chance():
    spec = syn.SyntheticSpec(n_models=200, n_samples=4000, seed=2, label_noise=0.1, chance=0.1)
    A = syn.generate(spec)
    bad = syn.params(spec).mislabeled
    assert 0.07 < bad.mean() < 0.13
    assert abs(A[:, bad].mean() - 0.1) < 0.01
    assert A[:, ~bad].mean() > 0.5


def test_clusters_have_their_own_sample_orders():
    spec = syn.SyntheticSpec(
        n_models=600, n_samples=3000, seed=3, n_clusters=2, cluster_spread=2.0, difficulty_sd=1.0
    )
    A = syn.generate(spec)
    cl = syn.params(spec).cluster
    s0, s1 = A[cl == 0][::2], A[cl == 1][::2]
    half0 = A[cl == 0][1::2]
    within = np.corrcoef(s0.mean(0), half0.mean(0))[0, 1]
    across = np.corrcoef(s0.mean(0), s1.mean(0))[0, 1]
    assert within > across + 0.2


def test_single_cluster_has_one_order():
    spec = syn.SyntheticSpec(n_models=400, n_samples=3000, seed=4)
    A = syn.generate(spec)
    assert np.corrcoef(A[::2].mean(0), A[1::2].mean(0))[0, 1] > 0.9


@pytest.mark.parametrize(
    "kw",
    [
        dict(n_models=0),
        dict(n_samples=0),
        dict(label_noise=1.5),
        dict(discrimination=0.0),
        dict(ability_sd=-1.0),
        dict(n_clusters=0),
        dict(chance=-0.1),
    ],
)
def test_bad_specs_are_input_errors(kw):
    base = dict(n_models=3, n_samples=5)
    base.update(kw)
    with pytest.raises(InputError):
        syn.SyntheticSpec(**base)


def test_rows_out_of_range_are_input_errors():
    with pytest.raises(InputError):
        next(syn.iter_blocks(syn.SyntheticSpec(3, 5), start=4))


def test_write_npy_streams_the_same_matrix(tmp_path):
    spec = _spec(n_samples=777)
    out = syn.write_npy(spec, tmp_path / "A.npy", block_rows=9)
    assert np.array_equal(np.load(out), syn.generate(spec))
    packed = syn.write_npy(spec, tmp_path / "P.npy", packed=True, block_rows=5)
    assert np.array_equal(
        np.unpackbits(np.load(packed), axis=1, count=777, bitorder="little"), syn.generate(spec)
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.npy", "P.npy"]


def test_cli_writes_npy_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "A.npy"
    assert syn.main(["--models", "5", "--samples", "50", "--seed", "3", "--out", str(out)]) == 0
    first = np.load(out)
    assert np.array_equal(first, syn.generate(syn.SyntheticSpec(5, 50, seed=3)))
    assert syn.main(["--models", "5", "--samples", "50", "--seed", "4", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert np.array_equal(np.load(out), first)
    assert syn.main(["--models", "0", "--samples", "50", "--out", str(tmp_path / "B.npy")]) == 2
    assert capsys.readouterr().err.startswith("error: synthetic spec")


def test_store_is_labelled_synthetic_and_holds_the_bits(tmp_path):
    from lifelong_core.store import Store

    spec = _spec(n_models=23, n_samples=300)
    path = syn.write_store(spec, tmp_path / "s.duckdb", with_prob=True, block_rows=10)
    A, P = syn.generate(spec, with_prob=True)
    with Store.open(path) as st:
        ds = st.datasets()
        assert ds["dataset"].tolist() == ["synthetic"] and bool(ds["synthetic"].iloc[0])
        assert np.array_equal(st.matrix(), A)
        assert np.array_equal(st.extras(fields=("true_prob",))["true_prob"], P)
        assert st.models()["family"].str.startswith("cluster-").all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb"]
    with pytest.raises(InputError, match="already exists"):
        syn.write_store(spec, path)


def test_packed_store_path_holds_the_same_bits(tmp_path, capsys):
    from lifelong_core.store import Store

    spec = _spec(n_models=17, n_samples=1001)
    path = tmp_path / "p.duckdb"
    assert (
        syn.main(
            [
                "--models",
                "17",
                "--samples",
                "1001",
                "--seed",
                "7",
                "--clusters",
                "3",
                "--cluster-spread",
                "0.8",
                "--label-noise",
                "0.05",
                "--store",
                str(path),
            ]
        )
        == 0
    )
    with Store.open(path) as st:
        assert np.array_equal(st.matrix(), syn.generate(spec))
        assert st.models()["model_id"].tolist() == syn.models_table(spec)["model_id"].tolist()
    small = syn.write_store(spec, tmp_path / "q.duckdb", block_rows=5)
    with Store.open(small) as st:
        assert np.array_equal(st.matrix(), syn.generate(spec))
        assert len(st.log()) == 4
