"""Incremental message derivation gives exactly the full derivation, step after step."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protoagent.agents.loop import AgentLoop, Budget
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.events import MemoryStore, SessionLog, derive_messages, new_session_id
from protoagent.events.messages import MessageDeriver
from protoagent.events.types import Event
from protoagent.testing import ScriptedModel, final_turn, tool_turn

from .tools_for_tests import Echo, Explode, WriteNote

FIXTURE = Path(__file__).parent.parent / "fixtures" / "session-v1.jsonl"


def recorded_events() -> list[Event]:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    return [Event.model_validate(json.loads(line)) for line in lines if line.strip()]


def assert_incremental_matches_full(events: list[Event], chunk: int) -> None:
    for agent in sorted({e.agent for e in events}):
        deriver = MessageDeriver(agent)
        for end in [*range(0, len(events), chunk), len(events)]:
            assert deriver.derive(events[:end]) == derive_messages(events[:end], agent), (agent, end)


def test_incremental_derivation_equals_full_on_the_recorded_session() -> None:
    events = recorded_events()
    assert {e.agent for e in events} >= {"architect", "coder", "verifier"}
    for chunk in (1, 2, 7):
        assert_incremental_matches_full(events, chunk)


def varied_session(tmp_path: Path) -> tuple[list[Event], ScriptedModel]:
    """A fresh session through the real loop: several turns, a failing tool, rejected arguments, an
    unknown tool, a multi-call step, injected context, a second agent and a call whose result
    never landed."""
    turns: list[dict[str, Any]] = [
        tool_turn("echo", say="first", text="a"),
        {
            "text": "",
            "tool_calls": [
                {"name": "echo", "arguments": {"text": "b"}},
                {"name": "write_note", "arguments": {"name": "n.txt", "text": "x"}},
            ],
        },
        tool_turn("explode", text="boom"),
        {"text": "", "tool_calls": [{"name": "write_note", "arguments": {"name": "BAD NAME", "text": "x"}}]},
        tool_turn("no_such_tool"),
        final_turn("turn one done"),
        tool_turn("echo", role="helper", text="from the helper"),
        final_turn("helper done", role="helper"),
        tool_turn("echo", text="c"),
        final_turn("turn two done"),
    ]
    model = ScriptedModel.from_lines(turns)
    spec = SessionSpec(
        repo=tmp_path,
        model="scripted:inline",
        store=MemoryStore(),
        preset=Preset("test", "You test.", ("echo", "write_note", "explode"), max_steps=10),
        approval="auto",
        provider=model,
        tools=[Echo(), WriteNote(), Explode()],
    )
    session = AgentSession.create(spec)
    budget = Budget(50)
    main, helper = AgentLoop(session, budget=budget), AgentLoop(session, agent="helper", budget=budget)
    assert asyncio.run(main.run_turn("one")).status == "completed"
    assert asyncio.run(helper.run_turn("help")).status == "completed"
    assert asyncio.run(main.run_turn("two", context="extra context")).status == "completed"
    log = session.log
    dangling = {"id": "lost", "name": "echo", "arguments": {"text": "never ran"}}
    log.append("model.completed", {"text": "", "tool_calls": [dangling]}, agent="main")
    log.append("user.message", {"text": "after a crash"}, agent="main")
    return log.events, model


def test_incremental_derivation_equals_full_on_a_fresh_varied_session(tmp_path: Path) -> None:
    events, _ = varied_session(tmp_path)
    statuses = {e.payload.get("status") for e in events if e.type == "tool.ended"}
    assert len(statuses) > 1 and any(e.type == "context.injected" for e in events)
    for chunk in (1, 3, 5):
        assert_incremental_matches_full(events, chunk)
    tail = derive_messages(events)
    assert tail[-2].content == "no result recorded for this call" and tail[-1].content == "after a crash"


def test_each_request_of_the_loop_holds_the_full_derivation_of_the_log_so_far(tmp_path: Path) -> None:
    events, model = varied_session(tmp_path)
    requested = [i for i, e in enumerate(events) if e.type == "model.requested"]
    assert len(requested) == len(model.requests) == 10
    for index, request in zip(requested, model.requests, strict=True):
        agent = events[index].agent
        assert request.messages == tuple(derive_messages(events[:index], agent))


def test_the_deriver_starts_over_for_another_or_shorter_log(tmp_path: Path) -> None:
    events, _ = varied_session(tmp_path)
    deriver = MessageDeriver("main")
    deriver.derive(events)
    other = SessionLog(MemoryStore(), new_session_id())
    other.append("session.created", {"preset": "p", "model": "m", "root": "/r", "approval_policy": "auto"})
    other.append("user.message", {"text": "another log"})
    assert deriver.derive(other.events) == derive_messages(other.events)
    half = events[: len(events) // 2]
    assert deriver.derive(half) == derive_messages(half)


EVENT_KINDS = st.sampled_from(["user", "context", "calls", "result", "other"])


def build_events(plan: list[tuple[str, str, int]]) -> list[Event]:
    log = SessionLog(MemoryStore(), "s_prop")
    log.append("session.created", {"preset": "p", "model": "m", "root": "/r", "approval_policy": "auto"})
    open_calls: list[str] = []
    for number, (kind, agent, calls) in enumerate(plan):
        if kind == "user":
            log.append("user.message", {"text": f"u{number}"}, agent=agent)
        elif kind == "context":
            log.append("context.injected", {"text": f"c{number}", "source": "workflow"}, agent=agent)
        elif kind == "calls":
            ids = [f"c{number}_{i}" for i in range(calls)]
            tool_calls = [{"id": i, "name": "echo", "arguments": {"text": i}} for i in ids]
            log.append("model.completed", {"text": f"m{number}", "tool_calls": tool_calls}, agent=agent)
            open_calls.extend(ids)
        elif kind == "result" and open_calls:
            call_id = open_calls.pop(0)
            log.append(
                "tool.ended", {"call_id": call_id, "tool": "echo", "status": "ok", "output": call_id}, agent=agent
            )
        else:
            log.append("turn.started", {}, agent=agent)
    return log.events


@settings(max_examples=60, deadline=None)
@given(
    plan=st.lists(st.tuples(EVENT_KINDS, st.sampled_from(["main", "coder"]), st.integers(0, 3)), max_size=40),
    chunks=st.lists(st.integers(1, 6), min_size=1, max_size=20),
)
def test_incremental_derivation_equals_full_for_any_event_order_and_chunking(
    plan: list[tuple[str, str, int]], chunks: list[int]
) -> None:
    events = build_events(plan)
    for agent in ("main", "coder"):
        deriver = MessageDeriver(agent)
        end = 0
        for size in [*chunks, len(events)]:
            end = min(len(events), end + size)
            assert deriver.derive(events[:end]) == derive_messages(events[:end], agent)
