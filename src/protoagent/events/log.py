"""``SessionLog``: appends typed events for one session and tells subscribers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from protoagent.events.catalog import validate_payload
from protoagent.events.store import SessionStore
from protoagent.events.types import Event

Subscriber = Callable[[Event], None]


def new_session_id() -> str:
    return "s_" + uuid.uuid4().hex[:12]


class SessionLog:
    """The append-only log of one session, backed by a store.

    Every model-visible input and every effect becomes an event here first; interfaces
    subscribe to render them. Appending validates the payload against the catalog.
    """

    def __init__(self, store: SessionStore, session_id: str, events: list[Event] | None = None) -> None:
        self.store = store
        self.session_id = session_id
        self._events: list[Event] = list(events or [])
        self._subscribers: list[Subscriber] = []

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
        self.store.append(event)
        self._events.append(event)
        for subscriber in list(self._subscribers):
            subscriber(event)
        return event

    def last(self, type: str, agent: str | None = None) -> Event | None:
        for event in reversed(self._events):
            if event.type == type and (agent is None or event.agent == agent):
                return event
        return None
