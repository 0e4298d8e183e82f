"""Build Lifelong-Digits: real classifiers on real digits under rendered shifts.

    python -m lifelong_core.datasets.digits --out data/lifelong_digits [--jobs 2]

A small-scale analogue of the lifelong benchmarks of Prabhu et al. (2024) (Section 4.1: a pool of test
samples from several domains, a growing set of models, and the 0/1 cache A of models x
samples). Steps, all seeded:

1. scikit-learn's bundled 8x8 digits (1,797 real scans, no download) are split per class
   into a training pool, a test pool (80 per class) and a replication pool (30 per class).
2. The test pool is rendered under every domain of :mod:`.shifts` (the clean pool and 12
   shifts); the replication pool is re-digitized as ``clean-replication``.
3. Every classifier of :mod:`.zoo` is trained on a stratified subset of the training pool
   (possibly augmented) and predicts probabilities for every test sample; we keep the
   predicted label, the largest probability, the true class's probability and 0/1
   correctness.
4. The results go to compact committed files (:mod:`.demo_files`), models ordered by their
   release order so that row i of A is the i-th model released.

Determinism: BLAS and OpenMP are limited to one thread in every worker (threadpoolctl), and
each model depends only on its own spec and seed, so the output does not depend on
``--jobs``. A rebuild with the same library versions is byte-identical (see MANIFEST.json).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from lifelong_core.datasets import shifts, zoo
from lifelong_core.datasets.demo_files import DemoData, write_demo
from lifelong_core.errors import InputError

DATASET = "lifelong-digits"
SEED = 20261122
TEST_PER_CLASS = 80
REPLICATION_PER_CLASS = 30
DEFAULT_PER_FAMILY = 40


def split_pools(labels: np.ndarray, seed: int = SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Disjoint (train, test, replication) index arrays, stratified by class, each sorted."""
    rng = np.random.default_rng([seed, 0])
    train, test, rep = [], [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        test.append(idx[:TEST_PER_CLASS])
        rep.append(idx[TEST_PER_CLASS : TEST_PER_CLASS + REPLICATION_PER_CLASS])
        train.append(idx[TEST_PER_CLASS + REPLICATION_PER_CLASS :])
    return (
        np.sort(np.concatenate(train)),
        np.sort(np.concatenate(test)),
        np.sort(np.concatenate(rep)),
    )


def render_test_set(
    images: np.ndarray, labels: np.ndarray, seed: int = SEED
) -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame]:
    """Rendered test images and the samples / domains tables.

    Returns ``(rendered uint8 (N, 8, 8), samples DataFrame, domains DataFrame)``; samples
    are grouped by domain in the order of :data:`shifts.DOMAINS`.
    """
    _, test, rep = split_pools(labels, seed)
    parts, rows, doms = [], [], []
    for d_idx, dom in enumerate(shifts.DOMAINS):
        src = rep if dom.name == "clean-replication" else test
        rendered = shifts.render(images[src], dom.name, np.random.default_rng([seed, 1, d_idx]))
        parts.append(rendered)
        for i in src:
            rows.append(
                (
                    f"{dom.name}/{int(i):04d}",
                    DATASET,
                    dom.name,
                    dom.category,
                    int(labels[i]),
                    "test",
                    int(i),
                )
            )
        doms.append((DATASET, dom.name, dom.category, len(src), dom.description))
    samples = pd.DataFrame(
        rows,
        columns=["sample_id", "dataset", "domain", "category", "label", "split", "source_index"],
    )
    samples.insert(0, "sample_idx", np.arange(len(samples)))
    domains = pd.DataFrame(
        doms, columns=["dataset", "domain", "category", "n_samples", "description"]
    )
    return np.concatenate(parts), samples, domains


# Worker state: set once per process (inherited on fork, or passed to the initializer).
_STATE: dict = {}


def _init_worker(
    train_images: np.ndarray, train_labels: np.ndarray, test_X: np.ndarray, test_labels: np.ndarray
) -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    os.environ["OMP_NUM_THREADS"] = "1"
    _STATE.update(
        train_images=train_images, train_labels=train_labels, test_X=test_X, test_labels=test_labels
    )


def _stratified_subset(labels: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    if size == 0 or size >= len(labels):
        return np.arange(len(labels))
    classes = np.unique(labels)
    per = np.full(len(classes), size // len(classes))
    per[: size % len(classes)] += 1
    return np.sort(
        np.concatenate(
            [rng.permutation(np.flatnonzero(labels == c))[:k] for c, k in zip(classes, per)]
        )
    )


def train_and_predict(spec: zoo.ModelSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit one zoo model on its training data; (predicted uint8, confidence, true_prob) float64."""
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng([spec.seed, 2])
    labels = _STATE["train_labels"]
    idx = _stratified_subset(labels, spec.train_size, rng)
    copies = 0 if spec.augmentation == "none" else zoo.AUGMENT_COPIES
    X = shifts.augment(_STATE["train_images"][idx], spec.augmentation, copies, rng)
    y = np.tile(labels[idx], copies + 1)
    est = zoo.make_estimator(spec)
    with warnings.catch_warnings():
        # The capacity grid deliberately includes under-trained and ill-conditioned models
        # (few iterations, tiny regularization, collinear QDA); their warnings are expected.
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        est.fit(X.reshape(len(X), -1).astype(np.float64), y)
        proba = est.predict_proba(_STATE["test_X"])
    classes = np.asarray(est.classes_)
    proba = np.nan_to_num(proba, nan=0.0)
    best = np.argmax(proba, axis=1)
    predicted = classes[best].astype(np.uint8)
    confidence = proba[np.arange(len(proba)), best]
    col = np.searchsorted(classes, _STATE["test_labels"])
    true_prob = proba[np.arange(len(proba)), col]
    return predicted, confidence, true_prob


def build(
    out: Path,
    *,
    per_family: int = DEFAULT_PER_FAMILY,
    families: tuple[str, ...] | None = None,
    jobs: int = 2,
    seed: int = SEED,
    command: str = "",
    progress: Callable[[int, int], object] | None = None,
) -> dict:
    """Train the zoo, predict every test sample, write the committed files; returns the manifest."""
    import sklearn
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float64)
    labels = digits.target.astype(np.int64)
    train, _, _ = split_pools(labels, seed)
    rendered, samples, domains = render_test_set(images, labels, seed)
    test_X = rendered.reshape(len(rendered), -1).astype(np.float64)
    test_labels = samples["label"].to_numpy()

    specs = zoo.model_specs(per_family=per_family, seed=seed, families=families)
    order = zoo.release_order(specs, seed=seed)
    specs = [specs[i] for i in np.argsort(order, kind="stable")]

    init_args = (images[train], labels[train], test_X, test_labels)
    results: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    if jobs <= 1:
        _init_worker(*init_args)
        for i, spec in enumerate(specs):
            results.append(train_and_predict(spec))
            if progress:
                progress(i + 1, len(specs))
    else:
        import multiprocessing as mp

        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        with ctx.Pool(jobs, initializer=_init_worker, initargs=init_args) as pool:
            # imap yields in the order of ``specs``.
            for i, res in enumerate(pool.imap(train_and_predict, specs, chunksize=1)):
                results.append(res)
                if progress:
                    progress(i + 1, len(specs))

    predicted = np.stack([r[0] for r in results])
    confidence = np.stack([r[1] for r in results]).astype(np.float16)
    true_prob = np.stack([r[2] for r in results]).astype(np.float16)
    correct = (predicted == test_labels[None, :].astype(np.uint8)).astype(np.uint8)

    models = pd.DataFrame(
        {
            "model_idx": np.arange(len(specs)),
            "model_id": [f"{DATASET}/{s.name}" for s in specs],
            "name": [s.name for s in specs],
            "family": [s.family for s in specs],
            "release_order": np.arange(len(specs)),
            "metadata": [s.metadata(len(train)) for s in specs],
        }
    )
    data = DemoData(correct, predicted, confidence, true_prob, models, samples, domains)
    extra = {
        "dataset": DATASET,
        "command": command or f"python -m lifelong_core.datasets.digits --out {out}",
        "seed": seed,
        "per_family": per_family,
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scikit-learn": sklearn.__version__,
            "scipy": __import__("scipy").__version__,
        },
        "pools": {
            "train": len(train),
            "test_per_class": TEST_PER_CLASS,
            "replication_per_class": REPLICATION_PER_CLASS,
        },
    }
    return write_demo(Path(out), data, rendered, extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lifelong_core.datasets.digits", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, default=Path("data/lifelong_digits"))
    parser.add_argument(
        "--per-family", type=int, default=DEFAULT_PER_FAMILY, help="models per family (default 40)"
    )
    parser.add_argument(
        "--families", default=None, help="comma-separated subset of families (default: all)"
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="worker processes (results do not depend on it)"
    )
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    families = tuple(args.families.split(",")) if args.families else None
    unknown = [f for f in families or () if f not in zoo.FAMILY_ERAS]
    try:
        if unknown:
            raise InputError(
                f"unknown family {unknown[0]!r}; choose from {', '.join(zoo.FAMILY_ERAS)}."
            )
        if args.jobs < 1:
            raise InputError(f"--jobs must be at least 1, got {args.jobs}.")
        zoo.model_specs(per_family=args.per_family, seed=args.seed, families=families)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wall, cpu = time.perf_counter(), time.process_time()
    children_before = os.times()

    def progress(done: int, total: int) -> None:
        if done % 20 == 0 or done == total:
            print(
                f"  {done}/{total} models ({time.perf_counter() - wall:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    command = "python -m lifelong_core.datasets.digits " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    manifest = build(
        args.out,
        per_family=args.per_family,
        families=families,
        jobs=args.jobs,
        seed=args.seed,
        command=command.strip(),
        progress=progress,
    )
    t = os.times()
    cpu_total = (
        (time.process_time() - cpu)
        + (t.children_user - children_before.children_user)
        + (t.children_system - children_before.children_system)
    )
    print(
        f"wrote {args.out}: {manifest['n_models']} models x {manifest['n_samples']} samples, "
        f"{manifest['total_bytes'] / 1e6:.1f} MB; wall {time.perf_counter() - wall:.1f} s, CPU {cpu_total:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
