"""The Python SDK: open the session store, run an agent, read sessions back."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from protoagent.agents.loop import DEFAULT_MODEL_CALLS, AgentLoop, Budget
from protoagent.agents.modes import SessionFacts as SessionFacts
from protoagent.agents.modes import check_resume as check_resume
from protoagent.agents.modes import default_mode as default_mode
from protoagent.agents.modes import session_facts as session_facts
from protoagent.agents.presets import Preset
from protoagent.agents.service import agent_listing as agent_listing
from protoagent.agents.service import agent_notices as agent_notices
from protoagent.agents.service import list_agents as list_agents
from protoagent.agents.service import set_agent_enabled as set_agent_enabled
from protoagent.agents.service import show_agent as show_agent
from protoagent.agents.service import trust_agent as trust_agent
from protoagent.agents.service import untrusted_in_team as untrusted_in_team
from protoagent.agents.service import validate_agents as validate_agents
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.events.sqlite_store import SQLiteStore
from protoagent.events.store import SessionStore
from protoagent.events.stores import STORE_ENV, ClosableStore, open_store_at
from protoagent.events.types import Event
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig
from protoagent.private_files import PRIVATE_DIR_MODE, tighten
from protoagent.processes.reaper import become_subreaper as become_subreaper
from protoagent.processes.reaper import stop_descendants as stop_descendants
from protoagent.processes.sandbox import SANDBOX_MODES as SANDBOX_MODES
from protoagent.processes.sandbox import sandbox_notice as sandbox_notice
from protoagent.processes.sandbox import select_sandbox as select_sandbox
from protoagent.tools.approvals import Answerer, Policy

HOME_ENV = "PROTOAGENT_HOME"
STORE_FILE = "sessions.sqlite"


def data_home() -> Path:
    """Where ProtoAgent keeps its data: ``$PROTOAGENT_HOME`` or ``~/.protoagent``."""
    override = os.environ.get(HOME_ENV)
    return Path(override).expanduser() if override else Path.home() / ".protoagent"


def open_store(home: Path | None = None, location: str | None = None) -> ClosableStore:
    """The session store: ``location``, else ``$PROTOAGENT_STORE`` (a ``postgresql://`` URL or a
    SQLite path), else the SQLite file under the data home."""
    chosen = location or os.environ.get(STORE_ENV)
    if chosen:
        return open_store_at(chosen)
    folder = home or data_home()
    if folder.is_dir():
        tighten(folder, PRIVATE_DIR_MODE)  # a data home made before it was private
    return SQLiteStore(folder / STORE_FILE)


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended. The session log holds the full record."""

    session_id: str
    status: Literal["completed", "failed", "incomplete"]
    text: str
    steps: int

    def to_json(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "status": self.status, "text": self.text, "steps": self.steps}


async def run_agent(
    objective: str,
    *,
    repo: Path,
    model: str,
    store: SessionStore,
    approval: Policy = "ask",
    answerer: Answerer | None = None,
    preset: str | Preset = "coding",
    provider: ModelProvider | None = None,
    model_config: ModelConfig | None = None,
    on_event: Callable[[Event], None] | None = None,
    max_model_calls: int = DEFAULT_MODEL_CALLS,
    sandbox: str = "auto",
) -> RunResult:
    """Compose a session for ``objective`` on ``repo`` and run one agent turn to its end.

    ``max_model_calls`` is the run's model-call budget; the turn also stops at the preset's
    ``max_steps``. ``sandbox`` (``required``, ``auto``, ``off``) confines its commands."""
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
        model_config=model_config or ModelConfig(),
        on_event=on_event,
        artifacts_root=data_home() / "artifacts",
        services={"sandbox": select_sandbox(sandbox)},
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
    return RunResult(session.session_id, status, outcome.text, outcome.steps)


def load_session(session_id: str, store: SessionStore | None = None) -> list[Event]:
    """The events of one session, in order (refusing a log that does not validate)."""
    return (store or open_store()).load(session_id)
