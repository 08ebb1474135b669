"""``ProtoAgentAcp``: the ACP agent side. Each prompt is a governed run; its log is streamed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
)

from protoagent.errors import ConfigError, SessionLoadError
from protoagent.events.log import new_session_id
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.interfaces.acp.permissions import permission_answerer
from protoagent.interfaces.acp.updates import Update, UpdateTranslator
from protoagent.tools.approvals import Policy
from protoagent.workflow.run import RunOptions, run_task


@dataclass(frozen=True, slots=True)
class AcpConfig:
    """What every session of this server shares: the model, the policy and where data lives."""

    model: str
    approval: Policy
    store: SessionStore
    data_home: Path
    agents: dict[str, bool] = field(default_factory=dict)
    """Optional agents (tester, scout, mcp) as the user's settings have them."""


@dataclass(slots=True)
class _Session:
    repo: Path
    recorded: str | None = None
    """The recorded session this conversation continues (the latest run's, or a loaded one)."""
    run: asyncio.Task[Any] | None = None
    cancelled: bool = False
    queue: asyncio.Queue[Update] = field(default_factory=asyncio.Queue)


class ProtoAgentAcp:
    """Implements the agent methods of ``acp.interfaces.Agent`` that ProtoAgent supports."""

    def __init__(self, config: AcpConfig) -> None:
        self.config = config
        self._client: Client | None = None
        self._sessions: dict[str, _Session] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RequestError.internal_error({"details": "no client is connected"})
        return self._client

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name="protoagent", title="ProtoAgent", version=_version()),
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = new_session_id()
        self._sessions[session_id] = _Session(_repo(cwd))
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        """Replay a recorded session's history as updates; later prompts continue from it.

        ``session_id`` is a recorded session's id, or one this server handed out whose prompts
        were recorded (its recorded session is replayed)."""
        known = self._sessions.get(session_id)
        recorded = known.recorded if known is not None and known.recorded is not None else session_id
        try:
            events = self.config.store.load(recorded)
        except SessionLoadError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        translator = UpdateTranslator()
        for event in events:
            for update in translator.translate(event):
                await self.client.session_update(session_id, update)
        # A recorded session's workspace is authoritative: it is continued where it was made.
        root = str(events[0].payload.get("root") or cwd) if events else cwd
        self._sessions[session_id] = _Session(_repo(root), recorded=recorded)
        return LoadSessionResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.run is not None and not session.run.done():
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"message": "the prompt is empty: say what you want done"})
        session.cancelled = False
        sender = asyncio.create_task(self._send_updates(session_id, session))
        session.run = asyncio.create_task(run_task(text, self._options(session_id, session)))
        try:
            report = await session.run
        except asyncio.CancelledError:
            if not session.cancelled:
                raise
            return PromptResponse(stop_reason="cancelled")
        except ConfigError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        finally:
            await session.queue.join()
            sender.cancel()
        session.recorded = report.session_id
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None and session.run is not None and not session.run.done():
            session.cancelled = True
            session.run.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await session.run

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"message": f"unknown session {session_id!r}; create one with session/new or session/load"}
            )
        return session

    def _options(self, session_id: str, session: _Session) -> RunOptions:
        config = self.config
        translator = UpdateTranslator()

        def on_event(event: Event) -> None:
            if event.type == "session.created":
                session.recorded = event.session_id  # later prompts continue it, even after a cancel
            for update in translator.translate(event):
                session.queue.put_nowait(update)

        answerer = permission_answerer(session_id, self.client.request_permission, session.queue.join)
        return RunOptions(
            repo=session.repo,
            model=config.model,
            store=config.store,
            approval=config.approval,
            answerer=answerer,
            tester=config.agents.get("tester", True),
            scout=config.agents.get("scout", False),
            mcp=config.agents.get("mcp", False),
            data_home=config.data_home,
            on_event=on_event,
            artifacts_root=config.data_home / "artifacts",
            resume=session.recorded,
        )

    async def _send_updates(self, session_id: str, session: _Session) -> None:
        while True:
            update = await session.queue.get()
            try:
                await self.client.session_update(session_id, update)
            except Exception as exc:  # a client that went away must not stall the run
                logging.getLogger(__name__).warning("session/update not delivered: %s", exc)
            finally:
                session.queue.task_done()


def prompt_text(blocks: list[Any]) -> str:
    """The person's words: text blocks, embedded text resources and links, in order."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(f"{block.resource.uri}:\n{block.resource.text}")
        elif kind == "resource_link":
            parts.append(str(block.uri))
    return "\n".join(parts)


def _repo(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute() or not path.is_dir():
        raise RequestError.invalid_params({"message": f"cwd {cwd!r} must be an absolute path to an existing folder"})
    return path


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("protoagent")
    except PackageNotFoundError:
        return "0"
