"""The Lifelong-Digits builder on a handful of models: deterministic, consistent, real shifts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lifelong_core.datasets import demo_files, digits, shifts, zoo
from lifelong_core.errors import InputError


@pytest.fixture(scope="module")
def small_builds(tmp_path_factory):
    """The same small build made in one process (``a``) and with two workers (``b``), once
    per session (the tests reading it may run on different workers), with the manifests
    each build wrote."""
    from tests.shared import built_once

    def build(root):
        # The cheapest families; the full zoo is built only by the builder's command line.
        fams = ("naive-bayes", "discriminant", "decision-tree")
        digits.build(root / "a", per_family=2, families=fams, jobs=1)
        digits.build(root / "b", per_family=2, families=fams, jobs=2)

    root = built_once(tmp_path_factory, "digits-small", build)
    a, b = (json.loads((root / x / demo_files.MANIFEST).read_text()) for x in ("a", "b"))
    return root, a, b


@pytest.mark.slow
def test_rebuild_is_byte_identical_whatever_the_number_of_workers(small_builds):
    _, a, b = small_builds
    assert {k: v["sha256"] for k, v in a["files"].items()} == {
        k: v["sha256"] for k, v in b["files"].items()
    }


def test_small_build_is_consistent(small_builds):
    root, manifest, _ = small_builds
    demo_files.verify_manifest(root / "a")
    d = demo_files.load_demo(root / "a")
    assert d.shape == (6, manifest["n_samples"])
    assert set(d.models["family"]) == {"naive-bayes", "discriminant", "decision-tree"}
    labels = d.samples["label"].to_numpy()
    assert np.array_equal(d.correct, (d.predicted == labels).astype(np.uint8))
    assert (d.true_prob <= d.confidence).all()
    assert d.correct.mean() > 0.4
    # Rows are in release order.
    assert d.models["release_order"].tolist() == list(range(6))


def test_every_domain_renders_deterministically_in_the_feature_format():
    from sklearn.datasets import load_digits

    imgs = load_digits().images[:40]
    for dom in shifts.DOMAINS:
        r1 = shifts.render(imgs, dom.name, np.random.default_rng(1))
        r2 = shifts.render(imgs, dom.name, np.random.default_rng(1))
        assert r1.dtype == np.uint8 and r1.shape == (40, 8, 8) and r1.max() <= 16
        assert np.array_equal(r1, r2)
        if dom.name == "clean":
            assert np.array_equal(r1, imgs.astype(np.uint8))
        else:
            assert (r1 != imgs).any(axis=(1, 2)).mean() > 0.5, dom.name
    assert {d.category for d in shifts.DOMAINS} == set(shifts.CATEGORIES)
    with pytest.raises(KeyError):
        shifts.render(imgs, "no-such-domain", np.random.default_rng(0))


def test_upsampling_round_trips_nearly_exactly():
    from sklearn.datasets import load_digits

    imgs = load_digits().images[:200]
    assert np.abs(shifts._downsample(shifts._upsample(imgs)) - imgs).max() < 1.5


def test_augmentation_keeps_originals_first():
    from sklearn.datasets import load_digits

    imgs = load_digits().images[:5]
    out = shifts.augment(imgs, "rotate", 2, np.random.default_rng(0))
    assert out.shape == (15, 8, 8)
    assert np.array_equal(out[:5], imgs.astype(np.uint8))
    assert np.array_equal(
        shifts.augment(imgs, "none", 2, np.random.default_rng(0)), imgs.astype(np.uint8)
    )


def test_zoo_specs_are_unique_and_cover_every_family():
    specs = zoo.model_specs()
    assert len(specs) == 40 * len(zoo.FAMILY_ERAS)
    assert len({s.name for s in specs}) == len(specs)
    assert zoo.model_specs() == specs
    order = zoo.release_order(specs)
    assert sorted(order) == list(range(len(specs)))
    for fam in zoo.FAMILY_ERAS:
        spec = next(s for s in specs if s.family == fam)
        assert hasattr(zoo.make_estimator(spec), "predict_proba")
        assert json.loads(spec.metadata(697))["family"] == fam
    with pytest.raises(InputError, match="between 1 and"):
        zoo.model_specs(per_family=10_000, families=("naive-bayes",))
    with pytest.raises(InputError, match="between 1 and"):
        zoo.model_specs(per_family=0)


def test_split_pools_are_disjoint_stratified_and_seeded():
    labels = np.repeat(np.arange(10), 150)
    train, test, rep = digits.split_pools(labels, seed=3)
    assert np.bincount(labels[test]).tolist() == [digits.TEST_PER_CLASS] * 10
    assert np.bincount(labels[rep]).tolist() == [digits.REPLICATION_PER_CLASS] * 10
    assert (
        len(np.intersect1d(train, test))
        == len(np.intersect1d(train, rep))
        == len(np.intersect1d(test, rep))
        == 0
    )
    assert all(
        np.array_equal(x, y) for x, y in zip(digits.split_pools(labels, seed=3), (train, test, rep))
    )


def test_builder_cli_rejects_unknown_family(tmp_path, capsys):
    assert digits.main(["--out", str(tmp_path / "x"), "--families", "resnet"]) == 2
    assert "unknown family 'resnet'" in capsys.readouterr().err
    assert digits.main(["--out", str(tmp_path / "x"), "--per-family", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: models per family")
    assert digits.main(["--out", str(tmp_path / "x"), "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
