"""Pick a session store from a location: a ``postgresql://`` URL or a SQLite file path."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from protoagent.events.store import SessionStore

STORE_ENV = "PROTOAGENT_STORE"
"""Environment variable naming the session store (a ``postgresql://`` URL or a SQLite path)."""


class ClosableStore(SessionStore, Protocol):
    def close(self) -> None: ...

    def __enter__(self) -> ClosableStore: ...

    def __exit__(self, *exc: object) -> None: ...


def is_postgres_url(location: str) -> bool:
    return location.startswith(("postgresql://", "postgres://"))


def open_store_at(location: str | Path) -> ClosableStore:
    """Open the store at ``location``: PostgreSQL for a ``postgresql://`` URL, else SQLite."""
    text = str(location)
    if is_postgres_url(text):
        from protoagent.events.postgres_store import PostgresStore

        return PostgresStore(text)
    from protoagent.events.sqlite_store import SQLiteStore

    return SQLiteStore(Path(text).expanduser())
