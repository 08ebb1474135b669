"""Exact single-occurrence edits that keep line endings, with feedback a small model can use."""

from __future__ import annotations

import difflib
import heapq
import re
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
    """The outcome of replacing one occurrence: the new text and a preview of the change."""

    text: str
    start_line: int
    end_line: int
    """Lines the new text occupies in the edited file (1-based); a deletion gives the line where
    the removed text was."""
    diff: str


def replace_exactly_once(text: str, old: str, new: str, path: str) -> ExactEdit:
    """Replace the single occurrence of ``old`` in ``text``; refuse none or several.

    Matching ignores the difference between CRLF and LF; the result keeps the file's own
    line endings everywhere, including in the inserted text.
    """
    normalized = to_lf(text)
    old_n = to_lf(old)
    new_n = to_lf(new)
    if old_n not in normalized:
        old_n, new_n = _without_line_numbers(old_n, new_n)
    start = _locate_unique(normalized, old_n, path)
    end = start + len(old_n)
    first_line = normalized.count("\n", 0, start) + 1
    last_line = first_line + new_n.rstrip("\n").count("\n")
    diff = unified_edit_diff(path, normalized, start, end, new_n)
    if normalized is text or "\r\n" not in text:
        result = normalized[:start] + new_n + normalized[end:]
    elif "\n" not in text.replace("\r\n", ""):
        # Every break was CRLF, so converting back is exact.
        result = (normalized[:start] + new_n + normalized[end:]).replace("\n", "\r\n")
    else:
        inserted = new_n.replace("\n", "\r\n") if uses_crlf(text) else new_n
        result = text[: _original_index(text, normalized, start)] + inserted
        result += text[_original_index(text, normalized, end) :]
    return ExactEdit(result, first_line, last_line, diff)


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


def unified_edit_diff(path: str, normalized: str, start: int, end: int, new_n: str, context: int = 3) -> str:
    """A unified diff of replacing ``normalized[start:end]``, computed on nearby lines only."""
    line_start = normalized.rfind("\n", 0, start) + 1
    line_end = _line_end(normalized, max(end - 1, start))
    before = line_start
    for _ in range(context):
        if before == 0:
            break
        before = normalized.rfind("\n", 0, before - 1) + 1
    after = line_end
    for _ in range(context):
        after = _line_end(normalized, after)
    old_slice = normalized[before:after]
    new_slice = normalized[before:start] + new_n + normalized[end:after]
    offset = normalized.count("\n", 0, before)
    return _diff(path, old_slice, new_slice, offset)


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
    lines = difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile="/dev/null" if created else f"a/{path}",
        tofile=f"b/{path}",
    )
    out: list[str] = []
    for line in lines:
        if offset and line.startswith("@@"):
            line = _HUNK.sub(lambda m: _shifted(m, offset), line)
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _shifted(match: re.Match[str], offset: int) -> str:
    old_start = int(match.group(1)) + offset
    new_start = int(match.group(3)) + offset
    return f"@@ -{old_start}{match.group(2) or ''} +{new_start}{match.group(4) or ''} @@"


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
