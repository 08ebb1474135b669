"""The workflow's control signals: why an agent's turn handed control back to the Graph.

A before-model hook raises ``YieldControl(signal)``; the agent loop ends the turn ``yielded``
with the signal in ``TurnOutcome.signal``; the Graph decides the phase's next step with one
``match`` over it (``WorkflowGraph._transition``). The sealed set, and who raises each:

    Verified          every selected check passed after the last change   closing.py
    FinalCheckFailed  a completed final check failed: the Graph repairs    phase_control.py
    Denied            an action of this run was denied; the agent stops    phase_control.py
    LeadStuck         the lead repeats itself without progress             progress.py
    WorkerTurnLimit   a Coder assignment ran out of windows unfinished     workers.py
    Reported          a worker recorded its report: its turn is over       workers.py

``reason`` is the line the turn's end records (``turn.ended`` reason, ``workflow.returned``
reason): the same text the log carried before signals were typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class Verified:
    """Passing final verification closed the edit phase; the Architect gets no summary request."""

    reason: ClassVar[str] = "final_verification_passed"


@dataclass(frozen=True, slots=True)
class FinalCheckFailed:
    """A completed final check failed: the Graph, not the Architect, decides on a repair."""

    reason: ClassVar[str] = "final_check_failed"


@dataclass(frozen=True, slots=True)
class Denied:
    """An action of this run was denied: the agent stops instead of trying again."""

    reason: str
    """What was denied, by whom and why (``denied: <tool> by <agent> was denied (...)``)."""


@dataclass(frozen=True, slots=True)
class LeadStuck:
    """The lead delegates or asks the same thing again without progress: the phase ends."""

    detail: str
    """Why the lead is stuck, as ``workflow.stuck`` records it."""

    @property
    def reason(self) -> str:
        return f"stuck: {self.detail}"


@dataclass(frozen=True, slots=True)
class WorkerTurnLimit:
    """The Architect's Coder assignment ran out of windows unfinished: unfinished work the Graph
    may continue."""

    reason: ClassVar[str] = "worker_turn_limit"


@dataclass(frozen=True, slots=True)
class Reported:
    """A worker recorded its report, so it gets no further model request."""

    reason: ClassVar[str] = "report_recorded"


WorkflowSignal = Verified | FinalCheckFailed | Denied | LeadStuck | WorkerTurnLimit | Reported
"""Every signal the workflow's hooks raise."""
