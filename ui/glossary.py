"""The short glossary every page links to: one plain sentence per term the pages use.

Shown as a popover in the sidebar of every page (``app.py`` draws it before running the
page); :data:`TERMS` is also what the test checks each page's jargon against.
"""

from __future__ import annotations

import streamlit as st

# term -> one sentence. Order: the Sort & Search workflow first, then errors, then the
# rankings, task-weighting and matched-accuracy vocabulary.
TERMS: dict[str, str] = {
    "Sort & Search": "Estimate a new model's result on every sample from a few evaluations: sort the samples from "
    "easy to hard with the models already evaluated (Sort), evaluate the new model on a few of them "
    "and find where it turns from mostly right to mostly wrong (Search).",
    "insert_M": "Adding a new model (a new row of the models × samples matrix) by Sort & Search.",
    "insert_D": "Adding new samples (new columns) the same way on the transposed matrix: a few models are run on "
    "each new sample, ordered best to worst, to predict every model's result on it.",
    "Sort set": "The models whose results order the samples from easy to hard; the other models are estimated.",
    "n′ (budget)": "How many samples a new model is evaluated on (m′: how many models a new sample is run on).",
    "threshold rule": "How Search turns the evaluations into a split point t: midpoint (halfway between "
    "evaluated positions) or reference (at an evaluated position); everything easier than t is "
    "predicted right.",
    "copy-nearest": "The baseline: copy the results of the stored model that agrees most with the new one on the "
    "evaluated samples (CopyNearest&Expand).",
    "mirt / irt / neighbours": "Estimators that fit a model of the whole cache (item response theory, nearest "
    "neighbours) and give a 95% interval of the accuracy.",
    "auto": "The default estimator: on your own cache it measures mirt, Sort & Search's threshold and "
    "copy-nearest by cross-validation and uses, per budget, the best (the simplest when they tie), with a 95% "
    "interval.",
    "MAE": "Sample-level error: the share of samples whose right/wrong is predicted wrongly, averaged over models.",
    "E_agg": "Aggregate error: |estimated accuracy − true accuracy|, averaged over models.",
    "κ (kappa)": "Cohen's kappa between predicted and true right/wrong: 1 = perfect, 0 = no better than chance "
    "given the two accuracies.",
    "aleatoric / epistemic": "Aleatoric error: what even the best single threshold on the sorted samples gets "
    "wrong; epistemic: the extra error from evaluating only n′ samples.",
    "estimated row": "A model inserted from the Evaluate page's predictions; left out of every score.",
    "83.4% interval": "Two such intervals that do not overlap correspond roughly to a 5% test of a difference "
    "(Goldstein & Healy).",
    "Bonferroni": "Widening each of m intervals to level 1 − 0.05/m so that all hold together at 95%.",
    "rank interval": "The range of ranks a model takes over bootstrap replicates of the test sets.",
    "normalised accuracy": "Each task's score rescaled between its lowest and highest score, so tasks count alike.",
    "R-hat / ESS": "MCMC diagnostics: split R-hat near 1 means the chains agree; ESS is the number of "
    "independent draws the chains are worth.",
    "k, ρ (task weighting)": "A weighting is gray when the top two models differ by at most k standard errors; "
    "ρ is the correlation of the two, which shrinks that error.",
    "matched accuracy": "Accuracy on source and target samples paired by predicted label and confidence, so a "
    "gap is not just the model being less sure on the target.",
    "ε (epsilon)": "How close two confidences must be for a source and a target sample to be matched.",
    "unmatched": "Target samples with no source partner within ε; they are left out of matched accuracy.",
    "Pareto front": "Configurations no other one beats on both cost and error.",
    "synthetic": "Data from the seeded generator, not real model predictions.",
}


def glossary_popover(container=None) -> None:
    """A "Glossary" popover listing :data:`TERMS`, one line per term.

    Parameters
    ----------
    container : streamlit container, optional
        Where the popover goes (default ``st.sidebar``).
    """
    box = container if container is not None else st.sidebar
    with box.popover("Glossary", help="What the terms on these pages mean"):
        st.markdown("\n".join(f"- **{term}**: {text}" for term, text in TERMS.items()))
