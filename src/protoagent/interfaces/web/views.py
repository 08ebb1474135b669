"""Routes the page's views read besides the log: the session list's rows, the new-run choices
and a session's whole change as one diff (``workflow.changes``, from the log's revisions)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from protoagent.errors import ConfigError
from protoagent.interfaces.web.hub import RunHub
from protoagent.interfaces.web.listing import SessionRows, model_choices, repository_choices
from protoagent.interfaces.web.requests import WebConfig, check_session_id
from protoagent.interfaces.web.scope import SessionScope
from protoagent.workflow.changes import session_changes, unified_diff, user_turns


def view_routes(app: FastAPI, config: WebConfig, scope: SessionScope, hub: RunHub) -> None:
    rows = SessionRows(scope.store)

    @app.get("/api/sessions")
    async def sessions() -> list[dict[str, Any]]:
        return [
            rows.row(s, running=hub.running(s.session_id), pending=len(hub.pending(s.session_id)))
            for s in scope.listed()
        ]

    @app.get("/api/options")
    async def options() -> dict[str, Any]:
        """What the new-run form offers; the fields still take any value the API accepts."""
        return {"repos": repository_choices(config.roots), "models": model_choices(rows.models())}

    @app.get("/api/sessions/{session_id}/changes")
    async def changes(session_id: str, turn: int | None = None) -> dict[str, Any]:
        """Every file the session changed (or one user turn changed) and the diff git would write."""
        events = scope.load(check_session_id(session_id))
        turns = user_turns(events)
        if turn is not None and not 1 <= turn <= len(turns):
            raise ConfigError(f"turn {turn} is not a user turn of this session; give 1 to {len(turns)}")
        found = session_changes(events, turn)
        files = [
            {
                "path": c.path,
                "status": "added" if c.created else "deleted" if c.deleted else "modified",
                "turns": list(c.turns),
                "recorded": c.recorded,
            }
            for c in found
        ]
        return {"session_id": session_id, "turns": len(turns), "files": files, "diff": unified_diff(found)}
