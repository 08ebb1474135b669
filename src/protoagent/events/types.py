"""The session log's unit: an immutable, versioned event envelope."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

FORMAT_VERSION = 1
"""Stored format version. History: 1 — first release (envelope with seq, session_id, time,
type, turn, step, agent, payload; one SQLite row per event)."""


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
    """Type-specific content, validated against the catalog on append and load."""
