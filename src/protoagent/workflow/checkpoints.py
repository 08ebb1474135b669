"""Checkpoints from the log, and rewinding a session to one.

Each user turn N is a checkpoint: the log up to that turn's ``run.ended`` (``--to N``; 0 is the
state before the first turn). A turn whose evidence says its change was verified is a verified
checkpoint (``--to-verified``: the latest one still visible).

A code rewind puts back, for every file the session wrote, the image it had at the checkpoint
(the last afterimage at or before it, else the file's first preimage; a file the session
created is removed). It refuses, changing nothing, when a file no longer holds the session's
last image of it (someone changed it outside the session since) or its text was too large to
be recorded. A conversation rewind hides the later user turns from the model
(``events.rewound``) without deleting them. Both are one ``session.rewound`` event, which also
lists the commands run since the checkpoint and the files checks saw them change: commands'
side effects are not tracked by checkpoints.
"""

from __future__ import annotations

import json
import os
import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from protoagent.errors import ConfigError, ToolRejected
from protoagent.events.catalog import (
    ApprovalRequested,
    RestoredFile,
    SessionCreated,
    SessionRewound,
    ToolEnded,
    ToolStarted,
)
from protoagent.events.log import SessionLog, new_session_id
from protoagent.events.queries import facts
from protoagent.events.rewound import REWOUND_EVENT
from protoagent.events.session_lease import claim_session
from protoagent.events.store import SessionStore, append_all
from protoagent.events.types import Event
from protoagent.workflow.changes import FileWrite, UserTurn, file_writes, user_turns
from protoagent.workspace.files import read_bytes, refuse_protected, revision_of, write_atomic
from protoagent.workspace.paths import open_dir_beneath, open_root

Scope = Literal["code", "conversation", "both"]


class RewindRefused(ConfigError):
    """A rewind that would overwrite work the session did not write, or cannot restore a file."""

    def __init__(self, message: str, conflicts: Sequence[Conflict] = ()) -> None:
        super().__init__(message)
        self.conflicts = tuple(conflicts)


@dataclass(frozen=True, slots=True)
class Conflict:
    path: str
    why: str


@dataclass(frozen=True, slots=True)
class RewindPlan:
    """What a rewind will do; ``apply_rewind`` carries it out."""

    to_turn: int
    scope: Scope
    checkpoint_seq: int
    restores: tuple[RestoredFile, ...] = ()
    hidden_turns: tuple[int, ...] = ()
    hidden_ranges: tuple[tuple[int, int], ...] = ()
    commands_since: tuple[str, ...] = ()
    command_changed_files: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = field(default=())

    def payload(self) -> dict[str, Any]:
        return {
            "to_turn": self.to_turn,
            "scope": self.scope,
            "hidden_turns": list(self.hidden_turns),
            "hidden_ranges": [list(r) for r in self.hidden_ranges],
            "restored": [r.model_dump() for r in self.restores],
            "commands_since": list(self.commands_since),
            "command_changed_files": list(self.command_changed_files),
        }


def hidden_turns(events: Sequence[Event]) -> frozenset[int]:
    """User turns earlier conversation rewinds hid."""
    return frozenset(t for _, rewound in facts(events, SessionRewound) for t in rewound.hidden_turns)


def resolve_turn(events: Sequence[Event], to: int | None, verified: bool) -> int:
    """The checkpoint a rewind names: ``to`` (0..last turn) or the latest visible verified turn."""
    turns = user_turns(events)
    hidden = hidden_turns(events)
    if verified:
        found = [t.number for t in turns if t.verified and t.number not in hidden]
        if not found:
            raise ConfigError("no checkpoint of this session was verified by a check; name one with --to N")
        return found[-1]
    if to is None:
        raise ConfigError(
            "say which checkpoint: --to N (the state after user turn N, 0 before the first) or --to-verified"
        )
    if not 0 <= to <= len(turns):
        raise ConfigError(f"turn {to} is not a checkpoint of this session: choose 0 to {len(turns)}")
    if to in hidden:
        raise ConfigError(f"turn {to} was rewound already; choose a turn that is still visible")
    return to


def plan_rewind(events: Sequence[Event], root: Path, to_turn: int, scope: Scope) -> RewindPlan:
    """The rewind of ``events`` (a session working in ``root``) to the state after ``to_turn``."""
    turns = user_turns(events)
    seq = turns[to_turn - 1].end_seq if to_turn else 0
    restores: list[RestoredFile] = []
    conflicts: list[Conflict] = []
    if scope in ("code", "both"):
        restores, conflicts = _file_plan(file_writes(events), root, seq)
    hidden: list[int] = []
    ranges: list[tuple[int, int]] = []
    if scope in ("conversation", "both"):
        hidden, ranges = _hidden(turns, events, to_turn)
    commands, changed = _commands_since(events, seq)
    return RewindPlan(
        to_turn, scope, seq, tuple(restores), tuple(hidden), tuple(ranges), commands, changed, tuple(conflicts)
    )


def _hidden(
    turns: Sequence[UserTurn], events: Sequence[Event], to_turn: int
) -> tuple[list[int], list[tuple[int, int]]]:
    already = hidden_turns(events)
    hidden, ranges = [], []
    for index, turn in enumerate(turns):
        if turn.number > to_turn and turn.number not in already:
            last = turns[index + 1].start_seq - 1 if index + 1 < len(turns) else events[-1].seq
            hidden.append(turn.number)
            ranges.append((turn.start_seq, last))
    return hidden, ranges


def _file_plan(writes: Sequence[FileWrite], root: Path, seq: int) -> tuple[list[RestoredFile], list[Conflict]]:
    by_path: dict[str, list[FileWrite]] = {}
    for write in writes:
        by_path.setdefault(write.path, []).append(write)
    restores: list[RestoredFile] = []
    conflicts: list[Conflict] = []
    for path in sorted(by_path):
        chain = by_path[path]
        at = [w for w in chain if w.seq <= seq]
        target = (at[-1].after, at[-1].revision_after, at[-1].recorded) if at else _original(chain[0])
        text, target_revision, recorded = target
        expected = chain[-1].revision_after
        if posixpath.isabs(path):
            conflicts.append(Conflict(path, "is outside the primary repository; restore it by hand"))
            continue
        current = current_revision(root, path)
        if current != expected:
            conflicts.append(Conflict(path, "changed outside the session since its last write"))
        elif target_revision != current and not recorded:
            conflicts.append(Conflict(path, "was too large for its text to be recorded in the log"))
        elif target_revision != current:
            restores.append(RestoredFile(path=path, revision_before=current, revision_after=target_revision, text=text))
    return restores, conflicts


def _original(first: FileWrite) -> tuple[str | None, str | None, bool]:
    """A file's image before the session first wrote it."""
    return first.before, first.revision_before, first.recorded or first.revision_before is None


def current_revision(root: Path, path: str) -> str | None:
    """The revision ``path`` holds beneath ``root`` now (``None``: absent)."""
    try:
        with open_root(root) as root_fd:
            return revision_of(read_bytes(root_fd, path))
    except FileNotFoundError:
        return None
    except (OSError, ToolRejected):
        return "unreadable"


def _commands_since(events: Sequence[Event], seq: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Commands that ran after ``seq`` (tools with an ``execute`` effect), each once with how
    often it ran, and the files the checks among them saw change."""
    executed = {asked.call_id for _, asked in facts(events, ApprovalRequested, after=seq) if asked.effect == "execute"}
    arguments = {started.call_id: started.arguments for _, started in facts(events, ToolStarted)}
    counts: dict[str, int] = {}
    changed: set[str] = set()
    for _, ended in facts(events, ToolEnded, after=seq):
        if ended.call_id not in executed:
            continue
        data = ended.data
        line = f"{ended.tool}: {_command_text(data, arguments.get(ended.call_id, {}))}"
        counts[line] = counts.get(line, 0) + 1
        changed.update(str(p) for p in data.get("changed_tracked_files", ()))
    commands = tuple(line if n == 1 else f"{line} ({n} runs)" for line, n in counts.items())
    return commands, tuple(sorted(changed))


def _command_text(data: dict[str, Any], arguments: dict[str, Any]) -> str:
    argv = data.get("argv") or arguments.get("argv")
    if isinstance(argv, list) and argv:
        return shlex.join(str(a) for a in argv)
    return str(arguments.get("command") or json.dumps(arguments, sort_keys=True))


def refusal(plan: RewindPlan) -> RewindRefused:
    listed = "; ".join(f"{c.path} {c.why}" for c in plan.conflicts)
    return RewindRefused(f"rewind refused, nothing was changed: {listed}", plan.conflicts)


def apply_rewind(log: SessionLog, root: Path, plan: RewindPlan) -> Event:
    """Restore the plan's files, then record ``session.rewound``; refuse a plan with conflicts."""
    if plan.conflicts:
        raise refusal(plan)
    if not plan.restores and not plan.hidden_turns:
        raise ConfigError(f"nothing to rewind: the session is already at turn {plan.to_turn}")
    done: list[RestoredFile] = []
    try:
        with open_root(root) as root_fd:
            for restore in plan.restores:
                _restore(root_fd, restore)
                done.append(restore)
    except (OSError, ToolRejected, RewindRefused) as exc:
        if done:  # what was put back is recorded, so the log still knows each file's image
            log.append(REWOUND_EVENT, replace(plan, restores=tuple(done), hidden_turns=(), hidden_ranges=()).payload())
        raise RewindRefused(f"rewind stopped after {len(done)} of {len(plan.restores)} files: {exc}") from None
    return log.append(REWOUND_EVENT, plan.payload())


def rewind_session(store: SessionStore, session_id: str, to: int | None, *, verified: bool, scope: Scope) -> RewindPlan:
    """Rewind a recorded session (holding its lease, so no run appends meanwhile); the plan says
    what was restored and hidden. ``RewindRefused`` lists what blocked it; nothing changed then."""
    lease = claim_session(store, session_id)
    try:
        log = SessionLog.open(store, session_id)
        events = log.events
        created = events[0].fact(SessionCreated)
        root = Path(created.root if created is not None else "")
        if not root.is_dir():
            raise ConfigError(f"session {session_id}'s workspace {str(root)!r} is gone; nothing to restore into")
        plan = plan_rewind(events, root, resolve_turn(events, to, verified), scope)
        apply_rewind(log, root, plan)
        return plan
    finally:
        lease.release()


def _restore(root_fd: int, restore: RestoredFile) -> None:
    refuse_protected(restore.path)
    if restore.text is not None:
        write_atomic(
            root_fd,
            restore.path,
            restore.text.encode("utf-8"),
            create=restore.revision_before is None,
            expected_revision=restore.revision_before,
        )
        return
    parent, name = posixpath.split(restore.path)
    dir_fd = open_dir_beneath(root_fd, parent or ".")
    try:
        live = revision_of(read_bytes(dir_fd, name))
        if live != restore.revision_before:
            raise RewindRefused(f"rewind stopped: {restore.path} changed while it was being restored")
        os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def fork_session(store: SessionStore, session_id: str, to: int | None = None) -> str:
    """A new, independent session whose log is ``session_id``'s up to checkpoint ``to`` (default
    the latest turn); its ``session.created`` names where it came from (``forked_from``; not
    ``parent_session_id``, which marks a delegated session). Files are not touched: the fork
    works in the same workspace, from the files as they are."""
    events = store.load(session_id)
    turns = user_turns(events)
    number = len(turns) if to is None else to
    if not 1 <= number <= len(turns):
        raise ConfigError(f"turn {number} is not a checkpoint to fork from: choose 1 to {len(turns)}")
    end = turns[number - 1].end_seq
    new_id = new_session_id()
    copied = []
    for event in events[:end]:
        payload = event.payload
        if event.seq == 1:
            payload = {**payload, "forked_from": {"session_id": session_id, "turn": number}}
        copied.append(event.model_copy(update={"session_id": new_id, "payload": payload}))
    append_all(store, copied)
    return new_id
