"""The budgets a front end offers, and which of a fixed list fit the data.

A budget n′ is a number of samples evaluated per new model (or models per new sample);
it must lie in [1, n]. The engine checks a budget it is given
(``sortsearch.search.check_budget``); these functions decide what to offer, so that no
page offers a budget the engine would refuse.
"""

from __future__ import annotations

from collections.abc import Iterable

from lifelong_core.sweep import power_budgets


def budget_choices(n: int) -> list[int]:
    """Budgets offered in a selector: powers of two up to ``n`` and ``n`` itself."""
    b = list(power_budgets(n, lo=1, hi=n))
    if b[-1] != n:
        b.append(n)
    return b


def default_budgets(n: int) -> list[int]:
    """The paper's 8, 16, ... up to ``n / 2``; on tiny data, all of ``n``.

    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §4.2.
    """
    wanted = [b for b in budget_choices(n) if 8 <= b <= max(8, n // 2)]
    return wanted or [n]


def single_budget_choices(n: int) -> list[int]:
    """Budgets for estimating one new model (or sample): at least 2 where ``n`` allows,
    since one evaluation cannot place a threshold between right and wrong."""
    return [b for b in budget_choices(n) if b >= 2] or budget_choices(n)


def default_single_budget(n: int) -> int:
    """The budget a page first offers for one new model (every tab the same): 256 where
    :func:`single_budget_choices` offers it, else the middle choice."""
    choices = single_budget_choices(n)
    return 256 if 256 in choices else choices[len(choices) // 2]


def budgets_within(candidates: Iterable[int], n: int, *, strict: bool = False) -> list[int]:
    """The candidates that fit ``n`` samples (``<= n``, or ``< n`` with ``strict``), in order."""
    return [int(b) for b in candidates if (b < n if strict else b <= n)]
