"""Payload models of workflow and evidence facts (see spec/task-workflow.txt): the run's contract,
the task record, checks, phases, workers, guided repair, the evidence report, diagnostics and
skills. Nested records that a higher layer owns (the task record, the check plan, source spans)
are kept as JSON objects here; their owners read them (``workflow.task``, ``checks.plan`` ...).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from protoagent.events.payloads import Payload


class RunContract(Payload):
    """How a run treats its request (``workflow.contract.RunContract``)."""

    surface: str
    """``editing``, ``question``, ``conversation``, ``verification`` ..."""
    source: str = ""
    """Who chose the surface: ``rules``, ``model``, ``forced`` ..."""
    reason: str = ""
    read_only: bool = False
    defer_verification: bool = False


class TaskUpdated(Payload):
    """The task record changed; ``record`` is the whole record after the change."""

    reason: str
    record: dict[str, Any]
    """``workflow.task.TaskRecord.to_json()``."""


class ChecksDiscovered(Payload):
    """The checks a run may run (``checks.plan.CheckPlan.to_json()``)."""

    checks: list[dict[str, Any]] = Field(default_factory=list)
    bootstrap_checks: list[str] = Field(default_factory=list)
    """Ids of runners for tests Coder must create."""
    config_path: str | None = None
    dependency_files: list[str] = Field(default_factory=list)
    dependency_files_truncated: bool = False
    notes: list[str] = Field(default_factory=list)


class VerificationUnavailable(Payload):
    """The final checks could not run (a runner or module is missing)."""

    check_ids: list[str] = Field(default_factory=list)
    note: str = ""


class WorkflowPhase(Payload):
    """The workflow graph enters a phase (``baseline``, ``edit``, ``verify``, ``repair`` ...)."""

    phase: str
    attempt: int | None = None
    """Which repair attempt (``repair`` only)."""


class WorkYielded(Payload):
    """The lead's turn ended with work left unfinished."""

    reason: str = ""
    continuations: int = 0
    """Continuations granted so far."""


class WorkflowContinuing(Payload):
    """The workflow gives the lead another turn (editing) or another window (a question)."""

    continuation: int | None = None
    """Which continuation of yielded work (editing)."""
    surface: str | None = None
    """``question`` for a question's next window."""
    window: int | None = None
    new_evidence: int | None = None
    """Tool results of the last window that showed something new (a question)."""


class WorkflowStuck(Payload):
    """The progress monitor found the lead stuck; the phase ends."""

    reason: str


class WorkflowReturned(Payload):
    """Control returned to the graph (verified, a failing final check, a denial)."""

    reason: str
    check_id: str | None = None
    """The failing final check (``final_check_failed``)."""
    detail: str = ""


class SourceLocalized(Payload):
    """Source spans found for the objective before the lead's first request."""

    spans: list[dict[str, Any]] = Field(default_factory=list)
    """``workflow.packets.SourceSpan.to_json()`` each."""


class CheckChangedFiles(Payload):
    """A check run changed tracked files (never an edit of the agent)."""

    check_id: str | None = None
    phase: str | None = None
    files: list[str] = Field(default_factory=list)


class RepairStarted(Payload):
    """Guided repair starts on a localized failure."""

    failed_tests: list[str] = Field(default_factory=list)
    assertion: str = ""
    functions: list[dict[str, Any]] = Field(default_factory=list)
    """``path``, ``name``, ``start`` and the ranked ``lines`` of each candidate function."""
    check_ids: list[str] = Field(default_factory=list)


class RepairCandidate(Payload):
    """One candidate edit guided repair tried in its scratch copy."""

    index: int
    path: str
    line: int
    old: str
    new: str
    also: list[dict[str, Any]] = Field(default_factory=list)
    """A second edit of the same candidate (``path``, ``line``, ``old``, ``new``)."""
    passed: bool
    failed_check: str | None = None


class RepairEnded(Payload):
    """How guided repair ended."""

    status: str
    reason: str = ""
    tried: int = 0
    proposed: int = 0
    passed: dict[str, Any] | None = None
    """The applied edit (``path``, ``line``, ``old``, ``new``), if one passed."""
    also: list[dict[str, Any]] = Field(default_factory=list)


class RegressionProof(Payload):
    """A selected check run once more on a scratch copy of the workspace with the run's source
    changes undone and its test changes kept (``workflow.regression_proof``)."""

    check_id: str
    outcome: str
    """``proved`` (some new test fails there), ``not_proved``, ``skipped`` or ``error``."""
    proven_tests: list[str] = Field(default_factory=list)
    """Tests in files the run changed that fail on the unfixed source and passed in the final verify."""
    failed_tests: list[str] = Field(default_factory=list)
    """Every test the runner named as failed on the unfixed source."""
    restored: list[str] = Field(default_factory=list)
    """The source files (not test code) put back as they were before the run."""
    note: str = ""


class WorkerStarted(Payload):
    """A worker's assignment opens."""

    role: str
    task: str = ""


class WorkerContinuing(Payload):
    """A worker that made progress gets another work window."""

    role: str
    window: int
    fresh_writes: int = 0


class WorkerEnded(Payload):
    """A worker's assignment ends."""

    role: str
    status: str
    reason: str = ""
    windows: int | None = None
    """Work windows used (Coder)."""
    changed_files: list[str] = Field(default_factory=list)
    """Files the worker changed (Coder)."""


class EvidenceReported(Payload):
    """The run's evidence report (its checks are the ``run_check`` results in the log)."""

    applied: bool = False
    verified: bool = False
    criteria_supported: bool = False
    criteria: list[dict[str, Any]] = Field(default_factory=list)
    """``text``, ``support`` and ``evidence`` of each acceptance criterion."""
    verification: str = "no_checks"
    checks: list[dict[str, Any]] | None = None
    """The run's own check results (``CheckResult.to_json()``); ``None`` in logs recorded before
    evidence named its checks, whose readers take every check result in the log."""
    changed_files: list[str] = Field(default_factory=list)
    external_effects: list[dict[str, Any]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Diagnostics(Payload):
    """One-line problems a run went on without (``mcp.diagnostics``, ``agents.diagnostics``)."""

    diagnostics: list[str] = Field(default_factory=list)


class McpDiagnostics(Diagnostics):
    """MCP servers or tools a run could not offer."""


class AgentsDiagnostics(Diagnostics):
    """Repository agent fields the person has not trusted; the run goes on without them."""


class SkillActivated(Payload):
    """A skill's instructions enter an agent's context (as a tool call and its result)."""

    call_id: str
    request: str = ""
    activation: dict[str, Any]
    """``skills.activation.Activation.to_json()``."""


class SkillResolved(Payload):
    """A skill decision: the resolver's choice, a skip, or a refused or unknown name."""

    skill: str | None = None
    source: str = ""
    """``resolver``, ``explicit`` or ``agent``."""
    reason: str = ""
    confidence: float | None = None
    refused: str | None = None
    """The skill name that was refused."""
    skipped: bool = False
    """The resolver call was skipped (no eligible skill was plausible)."""
