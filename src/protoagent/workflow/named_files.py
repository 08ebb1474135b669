"""What a Coder assignment names that no agent has read yet, read by the harness for the Coder.

A lead often names a file to change without reading it ("add `where_not` to docs/cheatsheet.rst").
The Coder would spend its first request reading it; instead the assignment carries the file, cut
as its lead's reads are (``span_choice``: the definitions and lines the assignment points at, the
part around the first line that uses a name it writes as code), with its revision, recorded as
``source.localized`` for the Coder so it counts as read. Of a file the lead read only in part (or
only saw in a search's hits), the definitions and lines the assignment points at that no read
holds are read the same way ("in ``safe_mult`` (line 464) ...").

Pure reads inside the workspace: a path that leaves it, a hidden path (``.env``, ``.git/...``), a
file that is not text or is over ``MAX_FILE_BYTES`` is left out, and so is ``AGENTS.md``, which
every agent's instructions already hold.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.hooks.workspace_instructions import INSTRUCTIONS_FILE
from protoagent.models.profile import PromptProfile
from protoagent.workflow.source_spans import SourceSpan, SpanBudget, render_together
from protoagent.workflow.span_choice import carried, windows
from protoagent.workspace.files import read_bytes, revision_of
from protoagent.workspace.paths import open_root
from protoagent.workspace.text import decode_source, render_span

NAMED_FILE_BUDGETS: dict[PromptProfile, SpanBudget] = {
    "standard": SpanBudget(lines=120, chars=6_000),
    "small": SpanBudget(lines=0, chars=0),
}
"""All named files together; a small model's window has no room to spare."""
MAX_FILES = 4
"""Named files read at most (a fix in two modules and a test for each names four)."""
MAX_FILE_BYTES = 256 * 1024
NAMED_FILES_HEADER = (
    "What your assignment names that no agent had read (a file whole, or the lines it points at), read by "
    "the harness for you (current revisions; no need to read these lines again):"
)
TEST_MODULE_HEADER = (
    "The test module of the checks that your assignment names (or that shares most words with it), which "
    "no agent had read, read by the harness for you (current revision; no need to read these lines again):"
)
_PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*)(?![\w/-])")


def named_paths(assignment: str, root: Path) -> list[str]:
    """Workspace files ``assignment`` names by path (``docs/a.rst``, ``CHANGELOG``), in order."""
    found: list[str] = []
    for match in _PATH.finditer(assignment):
        token = match.group(1)
        if "/" not in token and "." not in token and not token.isupper():
            continue  # a plain word; a root file without a suffix is named in capitals (CHANGELOG)
        if _hidden(token) or token in found or token.rsplit("/", 1)[-1] == INSTRUCTIONS_FILE:
            continue  # AGENTS.md is in every agent's instructions already
        if (root / token).is_file():
            found.append(token)
    return found


def _hidden(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/"))


def unread_named_spans(
    root: Path,
    assignment: str,
    read_paths: Collection[str],
    budget: SpanBudget,
    *,
    paths: Sequence[str] | None = None,
    shown: Sequence[SourceSpan] = (),
) -> tuple[SourceSpan, ...]:
    """What ``assignment`` names (or ``paths``, chosen otherwise) that no read holds: a file not
    in ``read_paths`` whole, and of a file read only in part the definitions and lines the
    assignment points at that no ``shown`` span of it touches (a search hit is no read); cut and
    shared within ``budget`` as an assignment's reads are (``span_choice.carried``)."""
    if budget.lines <= 0 or budget.chars <= 0:
        return ()
    chosen = named_paths(assignment, root) if paths is None else [p for p in paths if not _hidden(p)]
    pieces: list[SourceSpan] = []
    for path in chosen[:MAX_FILES]:
        whole = _whole(root, path)
        if whole is None:
            continue
        if path not in read_paths:
            pieces.append(whole)
            continue
        pointed = windows(whole, assignment)
        if pointed == [whole]:
            continue  # it points at nothing in particular there: what was read stands
        seen = [s for s in shown if s.path == path]
        pieces += [
            w for w in pointed if not any(s.start_line <= w.end_line and w.start_line <= s.end_line for s in seen)
        ]
    return tuple(carried(pieces, assignment, budget))


def render_named(spans: Sequence[SourceSpan], header: str = NAMED_FILES_HEADER) -> str:
    """The context section for the spans; empty when there are none."""
    return "\n".join([header, render_together(spans)]) if spans else ""


def _whole(root: Path, path: str) -> SourceSpan | None:
    """The whole file, numbered as ``read_file`` shows it, or ``None`` when it cannot be shown."""
    try:
        with open_root(root) as root_fd:
            data = read_bytes(root_fd, path)
        if len(data) > MAX_FILE_BYTES:
            return None
        text = decode_source(data, path)
    except (OSError, ToolRejected, UnicodeDecodeError, ValueError):
        return None
    shown = render_span(text, 1, None, numbered=True, cap=4 * MAX_FILE_BYTES)
    if not shown.content:
        return None
    return SourceSpan(path, 1, shown.end_line, shown.total_lines, revision_of(data), shown.content)
