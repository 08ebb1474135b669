"""``session/list``: the recorded top-level sessions as ACP ``SessionInfo``, newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from acp.schema import ListSessionsResponse, SessionInfo

from protoagent.agents.modes import session_facts
from protoagent.errors import ProtoAgentError
from protoagent.events.catalog import SessionCreated
from protoagent.events.store import SessionStore

PAGE = 50


class SessionListing:
    """Reads each session's facts once (its workspace and last activity) and pages through them."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._known: dict[tuple[str, int], SessionInfo | None] = {}

    def page(self, cwd: Path | None, cursor: str | None) -> ListSessionsResponse:
        """One page of sessions (under ``cwd`` when given); ``ValueError`` for a cursor this
        listing did not hand out."""
        start = _offset(cursor)
        infos = [info for info in self._infos() if cwd is None or _under(info, cwd)]
        rest = infos[start : start + PAGE]
        more = start + PAGE < len(infos)
        return ListSessionsResponse(sessions=rest, next_cursor=str(start + PAGE) if more else None)

    def _infos(self) -> list[SessionInfo]:
        found = []
        for summary in sorted(self.store.list(), key=lambda s: s.created, reverse=True):
            key = (summary.session_id, summary.event_count)
            if key not in self._known:
                self._known[key] = self._info(summary.session_id, summary.title)
            info = self._known[key]
            if info is not None:
                found.append(info)
        return found

    def _info(self, session_id: str, title: str) -> SessionInfo | None:
        """The session's info; ``None`` for a delegated child session or an unreadable log."""
        try:
            events = self.store.load(session_id)
        except ProtoAgentError:
            return None
        created = events[0].fact(SessionCreated) if events else None
        if created is None or created.parent_session_id:
            return None
        facts = session_facts(session_id, events)
        updated = datetime.fromtimestamp(events[-1].time, UTC).isoformat()
        return SessionInfo(
            session_id=session_id,
            cwd=str(facts.root),
            additional_directories=[str(p) for p in facts.extra_roots] or None,
            title=title or None,
            updated_at=updated,
        )


def _under(info: SessionInfo, cwd: Path) -> bool:
    roots = [Path(info.cwd), *(Path(p) for p in info.additional_directories or ())]
    wanted = cwd.resolve()
    return any(root.resolve() == wanted for root in roots)


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise ValueError(f"unknown cursor {cursor!r}; pass the nextCursor of the previous page")
    return int(cursor)
