"""``ProtoAgentAcp``: the ACP agent side. Each prompt is a governed run; its log is streamed.

The ACP session id is the recorded session's id: ``session/new`` hands out the id its first
prompt records under, so ``session/load`` and ``session/list`` work across agent restarts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SetSessionModeResponse,
)

from protoagent.errors import ConfigError, ProtoAgentError, SessionLoadError
from protoagent.events.catalog import SessionCreated
from protoagent.events.log import new_session_id
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.interfaces.acp.advertising import CommandAdvertiser
from protoagent.interfaces.acp.commands import mode_state, policy_for_mode
from protoagent.interfaces.acp.ending import RunWatch
from protoagent.interfaces.acp.listing import SessionListing
from protoagent.interfaces.acp.permissions import permission_answerer
from protoagent.interfaces.acp.updates import Update, UpdateTranslator
from protoagent.tools.approvals import Policy
from protoagent.workflow.run import RunOptions, run_task
from protoagent.workflow.run_options import run_options


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
    policy: Policy
    """The session's mode: the approval policy its next prompt runs under."""
    recorded: bool = False
    """Whether the session has a log yet (its first prompt made one, or it was loaded)."""
    run: asyncio.Task[Any] | None = None
    cancelled: bool = False
    queue: asyncio.Queue[Update] = field(default_factory=asyncio.Queue)
    translator: UpdateTranslator = field(default_factory=UpdateTranslator)
    """One fold for the session's life, so tool call ids stay unique across its prompts."""
    sender: asyncio.Task[None] | None = None
    commands: CommandAdvertiser | None = None
    """The session's slash commands, as the editor was last told them."""


class ProtoAgentAcp:
    """Implements the agent methods of ``acp.interfaces.Agent`` that ProtoAgent supports."""

    def __init__(self, config: AcpConfig) -> None:
        self.config = config
        self._client: Client | None = None
        self._sessions: dict[str, _Session] = {}
        self._listing = SessionListing(config.store)

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
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="protoagent", title="ProtoAgent", version=_version()),
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        """A session whose first prompt records under the id handed out here."""
        session_id = new_session_id()
        session = self._open(session_id, _Session(_repo(cwd), self.config.approval))
        return NewSessionResponse(session_id=session_id, modes=mode_state(session.policy))

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        """Replay a recorded session's history as updates; later prompts continue it (also after
        this agent restarted: the id ``session/new`` returned is the recorded id)."""
        known = self._sessions.get(session_id)
        if known is not None and not known.recorded:
            raise RequestError.invalid_params(
                {"message": f"session {session_id!r} has no prompt recorded yet; send a prompt to it instead"}
            )
        try:
            events = self.config.store.load(session_id)
        except SessionLoadError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        if not events:
            raise RequestError.invalid_params({"message": f"no recorded session {session_id!r}"})
        translator = UpdateTranslator()
        for event in events:
            for update in translator.translate(event):
                await self.client.session_update(session_id, update)
        # A recorded session's workspace is authoritative: it is continued where it was made.
        created = events[0].fact(SessionCreated)
        root = (created.root if created is not None else "") or cwd
        policy = known.policy if known is not None else self.config.approval
        session = self._open(session_id, _Session(_repo(root), policy, recorded=True, translator=translator))
        return LoadSessionResponse(modes=mode_state(session.policy))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> ListSessionsResponse:
        """The recorded top-level sessions, newest first (those under ``cwd`` when given)."""
        if cwd is not None and not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"message": f"cwd {cwd!r} must be an absolute path"})
        try:
            return self._listing.page(Path(cwd) if cwd is not None else None, cursor)
        except ValueError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        """Switch the session's approval policy; it governs the session's next prompt (and ``deny``
        also the rest of a running one)."""
        session = self._session(session_id)
        policy = policy_for_mode(mode_id)
        if policy is None:
            known = ", ".join(s.id for s in mode_state(session.policy).available_modes)
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}; use one of {known}"})
        session.policy = policy
        return SetSessionModeResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.run is not None and not session.run.done():
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"message": "the prompt is empty: say what you want done"})
        _advertise(session)
        try:
            return await self._answer(session_id, session, text)
        finally:
            if session.commands is not None:
                session.commands.refresh()  # a server trusted or a skill added in the prompt is listed

    async def _answer(self, session_id: str, session: _Session, text: str) -> PromptResponse:
        said = await self._slash_command(session_id, session, text.strip())
        if said is not None:
            await session.queue.join()
            await self.client.session_update(session_id, update_agent_message_text(said))
            return PromptResponse(stop_reason="end_turn")
        session.cancelled = False
        watch = RunWatch()
        session.run = asyncio.create_task(run_task(text, self._options(session_id, session, watch)))
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
        final = watch.final_message(report)
        if final:
            await self.client.session_update(session_id, update_agent_message_text(final))
        return PromptResponse(stop_reason=watch.stop_reason())

    async def _slash_command(self, session_id: str, session: _Session, text: str) -> str | None:
        """The session's own commands, answered without a run (``None``: not one of them)."""
        name, _, rest = text.partition(" ")
        if name == "/compact":
            return await self._compact(session_id, session, rest.strip())
        if name == "/rewind":
            return await self._rewind(session_id, session, rest.split())
        if name.startswith("/mcp:") and not self.config.agents.get("mcp", False):
            return "MCP is off: turn it on with 'protoagent agents enable coding/mcp', then restart the agent"
        return None

    async def _rewind(self, session_id: str, session: _Session, words: list[str]) -> str:
        """``/rewind [N|verified] [code|conversation|both]``, as in the chat: what was restored and
        hidden, or what blocked it (a refusal lists the files; nothing changed then)."""
        from protoagent.interfaces.cli.checkpoint_cmds import rewind_words

        if not session.recorded:
            return "nothing to rewind yet: send a message first"
        try:
            return await asyncio.to_thread(rewind_words, self.config.store, session_id, words)
        except ProtoAgentError as exc:
            return str(exc)

    async def _compact(self, session_id: str, session: _Session, focus: str) -> str:
        """``/compact [focus]``: the conversation so far becomes one summary the next prompt follows."""
        from protoagent.context.session_compaction import compact_session

        if not session.recorded:
            return "nothing to compact yet: send a message first"
        try:
            result = await compact_session(session_id, self.config.store, focus=focus, model=self.config.model)
        except ProtoAgentError as exc:
            return f"not compacted: {exc}"
        if not result.compacted:
            return result.reason
        return f"compacted into a {result.method} summary ({result.replaced_tokens} → {result.summary_tokens} tokens)"

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

    def _open(self, session_id: str, session: _Session) -> _Session:
        """Register ``session``, start its update sender and advertise its slash commands (with
        MCP on, its servers' prompts follow once they are listed)."""
        old = self._sessions.get(session_id)
        if old is not None and old.sender is not None:
            old.sender.cancel()
        if old is not None and old.commands is not None:
            old.commands.close()
        self._sessions[session_id] = session
        session.sender = asyncio.create_task(self._send_updates(session_id, session))
        mcp = self.config.agents.get("mcp", False)
        session.commands = CommandAdvertiser(session.queue, session.repo, self.config.data_home, mcp)
        if mcp:
            session.commands.refresh()
        # A moment later, so the editor hears of the commands after the response naming the
        # session; a prompt that comes sooner queues them first.
        asyncio.get_running_loop().call_later(0.05, _advertise, session)
        return session

    def _options(self, session_id: str, session: _Session, watch: RunWatch) -> RunOptions:
        config = self.config
        translator = session.translator

        def on_event(event: Event) -> None:
            if event.fact(SessionCreated) is not None:
                session.recorded = True  # later prompts continue it, even after a cancel
            watch.see(event)
            for update in translator.translate(event):
                session.queue.put_nowait(update)

        answerer = permission_answerer(
            session_id, self.client.request_permission, session.queue.join, translator, lambda: session.policy == "deny"
        )
        return replace(
            run_options(session.repo, config.model, config.store, config.data_home, config.agents),
            approval=session.policy,
            answerer=answerer,
            on_event=on_event,
            resume=session_id if session.recorded else None,
            session_id=session_id,
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


def _advertise(session: _Session) -> None:
    """Queue the session's slash commands for the editor, unless it has them already."""
    if session.commands is not None:
        session.commands.open()


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
