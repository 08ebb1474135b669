"""``SessionLog``: appends typed events for one session and tells subscribers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from protoagent.events.catalog import validate_payload
from protoagent.events.store import SessionStore, append_all
from protoagent.events.types import Event

Subscriber = Callable[[Event], None]


def new_session_id() -> str:
    return "s_" + uuid.uuid4().hex[:12]


class SessionLog:
    """The append-only log of one session, backed by a store.

    Every model-visible input and every effect becomes an event here first; interfaces
    subscribe to render them. Appending validates the payload against the catalog.

    Each append is written to the store at once, except inside ``held()``: there the events a
    task appends are kept (in order, already told to subscribers) and written together, in one
    transaction, by the next ``flush()``. A holder flushes before anything that waits or acts
    (a model request, an approval a person answers, a tool's effect; ``unheld()`` does it around
    an effect), so every event before such a moment is on disk, and a process killed in between
    loses only the unflushed tail of the step it was in.
    """

    def __init__(self, store: SessionStore, session_id: str, events: list[Event] | None = None) -> None:
        self.store = store
        self.session_id = session_id
        self._events: list[Event] = list(events or [])
        self._subscribers: list[Subscriber] = []
        self._pending: list[Event] = []
        """Appended inside ``held()`` and not yet written, oldest first."""
        self._held: ContextVar[bool] = ContextVar(f"held-{session_id}", default=False)
        """Whether the current task (or thread) holds its appends; per task, so concurrent agents
        of one log never hold each other's events."""

    @classmethod
    def open(cls, store: SessionStore, session_id: str) -> SessionLog:
        """Load an existing session (refusing a log that does not validate)."""
        return cls(store, session_id, store.load(session_id))

    @property
    def events(self) -> list[Event]:
        return list(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def append(
        self,
        type: str,
        payload: dict[str, Any] | None = None,
        *,
        turn: int | None = None,
        step: int | None = None,
        agent: str = "main",
    ) -> Event:
        body = payload or {}
        problem = validate_payload(type, body)
        if problem is not None:
            raise ValueError(f"refusing to append to {self.session_id!r}: {problem}")
        event = Event(
            seq=len(self._events) + 1,
            session_id=self.session_id,
            time=time.time(),
            type=type,
            turn=turn,
            step=step,
            agent=agent,
            payload=body,
        )
        if self._held.get():
            self._pending.append(event)
        else:
            self.flush()
            self.store.append(event)
        self._events.append(event)
        for subscriber in list(self._subscribers):
            subscriber(event)
        return event

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold this task's appends until the next ``flush()``; the block's end flushes them.
        Tasks started inside the block hold theirs too (they inherit the task's context)."""
        token = self._held.set(True)
        try:
            yield
        finally:
            self._held.reset(token)
            self.flush()

    @contextmanager
    def unheld(self) -> Iterator[None]:
        """Flush, then write each append at once until the block ends (around a tool's effect,
        so the effect's own events, e.g. a worker's, are on disk as they happen)."""
        self.flush()
        token = self._held.set(False)
        try:
            yield
        finally:
            self._held.reset(token)

    def flush(self) -> None:
        """Write the held events to the store, in one transaction where the store can."""
        if self._pending:
            append_all(self.store, self._pending)

    def last(self, type: str, agent: str | None = None) -> Event | None:
        for event in reversed(self._events):
            if event.type == type and (agent is None or event.agent == agent):
                return event
        return None
