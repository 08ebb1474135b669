"""The one way a tool call runs: materialize → pre-execute → guards → approval → execute →
post-execute → finalize → immutable result event."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from protoagent.errors import ToolRejected
from protoagent.events.log import SessionLog
from protoagent.models.types import ToolCall
from protoagent.tools.approvals import EFFECTS_NEEDING_APPROVAL, ApprovalRequest, ApprovalService
from protoagent.tools.base import AnyTool, Prepared, Profile, ToolContext, ToolOutput
from protoagent.tools.registry import ToolRegistry

Status = Literal["ok", "error", "denied", "rejected"]


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
    services: Mapping[str, Any] = field(default_factory=dict)
    profile: Profile = "standard"


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
        profile: Profile | None = None,
    ) -> ToolResult:
        """Run one call to its result event. Never raises for anything the model did."""
        c = _Call(call, agent, turn, step)
        self._emit(c, "tool.started", {"call_id": call.id, "tool": call.name, "arguments": call.arguments})
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
            call.id, tool.name, prepared.effect, prepared.preview, prepared.paths, prepared.inside_workspace, agent
        )
        grant = None
        if prepared.effect in EFFECTS_NEEDING_APPROVAL:
            self._emit(
                c,
                "approval.requested",
                {
                    "call_id": call.id,
                    "tool": tool.name,
                    "effect": prepared.effect,
                    "preview": prepared.preview,
                    "paths": list(prepared.paths),
                },
            )
            decision = await self.approvals.decide(request)
            self._emit(
                c,
                "approval.decided",
                {
                    "call_id": call.id,
                    "tool": tool.name,
                    "decision": "allow" if decision.allow else "deny",
                    "source": decision.source,
                    "reason": decision.reason,
                },
            )
            if not decision.allow:
                return self._finish(c, "denied", _denied_text(decision.reason), {"decided_by": decision.source})
            grant = decision.grant
        return await self._execute(c, tool, prepared, ctx, request, grant)

    async def _execute(
        self, c: _Call, tool: AnyTool, prepared: Prepared, ctx: ToolContext, request: ApprovalRequest, grant: Any
    ) -> ToolResult:
        if grant is not None:
            grant.consume(request)
        try:
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
                {"field": ".".join(str(p) for p in e["loc"]) or "(arguments)", "problem": e["msg"]}
                for e in exc.errors()
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

    def _context(self, call: ToolCall, agent: str, profile: Profile | None) -> ToolContext:
        env = self.env
        return ToolContext(
            self.log.session_id, call.id, env.root, agent, profile or env.profile, env.artifacts_dir, env.services
        )

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
