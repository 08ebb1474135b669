"""A session store in PostgreSQL, shared by many workers and readers (psycopg 3).

It keeps the SQLite store's contract: append-only logs with gapless per-session sequence
numbers, validation on load, and refusal of bad data. ``(session_id, seq)`` is the primary
key, so an event appended twice is refused by the database instead of being stored twice; each
``append``/``append_many`` is one transaction, so a worker killed mid-batch leaves every earlier
batch whole and nothing of its own. Many processes may write concurrently: each writes its own
sessions, and the schema is created once under an advisory lock by ``migrate``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from protoagent.errors import ConfigError, SessionLoadError
from protoagent.events.session_lease import AdvisoryLease, SessionRunning
from protoagent.events.store import DatabaseStore, SessionSummary, check_loaded, event_from_row
from protoagent.events.types import FORMAT_VERSION, Event

if TYPE_CHECKING:
    import psycopg

MIGRATIONS = ("postgres_001_init.sql",)
"""Schema migrations in order; ``protoagent_schema.version`` counts how many have run."""
_MIGRATION_LOCK = 0x50524F54  # an arbitrary advisory-lock key owned by ProtoAgent


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Bring the database's ProtoAgent schema up to date; return the schema version.

    Safe to call from many workers at once: the work happens under an advisory lock.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS protoagent_schema (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM protoagent_schema").fetchone()
        version = int(row[0]) if row is not None else 0
        if version > len(MIGRATIONS):
            raise ConfigError(
                f"the database's ProtoAgent schema is version {version}, newer than this release's "
                f"{len(MIGRATIONS)}; upgrade ProtoAgent"
            )
        for name in MIGRATIONS[version:]:
            conn.execute(resources.files("protoagent.events.migrations").joinpath(name).read_text("utf-8"))
        if row is None:
            conn.execute("INSERT INTO protoagent_schema(version) VALUES (%s)", (len(MIGRATIONS),))
        else:
            conn.execute("UPDATE protoagent_schema SET version = %s", (len(MIGRATIONS),))
    return len(MIGRATIONS)


class PostgresStore(DatabaseStore):
    """Session logs in a PostgreSQL database named by a ``postgresql://`` URL."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise ConfigError("a postgresql:// store needs psycopg 3: pip install 'protoagent[postgres]'") from None
        self.url = url
        self._lock = threading.Lock()
        try:
            self._db: psycopg.Connection[Any] = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise ConfigError(f"cannot connect to the session store {_redact(url)}: {_first_line(exc)}") from None
        migrate(self._db)

    def claim(self, session_id: str) -> AdvisoryLease:
        """Hold ``session_id`` for one run (see ``session_lease``); ``SessionRunning`` if a run does."""
        try:
            return AdvisoryLease.acquire(self.url, session_id)
        except SessionRunning:
            raise
        except Exception as exc:
            raise ConfigError(f"cannot lock session {session_id} in {_redact(self.url)}: {_first_line(exc)}") from None

    def close(self) -> None:
        self._db.close()

    def append_many(self, events: Sequence[Event]) -> None:
        """Append several events in one transaction: all of them or none."""
        if not events:
            return
        with self._lock, self._db.transaction():
            for event in events:
                if event.seq == 1:
                    self._db.execute(
                        "INSERT INTO protoagent_sessions(session_id, created, format_version, title) "
                        "VALUES (%s, %s, %s, %s)",
                        (event.session_id, event.time, FORMAT_VERSION, str(event.payload.get("title", ""))),
                    )
                self._db.execute(
                    "INSERT INTO protoagent_events VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        event.session_id,
                        event.seq,
                        event.time,
                        event.type,
                        event.turn,
                        event.step,
                        event.agent,
                        json.dumps(event.payload, separators=(",", ":")),
                    ),
                )

    def load(self, session_id: str) -> list[Event]:
        with self._lock:
            head = self._db.execute(
                "SELECT format_version FROM protoagent_sessions WHERE session_id = %s", (session_id,)
            ).fetchone()
            if head is None:
                raise SessionLoadError(session_id, f"no such session in {_redact(self.url)}")
            rows = self._db.execute(
                "SELECT seq, time, type, turn, step, agent, payload::text FROM protoagent_events "
                "WHERE session_id = %s ORDER BY seq",
                (session_id,),
            ).fetchall()
        events = [event_from_row(session_id, row) for row in rows]
        check_loaded(session_id, int(head[0]), events)
        return events

    def list(self) -> list[SessionSummary]:
        with self._lock:
            rows = self._db.execute(
                "SELECT s.session_id, s.created, s.format_version, s.title, "
                "(SELECT COUNT(*) FROM protoagent_events e WHERE e.session_id = s.session_id) "
                "FROM protoagent_sessions s ORDER BY s.created"
            ).fetchall()
        return [SessionSummary(r[0], float(r[1]), int(r[4]), int(r[2]), r[3]) for r in rows]


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    if "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}" if ":" in credentials else url


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
