"""Exact edits of spans that each occur once, keeping line endings, with feedback a small model can use."""

from __future__ import annotations

import difflib
import heapq
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from protoagent.errors import ToolRejected
from protoagent.workspace.text import to_lf, uses_crlf

_CANDIDATE_WINDOWS = 24
_FEEDBACK_CHARS = 1600
_SHOWN_MATCHES = 5
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
_LINE_NUMBER = re.compile(r"^ *(\d+)\|(?: |$)")
"""The ``   4| `` prefix numbered ``read_file`` results show before each line."""


@dataclass(frozen=True, slots=True)
class ExactEdit:
    """The outcome of replacing one or more occurrences: the new text and a preview of the change."""

    text: str
    start_line: int
    end_line: int
    """Lines the new text occupies in the edited file (1-based), from the first span to the last;
    a deletion gives the line where the removed text was."""
    diff: str
    spans: tuple[tuple[int, int], ...] = ()
    """First and last line of each replaced span in the edited file, in file order."""

    def lines_label(self) -> str:
        """``3-4`` for one span, ``3-4, 10-10, 20-21`` for several."""
        spans = self.spans or ((self.start_line, self.end_line),)
        return ", ".join(f"{a}-{b}" for a, b in spans)


def replace_exactly_once(text: str, old: str, new: str, path: str) -> ExactEdit:
    """Replace the single occurrence of ``old`` in ``text``; refuse none or several.

    Matching ignores the difference between CRLF and LF; the result keeps the file's own
    line endings everywhere, including in the inserted text.
    """
    return replace_each_exactly_once(text, ((old, new),), path)


def replace_each_exactly_once(text: str, pairs: Sequence[tuple[str, str]], path: str) -> ExactEdit:
    """Replace each ``old`` of ``pairs`` (each occurring exactly once in ``text``) with its ``new``,
    all against the same text: all apply or none. Spans that overlap are refused, so the order
    of the pairs never changes the result. One pair may have an empty ``old``: its ``new`` is
    appended at the end of the text (after a line break the text lacks), so adding a test at the
    end of a module needs no copy of the module's last lines."""
    normalized = to_lf(text)
    spans: list[tuple[int, int, str, int]] = []
    if sum(1 for old, _ in pairs if not old) > 1:
        raise ToolRejected(
            "only one edit may append (empty old); put the appended text in one new", kind="invalid_arguments"
        )
    for index, (old, new) in enumerate(pairs):
        old_n, new_n = to_lf(old), to_lf(new)
        if not old_n:  # append at the end, on a line of its own
            if normalized and not normalized.endswith("\n"):
                new_n = "\n" + new_n
            spans.append((len(normalized), len(normalized), new_n, index))
            continue
        if old_n not in normalized:
            old_n, new_n = _without_line_numbers(old_n, new_n)
        try:
            start = _locate_unique(normalized, old_n, path)
        except ToolRejected as exc:
            raise _for_edit(exc, index, len(pairs)) from None
        spans.append((start, start + len(old_n), new_n, index))
    spans.sort()
    for (_, end, _, first), (start, _, _, second) in itertools.pairwise(spans):
        if start < end:
            raise ToolRejected(
                f"edits[{first}] and edits[{second}] overlap in {path!r}; merge them into one pair "
                "or make each old span cover different text",
                kind="overlapping_edits",
                details={"path": path, "edits": [first, second]},
            )
    diff = _multi_span_diff(path, normalized, [(s, e, n) for s, e, n, _ in spans])
    lines = _new_lines(normalized, spans)
    return ExactEdit(_rebuilt(text, normalized, spans), lines[0][0], lines[-1][1], diff, lines)


def _for_edit(exc: ToolRejected, index: int, count: int) -> ToolRejected:
    """A single pair's rejection, naming the pair when there are several."""
    if count == 1:
        return exc
    return ToolRejected(f"edits[{index}]: {exc.message}", kind=exc.kind, details={**exc.details, "edit": index})


def _new_lines(normalized: str, spans: Sequence[tuple[int, int, str, int]]) -> tuple[tuple[int, int], ...]:
    """The first and last line of every replaced span in the edited text."""
    out: list[tuple[int, int]] = []
    shift = 0
    for start, end, new_n, _ in spans:
        first = normalized.count("\n", 0, start) + 1 + shift
        out.append((first, first + new_n.rstrip("\n").count("\n")))
        shift += new_n.count("\n") - normalized.count("\n", start, end)
    return tuple(out)


def _rebuilt(text: str, normalized: str, spans: Sequence[tuple[int, int, str, int]]) -> str:
    """``text`` with every span replaced, keeping the file's own line endings."""
    if normalized is text or "\r\n" not in text:
        return _joined(normalized, spans)
    if "\n" not in text.replace("\r\n", ""):
        # Every break was CRLF, so converting back is exact.
        return _joined(normalized, spans).replace("\n", "\r\n")
    crlf = uses_crlf(text)
    parts: list[str] = []
    at = 0
    for start, end, new_n, _ in spans:
        parts.append(text[at : _original_index(text, normalized, start)])
        parts.append(new_n.replace("\n", "\r\n") if crlf else new_n)
        at = _original_index(text, normalized, end)
    parts.append(text[at:])
    return "".join(parts)


def _joined(normalized: str, spans: Sequence[tuple[int, int, str, int]]) -> str:
    parts: list[str] = []
    at = 0
    for start, end, new_n, _ in spans:
        parts += [normalized[at:start], new_n]
        at = end
    parts.append(normalized[at:])
    return "".join(parts)


def _without_line_numbers(old: str, new: str) -> tuple[str, str]:
    """Old (and new) text copied from a numbered read with its ``N| `` prefixes, unnumbered;
    text that is not wholly numbered with consecutive line numbers is returned as it was."""
    stripped_old = _unnumbered(old)
    if stripped_old is None:
        return old, new
    return stripped_old, _unnumbered(new) or new


def _unnumbered(text: str) -> str | None:
    lines = text.split("\n")
    body = lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines
    matches = [_LINE_NUMBER.match(line) for line in body]
    if not body or any(m is None for m in matches):
        return None
    numbers = [int(m.group(1)) for m in matches if m is not None]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return None
    unnumbered = [line[m.end() :] for line, m in zip(body, matches, strict=True) if m is not None]
    return "\n".join(unnumbered) + ("\n" if len(body) < len(lines) else "")


def _locate_unique(normalized: str, old_n: str, path: str) -> int:
    start = normalized.find(old_n)
    if start < 0:
        raise _no_match(normalized, old_n, path)
    if normalized.find(old_n, start + 1) < 0:
        return start
    lines: list[int] = []
    position = start
    while position >= 0 and len(lines) < _SHOWN_MATCHES:
        lines.append(normalized.count("\n", 0, position) + 1)
        position = normalized.find(old_n, position + 1)
    return _raise_ambiguous(path, lines)


def _raise_ambiguous(path: str, lines: list[int]) -> int:
    listed = ", ".join(str(line) for line in lines)
    raise ToolRejected(
        f"old text occurs more than once in {path!r} (at lines {listed}); include more "
        "surrounding lines in old so it matches exactly one place",
        kind="ambiguous_match",
        details={"path": path, "match_lines": lines},
    )


def _original_index(text: str, normalized: str, index: int) -> int:
    """Map an index in the LF-normalized text to the same place in the original text."""
    line = normalized.count("\n", 0, index)
    column = index - (normalized.rfind("\n", 0, index) + 1)
    offset = 0
    for _ in range(line):
        offset = text.index("\n", offset) + 1
    return offset + column


@dataclass(frozen=True, slots=True)
class Region:
    """The part of a file most like some text the model looked for."""

    start_line: int
    end_line: int
    text: str
    similarity: float


def closest_region(normalized: str, wanted: str) -> Region | None:
    """Find the window of lines, as many as ``wanted`` has, that is most similar to it.

    Windows are first ranked by shared whitespace-separated tokens, then by closeness in
    length (both cheap on big files); the best few are then compared with difflib.
    """
    lines = normalized.split("\n")
    if normalized.endswith("\n"):
        lines.pop()
    wanted = wanted.rstrip("\n")
    if not lines or not wanted.strip():
        return None
    size = min(wanted.count("\n") + 1, len(lines))
    tokens = set(wanted.split())
    shared = _window_sums([len(tokens.intersection(line.split())) for line in lines], size)
    lengths = _window_sums([len(line) + 1 for line in lines], size)
    target = len(wanted) + 1

    def rank(start: int) -> tuple[int, int]:
        return shared[start], -abs(lengths[start] - target)

    candidates = heapq.nlargest(_CANDIDATE_WINDOWS, range(len(shared)), key=rank)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(wanted)
    best: Region | None = None
    for start in sorted(candidates):
        text = "\n".join(lines[start : start + size])
        matcher.set_seq1(text)
        if best is not None and matcher.quick_ratio() <= best.similarity:
            continue
        ratio = matcher.ratio()
        if best is None or ratio > best.similarity:
            best = Region(start + 1, start + size, text, ratio)
    return best


def _window_sums(values: list[int], size: int) -> list[int]:
    """Sums of every run of ``size`` consecutive values."""
    total = sum(values[:size])
    sums = [total]
    for start in range(1, len(values) - size + 1):
        total += values[start + size - 1] - values[start - 1]
        sums.append(total)
    return sums


def _no_match(normalized: str, old_n: str, path: str) -> ToolRejected:
    region = closest_region(normalized, old_n)
    if region is None:
        return ToolRejected(f"old text was not found in {path!r}", kind="no_match", details={"path": path})
    numbered = "\n".join(
        f"{number:>4}| {line}" for number, line in enumerate(region.text.split("\n"), start=region.start_line)
    )
    if len(numbered) > _FEEDBACK_CHARS:
        numbered = numbered[:_FEEDBACK_CHARS] + "\n[... region cut short]"
    return ToolRejected(
        f"old text was not found in {path!r}. Closest region is lines {region.start_line}-"
        f"{region.end_line} (similarity {region.similarity:.2f}):\n{numbered}\n"
        "Copy old exactly from the file (same spaces and indentation) and try again.",
        kind="no_match",
        details={
            "path": path,
            "closest_match": {
                "start_line": region.start_line,
                "end_line": region.end_line,
                "text": region.text,
                "similarity": round(region.similarity, 3),
            },
        },
    )


def _multi_span_diff(path: str, normalized: str, spans: Sequence[tuple[int, int, str]], context: int = 3) -> str:
    """One unified diff of replacing each ``normalized[start:end]`` (sorted, disjoint) with its
    new text, computed on the lines near each span only; nearby spans share a hunk."""
    groups: list[tuple[int, int, list[tuple[int, int, str]]]] = []
    for start, end, new_n in spans:
        before, after = _context_window(normalized, start, end, context)
        if groups and before <= groups[-1][1]:
            groups[-1] = (groups[-1][0], max(after, groups[-1][1]), [*groups[-1][2], (start, end, new_n)])
        else:
            groups.append((before, after, [(start, end, new_n)]))
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    shift = 0
    for before, after, members in groups:
        parts: list[str] = []
        at = before
        for start, end, new_n in members:
            parts += [normalized[at:start], new_n]
            at = end
        old_slice, new_slice = normalized[before:after], "".join(parts) + normalized[at:after]
        offset = normalized.count("\n", 0, before)
        out += _hunks(old_slice, new_slice, offset, offset + shift)
        shift += new_slice.count("\n") - old_slice.count("\n")
    return "".join(out) if len(out) > 2 else ""


def _context_window(normalized: str, start: int, end: int, context: int) -> tuple[int, int]:
    """Where the lines of ``normalized[start:end]`` and ``context`` lines either side begin and end."""
    before = normalized.rfind("\n", 0, start) + 1
    for _ in range(context):
        if before == 0:
            break
        before = normalized.rfind("\n", 0, before - 1) + 1
    after = _line_end(normalized, max(end - 1, start))
    for _ in range(context):
        after = _line_end(normalized, after)
    return before, after


def diff_stat(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


def _line_end(text: str, index: int) -> int:
    found = text.find("\n", index)
    return len(text) if found < 0 else found + 1


def whole_file_diff(path: str, before: str | None, after: str) -> str:
    """A unified diff of a whole file (``before`` is None for a new file)."""
    return _diff(path, to_lf(before or ""), to_lf(after), 0, created=before is None)


def _diff(path: str, old: str, new: str, offset: int, *, created: bool = False) -> str:
    hunks = _hunks(old, new, offset, offset)
    if not hunks:
        return ""
    return "".join([f"--- {'/dev/null' if created else f'a/{path}'}\n", f"+++ b/{path}\n", *hunks])


def _hunks(old: str, new: str, old_offset: int, new_offset: int) -> list[str]:
    """The hunks of a unified diff of ``old`` and ``new``, their line numbers shifted by the offsets."""
    lines = difflib.unified_diff(_lines(old), _lines(new))
    out: list[str] = []
    for line in itertools.islice(lines, 2, None):
        if (old_offset or new_offset) and line.startswith("@@"):
            line = _HUNK.sub(lambda m: _shifted(m, old_offset, new_offset), line)
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out


def _shifted(match: re.Match[str], old_offset: int, new_offset: int) -> str:
    old_start = int(match.group(1)) + old_offset
    new_start = int(match.group(3)) + new_offset
    return f"@@ -{old_start}{match.group(2) or ''} +{new_start}{match.group(4) or ''} @@"


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
