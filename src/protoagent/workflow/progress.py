"""Workflow-level stuck detection: a lead that delegates the same assignment again after it made
no edit, repeats an assignment the checks already failed, or asks Tester the same thing again
with nothing changed, ends the phase with a clear reason instead of spending the run's budget."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from protoagent.agents.profiles import ARCHITECT, CODER, TESTER
from protoagent.errors import YieldControl
from protoagent.events.catalog import WorkerEnded, WorkerStarted
from protoagent.events.queries import facts
from protoagent.events.types import Event
from protoagent.models.types import ModelRequest
from protoagent.workflow.evidence import check_results
from protoagent.workflow.signals import LeadStuck
from protoagent.workflow.workers import file_writes

MAX_IDLE_ASSIGNMENTS = 3
"""Coder assignments in a row that made no edit, however worded, before the phase ends."""
WATCHED_ROLES = frozenset({ARCHITECT, CODER, TESTER})


@dataclass(frozen=True, slots=True)
class Assignment:
    """One Coder assignment as the log records it."""

    task: str
    started: int
    ended: int | None
    changed_files: tuple[str, ...]

    @property
    def key(self) -> str:
        return _normalize(self.task)


def _normalize(task: str) -> str:
    """An assignment's identity: case, punctuation and spacing do not make it a new one."""
    words = (w.strip("./-") for w in re.sub(r"[^\w./-]+", " ", task.lower()).split())
    return " ".join(w for w in words if w)


def assignments(events: Sequence[Event], role: str = "coder") -> list[Assignment]:
    """Every assignment of one worker role in order; the last may still be running."""
    found: list[Assignment] = []
    for e in events:
        if (started := e.fact(WorkerStarted)) is not None and started.role == role:
            found.append(Assignment(started.task, e.seq, None, ()))
        elif (ended := e.fact(WorkerEnded)) is not None and ended.role == role and found and found[-1].ended is None:
            found[-1] = Assignment(found[-1].task, found[-1].started, e.seq, tuple(ended.changed_files))
    return found


def stuck_reason(events: Sequence[Event]) -> str | None:
    """Why the lead is stuck, or ``None`` while it still makes progress."""
    return _coder_stuck(events) or _tester_stuck(events)


def _tester_stuck(events: Sequence[Event]) -> str | None:
    """The same Tester assignment again, with no file change since it was answered."""
    found = assignments(events, "tester")
    latest = found[-1] if found else None
    for before in found[:-1]:
        if latest is None or before.key != latest.key or before.ended is None:
            continue
        if not [w for w in file_writes(events, after_seq=before.ended) if w.seq < latest.started]:
            return f"the lead gave Tester the same assignment again with nothing changed: {_quote(latest.task)}"
    return None


def _coder_stuck(events: Sequence[Event]) -> str | None:
    found = assignments(events)
    if not found:
        return None
    latest, earlier = found[-1], [a for a in found[:-1] if a.ended is not None]
    quoted = _quote(latest.task)
    for before in earlier:
        if before.key != latest.key:
            continue
        if not before.changed_files:
            return f"the lead delegated the same assignment again after a Coder window that made no edit: {quoted}"
        if _checks_failed_after(events, before):
            return f"the lead repeated an assignment whose change the checks already failed: {quoted}"
    idle = _idle_streak(found)
    if idle >= MAX_IDLE_ASSIGNMENTS:
        return f"{idle} Coder assignments in a row made no edit"
    return None


def _idle_streak(found: Sequence[Assignment]) -> int:
    streak = 0
    for assignment in reversed(found):
        if assignment.ended is None:
            continue
        if assignment.changed_files:
            break
        streak += 1
    return streak


def _checks_failed_after(events: Sequence[Event], assignment: Assignment) -> bool:
    """A final check after this assignment (and before the next one started) did not pass."""
    if assignment.ended is None:
        return False
    following = [e.seq for e, _ in facts(events, WorkerStarted, after=assignment.ended)]
    until = min(following, default=None)
    return any(
        r.phase == "verify" and r.outcome != "passed" and r.seq > assignment.ended and (until is None or r.seq < until)
        for r in check_results(events)
    )


def _quote(task: str) -> str:
    flat = " ".join(task.split())
    return repr(flat if len(flat) <= 80 else flat[:77] + "...")


class ProgressMonitor:
    """A before-model hook: once the lead is stuck, neither it nor Coder gets another model call;
    both yield with the reason, and the graph ends the phase."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def hook(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        if request.agent_role not in WATCHED_ROLES:
            return request
        if self.reason is None:
            self.reason = stuck_reason(events)
        if self.reason is not None:
            raise YieldControl(LeadStuck(self.reason))
        return request
