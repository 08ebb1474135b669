"""Which of the lead's tools an editing request declares: only those its phase can use.

``plan_task`` is declared until the plan freezes (a proposed write or final check freezes it), and
``review_criteria`` once this run has applied a change (a review before it supports nothing).
Declaring is not permitting: a call the request did not declare still reaches the tool through
the role's own tools, and the tool refuses it with its own typed feedback (``plan_frozen``), so
nothing here widens or narrows what the lead may do; it only keeps unusable schemas out of the
request. Every other tool is declared in every request, so the prefix stays byte-stable within
a phase.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from protoagent.events.types import Event
from protoagent.hooks.pipeline import BeforeModelHook
from protoagent.models.types import ModelRequest
from protoagent.workflow.criteria import REVIEW_TOOL
from protoagent.workflow.phase_control import run_start
from protoagent.workflow.task import TaskRecord
from protoagent.workflow.workers import file_writes

PLAN_TOOL = "plan_task"
OFFER_STAGE = 4
"""Before the hooks that render or measure the declared tools (compact protocol, admission)."""


def undeclared(events: Sequence[Event], record: TaskRecord) -> frozenset[str]:
    """The lead's tools this phase cannot use."""
    hidden: set[str] = set()
    if record.frozen:
        hidden.add(PLAN_TOOL)
    if not file_writes(events, after_seq=run_start(events)):
        hidden.add(REVIEW_TOOL)
    return frozenset(hidden)


def phase_offer(record: Callable[[], TaskRecord], lead: str = "architect") -> BeforeModelHook:
    """A before-model hook declaring to ``lead`` only the tools its phase can use."""

    def declare(request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        if request.agent_role != lead:
            return request
        hidden = undeclared(events, record())
        if not any(t.name in hidden for t in request.tools):
            return request
        return replace(request, tools=tuple(t for t in request.tools if t.name not in hidden))

    return declare
