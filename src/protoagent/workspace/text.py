"""Source text: decoding, revision matching, line endings and paginated spans for read_file."""

from __future__ import annotations

from dataclasses import dataclass

from protoagent.errors import ToolRejected

BINARY_SNIFF_BYTES = 8192
SMALL_READ_CHARS = 4000
STANDARD_READ_CHARS = 8192
"""A standard-profile read when the model's window is known to be under ``WIDE_WINDOW`` tokens."""
WIDE_READ_CHARS = 20_000
"""About 500 lines of code, for a window of ``WIDE_WINDOW`` tokens or more (or not reported, as
hosted models' are not): a module or test file asked for whole comes back in one read (at 8,192 a
363-line test file took a capable lead three requests, each carrying the last one's result)."""
WIDE_WINDOW = 32_768
MIN_REVISION_PREFIX = 8
_MARKER_ROOM = 120
_COUNT_BLOCK = 1 << 16


def decode_source(data: bytes, path: str) -> str:
    """Decode UTF-8 source; refuse binary content (a NUL byte early on, or invalid UTF-8)."""
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise _binary(path, "it has a NUL byte in its first 8 KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _binary(path, f"it is not valid UTF-8 (byte offset {err.start})") from None


def _binary(path: str, why: str) -> ToolRejected:
    return ToolRejected(
        f"{path!r} looks binary ({why}); only UTF-8 text files can be read or edited",
        kind="binary_file",
        details={"path": path},
    )


def revision_matches(expected: str, actual: str) -> bool:
    """Whether a model-supplied revision names ``actual`` (the full hex, or a prefix of 8+)."""
    given = expected.strip().lower().removeprefix("sha256:")
    return len(given) >= MIN_REVISION_PREFIX and actual.startswith(given)


def stale_revision(path: str, expected: str, actual: str) -> ToolRejected:
    return ToolRejected(
        f"expected_revision {expected!r} does not match {path!r} (current revision {actual}); "
        "read_file again and use its revision",
        kind="stale_revision",
        details={"path": path, "current_revision": actual},
    )


def uses_crlf(text: str) -> bool:
    """Whether most line breaks in ``text`` are CRLF."""
    if "\r" not in text:  # A fast scan that settles most files.
        return False
    crlf = text.count("\r\n")
    return crlf > 0 and crlf * 2 >= text.count("\n")


def to_lf(text: str) -> str:
    """``text`` with CRLF line breaks turned into LF."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def line_offset(text: str, line: int) -> int:
    """Index where 1-based ``line`` starts; the line must exist. Counts in blocks at C speed."""
    remaining = line - 1
    position = 0
    while remaining:
        block_end = position + _COUNT_BLOCK
        found = text.count("\n", position, block_end)
        if found < remaining:
            remaining -= found
            position = block_end
            continue
        for _ in range(remaining):
            position = text.index("\n", position) + 1
        remaining = 0
    return position


def read_char_cap(profile: str, context_window: int | None = None) -> int:
    """How many characters one ``read_file`` call shows for a model of ``profile`` and window."""
    if profile == "small":
        return SMALL_READ_CHARS
    return STANDARD_READ_CHARS if context_window is not None and context_window < WIDE_WINDOW else WIDE_READ_CHARS


@dataclass(frozen=True, slots=True)
class ReadSpan:
    """One page of a file as read_file returns it."""

    content: str
    start_line: int
    end_line: int
    """Last line shown (0 for an empty file)."""
    total_lines: int
    next_start_line: int | None
    """Where the next read should start; ``None`` once the end of the file was shown."""
    truncated: bool
    """The character cap ended the page before the requested ``end_line``."""
    truncated_long_line: bool
    """The last line shown is only the start of a line longer than the cap."""


def render_span(text: str, start_line: int, end_line: int | None, *, numbered: bool, cap: int) -> ReadSpan:
    """Render lines ``start_line..end_line`` (1-based, inclusive) within ``cap`` characters.

    Line breaks are shown as ``\\n`` whatever the file uses; edits match either way. Only the
    lines shown are sliced out, so a page of a big file costs little more than counting lines.
    """
    normalized = to_lf(text)
    final_newline = normalized.endswith("\n")
    total = normalized.count("\n") + (0 if final_newline or not normalized else 1)
    if total == 0 and start_line == 1:
        return ReadSpan("", 1, 0, 0, None, False, False)
    if start_line > total:
        raise ToolRejected(
            f"start_line {start_line} is past the end of the file ({total} lines)",
            kind="line_out_of_range",
            details={"total_lines": total},
        )
    last = total if end_line is None else min(end_line, total)
    if last < start_line:
        raise ToolRejected(f"end_line {end_line} is before start_line {start_line}", kind="invalid_range")
    width = max(4, len(str(last)))
    pieces: list[str] = []
    used = 0
    position = line_offset(normalized, start_line)
    for number in range(start_line, last + 1):
        newline = normalized.find("\n", position)
        line = normalized[position:] if newline < 0 else normalized[position:newline]
        prefix = f"{number:>{width}}| " if numbered else ""
        piece = prefix + line + ("" if newline < 0 else "\n")
        if used + len(piece) > cap:
            if pieces:
                return ReadSpan("".join(pieces), start_line, number - 1, total, number, True, False)
            return _long_line_span(prefix, line, number, total, cap)
        pieces.append(piece)
        used += len(piece)
        position = newline + 1
    following = last + 1 if last < total else None
    return ReadSpan("".join(pieces), start_line, last, total, following, False, False)


def _long_line_span(prefix: str, line: str, number: int, total: int, cap: int) -> ReadSpan:
    shown = max(cap - len(prefix) - _MARKER_ROOM, 1)
    marker = (
        f"\n[line {number} truncated: showed its first {shown} of {len(line)} characters; "
        "the rest of this line is not shown]\n"
    )
    following = number + 1 if number < total else None
    return ReadSpan(prefix + line[:shown] + marker, number, number, total, following, True, True)
