"""Summaries of a store: per-domain counts (the ``counts.csv`` of ``rank`` and
``weights``) and the tables of ``info`` and the app's home page.

Mixed into :class:`~lifelong_core.store.Store`; built on the read methods only.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa

from lifelong_core.bits import rows_from_binary
from lifelong_core.store.reading import Indices, StoreReader


class StoreSummaries(StoreReader):
    """Counts and summaries of a store (see :class:`~lifelong_core.store.Store`)."""

    def counts(
        self,
        dataset: str | None = None,
        domains: Iterable[str] | None = None,
        models: Indices | None = None,
    ) -> pd.DataFrame:
        """Correct and total recorded predictions per model and domain: the ``counts.csv`` of
        ``rank`` and ``weights``.

        Only recorded entries count; model x domain pairs with nothing recorded are left out.
        Counted from the packed blocks, so no models x samples array is unpacked.

        Parameters
        ----------
        dataset : str, optional
            Only this dataset's samples.
        domains : iterable of str, optional
            Only these domains.
        models : iterable of int, optional
            ``model_idx`` of the models (None: every model).

        Returns
        -------
        pandas.DataFrame
            model, task, category, correct, total; task is the domain, or ``dataset/domain`` when
            several datasets share a domain name.

        Raises
        ------
        InputError
            For bad model indices.
        """
        smp = self.samples(dataset, domains)
        m = self.model_rows(models)
        cols = ["model", "task", "category", "correct", "total"]
        if len(smp) == 0 or len(m) == 0:
            return pd.DataFrame(
                {
                    c: pd.Series(dtype=object if c in ("model", "task", "category") else np.int64)
                    for c in cols
                }
            )
        doms = (
            smp[["dataset", "domain", "category"]]
            .drop_duplicates(["dataset", "domain"])
            .reset_index(drop=True)
        )
        clash = doms["domain"].duplicated(keep=False)
        doms["task"] = np.where(clash, doms["dataset"] + "/" + doms["domain"], doms["domain"])
        code = (
            pd.MultiIndex.from_frame(smp[["dataset", "domain"]])
            .map({k: i for i, k in enumerate(zip(doms["dataset"], doms["domain"]))})
            .to_numpy(dtype=np.int64)
        )
        ids = self.models().set_index("model_idx")["model_id"]
        correct, total = self._domain_counts(
            m, smp["sample_idx"].to_numpy(dtype=np.int64), code, len(doms)
        )
        out = pd.DataFrame(
            {
                "model": np.repeat(ids.loc[m].to_numpy(dtype=object), len(doms)),
                "task": np.tile(doms["task"].to_numpy(dtype=object), len(m)),
                "category": np.tile(doms["category"].to_numpy(dtype=object), len(m)),
                "correct": correct.ravel(),
                "total": total.ravel(),
            }
        )
        return out[out["total"] > 0].reset_index(drop=True)

    def _domain_counts(
        self, m: np.ndarray, sidx: np.ndarray, code: np.ndarray, n_doms: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Correct and recorded entries per (model, domain code) straight from the packed
        blocks: a popcount of ``correct & known`` under each domain's packed column mask, so
        no models x samples array is ever unpacked (a paper-scale store is 53G entries)."""
        correct = np.zeros((len(m), n_doms), dtype=np.int64)
        total = np.zeros((len(m), n_doms), dtype=np.int64)
        if len(m) == 0 or len(sidx) == 0:
            return correct, total
        blocks = self._blocks_for(sidx)
        masks = []  # per block: [(domain code, packed mask or None when the mask is the whole block, columns)]
        for block_id, start, length in blocks:
            start, length = int(start), int(length)
            col_code = np.full(length, -1, dtype=np.int64)
            inside = (sidx >= start) & (sidx < start + length)
            col_code[sidx[inside] - start] = code[inside]
            per = []
            for d in np.unique(code[inside]):
                hit = col_code == d
                # A whole block needs no mask unless its last byte has padding bits.
                whole = hit.all() and length % 8 == 0
                per.append(
                    (int(d), None if whole else np.packbits(hit, bitorder="little"), int(hit.sum()))
                )
            masks.append((int(block_id), (length + 7) // 8, per))
        width = sum(nb for _, nb, _ in masks)
        # Packed rows of a model chunk, plus one AND temporary: a bounded block at any size.
        step = int(max(1, min(4096, (32 << 20) // max(1, 2 * width))))
        for a in range(0, len(m), step):
            uniq, inverse = np.unique(m[a : a + step], return_inverse=True)
            c_u = np.zeros((len(uniq), n_doms), dtype=np.int64)
            t_u = np.zeros((len(uniq), n_doms), dtype=np.int64)
            fetched = self._fetch(uniq, np.array([b for b, _, _ in masks]))
            for block_id, nbytes, per in masks:
                if block_id not in fetched:
                    continue
                midx, cols = fetched[block_id]
                at = np.searchsorted(uniq, midx)  # _fetch returns only wanted models
                bits = rows_from_binary(cols["correct"], nbytes)
                kcol = cols["known"]
                kvalid = np.asarray(kcol.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
                known = None
                if kvalid.any():
                    known = np.full((len(midx), nbytes), 0xFF, dtype=np.uint8)
                    known[kvalid] = rows_from_binary(kcol.filter(pa.array(kvalid)), nbytes)
                    bits = bits & known
                for d, mask, n_cols in per:
                    c_u[at, d] += np.bitwise_count(bits if mask is None else bits & mask).sum(
                        axis=1, dtype=np.int64
                    )
                    if known is None:
                        t_u[at, d] += n_cols
                    else:
                        kk = np.bitwise_count(known if mask is None else known & mask).sum(
                            axis=1, dtype=np.int64
                        )
                        t_u[at, d] += np.where(kvalid, kk, n_cols)
            correct[a : a + step] = c_u[inverse]
            total[a : a + step] = t_u[inverse]
        return correct, total

    def summary(self) -> dict[str, pd.DataFrame]:
        """Counts for ``info`` and the app's home page: tables ``datasets`` (dataset,
        synthetic, domains, samples, models, entries, accuracy, description), ``domains``
        (dataset, domain, category, samples, models, entries, accuracy) and ``models``
        (model_idx, model_id, name, family, estimated, entries, correct, accuracy). ``entries``
        counts recorded predictions; ``models`` counts models with at least one. The dataset
        and domain rows count evaluated models only: a row inserted as *estimated* is a
        prediction, and its accuracy would pass for a result."""
        mdl = self._df(
            "SELECT m.model_idx, m.model_id, m.name, m.family, m.estimated, "
            "coalesce(sum(CASE WHEN b.known IS NULL THEN k.length ELSE bit_count(b.known::BIT) END), 0)::BIGINT AS entries, "
            "coalesce(sum(bit_count(b.correct::BIT)), 0)::BIGINT AS correct "
            "FROM models m LEFT JOIN bits b USING (model_idx) LEFT JOIN blocks k USING (block_id) "
            "GROUP BY ALL ORDER BY m.model_idx"
        )
        mdl["accuracy"] = (mdl["correct"] / mdl["entries"].where(mdl["entries"] > 0)).round(4)
        doms = self.domains().rename(columns={"n_samples": "samples"})
        cnt = self.counts(
            models=mdl.loc[~mdl["estimated"].astype(bool), "model_idx"].to_numpy(dtype=np.int64)
        )
        keys = ["dataset", "domain"]
        if len(cnt):
            # counts() names a task dataset/domain only when domain names collide.
            task_key = {
                t: (ds, dm)
                for ds, dm in zip(doms["dataset"], doms["domain"])
                for t in (dm, f"{ds}/{dm}")
            }
            cnt[keys] = pd.DataFrame([task_key[t] for t in cnt["task"]], index=cnt.index)
            agg = cnt.groupby(keys).agg(
                models=("model", "nunique"), entries=("total", "sum"), correct=("correct", "sum")
            )
            doms = doms.merge(agg.reset_index(), on=keys, how="left")
        else:
            doms = doms.assign(models=0, entries=0, correct=0)
        doms[["models", "entries", "correct"]] = (
            doms[["models", "entries", "correct"]].fillna(0).astype(np.int64)
        )
        dsets = self.datasets().merge(
            doms.groupby("dataset")
            .agg(
                domains=("domain", "size"),
                samples=("samples", "sum"),
                entries=("entries", "sum"),
                correct=("correct", "sum"),
            )
            .reset_index(),
            on="dataset",
            how="left",
        )
        per_model = (
            cnt.groupby("dataset")["model"].nunique() if len(cnt) else pd.Series(dtype=np.int64)
        )
        dsets["models"] = dsets["dataset"].map(per_model).fillna(0).astype(np.int64)
        for c in ("domains", "samples", "entries", "correct"):
            dsets[c] = dsets[c].fillna(0).astype(np.int64)
        for df in (doms, dsets):
            df["accuracy"] = (df["correct"] / df["entries"].where(df["entries"] > 0)).round(4)
        dsets = dsets[
            [
                "dataset",
                "synthetic",
                "domains",
                "samples",
                "models",
                "entries",
                "accuracy",
                "description",
            ]
        ]
        doms = doms[["dataset", "domain", "category", "samples", "models", "entries", "accuracy"]]
        return {
            "datasets": dsets,
            "domains": doms,
            "models": mdl[
                [
                    "model_idx",
                    "model_id",
                    "name",
                    "family",
                    "estimated",
                    "entries",
                    "correct",
                    "accuracy",
                ]
            ],
        }
