"""A person's ``!command``: one shell call through the same pipeline, approvals and formatter."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.errors import ProviderError, ToolRejected
from protoagent.models.types import ModelEvent, ModelRequest, TextDelta, ToolCall
from protoagent.processes.tools import user_shell_call
from protoagent.workflow.evidence import Evidence

if TYPE_CHECKING:
    from pathlib import Path

    from protoagent.workflow.run import RunOptions, RunReport, RunStatus

USER_SHELL = Preset("user-shell", "A person's command line, run without a model.", ("shell",), max_steps=1)


async def run_user_command(command: str, root: Path, options: RunOptions) -> RunReport:
    """Run ``!command`` as the person's own shell call; no model is asked anything."""
    from protoagent.workflow.run import RunReport, run_sandbox

    try:
        name, arguments = user_shell_call(command)
    except ToolRejected as rejection:
        from protoagent.errors import ConfigError

        raise ConfigError(f"{rejection.message}; write the command after '!', e.g. '!ls'") from None
    spec = SessionSpec(
        repo=root,
        model="none",
        store=options.store,
        preset=USER_SHELL,
        approval=options.approval,
        answerer=options.answerer,
        title=command[:120],
        on_event=options.on_event,
        artifacts_root=options.artifacts_root,
        provider=_NoModel(),
        services={"sandbox": run_sandbox(options)},
    )
    session = AgentSession.create(spec)
    try:
        result = await session.pipeline.run(ToolCall("user_1", name, arguments), agent="user", allowed=("shell",))
    except (asyncio.CancelledError, KeyboardInterrupt):
        session.log.append("run.ended", {"status": "cancelled", "summary": "the run was interrupted"})
        raise
    finally:
        session.close()
    status: RunStatus = "completed" if result.status == "ok" else "incomplete"
    session.log.append("run.ended", {"status": status, "summary": result.output[:2000]})
    evidence = Evidence(False, False, False, (), (), "no_checks")
    return RunReport(session.session_id, status, "command", evidence, result.output)


class _NoModel:
    """A ``!command`` session has no model; anything that asks one fails loudly."""

    name = "none"
    model = "none"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise ProviderError("a !command session has no model to ask", provider=self.name)
        yield TextDelta("")  # pragma: no cover - unreachable; makes this an async generator
