"""Provider-neutral model messages, requests and streamed results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ActionMode = Literal["native", "json"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model proposed."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    """One model-visible message, always derived from session events."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """What the model sees of a tool: its name, a description and the input JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one model call, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model call needs; built only from the preset and session events."""

    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    action_mode: ActionMode = "native"
    output_schema: dict[str, Any] | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    tools_in_prompt: bool = False
    """The system text already holds the action format and the tool schemas (the compact
    protocol wrote them); JSON-mode providers must not add their own guide a second time."""
    agent_role: str = "main"
    """The role of the requesting agent (``architect``, ``coder`` ...); scripted models key on it."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A streamed piece of the model's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """The one final result of a model call."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "stop"
    """``stop``, ``tool_calls``, ``length`` ... or ``invalid_action``: a JSON-mode reply that is
    not one whole action (cut off); the loop asks again instead of taking it as an answer."""


ModelEvent = TextDelta | ModelTurn
