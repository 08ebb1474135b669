"""Token estimates for whole model requests: a counter protocol, a default estimator, the prompt text.

Figures here are estimates, not exact provider-token guarantees. A provider that knows its own
tokenizer (the embedded llama.cpp model) exposes ``count_tokens(text)`` and is used instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from protoagent.models.types import Message, ModelRequest, ToolSchema

BYTES_PER_TOKEN = 3.5
"""Conservative average for code and English with BPE vocabularies (more tokens, not fewer)."""
MESSAGE_OVERHEAD = 4
"""Role markers and separators a chat template adds around each message."""
SMALL_WINDOW_RESERVE = 1024
"""Output tokens reserved when the request sets no ``max_output_tokens`` and the window is small."""
LARGE_WINDOW_RESERVE = 4096
SMALL_WINDOW_LIMIT = 32_768


class TokenCounter(Protocol):
    """Counts the tokens of one piece of text."""

    def count(self, text: str) -> int: ...


class EstimatingCounter:
    """Deterministic estimate: ``ceil(utf-8 bytes / 3.5)``; no tokenizer needed."""

    def count(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


class ProviderCounter:
    """Counts with a provider's own tokenizer through its ``count_tokens(text)`` method."""

    def __init__(self, count_tokens: Callable[[str], int]) -> None:
        self._count_tokens = count_tokens

    def count(self, text: str) -> int:
        return int(self._count_tokens(text))


def counter_for(provider: object) -> TokenCounter:
    """The provider's own tokenizer when it offers ``count_tokens``, else the default estimate."""
    count_tokens = getattr(provider, "count_tokens", None)
    if callable(count_tokens):
        return ProviderCounter(count_tokens)
    return EstimatingCounter()


def default_output_reserve(window: int) -> int:
    return SMALL_WINDOW_RESERVE if window <= SMALL_WINDOW_LIMIT else LARGE_WINDOW_RESERVE


def output_reserve_for(request: ModelRequest, window: int) -> int:
    """The output space a request needs: its own ``max_output_tokens`` or the default reserve."""
    if request.max_output_tokens is not None:
        return request.max_output_tokens
    return default_output_reserve(window)


def compact_json(value: Any) -> str:
    """The one-line JSON form used wherever a schema or argument object becomes prompt text."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tool_prompt_line(tool: ToolSchema) -> str:
    """How a JSON-mode tool declaration reads as prompt text: one compact JSON object per tool."""
    return compact_json({"name": tool.name, "description": tool.description, "parameters": tool.parameters})


def native_tool_payload(tool: ToolSchema) -> str:
    """The provider payload a native tool declaration adds (OpenAI-style function object)."""
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return compact_json({"type": "function", "function": function})


def tools_text(request: ModelRequest) -> str:
    """Tool declarations as counted once.

    JSON-mode schemas are prompt text; a declaration whose exact prompt line already appears
    in the system text (the compact protocol puts it there) is not counted again. Native
    schemas are counted as the additional provider payload.
    """
    if request.action_mode == "json":
        lines = (tool_prompt_line(t) for t in request.tools)
        return "\n".join(line for line in lines if line not in request.system)
    return "\n".join(native_tool_payload(t) for t in request.tools)


def message_text(message: Message) -> str:
    """A message as counted: its content, the tool name and each tool call with its arguments."""
    parts = [message.content]
    if message.name:
        parts.append(message.name)
    parts.extend(f"{call.name} {compact_json(call.arguments)}" for call in message.tool_calls)
    return "\n".join(parts)


def message_tokens(message: Message, counter: TokenCounter) -> int:
    return counter.count(message_text(message)) + MESSAGE_OVERHEAD


@dataclass(frozen=True, slots=True)
class RequestEstimate:
    """Estimated tokens of one request, by part. ``total`` includes the reserved output space."""

    system: int
    tools: int
    messages: tuple[int, ...]
    output_reserve: int

    @property
    def prompt(self) -> int:
        return self.system + self.tools + sum(self.messages)

    @property
    def total(self) -> int:
        return self.prompt + self.output_reserve


def estimate_request(request: ModelRequest, counter: TokenCounter, *, output_reserve: int = 0) -> RequestEstimate:
    """Estimate every part of a request: system, tool declarations, messages, reserved output."""
    return RequestEstimate(
        system=counter.count(request.system) + MESSAGE_OVERHEAD,
        tools=_tools_tokens(request, counter),
        messages=tuple(message_tokens(m, counter) for m in request.messages),
        output_reserve=output_reserve,
    )


def _tools_tokens(request: ModelRequest, counter: TokenCounter) -> int:
    text = tools_text(request)
    return counter.count(text) if text else 0


def prompt_segments(request: ModelRequest) -> list[str]:
    """The request rendered as ordered text segments: system, tools, then each message.

    This is a provider-neutral stand-in for a chat template; it is what prefix comparisons read.
    """
    segments = [f"<system>\n{request.system}\n", f"<tools>\n{tools_text(request)}\n"]
    for message in request.messages:
        head = message.role if message.tool_call_id is None else f"{message.role} {message.tool_call_id}"
        segments.append(f"<{head}>\n{message_text(message)}\n")
    return segments


def render_prompt(request: ModelRequest) -> str:
    return "".join(prompt_segments(request))


def common_prefix_ratio(prev: ModelRequest, cur: ModelRequest) -> float:
    """Share of the rendered current request that equals the previous request's rendered prefix.

    1.0 means the current request only appends to the previous one (caches fully reused
    up to the new part); the new share of a step is ``1 - ratio``.
    """
    shared = _common_prefix_length(prompt_segments(prev), prompt_segments(cur))
    total = sum(len(s) for s in prompt_segments(cur))
    return shared / total if total else 1.0


def _common_prefix_length(prev: Sequence[str], cur: Sequence[str]) -> int:
    shared = 0
    for old, new in zip(prev, cur, strict=False):
        if old == new:
            shared += len(new)
            continue
        limit = min(len(old), len(new))
        index = 0
        while index < limit and old[index] == new[index]:
            index += 1
        return shared + index
    return shared
