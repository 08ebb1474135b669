"""The web API's checkpoint actions, the same calls as ``protoagent rewind`` and ``sessions fork``.

- ``POST /api/sessions/{id}/rewind`` ``{"to": N | null, "verified": bool, "scope": ...}``:
  200 with what was restored and hidden; 409 with ``conflicts`` when a file changed outside the
  session (nothing changed then) or the session is running.
- ``POST /api/sessions/{id}/fork`` ``{"to": N | null}``: the new session's id.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from protoagent.interfaces.web.hub import Conflict, RunHub
from protoagent.interfaces.web.requests import check_session_id
from protoagent.interfaces.web.scope import SessionScope
from protoagent.workflow.checkpoints import RewindRefused, fork_session, rewind_session


class RewindBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    to: int | None = Field(None, ge=0)
    """The checkpoint: the state after user turn N (0: before the first)."""
    verified: bool = False
    """Rewind to the latest checkpoint a check verified instead of ``to``."""
    scope: Literal["code", "conversation", "both"] = "both"


class ForkBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    to: int | None = Field(None, ge=1)
    """Fork from the state after user turn N (default the latest)."""


def checkpoint_routes(app: FastAPI, scope: SessionScope, hub: RunHub) -> None:
    store = scope.store

    def idle(session_id: str) -> None:
        check_session_id(session_id)
        scope.load(session_id)  # refuses an unknown or out-of-root session
        if hub.running(session_id):
            raise Conflict(f"session {session_id!r} is still running; wait for it to end or cancel it")

    @app.post("/api/sessions/{session_id}/rewind", response_model=None)
    async def rewind(session_id: str, body: RewindBody) -> dict[str, Any] | JSONResponse:
        idle(session_id)
        try:
            plan = await asyncio.to_thread(
                rewind_session, store, session_id, body.to, verified=body.verified, scope=body.scope
            )
        except RewindRefused as exc:
            conflicts = [{"path": c.path, "why": c.why} for c in exc.conflicts]
            return JSONResponse({"error": str(exc), "conflicts": conflicts}, status_code=409)
        return {"session_id": session_id, **plan.payload()}

    @app.post("/api/sessions/{session_id}/fork")
    async def fork(session_id: str, body: ForkBody) -> dict[str, Any]:
        idle(session_id)
        return {
            "session_id": await asyncio.to_thread(fork_session, store, session_id, body.to),
            "forked_from": session_id,
        }
