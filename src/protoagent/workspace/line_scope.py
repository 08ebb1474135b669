"""Whether a search pattern's match in one line implies a match in the whole file's text.

``search_regex`` matches patterns per line. To skip files quickly it first searches the whole
text once, compiled with MULTILINE (so ``^`` and ``$`` match at every line's start and end, as
they do per line), over the lines joined by ``\\n`` with their ``\\r`` removed. That prefilter
is sound when every assertion in the pattern sees the same thing at a line boundary in the
whole text as at the edge of the line alone, and backtracking is never cut short:

- ``^``, ``$`` (with MULTILINE), ``\\b`` and ``\\B`` qualify (``\\n`` is not a word character);
- ``\\A``, ``\\Z``, lookarounds, atomic groups, possessive repeats and a scoped ``(?-m:...)``
  do not: next to a line boundary they see the neighbouring line, or stop the search from
  trying the path that the line alone would take.

Patterns the standard library's parser cannot read (syntax only the ``regex`` package knows)
are not judged: they are matched per line without a prefilter. For those and for the patterns
above, a file can still be skipped when it lacks a literal every match must contain.
"""

from __future__ import annotations

import re
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any

_CONTEXT_ASSERTIONS = {sre_constants.AT_BEGINNING_STRING, sre_constants.AT_END_STRING}
_UNSOUND_OPS = {
    sre_constants.ASSERT,
    sre_constants.ASSERT_NOT,
    getattr(sre_constants, "ATOMIC_GROUP", None),
    getattr(sre_constants, "POSSESSIVE_REPEAT", None),
} - {None}
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}


def whole_text_agrees(pattern: str) -> bool:
    """True when a MULTILINE search of the joined lines finds a match wherever a line does."""
    try:
        tree = sre_parser.parse(pattern)
    except (re.error, OverflowError, ValueError, RecursionError):
        return False
    try:
        return _agrees(tree)
    except RecursionError:
        return False


def _agrees(items: Any) -> bool:
    for op, av in items:
        if op in _UNSOUND_OPS:
            return False
        if op is sre_constants.AT and av in _CONTEXT_ASSERTIONS:
            return False
        if op in _REPEATS and not _agrees(av[2]):
            return False
        if op is sre_constants.SUBPATTERN:
            _group, _add, removed, sub = av
            if removed & re.MULTILINE or not _agrees(sub):
                return False
        if op is sre_constants.BRANCH and not all(_agrees(branch) for branch in av[1]):
            return False
        if op is sre_constants.GROUPREF_EXISTS:
            _group, yes, no = av
            if not _agrees(yes) or (no is not None and not _agrees(no)):
                return False
    return True


def required_literal(pattern: str) -> str | None:
    """The longest run of literal characters every match of ``pattern`` contains, if any.

    Only the top level of the pattern counts (what a group, branch or repeat holds may be
    skipped); a case-insensitive pattern, or one with a ``{`` (which the ``regex`` package may
    read as a fuzzy-match constraint where the standard parser sees a literal), has none.
    """
    if "{" in pattern:
        return None
    try:
        tree = sre_parser.parse(pattern)
    except (re.error, OverflowError, ValueError, RecursionError):
        return None
    if tree.state.flags & re.IGNORECASE:
        return None
    best, run = "", ""
    for op, av in tree:
        run = run + chr(av) if op is sre_constants.LITERAL else ""
        best = max(best, run, key=len)
    return best or None
