"""Session stores: the ``SessionStore`` protocol, an in-memory store and load validation."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, Self

from protoagent.errors import SessionLoadError
from protoagent.events.catalog import validate_payload
from protoagent.events.types import FORMAT_VERSION, Event

REQUIRED_FIRST_EVENT = "session.created"


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One line of ``sessions list``."""

    session_id: str
    created: float
    event_count: int
    format_version: int
    title: str


class SessionStore(Protocol):
    """Where session logs live. ``append`` is atomic per event; ``load`` validates.

    A store may also offer ``append_many(events)``: the events in order, all or none, in one
    transaction (see ``append_all``)."""

    def append(self, event: Event) -> None: ...

    def load(self, session_id: str) -> list[Event]: ...

    def list(self) -> list[SessionSummary]: ...


def append_all(store: SessionStore, events: list[Event]) -> None:
    """Append ``events`` in order and remove each from the list once it is stored: in one
    transaction where the store offers ``append_many``, else one ``append`` at a time (a failure
    leaves the events not yet stored in the list)."""
    append_many: Callable[[Sequence[Event]], None] | None = getattr(store, "append_many", None)
    if append_many is not None:
        append_many(events)
        events.clear()
        return
    while events:
        store.append(events[0])
        del events[0]


def check_loaded(session_id: str, version: int, events: Sequence[Event]) -> None:
    """Refuse a log whose version, required events or contents are not what we write."""
    if version != FORMAT_VERSION:
        newer = "newer" if version > FORMAT_VERSION else "older"
        raise SessionLoadError(
            session_id,
            f"format version {version} is {newer} than this ProtoAgent's version {FORMAT_VERSION}; "
            "use a ProtoAgent release that writes that version",
        )
    if not events:
        raise SessionLoadError(session_id, "it has no events (no 'session.created')")
    if events[0].type != REQUIRED_FIRST_EVENT:
        raise SessionLoadError(
            session_id, f"the first event is {events[0].type!r}, not the required {REQUIRED_FIRST_EVENT!r}"
        )
    for expected, event in enumerate(events, start=1):
        if event.seq != expected:
            raise SessionLoadError(session_id, f"event sequence has a gap: expected seq {expected}, found {event.seq}")
        problem = validate_payload(event.type, event.payload)
        if problem is not None:
            raise SessionLoadError(session_id, f"malformed event at seq {event.seq}: {problem}")


def event_from_row(session_id: str, row: Sequence[object]) -> Event:
    """One stored row ``(seq, time, type, turn, step, agent, payload JSON text)`` as an event.

    Rows come from a store's own schema, so the envelope is not validated again;
    ``check_loaded`` validates every payload against the catalog.
    """
    seq, time, type_, turn, step, agent, payload_text = row
    try:
        payload = json.loads(str(payload_text))
    except json.JSONDecodeError as exc:
        raise SessionLoadError(session_id, f"malformed event at seq {seq}: payload is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise SessionLoadError(session_id, f"malformed event at seq {seq}: payload is not a JSON object")
    return Event.model_construct(
        seq=seq, session_id=session_id, time=time, type=type_, turn=turn, step=step, agent=agent, payload=payload
    )


class DatabaseStore(ABC):
    """What the database stores share: ``with store:`` closes the store, and ``append`` is an
    ``append_many`` of one event (one transaction)."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def append_many(self, events: Sequence[Event]) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def append(self, event: Event) -> None:
        self.append_many((event,))


class MemoryStore:
    """A store that keeps logs in this process only (tests, embedded short-lived runs)."""

    def __init__(self) -> None:
        self._logs: dict[str, list[Event]] = {}

    def append(self, event: Event) -> None:
        log = self._logs.setdefault(event.session_id, [])
        if event.seq != len(log) + 1:
            raise ValueError(f"event seq {event.seq} does not follow {len(log)} in {event.session_id!r}")
        log.append(event)

    def append_many(self, events: Sequence[Event]) -> None:
        log = self._logs.get(events[0].session_id, []) if events else []
        for offset, event in enumerate(events, start=len(log) + 1):
            if event.session_id != events[0].session_id or event.seq != offset:
                raise ValueError(f"event seq {event.seq} does not follow {offset - 1} in {event.session_id!r}")
        for event in events:
            self.append(event)

    def load(self, session_id: str) -> list[Event]:
        if session_id not in self._logs:
            raise SessionLoadError(session_id, "no such session in this store")
        events = list(self._logs[session_id])
        check_loaded(session_id, FORMAT_VERSION, events)
        return events

    def list(self) -> list[SessionSummary]:
        out = []
        for sid, log in self._logs.items():
            title = str(log[0].payload.get("title", "")) if log else ""
            created = log[0].time if log else 0.0
            out.append(SessionSummary(sid, created, len(log), FORMAT_VERSION, title))
        return sorted(out, key=lambda s: s.created)
