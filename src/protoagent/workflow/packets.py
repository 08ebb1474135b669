"""Bounded source context for a worker: the spans its caller already read that its assignment
names (carried into each assignment), and ``worker_packet``, prepared but never executed.

A span counts as read by the Architect when its ``read_file`` showed it (or a ``code_context``
definition answer, which shows a definition's lines as ``read_file`` does), or when the harness
showed it in the Architect's context (``source.localized``: the source a failing baseline
points at), so the Coder can edit those lines without reading them again. An assignment names a
span when it names a function or class the span defines or the span's file and one of its lines
("line 50"), or the span's file alone (then every span of that file, unless the assignment names
one of them as above); an assignment that names none of them carries them all, since its lead
left the choice to the worker."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from protoagent.agents.profiles import ARCHITECT, LEADS
from protoagent.errors import ToolRejected
from protoagent.events.catalog import SourceLocalized, ToolEnded
from protoagent.events.types import Event
from protoagent.json_form import json_form
from protoagent.models.profile import PromptProfile
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
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


@dataclass(frozen=True, slots=True)
class SpanBudget:
    """How much already-read source one assignment carries, most recent reads first."""

    lines: int
    chars: int


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


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """Lines of a file as a ``read_file`` result showed them, with the file's revision then."""

    path: str
    start_line: int
    end_line: int
    total_lines: int
    revision: str
    content: str
    cut: str = ""
    """When the span stops inside a construct (a function or class that goes on past
    ``end_line``), what it is and where it ends; else empty."""

    def render(self, next_shown: int | None = None) -> str:
        where = f"{self.path} lines {self.start_line}-{self.end_line} of {self.total_lines}"
        return f"--- {where}; revision {self.revision}\n" + self.content.rstrip("\n") + self.continuation(next_shown)

    def continuation(self, next_shown: int | None = None) -> str:
        """The line that ends a span with more of its file after it: where it stops, which lines
        are not shown (up to ``next_shown``, the first line of the file's next span shown beside
        it), and (when it stops mid-construct) which construct and where that ends."""
        last = self.total_lines if next_shown is None else min(self.total_lines, next_shown - 1)
        if self.end_line >= last:
            return ""
        rest = f"lines {self.end_line + 1}-{last} are not shown"
        cut = f"; it stops inside {self.cut}: read the rest before editing it" if self.cut else ""
        return f"\n[shown up to line {self.end_line}; {rest}{cut}]"

    def to_json(self) -> dict[str, Any]:
        return json_form(self, omit=("cut",))


def read_spans(
    events: Sequence[Event],
    root: Path,
    budget: SpanBudget,
    *,
    agents: Collection[str] = (ARCHITECT,),
    assignment: str = "",
) -> tuple[tuple[SourceSpan, ...], tuple[str, ...]]:
    """The spans ``agents`` read whose files are unchanged since and that ``assignment`` names
    (all of them when it is empty or names none), most recent first (localized spans in their
    ranked order), within ``budget``; and the named paths of reads left out because their file
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
        stale = [path for path in stale if _names_path(assignment, path)]
    spans: list[SourceSpan] = []
    lines, chars = budget.lines, budget.chars
    for span in chosen:
        fitted = _fitted(span, lines, chars) if lines > 0 and chars > 0 else None
        if fitted is not None and fitted.end_line < span.end_line:  # cut: keep what the task points at
            fitted = _fitted(focused_on(span, assignment), lines, chars) or fitted
        now = current[span.path]
        if fitted is not None and now is not None:
            spans.append(replace(fitted, cut=open_construct(span.path, now[1], fitted.end_line)))
            lines -= fitted.end_line - fitted.start_line + 1
            chars -= len(fitted.content)
    return tuple(spans), tuple(stale)


_DEFINES = re.compile(r"^(?:\s*\d+\| ?)?\s*(?:async\s+def|def|class|function)\s+([A-Za-z_$][\w$]*)", re.M)
"""A definition header in a span's content (read_file may number the lines: ``   4| def f``)."""


def named_spans(spans: Sequence[SourceSpan], assignment: str) -> list[SourceSpan]:
    """The spans ``assignment`` names (see the module docstring), in their order; all of them
    when it names none."""
    if not assignment.strip():
        return list(spans)
    lines = _named_lines(assignment)
    by_symbol = [
        s
        for s in spans
        if any(_names_word(assignment, name) for name in _DEFINES.findall(s.content))
        or (_names_path(assignment, s.path) and any(s.start_line <= n <= s.end_line for n in lines))
    ]
    symbol_files = {s.path for s in by_symbol}
    chosen = [s for s in spans if s in by_symbol or (s.path not in symbol_files and _names_path(assignment, s.path))]
    return chosen or list(spans)


_RANGE = r"\d+(?:\s*(?:-|–|to)\s*\d+)?"
_LINE_REFERENCE = re.compile(rf"\blines?\s+({_RANGE}(?:\s*(?:,|and|&)\s*{_RANGE})*)", re.I)
_NUMBERS = re.compile(r"(\d+)(?:\s*(?:-|–|to)\s*(\d+))?")
_SHORT_REFERENCE = re.compile(r"(?:(?<!\w)L|[\w-]\.[A-Za-z]\w{0,5}:)(\d+)(?:\s*(?:-|–)\s*L?(\d+))?(?!\w)")
"""``L127``, ``L127-132`` and ``app.py:49`` / ``app.py:49-54``."""


def _named_lines(text: str) -> set[int]:
    """The line numbers ``text`` refers to ("line 50", "lines 49-54", "lines 49 and 60", "L49-54",
    "app.py:49")."""
    found = [m for ref in _LINE_REFERENCE.finditer(text) for m in _NUMBERS.finditer(ref.group(1))]
    found += _SHORT_REFERENCE.finditer(text)
    named: set[int] = set()
    for match in found:
        first = int(match.group(1))
        last = int(match.group(2) or first)
        named.update(range(first, min(last, first + 500) + 1))
    return named


def _names_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(word)}(?![\w$])", text) is not None


def _names_path(text: str, path: str) -> bool:
    """``text`` names the file: its workspace-relative path or its file name (alone or after a
    folder, as in ``pkg/mod.py``), as a whole token."""
    names = {path, path.rsplit("/", 1)[-1]}
    return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w/-])", text) is not None for n in names)


def render_together(spans: Sequence[SourceSpan]) -> str:
    """``spans`` shown in one message: a span's continuation counts only the lines up to the next
    span of its file shown there, so no shown line is called not shown."""

    def next_shown(span: SourceSpan) -> int | None:
        later = [s.start_line for s in spans if s.path == span.path and s.start_line > span.end_line]
        return min(later, default=None)

    return "\n".join(span.render(next_shown(span)) for span in spans)


def render_spans(spans: Sequence[SourceSpan], stale: Sequence[str]) -> str:
    """The assignment's view of what its caller already read; empty when there is nothing."""
    parts = []
    if spans:
        parts.append("Source already read in this task, unchanged since (no need to read these lines again):")
        parts.append(render_together(spans))
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


def span_from(data: dict[str, Any]) -> SourceSpan | None:
    """The span a read's record holds (a ``read_file`` result's data, a ``code_context`` source,
    a ``definition_read``), or ``None`` when it holds no content."""
    if not data.get("content") or not data.get("revision") or not data.get("path"):
        return None
    start, end = int(data.get("start_line", 1)), int(data.get("end_line", 0))
    total = int(data.get("total_lines", end))
    return SourceSpan(str(data["path"]), start, end, total, str(data["revision"]), str(data["content"]))


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


FOCUS_LOOKBACK = 40
"""Lines above a named line searched for the definition it belongs to."""


def focused_on(span: SourceSpan, assignment: str) -> SourceSpan:
    """``span`` from the first line the assignment points at, so a cut keeps the part the worker
    was sent for: a line it names (from the definition that holds it, when that starts at most
    ``FOCUS_LOOKBACK`` lines above), else the definition of a symbol it names; the whole span
    when it points at none of its lines or at the first."""
    named = _named_lines(assignment) if _names_path(assignment, span.path) else set()
    lines = span.content.splitlines(keepends=True)
    inside = [n - span.start_line for n in sorted(named) if span.start_line <= n <= span.end_line]
    if inside:
        first = inside[0]
        headers = [o for o in range(first, max(first - FOCUS_LOOKBACK, 0) - 1, -1) if _DEFINES.match(lines[o])]
        start = headers[0] if headers else first
    else:
        defined = (o for o, line in enumerate(lines) if (h := _DEFINES.match(line)) and _names_word(assignment, h[1]))
        start = next(defined, 0)
    if start == 0:
        return span
    return replace(span, start_line=span.start_line + start, content="".join(lines[start:]))


def _fitted(span: SourceSpan, max_lines: int, max_chars: int) -> SourceSpan | None:
    """The span's first whole lines that fit both limits, or ``None`` when not one line fits."""
    kept: list[str] = []
    used = 0
    for line in span.content.splitlines(keepends=True)[:max_lines]:
        if used + len(line) > max_chars:
            break
        kept.append(line)
        used += len(line)
    if not kept:
        return None
    return replace(span, end_line=span.start_line + len(kept) - 1, content="".join(kept))


def _current(root: Path, path: str) -> tuple[str, bytes] | None:
    """The file's current revision and bytes, or ``None`` when it cannot be read in the workspace."""
    try:
        with open_root(root) as root_fd:
            data = read_bytes(root_fd, path)
    except (OSError, ToolRejected):
        return None
    return revision_of(data), data


def open_construct(path: str, data: bytes, end_line: int) -> str:
    """For a Python file, the innermost function or class that holds ``end_line`` and goes on
    past it (``def parse (lines 1500-1536)``); empty when the line ends no construct or the file
    is not Python that parses."""
    if not path.endswith(".py"):
        return ""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return ""
    best: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            end = node.end_lineno or node.lineno
            if node.lineno <= end_line < end and (best is None or node.lineno >= best.lineno):
                best = node
    if best is None:
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
            fitted = _fitted(span, span.end_line - span.start_line + 1, budget)
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
