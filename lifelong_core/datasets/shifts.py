"""Natural shifts of 8x8 digit images: the domains of Lifelong-Digits.

Each domain is a deterministic rendering of real test digits (scikit-learn's copy of the
UCI optdigits set). The originals were made by counting "on" pixels of a 32x32 binary
scan in 4x4 blocks, giving integer intensities 0..16; every rendering here works on a
32x32 bilinear upsampling where geometry or stroke width changes (so an 8x8 image is not
crudely pushed around by whole pixels), comes back to 8x8 by 4x4 block means, and is
rounded to the integers 0..16 again, so every domain has the feature format of the
original data and a model trained on clean digits can be applied unchanged.

Domains are grouped into three categories for the task-weighting view of the LA-UR-24-25289 report (2024)
(Section 5, ternary plots over category weights):

- ``handwriting``: variation a new writer or pen would bring (the clean pool, a careful
  replication of it, thicker and thinner strokes);
- ``acquisition``: the scanner and the paper (noise, blur, faded ink, over-exposure,
  occlusion, dust);
- ``geometric``: placement of the digit in the frame (translation, rotation, scale, slant).

``clean-replication`` imitates CIFAR-10.1 as used in Anzaku et al. (Section 3): *different*
digits of the same classes, re-digitized through a reconstruction of the original
pipeline (smooth 32x32 reconstruction, a sub-pixel offset of the scan grid, binarization,
4x4 block counts). It is meant to be similar but not identical, and slightly harder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

MAX_INTENSITY = 16
CATEGORIES = ("handwriting", "acquisition", "geometric")


@dataclass(frozen=True)
class Domain:
    name: str
    category: str
    description: str


def _upsample(imgs: np.ndarray) -> np.ndarray:
    """(N, 32, 32) reconstructions whose 4x4 block means give back ``imgs`` (N, 8, 8).

    Plain bilinear zoom blurs: its block means differ from the original by up to a third
    of the intensity range, which would add blur to every geometric domain. A few rounds of
    iterative back-projection (add the upsampled residual of the block means) bring that
    down to about 1/16 of the range while keeping the reconstruction smooth.
    """
    big = _zoom4(imgs)
    for _ in range(3):
        big = big + _zoom4(imgs - _downsample(big))
    return big


def _zoom4(imgs: np.ndarray) -> np.ndarray:
    # grid_mode keeps the 4x4 block of each original pixel centred on it; factor 1 on the
    # batch axis leaves images apart.
    return ndimage.zoom(imgs, (1, 4, 4), order=1, mode="nearest", grid_mode=True)


def _downsample(big: np.ndarray) -> np.ndarray:
    return big.reshape(len(big), 8, 4, 8, 4).mean(axis=(2, 4))


def _quantize(imgs: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(imgs), 0, MAX_INTENSITY).astype(np.uint8)


_GRID = np.stack(np.meshgrid(np.arange(32.0), np.arange(32.0), indexing="ij")).reshape(2, -1)
_CENTRE = np.array([[15.5], [15.5]])


def _warp_32(big: np.ndarray, matrices: np.ndarray, shifts_32: np.ndarray) -> np.ndarray:
    """Per-image affine warp of (N, 32, 32): output pixel o samples the input at
    ``M_i (o - c) + c - shift_i`` (bilinear, zero outside), all images in one call."""
    n = len(big)
    coords = np.einsum("nij,jp->nip", matrices, _GRID - _CENTRE) + _CENTRE - shifts_32[:, :, None]
    index = np.broadcast_to(np.arange(n, dtype=float)[:, None], (n, coords.shape[2]))
    out = ndimage.map_coordinates(
        big, [index, coords[:, 0], coords[:, 1]], order=1, mode="constant", cval=0.0
    )
    return out.reshape(n, 32, 32)


def _affine(
    imgs: np.ndarray, matrices: np.ndarray, offsets_8: np.ndarray | None = None
) -> np.ndarray:
    """Apply per-image ``matrices`` (output -> input, about the centre) at 32x32 resolution."""
    shift = (
        np.zeros((len(imgs), 2)) if offsets_8 is None else 4.0 * np.asarray(offsets_8, dtype=float)
    )
    return _downsample(_warp_32(_upsample(imgs), matrices, shift))


def _rotations(deg: np.ndarray) -> np.ndarray:
    t = np.deg2rad(deg)
    c, s = np.cos(t), np.sin(t)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def _signs(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.choice([-1.0, 1.0], size=n)


def _by_group(
    imgs: np.ndarray, sizes: np.ndarray, fn: Callable[[np.ndarray, int], np.ndarray]
) -> np.ndarray:
    # Apply fn(group, size) to the images sharing each size (morphology takes one footprint).
    out = np.empty_like(imgs)
    for size in np.unique(sizes):
        sel = sizes == size
        out[sel] = fn(imgs[sel], int(size))
    return out


# --- one renderer per domain: (images (N, 8, 8) float 0..16, rng) -> images float ------
# Per-image parameters are drawn as arrays, so a rendering is a handful of array calls.


def _clean(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return imgs


def _replication(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    big = _warp_32(
        _upsample(imgs), np.broadcast_to(np.eye(2), (n, 2, 2)), rng.uniform(-1.5, 1.5, size=(n, 2))
    )
    # The original scans were binary: a pixel is ink or paper. Re-binarizing the
    # reconstruction at a threshold drawn per scan mimics a different scanner setting; the
    # range sits a little above the midpoint, so strokes come out slightly thinner, which
    # costs clean-trained models 2-5 points, like CIFAR-10 -> CIFAR-10.1 (Anzaku et al., Sec. 1).
    bitmap = big > rng.uniform(8.0, 10.5, size=(n, 1, 1))
    return bitmap.reshape(n, 8, 4, 8, 4).sum(axis=(2, 4)).astype(float)


def _thick(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    sizes = rng.choice([4, 5, 6], size=len(imgs))
    big = _by_group(_upsample(imgs), sizes, lambda g, k: ndimage.grey_dilation(g, size=(1, k, k)))
    return _downsample(big)


def _thin(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    sizes = rng.choice([4, 5], size=len(imgs))
    big = _by_group(_upsample(imgs), sizes, lambda g, k: ndimage.grey_erosion(g, size=(1, k, k)))
    return _downsample(big)


def _noise(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    sd = rng.uniform(2.5, 4.5, size=(len(imgs), 1, 1))
    return imgs + sd * rng.normal(size=imgs.shape)


def _blur(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    sigma = rng.uniform(0.5, 0.9, size=len(imgs))
    return np.stack(
        [ndimage.gaussian_filter(img, sigma=s, mode="constant") for img, s in zip(imgs, sigma)]
    )


def _faded(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # Faded ink on grey paper: the strokes lose contrast and the background is no longer 0.
    contrast = rng.uniform(0.3, 0.5, size=(len(imgs), 1, 1))
    paper = rng.uniform(2.0, 5.0, size=(len(imgs), 1, 1))
    return paper + contrast * imgs


def _overexposed(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.minimum(MAX_INTENSITY, imgs * rng.uniform(2.0, 3.5, size=(len(imgs), 1, 1)))


def _occlusion(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    h, w = rng.integers(2, 4, size=n), rng.integers(3, 5, size=n)
    r, c = rng.integers(1, 8 - h), rng.integers(1, 8 - w)
    rows, cols = np.arange(8)[None, :, None], np.arange(8)[None, None, :]
    box = (
        (rows >= r[:, None, None])
        & (rows < (r + h)[:, None, None])
        & (cols >= c[:, None, None])
        & (cols < (c + w)[:, None, None])
    )
    return np.where(box, 0.0, imgs)


def _dust(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    rate = rng.uniform(0.08, 0.14, size=(len(imgs), 1, 1))
    hit = rng.random(imgs.shape) < rate
    speck = np.where(rng.random(imgs.shape) < 0.5, 0.0, float(MAX_INTENSITY))
    return np.where(hit, speck, imgs)


def _translate(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    angle = rng.uniform(0.0, 2.0 * np.pi, size=n)
    dist = rng.uniform(0.6, 1.1, size=n)
    offsets = dist[:, None] * np.stack([np.sin(angle), np.cos(angle)], -1)
    return _affine(imgs, np.broadcast_to(np.eye(2), (n, 2, 2)), offsets)


def _rotate(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    return _affine(imgs, _rotations(rng.uniform(10.0, 25.0, size=n) * _signs(rng, n)))


def _scale(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    factor = np.where(
        rng.random(n) < 0.5, rng.uniform(0.72, 0.85, size=n), rng.uniform(1.15, 1.3, size=n)
    )
    return _affine(imgs, np.eye(2)[None] / factor[:, None, None])


def _shears(s: np.ndarray) -> np.ndarray:
    m = np.broadcast_to(np.eye(2), (len(s), 2, 2)).copy()
    m[:, 1, 0] = s
    return m


def _slant(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # Shear along columns as a function of row: an italic hand.
    n = len(imgs)
    return _affine(imgs, _shears(rng.uniform(0.2, 0.45, size=n) * _signs(rng, n)))


_RENDERERS: dict[str, tuple[Domain, Callable]] = {
    d.name: (d, fn)
    for d, fn in [
        (Domain("clean", "handwriting", "the held-out test digits as shipped"), _clean),
        (
            Domain(
                "clean-replication",
                "handwriting",
                "different digits of the same classes re-digitized: smooth 32x32 "
                "reconstruction, sub-pixel scan offset, binarization, 4x4 block counts",
            ),
            _replication,
        ),
        (
            Domain(
                "thick-stroke",
                "handwriting",
                "strokes dilated by 1-1.5 original pixels (broad pen)",
            ),
            _thick,
        ),
        (
            Domain(
                "thin-stroke",
                "handwriting",
                "strokes eroded by about one original pixel (fine pen)",
            ),
            _thin,
        ),
        (
            Domain(
                "gaussian-noise", "acquisition", "additive Gaussian sensor noise, sd 2.5-4.5 of 16"
            ),
            _noise,
        ),
        (Domain("blur", "acquisition", "Gaussian defocus blur, sd 0.5-0.9 pixels"), _blur),
        (
            Domain(
                "faded-ink", "acquisition", "contrast 0.3-0.5 on grey paper (background 2-5 of 16)"
            ),
            _faded,
        ),
        (Domain("overexposed", "acquisition", "gain 2-3.5 with saturation at 16"), _overexposed),
        (Domain("occlusion", "acquisition", "a 2-3 x 3-4 pixel rectangle erased"), _occlusion),
        (Domain("dust", "acquisition", "8-14% of pixels replaced by black or white specks"), _dust),
        (
            Domain("translate", "geometric", "shifted 0.6-1.1 pixels in a random direction"),
            _translate,
        ),
        (Domain("rotate", "geometric", "rotated 10-25 degrees either way"), _rotate),
        (Domain("scale", "geometric", "shrunk to 72-85% or enlarged to 115-130%"), _scale),
        (Domain("slant", "geometric", "sheared 0.2-0.45 either way (italic)"), _slant),
    ]
}

DOMAINS: tuple[Domain, ...] = tuple(d for d, _ in _RENDERERS.values())


def render(images: np.ndarray, domain: str, rng: np.random.Generator) -> np.ndarray:
    """Render ``images`` (N, 8, 8; intensities 0..16) under ``domain``; returns uint8 0..16.

    Per-image parameters (angle, noise level, ...) are drawn from ``rng``, so the same
    generator state gives the same rendering.
    """
    if domain not in _RENDERERS:
        raise KeyError(f"unknown domain {domain!r}")
    _, fn = _RENDERERS[domain]
    src = np.asarray(images, dtype=float).reshape(-1, 8, 8)
    return _quantize(fn(src, rng)) if len(src) else np.zeros((0, 8, 8), np.uint8)


# --- training-time augmentations -----------------------------------------------------
# Models in the zoo may train on augmented copies. The augmentations are milder cousins
# of some test shifts, as practitioners would pick them, so augmented models become more
# robust to a category without having seen the test renderings themselves.


def _aug_shift(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    return _affine(imgs, np.broadcast_to(np.eye(2), (n, 2, 2)), rng.uniform(-1.0, 1.0, size=(n, 2)))


def _aug_rotate(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return _affine(imgs, _rotations(rng.uniform(-20.0, 20.0, size=len(imgs))))


def _aug_geometric(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    m = _rotations(rng.uniform(-15.0, 15.0, size=n)) @ _shears(rng.uniform(-0.3, 0.3, size=n))
    m = m / rng.uniform(0.8, 1.2, size=(n, 1, 1))
    return _affine(imgs, m, rng.uniform(-0.8, 0.8, size=(n, 2)))


def _aug_noise(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return imgs + rng.uniform(1.0, 3.0, size=(len(imgs), 1, 1)) * rng.normal(size=imgs.shape)


def _aug_photometric(imgs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(imgs)
    out = rng.uniform(0.0, 3.0, size=(n, 1, 1)) + rng.uniform(0.5, 1.8, size=(n, 1, 1)) * imgs
    sigma = rng.uniform(0.0, 0.6, size=n)
    return np.stack(
        [ndimage.gaussian_filter(img, sigma=s, mode="constant") for img, s in zip(out, sigma)]
    )


AUGMENTATIONS: dict[str, Callable | None] = {
    "none": None,
    "shift": _aug_shift,
    "rotate": _aug_rotate,
    "geometric": _aug_geometric,
    "noise": _aug_noise,
    "photometric": _aug_photometric,
}


def augment(images: np.ndarray, name: str, copies: int, rng: np.random.Generator) -> np.ndarray:
    """The originals followed by ``copies`` augmented copies of each (uint8 0..16)."""
    fn = AUGMENTATIONS[name]
    src = np.asarray(images, dtype=float).reshape(-1, 8, 8)
    parts = [_quantize(src)]
    if fn is not None:
        parts += [_quantize(fn(src, rng)) for _ in range(copies)]
    return np.concatenate(parts)
