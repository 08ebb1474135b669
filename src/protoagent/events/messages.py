"""``derive_messages``: model history derived from ordered session events, nothing else."""

from __future__ import annotations

from collections.abc import Iterable

from protoagent.events.types import Event
from protoagent.models.types import Message, ToolCall

MODEL_VISIBLE = frozenset({"user.message", "context.injected", "model.completed", "tool.ended"})


def derive_messages(events: Iterable[Event], agent: str = "main") -> list[Message]:
    """The conversation one agent has seen, rebuilt from its events in order.

    ``user.message`` and ``context.injected`` become user messages, ``model.completed`` an
    assistant message with its tool calls, and ``tool.ended`` the tool result. A tool call
    whose result never landed (a crash between them) is closed with an explicit
    "no result recorded" message so providers that require pairs still accept the history.
    """
    messages: list[Message] = []
    pending: dict[str, str] = {}
    for event in events:
        if event.agent != agent or event.type not in MODEL_VISIBLE:
            continue
        payload = event.payload
        if event.type == "model.completed":
            _close_pending(messages, pending)
            calls = tuple(ToolCall(c["id"], c["name"], dict(c["arguments"])) for c in payload.get("tool_calls", ()))
            pending = {c.id: c.name for c in calls}
            messages.append(Message("assistant", payload["text"], tool_calls=calls))
        elif event.type == "tool.ended":
            call_id = payload["call_id"]
            pending.pop(call_id, None)
            messages.append(Message("tool", payload["output"], tool_call_id=call_id, name=payload["tool"]))
        else:
            _close_pending(messages, pending)
            messages.append(Message("user", payload["text"]))
    return messages


def _close_pending(messages: list[Message], pending: dict[str, str]) -> None:
    for call_id, name in pending.items():
        messages.append(Message("tool", "no result recorded for this call", tool_call_id=call_id, name=name))
    pending.clear()
