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
