"""Harness-localized source for the Architect's first request.

When the baseline fails, the failing checks' output names the tests; ``repair.localize`` finds
the few source functions those failures involve (traceback frames outside the tests, then the
functions the failing test line calls). Their current text, line-numbered exactly as
``read_file`` shows it and with the file's revision, goes after the failing test ids, so a
capable Architect can delegate at once instead of searching for the source first.

Pure reads: nothing is imported or run. The spans are recorded as ``source.localized`` for the
Architect, so they count as read by it and reach the Coder's assignment like its own reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from protoagent.agents.profiles import ARCHITECT
from protoagent.errors import ToolRejected
from protoagent.events.log import SessionLog
from protoagent.events.queries import tool_results
from protoagent.events.types import Event
from protoagent.models.profile import PromptProfile
from protoagent.repair.localize import localize
from protoagent.workflow.packets import LOCALIZED_EVENT
from protoagent.workflow.source_spans import SourceSpan, SpanBudget, render_together
from protoagent.workspace.files import read_bytes, revision_of
from protoagent.workspace.paths import open_root
from protoagent.workspace.text import decode_source, render_span

LOCALIZED_BUDGETS: dict[PromptProfile, SpanBudget] = {
    "standard": SpanBudget(lines=80, chars=4_000),
    "small": SpanBudget(lines=40, chars=2_000),
}
"""Source shown with a failing baseline, all functions together; a function that does not fit
whole is left out (half a function invites a wrong edit)."""
LOCALIZED_HEADER = (
    "Source of the functions the failing tests involve, read by the harness (current revisions; "
    "no need to read these lines again):"
)


def failing_baseline_outputs(events: Sequence[Event], after_seq: int = 0) -> list[str]:
    """The output of every ``run_check`` baseline receipt after ``after_seq`` that failed."""
    outputs = []
    for _, ended in tool_results(events, ("run_check",), after=after_seq):
        if ended.data.get("phase") == "baseline" and ended.data.get("outcome") == "failed":
            outputs.append(ended.output)
    return outputs


def localized_spans(root: Path, outputs: Sequence[str], budget: SpanBudget) -> tuple[SourceSpan, ...]:
    """Whole source functions the failing outputs point at, in the order ``localize`` ranks them,
    within ``budget`` (lines and characters of all functions together)."""
    spans: list[SourceSpan] = []
    lines, chars = budget.lines, budget.chars
    seen: set[tuple[str, int]] = set()
    for output in outputs:
        found = localize(root, output)
        for function in found.functions if found is not None else ():
            key = (function.path, function.start)
            end = function.start + len(function.lines) - 1
            if key in seen or end - function.start + 1 > lines:
                continue
            seen.add(key)
            span = _read_span(root, function.path, function.start, end, chars)
            if span is not None:
                spans.append(span)
                lines -= span.end_line - span.start_line + 1
                chars -= len(span.content)
    return tuple(spans)


def record_localized(log: SessionLog, spans: Sequence[SourceSpan], agent: str = ARCHITECT) -> None:
    """Record the spans shown to ``agent`` (they then count as read by it)."""
    if spans:
        log.append(LOCALIZED_EVENT, {"spans": [s.to_json() for s in spans]}, agent=agent)


def render_localized(spans: Sequence[SourceSpan]) -> str:
    """The context section for the spans; empty when there are none."""
    if not spans:
        return ""
    return "\n".join([LOCALIZED_HEADER, render_together(spans)])


def _read_span(root: Path, path: str, start: int, end: int, max_chars: int) -> SourceSpan | None:
    """Lines ``start``-``end`` of ``path`` as ``read_file`` numbers them, or ``None`` when the
    file cannot be read inside the workspace or the lines do not fit ``max_chars`` whole."""
    try:
        with open_root(root) as root_fd:
            data = read_bytes(root_fd, path)
        text = decode_source(data, path)
        shown = render_span(text, start, end, numbered=True, cap=max_chars)
    except (OSError, ToolRejected):
        return None
    if shown.truncated or shown.end_line != end or len(shown.content) > max_chars:
        return None
    return SourceSpan(path, start, end, shown.total_lines, revision_of(data), shown.content)
