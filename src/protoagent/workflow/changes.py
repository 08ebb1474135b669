"""A session's file changes, read from its log alone, and their unified diff.

Every workspace write is a revision-guarded receipt in the log (``tool.ended`` of a write tool:
``path``, ``revision_before``, ``source_revision``, and the ``preimage``/``afterimage`` texts, see
``workspace.images``); a code rewind records the files it restored (``session.rewound``,
``restored``). This module folds those facts, never git and never the working tree:

- ``user_turns(events)``: the session's user turns (each run: ``session.created`` or
  ``session.resumed`` up to its ``run.ended``), numbered from 1;
- ``file_writes(events)``: every image the session put in place, in log order;
- ``session_changes(events, turn=None)``: per file, the first preimage and the last afterimage
  (of the whole session, or of one user turn) and the turns that wrote it;
- ``unified_diff(changes)``: those changes as ``git diff`` writes them (``a/``/``b/`` prefixes,
  ``new file mode``/``deleted file mode``, ``index`` lines with git's blob ids).

A text of ``None`` means the file did not exist. A change whose text was too large to record
(``recorded`` false) has exact revisions but no body.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from protoagent.events.catalog import (
    EvidenceReported,
    RunEnded,
    SessionCreated,
    SessionResumed,
    SessionRewound,
    TaskUpdated,
    ToolEnded,
)
from protoagent.events.queries import starts_run
from protoagent.events.types import Event
from protoagent.workflow.facts import WRITE_TOOLS


@dataclass(frozen=True, slots=True)
class UserTurn:
    """One user turn (one run) of a session: the checkpoint after it is the log at ``end_seq``."""

    number: int
    """1-based, in log order."""
    start_seq: int
    end_seq: int
    """The run's ``run.ended`` (or its last event when the run never ended)."""
    objective: str
    verified: bool
    """Whether the turn's evidence says its change was verified by real checks."""


@dataclass(frozen=True, slots=True)
class FileWrite:
    """One image the session put in place: a write tool's receipt or a rewind's restore."""

    seq: int
    turn: int
    """The user turn it belongs to; 0 before the first turn."""
    path: str
    tool: str
    """The write tool, or ``rewind``."""
    agent: str
    revision_before: str | None
    revision_after: str | None
    """``None``: the file was removed (a rewind of a file the session created)."""
    before: str | None
    after: str | None
    recorded: bool
    """Whether the texts are in the log (false for files over ``workspace.images.MAX_IMAGE_BYTES``)."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """The net change of one file: from its first preimage to its last image."""

    path: str
    revision_before: str | None
    revision_after: str | None
    before: str | None
    after: str | None
    turns: tuple[int, ...]
    """User turns that wrote the file, ascending."""
    recorded: bool

    @property
    def created(self) -> bool:
        return self.revision_before is None and self.revision_after is not None

    @property
    def deleted(self) -> bool:
        return self.revision_before is not None and self.revision_after is None


def user_turns(events: Sequence[Event]) -> list[UserTurn]:
    """The session's user turns in order; each is a checkpoint (``--to N``)."""
    starts = [i for i, e in enumerate(events) if starts_run(e)]
    turns: list[UserTurn] = []
    for number, first in enumerate(starts, start=1):
        after = starts[number] if number < len(starts) else len(events)
        span = events[first:after]
        ended = next((e for e in span if e.fact(RunEnded)), span[-1])
        verified = any((r := e.fact(EvidenceReported)) is not None and r.verified for e in span)
        turns.append(UserTurn(number, span[0].seq, ended.seq, _objective(span), verified))
    return turns


def _objective(span: Sequence[Event]) -> str:
    head = span[0].fact(SessionCreated) or span[0].fact(SessionResumed)
    if head is not None and head.title:
        return head.title
    for event in span:
        if (task := event.fact(TaskUpdated)) is not None and isinstance(task.record.get("objective"), str):
            return str(task.record["objective"])
    return ""


def file_writes(events: Sequence[Event]) -> list[FileWrite]:
    """Every image the session put in place, in log order."""
    out: list[FileWrite] = []
    turn = 0
    for event in events:
        if starts_run(event):
            turn += 1
        elif (ended := event.fact(ToolEnded)) is not None:
            write = _write_receipt(event, ended, turn)
            if write is not None:
                out.append(write)
        elif (rewound := event.fact(SessionRewound)) is not None:
            out += _restores(event, rewound, turn)
    return out


def _write_receipt(event: Event, ended: ToolEnded, turn: int) -> FileWrite | None:
    data: dict[str, Any] = ended.data
    if ended.tool not in WRITE_TOOLS or ended.status != "ok" or "path" not in data:
        return None
    recorded = "afterimage" in data
    return FileWrite(
        seq=event.seq,
        turn=turn,
        path=str(data["path"]),
        tool=ended.tool,
        agent=event.agent,
        revision_before=data.get("revision_before"),
        revision_after=data.get("source_revision"),
        before=data.get("preimage") if recorded else None,
        after=data.get("afterimage") if recorded else None,
        recorded=recorded,
    )


def _restores(event: Event, rewound: SessionRewound, turn: int) -> list[FileWrite]:
    return [
        FileWrite(
            seq=event.seq,
            turn=turn,
            path=r.path,
            tool="rewind",
            agent=event.agent,
            revision_before=r.revision_before,
            revision_after=r.revision_after,
            before=None,
            after=r.text,
            recorded=True,
        )
        for r in rewound.restored
    ]


def session_changes(events: Sequence[Event], turn: int | None = None) -> list[FileChange]:
    """Per file (sorted by path), the change of the whole session or of user turn ``turn``.

    A file whose images end where they began (written, then restored) is left out.
    """
    everything = file_writes(events)
    writes = [w for w in everything if turn is None or w.turn == turn]
    by_path: dict[str, list[FileWrite]] = {}
    for write in writes:
        by_path.setdefault(write.path, []).append(write)
    changes = []
    for path in sorted(by_path):
        chain = by_path[path]
        first, last = chain[0], chain[-1]
        if first.revision_before == last.revision_after:
            continue
        before, before_recorded = _text_before(everything, first)
        changes.append(
            FileChange(
                path=path,
                revision_before=first.revision_before,
                revision_after=last.revision_after,
                before=before,
                after=last.after,
                turns=tuple(sorted({w.turn for w in chain})),
                recorded=before_recorded and last.recorded,
            )
        )
    return changes


def _text_before(writes: Sequence[FileWrite], first: FileWrite) -> tuple[str | None, bool]:
    """The text ``first`` replaced, and whether it is known. A write tool records its preimage; a
    rewind's restore does not, so its preimage is the previous image of the same path."""
    if first.tool != "rewind":
        return first.before, first.recorded
    earlier = [w for w in writes if w.path == first.path and w.seq < first.seq]
    if not earlier:
        return None, first.revision_before is None
    return earlier[-1].after, earlier[-1].recorded


def unified_diff(changes: Iterable[FileChange]) -> str:
    """The changes as ``git diff`` writes them; a change without recorded text says so in one line."""
    return "".join(_file_diff(change) for change in changes)


def _file_diff(change: FileChange) -> str:
    path = change.path
    head = [f"diff --git a/{path} b/{path}\n"]
    before_id = _blob_id(change.before) if change.before is not None else "0" * 7
    after_id = _blob_id(change.after) if change.after is not None else "0" * 7
    if change.created:
        head += ["new file mode 100644\n", f"index {before_id}..{after_id}\n"]
    elif change.deleted:
        head += ["deleted file mode 100644\n", f"index {before_id}..{after_id}\n"]
    else:
        head.append(f"index {before_id}..{after_id} 100644\n")
    if not change.recorded:
        return "".join(head) + "Binary files differ (the text was too large to record in the log)\n"
    old = "/dev/null" if change.created else f"a/{path}"
    new = "/dev/null" if change.deleted else f"b/{path}"
    body = difflib.unified_diff(_lines(change.before), _lines(change.after), old, new)
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body]
    return "".join(head + lines) if lines else ""


def _lines(text: str | None) -> list[str]:
    """Lines split at ``\n`` only (as git does), each keeping its end."""
    parts = (text or "").split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _blob_id(text: str) -> str:
    """The abbreviated id git gives a blob of ``text``."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()[:7]
