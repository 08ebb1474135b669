"""``TaskBoard``: the live TaskRecord of a run, shared by its tools, guards and graph."""

from __future__ import annotations

from dataclasses import replace

from protoagent.events.log import SessionLog
from protoagent.workflow.task import TaskRecord, WorkerReport, record_task

PLAN_CORRECTIONS_PER_INFERENCE = 2


class TaskBoard:
    """Holds the current TaskRecord; every change is appended as a ``task.updated`` event."""

    def __init__(self, log: SessionLog, record: TaskRecord, reason: str = "created") -> None:
        self.log = log
        self._record = record
        record_task(log, record, reason)

    @property
    def record(self) -> TaskRecord:
        return self._record

    def update(self, record: TaskRecord, reason: str) -> TaskRecord:
        if record != self._record:
            self._record = record_task(self.log, record, reason)
        return self._record

    def freeze(self, reason: str) -> None:
        if not self._record.frozen:
            self.update(replace(self._record, frozen=True), f"plan frozen: {reason}")

    def report(self, report: WorkerReport) -> None:
        self.update(self._record.with_report(report), f"report from {report.role}: {report.status}")

    def new_inference(self) -> None:
        """Each inference gets its own allowance of plan corrections."""
        if self._record.plan_corrections:
            self.update(replace(self._record, plan_corrections=0), "new inference")
