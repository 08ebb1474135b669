"""Bounded source context for a worker: the spans its caller already read that its assignment
names (carried into each assignment), and ``worker_packet``, prepared but never executed.

A span counts as read by the Architect when its ``read_file`` showed it (or a ``code_context``
definition answer, which shows a definition's lines as ``read_file`` does), or when the harness
showed it in the Architect's context (``source.localized``: the source a failing baseline
points at), so the Coder can edit those lines without reading them again. Which of those spans
an assignment names, and which of their lines it carries, is ``span_choice``'s."""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from protoagent.agents.profiles import ARCHITECT, LEADS
from protoagent.errors import ToolRejected
from protoagent.events.catalog import SourceLocalized, ToolEnded
from protoagent.events.types import Event
from protoagent.models.profile import PromptProfile
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workflow.source_spans import SourceSpan, SpanBudget, render_together, span_from
from protoagent.workflow.source_spans import fitted as fit
from protoagent.workflow.span_choice import carried, named_spans, names_path
from protoagent.workflow.task_tools import board_of
from protoagent.workspace.files import read_bytes, revision_of
from protoagent.workspace.inputs import ReadFileInput
from protoagent.workspace.paths import open_root
from protoagent.workspace.tools import ReadFileTool

MAX_REFERENCES = 8
SOURCE_BUDGET = 6000
LOCALIZED_EVENT = "source.localized"
"""Source the harness showed an agent in its context; its ``spans`` count as read by that agent."""
DISPATCH_REMINDER = (
    "This packet executed nothing and changed nothing. Delegate it now: call coder(task) or tester(task) "
    "with this context. Do not prepare it again, and do not start final verification before Coder has "
    "applied the edits."
)


SPAN_BUDGETS: dict[PromptProfile, SpanBudget] = {
    "standard": SpanBudget(lines=300, chars=18_000),
    "small": SpanBudget(lines=60, chars=3_000),
}
"""A small model's window is 8k tokens, so its assignments carry less."""
TESTER_SPAN_BUDGETS: dict[PromptProfile, SpanBudget] = {
    "standard": SpanBudget(lines=400, chars=24_000),
    "small": SpanBudget(lines=60, chars=3_000),
}
"""Tester only reads: a packet that holds what the lead read saves it a request of re-reading (in a
trial a 200-line packet left out the code the cases were about, and the Tester read it again)."""


def read_spans(
    events: Sequence[Event],
    root: Path,
    budget: SpanBudget,
    *,
    agents: Collection[str] = (ARCHITECT,),
    assignment: str = "",
) -> tuple[tuple[SourceSpan, ...], tuple[str, ...]]:
    """The spans ``agents`` read whose files are unchanged since and that ``assignment`` names
    (all of them when it is empty or names none), as ``span_choice.carried`` cuts and orders them
    within ``budget`` (reads the assignment does not order stay most recent first, localized
    spans in their ranked order); and the named paths of reads left out because their file
    changed since."""
    unchanged: list[SourceSpan] = []
    stale: list[str] = []
    current: dict[str, tuple[str, bytes] | None] = {}
    for read in (span for event in reversed(events) for span in _spans_of(event, agents)):
        span = _trimmed(read, unchanged)
        if span is None:
            continue
        if span.path not in current:
            current[span.path] = _current(root, span.path)
        now = current[span.path]
        if now is None or now[0] != span.revision:
            if span.path not in stale:
                stale.append(span.path)
            continue
        unchanged.append(span)
    chosen = named_spans(unchanged, assignment)
    if assignment and len(chosen) < len(unchanged):
        stale = [path for path in stale if names_path(assignment, path)]
    spans = []
    for shown in carried(chosen, assignment, budget):
        now = current[shown.path]
        if now is not None:
            spans.append(replace(shown, cut=open_construct(shown.path, now[1], shown.end_line)))
    return tuple(spans), tuple(stale)


def render_spans(spans: Sequence[SourceSpan], stale: Sequence[str], *, editing: bool = True) -> str:
    """The assignment's view of what its caller already read; empty when there is nothing."""
    parts = []
    if spans:
        parts.append("Source already read in this task, unchanged since (no need to read these lines again):")
        parts.append(render_together(spans, editing=editing))
    if stale:
        parts.append("Left out because the file changed since it was read: " + ", ".join(stale))
    return "\n".join(parts)


def paths_read(events: Sequence[Event], agents: Collection[str]) -> set[str]:
    """Every file ``agents`` were shown any lines of, whatever its revision now."""
    return {span.path for event in events for span in _spans_of(event, agents)}


def _spans_of(event: Event, agents: Collection[str]) -> list[SourceSpan]:
    """The source ``event`` showed ``agent``: an ok ``read_file`` result or the harness's
    localized source."""
    if event.agent not in agents:
        return []
    if (localized := event.fact(SourceLocalized)) is not None:
        return [s for s in map(span_from, localized.spans) if s is not None]
    ended = event.fact(ToolEnded)
    if ended is None or ended.status != "ok":
        return []
    if ended.tool == "code_context":
        shown = ended.data.get("sources")
        records = [item for item in shown if isinstance(item, dict)] if isinstance(shown, list) else []
        return [s for s in map(span_from, records) if s is not None]
    span = span_from(ended.data) if ended.tool == "read_file" else None
    return [span] if span is not None else []


def _trimmed(span: SourceSpan, kept: Sequence[SourceSpan]) -> SourceSpan | None:
    """``span`` less the lines at either end that a more recent kept read of its file shows, so no
    line is shown twice; ``None`` when those reads show all of it. A kept read inside it, with
    lines of its own on both sides, leaves it whole."""
    start, end = span.start_line, span.end_line
    moved = True
    while moved and start <= end:
        moved = False
        for k in (k for k in kept if k.path == span.path):
            if k.start_line <= start <= k.end_line:
                start, moved = k.end_line + 1, True
            if start <= end and k.start_line <= end <= k.end_line:
                end, moved = k.start_line - 1, True
    if start > end:
        return None
    lines = span.content.splitlines(keepends=True)
    if (start, end) == (span.start_line, span.end_line) or len(lines) != span.end_line - span.start_line + 1:
        return span
    kept_lines = lines[start - span.start_line : end - span.start_line + 1]
    return replace(span, start_line=start, end_line=end, content="".join(kept_lines))


def _current(root: Path, path: str) -> tuple[str, bytes] | None:
    """The file's current revision and bytes, or ``None`` when it cannot be read in the workspace."""
    try:
        with open_root(root) as root_fd:
            data = read_bytes(root_fd, path)
    except (OSError, ToolRejected):
        return None
    return revision_of(data), data


def open_construct(path: str, data: bytes, end_line: int) -> str:
    """For a Python file, the innermost function or class that holds ``end_line`` (its last line
    that is not blank) and goes on past it (``def parse (lines 1500-1536)``); empty when that line
    ends its innermost construct (a whole method of a longer class is not cut), or the file is not
    Python that parses."""
    if not path.endswith(".py"):
        return ""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return ""
    lines = data.splitlines()
    while end_line > 1 and end_line <= len(lines) and not lines[end_line - 1].strip():
        end_line -= 1
    best: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= end_line <= end and (best is None or node.lineno >= best.lineno):
                best = node
    if best is None or (best.end_lineno or best.lineno) == end_line:
        return ""
    kind = "class" if isinstance(best, ast.ClassDef) else "def"
    return f"{kind} {best.name} (lines {best.lineno}-{best.end_lineno})"


class PacketArgs(BaseModel):
    role: Literal["explorer", "coder", "tester"]
    objective: str = Field(min_length=1)
    paths: list[str] = Field(default_factory=list, description="up to 8 source files")


class WorkerPacket(Tool[PacketArgs]):
    name = "worker_packet"
    description = "Prepare bounded source context for a worker; executes nothing."
    input_model = PacketArgs
    metadata = ToolMetadata(effect="read", roles=LEADS)

    def prepare(self, args: PacketArgs, ctx: ToolContext) -> Prepared:
        if len(args.paths) > MAX_REFERENCES:
            raise ToolRejected(
                f"a packet holds at most {MAX_REFERENCES} references; got {len(args.paths)}", kind="too_many_references"
            )
        return Prepared(preview=f"packet for {args.role}", effect="read", state=args)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        args: PacketArgs = prepared.state
        reader, budget = ReadFileTool(), SOURCE_BUDGET
        sources: list[dict[str, Any]] = []
        for path in args.paths:
            if budget <= 0:
                sources.append({"path": path, "omitted": "source budget of 6000 characters used up"})
                continue
            try:
                read = reader.prepare(
                    ReadFileInput(path=path, start_line=1, end_line=None), replace(ctx, agent_role="explorer")
                )
                out = await reader.execute(read, replace(ctx, agent_role="explorer"))
            except ToolRejected as rejection:
                sources.append({"path": path, "error": rejection.message})
                continue
            span = span_from({**out.data, "path": path})
            if span is None:  # an empty file
                sources.append({"path": path, "revision": out.data.get("revision"), "content": ""})
                continue
            fitted = fit(span, span.end_line - span.start_line + 1, budget)
            if fitted is None:
                sources.append({"path": path, "omitted": f"source budget of {SOURCE_BUDGET} characters used up"})
                continue
            budget -= len(fitted.content)
            entry = {"path": path, "revision": fitted.revision, "content": fitted.content}
            if fitted.end_line < fitted.total_lines:
                entry["more"] = fitted.continuation().strip().strip("[]")
            sources.append(entry)
        record = board_of(ctx).record
        packet = {
            "executed": False,
            "role": args.role,
            "objective": args.objective,
            "sources": sources,
            "criteria": list(record.criteria),
            "check_ids": list(record.selected_check_ids),
            "reminder": DISPATCH_REMINDER,
        }
        return ToolOutput(
            json.dumps(packet, indent=1), data={"executed": False, "role": args.role, "paths": list(args.paths)}
        )


PACKET_TOOLS = (WorkerPacket,)
