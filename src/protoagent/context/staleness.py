"""Stale reads: an old read result whose file has changed since is marked, at the model boundary.

A result is a *read* when its ``tool.ended`` event records ``data.path`` and ``data.revision``
(``read_file`` does). Any later ``tool.ended`` event, of any agent, that records the same
path with another revision (``data.source_revision`` of an edit, ``data.revision`` of a
newer read) makes it stale. The marker is one line put before the result:

    [stale: dates.py changed since this read; revision now 3f2a9c0d41be]

Markers are sticky: once a call id is marked, the same text is kept in every later request
of that agent, so the request prefix never changes back. Events are only read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from protoagent.events.catalog import ToolEnded
from protoagent.events.types import Event

SHOWN_REVISION_CHARS = 12


@dataclass(frozen=True, slots=True)
class ReadFacts:
    """What a read result recorded: the file, the span and the revision it saw."""

    path: str
    revision: str
    start_line: int | None = None
    end_line: int | None = None


def read_facts(event: Event) -> ReadFacts | None:
    """The read facts of a ``tool.ended`` event, or ``None`` when it did not read a file."""
    ended = event.fact(ToolEnded)
    if ended is None or ended.status != "ok":
        return None
    data = ended.data
    path, revision = data.get("path"), data.get("revision")
    if not isinstance(path, str) or not isinstance(revision, str) or not path or not revision:
        return None
    start, end = data.get("start_line"), data.get("end_line")
    return ReadFacts(path, revision, start if isinstance(start, int) else None, end if isinstance(end, int) else None)


def _revision_seen(event: Event) -> tuple[str, str] | None:
    """``(path, revision)`` that a successful tool result recorded for a file, if any."""
    ended = event.fact(ToolEnded)
    if ended is None or ended.status != "ok":
        return None
    data = ended.data
    path = data.get("path")
    revision = data.get("source_revision") or data.get("revision")
    if isinstance(path, str) and isinstance(revision, str) and path and revision:
        return path, revision
    return None


def latest_revisions(events: Sequence[Event]) -> dict[str, list[tuple[int, str]]]:
    """Per path, every ``(seq, revision)`` the log recorded, in log order."""
    seen: dict[str, list[tuple[int, str]]] = {}
    for event in events:
        found = _revision_seen(event)
        if found is not None:
            seen.setdefault(found[0], []).append((event.seq, found[1]))
    return seen


def stale_marker(read: Event, revisions: Mapping[str, list[tuple[int, str]]]) -> str | None:
    """The marker for a read whose file changed after it, or ``None`` while it is current."""
    facts = read_facts(read)
    if facts is None:
        return None
    later = [revision for seq, revision in revisions.get(facts.path, ()) if seq > read.seq]
    if not later or later[-1] == facts.revision:
        return None
    return f"[stale: {facts.path} changed since this read; revision now {later[-1][:SHOWN_REVISION_CHARS]}]"


def mark_stale(content: str, marker: str) -> str:
    return f"{marker}\n{content}"


__all__ = ["ReadFacts", "latest_revisions", "mark_stale", "read_facts", "stale_marker"]
