"""The committed files of a demo dataset, written and read the same way everywhere.

A directory such as ``data/lifelong_digits`` holds:

- ``predictions.npz``: ``correct_bits`` (models x ceil(samples / 8) uint8, rows packed with
  ``np.packbits(axis=1, bitorder="little")``), ``predicted`` (uint8 class label),
  ``confidence`` (float16: the largest class probability) and ``true_prob`` (float16: the
  probability given to the true class), plus ``shape`` (int64 [models, samples]);
- ``images.npz``: ``images`` (samples x 8 x 8 uint8, intensities 0..16), the rendered test
  images in sample order, so that a viewer can show what a sample looks like;
- ``models.csv``: model_idx, model_id, name, family, release_order, metadata (JSON);
- ``samples.csv``: sample_idx, sample_id, dataset, domain, category, label, split,
  source_index (row of the image in ``sklearn.datasets.load_digits``);
- ``domains.csv``: dataset, domain, category, n_samples, description;
- ``MANIFEST.json``: sizes and SHA-256 of every file, the build command, library versions.

Probabilities are quantized once, to float16 (spacing 2^-11 near 1, finer below), when the
files are written; widening float16 to the store's float32 is exact, so what the store
holds equals what is committed. Correctness is exact: ``correct == (predicted == label)``.
The ``.npz`` files are written with fixed zip timestamps so that a rebuild with the same
library versions is byte-identical.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from lifelong_core.errors import InputError

PREDICTIONS = "predictions.npz"
IMAGES = "images.npz"
MODELS = "models.csv"
SAMPLES = "samples.csv"
DOMAINS = "domains.csv"
MANIFEST = "MANIFEST.json"
DATA_FILES = (PREDICTIONS, IMAGES, MODELS, SAMPLES, DOMAINS)

MODEL_COLUMNS = ["model_idx", "model_id", "name", "family", "release_order", "metadata"]
SAMPLE_COLUMNS = [
    "sample_idx",
    "sample_id",
    "dataset",
    "domain",
    "category",
    "label",
    "split",
    "source_index",
]
DOMAIN_COLUMNS = ["dataset", "domain", "category", "n_samples", "description"]


@dataclass(frozen=True)
class DemoData:
    """A demo dataset in memory, as committed (``correct`` unpacked to uint8 0/1)."""

    correct: np.ndarray  # uint8 (models, samples)
    predicted: np.ndarray  # uint8 (models, samples)
    confidence: np.ndarray  # float16 (models, samples)
    true_prob: np.ndarray  # float16 (models, samples)
    models: pd.DataFrame
    samples: pd.DataFrame
    domains: pd.DataFrame

    @property
    def shape(self) -> tuple[int, int]:
        return self.correct.shape


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Like ``np.savez_compressed`` but byte-reproducible (fixed member timestamps)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue(), compresslevel=9)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_demo(directory: Path, data: DemoData, images: np.ndarray, manifest_extra: dict) -> dict:
    """Write ``data`` and ``images`` to ``directory`` with a MANIFEST; returns the manifest."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    m, n = data.shape
    write_npz(
        directory / PREDICTIONS,
        {
            "correct_bits": np.packbits(data.correct.astype(bool), axis=1, bitorder="little"),
            "predicted": data.predicted.astype(np.uint8),
            "confidence": data.confidence.astype(np.float16),
            "true_prob": data.true_prob.astype(np.float16),
            "shape": np.array([m, n], dtype=np.int64),
        },
    )
    write_npz(directory / IMAGES, {"images": images.astype(np.uint8)})
    data.models[MODEL_COLUMNS].to_csv(directory / MODELS, index=False, lineterminator="\n")
    data.samples[SAMPLE_COLUMNS].to_csv(directory / SAMPLES, index=False, lineterminator="\n")
    data.domains[DOMAIN_COLUMNS].to_csv(directory / DOMAINS, index=False, lineterminator="\n")
    sizes = {name: (directory / name).stat().st_size for name in DATA_FILES}
    files = {
        name: {"bytes": sizes[name], "sha256": sha256(directory / name)} for name in DATA_FILES
    }
    manifest = {
        **manifest_extra,
        "n_models": int(m),
        "n_samples": int(n),
        "quantization": "confidence and true_prob stored as float16; correctness exact (packed bits, little bit order)",
        "files": files,
        "total_bytes": sum(sizes.values()),
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def _npz(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        raise InputError(
            f"demo file {path} is missing; rebuild it with python -m lifelong_core.datasets.digits"
        )
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"demo file {path} is unreadable ({exc}).") from None


def _csv(path: Path, columns: list[str]) -> pd.DataFrame:
    if not path.exists():
        raise InputError(
            f"demo file {path} is missing; rebuild it with python -m lifelong_core.datasets.digits"
        )
    df = pd.read_csv(path, keep_default_na=False)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"demo file {path} lacks column(s) {', '.join(missing)}.")
    return df


def verify_manifest(directory: Path) -> dict:
    """Check every file of a demo directory against its MANIFEST.json.

    Parameters
    ----------
    directory : pathlib.Path
        The demo directory.

    Returns
    -------
    dict
        The manifest.

    Raises
    ------
    InputError
        Naming the first file that is missing or does not match its checksum.
    """
    directory = Path(directory)
    path = directory / MANIFEST
    if not path.exists():
        raise InputError(f"{path} is missing; the demo directory is incomplete.")
    manifest = json.loads(path.read_text())
    for name, entry in manifest["files"].items():
        f = directory / name
        if not f.exists():
            raise InputError(f"demo file {f} listed in {path} is missing.")
        if sha256(f) != entry["sha256"]:
            raise InputError(f"demo file {f} does not match its checksum in {path}.")
    return manifest


def load_demo(directory: Path) -> DemoData:
    """Read and cross-check a demo directory.

    Parameters
    ----------
    directory : pathlib.Path
        The demo directory (predictions, models, samples, domains).

    Returns
    -------
    DemoData

    Raises
    ------
    InputError
        Naming the file on any inconsistency (missing file or array, shapes or row counts
        that disagree).
    """
    directory = Path(directory)
    pred = _npz(directory / PREDICTIONS)
    for key in ("correct_bits", "predicted", "confidence", "true_prob", "shape"):
        if key not in pred:
            raise InputError(f"demo file {directory / PREDICTIONS} lacks the array {key!r}.")
    m, n = (int(v) for v in pred["shape"])
    correct = np.unpackbits(pred["correct_bits"], axis=1, count=n, bitorder="little")
    models = _csv(directory / MODELS, MODEL_COLUMNS)
    samples = _csv(directory / SAMPLES, SAMPLE_COLUMNS)
    domains = _csv(directory / DOMAINS, DOMAIN_COLUMNS)
    for key in ("predicted", "confidence", "true_prob"):
        if pred[key].shape != (m, n):
            raise InputError(
                f"array {key!r} in {directory / PREDICTIONS} has shape {pred[key].shape}, expected {(m, n)}."
            )
    if correct.shape != (m, n):
        raise InputError(
            f"array 'correct_bits' in {directory / PREDICTIONS} does not unpack to shape {(m, n)}."
        )
    if len(models) != m:
        raise InputError(
            f"{directory / MODELS} has {len(models)} rows but the predictions have {m} models."
        )
    if len(samples) != n:
        raise InputError(
            f"{directory / SAMPLES} has {len(samples)} rows but the predictions have {n} samples."
        )
    return DemoData(
        correct=correct,
        predicted=pred["predicted"],
        confidence=pred["confidence"],
        true_prob=pred["true_prob"],
        models=models,
        samples=samples,
        domains=domains,
    )


def load_images(directory: Path) -> np.ndarray:
    """The rendered 8x8 images (samples x 8 x 8, uint8 0..16) in sample order."""
    return _npz(Path(directory) / IMAGES)["images"]
