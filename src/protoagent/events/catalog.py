"""Every event type the log may hold, with its payload model (``CATALOG``).

Each type has its own model (``events.payloads`` for the session's own facts,
``events.workflow_payloads`` for workflow and evidence facts), with documented fields. Reading is
tolerant: a payload may carry fields its model does not declare (an earlier or later release's
detail) and still load; writing declares everything, which ``undeclared_fields`` checks. A type
missing here is refused on append and on load.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from protoagent.events.payloads import (
    ApprovalDecided,
    ApprovalRequested,
    ApprovalRuleAdded,
    ContextCompacted,
    ContextInjected,
    ModelCompleted,
    ModelDelta,
    ModelFailed,
    ModelRequested,
    ModelRetrying,
    Payload,
    RestoredFile,
    RunEnded,
    SessionCommitted,
    SessionCreated,
    SessionResumed,
    SessionRewound,
    ToolCallRecord,
    ToolEnded,
    ToolStarted,
    TurnEnded,
    TurnStarted,
    UsageRecord,
    UserMessage,
)
from protoagent.events.workflow_payloads import (
    AgentsDiagnostics,
    CheckChangedFiles,
    ChecksDiscovered,
    EvidenceReported,
    McpDiagnostics,
    RegressionProof,
    RepairCandidate,
    RepairEnded,
    RepairStarted,
    RunContract,
    SkillActivated,
    SkillResolved,
    SourceLocalized,
    TaskUpdated,
    VerificationUnavailable,
    WorkerContinuing,
    WorkerEnded,
    WorkerStarted,
    WorkflowContinuing,
    WorkflowPhase,
    WorkflowReturned,
    WorkflowStuck,
    WorkYielded,
)

__all__ = [
    "CATALOG",
    "AgentsDiagnostics",
    "ApprovalDecided",
    "ApprovalRequested",
    "ApprovalRuleAdded",
    "CheckChangedFiles",
    "ChecksDiscovered",
    "ContextCompacted",
    "ContextInjected",
    "EvidenceReported",
    "McpDiagnostics",
    "ModelCompleted",
    "ModelDelta",
    "ModelFailed",
    "ModelRequested",
    "ModelRetrying",
    "Payload",
    "RegressionProof",
    "RepairCandidate",
    "RepairEnded",
    "RepairStarted",
    "RestoredFile",
    "RunContract",
    "RunEnded",
    "SessionCommitted",
    "SessionCreated",
    "SessionResumed",
    "SessionRewound",
    "SkillActivated",
    "SkillResolved",
    "SourceLocalized",
    "TaskUpdated",
    "ToolCallRecord",
    "ToolEnded",
    "ToolStarted",
    "TurnEnded",
    "TurnStarted",
    "UsageRecord",
    "UserMessage",
    "VerificationUnavailable",
    "WorkYielded",
    "WorkerContinuing",
    "WorkerEnded",
    "WorkerStarted",
    "WorkflowContinuing",
    "WorkflowPhase",
    "WorkflowReturned",
    "WorkflowStuck",
    "type_of",
    "undeclared_fields",
    "validate_payload",
]

CATALOG: dict[str, type[Payload]] = {
    "session.created": SessionCreated,
    "user.message": UserMessage,
    "context.injected": ContextInjected,
    "turn.started": TurnStarted,
    "turn.ended": TurnEnded,
    "model.requested": ModelRequested,
    "model.delta": ModelDelta,
    "model.completed": ModelCompleted,
    "model.retrying": ModelRetrying,
    "model.failed": ModelFailed,
    "tool.started": ToolStarted,
    "approval.requested": ApprovalRequested,
    "approval.decided": ApprovalDecided,
    "approval.rule_added": ApprovalRuleAdded,
    "tool.ended": ToolEnded,
    "run.ended": RunEnded,
    "session.resumed": SessionResumed,
    "session.rewound": SessionRewound,
    "session.committed": SessionCommitted,
    "context.compacted": ContextCompacted,
    # Workflow and evidence facts (see spec/task-workflow.txt).
    "run.contract": RunContract,
    "task.updated": TaskUpdated,
    "checks.discovered": ChecksDiscovered,
    "verification.unavailable": VerificationUnavailable,
    "workflow.phase": WorkflowPhase,
    "workflow.work_yielded": WorkYielded,
    "workflow.continuing": WorkflowContinuing,
    "workflow.stuck": WorkflowStuck,
    "workflow.returned": WorkflowReturned,
    "source.localized": SourceLocalized,
    "check.changed_files": CheckChangedFiles,
    "check.regression_proof": RegressionProof,
    "repair.started": RepairStarted,
    "repair.candidate": RepairCandidate,
    "repair.ended": RepairEnded,
    "worker.started": WorkerStarted,
    "worker.continuing": WorkerContinuing,
    "worker.ended": WorkerEnded,
    "evidence.reported": EvidenceReported,
    "mcp.diagnostics": McpDiagnostics,
    "agents.diagnostics": AgentsDiagnostics,
    "skill.activated": SkillActivated,
    "skill.resolved": SkillResolved,
}

_TYPES: dict[type[Payload], str] = {model: name for name, model in CATALOG.items()}


def type_of(model: type[Payload]) -> str:
    """The event type whose payload ``model`` is (``KeyError`` for a model not in the catalog)."""
    return _TYPES[model]


def validate_payload(event_type: str, payload: dict[str, Any]) -> str | None:
    """Return ``None`` if the payload fits its type, else a one-line description of the problem."""
    model = CATALOG.get(event_type)
    if model is None:
        return f"unknown event type {event_type!r}"
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "payload"
        return f"{event_type} payload field {where!r}: {first['msg']}"
    return None


def undeclared_fields(event_type: str, payload: dict[str, Any]) -> list[str]:
    """The payload's fields (dotted, nested models included) that its model does not declare:
    empty for everything this release writes. Loading tolerates them; a test holds writers to it."""
    return _undeclared(CATALOG[event_type].model_validate(payload), "")


def _undeclared(value: object, where: str) -> list[str]:
    if isinstance(value, BaseModel):
        out = [f"{where}{name}" for name in value.model_extra or {}]
        for name in type(value).model_fields:
            out += _undeclared(getattr(value, name), f"{where}{name}.")
        return out
    if isinstance(value, list | tuple):
        return [found for item in value for found in _undeclared(item, where)]
    return []
