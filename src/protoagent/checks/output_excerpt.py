"""A bounded excerpt of a check's output that keeps what a repair needs, cutting noise first.

pytest prints a failing run as sections between rule lines: the session header and progress,
``FAILURES`` (one ``___ test ___`` block per failure: the test's source, ``>`` at the failing
line, ``E`` lines with the assertion, ``path:line: Error`` where it failed, captured output),
``warnings summary``, ``short test summary info`` and the closing ``N failed, M passed`` rule. A
plain tail would keep the warnings and lose every traceback; this excerpt keeps lines by rank
instead, within the budget:

1. the closing counts, then the short test summary's lines naming a test (what a ``CI`` run
   prints under them ranks with item 4);
2. the section rules of failures, errors and the summary, and the first failure's title, ``>``,
   ``E`` and location lines;
3. the first failure's captured output (``--- Captured stdout call ---`` and the like), where a
   test helper prints what it expected and what it got;
4. the title, ``>``, ``E`` and location lines of the other failures;
5. the rest of the first failure, then of the others;
6. everything else (header, progress, the other failures' captured output);
7. warnings, passes, durations and coverage last.

Every cut is one ``[... N characters of output cut ...]`` line that counts exactly what it stands
for (see :mod:`protoagent.excerpts`). Output with no pytest failure section keeps its tail.
"""

from __future__ import annotations

import re

from protoagent.excerpts import OUTPUT_CUT, kept_excerpt, tail_excerpt

_RULE = re.compile(r"^(?P<fill>[=_-])(?P=fill){2,} ?(?P<title>.*?) ?(?P=fill){3,}$")
_FAILING_SECTIONS = ("FAILURES", "ERRORS")
_SUMMARY_SECTION = "short test summary info"
_SUMMARY_HEADS = ("FAILED", "ERROR", "XPASS", "XFAIL")
"""A short summary line naming a test; what follows it (``CI`` runs print whole assertion diffs
there) ranks with the other failures' details."""
_NOISE_SECTIONS = ("warnings summary", "PASSES", "slowest", "coverage", "tests coverage")
_CLOSING = re.compile(r"\b\d+ (?:failed|passed|errors?|error)\b|no tests ran")
_CLOSING_LINE = re.compile(r"^\d+ (?:failed|passed|errors?)\b.* in \d")
"""The closing counts of a ``-q`` run, printed without a rule."""
_KEY_LINE = re.compile(r"^(?:>|E(?: |$))|^[^\s:][^:]*:\d+: \S")
_MARKER_CHARS = len(OUTPUT_CUT.format(count=10**6)) + 1
"""A gap shorter than a marker line between kept lines is kept too: its marker would cost more."""
_HEAD_RANKS = 1
"""From this rank on, lines are kept as a head: the first line that does not fit ends the rank
(the summary's lines are kept one by one, so its closing counts are never lost to a long line)."""


def check_output_excerpt(text: str, limit: int) -> str:
    """``text`` itself when it fits ``limit``; a pytest failure report ranked as above; any other
    output its tail after one cut line."""
    if len(text) <= limit:
        return text
    lines = text.splitlines(keepends=True)
    ranks = _ranks(lines)
    if ranks is None:
        return tail_excerpt(text, limit)
    budget = limit
    for _ in range(6):  # the markers take room too: shrink the budget until the excerpt fits
        excerpt = kept_excerpt(text, _kept(lines, ranks, budget))
        if len(excerpt) <= limit or budget <= 0:
            return excerpt
        budget -= max(len(excerpt) - limit, _MARKER_CHARS)
    return kept_excerpt(text, _kept(lines, ranks, 0))


def _ranks(lines: list[str]) -> list[int] | None:
    """Each line's rank (lower is kept first), or ``None`` when no failure section is there."""
    ranks: list[int] = []
    section = ""
    failure = 0
    """Which failure block of a failures section the line is in (0 before the first)."""
    captured = False
    """The line is in a failure block's captured output (``--- Captured stdout call ---``)."""
    found = False
    for line in lines:
        rule = _RULE.match(line.rstrip("\r\n"))
        if rule is not None and rule["fill"] == "=":
            section, failure, captured = rule["title"], 0, False
            found = found or section in _FAILING_SECTIONS
            if _CLOSING.search(section) or section in (*_FAILING_SECTIONS, _SUMMARY_SECTION):
                ranks.append(1)
            else:
                ranks.append(7 if section.startswith(_NOISE_SECTIONS) else 6)
        elif section in _FAILING_SECTIONS:
            if rule is not None and rule["fill"] == "_":
                failure, captured = failure + 1, False
            captured = captured or (rule is not None and rule["fill"] == "-")
            first = failure <= 1
            if captured:
                ranks.append(2 if first else 6)
            elif rule is not None or _KEY_LINE.match(line):
                ranks.append(1 if first else 3)
            else:
                ranks.append(4 if first else 5)
        elif _CLOSING_LINE.match(line):
            ranks.append(-1)
        elif section == _SUMMARY_SECTION:
            ranks.append(0 if line.startswith(_SUMMARY_HEADS) else 3)
        elif section.startswith(_NOISE_SECTIONS):
            ranks.append(7)
        else:
            ranks.append(6)
    return ranks if found else None


def _kept(lines: list[str], ranks: list[int], budget: int) -> list[tuple[int, int]]:
    """The character ranges of the lines kept within ``budget``, by rank then order; gaps too
    short for a marker are kept as well."""
    keep = [False] * len(lines)
    for rank in range(-1, 8):
        for i, line in enumerate(lines):
            if ranks[i] != rank:
                continue
            if len(line) > budget:
                if rank >= _HEAD_RANKS:
                    break  # the bulk of a rank is kept as one head, not as scattered lines
                continue
            keep[i] = True
            budget -= len(line)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    ranges: list[tuple[int, int]] = []
    for i, kept in enumerate(keep):
        if not kept:
            continue
        start, end = starts[i], starts[i + 1]
        if ranges and start - ranges[-1][1] < _MARKER_CHARS:
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    return ranges
