"""A cost a server reports, as the product counts it.

Exa's ``costDollars`` and the writer's ``usage.cost`` come from outside: Python's
JSON reader takes ``NaN``, ``Infinity`` and ``-1`` as numbers. Counted as they
are, one request would make a run's total negative or ``NaN`` (and ``run --json``
invalid JSON). Only a finite, non-negative amount is counted; anything else is
counted as nothing and named in the section's warnings, so a total is never
silently lower than what the servers said.
"""

from __future__ import annotations

import math


def reported_dollars(value: object) -> float | None:
    """A finite, non-negative amount; None for anything else (text, a boolean, NaN, ±inf, negative)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        amount = float(value)
    except OverflowError:  # an integer past float's range
        return None
    return amount if math.isfinite(amount) and amount >= 0 else None


def unusable_amount(value: object) -> str | None:
    """How a number that is not a usable amount was written (for a warning); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or reported_dollars(value) is not None:
        return None
    return repr(value)[:40]


__all__ = ["reported_dollars", "unusable_amount"]
