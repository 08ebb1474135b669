"""The OpenAI-compatible provider against real local servers: llama.cpp's server for streaming
and tool calls, a tiny loopback HTTP server for error mapping."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from protoagent.errors import ConfigError, ProviderError
from protoagent.models.openai_compat import (
    OpenAICompatProvider,
    build_request,
    from_compatible_spec,
    from_openai_spec,
    message_to_wire,
)
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.models.types import Message, ModelEvent, ModelRequest, ModelTurn, TextDelta, ToolCall, ToolSchema

READ = ToolSchema(
    "read_file",
    "Read a text file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def run_with(provider: OpenAICompatProvider, body: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    async def main() -> Any:
        try:
            return await body()
        finally:
            await provider.aclose()

    return asyncio.run(main())


def collect(provider: OpenAICompatProvider, request: ModelRequest) -> tuple[list[TextDelta], ModelTurn]:
    async def body() -> list[ModelEvent]:
        return [event async for event in provider.stream(request)]

    events: list[ModelEvent] = run_with(provider, body)
    final = events[-1]
    assert isinstance(final, ModelTurn)
    assert sum(isinstance(event, ModelTurn) for event in events) == 1
    return [e for e in events if isinstance(e, TextDelta)], final


def failure(base_url: str, **options: Any) -> ProviderError:
    provider = OpenAICompatProvider(name="openai-compatible", model="m", api_key=None, base_url=base_url, **options)
    request = ModelRequest(system="", messages=(Message("user", "hi"),))
    with pytest.raises(ProviderError) as caught:
        collect(provider, request)
    return caught.value


# Wire format


def test_messages_map_to_chat_completions_wire_format() -> None:
    call = ToolCall("call_1", "read_file", {"path": "a.py"})
    assert message_to_wire(Message("assistant", "", tool_calls=(call,))) == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}
        ],
    }
    assert message_to_wire(Message("tool", "text", tool_call_id="call_1")) == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "text",
    }
    assert message_to_wire(Message("user", "hi")) == {"role": "user", "content": "hi"}


def test_request_body_native_and_json_modes() -> None:
    request = ModelRequest(
        system="sys", messages=(Message("user", "hi"),), tools=(READ,), max_output_tokens=9, temperature=0.1
    )
    native = build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object_schema")
    assert native["messages"][0] == {"role": "system", "content": "sys"}
    assert native["tools"][0]["function"]["name"] == "read_file"
    assert native["stream_options"] == {"include_usage": True}
    assert (native["max_tokens"], native["temperature"]) == (9, 0.1)
    json_request = ModelRequest(system="sys", messages=request.messages, tools=(READ,), action_mode="json")
    body = build_request(json_request, "m", max_tokens_field="max_completion_tokens", json_format="json_object")
    assert "tools" not in body
    assert body["response_format"] == {"type": "json_object"}
    assert '"type": "tool_call"' in body["messages"][0]["content"]


def test_a_json_mode_request_with_its_own_output_schema_asks_for_that_json_not_an_action() -> None:
    schema = {"type": "object", "properties": {"surface": {"enum": ["question", "editing"]}}, "required": ["surface"]}
    request = ModelRequest(
        system='Classify. Reply with JSON {"surface": S}.',
        messages=(Message("user", "where is x?"),),
        action_mode="json",
        output_schema=schema,
        max_output_tokens=32,
    )
    server = build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object_schema")
    assert server["response_format"] == {"type": "json_object", "schema": schema}
    assert server["messages"][0]["content"] == 'Classify. Reply with JSON {"surface": S}.'
    hosted = build_request(request, "m", max_tokens_field="max_completion_tokens", json_format="json_object")
    assert hosted["response_format"]["json_schema"]["schema"] == schema
    assert '"type": "final"' not in json.dumps(hosted)


def test_specs_need_model_url_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        from_openai_spec("gpt-4.1", ModelConfig())
    with pytest.raises(ConfigError, match="needs a base URL and a model name"):
        from_compatible_spec("http://127.0.0.1:1/v1", ModelConfig())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = resolve_model("openai:gpt-4.1")
    assert (provider.name, provider.model) == ("openai", "gpt-4.1")
    compatible = resolve_model("openai-compatible:http://127.0.0.1:8080/v1#gemma")
    assert (compatible.name, compatible.model) == ("openai-compatible", "gemma")


# A real llama.cpp server. Its default sampling temperature (0.8) let the 135M model answer a tool
# result with no text in about one request of three; greedy decoding answers the same way each time.


@pytest.mark.slow
@pytest.mark.local_model
def test_streams_text_from_a_real_server(llama_server: str) -> None:
    provider = from_compatible_spec(f"{llama_server}#embedded", ModelConfig())
    request = ModelRequest(
        system="Answer briefly.", messages=(Message("user", "Say hello."),), max_output_tokens=24, temperature=0.0
    )
    deltas, turn = collect(provider, request)
    assert len(deltas) > 1
    assert "".join(d.text for d in deltas) == turn.text
    assert turn.text.strip()
    assert turn.stop_reason in ("stop", "length")
    assert turn.tool_calls == ()


@pytest.mark.slow
@pytest.mark.local_model
def test_tool_call_round_trip_with_a_real_server(llama_server: str) -> None:
    forced = {"tool_choice": {"type": "function", "function": {"name": "read_file"}}}
    provider = OpenAICompatProvider(
        name="openai-compatible", model="embedded", api_key=None, base_url=llama_server, extra_options=forced
    )
    first = ModelRequest(
        system="You can read files.",
        messages=(Message("user", "Read the file notes.txt."),),
        tools=(READ,),
        max_output_tokens=64,
        temperature=0.0,
    )
    _, turn = collect(provider, first)
    (call,) = turn.tool_calls
    assert call.name == "read_file"
    assert isinstance(call.arguments, dict)
    assert call.id

    follow_up = OpenAICompatProvider(name="openai-compatible", model="embedded", api_key=None, base_url=llama_server)
    second = ModelRequest(
        system=first.system,
        messages=(
            *first.messages,
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "Buy milk.", tool_call_id=call.id),
        ),
        tools=(READ,),
        max_output_tokens=24,
        temperature=0.0,
    )
    deltas, answer = collect(follow_up, second)
    assert answer.text == "".join(d.text for d in deltas)
    assert answer.text.strip() or answer.tool_calls


@pytest.mark.slow
@pytest.mark.local_model
def test_json_action_mode_is_schema_constrained_by_the_server(llama_server: str) -> None:
    provider = from_compatible_spec(f"{llama_server}#embedded", ModelConfig())
    request = ModelRequest(
        system="You are a coding agent.",
        messages=(Message("user", "Read the file src/app.py."),),
        tools=(READ,),
        action_mode="json",
        max_output_tokens=80,
        temperature=0.0,
    )
    _, turn = collect(provider, request)
    if turn.tool_calls:
        (call,) = turn.tool_calls
        assert call.name == "read_file"
        assert "path" in call.arguments
    else:
        assert turn.text and not turn.text.lstrip().startswith("{")


# Error mapping against a loopback HTTP server


@pytest.mark.parametrize(("status", "retry_after"), [(429, 7.0), (500, None), (503, 0.0)])
def test_transient_statuses(error_server: str, status: int, retry_after: float | None) -> None:
    error = failure(f"{error_server}/{status}")
    assert error.transient
    assert error.status == status
    assert error.retry_after == retry_after
    assert error.provider == "openai-compatible"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "messages: field required"),
        (401, "Incorrect API key provided"),
        (403, "forbidden"),
        (404, "not found"),
        (422, "unprocessable"),
    ],
)
def test_final_statuses_carry_the_provider_message(error_server: str, status: int, message: str) -> None:
    error = failure(f"{error_server}/{status}")
    assert not error.transient
    assert error.status == status
    assert error.retry_after is None
    assert message in str(error)


def test_connection_refused_is_transient() -> None:
    from tests.models.conftest import free_port

    error = failure(f"http://127.0.0.1:{free_port()}/v1")
    assert error.transient
    assert error.status is None


def test_timeout_is_transient(error_server: str) -> None:
    error = failure(f"{error_server}/slow", timeout=0.3)
    assert error.transient
    assert error.status is None


def test_stream_broken_midway_is_transient(error_server: str) -> None:
    error = failure(f"{error_server}/reset")
    assert error.transient


def test_retry_after_is_sent_once_not_retried_by_the_sdk(error_server: str) -> None:
    # The SDK would retry 429 by itself; max_retries=0 leaves that to the agent loop.
    provider = OpenAICompatProvider(name="openai-compatible", model="m", api_key=None, base_url=f"{error_server}/429")
    assert json.dumps(provider._options["max_retries"]) == "0"
