"""Bounded excerpts of untrusted text, for error messages, feedback to the model and the log.

Whatever a model or a repository hands us may be megabytes long; a rejection quotes at most an
excerpt (head and tail with the cut marked), so feedback and the session log stay small.

Every marker states how many characters of the *original* text are missing at its place. A
pass over text that earlier passes already cut counts their markers in: a marker inside the
part a pass cuts adds its own count to the new marker, and no pass splits a marker. However
many passes run, the markers' counts add up to what is missing from the original. The markers
read are this module's own (``…[N characters cut]…`` inline, ``[... N characters of output
cut ...]`` as a line) and a command journal's ``[... N bytes omitted; …]`` and ``[... N bytes
cut: …]`` lines (with the line breaks the journal puts around them), which count bytes (as many
as characters in ASCII output).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

EXCERPT_CHARS = 200
"""The default length of an excerpt, in characters."""
OUTPUT_CUT = "[... {count} characters of output cut ...]"
"""The line that stands for the head of an output cut by :func:`tail_excerpt`."""

_MARKER = re.compile(
    r"…\[(?P<inline>\d+) characters cut\]…"
    r"|\[\.\.\. (?P<line>\d+) characters of output cut \.\.\.\]\n?"
    r"|\n?\[\.\.\. (?P<bytes>\d+) bytes (?:omitted|cut)\b[^\n]*? \.\.\.\]\n?"
)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` itself when short, else its head and tail around a marker naming the cut size."""
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    start, end, count = _cut(text, keep, len(text) - keep)
    return f"{text[:start]}…[{count} characters cut]…{text[end:]}"


def tail_excerpt(text: str, limit: int) -> str:
    """``text`` itself when short, else its last ``limit`` characters after an ``OUTPUT_CUT`` line."""
    if len(text) <= limit:
        return text
    _, end, count = _cut(text, 0, len(text) - limit)
    return f"{OUTPUT_CUT.format(count=count)}\n{text[end:]}"


def kept_excerpt(text: str, kept: Sequence[tuple[int, int]]) -> str:
    """``text`` with everything outside the ``kept`` ``[start, end)`` ranges cut, each cut one
    ``OUTPUT_CUT`` line. Ranges that start and end at line boundaries keep the lines whole; a cut
    that would split a marker takes the whole marker and counts it in."""
    parts: list[str] = []
    position = 0
    for start, end in [*sorted(kept), (len(text), len(text))]:
        if start > position:
            cut_end, marker = _cut_line(text, position, start)
            parts.append(marker + ("\n" if cut_end < len(text) else ""))
            position = cut_end
        if end > position:
            parts.append(text[position:end])
            position = end
    return "".join(parts)


def _cut_line(text: str, start: int, end: int) -> tuple[int, str]:
    """Where a cut of ``[start, end)`` really ends, and its marker: characters before ``start``
    that a widened cut takes were already kept, so the marker does not count them."""
    cut_start, cut_end, count = _cut(text, start, end)
    return cut_end, OUTPUT_CUT.format(count=count - max(start - cut_start, 0))


def original_length(text: str) -> int:
    """How long the original was: ``text`` without its markers, plus what they say is missing."""
    return len(text) + sum(_count(m) - (m.end() - m.start()) for m in _MARKER.finditer(text))


def _cut(text: str, start: int, end: int) -> tuple[int, int, int]:
    """``[start, end)`` widened so that it splits no marker, and the original characters it stands for."""
    count = 0
    for marker in _MARKER.finditer(text):
        if marker.start() >= end:
            break
        if marker.end() <= start:
            continue
        start, end = min(start, marker.start()), max(end, marker.end())
        count += _count(marker) - (marker.end() - marker.start())
    return start, end, count + end - start


def _count(marker: re.Match[str]) -> int:
    return int(marker["inline"] or marker["line"] or marker["bytes"])
