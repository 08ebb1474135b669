"""Generic log queries over typed facts: every event of one kind, the last one, the first after a
position. Workflow facts (checks, writes, reports ...) have their queries in ``workflow.facts``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from protoagent.events.types import Event, P


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
