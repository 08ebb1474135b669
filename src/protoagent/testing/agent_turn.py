"""One agent turn composed from a preset alone, without the workflow: the agent loop's own
entry for its tests and benches. The public way to run an objective is ``run_task``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from protoagent.agents.loop import DEFAULT_MODEL_CALLS, AgentLoop, Budget, TurnOutcome
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig
from protoagent.processes.sandbox import select_sandbox
from protoagent.tools.approvals import Answerer, Policy
from protoagent.tools.services import RunServices


async def run_preset_turn(
    objective: str,
    *,
    repo: Path,
    model: str,
    store: SessionStore,
    approval: Policy = "ask",
    answerer: Answerer | None = None,
    preset: str | Preset = "coding",
    provider: ModelProvider | None = None,
    on_event: Callable[[Event], None] | None = None,
    max_model_calls: int = DEFAULT_MODEL_CALLS,
    sandbox: str = "auto",
    artifacts_root: Path | None = None,
) -> tuple[str, TurnOutcome]:
    """Run one turn of ``preset`` on ``objective`` to its end: the session id and how the turn
    ended. ``max_model_calls`` is the run's budget (``ConfigError`` below one, before anything is
    recorded); the turn also stops at the preset's ``max_steps``."""
    budget = Budget(max_model_calls)
    spec = SessionSpec(
        repo=repo,
        model=model,
        store=store,
        preset=preset,
        approval=approval,
        answerer=answerer,
        title=objective[:120],
        provider=provider,
        model_config=ModelConfig(),
        on_event=on_event,
        artifacts_root=artifacts_root,
        services=RunServices(sandbox=select_sandbox(sandbox)),
    )
    session = AgentSession.create(spec)
    try:
        outcome = await AgentLoop(session, budget=budget).run_turn(objective)
        status: Literal["completed", "failed", "incomplete"] = (
            "completed" if outcome.status == "completed" else "failed" if outcome.status == "failed" else "incomplete"
        )
        session.log.append("run.ended", {"status": status, "summary": outcome.text})
    finally:
        session.close()  # after run.ended: the session is given back only once its log is whole
    return session.session_id, outcome
