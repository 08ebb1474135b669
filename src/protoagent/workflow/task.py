"""``TaskRecord``: the objective, scope, checks and reports of one run, kept as events."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from protoagent.events.catalog import TaskUpdated
from protoagent.events.log import SessionLog
from protoagent.events.queries import last_fact
from protoagent.events.rewound import visible_events
from protoagent.events.types import Event

ReportStatus = Literal["done", "needs_context", "blocked"]
DOC_SUFFIXES = (".md", ".rst", ".txt")


@dataclass(frozen=True, slots=True)
class WorkerReport:
    """What a worker said about its assignment. Advice, never evidence."""

    role: str
    status: ReportStatus
    summary: str
    missing_paths: tuple[str, ...] = ()
    reason: str = ""
    """A typed outcome such as ``worker_turn_limit`` or ``worker_no_progress``."""

    @property
    def unresolved(self) -> bool:
        return self.status != "done"


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """Application state of one run; it survives compaction and eviction because it lives in
    ``task.updated`` events and is re-inserted into every admitted request."""

    objective: str
    criteria: tuple[str, ...] = ()
    allowed_paths: tuple[str, ...] = ()
    """Write scope; empty means the whole workspace."""
    available_check_ids: tuple[str, ...] = ()
    selected_check_ids: tuple[str, ...] = ()
    bootstrap_check_ids: tuple[str, ...] = ()
    baseline_check_ids: tuple[str, ...] = ()
    source_refs: tuple[str, ...] = ()
    reports: tuple[WorkerReport, ...] = ()
    frozen: bool = False
    """Set once a write or a final check is proposed; the plan cannot change after that."""
    plan_corrections: int = 0
    """Rejected plan_task calls in the current inference."""
    read_only: bool = False
    """The person asked for no changes: writes are denied."""
    code_selection: tuple[str, ...] = field(default=())
    """The check selection in force for code changes (kept when a plan passes none)."""

    def with_report(self, report: WorkerReport) -> TaskRecord:
        # A later report from the same role resolves that role's earlier one.
        kept = tuple(r for r in self.reports if r.role != report.role)
        return replace(self, reports=(*kept, report))

    @property
    def unresolved_reports(self) -> tuple[WorkerReport, ...]:
        return tuple(r for r in self.reports if r.unresolved)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["reports"] = [asdict(r) for r in self.reports]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        fields = dict(data)
        fields["reports"] = tuple(
            WorkerReport(**{**r, "missing_paths": tuple(r.get("missing_paths", ()))}) for r in data.get("reports", ())
        )
        for key in (
            "criteria",
            "allowed_paths",
            "available_check_ids",
            "selected_check_ids",
            "bootstrap_check_ids",
            "baseline_check_ids",
            "source_refs",
            "code_selection",
        ):
            fields[key] = tuple(data.get(key, ()))
        return cls(**fields)

    def render(self, *, checks: bool = True, planning: bool = True) -> str:
        """The compact text re-inserted into every admitted request; ``checks=False`` leaves out
        the check ids (for a surface that has no tool to run them), ``planning=False`` the frozen
        plan (for an agent without ``plan_task``: a worker)."""
        lines = [f"objective: {self.objective}"]
        if self.criteria:
            # A JSON list: a criterion with ";" or "," in it stays one criterion.
            lines.append("criteria: " + json.dumps(list(self.criteria)))
        elif checks:
            # The evidence report judges the objective as the one criterion (workflow.criteria).
            lines.append("criteria: none recorded; the objective stands as criterion 1")
        lines.append("allowed_paths: " + (", ".join(self.allowed_paths) or "(whole workspace)"))
        if checks:
            lines.append("available_check_ids: " + json.dumps(list(self.available_check_ids)))
            lines.append("selected_check_ids: " + json.dumps(list(self.selected_check_ids)))
            lines.append("bootstrap_checks: " + json.dumps(list(self.bootstrap_check_ids)))
            lines.append("baseline_check_ids: " + json.dumps(list(self.baseline_check_ids)))
        if self.frozen and planning:
            lines.append("plan: frozen (scope, criteria and checks are fixed for this attempt)")
        if self.read_only:
            lines.append("read_only: file writes are denied")
        for report in self.reports:
            lines.append(f"report from {report.role}: {report.status} — {report.summary}")
        return "\n".join(lines)


def current_task(events: Sequence[Event]) -> TaskRecord | None:
    """The latest TaskRecord recorded in the log (outside turns a conversation rewind hid)."""
    found = last_fact(visible_events(events), TaskUpdated)
    return TaskRecord.from_json(found[1].record) if found is not None else None


def record_task(log: SessionLog, task: TaskRecord, reason: str, agent: str = "main") -> TaskRecord:
    log.append("task.updated", {"reason": reason, "record": task.to_json()}, agent=agent)
    return task


def is_documentation_path(path: str) -> bool:
    return path.lower().endswith(DOC_SUFFIXES)
