"""How much work compiling a search pattern may take, judged before it is compiled.

The ``regex`` package expands counted repetitions when it compiles, so ``((a{1000}){1000}){1000}``
would take minutes before any timeout applies. A pattern's cost is the number of items its
counted repetitions expand to (nested bounds multiply); patterns over the limit are refused.
The standard library's parser reads the pattern (it does not expand anything); syntax only the
``regex`` package knows falls back to a cautious textual estimate.
"""

from __future__ import annotations

import re
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any

MAX_PATTERN_CHARS = 4096
"""The longest search pattern accepted, in characters."""
MAX_PATTERN_COST = 200_000
"""The most items a pattern's counted repetitions may expand to."""

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None)}
_COUNTED = re.compile(r"\{(\d*),?(\d*)\}")


def pattern_cost(pattern: str) -> int:
    """The expansion cost of ``pattern``'s counted repetitions (at least 1)."""
    try:
        tree = sre_parser.parse(pattern)
    except (re.error, OverflowError, ValueError, RecursionError):
        return _textual_cost(pattern)
    try:
        return _cost(tree)
    except RecursionError:
        return MAX_PATTERN_COST + 1


def _cost(items: Any) -> int:
    total = 0
    for op, av in items:
        if op in _REPEATS:
            low, high, sub = av
            bound = low if high == sre_constants.MAXREPEAT else high
            total += max(int(bound), 1) * _cost(sub)
        elif op is sre_constants.SUBPATTERN:
            total += _cost(av[-1])
        elif op is sre_constants.BRANCH:
            total += sum(_cost(branch) for branch in av[1])
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            total += _cost(av[1])
        else:
            total += 1
        if total > MAX_PATTERN_COST:
            return total
    return max(total, 1)


def _textual_cost(pattern: str) -> int:
    """Every counted repetition's bound multiplied together: never less than the real cost."""
    cost = 1
    for low, high in _COUNTED.findall(pattern):
        cost *= max(int(high or low or 1), 1)
        if cost > MAX_PATTERN_COST:
            break
    return cost
