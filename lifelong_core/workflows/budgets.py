"""The budgets a front end offers, and which of a fixed list fit the data.

A budget n′ is a number of samples evaluated per new model (or models per new sample);
it must lie in [1, n]. The engine checks a budget it is given
(``sortsearch.search.check_budget``); these functions decide what to offer, so that no
page offers a budget the engine would refuse.
"""

from __future__ import annotations

from collections.abc import Iterable

from lifelong_core.errors import InputError, shown
from lifelong_core.sweeping import power_budgets

# The most budgets a typed list may hold: each one is a column of every table and chart.
MAX_TYPED = 50


def budget_choices(n: int) -> list[int]:
    """Budgets offered in a selector: powers of two up to ``n`` and ``n`` itself.

    Parameters
    ----------
    n : int
        The number of samples (or of models, for a new sample), at least 1.

    Returns
    -------
    list of int
        ``1, 2, 4, ...`` up to ``n``, then ``n`` when it is not a power of two;
        increasing.

    Raises
    ------
    InputError
        If ``n < 1``.
    """
    b = list(power_budgets(n, lo=1, hi=n))
    if b[-1] != n:
        b.append(n)
    return b


def default_budgets(n: int) -> list[int]:
    """The paper's 8, 16, ... up to ``n / 2``; on tiny data, all of ``n``.

    Prabhu et al. (2024), *Efficient Lifelong Model Evaluation in an Era of Rapid
    Progress*, §4.2.

    Parameters
    ----------
    n : int
        The number of samples (or of models, for a new sample), at least 1.

    Returns
    -------
    list of int
        The powers of two from 8 to ``max(8, n // 2)`` that fit ``n``, increasing; ``[n]``
        when none does (``n < 8``).

    Raises
    ------
    InputError
        If ``n < 1``.
    """
    wanted = [b for b in budget_choices(n) if 8 <= b <= max(8, n // 2)]
    return wanted or [n]


def single_budget_choices(n: int) -> list[int]:
    """Budgets for estimating one new model (or sample): at least 2 where ``n`` allows,
    since one evaluation cannot place a threshold between right and wrong.

    Parameters
    ----------
    n : int
        The number of samples (or of models, for a new sample), at least 1.

    Returns
    -------
    list of int
        :func:`budget_choices` from 2 up; all of them (``[1]``) when ``n == 1``.

    Raises
    ------
    InputError
        If ``n < 1``.
    """
    return [b for b in budget_choices(n) if b >= 2] or budget_choices(n)


def default_single_budget(n: int) -> int:
    """The budget a page first offers for one new model (every tab the same).

    Parameters
    ----------
    n : int
        The number of samples (or of models, for a new sample), at least 1.

    Returns
    -------
    int
        256 where :func:`single_budget_choices` offers it, else the middle one of those
        choices.

    Raises
    ------
    InputError
        If ``n < 1``.
    """
    choices = single_budget_choices(n)
    return 256 if 256 in choices else choices[len(choices) // 2]


def budgets_within(candidates: Iterable[int], n: int, *, strict: bool = False) -> list[int]:
    """The candidate budgets that fit ``n`` samples, in their order.

    Parameters
    ----------
    candidates : iterable of int
        Budgets to filter (e.g. a fixed list such as the paper's).
    n : int
        The number of samples (or models).
    strict : bool
        Keep only budgets below ``n`` (for a study that needs samples left over),
        instead of at most ``n``.

    Returns
    -------
    list of int
        The candidates that fit, as ``int``, in the order given.
    """
    return [int(b) for b in candidates if (b < n if strict else b <= n)]


def parse_budgets(text: str, n: int) -> list[int]:
    """Budgets typed as text (a form field, a URL value): whole numbers in ``[1, n]``.

    Parameters
    ----------
    text : str
        Whole numbers separated by commas (spaces allowed), e.g. ``"32, 100, 256"``.
    n : int
        The number of samples (or models) a budget is taken from.

    Returns
    -------
    list of int
        The budgets, without repeats, ascending.

    Raises
    ------
    InputError
        In one sentence naming ``budgets``: on an empty list, a value that is not a whole
        number, more than :data:`MAX_TYPED` budgets, or a budget outside ``[1, n]``.

    Examples
    --------
    >>> parse_budgets("100, 32,32", 2191)
    [32, 100]
    """
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise InputError("give at least one budget, e.g. 32,100,256.", param="budgets")
    values = []
    for p in parts:
        if not (p.isascii() and p.isdigit()):
            raise InputError(
                f"budgets must be whole numbers separated by commas; {shown(p)} is not one.",
                param="budgets",
            )
        values.append(int(p))
    if len(set(values)) > MAX_TYPED:
        raise InputError(
            f"give at most {MAX_TYPED} budgets; {len(set(values))} were given.", param="budgets"
        )
    bad = [b for b in values if not 1 <= b <= n]
    if bad:
        raise InputError(f"budget {bad[0]} must be between 1 and {n:,}.", param="budgets")
    return sorted(set(values))
