"""Chat-completions providers on the official ``openai`` SDK: OpenAI, vLLM, Ollama, llama.cpp servers.

``openai:MODEL`` talks to OpenAI with ``OPENAI_API_KEY``; ``openai-compatible:URL#MODEL`` talks to
any server with the same wire format (key optional, from ``OPENAI_COMPATIBLE_API_KEY``).
The SDK is imported when a provider is built, never at ProtoAgent's start-up.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

from protoagent.errors import ConfigError, ProviderError
from protoagent.models import http_errors
from protoagent.models.json_actions import (
    action_schema,
    json_mode_system,
    new_call_id,
    render_history,
    wants_structured_output,
)
from protoagent.models.registry import ModelConfig
from protoagent.models.sdk_client import LoopBoundClient, client_options, spec_api_key
from protoagent.models.sdk_stream import closing_events, final_text_stream, sdk_deltas
from protoagent.models.tool_arguments import parse_arguments
from protoagent.models.types import Message, ModelEvent, ModelRequest, ToolCall, Usage

JsonFormat = Literal["json_object", "json_object_schema"]
"""How JSON action mode asks for JSON: plain ``json_object`` (OpenAI) or with the action schema
attached as ``response_format.schema`` (llama.cpp servers, which then constrain decoding)."""


def message_to_wire(message: Message) -> dict[str, Any]:
    """One message in the chat-completions format."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        # Content stays a string even when empty: llama.cpp's server rejects null content.
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
            for call in message.tool_calls
        ]
    return wire


def build_request(
    request: ModelRequest, model: str, *, max_tokens_field: str, json_format: JsonFormat
) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for a request (streaming, with usage)."""
    json_mode = request.action_mode == "json"
    structured = wants_structured_output(request)
    system = (
        json_mode_system(request.system, request.tools, tools_in_prompt=request.tools_in_prompt)
        if json_mode and not structured
        else request.system
    )
    history = render_history(request.messages) if json_mode else list(request.messages)
    messages = [{"role": "system", "content": system}] if system else []
    messages.extend(message_to_wire(message) for message in history)
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if structured and json_format == "json_object":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": request.output_schema},
        }
    elif json_mode:
        response_format: dict[str, Any] = {"type": "json_object"}
        if json_format == "json_object_schema":
            response_format["schema"] = request.output_schema if structured else action_schema(request.tools)
        body["response_format"] = response_format
    else:
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
        if request.output_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": request.output_schema},
            }
    if request.max_output_tokens is not None:
        body[max_tokens_field] = request.max_output_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


@dataclass(slots=True)
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StreamState:
    """What a chat-completions stream has said so far: text, tool-call fragments, usage."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None

    def add_chunk(self, chunk: Any) -> str:
        """Take one chunk; returns its new text (possibly empty)."""
        if getattr(chunk, "usage", None) is not None:
            self.usage = usage_from(chunk.usage)
        new_text = ""
        for choice in getattr(chunk, "choices", None) or ():
            delta = choice.delta
            if delta is not None and delta.content:
                new_text += delta.content
            for fragment in (getattr(delta, "tool_calls", None) or ()) if delta is not None else ():
                self._add_fragment(fragment)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        if new_text:
            self.text.append(new_text)
        return new_text

    def _add_fragment(self, fragment: Any) -> None:
        index = fragment.index if fragment.index is not None else len(self.calls)
        pending = self.calls.setdefault(index, _PendingCall())
        if fragment.id:
            pending.id = fragment.id
        function = fragment.function
        if function is not None:
            # Most servers send the name once; some repeat it in every fragment.
            if function.name and function.name != pending.name:
                pending.name += function.name
            if function.arguments:
                pending.arguments.append(function.arguments)

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(id=p.id or new_call_id(), name=p.name, arguments=parse_arguments("".join(p.arguments)))
            for _, p in sorted(self.calls.items())
        )


def usage_from(usage: Any) -> Usage:
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return Usage(
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cached_input_tokens=int(cached or 0),
    )


class OpenAICompatProvider:
    """A chat-completions model behind the ``openai`` SDK, with native tools or JSON actions."""

    def __init__(
        self,
        *,
        name: str,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        max_output_tokens: int | None = None,
        timeout: float | None = None,
        http_client: Any = None,
        extra_options: dict[str, Any] | None = None,
    ):
        try:
            import openai
        except ImportError as error:
            raise ConfigError("the OpenAI providers need the openai SDK; install protoagent[openai]") from error
        self.name = name
        self.model = model
        self.max_output_tokens = max_output_tokens
        self.extra_options = dict(extra_options or {})
        """Extra ``chat.completions.create`` arguments for every request (``tool_choice``, ``seed`` ...)."""
        self._openai = openai
        # Servers on loopback often need no key, but the SDK insists on one.
        self._options = client_options(api_key or "unused", base_url, timeout, http_client)
        self._clients = LoopBoundClient(lambda: self._openai.AsyncOpenAI(**self._options))
        is_openai = name == "openai"
        self._max_tokens_field = "max_completion_tokens" if is_openai else "max_tokens"
        self._json_format: JsonFormat = "json_object" if is_openai else "json_object_schema"
        self._window: int | None = None
        self._window_asked = False

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._clients.aclose()

    def context_window(self) -> int | None:
        """The server's context window when it says (llama.cpp, Ollama); asked once, None for OpenAI."""
        base_url = self._probed_url()
        if base_url is not None and not self._window_asked:
            from protoagent.models.window_probe import probe_context_window

            self._window = probe_context_window(base_url, self.model)
            self._window_asked = True
        return self._window

    async def detect_context_window(self) -> int | None:
        """``context_window``, asked without blocking the event loop (a stop signal ends it at once)."""
        base_url = self._probed_url()
        if base_url is not None and not self._window_asked:
            from protoagent.models.window_probe import detect_context_window

            self._window = await detect_context_window(base_url, self.model)
            self._window_asked = True
        return self._window

    def _probed_url(self) -> str | None:
        """The base URL whose server may say its window; None for OpenAI itself."""
        base_url = self._options.get("base_url")
        return None if self.name == "openai" or not base_url else str(base_url)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.max_output_tokens is None and self.max_output_tokens is not None:
            request = replace(request, max_output_tokens=self.max_output_tokens)
        body = build_request(
            request, self.model, max_tokens_field=self._max_tokens_field, json_format=self._json_format
        )
        body.update(self.extra_options)
        client = self._clients.get()
        state = StreamState()
        final = final_text_stream(request)
        opened = partial(client.chat.completions.create, **body)
        deltas = sdk_deltas(self.name, self._openai, opened, state.add_chunk, final, self._status_error)
        async with aclosing(deltas):
            async for delta in deltas:
                yield delta
        text = "".join(state.text)
        for event in closing_events(
            request, final, text, state.tool_calls(), state.usage, state.finish_reason or "stop"
        ):
            yield event

    def _status_error(self, error: Any) -> ProviderError:
        headers = http_errors.lower_headers(error.response.headers)
        return http_errors.status_error(self.name, error.status_code, headers, error.body, error.message)


def from_openai_spec(rest: str, config: ModelConfig) -> OpenAICompatProvider:
    """``openai:MODEL``, authenticated with ``OPENAI_API_KEY``."""
    key = spec_api_key("openai", rest, "gpt-4.1", "OPENAI_API_KEY")
    return OpenAICompatProvider(name="openai", model=rest, api_key=key, max_output_tokens=config.max_output_tokens)


def from_compatible_spec(rest: str, config: ModelConfig) -> OpenAICompatProvider:
    """``openai-compatible:URL#MODEL``; an optional key comes from ``OPENAI_COMPATIBLE_API_KEY``."""
    url, _, model = rest.partition("#")
    if not url or not model:
        raise ConfigError(
            f"model spec 'openai-compatible:{rest}' needs a base URL and a model name, "
            "for example 'openai-compatible:http://127.0.0.1:8080/v1#gemma'"
        )
    return OpenAICompatProvider(
        name="openai-compatible",
        model=model,
        api_key=os.environ.get("OPENAI_COMPATIBLE_API_KEY"),
        base_url=url,
        max_output_tokens=config.max_output_tokens,
    )
