"""Search methods: the contract (:mod:`.base`), the registry (:mod:`.registry`) and one
module per method.

- :mod:`.insert_m`: :class:`InsertM`, insert_M with the threshold rules ``midpoint``
  and ``reference`` (Prabhu et al., 2024, §3.2);
- :mod:`.insert_d`: :class:`InsertD`, insert_D (§3.3);
- :mod:`.copy_nearest`: :class:`CopyNearestExpand`, the §4.2 baseline;
- :mod:`.random_sample`: ``random``, a uniform random sample of items and its exact
  interval, the baseline every chart compares with;
- :mod:`.first_n`: ``first-n``, the first items of each task, which is what
  ``lm_eval --limit`` runs (biased), drawn beside it;
- :mod:`.draws`: a new model's items drawn from its name and the seed, or one common set;
- :mod:`.irt`: ``mirt`` and ``irt``, multidimensional item-response models of the cache;
- :mod:`.neighbours`: ``neighbours``, a Bayesian CopyNearest&Expand;
- :mod:`.tuning`: ``mirt-cv``, ``mirt`` with k and the ridge cross-validated on the cache
  (Sort & Search's threshold prediction where that predicts better);
- :mod:`.adaptive`, :mod:`.adaptive_method`: adaptive evaluation in rounds until the 95%
  interval is narrow enough (driven by an oracle or by replayed rounds, so not in the
  one-shot registry);
- :mod:`.design`: the stratified design and difference estimator ``irt`` and
  ``neighbours`` share.

The model-based estimators (scipy) are imported only when the registry loads them.
"""

from lifelong_core.methods.base import (
    BaseMethod,
    Estimate,
    SearchMethod,
    check_fitted,
    check_observations,
)
from lifelong_core.methods.copy_nearest import CopyNearestExpand
from lifelong_core.methods.insert_d import InsertD
from lifelong_core.methods.insert_m import InsertM
from lifelong_core.methods.registry import (
    DEFAULT_METHOD,
    THRESHOLD_RULES,
    Capabilities,
    available_methods,
    capabilities,
    describe_methods,
    get_method,
    is_threshold_rule,
    method_spec,
    methods_with,
    register,
    unregister,
)

__all__ = [
    "DEFAULT_METHOD",
    "THRESHOLD_RULES",
    "BaseMethod",
    "Capabilities",
    "CopyNearestExpand",
    "Estimate",
    "InsertD",
    "InsertM",
    "SearchMethod",
    "available_methods",
    "capabilities",
    "check_fitted",
    "check_observations",
    "describe_methods",
    "get_method",
    "is_threshold_rule",
    "method_spec",
    "methods_with",
    "register",
    "unregister",
]
