"""A before-model hook that yields hands the application a typed signal: the turn ends
``yielded`` before the next model request, the outcome carries the signal itself, and the log
records its reason as the turn's end."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from protoagent.agents.loop import AgentLoop
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.errors import YieldControl
from protoagent.events import MemoryStore
from protoagent.events.types import Event
from protoagent.hooks.pipeline import HookRegistration
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel, final_turn, tool_turn
from protoagent.workflow.signals import LeadStuck

from .tools_for_tests import Echo


def _stuck_after_one_reply(request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
    if any(e.type == "model.completed" for e in events):
        raise YieldControl(LeadStuck("the same assignment again"))
    return request


def test_a_yield_ends_the_turn_with_its_typed_signal_before_the_next_request(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines([tool_turn("echo", text="a"), final_turn("never asked")])
    spec = SessionSpec(
        repo=tmp_path,
        model="scripted:inline",
        store=MemoryStore(),
        preset=Preset("test", "You test.", ("echo",), max_steps=5),
        approval="auto",
        provider=model,
        tools=[Echo()],
    )
    session = AgentSession.create(spec)
    session.hooks.register(HookRegistration("progress", _stuck_after_one_reply))
    outcome = asyncio.run(AgentLoop(session).run_turn("go"))
    assert outcome.status == "yielded" and outcome.signal == LeadStuck("the same assignment again")
    assert outcome.text == "stuck: the same assignment again" and outcome.steps == 2
    events = session.log.events
    assert sum(1 for e in events if e.type == "model.requested") == 1
    ended = events[-1]
    assert ended.type == "turn.ended"
    assert (ended.payload["status"], ended.payload["reason"]) == ("completed", "stuck: the same assignment again")
