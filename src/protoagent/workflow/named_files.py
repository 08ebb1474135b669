"""Files a Coder assignment names that no agent has read yet, read by the harness for the Coder.

A lead often names a file to change without reading it ("add `where_not` to docs/cheatsheet.rst").
The Coder would spend its first request reading it; instead the assignment carries the file (or,
when it is long, the part around the first line that holds a symbol the assignment names), with
its revision, recorded as ``source.localized`` for the Coder so it counts as read.

Pure reads inside the workspace: a path that leaves it, a hidden path (``.env``, ``.git/...``), a
file that is not text or is over ``MAX_FILE_BYTES`` is left out.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.models.profile import PromptProfile
from protoagent.workflow.source_spans import SourceSpan, SpanBudget, render_together
from protoagent.workspace.files import read_bytes, revision_of
from protoagent.workspace.paths import open_root
from protoagent.workspace.text import decode_source, render_span

NAMED_FILE_BUDGETS: dict[PromptProfile, SpanBudget] = {
    "standard": SpanBudget(lines=120, chars=6_000),
    "small": SpanBudget(lines=0, chars=0),
}
"""All named files together; a small model's window has no room to spare."""
MAX_FILES = 3
MAX_FILE_BYTES = 256 * 1024
CONTEXT_LINES = 5
"""Lines shown above the first line that holds a named symbol, in a file too long to show whole."""
NAMED_FILES_HEADER = (
    "Files your assignment names that no agent had read, read by the harness for you (current "
    "revisions; no need to read these lines again):"
)
TEST_MODULE_HEADER = (
    "The test module of the checks that your assignment names (or that shares most words with it), which "
    "no agent had read, read by the harness for you (current revision; no need to read these lines again):"
)
_PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*)(?![\w/-])")
_CODE = re.compile(r"`([^`\s]+)`|\b([A-Za-z_][\w]*)\(|\b([A-Za-z]+_[\w]*)\b")


def named_paths(assignment: str, root: Path) -> list[str]:
    """Workspace files ``assignment`` names by path (``docs/a.rst``, ``CHANGELOG``), in order."""
    found: list[str] = []
    for match in _PATH.finditer(assignment):
        token = match.group(1)
        if "/" not in token and "." not in token and not token.isupper():
            continue  # a plain word; a root file without a suffix is named in capitals (CHANGELOG)
        if _hidden(token) or token in found:
            continue
        if (root / token).is_file():
            found.append(token)
    return found


def _hidden(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/"))


def _symbols(assignment: str) -> set[str]:
    """What the assignment writes as code: `quoted`, called names and snake_case names."""
    return {next(g for g in m.groups() if g).strip("().") for m in _CODE.finditer(assignment)} - {""}


def unread_named_spans(
    root: Path, assignment: str, read_paths: Collection[str], budget: SpanBudget, *, paths: Sequence[str] | None = None
) -> tuple[SourceSpan, ...]:
    """The files ``assignment`` names (or ``paths``, chosen otherwise) that are not in
    ``read_paths``, each whole or from a few lines above the first line holding a symbol the
    assignment names, within ``budget`` together."""
    spans: list[SourceSpan] = []
    lines, chars = budget.lines, budget.chars
    symbols = _symbols(assignment)
    chosen = named_paths(assignment, root) if paths is None else [p for p in paths if not _hidden(p)]
    for path in [p for p in chosen if p not in read_paths][:MAX_FILES]:
        if lines <= 0 or chars <= 0:
            break
        span = _read(root, path, symbols, lines, chars)
        if span is not None:
            spans.append(span)
            lines -= span.end_line - span.start_line + 1
            chars -= len(span.content)
    return tuple(spans)


def render_named(spans: Sequence[SourceSpan], header: str = NAMED_FILES_HEADER) -> str:
    """The context section for the spans; empty when there are none."""
    return "\n".join([header, render_together(spans)]) if spans else ""


def _read(root: Path, path: str, symbols: set[str], max_lines: int, max_chars: int) -> SourceSpan | None:
    try:
        with open_root(root) as root_fd:
            data = read_bytes(root_fd, path)
        if len(data) > MAX_FILE_BYTES:
            return None
        text = decode_source(data, path)
    except (OSError, ToolRejected, UnicodeDecodeError, ValueError):
        return None
    all_lines = text.splitlines()
    words = [re.compile(rf"(?<![\w$]){re.escape(s)}(?![\w$])") for s in symbols]
    hit = next((i for i, line in enumerate(all_lines) if any(w.search(line) for w in words)), 0)
    start = 1 if len(all_lines) <= max_lines else max(1, hit + 1 - CONTEXT_LINES)
    end = min(len(all_lines), start + max_lines - 1)
    shown = render_span(text, start, end, numbered=True, cap=max_chars)
    if not shown.content:
        return None
    return SourceSpan(path, start, shown.end_line, shown.total_lines, revision_of(data), shown.content)
