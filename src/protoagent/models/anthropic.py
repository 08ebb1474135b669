"""Anthropic Messages API provider on the official ``anthropic`` SDK (``anthropic:MODEL``).

The system prompt is the top-level ``system`` parameter; tool calls are ``tool_use`` blocks and
their results ``tool_result`` blocks, consecutive ones merged into one user message.
Prompt caching: ``cache_control`` breakpoints (at most the API's four) mark the system block, the
last tool, the last block of the newest message and the last block of the user turn that ended the
previous request of the conversation (see ``mark_cache_breakpoints``).
The SDK is imported when a provider is built, never at ProtoAgent's start-up.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from protoagent.errors import ConfigError, ProviderError
from protoagent.models import http_errors
from protoagent.models.json_actions import (
    json_mode_system,
    render_history,
    wants_structured_output,
)
from protoagent.models.registry import ModelConfig
from protoagent.models.sdk_client import LoopBoundClient, client_options, spec_api_key
from protoagent.models.sdk_stream import closing_events, final_text_stream, sdk_deltas
from protoagent.models.tool_arguments import parse_arguments
from protoagent.models.types import Message, ModelEvent, ModelRequest, ToolCall, Usage

DEFAULT_MAX_OUTPUT_TOKENS = 4096
CACHE_CONTROL = {"type": "ephemeral"}
MAX_CACHE_BREAKPOINTS = 4
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
# Error types an SSE ``error`` event can carry mid-stream (its HTTP status was 200).
TRANSIENT_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


def message_blocks(message: Message) -> list[dict[str, Any]]:
    """The content blocks of one message."""
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}]
    blocks: list[dict[str, Any]] = []
    if message.content:
        text = f"[system] {message.content}" if message.role == "system" else message.content
        blocks.append({"type": "text", "text": text})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
    return blocks


def messages_to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Alternating user/assistant messages; tool results and later user text join one user turn."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = message_blocks(message)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return wire


def build_request(request: ModelRequest, model: str, default_max_tokens: int) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` (streaming)."""
    json_mode = request.action_mode == "json"
    system = (
        json_mode_system(request.system, request.tools, tools_in_prompt=request.tools_in_prompt)
        if json_mode and not wants_structured_output(request)
        else request.system
    )
    history = render_history(request.messages) if json_mode else request.messages
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_output_tokens or default_max_tokens,
        "messages": messages_to_wire(history),
        "stream": True,
    }
    if system:
        body["system"] = [{"type": "text", "text": system}]
    if request.tools and not json_mode:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
        ]
    mark_cache_breakpoints(body)
    if request.temperature is not None:
        # Newer SDKs no longer take ``temperature`` as an argument; the body field still works.
        body["extra_body"] = {"temperature": request.temperature}
    return body


def mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Put ``cache_control`` on the prefix that stays byte-stable across the requests of one conversation.

    The system block and the last tool never change within a run. Of the messages, the newest
    block is marked so the next request (which extends this one) reads the whole prompt back
    from the cache; the user turn before the latest assistant reply, where the previous request
    ended, is marked too, so this request reads that prefix exactly rather than relying on the
    API's short look-back from the newest breakpoint (a tool turn can add many blocks).
    """
    marks: list[dict[str, Any]] = []
    if body.get("system"):
        marks.append(body["system"][-1])
    if body.get("tools"):
        marks.append(body["tools"][-1])
    messages = body["messages"]
    if messages:
        marks.append(messages[-1]["content"][-1])
    if len(messages) >= 3 and messages[-3]["role"] == "user":
        marks.append(messages[-3]["content"][-1])
    for block in marks[:MAX_CACHE_BREAKPOINTS]:
        block["cache_control"] = dict(CACHE_CONTROL)


@dataclass(slots=True)
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StreamState:
    """What a Messages stream has said so far."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    fresh_input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_created_tokens: int = 0
    output_tokens: int = 0
    stop_reason: str | None = None

    def add_event(self, event: Any) -> str:
        """Take one stream event; returns its new text (possibly empty)."""
        kind = getattr(event, "type", "")
        if kind == "message_start":
            self._add_usage(event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            self.blocks[event.index] = _Block(
                kind=block.type, id=getattr(block, "id", ""), name=getattr(block, "name", "")
            )
            text = getattr(block, "text", "") if block.type == "text" else ""
            if text:
                self.blocks[event.index].parts.append(text)
            return text or ""
        elif kind == "content_block_delta":
            return self._add_delta(event.index, event.delta)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self._add_usage(event.usage)
        return ""

    def _add_delta(self, index: int, delta: Any) -> str:
        block = self.blocks.setdefault(index, _Block(kind="text"))
        if delta.type == "text_delta":
            block.parts.append(delta.text)
            return str(delta.text)
        if delta.type == "input_json_delta":
            block.parts.append(delta.partial_json)
        return ""

    def _add_usage(self, usage: Any) -> None:
        """Counts from ``message_start`` then ``message_delta``; a field the later event leaves out keeps its value."""
        if usage is None:
            return
        if getattr(usage, "input_tokens", None) is not None:
            self.fresh_input_tokens = int(usage.input_tokens)
        if getattr(usage, "cache_read_input_tokens", None) is not None:
            self.cache_read_tokens = int(usage.cache_read_input_tokens)
        if getattr(usage, "cache_creation_input_tokens", None) is not None:
            self.cache_created_tokens = int(usage.cache_creation_input_tokens)
        if getattr(usage, "output_tokens", None) is not None:
            self.output_tokens = int(usage.output_tokens)

    def text(self) -> str:
        return "".join("".join(b.parts) for _, b in sorted(self.blocks.items()) if b.kind == "text")

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(id=b.id, name=b.name, arguments=parse_arguments("".join(b.parts)))
            for _, b in sorted(self.blocks.items())
            if b.kind == "tool_use"
        )

    def usage(self) -> Usage:
        """All input tokens (fresh, read from and written to the cache); cached: those read from it."""
        total = self.fresh_input_tokens + self.cache_read_tokens + self.cache_created_tokens
        return Usage(total, self.output_tokens, self.cache_read_tokens)


class AnthropicProvider:
    """A Claude model behind the ``anthropic`` SDK, with native tools or JSON actions."""

    name = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str | None = None,
        max_output_tokens: int | None = None,
        timeout: float | None = None,
        http_client: Any = None,
    ):
        try:
            import anthropic
        except ImportError as error:
            raise ConfigError(
                "the anthropic provider needs the anthropic SDK; install protoagent[anthropic]"
            ) from error
        self.model = model
        self.max_output_tokens = max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        self._anthropic = anthropic
        self._options = client_options(api_key, base_url, timeout, http_client)
        self._clients = LoopBoundClient(lambda: self._anthropic.AsyncAnthropic(**self._options))

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._clients.aclose()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        body = build_request(request, self.model, self.max_output_tokens)
        client = self._clients.get()
        state = StreamState()
        final = final_text_stream(request)
        opened = partial(client.messages.create, **body)
        deltas = sdk_deltas(self.name, self._anthropic, opened, state.add_event, final, self._status_error)
        async with aclosing(deltas):
            async for delta in deltas:
                yield delta
        stop_reason = STOP_REASONS.get(state.stop_reason or "end_turn", state.stop_reason or "stop")
        for event in closing_events(request, final, state.text(), state.tool_calls(), state.usage(), stop_reason):
            yield event

    def _status_error(self, error: Any) -> ProviderError:
        headers = http_errors.lower_headers(error.response.headers)
        status = int(error.status_code)
        if status < 400:
            # An ``error`` event inside a stream that began with 200 OK.
            body = error.body if isinstance(error.body, dict) else {}
            inner = body.get("error", body)
            kind = inner.get("type", "") if isinstance(inner, dict) else ""
            message = http_errors.error_message(error.body, str(error.message))
            return ProviderError(
                f"{self.name} stream failed ({kind or 'error'}): {message}",
                provider=self.name,
                status=529 if kind == "overloaded_error" else None,
                transient=kind in TRANSIENT_ERROR_TYPES,
            )
        return http_errors.status_error(self.name, status, headers, error.body, str(error.message))


def from_spec(rest: str, config: ModelConfig) -> AnthropicProvider:
    """``anthropic:MODEL``, authenticated with ``ANTHROPIC_API_KEY``."""
    key = spec_api_key("anthropic", rest, "claude-sonnet-5", "ANTHROPIC_API_KEY")
    return AnthropicProvider(model=rest, api_key=key, max_output_tokens=config.max_output_tokens)
