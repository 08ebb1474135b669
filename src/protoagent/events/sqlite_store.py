"""The default session store: one SQLite file (WAL), one row per event."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from protoagent.errors import SessionLoadError
from protoagent.events.session_lease import FileLease
from protoagent.events.sqlite_damage import (
    damaged_store,
    is_write_failure,
    list_damaged,
    open_checked,
    store_write_failed,
)
from protoagent.events.store import DatabaseStore, SessionSummary, check_loaded, event_from_row
from protoagent.events.types import FORMAT_VERSION, Event

_BUSY_TIMEOUT_S = 5.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    format_version INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    time REAL NOT NULL,
    type TEXT NOT NULL,
    turn INTEGER,
    step INTEGER,
    agent TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""


class SQLiteStore(DatabaseStore):
    """Session logs in one SQLite database. Each append (or ``append_many`` batch) is one
    transaction, so a process killed mid-append leaves every earlier event whole and loadable."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.list_warnings: list[str] = []
        """Why sessions were left out of the last :meth:`list` (one line each)."""
        self._db = open_checked(self.path)
        try:
            self._set_up()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise damaged_store(self.path, exc) from None

    def _set_up(self) -> None:
        """WAL mode and the schema. Switching a new store to WAL takes an exclusive lock that
        SQLite's busy handler does not wait for, so processes opening one store at once (batch
        workers) retry that step for up to the busy timeout instead of failing."""
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        while True:
            try:
                self._db.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def claim(self, session_id: str) -> FileLease:
        """Hold ``session_id`` for one run (see ``session_lease``); ``SessionRunning`` if a run does."""
        return FileLease.acquire(self.path, session_id)

    def close(self) -> None:
        self._db.close()

    def append_many(self, events: Sequence[Event]) -> None:
        """Store ``events`` (in order) in one transaction: all of them or none."""
        rows = [
            (e.session_id, e.seq, e.time, e.type, e.turn, e.step, e.agent, json.dumps(e.payload, separators=(",", ":")))
            for e in events
        ]
        with self._lock:
            self._db.execute("BEGIN")
            try:
                for event in events:
                    if event.seq == 1:
                        title = str(event.payload.get("title", ""))
                        self._db.execute(
                            "INSERT INTO sessions(session_id, created, format_version, title) VALUES (?,?,?,?)",
                            (event.session_id, event.time, FORMAT_VERSION, title),
                        )
                self._db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?,?)", rows)
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:  # SQLite has already rolled back after a full disk
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError) and is_write_failure(exc):
                    raise store_write_failed(self.path, exc) from None
                raise

    def load(self, session_id: str) -> list[Event]:
        with self._lock:
            try:
                head = self._db.execute(
                    "SELECT format_version FROM sessions WHERE session_id = ?", (session_id,)
                ).fetchone()
                if head is None:
                    raise SessionLoadError(session_id, f"no such session in {self.path}")
                rows = self._db.execute(
                    "SELECT seq, time, type, turn, step, agent, payload FROM events WHERE session_id = ? ORDER BY seq",
                    (session_id,),
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise SessionLoadError(session_id, f"{self.path} is damaged where it is stored ({exc})") from None
        events = [event_from_row(session_id, row) for row in rows]
        check_loaded(session_id, int(head[0]), events)
        return events

    def list(self) -> list[SessionSummary]:
        """Every readable session, oldest first; unreadable ones are named in ``list_warnings``."""
        with self._lock:
            self.list_warnings = []
            try:
                rows = self._db.execute(
                    "SELECT s.session_id, s.created, s.format_version, s.title, "
                    "(SELECT COUNT(*) FROM events e WHERE e.session_id = s.session_id) "
                    "FROM sessions s ORDER BY s.created"
                ).fetchall()
            except sqlite3.DatabaseError:
                rows, self.list_warnings = list_damaged(self._db, self.path)
        return [SessionSummary(r[0], r[1], r[4], r[2], r[3]) for r in rows]
