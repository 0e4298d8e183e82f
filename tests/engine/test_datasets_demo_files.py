"""The committed Lifelong-Digits files: consistent, real, compact, and loud when damaged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lifelong_core.datasets import demo_files, digits, shifts
from lifelong_core.errors import InputError

DEMO = Path(__file__).resolve().parents[2] / "data" / "lifelong_digits"


@pytest.fixture(scope="module")
def demo():
    return demo_files.load_demo(DEMO)


def test_manifest_matches_every_file_and_total_size_is_small():
    manifest = demo_files.verify_manifest(DEMO)
    assert set(manifest["files"]) == set(demo_files.DATA_FILES)
    total = sum(p.stat().st_size for p in DEMO.iterdir())
    assert total <= 25 * 1024 * 1024
    assert manifest["versions"]["scikit-learn"]
    assert manifest["command"].startswith("python -m lifelong_core.datasets.digits")


def test_shape_models_families_domains_categories(demo):
    m, n = demo.shape
    assert m >= 400 and 10_000 <= n <= 15_000
    assert demo.models["family"].nunique() >= 8
    assert demo.models["model_id"].is_unique and demo.models["name"].is_unique
    assert demo.samples["sample_id"].is_unique
    assert demo.models["model_idx"].tolist() == list(range(m))
    assert demo.samples["sample_idx"].tolist() == list(range(n))
    assert sorted(demo.models["release_order"]) == list(range(m))
    doms = demo.domains
    assert len(doms) >= 11 and doms["domain"].is_unique
    assert set(doms["category"]) == set(shifts.CATEGORIES) and len(shifts.CATEGORIES) == 3
    assert {"clean", "clean-replication"} <= set(doms["domain"])
    counts = demo.samples.groupby("domain").size()
    assert all(counts[d] == k for d, k in zip(doms["domain"], doms["n_samples"]))
    cat = demo.samples.groupby("domain")["category"].nunique()
    assert (cat == 1).all()
    merged = demo.samples.merge(doms, on="domain", suffixes=("", "_d"))
    assert (merged["category"] == merged["category_d"]).all()


def test_metadata_describes_each_model(demo):
    for row in demo.models.itertuples():
        meta = json.loads(row.metadata)
        assert meta["family"] == row.family
        assert isinstance(meta["hyperparameters"], dict)
        assert meta["augmentation"] in shifts.AUGMENTATIONS
        assert meta["train_size"] > 0


def test_predictions_are_internally_consistent(demo):
    labels = demo.samples["label"].to_numpy()
    assert np.array_equal(demo.correct, (demo.predicted == labels[None, :]).astype(np.uint8))
    conf = demo.confidence.astype(np.float32)
    tp = demo.true_prob.astype(np.float32)
    assert conf.min() >= 0.0 and conf.max() <= 1.0 and tp.min() >= 0.0
    assert (tp <= conf).all()
    assert np.array_equal(tp[demo.correct == 1], conf[demo.correct == 1])
    # With ten classes the winning probability is never below 1/10.
    assert conf.min() >= np.float16(0.1) - 1e-3


def test_models_disagree_and_shifts_are_harder_than_clean(demo):
    acc = pd.DataFrame(demo.correct.T).groupby(demo.samples["domain"].to_numpy()).mean().T
    assert acc["clean"].mean() > 0.8
    for d in demo.domains["domain"]:
        if d not in ("clean", "clean-replication"):
            assert acc[d].mean() < acc["clean"].mean() - 0.03, d
    # The replication is similar but slightly harder, as CIFAR-10.1 is (Anzaku et al.).
    gap = acc["clean"] - acc["clean-replication"]
    assert 0.0 < gap.mean() < 0.08
    overall = demo.correct.mean(axis=1)
    assert overall.std() > 0.05
    # Family structure: families rank differently on different categories.
    cat = pd.DataFrame(demo.correct.T).groupby(demo.samples["category"].to_numpy()).mean().T
    best = {c: demo.models["family"][cat[c].idxmax()] for c in cat.columns}
    by_family = cat.groupby(demo.models["family"].to_numpy()).mean()
    assert len({tuple(by_family[c].rank().tolist()) for c in cat.columns}) == 3, best


def test_images_are_the_real_digits_and_pools_are_disjoint(demo):
    from sklearn.datasets import load_digits

    images = demo_files.load_images(DEMO)
    assert images.shape == (demo.shape[1], 8, 8) and images.dtype == np.uint8 and images.max() <= 16
    real = load_digits()
    src = demo.samples["source_index"].to_numpy()
    assert np.array_equal(demo.samples["label"].to_numpy(), real.target[src])
    clean = (demo.samples["domain"] == "clean").to_numpy()
    assert np.array_equal(images[clean], real.images[src[clean]].astype(np.uint8))
    train, test, rep = digits.split_pools(real.target)
    rep_idx = src[(demo.samples["domain"] == "clean-replication").to_numpy()]
    assert set(src[clean]) == set(test)
    assert set(rep_idx) == set(rep)
    assert not set(rep) & set(test) and not set(train) & (set(test) | set(rep))
    assert len(train) + len(test) + len(rep) == len(real.target)


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(DEMO, dst)
    return dst


def test_a_changed_file_fails_the_manifest(tmp_path):
    d = _copy(tmp_path)
    text = (d / "models.csv").read_text()
    (d / "models.csv").write_text(text.replace("knn", "kNN", 1))
    with pytest.raises(InputError, match=r"models.csv does not match its checksum"):
        demo_files.verify_manifest(d)


def test_missing_and_truncated_files_are_input_errors(tmp_path):
    d = _copy(tmp_path)
    (d / "samples.csv").unlink()
    with pytest.raises(InputError, match=r"samples.csv is missing"):
        demo_files.load_demo(d)
    d2 = tmp_path / "demo2"
    shutil.copytree(DEMO, d2)
    raw = (d2 / "predictions.npz").read_bytes()
    (d2 / "predictions.npz").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(InputError, match="unreadable"):
        demo_files.load_demo(d2)


def test_samples_table_of_the_wrong_length_is_an_input_error(tmp_path, demo):
    d = _copy(tmp_path)
    s = pd.read_csv(d / "samples.csv")
    s.iloc[:-1].to_csv(d / "samples.csv", index=False)
    with pytest.raises(InputError, match=f"samples.csv has {demo.shape[1] - 1} rows"):
        demo_files.load_demo(d)


def test_npz_writer_is_byte_reproducible(tmp_path):
    arrays = {"a": np.arange(10, dtype=np.uint8), "b": np.linspace(0, 1, 7).astype(np.float16)}
    demo_files.write_npz(tmp_path / "x.npz", arrays)
    demo_files.write_npz(tmp_path / "y.npz", arrays)
    assert (tmp_path / "x.npz").read_bytes() == (tmp_path / "y.npz").read_bytes()
    with np.load(tmp_path / "x.npz", allow_pickle=False) as z:
        assert np.array_equal(z["b"], arrays["b"])


def test_committed_domain_table_matches_the_renderers(demo):
    doms = demo.domains
    assert doms["domain"].tolist() == [d.name for d in shifts.DOMAINS]
    assert doms["category"].tolist() == [d.category for d in shifts.DOMAINS]
    assert doms["description"].tolist() == [d.description for d in shifts.DOMAINS]
    assert (doms["dataset"] == digits.DATASET).all()


def test_committed_files_match_what_the_current_code_would_build(demo):
    """Everything but the training itself: specs, release order, pools, renderings."""
    from sklearn.datasets import load_digits

    from lifelong_core.datasets import zoo

    specs = zoo.model_specs(per_family=digits.DEFAULT_PER_FAMILY, seed=digits.SEED)
    order = np.argsort(zoo.release_order(specs, seed=digits.SEED), kind="stable")
    assert demo.models["name"].tolist() == [specs[i].name for i in order]
    real = load_digits()
    rendered, samples, domains = digits.render_test_set(real.images.astype(float), real.target)
    assert np.array_equal(rendered, demo_files.load_images(DEMO))
    for col in samples.columns:
        assert samples[col].astype(str).tolist() == demo.samples[col].astype(str).tolist(), col
    assert (
        domains.astype(str).values.tolist()
        == demo.domains[domains.columns].astype(str).values.tolist()
    )
