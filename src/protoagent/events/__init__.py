"""The session log: typed immutable events, stores and ``derive_messages``."""

from protoagent.events.log import SessionLog, new_session_id
from protoagent.events.messages import derive_messages
from protoagent.events.sqlite_store import SQLiteStore
from protoagent.events.store import MemoryStore, SessionStore, SessionSummary
from protoagent.events.types import FORMAT_VERSION, Event

__all__ = [
    "FORMAT_VERSION",
    "Event",
    "MemoryStore",
    "SQLiteStore",
    "SessionLog",
    "SessionStore",
    "SessionSummary",
    "derive_messages",
    "new_session_id",
]
