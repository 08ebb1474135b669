"""``RunHub``: the runs a web server executes, their live event fan-out and pending approvals."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from protoagent.errors import ConfigError
from protoagent.events.types import Event
from protoagent.tools.approvals import Answerer, ApprovalAnswer, ApprovalRequest

Stream = asyncio.Queue["Event | dict[str, Any]"]
"""What a stream subscriber receives: log events and ``{"running": bool}`` state notes."""
RunStarter = Callable[[Answerer, Callable[[Event], None]], Coroutine[Any, Any, Any]]
"""Starts one run with the hub's answerer and event subscriber; awaited inside the hub's task."""


class Conflict(ConfigError):
    """A request that does not fit the server's state (HTTP 409)."""


class NotPending(Conflict):
    """An approval answer for a call that is not waiting for one."""


@dataclass(slots=True)
class _Pending:
    session_id: str
    request: ApprovalRequest
    answer: asyncio.Future[ApprovalAnswer]


@dataclass(slots=True)
class _Live:
    task: asyncio.Task[Any]
    session_id: str = ""
    started: asyncio.Future[str] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class RunHub:
    """Runs started by the server, one asyncio task each, on the server's event loop.

    Every event a run appends is published to the streams subscribed to its session; the
    run's approvals wait here until someone answers them through the API.
    """

    def __init__(self) -> None:
        self._streams: dict[str, list[Stream]] = {}
        self._pending: list[_Pending] = []
        self._live: dict[str, _Live] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = 0

    def bind(self) -> None:
        """Remember the server's event loop, so events appended on other threads reach streams."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def publish(self, event: Event) -> None:
        """Hand an appended event to the streams of its session (safe from any thread)."""
        self._publish(event.session_id, event)

    def running(self, session_id: str) -> bool:
        return session_id in self._live

    def pending(self, session_id: str) -> list[ApprovalRequest]:
        return [p.request for p in self._pending if p.session_id == session_id]

    def subscribe(self, session_id: str) -> tuple[Stream, Callable[[], None]]:
        """A queue of this session's live events; call the returned function to leave."""
        queue: Stream = asyncio.Queue()
        self._streams.setdefault(session_id, []).append(queue)

        def leave() -> None:
            queues = self._streams.get(session_id, [])
            if queue in queues:
                queues.remove(queue)

        return queue, leave

    async def start(self, starter: RunStarter) -> str:
        """Start a run; return its session id once ``session.created`` is recorded.

        A run that fails before its session exists (bad repository, unknown model) raises here.
        """
        self.bind()
        holder: dict[str, _Live] = {}

        def on_event(event: Event) -> None:
            live = holder["live"]
            if not live.session_id:
                live.session_id = event.session_id
                self._live[event.session_id] = live
                self._note(event.session_id, running=True)
                live.started.set_result(event.session_id)
            self._publish(event.session_id, event)

        async def answerer(request: ApprovalRequest) -> ApprovalAnswer:
            session_id = holder["live"].session_id
            if not session_id:
                # Nobody can see a question asked before the session exists (the request that
                # started the run is still waiting for its id): waiting would hang both.
                return ApprovalAnswer.deny(
                    "nobody can answer before the session exists; approve it from a terminal run first"
                )
            return await self._wait_for_answer(session_id, request)

        task: asyncio.Task[Any] = asyncio.create_task(starter(answerer, on_event))
        live = holder["live"] = _Live(task)
        task.add_done_callback(lambda t: self._ended(live, t))
        return await asyncio.shield(live.started)

    def answer(self, call_id: str, answer: ApprovalAnswer, session_id: str | None = None) -> str:
        """Deliver an answer to a pending call; refuse one that is not pending."""
        matches = [
            p
            for p in self._pending
            if p.request.call_id == call_id and session_id in (None, p.session_id) and not p.answer.done()
        ]
        if not matches:
            raise NotPending(f"call {call_id!r} is not waiting for approval; nothing was decided")
        if len(matches) > 1:
            raise NotPending(f"call {call_id!r} is pending in several sessions; name the session_id")
        matches[0].answer.set_result(answer)
        return matches[0].session_id

    def cancel(self, session_id: str) -> bool:
        """Stop a run: its task is cancelled, the run records it, and its processes are stopped."""
        live = self._live.get(session_id)
        if live is None:
            return False
        live.task.cancel()
        return True

    async def wait(self, session_id: str) -> None:
        """Wait until the session's current run, if any, has ended."""
        live = self._live.get(session_id)
        if live is not None:
            await asyncio.wait([live.task])

    async def close(self) -> None:
        """Cancel every run (server shutdown) and wait for them to record their end."""
        tasks = [live.task for live in self._live.values()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    async def _wait_for_answer(self, session_id: str, request: ApprovalRequest) -> ApprovalAnswer:
        future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        pending = _Pending(session_id, request, future)
        self._pending.append(pending)
        self._note(session_id, running=True)  # the page's pending list changes with each question
        try:
            return await future
        finally:
            self._pending.remove(pending)
            self._note(session_id, running=session_id in self._live)

    def _ended(self, live: _Live, task: asyncio.Task[Any]) -> None:
        if not live.started.done():
            error = task.exception() if not task.cancelled() else None
            live.started.set_exception(error or ConfigError("the run was cancelled before it started"))
        elif not task.cancelled():
            task.exception()  # retrieved so asyncio does not report it; the log records the run's end
        if live.session_id and self._live.get(live.session_id) is live:
            del self._live[live.session_id]
            self._note(live.session_id, running=False)

    def _note(self, session_id: str, *, running: bool) -> None:
        self._publish(session_id, {"running": running})

    def _publish(self, session_id: str, item: Event | dict[str, Any]) -> None:
        if threading.get_ident() != self._thread and self._loop is not None:
            self._loop.call_soon_threadsafe(self._publish, session_id, item)
            return
        for queue in self._streams.get(session_id, []):
            queue.put_nowait(item)
