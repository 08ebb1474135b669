"""Generic log queries over typed facts: every event of one kind, the last one, the first after a
position. Workflow facts (checks, writes, reports ...) have their queries in ``workflow.facts``."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence

from protoagent.errors import SessionLoadError
from protoagent.events.payloads import SessionCreated, ToolEnded
from protoagent.events.types import Event, P

RUN_STARTS = frozenset({"session.created", "session.resumed"})
"""The event types that open a run of a session (its first, or a resume)."""


def facts(
    events: Iterable[Event], kind: type[P], *, agent: str | None = None, after: int = 0
) -> Iterator[tuple[Event, P]]:
    """Each event of ``kind`` (with ``seq > after``, of ``agent`` when given), in order, with its
    typed payload."""
    for event in events:
        if event.seq <= after or (agent is not None and event.agent != agent):
            continue
        fact = event.fact(kind)
        if fact is not None:
            yield event, fact


def last_fact(events: Sequence[Event], kind: type[P], *, agent: str | None = None) -> tuple[Event, P] | None:
    """The latest event of ``kind`` (of ``agent`` when given) with its payload, or ``None``."""
    return next(facts(reversed(events), kind, agent=agent), None)


def session_head(events: Sequence[Event]) -> SessionCreated:
    """The session's ``session.created`` payload: what it runs with (a loaded log starts with it)."""
    head = events[0].fact(SessionCreated) if events else None
    if head is None:
        session_id = events[0].session_id if events else "?"
        raise SessionLoadError(session_id, "the log does not start with 'session.created'")
    return head


def starts_run(event: Event) -> bool:
    """Whether ``event`` opens a run of its session (``session.created`` or ``session.resumed``)."""
    return event.type in RUN_STARTS


def tool_results(
    events: Iterable[Event],
    tools: Collection[str],
    *,
    agent: str | None = None,
    after: int = 0,
    status: str | None = None,
) -> Iterator[tuple[Event, ToolEnded]]:
    """Each ``tool.ended`` of one of ``tools`` (with ``status`` when given; of ``agent`` when
    given; with ``seq > after``), in order, with its typed payload."""
    for event, ended in facts(events, ToolEnded, agent=agent, after=after):
        if ended.tool in tools and (status is None or ended.status == status):
            yield event, ended
