"""The agent loop on the scripted model: requests derived from events, retries, loud failures."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protoagent.agents.loop import AgentLoop
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.errors import ConfigError, ProviderError
from protoagent.events import MemoryStore, derive_messages
from protoagent.models.types import ModelEvent, ModelRequest, ModelTurn
from protoagent.testing import ScriptedModel, final_turn, tool_turn

from .tools_for_tests import Echo, WriteNote

PRESET = Preset("test", "You test.", ("echo", "write_note"), max_steps=5)


def session_for(tmp_path: Path, provider, preset: Preset = PRESET, store=None) -> AgentSession:
    spec = SessionSpec(
        repo=tmp_path,
        model="scripted:inline",
        store=store or MemoryStore(),
        preset=preset,
        approval="auto",
        provider=provider,
        tools=[Echo(), WriteNote()],
    )
    return AgentSession.create(spec)


def test_turn_runs_tools_and_finishes_with_the_final_answer(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines([tool_turn("echo", say="checking", text="ping"), final_turn("all done")])
    session = session_for(tmp_path, model)
    outcome = asyncio.run(AgentLoop(session).run_turn("say ping"))
    assert outcome.status == "completed" and outcome.text == "all done" and outcome.steps == 2
    kinds = [e.type for e in session.log.events]
    assert kinds == [
        "session.created",
        "turn.started",
        "user.message",
        "model.requested",
        "model.delta",
        "model.completed",
        "tool.started",
        "tool.ended",
        "model.requested",
        "model.delta",
        "model.completed",
        "turn.ended",
    ]


def test_requests_are_derived_only_from_session_events(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines([tool_turn("echo", text="a"), final_turn("done")])
    session = session_for(tmp_path, model)
    asyncio.run(AgentLoop(session).run_turn("hello"))
    second = model.requests[1]
    assert second.messages == tuple(derive_messages(session.log.events[:8]))
    assert [m.role for m in second.messages] == ["user", "assistant", "tool"]
    assert second.messages[2].content == "a"
    assert second.system == "You test." and [t.name for t in second.tools] == ["echo", "write_note"]


def test_scripted_exhaustion_fails_loudly(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines([tool_turn("echo", text="a")])
    session = session_for(tmp_path, model)
    outcome = asyncio.run(AgentLoop(session).run_turn("go"))
    assert outcome.status == "failed"
    failed = session.log.last("model.failed")
    assert failed is not None and "script is exhausted" in failed.payload["error"]
    assert session.log.last("turn.ended").payload["status"] == "failed"  # type: ignore[union-attr]


def test_scripted_model_picks_turns_by_role_then_unroled(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines(
        [final_turn("for coder", role="coder"), final_turn("anyone"), final_turn("for architect", role="architect")]
    )

    async def ask(role: str) -> str:
        request = ModelRequest(system="", messages=(), agent_role=role)
        events = [e async for e in model.stream(request)]
        return events[-1].text  # type: ignore[union-attr]

    assert asyncio.run(ask("architect")) == "for architect"
    assert asyncio.run(ask("tester")) == "anyone"
    assert asyncio.run(ask("coder")) == "for coder"
    with pytest.raises(ProviderError, match="exhausted"):
        asyncio.run(ask("coder"))


class FlakyThenScripted:
    """Stands where a model stands: fails transiently twice, then answers."""

    name = "flaky"
    model = "flaky-1"

    def __init__(self, failures: int, transient: bool = True) -> None:
        self.failures = failures
        self.transient = transient
        self.inner = ScriptedModel.from_lines([final_turn("recovered")])

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self.failures:
            self.failures -= 1
            raise ProviderError(
                "429 slow down", provider="flaky", status=429, transient=self.transient, retry_after=0.01
            )
        async for item in self.inner.stream(request):
            yield item


def test_transient_provider_errors_retry_with_backoff_and_are_recorded(tmp_path: Path) -> None:
    session = session_for(tmp_path, FlakyThenScripted(2))
    outcome = asyncio.run(AgentLoop(session, backoff_s=0.001).run_turn("go"))
    assert outcome.status == "completed" and outcome.text == "recovered"
    retries = [e for e in session.log.events if e.type == "model.retrying"]
    assert [r.payload["attempt"] for r in retries] == [1, 2]
    assert retries[0].payload["delay_s"] == pytest.approx(0.01)
    requested = [e.payload["attempt"] for e in session.log.events if e.type == "model.requested"]
    assert requested == [1, 2, 3]


def test_non_transient_provider_error_fails_at_once(tmp_path: Path) -> None:
    session = session_for(tmp_path, FlakyThenScripted(1, transient=False))
    outcome = asyncio.run(AgentLoop(session).run_turn("go"))
    assert outcome.status == "failed"
    assert not [e for e in session.log.events if e.type == "model.retrying"]


def test_step_limit_ends_the_turn(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines([tool_turn("echo", text="again")] * 3)
    session = session_for(tmp_path, model, Preset("tight", "x", ("echo",), max_steps=2))
    outcome = asyncio.run(AgentLoop(session).run_turn("loop"))
    assert outcome.status == "limit" and model.remaining == 1


def test_unknown_preset_fails_at_creation_before_any_model_call(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines([final_turn("never")])
    store = MemoryStore()
    spec = SessionSpec(repo=tmp_path, model="scripted:x", store=store, preset="no-such", provider=model)
    with pytest.raises(ConfigError, match="unknown preset 'no-such'"):
        AgentSession.create(spec)
    assert model.requests == [] and store.list() == []


def test_preset_with_an_unknown_tool_fails_at_creation(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines([final_turn("never")])
    broken = Preset("broken", "x", ("echo", "teleport"))
    with pytest.raises(ConfigError, match="teleport"):
        session_for(tmp_path, model, broken)
    assert model.requests == []


def test_unknown_model_provider_names_the_valid_ones(tmp_path: Path) -> None:
    spec = SessionSpec(repo=tmp_path, model="gpt:4", store=MemoryStore(), preset="chat")
    with pytest.raises(ConfigError, match=r"unknown model provider 'gpt'.*anthropic.*scripted"):
        AgentSession.create(spec)


def test_repeating_the_same_call_and_result_ends_the_turn_without_burning_the_budget(tmp_path: Path) -> None:
    bad = tool_turn("echo", wrong="x")
    model = ScriptedModel.from_lines([bad, bad, bad, final_turn("never reached")])
    session = session_for(tmp_path, model)
    outcome = asyncio.run(AgentLoop(session).run_turn("go"))
    assert outcome.status == "limit" and "repeated the same call with the same result 3 times" in outcome.text
    assert model.remaining == 1


def test_a_corrected_call_resets_the_repetition_count(tmp_path: Path) -> None:
    bad = tool_turn("echo", wrong="x")
    model = ScriptedModel.from_lines([bad, bad, tool_turn("echo", text="ok"), bad, bad, final_turn("done")])
    session = session_for(tmp_path, model, Preset("roomy", "x", ("echo",), max_steps=10))
    outcome = asyncio.run(AgentLoop(session).run_turn("go"))
    assert outcome.status == "completed" and outcome.text == "done"


class CutOffThenScripted:
    """Stands where a JSON-mode model stands: its first replies are cut off mid-action."""

    name = "cutoff"
    model = "cutoff-1"

    def __init__(self, cut: int) -> None:
        self.cut = cut
        self.inner = ScriptedModel.from_lines([final_turn("answered")])
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if self.cut:
            self.cut -= 1
            yield ModelTurn(text='{"type":"tool_call","tool":"echo","args":{"text":"aaaa', stop_reason="invalid_action")
            return
        async for item in self.inner.stream(request):
            yield item


def test_cut_off_action_gets_feedback_instead_of_ending_the_turn(tmp_path: Path) -> None:
    model = CutOffThenScripted(1)
    session = session_for(tmp_path, model)
    outcome = asyncio.run(AgentLoop(session).run_turn("go"))
    assert outcome.status == "completed" and outcome.text == "answered"
    assert model.requests[1].messages[-1].content.startswith("Your last reply was cut off")


def test_repeated_cut_off_actions_end_the_turn_as_stuck(tmp_path: Path) -> None:
    session = session_for(tmp_path, CutOffThenScripted(5))
    outcome = asyncio.run(AgentLoop(session).run_turn("go"))
    assert outcome.status == "limit" and "not one whole action" in outcome.text
