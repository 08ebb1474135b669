"""What a worker hands back to its caller: its recorded report, and for Coder the files it changed.

A worker's turn ends at ``report_task``; the caller's tool result carries the report's status,
whole summary and structured fields, never just the worker's last chat line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from protoagent.events.catalog import ModelCompleted, RepairEnded
from protoagent.events.queries import facts, last_fact, tool_results
from protoagent.events.types import Event
from protoagent.models.profile import PromptProfile
from protoagent.workflow.facts import writes
from protoagent.workflow.task import ReportStatus, WorkerReport

ADVICE_CHARS: dict[PromptProfile, int] = {"standard": 4000, "small": 1200}
"""How much of an advising worker's own messages its lead is shown (the most recent kept)."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file a worker changed in its assignment: the revision it left and a diff stat."""

    path: str
    revision: str
    added: int
    removed: int

    def render(self) -> str:
        return f"{self.path} revision {self.revision} (+{self.added} -{self.removed})"


def recorded_report(events: Sequence[Event], agent: str, after_seq: int = 0) -> WorkerReport | None:
    """The latest ``report_task`` that ``agent`` recorded after ``after_seq``, if any."""
    for _, ended in tool_results(reversed(events), ("report_task",), agent=agent, after=after_seq, status="ok"):
        data = ended.data
        status = cast(ReportStatus, str(data.get("status", "done")))
        summary = str(data.get("summary", ended.output))
        missing = tuple(str(p) for p in data.get("missing_paths", ()))
        return WorkerReport(agent, status, summary, missing)
    return None


def render_report(role: str, report: WorkerReport | None, last_text: str) -> str:
    """The caller's view of a worker's result: status, whole summary, missing paths."""
    if report is None:
        return f"{role} answered without a report:\n{last_text}" if last_text else f"{role} made no report"
    lines = [f"{role} reported {report.status}" + (f"/{report.reason}" if report.reason else "") + ":"]
    lines.append(report.summary or "(no summary)")
    if report.missing_paths:
        lines.append("missing paths: " + ", ".join(report.missing_paths))
    return "\n".join(lines)


def worker_messages(events: Sequence[Event], agent: str, after_seq: int = 0) -> list[str]:
    """The text of every model reply ``agent`` gave after ``after_seq`` (also the text that came
    with a tool call, such as the cases a Tester wrote before its ``report_task``)."""
    return [m.text.strip() for _, m in facts(events, ModelCompleted, agent=agent, after=after_seq) if m.text.strip()]


def render_written(messages: Sequence[str], limit: int) -> str:
    """What a worker wrote, bounded to ``limit`` characters (the most recent kept, a cut said)."""
    said = "\n\n".join(messages)
    if len(said) > limit:
        said = f"[... {len(said) - limit} characters of its earlier messages cut ...]\n" + said[-limit:]
    return said


def render_advice(role: str, report: WorkerReport | None, messages: Sequence[str], limit: int) -> str:
    """A read-only worker's conclusion as its lead sees it: what it wrote (bounded to ``limit``
    characters, the most recent kept, a cut said) and then its report; advice, not evidence."""
    said = render_written([m for m in messages if report is None or m != report.summary.strip()], limit)
    if report is None:
        return f"{role} answered without a report:\n{said}" if said else f"{role} made no report"
    parts = [f"{role} wrote:\n{said}"] if said else []
    return "\n".join([*parts, render_report(role, report, "")])


def file_changes(events: Sequence[Event], agent: str | None, after_seq: int = 0) -> tuple[FileChange, ...]:
    """Files ``agent`` (any agent when ``None``) wrote after ``after_seq``, in first-write order,
    with the last revision each write left and the lines its writes added and removed."""
    changes: dict[str, FileChange] = {}
    for _, ended in writes(events, agent, after_seq):
        data = ended.data
        path = str(data.get("path"))
        before = changes.get(path, FileChange(path, "", 0, 0))
        changes[path] = FileChange(
            path,
            str(data.get("source_revision", "")),
            before.added + int(data.get("lines_added", 0)),
            before.removed + int(data.get("lines_removed", 0)),
        )
    return tuple(changes.values())


def render_changes(changes: Sequence[FileChange]) -> str:
    if not changes:
        return "changed files: none"
    return "changed files:\n" + "\n".join(f"- {c.render()}" for c in changes)


def guided_repair_notes(events: Sequence[Event]) -> list[str]:
    """The report's line on the latest guided repair: candidates tried and which one passed."""
    found = last_fact(events, RepairEnded)
    if found is None:
        return []
    repair = found[1]
    tried, passed = repair.tried, repair.passed
    line = f"guided repair: {tried} candidate edit(s) tried in a scratch copy"
    if passed is not None:
        new = str(passed.get("new", "")).strip()
        line += f"; candidate {tried} passed: {passed.get('path')} line {passed.get('line')} -> {new!r}"
        for also in repair.also:  # a two-line fix
            line += f" and line {also.get('line')} -> {str(also.get('new', '')).strip()!r}"
        if repair.status != "applied":
            line += f" ({repair.reason})"
        return [line]
    return [f"{line}; none passed ({repair.reason})"]
