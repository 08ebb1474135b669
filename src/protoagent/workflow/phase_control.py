"""Who holds control in the edit phase: final verification closes it, a completed failing final
check hands control back to the Graph before the Architect's next request, and a denial stops
the agent it happened to instead of letting it try again. After a denial the Architect gets one
more request, without tools, to answer the person with the denial and its reason in view.

Everything here is read from the session log, so a resumed or reloaded run sees the same state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel

from protoagent.agents.profiles import ARCHITECT
from protoagent.errors import ToolRejected, YieldControl
from protoagent.events.catalog import (
    ModelCompleted,
    RunContract,
    ToolEnded,
    ToolStarted,
    WorkflowContinuing,
    WorkflowPhase,
)
from protoagent.events.log import SessionLog
from protoagent.events.queries import facts
from protoagent.events.types import Event
from protoagent.models.types import ModelRequest
from protoagent.tools.base import AnyTool, ToolContext
from protoagent.tools.pipeline import PreExecuteHook
from protoagent.workflow.facts import WRITE_TOOLS
from protoagent.workflow.signals import Denied, FinalCheckFailed

EDIT_TOOLS = frozenset({"coder", *WRITE_TOOLS})
"""Calls that edit (or start a Coder assignment that edits); refused once editing has closed."""
OPENING_PHASES = frozenset({"edit", "repair", "review"})
"""Phases that open editing; ``review`` is the lead's closing request, which may send one repair."""
MODEL_FREE_AGENTS = frozenset({"verifier"})
"""Agents that run without a model (the Verifier runs the Graph's checks)."""


@dataclass(frozen=True, slots=True)
class Denial:
    """The first denied action of the current run."""

    seq: int
    agent: str
    tool: str
    output: str

    def said(self) -> str:
        """The denial's own reason, as the person or policy gave it."""
        return self.output.removeprefix("denied: ").split(". The action did not run")[0]

    def signal(self) -> Denied:
        """What the agent it stops yields with."""
        return Denied(
            f"denied: {self.tool} by {self.agent} was denied ({self.said()}); a denial stands and is not retried"
        )

    def answer_note(self) -> str:
        """What the Architect is told for its one answer after the denial."""
        return (
            f"{self.tool} by {self.agent} was denied: {self.said()}. The denial stands for this run: no tool "
            "calls, no retry. Answer the person now: what was done, and what the denial leaves undone."
        )


def run_start(events: Sequence[Event]) -> int:
    """The seq where the current run began (its ``run.contract``); 0 when none is recorded."""
    return max((e.seq for e, _ in facts(events, RunContract)), default=0)


def first_denial(events: Sequence[Event], after_seq: int = 0) -> Denial | None:
    """The first action a model proposed that was denied (by a person, a policy or a guard)
    after ``after_seq``. The Graph's own model-free check runs are evidence when denied (nothing
    measured the change), not an agent's action to stop."""
    for e, ended in facts(events, ToolEnded, after=after_seq):
        if ended.status == "denied" and e.agent not in MODEL_FREE_AGENTS:
            return Denial(e.seq, e.agent, ended.tool, ended.output)
    return None


def _answered_since(events: Sequence[Event], seq: int) -> bool:
    """The Architect already had a model reply after ``seq`` (its one answer after a denial)."""
    return any(True for _ in facts(events, ModelCompleted, agent=ARCHITECT, after=seq))


def _is_write(event: Event) -> bool:
    """An applied file change (a write tool's ``tool.ended`` with status ok)."""
    ended = event.fact(ToolEnded)
    return ended is not None and ended.tool in WRITE_TOOLS and ended.status == "ok"


def _phase_opened(events: Sequence[Event]) -> int:
    """The seq of the latest event that opened an edit phase (edit, repair or a continuation)."""
    opened = 0
    for e in events:
        if (phase := e.fact(WorkflowPhase)) is not None and phase.phase in OPENING_PHASES:
            opened = e.seq
        elif e.fact(WorkflowContinuing) is not None:
            opened = e.seq
    return opened


def _final_checks_in_phase(events: Sequence[Event]) -> list[Event]:
    """``run_check`` verify results (not rejected) in the open phase that follow a file change."""
    opened = _phase_opened(events)
    requested: dict[str, object] = {}
    wrote = False
    found = []
    for e in events:
        if (started := e.fact(ToolStarted)) is not None and started.tool == "run_check":
            requested[started.call_id] = started.arguments.get("phase", "verify")
        ended = e.fact(ToolEnded)
        if ended is None:
            continue
        if _is_write(e):
            wrote = True
        elif ended.tool == "run_check" and ended.status != "rejected" and e.seq > opened and wrote:
            phase = ended.data.get("phase") or requested.get(ended.call_id, "verify")
            if phase == "verify":
                found.append(e)
    return found


def editing_closed(events: Sequence[Event]) -> bool:
    """Final verification closes the edit phase for this attempt (until the Graph opens a repair)."""
    return bool(_final_checks_in_phase(events))


def failing_final_check(events: Sequence[Event]) -> Event | None:
    """A final check in the open phase that completed and failed, after the last file change."""
    last_write = max((e.seq for e in events if _is_write(e)), default=0)
    for e in _final_checks_in_phase(events):
        ended = e.fact(ToolEnded)
        if e.seq > last_write and ended is not None and ended.data.get("outcome") == "failed":
            return e
    return None


class PhaseControl:
    """The before-model hook and the pre-execute gate that keep the Graph in charge of phases."""

    @staticmethod
    def hook(request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        """After a denial in this run, no further request of a worker, and one Architect request
        without tools (its answer, the denial in view); no Architect request after a completed
        failing final check."""
        denial = first_denial(events, run_start(events))
        if denial is not None:
            if request.agent_role != ARCHITECT or _answered_since(events, denial.seq):
                raise YieldControl(denial.signal())
            return replace(request, tools=(), system=f"{request.system}\n\n{denial.answer_note()}")
        if request.agent_role == ARCHITECT and failing_final_check(events) is not None:
            raise YieldControl(FinalCheckFailed())
        return request

    @staticmethod
    def gate(log: SessionLog) -> PreExecuteHook:
        """A pipeline pre-execute hook refusing a model's calls after a denial in this run and
        edits once final verification closed the phase."""

        def refuse_closed_edits(tool: AnyTool, args: BaseModel, ctx: ToolContext) -> None:
            events = log.events
            if ctx.agent_role not in MODEL_FREE_AGENTS and first_denial(events, run_start(events)) is not None:
                raise ToolRejected(
                    "an action of this run was denied and the denial stands: no further calls this run. "
                    "Answer the person with a short summary",
                    kind="denied_run",
                )
            if tool.name in EDIT_TOOLS and editing_closed(log.events):
                raise ToolRejected(
                    "final verification closed the edit phase for this attempt; only the workflow opens a "
                    "repair. Finish with a short summary of the outcome",
                    kind="edit_phase_closed",
                )

        return refuse_closed_edits
