"""A person's ``!command``: one shell call through the same pipeline, approvals and formatter."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.errors import ConfigError, ProviderError, ToolRejected
from protoagent.models.types import ModelEvent, ModelRequest, TextDelta, ToolCall
from protoagent.processes.tools import user_shell_call
from protoagent.tools.services import RunServices
from protoagent.workflow.evidence import Evidence
from protoagent.workflow.run_options import RunOptions, RunReport, RunStatus, run_sandbox

if TYPE_CHECKING:
    from pathlib import Path

    from protoagent.workflow.team import RunTeam

USER_SHELL = Preset("user-shell", "A person's command line, run without a model.", ("shell",), max_steps=1)


async def run_user_command(command: str, team: RunTeam, extra: tuple[Path, ...], options: RunOptions) -> RunReport:
    """Run ``!command`` as the person's own shell call in the session's own mode, workspace and
    lead (a new session, or the resumed one); no model is asked anything."""
    try:
        name, arguments = user_shell_call(command)
    except ToolRejected as rejection:
        raise ConfigError(f"{rejection.message}; write the command after '!', e.g. '!ls'") from None
    spec = SessionSpec(
        repo=team.root,
        model="none",
        store=options.store,
        preset=USER_SHELL,
        approval=options.approval,
        answerer=options.answerer,
        title=command[:120],
        on_event=options.on_event,
        artifacts_root=options.artifacts_root,
        provider=_NoModel(),
        services=RunServices(sandbox=run_sandbox(options)),
        mode=team.mode,
        lead=team.lead.name,
        resume_id=options.resume,
        session_id=options.session_id,
        extra_roots=extra,
    )
    session = AgentSession.create(spec)
    try:
        result = await session.pipeline.run(ToolCall("user_1", name, arguments), agent="user", allowed=("shell",))
        status: RunStatus = "completed" if result.status == "ok" else "incomplete"
        session.log.append("run.ended", {"status": status, "summary": result.output[:2000]})
    except (asyncio.CancelledError, KeyboardInterrupt):
        session.log.append("run.ended", {"status": "cancelled", "summary": "the run was interrupted"})
        raise
    finally:
        session.close()  # after run.ended: the session is given back only once its log is whole
    evidence = Evidence(False, False, False, (), (), "no_checks")
    return RunReport(
        session.session_id, status, "command", evidence, result.output, mode=team.mode, lead=team.lead.name
    )


class _NoModel:
    """A ``!command`` session has no model; anything that asks one fails loudly."""

    name = "none"
    model = "none"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise ProviderError("a !command session has no model to ask", provider=self.name)
        yield TextDelta("")  # pragma: no cover - unreachable; makes this an async generator
