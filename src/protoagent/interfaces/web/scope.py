"""Which recorded sessions a web server shows: those whose repositories lie under its roots.

The session store is shared by every run of the person's data home (the CLI's included); a
server started with ``--root DIR`` lists, streams and continues only sessions whose recorded
repositories are all under one of its roots, and Work sessions, whose folders ProtoAgent made
under the data home. Any other session answers as if it did not exist.
"""

from __future__ import annotations

from pathlib import Path

from protoagent.agents.modes import WORKSPACES, session_facts
from protoagent.errors import ProtoAgentError, SessionLoadError
from protoagent.events.store import SessionStore, SessionSummary
from protoagent.events.types import Event
from protoagent.interfaces.web.requests import WebConfig


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    resolved = path.resolve()
    return any(resolved == root or resolved.is_relative_to(root) for root in roots)


class SessionScope:
    """Decides, once per session, whether this server may serve it."""

    def __init__(self, config: WebConfig, store: SessionStore) -> None:
        self.roots = config.roots
        self.work = (config.data_home.resolve() / WORKSPACES,) if config.data_home is not None else ()
        self.store = store
        self._known: dict[str, bool] = {}

    def allows(self, session_id: str, events: list[Event] | None = None) -> bool:
        known = self._known.get(session_id)
        if known is not None:
            return known
        try:
            loaded = events if events is not None else self.store.load(session_id)
        except ProtoAgentError:
            return False
        facts = session_facts(session_id, loaded)
        roots = self.work if facts.mode == "work" else self.roots
        if not loaded:
            return False  # not recorded yet: asked again later
        allowed = all(_under(root, roots) for root in facts.roots)
        self._known[session_id] = allowed
        return allowed

    def load(self, session_id: str) -> list[Event]:
        """The session's events; one outside the roots is refused as not found."""
        events = self.store.load(session_id)
        if not self.allows(session_id, events):
            raise SessionLoadError(session_id, "no such session under this server's --root folders")
        return events

    def check(self, session_id: str) -> None:
        """Refuse a session outside the roots (as not found) without handing back its events."""
        if not self.allows(session_id):
            raise SessionLoadError(session_id, "no such session under this server's --root folders")

    def listed(self) -> list[SessionSummary]:
        return [summary for summary in self.store.list() if self.allows(summary.session_id)]
