"""A store's content as comparable Python values (what "the store is unchanged" means).

Content, not bytes: DuckDB may rewrite pages of a file it opened for writing even when a
transaction is rolled back, so the tests compare what every reader can see.
"""

from __future__ import annotations

import numpy as np

from lifelong_core.store import Store


def content(path) -> tuple:
    with Store.open(path, read_only=True) as st:
        models = st.models().to_csv(index=False)
        samples = st.samples().to_csv(index=False)
        datasets = st.datasets().to_csv(index=False)
        log = (
            st.log()
            .drop(columns=[c for c in ("at", "created_at", "time") if c in st.log().columns])
            .to_csv(index=False)
        )
        known = st.known() if st.n_models and st.n_samples else np.zeros((0, 0), bool)
        vals = np.where(known, st.values_and_known(None, None)[0], 0) if known.size else known
    return models, samples, datasets, log, known.tobytes(), np.asarray(vals).tobytes()
