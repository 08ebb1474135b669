"""Output of commands while they run, by session and call: what an interface streams to a person.

A command the process tools run is registered here for as long as its call waits on it; a
reader (the web page, through its server) asks for the bytes after an offset and never moves
the offset the model's own observations use.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from protoagent.processes.journal import OutputJournal

LIVE_READ_LIMIT = 64 * 1024
"""Most bytes one read hands back; the reader asks again from the offset it got."""


@dataclass(frozen=True, slots=True)
class LiveRead:
    text: str
    next: int
    """The offset to ask from next time."""
    running: bool
    """False once the call no longer waits on its command (its ``tool.ended`` has the rest)."""


class LiveOutputs:
    """The journals of commands now running, keyed by ``(session_id, call_id)``."""

    def __init__(self) -> None:
        self._journals: dict[tuple[str, str], OutputJournal] = {}
        self._lock = threading.Lock()

    @contextmanager
    def watching(self, session_id: str, call_id: str, journal: OutputJournal) -> Iterator[None]:
        key = (session_id, call_id)
        with self._lock:
            self._journals[key] = journal
        try:
            yield
        finally:
            with self._lock:
                if self._journals.get(key) is journal:
                    del self._journals[key]

    def read(self, session_id: str, call_id: str, start: int, limit: int = LIVE_READ_LIMIT) -> LiveRead:
        with self._lock:
            journal = self._journals.get((session_id, call_id))
        if journal is None:
            return LiveRead("", start, False)
        text, end = journal.peek(max(0, start), min(limit, LIVE_READ_LIMIT))
        return LiveRead(text, end, True)


LIVE_OUTPUT = LiveOutputs()
"""One per process: every session the process runs registers its commands here."""
