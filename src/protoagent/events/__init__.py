"""The session log: typed immutable events, stores and ``derive_messages``.

Every event is an ``Event`` envelope whose payload has its own model in ``CATALOG`` (event type
-> payload model); readers hold it typed through ``Event.fact(Model)`` and the generic queries
``facts`` and ``last_fact``. Stores keep a format version per session; the models read every
payload an earlier release wrote (see ``catalog``).
"""

from protoagent.events.catalog import CATALOG
from protoagent.events.log import SessionLog, new_session_id
from protoagent.events.messages import derive_messages
from protoagent.events.queries import facts, last_fact
from protoagent.events.sqlite_store import SQLiteStore
from protoagent.events.store import MemoryStore, SessionStore, SessionSummary
from protoagent.events.types import FORMAT_VERSION, Event

__all__ = [
    "CATALOG",
    "FORMAT_VERSION",
    "Event",
    "MemoryStore",
    "SQLiteStore",
    "SessionLog",
    "SessionStore",
    "SessionSummary",
    "derive_messages",
    "facts",
    "last_fact",
    "new_session_id",
]
