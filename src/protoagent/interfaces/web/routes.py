"""The FastAPI app: the JSON API, the server-sent event stream and the page."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse

from protoagent.context.session_compaction import compact_session
from protoagent.errors import ConfigError, ProtoAgentError, SessionLoadError
from protoagent.events.queries import session_head
from protoagent.events.session_lease import SessionRunning
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.interfaces.web.auth import AccessGuard, is_loopback
from protoagent.interfaces.web.checkpoint_routes import checkpoint_routes
from protoagent.interfaces.web.hub import Conflict, RunHub
from protoagent.interfaces.web.requests import (
    ApprovalBody,
    CompactBody,
    MessageBody,
    RunBody,
    WebConfig,
    check_session_id,
)
from protoagent.interfaces.web.runs import continue_starter, run_starter
from protoagent.interfaces.web.scope import SessionScope
from protoagent.interfaces.web.settings_routes import settings_routes
from protoagent.interfaces.web.views import view_routes
from protoagent.processes.live import LIVE_OUTPUT
from protoagent.tools.approvals import ApprovalAnswer

KEEPALIVE_S = 15.0
STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "markdown.js": "text/javascript; charset=utf-8",
    "cards.js": "text/javascript; charset=utf-8",
    "list.js": "text/javascript; charset=utf-8",
    "settings.js": "text/javascript; charset=utf-8",
    "checkpoints.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "index.html": "text/html; charset=utf-8",
}
"""The only files the page is made of; nothing else on disk is reachable through the server."""


def create_app(config: WebConfig, store: SessionStore, hub: RunHub | None = None) -> FastAPI:
    """The web app over ``store``; runs it starts execute on the server's event loop."""
    hub = hub or RunHub()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.bind()
        yield
        await hub.close()  # runs still in progress are cancelled, recorded, their processes stopped

    app = FastAPI(title="ProtoAgent", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.hub = hub
    app.add_middleware(AccessGuard, token=config.token, loopback=is_loopback(config.host))
    scope = SessionScope(config, store)
    _errors(app)
    _session_routes(app, scope, hub)
    view_routes(app, config, scope, hub)
    checkpoint_routes(app, scope, hub)
    _run_routes(app, config, scope, hub)
    settings_routes(app, config)
    _pages(app)
    return app


def _errors(app: FastAPI) -> None:
    """Every refusal is one JSON line: ``{"error": "..."}`` with a fitting status."""

    @app.exception_handler(ProtoAgentError)
    async def refused(request: Request, exc: ProtoAgentError) -> JSONResponse:
        statuses = {Conflict: 409, SessionRunning: 409, SessionLoadError: 404}
        status = next((code for kind, code in statuses.items() if isinstance(exc, kind)), 400)
        return JSONResponse({"error": str(exc)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "body"
        return JSONResponse({"error": f"invalid request field {where!r}: {first['msg']}"}, status_code=400)


def _session_routes(app: FastAPI, scope: SessionScope, hub: RunHub) -> None:
    """Only sessions under the server's roots are listed or read (``SessionScope``)."""

    @app.get("/api/sessions/{session_id}/events")
    async def events(session_id: str) -> dict[str, Any]:
        loaded = scope.load(check_session_id(session_id))
        pending = [r.call_id for r in hub.pending(session_id)]
        return {
            "session_id": session_id,
            "running": hub.running(session_id),
            "pending": pending,
            "events": [_dump(e) for e in loaded],
        }

    @app.get("/api/sessions/{session_id}/calls/{call_id}/output")
    async def live_output(session_id: str, call_id: str, after: int = 0) -> dict[str, Any]:
        """The output of a command while its call runs, from byte ``after`` on (not consumed)."""
        scope.check(check_session_id(session_id))
        read = LIVE_OUTPUT.read(session_id, call_id, after)
        return {"call_id": call_id, "text": read.text, "next": read.next, "running": read.running}

    @app.get("/api/sessions/{session_id}/stream")
    async def stream(session_id: str, request: Request) -> StreamingResponse:
        check_session_id(session_id)
        after = _last_event_id(request)
        queue, leave = hub.subscribe(session_id)  # before loading, so no event falls in between
        try:
            replay = scope.load(session_id)
        except ProtoAgentError:
            leave()
            raise
        body = _sse(session_id, hub, replay, after, queue, leave)
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(body, media_type="text/event-stream", headers=headers)


def _run_routes(app: FastAPI, config: WebConfig, scope: SessionScope, hub: RunHub) -> None:
    store = scope.store

    @app.post("/api/runs")
    async def start_run(body: RunBody) -> dict[str, str]:
        return {"session_id": await hub.start(run_starter(body, config, store))}

    @app.post("/api/sessions/{session_id}/messages")
    async def continue_session(session_id: str, body: MessageBody) -> dict[str, str]:
        check_session_id(session_id)
        if hub.running(session_id):
            raise Conflict(f"session {session_id!r} is still running; wait for it to end or cancel it")
        scope.load(session_id)  # refuses an unknown, unreadable or out-of-root session before anything starts
        return {"session_id": await hub.start(continue_starter(session_id, body, config, store))}

    @app.post("/api/sessions/{session_id}/compact")
    async def compact(session_id: str, body: CompactBody) -> dict[str, Any]:
        """The conversation so far becomes one summary; the next message follows it."""
        check_session_id(session_id)
        if hub.running(session_id):
            raise Conflict(f"session {session_id!r} is still running; wait for it to end or cancel it")
        created = session_head(scope.load(session_id))
        result = await compact_session(session_id, store, focus=body.focus, model=created.model)
        return result.to_json()

    @app.post("/api/approvals/{call_id}")
    async def approve(call_id: str, body: ApprovalBody) -> dict[str, str]:
        answer = _answer(body)
        session_id = hub.answer(call_id, answer, body.session_id)
        return {"session_id": session_id, "call_id": call_id, "decision": body.decision, "scope": answer.scope}

    @app.post("/api/sessions/{session_id}/cancel")
    async def cancel(session_id: str) -> dict[str, Any]:
        scope.check(check_session_id(session_id))
        if not hub.cancel(session_id):
            raise Conflict(f"session {session_id!r} has no run in progress")
        await hub.wait(session_id)
        return {"session_id": session_id, "cancelled": True}


def _answer(body: ApprovalBody) -> ApprovalAnswer:
    if body.decision == "deny":
        return ApprovalAnswer.deny(body.reason.strip() or "declined in the web UI")
    if body.scope == "session":
        return ApprovalAnswer.for_session("approved for this session in the web UI")
    return ApprovalAnswer.once("approved once in the web UI")


def _pages(app: FastAPI) -> None:
    @app.get("/")
    async def index() -> Response:
        return _static("index.html")

    @app.get("/settings")
    async def settings_page() -> Response:
        return _static("index.html")

    @app.get("/sessions/{session_id}")
    async def session_page(session_id: str) -> Response:
        check_session_id(session_id)
        return _static("index.html")

    @app.get("/static/{name}")
    async def static(name: str) -> Response:
        if name not in STATIC:
            return JSONResponse({"error": f"no static file {name!r}"}, status_code=404)
        return _static(name)


def _static(name: str) -> Response:
    text = resources.files("protoagent.interfaces.web").joinpath("static", name).read_text(encoding="utf-8")
    return Response(text, media_type=STATIC[name], headers={"Cache-Control": "no-cache"})


def _dump(event: Event) -> dict[str, Any]:
    return event.model_dump(mode="json")


def _last_event_id(request: Request) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        raise ConfigError(f"Last-Event-ID {raw!r} is not an event number") from None


async def _sse(
    session_id: str,
    hub: RunHub,
    replay: list[Event],
    after: int,
    queue: asyncio.Queue[Event | dict[str, Any]],
    leave: Any,
) -> AsyncIterator[str]:
    """Replay the log after ``after``, then live events; state notes carry the running flag."""
    try:
        yield _state(hub, session_id)
        last = after
        for event in replay:
            if event.seq > last:
                last = event.seq
                yield _event(event)
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
            except TimeoutError:
                yield ": keepalive\n\n"
                continue
            if isinstance(item, Event):
                if item.seq > last:
                    last = item.seq
                    yield _event(item)
            else:
                yield _state(hub, session_id)
    finally:
        leave()


def _event(event: Event) -> str:
    return f"id: {event.seq}\nevent: event\ndata: {json.dumps(_dump(event), ensure_ascii=False)}\n\n"


def _state(hub: RunHub, session_id: str) -> str:
    pending = [r.call_id for r in hub.pending(session_id)]
    state = {"running": hub.running(session_id), "pending": pending}
    return f"event: state\ndata: {json.dumps(state)}\n\n"
