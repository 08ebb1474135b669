"""Payload models of the session's own facts: the session, its turns, model calls, tool calls,
approvals, compactions, rewinds and commits. Workflow facts are in ``workflow_payloads``.

Every model reads any payload an earlier release wrote: fields added later have defaults, and
a field a reader does not know is kept (``extra="allow"``), so a log loads across releases.
What this release writes declares every field (``catalog.undeclared_fields`` is empty for it).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Payload(BaseModel):
    """The base of every event's payload: frozen, and tolerant of fields it does not declare."""

    model_config = ConfigDict(frozen=True, extra="allow")


class SessionCreated(Payload):
    """The first event of every session: what it runs with."""

    preset: str
    """The lead's role preset (``architect``, ``ask`` ...)."""
    model: str
    """The lead's model spec (``local``, ``scripted:PATH``, ``openai:MODEL`` ...)."""
    root: str
    """The primary workspace root."""
    approval_policy: str
    """``ask``, ``auto`` or ``read-only``."""
    parent_session_id: str | None = None
    """The session this one was forked from."""
    mode: str = "coding"
    """The application mode: ``coding`` or ``work``."""
    lead: str | None = None
    """The lead agent's name."""
    roots: list[str] = []
    """Every workspace root, the primary first (only when there are extra roots)."""
    title: str = ""
    """The session's title (its first objective)."""
    tools: list[str] = []
    """The tools the lead's role offers."""


class SessionResumed(Payload):
    """A later run of an existing session starts (its ``session.created`` stays the first event)."""

    preset: str = ""
    model: str | None = None
    title: str = ""


class UserMessage(Payload):
    """What the person asked; it opens a turn of the agent it is addressed to."""

    text: str


class ContextInjected(Payload):
    """Text the harness puts into an agent's conversation (assignments, packets, feedback)."""

    text: str
    source: str
    """Who put it there: ``workflow``, ``action-format`` ..."""


class TurnStarted(Payload):
    """An agent's turn begins (the envelope's ``turn`` and ``agent`` say whose)."""


class TurnEnded(Payload):
    """An agent's turn ends."""

    status: Literal["completed", "failed", "cancelled", "limit"]
    reason: str = ""
    """Why it ended, when not plainly (``report_recorded``, a yield reason ...)."""


class ModelRequested(Payload):
    """One model request is sent (a retry is a new request with a higher ``attempt``)."""

    provider: str
    model: str
    attempt: int = 1
    message_count: int = 0
    """Messages in the request."""
    tool_names: list[str] = []
    """The tools the request offers."""


class ModelDelta(Payload):
    """A piece of the model's text as it streams."""

    text: str


class ToolCallRecord(Payload):
    """One tool call of a model reply."""

    id: str
    name: str
    arguments: dict[str, Any]


class UsageRecord(Payload):
    """Tokens of one model call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0


class ModelCompleted(Payload):
    """The model's whole reply: its text and tool calls."""

    text: str
    tool_calls: list[ToolCallRecord] = []
    usage: UsageRecord = UsageRecord()
    stop_reason: str = "stop"


class ModelRetrying(Payload):
    """A transient provider failure; the request is sent again after ``delay_s``."""

    attempt: int
    delay_s: float
    error: str
    status: int | None = None
    """The provider's HTTP status, if any."""


class ModelFailed(Payload):
    """A model call failed for good (a provider error or a run limit)."""

    error: str
    provider: str = ""
    status: int | None = None
    """The provider's HTTP status, if any."""
    transient: bool = False
    """Whether the provider error was transient (its retries ran out)."""
    limit: str | None = None
    """The run limit that stopped the call, when it was a limit."""


class ToolStarted(Payload):
    """A tool call begins (before any approval)."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    presentation: str = "generic"
    """How interfaces show the call (the tool's metadata)."""


class ApprovalRequested(Payload):
    """An effect asks for approval."""

    call_id: str
    tool: str
    effect: str
    preview: str
    paths: list[str] = []


class ApprovalDecided(Payload):
    """The answer to an ``approval.requested``."""

    call_id: str
    tool: str
    decision: Literal["allow", "deny"]
    source: str
    """Who decided: ``policy``, ``answerer``, ``guard`` or ``default``."""
    reason: str = ""
    rule: dict[str, Any] | None = None
    """The session rule the answer added (as in ``approval.rule_added``), if any."""


class ApprovalRuleAdded(Payload):
    """A person's answer added a rule that holds for the rest of the session."""

    call_id: str
    """The call whose answer added the rule."""
    rule: dict[str, Any]
    """``tool``, ``effect``, ``paths`` and ``command`` (see ``tools.approvals.SessionRule``)."""


class ToolEnded(Payload):
    """A tool call's result: what the model sees and the tool's structured data."""

    call_id: str
    tool: str
    status: Literal["ok", "error", "denied", "rejected"]
    output: str
    """The model-visible result text."""
    data: dict[str, Any] = {}
    """The tool's structured result (its fields are the tool's own: ``path``, ``check_id`` ...)."""
    artifact: str | None = None
    """Where a long output was stored in full."""


class RunEnded(Payload):
    """A run's last event."""

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
    usage: UsageRecord | None = None
    """The summary call's tokens, when the model wrote the summary."""


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
