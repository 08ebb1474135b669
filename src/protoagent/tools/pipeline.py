"""The one way a tool call runs: materialize → pre-execute → guards → approval → execute →
post-execute → finalize → immutable result event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from protoagent.errors import ToolRejected
from protoagent.events.log import SessionLog
from protoagent.excerpts import excerpt
from protoagent.models.profile import PromptProfile
from protoagent.models.tool_arguments import (
    PROBLEM_KEY,
    UNPARSED_KEY,
    bounded_arguments,
    is_rejected,
    rejected_arguments,
)
from protoagent.models.types import ToolCall
from protoagent.tools.approvals import EFFECTS_NEEDING_APPROVAL, ApprovalRequest, ApprovalService, Decision
from protoagent.tools.base import AnyTool, Prepared, ToolContext, ToolOutput
from protoagent.tools.cancellation import partial_output
from protoagent.tools.registry import ToolRegistry
from protoagent.tools.services import RunServices

Status = Literal["ok", "error", "denied", "rejected"]
_MAX_REPORTED_ERRORS = 10


@dataclass(frozen=True, slots=True)
class GuardInput:
    """What a guard sees: the validated call and its prepared effect."""

    tool: AnyTool
    args: BaseModel
    prepared: Prepared
    ctx: ToolContext


Guard = Callable[[GuardInput], "str | None"]
"""A guard returns ``None`` to pass or a reason to deny. It cannot allow what was denied."""
PreExecuteHook = Callable[[AnyTool, BaseModel, ToolContext], None]
"""Runs after validation, before prepare; raises ``ToolRejected`` to refuse."""
PostExecuteHook = Callable[[AnyTool, Prepared, ToolOutput, ToolContext], ToolOutput]
"""Runs after a successful execute; may add metadata (artifacts) to the output."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The finalized outcome of one call, as recorded in its ``tool.ended`` event."""

    call_id: str
    tool: str
    status: Status
    output: str
    data: dict[str, Any] = field(default_factory=dict)
    artifact: str | None = None


@dataclass(frozen=True, slots=True)
class ToolEnvironment:
    """Per-session facts every call's ``ToolContext`` is built from."""

    root: Path
    artifacts_dir: Path | None = None
    services: RunServices = field(default_factory=RunServices)
    profile: PromptProfile = "standard"


@dataclass(slots=True)
class _Call:
    call: ToolCall
    agent: str
    turn: int | None
    step: int | None


class ToolPipeline:
    """Runs tool calls for one session and records each step as events."""

    def __init__(
        self,
        registry: ToolRegistry,
        approvals: ApprovalService,
        log: SessionLog,
        env: ToolEnvironment,
        *,
        guards: Sequence[Guard] = (),
        pre_execute: Sequence[PreExecuteHook] = (),
        post_execute: Sequence[PostExecuteHook] = (),
    ) -> None:
        self.registry = registry
        self.approvals = approvals
        self.log = log
        self.env = env
        self.guards = list(guards)
        self.pre_execute = list(pre_execute)
        self.post_execute = list(post_execute)

    async def run(
        self,
        call: ToolCall,
        *,
        agent: str = "main",
        allowed: Sequence[str] | None = None,
        turn: int | None = None,
        step: int | None = None,
        profile: PromptProfile | None = None,
    ) -> ToolResult:
        """Run one call to its result event. Never raises for anything the model did."""
        call = _bounded(call)
        c = _Call(call, agent, turn, step)
        known = self.registry.get(call.name)
        presentation = known.metadata.presentation if known is not None else "generic"
        self._emit(
            c,
            "tool.started",
            {"call_id": call.id, "tool": call.name, "arguments": call.arguments, "presentation": presentation},
        )
        try:
            return await self._run(c, allowed, profile)
        except asyncio.CancelledError as cancelled:
            self._cancelled(c, cancelled)
            raise

    async def _run(self, c: _Call, allowed: Sequence[str] | None, profile: PromptProfile | None) -> ToolResult:
        call, agent = c.call, c.agent
        try:
            tool, args = self._materialize(call, allowed)
            ctx = self._context(call, agent, profile)
            for hook in self.pre_execute:
                hook(tool, args, ctx)
            prepared = tool.prepare(args, ctx)
        except ToolRejected as rejection:
            return self._finish(
                c, "rejected", _rejection_text(rejection), {"kind": rejection.kind, **rejection.details}
            )
        denial = self._guard(tool, args, prepared, ctx)
        if denial is not None:
            return self._finish(c, "denied", _denied_text(denial), {"decided_by": "guard"})
        request = ApprovalRequest(
            call.id,
            tool.name,
            prepared.effect,
            prepared.preview,
            prepared.paths,
            prepared.inside_workspace,
            agent,
            trusted_by=prepared.trusted_by,
            external=prepared.external,
            action=prepared.action,
        )
        grant = None
        if prepared.effect in EFFECTS_NEEDING_APPROVAL:
            decision = await self._approve(c, request)
            if not decision.allow:
                return self._finish(c, "denied", _denied_text(decision.reason), {"decided_by": decision.source})
            grant = decision.grant
        return await self._execute(c, tool, prepared, ctx, request, grant)

    async def approve(
        self, request: ApprovalRequest, *, turn: int | None = None, step: int | None = None
    ) -> str | None:
        """Ask approval for an effect the harness runs itself rather than through one tool call
        (guided repair's scratch checks, the regression proof): the same events, session rules and
        answerer as a call's approval, recorded as the request's agent. ``None`` when it is allowed
        (its grant is used up here), else the reason it was not."""
        call = _Call(ToolCall(request.call_id, request.tool, {}), request.agent, turn, step)
        decision = await self._approve(call, request)
        if decision.grant is not None:
            decision.grant.consume(request)
        return None if decision.allow else decision.reason

    async def _approve(self, c: _Call, request: ApprovalRequest) -> Decision:
        """Ask the approval service; the request, the decision and any session rule are events."""
        ids = {"call_id": request.call_id, "tool": request.tool}
        self._emit(
            c,
            "approval.requested",
            {**ids, "effect": request.effect, "preview": request.preview, "paths": list(request.paths)},
        )
        if self.approvals.answerer is not None:
            self.log.flush()  # a person may be asked: the pending request is on disk while they decide
        decision = await self.approvals.decide(request)
        decided = {**ids, "decision": "allow" if decision.allow else "deny", "source": decision.source}
        rule = {"rule": decision.rule.to_json()} if decision.rule is not None else {}
        self._emit(c, "approval.decided", {**decided, "reason": decision.reason, **rule})
        if decision.rule is not None and decision.source == "answerer":
            self._emit(c, "approval.rule_added", {"call_id": request.call_id, **rule})
        return decision

    async def _execute(
        self, c: _Call, tool: AnyTool, prepared: Prepared, ctx: ToolContext, request: ApprovalRequest, grant: Any
    ) -> ToolResult:
        if grant is not None:
            grant.consume(request)
        try:
            with self.log.unheld():  # every event before the effect is on disk before it starts
                output = await tool.execute(prepared, ctx)
            for post in self.post_execute:
                output = post(tool, prepared, output, ctx)
        except ToolRejected as rejection:
            return self._finish(
                c, "rejected", _rejection_text(rejection), {"kind": rejection.kind, **rejection.details}
            )
        except Exception as exc:
            return self._finish(c, "error", f"error: {tool.name} failed: {type(exc).__name__}: {exc}", {})
        text = output.text if output.status == "ok" else f"error: {output.text}"
        return self._finish(c, output.status, text, output.data, output.artifact)

    def _materialize(self, call: ToolCall, allowed: Sequence[str] | None) -> tuple[AnyTool, BaseModel]:
        if is_rejected(call.arguments):
            raise ToolRejected(
                f"the arguments of {call.name!r} could not be used: {call.arguments.get(PROBLEM_KEY)}. "
                "Send one JSON object matching the tool's schema.",
                kind="invalid_arguments",
                details={"excerpt": call.arguments.get(UNPARSED_KEY)},
            )
        tool = self.registry.get(call.name)
        visible = list(allowed) if allowed is not None else self.registry.names()
        if tool is None or call.name not in visible:
            raise ToolRejected(
                f"unknown tool {call.name!r}; call one of: {', '.join(visible)}",
                kind="unknown_tool",
                details={"available_tools": visible},
            )
        try:
            return tool, tool.input_model.model_validate(call.arguments)
        except ValidationError as exc:
            problems = [
                {"field": excerpt(".".join(str(p) for p in e["loc"]), 100) or "(arguments)", "problem": e["msg"]}
                for e in exc.errors()[:_MAX_REPORTED_ERRORS]
            ]
            summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
            raise ToolRejected(
                f"invalid arguments for {call.name!r}: {summary}. Fix the arguments and call it again.",
                kind="invalid_arguments",
                details={"errors": problems},
            ) from None

    def _guard(self, tool: AnyTool, args: BaseModel, prepared: Prepared, ctx: ToolContext) -> str | None:
        """Guards are monotonic: the first denial stands, later guards cannot reopen it."""
        denial: str | None = None
        view = GuardInput(tool, args, prepared, ctx)
        for guard in self.guards:
            verdict = guard(view)
            if denial is None and verdict is not None:
                denial = verdict
        return denial

    def _context(self, call: ToolCall, agent: str, profile: PromptProfile | None) -> ToolContext:
        env = self.env
        return ToolContext(
            self.log.session_id, call.id, env.root, agent, profile or env.profile, env.artifacts_dir, env.services
        )

    def _cancelled(self, c: _Call, cancelled: asyncio.CancelledError) -> None:
        """A call the run's cancellation stopped still ends in the log, with what it produced so far."""
        partial = partial_output(cancelled)
        text = f"cancelled: the run was stopped while {c.call.name} ran"
        if partial is not None and partial.text:
            text += f"; output so far:\n{partial.text}"
        data = {**(partial.data if partial is not None else {}), "cancelled": True}
        self._finish(c, "error", text, data, partial.artifact if partial is not None else None)

    def _finish(
        self, c: _Call, status: Status, output: str, data: dict[str, Any], artifact: str | None = None
    ) -> ToolResult:
        result = ToolResult(c.call.id, c.call.name, status, output, data, artifact)
        self._emit(
            c,
            "tool.ended",
            {
                "call_id": result.call_id,
                "tool": result.tool,
                "status": status,
                "output": output,
                "data": _jsonable(data),
                "artifact": artifact,
            },
        )
        return result

    def _emit(self, c: _Call, type_: str, payload: dict[str, Any]) -> None:
        self.log.append(type_, payload, turn=c.turn, step=c.step, agent=c.agent)


def _bounded(call: ToolCall) -> ToolCall:
    """Oversized or too-deep arguments become a bounded marker before any event records them."""
    if isinstance(call.arguments, dict):
        arguments = bounded_arguments(call.arguments)
    else:
        arguments = rejected_arguments("the arguments must be a JSON object", repr(call.arguments)[:1000])
    name = excerpt(str(call.name), 100)
    if arguments is call.arguments and name == call.name:
        return call
    return ToolCall(call.id, name, arguments)


def _rejection_text(rejection: ToolRejected) -> str:
    text = f"rejected ({rejection.kind}): {rejection.message}"
    if rejection.details:
        text += "\ndetails: " + json.dumps(rejection.details, default=str, sort_keys=True)
    return text + "\nNothing was changed."


def _denied_text(reason: str) -> str:
    return f"denied: {reason}. The action did not run."


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return result
