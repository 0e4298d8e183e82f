"""The task-category control shared by Rankings and Task weighting.

Data often carry no categories (lm-eval tasks outside any group, a long table without a
``category`` column); the rule that fills them is
``lifelong_core.workflows.categories.fill_categories``. Here the user may name their own,
one ``task = category`` line each; the text lives in the URL like every other control.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lifelong_core.workflows.categories import (
    UNCATEGORISED,
    fill_categories,
    format_assignment,
    has_categories,
    parse_assignment,
)
from ui.common import input_errors, query_default, sync_query


def category_control(counts: pd.DataFrame, url_key: str, need: int | None = None) -> pd.DataFrame:
    """``counts`` with every task in a category, the user's own where given.

    Each task's category is the user's line (kept in the URL under ``url_key``), else the
    recorded one, else ``uncategorised``
    (:func:`lifelong_core.workflows.categories.fill_categories`). Lines for tasks these
    data lack are ignored, with a caption. Stops the page with one sentence on a bad line.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``counts.csv`` layout: model, task, category, correct, total.
    url_key : str
        Name of the URL parameter and of the text box's key.
    need : int, optional
        How many categories the page needs; said in the help text, and the control opens
        when the data record none.

    Returns
    -------
    pandas.DataFrame
        ``counts`` with its ``category`` column filled.
    """
    recorded = has_categories(counts)
    tasks = list(dict.fromkeys(counts["task"].astype(str)))
    current = fill_categories(counts).drop_duplicates("task").set_index("task")["category"]
    text_default = format_assignment({t: current[t] for t in tasks})
    text = query_default(url_key, "")
    with st.expander(
        "Task categories" + ("" if recorded else " (the data carry none: give your own)"),
        expanded=not recorded and need is not None,
    ):
        st.caption(
            (
                f"The data record no category for any task, so every task is '{UNCATEGORISED}'. "
                if not recorded
                else ""
            )
            + "One `task = category` line per task; tasks left out keep their recorded category. "
            "At import, a long table's **category** column (or an lm-eval group listing the task) records them."
            + (f" This page needs {need} categories." if need else "")
        )
        typed = st.text_area("task = category", value=text or text_default, height=150, key=url_key)
    if typed.strip() != text_default.strip():
        sync_query(**{url_key: typed})
    elif url_key in st.query_params:
        del st.query_params[url_key]
    with input_errors():
        assigned = parse_assignment(typed)
    # Lines for tasks these data lack (a link made on another dataset) are left aside, with a note.
    unknown = [t for t in assigned if t not in set(tasks)]
    if unknown:
        st.caption(
            f"Category lines for tasks these data do not have are ignored: {', '.join(unknown[:5])}"
            + (" …" if len(unknown) > 5 else "")
            + "."
        )
    return fill_categories(counts, {t: c for t, c in assigned.items() if t not in unknown})
