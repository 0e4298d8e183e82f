"""Seeded synthetic caches for scale work: sample difficulty x model ability.

    python -m lifelong_core.datasets.synthetic --models 2000 --samples 500000 --out A.npy [--packed]
    python -m lifelong_core.datasets.synthetic --models 300 --samples 20000 --store synth.duckdb

Prabhu et al. (2024) assumes (Section 3, "Sort") that one difficulty order of samples holds for all
models and shows (Appendix E, Fig. 7) that it roughly does for image
classifiers. This generator makes that assumption explicit and tunable, as a two-parameter
logistic item-response model (the computerized-adaptive-testing view the paper cites):

    P(correct_ij) = sigmoid(discrimination * (ability_i - difficulty_j - offset_{c(i), j}))

- ``ability_i ~ N(ability_mean + ability_trend * i / m, ability_sd)``: later models can be
  better, as in a lifelong stream;
- ``difficulty_j ~ N(0, difficulty_sd)``;
- optional model clusters ``c(i)`` with their own per-sample offsets
  ``offset_{c, j} ~ N(0, cluster_spread)``, so each cluster has its own sample order (the
  "model cliques" of Appendix E, which the paper did not find on ImageNet but warns of);
- label noise: a fraction of samples is mislabeled, and every model is right on those only
  by chance (``chance``), whatever its ability.

Rows are generated one at a time from their own seed (``[seed, 2, row]``), so any block of
rows is identical whichever block size is used, and paper-shaped data (31,250 x 1.7M) can
be streamed to disk row block by row block without holding it. Everything it produces is
synthetic and labelled so (``synthetic=True`` on the dataset in a store).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from argparse import Namespace
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from lifelong_core.errors import InputError
from lifelong_core.store import Store, held_alone, insert_packed_rows, replace_held

DEFAULT_BLOCK_BYTES = 64 << 20


@dataclass(frozen=True)
class SyntheticSpec:
    """Everything that determines a synthetic cache (with the seed, it fixes every bit)."""

    n_models: int
    n_samples: int
    seed: int = 0
    ability_mean: float = 1.0
    ability_sd: float = 1.0
    ability_trend: float = 0.0
    difficulty_sd: float = 1.5
    discrimination: float = 1.7
    n_clusters: int = 1
    cluster_spread: float = 0.0
    label_noise: float = 0.0
    chance: float = 0.1

    def __post_init__(self) -> None:
        checks = [
            (self.n_models >= 1, "n_models must be at least 1"),
            (self.n_samples >= 1, "n_samples must be at least 1"),
            (self.n_clusters >= 1, "n_clusters must be at least 1"),
            (
                self.ability_sd >= 0 and self.difficulty_sd >= 0 and self.cluster_spread >= 0,
                "standard deviations must be non-negative",
            ),
            (self.discrimination > 0, "discrimination must be positive"),
            (0.0 <= self.label_noise <= 1.0, "label_noise must be in [0, 1]"),
            (0.0 <= self.chance <= 1.0, "chance must be in [0, 1]"),
        ]
        for ok, message in checks:
            if not ok:
                raise InputError(f"synthetic spec: {message}.")


@dataclass(frozen=True)
class SyntheticParams:
    """The latent parameters behind a synthetic cache."""

    ability: np.ndarray  # float64 (models,)
    cluster: np.ndarray  # int64 (models,)
    difficulty: np.ndarray  # float32 (samples,)
    offsets: np.ndarray  # float32 (clusters, samples); zeros when cluster_spread == 0
    mislabeled: np.ndarray  # bool (samples,)


@dataclass(frozen=True)
class Block:
    """Rows ``start .. start + len(correct)`` of the cache."""

    start: int
    correct: np.ndarray  # uint8 0/1 (rows, samples), or packed (rows, ceil(samples / 8))
    prob: np.ndarray | None  # float32 (rows, samples): P(correct), i.e. the true-class probability


def params(spec: SyntheticSpec) -> SyntheticParams:
    """Draw the latent parameters (O(models + clusters x samples) memory)."""
    rm = np.random.default_rng([spec.seed, 0])
    m = spec.n_models
    ability = rm.normal(
        spec.ability_mean, spec.ability_sd, size=m
    ) + spec.ability_trend * np.arange(m) / max(m - 1, 1)
    cluster = rm.integers(0, spec.n_clusters, size=m)
    rs = np.random.default_rng([spec.seed, 1])
    n = spec.n_samples
    difficulty = rs.normal(0.0, spec.difficulty_sd, size=n).astype(np.float32)
    if spec.cluster_spread > 0 and spec.n_clusters > 1:
        offsets = rs.normal(0.0, spec.cluster_spread, size=(spec.n_clusters, n)).astype(np.float32)
    else:
        offsets = np.zeros((spec.n_clusters, n), dtype=np.float32)
    mislabeled = rs.random(n) < spec.label_noise
    return SyntheticParams(ability, cluster, difficulty, offsets, mislabeled)


def _row_prob(spec: SyntheticSpec, p: SyntheticParams, i: int) -> np.ndarray:
    shifted = p.difficulty + p.offsets[p.cluster[i]]
    x = np.float32(spec.discrimination) * (np.float32(p.ability[i]) - shifted)
    prob = expit(x)
    if p.mislabeled.any():
        prob[p.mislabeled] = np.float32(spec.chance)
    return prob


def default_block_rows(n_samples: int, packed: bool = False) -> int:
    per_row = (n_samples + 7) // 8 if packed else n_samples
    return max(1, DEFAULT_BLOCK_BYTES // max(per_row, 1))


def iter_blocks(
    spec: SyntheticSpec,
    block_rows: int | None = None,
    *,
    packed: bool = False,
    with_prob: bool = False,
    start: int = 0,
    stop: int | None = None,
    latent: SyntheticParams | None = None,
) -> Iterator[Block]:
    """Yield consecutive row blocks of the cache for rows ``start .. stop``.

    Memory is one block plus one float row; packed blocks use
    ``np.packbits(axis=1, bitorder="little")``, the store's and the packed engine's layout.
    """
    stop = spec.n_models if stop is None else min(stop, spec.n_models)
    if not 0 <= start <= stop:
        raise InputError(
            f"synthetic rows {start}..{stop} are out of range for {spec.n_models} models."
        )
    rows = block_rows or default_block_rows(spec.n_samples, packed)
    p = latent if latent is not None else params(spec)
    n = spec.n_samples
    for b0 in range(start, stop, rows):
        b1 = min(b0 + rows, stop)
        width = (n + 7) // 8 if packed else n
        out = np.empty((b1 - b0, width), dtype=np.uint8)
        probs = np.empty((b1 - b0, n), dtype=np.float32) if with_prob else None
        for r, i in enumerate(range(b0, b1)):
            prob = _row_prob(spec, p, i)
            u = np.random.default_rng([spec.seed, 2, i]).random(n, dtype=np.float32)
            bits = u < prob
            out[r] = np.packbits(bits, bitorder="little") if packed else bits
            if probs is not None:
                probs[r] = prob
        yield Block(b0, out, probs)


def generate(
    spec: SyntheticSpec, *, with_prob: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The whole cache in memory (uint8 models x samples); with ``with_prob`` also P(correct)."""
    blocks = list(iter_blocks(spec, with_prob=with_prob))
    A = np.concatenate([b.correct for b in blocks])
    if with_prob:
        return A, np.concatenate([b.prob for b in blocks])
    return A


def write_npy(
    spec: SyntheticSpec,
    path: Path,
    *,
    packed: bool = False,
    block_rows: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> Path:
    """Stream the cache to an ``.npy`` file (uint8, packed rows if ``packed``) atomically."""
    path = Path(path)
    width = (spec.n_samples + 7) // 8 if packed else spec.n_samples
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        out = np.lib.format.open_memmap(
            tmp, mode="w+", dtype=np.uint8, shape=(spec.n_models, width)
        )
        latent = params(spec)
        for block in iter_blocks(spec, block_rows, packed=packed, latent=latent):
            out[block.start : block.start + len(block.correct)] = block.correct
            if progress:
                progress(block.start + len(block.correct), spec.n_models)
        out.flush()
        del out
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def samples_table(spec: SyntheticSpec, dataset: str = "synthetic") -> pd.DataFrame:
    """Sample metadata for a store: ids, the dataset, one domain, split 'test'."""
    n = spec.n_samples
    width = len(str(n - 1))
    return pd.DataFrame(
        {
            "sample_id": [f"{dataset}/{j:0{width}d}" for j in range(n)],
            "dataset": dataset,
            "domain": "synthetic",
            "category": "synthetic",
            "label": 0,
            "split": "test",
        }
    )


def models_table(
    spec: SyntheticSpec,
    dataset: str = "synthetic",
    start: int = 0,
    stop: int | None = None,
    latent: SyntheticParams | None = None,
) -> pd.DataFrame:
    """Model metadata for a store: one row per synthetic model, its ability and cluster."""
    stop = spec.n_models if stop is None else stop
    p = latent if latent is not None else params(spec)
    width = len(str(spec.n_models - 1))
    idx = np.arange(start, stop)
    return pd.DataFrame(
        {
            "model_id": [f"{dataset}/model-{i:0{width}d}" for i in idx],
            "name": [f"synthetic model {i}" for i in idx],
            "family": [f"cluster-{int(p.cluster[i])}" for i in idx],
            "release_order": idx,
            "metadata": [
                json.dumps(
                    {
                        "synthetic": True,
                        "ability": round(float(p.ability[i]), 6),
                        "cluster": int(p.cluster[i]),
                        "seed": spec.seed,
                    }
                )
                for i in idx
            ],
        }
    )


def write_store(
    spec: SyntheticSpec,
    path: Path,
    *,
    dataset: str = "synthetic",
    with_prob: bool = False,
    force: bool = False,
    block_rows: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> Path:
    """Write the cache into a new store as dataset ``dataset`` (flagged synthetic).

    Rows go in one import per block of rows (insert_M of Prabhu et al. (2024), Section 2), so memory
    stays at one block: packed rows through the bulk packed import, or, with
    ``with_prob``, dense rows plus P(correct) recorded as ``true_prob`` through
    ``insert_matrix`` (a long extras table: demo scale only). The store is built in a
    temporary file and renamed at the end.
    """
    path = Path(path)
    if path.exists() and not force:
        raise InputError(f"{path} already exists; pass --force to replace it.")
    if not path.parent.exists():
        raise InputError(f"cannot create store {path}: folder {path.parent} does not exist.")
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    wal = [tmp, tmp.with_name(tmp.name + ".wal")]
    for p in wal:
        p.unlink(missing_ok=True)
    description = (
        f"Synthetic cache from a logistic item-response model: {spec.n_models} models x "
        f"{spec.n_samples} samples, seed {spec.seed}. Not real predictions."
    )
    fields = ", ".join(f"{k}={v}" for k, v in spec.__dict__.items())
    # Dense blocks with probabilities cost 5 bytes per entry in memory: keep them small.
    rows = block_rows or (
        max(1, (16 << 20) // spec.n_samples)
        if with_prob
        else default_block_rows(spec.n_samples, packed=True)
    )
    latent = params(spec)
    samples = samples_table(spec, dataset)
    # One writer rule: the target is held from before the build until the rename, which
    # checks the path still names the held file (lifelong_core.store.replace_held).
    with held_alone(path, "replace") as held:
        try:
            with Store.create(tmp) as st:
                st.add_dataset(
                    dataset,
                    description=description,
                    synthetic=True,
                    source=f"lifelong_core.datasets.synthetic({fields})",
                )
                for block in iter_blocks(
                    spec, rows, packed=not with_prob, with_prob=with_prob, latent=latent
                ):
                    stop = block.start + len(block.correct)
                    models = models_table(spec, dataset, block.start, stop, latent)
                    source = f"synthetic rows {block.start}..{stop - 1}"
                    if block.prob is not None:  # the blocks carry probabilities when with_prob
                        st.insert_matrix(
                            block.correct,
                            models=models,
                            samples=samples,
                            source=source,
                            extras={"true_prob": block.prob},
                        )
                    else:
                        # Samples are registered with the first block; later blocks reuse them.
                        insert_packed_rows(
                            st,
                            block.correct,
                            spec.n_samples,
                            models,
                            samples=samples if block.start == 0 else None,
                            source=source,
                        )
                    if progress:
                        progress(stop, spec.n_models)
            replace_held(tmp, path, held)
        finally:
            for p in wal:
                p.unlink(missing_ok=True)
    return path


def _spec_from_args(args: Namespace) -> SyntheticSpec:
    return SyntheticSpec(
        n_models=args.models,
        n_samples=args.samples,
        seed=args.seed,
        ability_trend=args.trend,
        n_clusters=args.clusters,
        cluster_spread=args.cluster_spread,
        label_noise=args.label_noise,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lifelong_core.datasets.synthetic", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--models", type=int, required=True)
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--trend", type=float, default=0.0, help="ability gained from the first to the last model"
    )
    parser.add_argument("--clusters", type=int, default=1)
    parser.add_argument("--cluster-spread", type=float, default=0.0)
    parser.add_argument("--label-noise", type=float, default=0.0)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path, help="write an .npy matrix (uint8 models x samples)")
    target.add_argument("--store", type=Path, help="write a new DuckDB store (dataset 'synthetic')")
    parser.add_argument(
        "--packed",
        action="store_true",
        help="with --out: rows packed 8 samples per byte (little bit order)",
    )
    parser.add_argument(
        "--with-prob", action="store_true", help="with --store: also record P(correct) as true_prob"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing output")
    args = parser.parse_args(argv)
    try:
        spec = _spec_from_args(args)
        target_path = args.out or args.store
        if target_path.exists() and not args.force:
            raise InputError(f"{target_path} already exists; pass --force to replace it.")
        t0 = time.perf_counter()
        if args.out:
            write_npy(spec, args.out, packed=args.packed)
        else:
            write_store(spec, args.store, with_prob=args.with_prob, force=args.force)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {target_path}: {spec.n_models} x {spec.n_samples} synthetic in {time.perf_counter() - t0:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
