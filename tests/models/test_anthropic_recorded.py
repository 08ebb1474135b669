"""The Anthropic provider against recorded Messages API exchanges, replayed by an HTTP transport.

The SDK runs unchanged; only its HTTP transport is swapped for one that answers from
``recordings/`` (SSE bodies in the Messages API streaming format) and keeps the requests sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from protoagent.errors import ConfigError, ProviderError
from protoagent.models.anthropic import AnthropicProvider, from_spec, messages_to_wire
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.models.types import Message, ModelEvent, ModelRequest, ModelTurn, TextDelta, ToolCall, ToolSchema

RECORDINGS = Path(__file__).parent / "recordings"
READ = ToolSchema(
    "read_file",
    "Read a text file.",
    {"type": "object", "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}}},
)


def sdk_http() -> ModuleType:
    """The HTTP client package the installed SDK is built on (``httpx``, or ``httpx2`` in newer SDKs)."""
    import anthropic._base_client as base

    module = getattr(base, "httpx2", None) or base.httpx
    assert isinstance(module, ModuleType)
    return module


class Replay:
    """An HTTP transport handler answering every request with one recorded response."""

    def __init__(self, status: int, body: bytes, headers: dict[str, str] | None = None):
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.requests: list[dict[str, Any]] = []

    @classmethod
    def recording(cls, name: str) -> Replay:
        return cls(200, (RECORDINGS / name).read_bytes(), {"content-type": "text/event-stream"})

    @classmethod
    def error(cls, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> Replay:
        body = json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
        return cls(status, body, {"content-type": "application/json", **(headers or {})})

    def __call__(self, request: Any) -> Any:
        self.requests.append(
            {"url": str(request.url), "headers": dict(request.headers), "json": json.loads(request.content)}
        )
        return sdk_http().Response(self.status, headers=self.headers, content=self.body)


def collect(replay: Replay, request: ModelRequest) -> tuple[list[TextDelta], ModelTurn]:
    async def main() -> list[ModelEvent]:
        http = sdk_http()
        client = http.AsyncClient(transport=http.MockTransport(replay))
        provider = AnthropicProvider(model="claude-recorded", api_key="sk-ant-test", http_client=client)
        try:
            return [event async for event in provider.stream(request)]
        finally:
            await provider.aclose()
            await client.aclose()

    events = asyncio.run(main())
    final = events[-1]
    assert isinstance(final, ModelTurn)
    assert sum(isinstance(e, ModelTurn) for e in events) == 1
    return [e for e in events if isinstance(e, TextDelta)], final


def fails(replay: Replay) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        collect(replay, ModelRequest(system="", messages=(Message("user", "hi"),)))
    return caught.value


def test_streams_text_and_usage() -> None:
    replay = Replay.recording("anthropic_text.sse")
    request = ModelRequest(system="Be brief.", messages=(Message("user", "Hello"),), temperature=0.2)
    deltas, turn = collect(replay, request)
    assert [d.text for d in deltas] == ["Hello", "! How can", " I help?"]
    assert turn.text == "Hello! How can I help?"
    assert turn.stop_reason == "stop"
    assert (turn.usage.input_tokens, turn.usage.cached_input_tokens, turn.usage.output_tokens) == (33, 12, 9)
    (sent,) = replay.requests
    assert sent["url"].endswith("/v1/messages")
    # Older SDKs send ``x-api-key``, newer ones a bearer token.
    assert "sk-ant-test" in (sent["headers"].get("x-api-key", ""), sent["headers"].get("authorization", "")[7:])
    assert sent["json"]["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert sent["json"]["stream"] is True
    assert sent["json"]["temperature"] == 0.2
    hello = {"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}
    assert sent["json"]["messages"] == [{"role": "user", "content": [hello]}]


def test_tool_use_turn() -> None:
    replay = Replay.recording("anthropic_tool_use.sse")
    request = ModelRequest(system="", messages=(Message("user", "Show src/app.py"),), tools=(READ,))
    deltas, turn = collect(replay, request)
    assert "".join(d.text for d in deltas) == turn.text == "I'll read the file first."
    assert turn.tool_calls == (
        ToolCall("toolu_01A09q90qw90lq917835lq9", "read_file", {"path": "src/app.py", "start_line": 1}),
    )
    assert turn.stop_reason == "tool_calls"
    assert turn.usage.output_tokens == 57
    sent = replay.requests[0]["json"]
    assert "system" not in sent
    read = {"name": "read_file", "description": "Read a text file.", "input_schema": READ.parameters}
    assert sent["tools"] == [{**read, "cache_control": {"type": "ephemeral"}}]


def test_history_maps_to_tool_use_and_merged_tool_results() -> None:
    calls = (ToolCall("t1", "read_file", {"path": "a"}), ToolCall("t2", "read_file", {"path": "b"}))
    history = (
        Message("user", "Compare a and b."),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "A", tool_call_id="t1"),
        Message("tool", "B", tool_call_id="t2"),
        Message("user", "Be short."),
    )
    assert messages_to_wire(history) == [
        {"role": "user", "content": [{"type": "text", "text": "Compare a and b."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "B"},
                {"type": "text", "text": "Be short."},
            ],
        },
    ]


def test_json_action_mode_streams_the_final_text() -> None:
    replay = Replay.recording("anthropic_json_final.sse")
    request = ModelRequest(system="Agent.", messages=(Message("user", "Done?"),), tools=(READ,), action_mode="json")
    deltas, turn = collect(replay, request)
    assert turn.text == "The tests pass now."
    assert "".join(d.text for d in deltas) == turn.text
    sent = replay.requests[0]["json"]
    assert "tools" not in sent
    assert sent["system"][0]["text"].startswith("Agent.\n\nReply with exactly one JSON object")


@pytest.mark.parametrize(
    ("replay_factory", "status", "retry_after"),
    [
        (lambda: Replay.error(429, "Rate limited", "rate_limit_error", {"retry-after": "12"}), 429, 12.0),
        (lambda: Replay.error(529, "Overloaded", "overloaded_error"), 529, None),
        (lambda: Replay.error(500, "Internal", "api_error"), 500, None),
    ],
)
def test_transient_errors(replay_factory: Callable[[], Replay], status: int, retry_after: float | None) -> None:
    error = fails(replay_factory())
    assert error.transient
    assert (error.provider, error.status, error.retry_after) == ("anthropic", status, retry_after)


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [(401, "authentication_error", "invalid x-api-key"), (400, "invalid_request_error", "max_tokens: required")],
)
def test_final_errors_carry_the_message(status: int, kind: str, message: str) -> None:
    replay = Replay.error(status, message, kind)
    error = fails(replay)
    assert not error.transient
    assert error.status == status
    assert message in str(error)
    assert len(replay.requests) == 1, "the SDK must not retry by itself"


def test_overloaded_error_inside_the_stream_is_transient() -> None:
    error = fails(Replay.recording("anthropic_overloaded_midstream.sse"))
    assert error.transient
    assert error.status == 529
    assert "Overloaded" in str(error)


def test_no_sdk_retries_on_transient_errors() -> None:
    replay = Replay.error(529, "Overloaded", "overloaded_error")
    fails(replay)
    assert len(replay.requests) == 1


def test_spec_needs_model_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        from_spec("claude-recorded", ModelConfig())
    with pytest.raises(ConfigError, match="needs a model name"):
        from_spec("", ModelConfig())
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    provider = resolve_model("anthropic:claude-recorded", ModelConfig(max_output_tokens=100))
    assert (provider.name, provider.model) == ("anthropic", "claude-recorded")
