"""The model zoo of Lifelong-Digits: a few hundred real scikit-learn classifiers.

Prabhu et al. (2024) (Section 4.1) builds its lifelong benchmarks from tens of thousands of models of
many architectures, training recipes and sizes released over time; Anzaku et al. (Section 3,
Table 2) varies architecture, loss, schedule, augmentation and seed. This zoo is the
small-scale analogue: eleven families, each over a grid of capacities, preprocessing,
training-set sizes, augmentations and seeds, so that models disagree in family-structured
ways (trees are fooled by faded ink, per-image normalization rescues contrast shifts,
augmentation buys robustness to a category) while one rough difficulty order still holds.

Every model is described by a :class:`ModelSpec` (plain data, JSON-able); the estimator is
built from it by :func:`make_estimator`. Nothing here trains anything.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lifelong_core.errors import InputError

# Family -> (era, list of hyper-parameter dicts). The era orders families on the release
# timeline: older, simpler methods first. Values are positions on an arbitrary scale.
FAMILY_ERAS: dict[str, float] = {
    "naive-bayes": 0.0,
    "discriminant": 1.0,
    "knn": 1.5,
    "decision-tree": 2.5,
    "logistic": 3.0,
    "linear-svm": 4.0,
    "rbf-svm": 5.0,
    "random-forest": 6.0,
    "extra-trees": 7.0,
    "gradient-boosting": 7.5,
    "mlp": 8.0,
}

TRAIN_SIZES = (100, 200, 400, 0)  # 0 = the whole training pool
AUGMENTATIONS = ("none", "none", "shift", "rotate", "geometric", "noise", "photometric")
AUGMENT_COPIES = 2


def _grid(**axes: Sequence[object]) -> list[dict]:
    keys = list(axes)
    return [dict(zip(keys, values)) for values in itertools.product(*(axes[k] for k in keys))]


def _family_grids() -> dict[str, list[dict]]:
    return {
        "naive-bayes": _grid(
            var_smoothing=[1e-9, 1e-3, 1e-2, 0.05, 0.2], prep=["raw", "per-image"]
        ),
        "discriminant": (
            _grid(kind=["lda"], shrinkage=[0.0, 0.1, 0.3, 0.6], prep=["raw", "per-image"])
            + _grid(kind=["qda"], shrinkage=[0.05, 0.2, 0.5, 0.8], prep=["raw", "per-image"])
        ),
        "knn": _grid(
            k=[1, 3, 5, 9, 15, 31], weights=["uniform", "distance"], prep=["raw", "per-image"]
        ),
        "decision-tree": _grid(
            max_depth=[4, 6, 8, 12, None], min_samples_leaf=[1, 4], criterion=["gini", "entropy"]
        ),
        "logistic": _grid(C=[1e-3, 1e-2, 0.1, 1.0, 10.0], prep=["standard", "per-image"]),
        "linear-svm": _grid(C=[1e-3, 1e-2, 0.1, 1.0], prep=["standard", "per-image"]),
        "rbf-svm": _grid(
            C=[0.5, 2.0, 10.0], gamma_mult=[0.5, 1.0, 2.0], prep=["standard", "per-image"]
        ),
        "random-forest": _grid(
            n_estimators=[10, 30, 100], max_depth=[6, None], max_features=["sqrt", 0.3]
        ),
        "extra-trees": _grid(
            n_estimators=[10, 30, 100], max_depth=[6, None], max_features=["sqrt", 0.3]
        ),
        "gradient-boosting": _grid(
            max_iter=[15, 40, 80], learning_rate=[0.05, 0.2], max_depth=[3, None]
        ),
        "mlp": _grid(
            hidden=[(32,), (64,), (128,), (128, 64)], alpha=[1e-4, 1e-2, 1.0], prep=["standard"]
        ),
    }


@dataclass(frozen=True)
class ModelSpec:
    """One classifier of the zoo: what to build and on which training data."""

    family: str
    params: tuple  # sorted (key, value) pairs of the family's hyper-parameters
    train_size: int  # number of training digits before augmentation (0 = all)
    augmentation: str
    seed: int

    @property
    def hyperparameters(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.params}

    @property
    def name(self) -> str:
        hp = ",".join(f"{k}={_short(v)}" for k, v in self.params)
        size = "all" if self.train_size == 0 else str(self.train_size)
        return f"{self.family}[{hp}]-n{size}-{self.augmentation}-s{self.seed}"

    def metadata(self, n_train_pool: int) -> str:
        doc = {
            "family": self.family,
            "hyperparameters": self.hyperparameters,
            "train_size": self.train_size or n_train_pool,
            "augmentation": self.augmentation,
            "augment_copies": 0 if self.augmentation == "none" else AUGMENT_COPIES,
            "seed": self.seed,
        }
        return json.dumps(doc, sort_keys=True)


def _short(v: object) -> str:
    if isinstance(v, tuple):
        return "x".join(str(x) for x in v)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def model_specs(
    per_family: int = 40, seed: int = 0, families: tuple[str, ...] | None = None
) -> list[ModelSpec]:
    """The zoo: ``per_family`` specs for each family, drawn without repetition.

    Each family's hyper-parameter grid is crossed with training sizes and augmentations;
    the grid points are visited in a seeded random order (cycling through the capacity
    grid so that every capacity is used before any repeats), each with its own model seed.
    """
    grids = _family_grids()
    chosen = families if families is not None else tuple(FAMILY_ERAS)
    rng = np.random.default_rng(seed)
    specs: list[ModelSpec] = []
    for family in chosen:
        grid = grids[family]
        caps = rng.permutation(len(grid))
        seen: set = set()
        limit = len(grid) * len(set(TRAIN_SIZES)) * len(set(AUGMENTATIONS))
        if not 1 <= per_family <= limit:
            raise InputError(
                f"models per family must be between 1 and {limit} for family {family}, got {per_family}."
            )
        i = 0
        while len(seen) < per_family:
            cap = grid[int(caps[i % len(caps)])]
            i += 1
            spec = ModelSpec(
                family=family,
                params=tuple(sorted((k, v) for k, v in cap.items())),
                train_size=int(rng.choice(TRAIN_SIZES)),
                augmentation=str(rng.choice(AUGMENTATIONS)),
                seed=int(rng.integers(0, 10_000)),
            )
            key = (spec.params, spec.train_size, spec.augmentation)
            if key in seen:
                continue
            seen.add(key)
            specs.append(spec)
    return specs


def release_order(specs: list[ModelSpec], seed: int = 0) -> np.ndarray:
    """A plausible timeline: rank (0 = first released) of each spec.

    Older families come first; within the timeline, bigger training sets, augmentation and
    more capacity tend to come later; Gaussian noise blurs the eras so families overlap,
    as they do in real model zoos.
    """
    rng = np.random.default_rng(seed)
    max_size = max(TRAIN_SIZES)
    score = np.empty(len(specs))
    for i, s in enumerate(specs):
        size = 1.0 if s.train_size == 0 else s.train_size / (max_size * 2)
        score[i] = (
            FAMILY_ERAS[s.family]
            + 1.0 * size
            + (0.7 if s.augmentation != "none" else 0.0)
            + rng.normal(0.0, 1.2)
        )
    ranks = np.empty(len(specs), dtype=np.int64)
    ranks[np.argsort(score, kind="stable")] = np.arange(len(specs))
    return ranks


def _per_image(X: np.ndarray) -> np.ndarray:
    # Each image scaled to its own [0, 1] range: invariant to ink contrast and paper tone.
    lo = X.min(axis=1, keepdims=True)
    hi = X.max(axis=1, keepdims=True)
    return (X - lo) / np.maximum(hi - lo, 1e-9)


def make_estimator(spec: ModelSpec) -> Any:
    """A fresh, unfitted scikit-learn estimator for ``spec`` (single-threaded)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.discriminant_analysis import (
        LinearDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
    )
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
    from sklearn.svm import SVC, LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    hp = dict(spec.params)
    seed = spec.seed
    prep = hp.pop("prep", "raw")
    if prep == "per-image":
        steps = [FunctionTransformer(_per_image)]
    elif prep == "standard":
        steps = [StandardScaler()]
    else:
        steps = []
    f = spec.family
    if f == "naive-bayes":
        est = GaussianNB(**hp)
    elif f == "discriminant":
        if hp["kind"] == "lda":
            shrink = hp["shrinkage"]
            est = LinearDiscriminantAnalysis(
                solver="lsqr", shrinkage=shrink if shrink > 0 else None
            )
        else:
            # Shrunk class covariances: with 10 classes and as few as 10 digits per class,
            # the empirical 64x64 covariances are singular.
            est = QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=hp["shrinkage"])
    elif f == "knn":
        est = KNeighborsClassifier(n_neighbors=hp["k"], weights=hp["weights"], n_jobs=1)
    elif f == "decision-tree":
        est = DecisionTreeClassifier(random_state=seed, **hp)
    elif f == "logistic":
        est = LogisticRegression(C=hp["C"], max_iter=300, random_state=seed)
    elif f == "linear-svm":
        est = CalibratedClassifierCV(
            LinearSVC(C=hp["C"], max_iter=3000, random_state=seed), method="sigmoid", cv=3
        )
    elif f == "rbf-svm":
        # gamma relative to sklearn's 'scale' rule 1 / (n_features * variance), fixed per
        # preprocessing (standardized inputs have variance 1, per-image ones about 0.1) so
        # that it does not depend on the training subset.
        gamma = hp["gamma_mult"] / 64.0 / (1.0 if prep == "standard" else 0.1)
        # Platt scaling on cross-validated decision values (what SVC(probability=True) did
        # before its deprecation in scikit-learn 1.9).
        est = CalibratedClassifierCV(
            SVC(C=hp["C"], gamma=gamma, random_state=seed), method="sigmoid", cv=3, ensemble=False
        )
    elif f == "random-forest":
        est = RandomForestClassifier(random_state=seed, n_jobs=1, **hp)
    elif f == "extra-trees":
        est = ExtraTreesClassifier(random_state=seed, n_jobs=1, **hp)
    elif f == "gradient-boosting":
        est = HistGradientBoostingClassifier(random_state=seed, early_stopping=False, **hp)
    elif f == "mlp":
        est = MLPClassifier(
            hidden_layer_sizes=tuple(hp["hidden"]),
            alpha=hp["alpha"],
            max_iter=200,
            random_state=seed,
        )
    else:
        raise InputError(f"unknown model family {f!r}; families are {', '.join(FAMILY_ERAS)}.")
    return make_pipeline(*steps, est) if steps else est
