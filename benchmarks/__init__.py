"""Benchmarks: each module's ``main`` measures one thing and writes benchmarks/results/.

They time the work itself, so the default estimator's remembered cross-validated choices
(:mod:`lifelong_core.methods.tuning_memory`) are off in every benchmark process and the
processes it starts, unless ``LBE_TUNING_CACHE`` is set to a folder on purpose.
"""

import os

os.environ.setdefault("LBE_TUNING_CACHE", "")
