"""The exact-symbol contract: what a ``code_context`` symbol may be, and candidates when it is not.

A symbol is an identifier or a dotted chain of identifiers (``intword``, ``Client.send``,
``module.function``). Prose and regular expressions are rejected, never searched as text; a
well-formed name the index does not hold is rejected too. Every rejection names the nearest
exact symbols the index does hold, so the next call can be exact.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from protoagent.errors import ToolRejected
from protoagent.excerpts import excerpt

SYMBOL_PATTERN = r"^[\w$]+(\.[\w$]+)*$"
MAX_SYMBOL_CHARS = 200
MAX_CANDIDATES = 5
_SYMBOL = re.compile(SYMBOL_PATTERN)
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
_REGEX_MARKS = re.compile(r"[\\^$*+?()\[\]{}|]")
_REGEX_SIGNS = re.compile(r"^\^|\$$|\.\*|\.\+|\\[a-zA-Z]|\[[^\]]*\]")
"""What only a regular expression has even among words: an anchor, ``.*``, an escape, a class."""


def symbol_problem(symbol: str) -> str | None:
    """Why ``symbol`` is no exact symbol (``"prose"``, ``"regex"``, ``"empty"`` ...), or ``None``."""
    if not symbol.strip():
        return "empty"
    if len(symbol) > MAX_SYMBOL_CHARS:
        return "too long"
    if _SYMBOL.fullmatch(symbol):
        return None
    spaced = any(ch.isspace() for ch in symbol.strip())
    if _REGEX_MARKS.search(symbol) and (not spaced or _REGEX_SIGNS.search(symbol)):
        return "regex"
    return "prose" if spaced else "not an identifier"


def words_in(text: str) -> list[str]:
    """Identifier-like words of ``text``, longest first (what a prose request may be about); a
    regular expression gives its literal characters as one more word (``pri.*ce`` -> ``price``)."""
    literal = _REGEX_MARKS.sub("", text.replace(".", "")) if _REGEX_MARKS.search(text) else ""
    found = dict.fromkeys([*_WORD.findall(literal), *_WORD.findall(text)])
    return sorted(found, key=len, reverse=True)


def rejection(symbol: str, problem: str, candidates: Sequence[str]) -> ToolRejected:
    shown = excerpt(symbol, 80)
    offer = f"; exact symbols you may mean: {', '.join(excerpt(c, 80) for c in candidates)}" if candidates else ""
    if problem in ("prose", "regex", "empty", "too long", "not an identifier"):
        what = {"prose": "is prose", "regex": "looks like a regular expression"}.get(problem, f"is {problem}")
        message = (
            f"symbol {shown!r} {what}, not an exact symbol; code_context takes one identifier or dotted name "
            f"(e.g. 'Client.send') and never searches text (use search_regex for text){offer}"
        )
        kind = "not_a_symbol"
    else:
        message = f"no symbol {shown!r} in the index{offer or '; check the spelling or list a file with outline'}"
        kind = "unknown_symbol"
    return ToolRejected(
        message, kind=kind, details={"symbol": shown, "problem": problem, "candidates": list(candidates)}
    )


def nearest(wanted: str, known: Sequence[str], limit: int = MAX_CANDIDATES) -> list[str]:
    """The known names nearest to ``wanted``: same letters in another case, names containing it,
    then close spellings."""
    lowered = wanted.lower()
    same = [n for n in known if n.lower() == lowered and n != wanted]
    containing = sorted((n for n in known if len(lowered) >= 3 and lowered in n.lower() and n != wanted), key=len)
    pool = [n for n in known if abs(len(n) - len(wanted)) <= 3]
    close = difflib.get_close_matches(wanted, pool, n=limit, cutoff=0.75)
    return list(dict.fromkeys([*same, *close, *containing]))[:limit]
