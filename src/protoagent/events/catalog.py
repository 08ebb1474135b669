"""Every event type the log may hold, with the payload fields it requires.

Payloads allow extra fields so a part can add detail without a format change; required
fields are what readers rely on. A type missing here is refused on append and on load.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError


class Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class SessionCreated(Payload):
    preset: str
    model: str
    root: str
    approval_policy: str
    parent_session_id: str | None = None


class UserMessage(Payload):
    text: str


class ContextInjected(Payload):
    text: str
    source: str


class TurnStarted(Payload):
    pass


class TurnEnded(Payload):
    status: Literal["completed", "failed", "cancelled", "limit"]
    reason: str = ""


class ModelRequested(Payload):
    provider: str
    model: str
    attempt: int = 1
    message_count: int = 0
    tool_names: list[str] = []


class ModelDelta(Payload):
    text: str


class ToolCallRecord(Payload):
    id: str
    name: str
    arguments: dict[str, Any]


class UsageRecord(Payload):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0


class ModelCompleted(Payload):
    text: str
    tool_calls: list[ToolCallRecord] = []
    usage: UsageRecord = UsageRecord()
    stop_reason: str = "stop"


class ModelRetrying(Payload):
    attempt: int
    delay_s: float
    error: str


class ModelFailed(Payload):
    error: str
    provider: str = ""


class ToolStarted(Payload):
    call_id: str
    tool: str
    arguments: dict[str, Any]


class ApprovalRequested(Payload):
    call_id: str
    tool: str
    effect: str
    preview: str
    paths: list[str] = []


class ApprovalDecided(Payload):
    call_id: str
    tool: str
    decision: Literal["allow", "deny"]
    source: str
    """Who decided: ``policy``, ``answerer``, ``guard`` or ``default``."""
    reason: str = ""


class ApprovalRuleAdded(Payload):
    call_id: str
    """The call whose answer added the rule."""
    rule: dict[str, Any]
    """``tool``, ``effect``, ``paths`` and ``command`` (see ``tools.approvals.SessionRule``)."""


class ToolEnded(Payload):
    call_id: str
    tool: str
    status: Literal["ok", "error", "denied", "rejected"]
    output: str
    """The model-visible result text."""
    data: dict[str, Any] = {}
    artifact: str | None = None


class RunEnded(Payload):
    status: Literal["completed", "failed", "incomplete", "cancelled"]
    summary: str = ""


class ContextCompacted(Payload):
    """A summary that stands, in one agent's model history, for a range of its earlier events."""

    first_seq: int
    """First event (``seq``) of the replaced range."""
    last_seq: int
    """Last event (``seq``) of the replaced range, inclusive."""
    turns: list[int] = []
    """The agent's turns (``turn`` numbers) the range covers, oldest first."""
    summary: str
    """The text the model sees instead of the replaced messages."""
    method: Literal["model", "deterministic"]
    """Written by the session's model, or a digest built from the log without a model call."""
    trigger: Literal["automatic", "user"] = "automatic"
    """``automatic``: the request would not fit; ``user``: ``/compact`` or its API."""
    focus: str = ""
    """What the person asked the summary to keep in view (``/compact FOCUS``)."""
    replaced_messages: int = 0
    replaced_tokens: int = 0
    """Estimated tokens of the replaced messages."""
    summary_tokens: int = 0
    fallback: str = ""
    """Why a model summary was not used when one was tried (its one-line failure)."""
    model_call: bool = False
    """Whether a model call was made for the summary (one of the run's model calls)."""


class RestoredFile(BaseModel):
    """One file a code rewind put back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    revision_before: str | None
    """What the file held before the rewind (``None``: absent)."""
    revision_after: str | None
    """What the rewind left (``None``: removed, the session had created it)."""
    text: str | None
    """The restored text (``None`` when removed)."""


class SessionRewound(Payload):
    """A rewind to a checkpoint: files restored from the log, later turns hidden from the model."""

    to_turn: int
    """The checkpoint: the state after user turn N (0: before the first)."""
    scope: Literal["code", "conversation", "both"]
    hidden_turns: list[int] = []
    """User turns the model no longer sees (a conversation rewind); the log keeps them."""
    hidden_ranges: list[tuple[int, int]] = []
    """The event ranges (first and last ``seq``, inclusive) of ``hidden_turns``."""
    restored: list[RestoredFile] = []
    """Files a code rewind put back, in path order."""
    commands_since: list[str] = []
    """Commands run after the checkpoint: their side effects are not tracked by checkpoints."""
    command_changed_files: list[str] = []
    """Files the checks run after the checkpoint were seen to change (revision capture)."""


class SessionCommitted(Payload):
    """``protoagent commit``: the session's files committed, after approval."""

    commit: str
    """The new commit's id."""
    paths: list[str]
    """Exactly the files committed (relative to the work tree's top)."""
    message: str
    verified_by: list[str] = []
    """The checks the message names as verifying the change."""


class Generic(Payload):
    """Workflow facts whose fields are defined by the part that records them."""


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
    "session.resumed": Generic,
    "session.rewound": SessionRewound,
    "session.committed": SessionCommitted,
    "context.compacted": ContextCompacted,
    # Workflow and evidence facts (see spec/task-workflow.txt).
    "run.contract": Generic,
    "task.updated": Generic,
    "checks.discovered": Generic,
    "verification.unavailable": Generic,
    "workflow.phase": Generic,
    "workflow.work_yielded": Generic,
    "workflow.continuing": Generic,
    "workflow.stuck": Generic,
    "workflow.returned": Generic,
    "source.localized": Generic,
    "check.changed_files": Generic,
    "repair.started": Generic,
    "repair.candidate": Generic,
    "repair.ended": Generic,
    "worker.started": Generic,
    "worker.continuing": Generic,
    "worker.ended": Generic,
    "evidence.reported": Generic,
    "mcp.diagnostics": Generic,
    "agents.diagnostics": Generic,
    "skill.activated": Generic,
    "skill.resolved": Generic,
}


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
