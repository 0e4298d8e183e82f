"""Matched-accuracy comparisons on similar-but-non-identical test sets (Anzaku et al.).

``matched_accuracy(source, target, eps, criterion, runs, seed)`` runs Algorithm 1
(``criterion="label-prob"``) or Algorithm 2 (``"prob"``) for one model;
``compare_models`` does it for every model and feeds the figure tables
(``accuracy_vs_confidence``, ``subset_reliability``, ``subset_density``).
``match_reference`` is the plain O(N*M) transcription the fast path is tested against.
"""

from lifelong_core.matching.comparison import (
    SUBSETS,
    TABLE_COLUMNS,
    ModelComparison,
    accuracy_vs_confidence,
    compare_models,
    reliability,
    subset_arrays,
    subset_density,
    subset_reliability,
)
from lifelong_core.matching.data import Predictions, make_predictions, read_predictions_csv
from lifelong_core.matching.protocol import (
    CRITERIA,
    MatchRun,
    MatchSummary,
    check_params,
    match_runs,
    matched_accuracy,
    run_table,
)
from lifelong_core.matching.reference import match_reference

__all__ = [
    "CRITERIA",
    "SUBSETS",
    "TABLE_COLUMNS",
    "MatchRun",
    "MatchSummary",
    "ModelComparison",
    "Predictions",
    "accuracy_vs_confidence",
    "check_params",
    "compare_models",
    "make_predictions",
    "match_reference",
    "match_runs",
    "matched_accuracy",
    "read_predictions_csv",
    "reliability",
    "run_table",
    "subset_arrays",
    "subset_density",
    "subset_reliability",
]
