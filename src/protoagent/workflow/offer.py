"""Which of the lead's tools an editing request declares: ``review_criteria`` only from the closing
request of a ``review`` phase on, where the lead is asked to review; and that closing request (a
fresh conversation with the final diff) declares only what a review can use: ``review_criteria``,
``coder`` for a repair assignment, ``run_check`` to verify it and ``read_file``.

Every other tool is declared in every other request of the run, so consecutive requests share a
byte-identical prefix that prompt caches reuse; the one change comes with the closing request,
which only runs whose checks cannot see every criterion get (its new tool list breaks that prefix
anyway, so leaving out the search and planning tools there costs no cached bytes). Declaring is not permitting: a call
the request did not declare still reaches the tool through the role's own tools, and the tool
applies its own rules (a review before the last change supports nothing), so nothing here widens
or narrows what the lead may do; it only keeps a schema out of requests that cannot use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from protoagent.agents.profiles import ARCHITECT
from protoagent.events.catalog import WorkflowPhase
from protoagent.events.queries import facts
from protoagent.events.types import Event
from protoagent.models.types import ModelRequest
from protoagent.workflow.criteria import REVIEW_TOOL
from protoagent.workflow.phase_control import run_start

REVIEW_PHASE = "review"
"""The phase of the lead's one closing request when checks cannot see every criterion."""
REVIEW_DECLARED = frozenset({REVIEW_TOOL, "coder", "run_check", "read_file"})
"""What the closing request declares (of the lead's tools)."""


def review_opened(events: Sequence[Event]) -> bool:
    """This run has opened its ``review`` phase."""
    start = run_start(events)
    return any(phase.phase == REVIEW_PHASE for _, phase in facts(events, WorkflowPhase, after=start))


def declare_for_phase(request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
    """A before-model hook: the Architect is declared ``review_criteria`` once its review opened,
    and its closing request only what a review can use."""
    if request.agent_role != ARCHITECT:
        return request
    if review_opened(events):
        if not _in_review(events):
            return request
        return replace(request, tools=tuple(t for t in request.tools if t.name in REVIEW_DECLARED))
    if not any(t.name == REVIEW_TOOL for t in request.tools):
        return request
    return replace(request, tools=tuple(t for t in request.tools if t.name != REVIEW_TOOL))


def _in_review(events: Sequence[Event]) -> bool:
    """The run's latest phase is its ``review``: the closing request is the one being sent."""
    phases = [phase.phase for _, phase in facts(events, WorkflowPhase, after=run_start(events))]
    return bool(phases) and phases[-1] == REVIEW_PHASE
