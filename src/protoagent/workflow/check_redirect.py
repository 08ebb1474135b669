"""``execute_command`` in a workflow run: a command that exactly matches a selected check runs as
``run_check`` of that check (its frozen command, approval preview and receipt), so running a
check by hand can never bypass the evidence rules; the result says it was redirected.

"Exactly" means the same program (after interpreter and path resolution), the same arguments
and the same working directory; the environment and limits are the check's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from protoagent.checks.run_check import check_plan
from protoagent.checks.types import CheckSpec
from protoagent.errors import ToolRejected
from protoagent.models.types import ToolCall
from protoagent.processes.command import CommandRequest, PreparedCommand, prepare_command
from protoagent.processes.tools import ExecuteCommandInput, ExecuteCommandTool, command_site
from protoagent.tools.base import AnyTool, Prepared, ToolContext, ToolOutput
from protoagent.workflow.workers import file_writes

Phase = Literal["baseline", "verify"]


@dataclass(frozen=True, slots=True)
class CheckRedirect:
    """An ``execute_command`` call that runs as ``run_check(check_id, phase)``."""

    check_id: str
    phase: Phase


class WorkflowExecuteCommand(ExecuteCommandTool):
    """``execute_command`` that redirects a selected check's exact command to ``run_check``."""

    description = ExecuteCommandTool.description
    """A selected check's exact command runs as ``run_check``; the model need not be told."""

    def prepare(self, args: ExecuteCommandInput, ctx: ToolContext) -> Prepared:
        prepared = super().prepare(args, ctx)
        runner = ctx.services.workers
        command = getattr(prepared.state, "command", None)
        if runner is None or not isinstance(command, PreparedCommand):
            return prepared
        check_id = matching_check(command, _selected(ctx), ctx)
        if check_id is None:
            return prepared
        phase: Phase = "verify" if file_writes(runner.session.log.events) else "baseline"
        preview = (
            f"this command is selected check {check_id!r}: it runs as "
            f"run_check(check_id={check_id!r}, phase={phase!r}), which asks for approval of the check's own command"
        )
        return Prepared(preview, "none", state=CheckRedirect(check_id, phase))

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        redirect = prepared.state
        runner = ctx.services.workers
        if not isinstance(redirect, CheckRedirect) or runner is None:
            return await super().execute(prepared, ctx)
        arguments = {"check_id": redirect.check_id, "phase": redirect.phase}
        call = ToolCall(f"{ctx.call_id}_check", "run_check", arguments)
        # The Verifier runs checks; the caller sees the receipt in this call's result.
        result = await runner.session.pipeline.run(call, agent="verifier", allowed=("run_check",))
        head = (
            f"redirected to run_check(check_id={redirect.check_id!r}, phase={redirect.phase!r}): the command "
            "exactly matches a selected check, so the check's frozen command ran and left a check receipt"
        )
        data = {"redirected_to": "run_check", "run_check_call_id": call.id, "run_check_status": result.status}
        status: Literal["ok", "error"] = "ok" if result.status == "ok" else "error"
        return ToolOutput(f"{head}\n{result.output}", status=status, data={**data, **arguments})


def matching_check(command: PreparedCommand, check_ids: Sequence[str], ctx: ToolContext) -> str | None:
    """The first selected check whose prepared command runs ``command``'s program, arguments and cwd."""
    plan = check_plan(ctx)
    for check_id in check_ids:
        check = plan.get(check_id)
        if check is None or check.runner_unavailable is not None:
            continue
        frozen = _prepared(check, ctx)
        if frozen is not None and frozen.argv == command.argv and frozen.cwd == command.cwd:
            return check_id
    return None


def _prepared(check: CheckSpec, ctx: ToolContext) -> PreparedCommand | None:
    try:
        return prepare_command(CommandRequest(check.argv, check.cwd, check.env), command_site(ctx))
    except ToolRejected:
        return None


def _selected(ctx: ToolContext) -> tuple[str, ...]:
    board = ctx.services.task
    return board.record.selected_check_ids if board is not None else ()


def with_check_redirect(tools: Iterable[AnyTool]) -> list[AnyTool]:
    """The built-in tools with ``execute_command`` replaced by the redirecting one."""
    return [WorkflowExecuteCommand() if tool.name == ExecuteCommandTool.name else tool for tool in tools]
