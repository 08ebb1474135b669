"""The session log's unit: an immutable, versioned event envelope."""

from __future__ import annotations

import builtins
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from protoagent.events.catalog import CATALOG
from protoagent.events.payloads import Payload

P = TypeVar("P", bound=Payload)

FORMAT_VERSION = 1
"""Stored format version. History: 1 — first release (envelope with seq, session_id, time,
type, turn, step, agent, payload; one SQLite row per event). Typed payload models
(``events.catalog``) read every version-1 payload as stored: a field is only ever added with a
default and an unknown field is kept, so the version changes only when the stored form does."""


class Event(BaseModel):
    """One fact in a session, appended once and never changed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = Field(ge=1)
    """Position in the session, 1-based and gapless."""
    session_id: str
    """The session this event belongs to."""
    time: float
    """Wall-clock time of the append, seconds since the epoch."""
    type: str
    """Dotted event type (``model.completed``, ``tool.ended`` ...); see ``events.catalog``."""
    turn: int | None = None
    """The turn the event belongs to, if any."""
    step: int | None = None
    """The step within the turn (one model call and its tool calls), if any."""
    agent: str = "main"
    """Which agent's conversation the event belongs to (``main``, ``architect``, ``coder`` ...)."""
    payload: dict[str, Any] = Field(default_factory=dict)
    """Type-specific content, validated against the catalog on append and load; read it typed
    with ``fact``."""

    def typed_payload(self) -> Payload:
        """The payload as its type's model, for a ``match`` over event kinds:
        ``match event.typed_payload(): case ToolEnded(tool=tool, status=status): ...``."""
        made = self.fact(CATALOG[self.type])
        assert made is not None  # the catalog names this type's model
        return made

    def fact(self, kind: builtins.type[P]) -> P | None:
        """The payload as ``kind`` (a model of ``events.catalog.CATALOG``), or ``None`` when this
        event is of another type: ``if (ended := e.fact(ToolEnded)) and ended.tool == "run_check"``."""
        if CATALOG.get(self.type) is not kind:
            return None
        key = id(self)
        cached = _FACTS.get(key)
        if cached is not None and cached[0]() is self:
            return cast(P, cached[1])
        made = kind.model_validate(self.payload)
        _FACTS[key] = (weakref.ref(self, _forget(key)), made)
        return made


def _forget(key: int) -> Callable[[weakref.ref[Event]], None]:
    """The callback that drops an event's cached payload once the event is gone."""

    def drop(_: weakref.ref[Event]) -> None:
        _FACTS.pop(key, None)

    return drop


_FACTS: dict[int, tuple[weakref.ref[Event], Payload]] = {}
"""Each live event's validated payload, validated once: an entry goes when its event does."""
