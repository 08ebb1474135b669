"""``derive_messages``: model history derived from ordered session events, nothing else.

``derive_messages`` rebuilds one agent's history from a whole log; ``MessageDeriver`` keeps the
same derivation up to date as the log grows, so a step costs the new events, not the whole
session. Both fold events with the same rules; the full derivation is the reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
        if event.agent == agent and event.type in MODEL_VISIBLE:
            _fold(messages, pending, event)
    return messages


class MessageDeriver:
    """``derive_messages`` for one agent, kept up to date as an append-only log grows.

    ``derive(events)`` folds only the events added since the last call. If ``events`` is not
    the log seen before plus new events (another log, or a shorter one), it starts over from
    the first event, so the result always equals ``derive_messages(events, agent)``.
    """

    def __init__(self, agent: str = "main") -> None:
        self.agent = agent
        self._messages: list[Message] = []
        self._pending: dict[str, str] = {}
        self._seen = 0
        self._last: Event | None = None
        """The last event folded (or skipped): how a later call knows it extends the same log."""

    def derive(self, events: Sequence[Event]) -> list[Message]:
        if not self._extends(events):
            self._messages, self._pending, self._seen, self._last = [], {}, 0, None
        agent = self.agent
        for event in events[self._seen :]:
            if event.agent == agent and event.type in MODEL_VISIBLE:
                _fold(self._messages, self._pending, event)
        if len(events) > self._seen:
            self._seen = len(events)
            self._last = events[-1]
        return list(self._messages)

    def _extends(self, events: Sequence[Event]) -> bool:
        if self._last is None:
            return True
        if len(events) < self._seen:
            return False
        seen = events[self._seen - 1]
        return seen is self._last or (seen.session_id, seen.seq) == (self._last.session_id, self._last.seq)


def _fold(messages: list[Message], pending: dict[str, str], event: Event) -> None:
    """Add one model-visible event of the agent to its history (``pending``: open tool calls)."""
    payload = event.payload
    if event.type == "model.completed":
        _close_pending(messages, pending)
        calls = tuple(ToolCall(c["id"], c["name"], dict(c["arguments"])) for c in payload.get("tool_calls", ()))
        pending.update((c.id, c.name) for c in calls)
        messages.append(Message("assistant", payload["text"], tool_calls=calls))
    elif event.type == "tool.ended":
        call_id = payload["call_id"]
        pending.pop(call_id, None)
        messages.append(Message("tool", payload["output"], tool_call_id=call_id, name=payload["tool"]))
    else:
        _close_pending(messages, pending)
        messages.append(Message("user", payload["text"]))


def _close_pending(messages: list[Message], pending: dict[str, str]) -> None:
    for call_id, name in pending.items():
        messages.append(Message("tool", "no result recorded for this call", tool_call_id=call_id, name=name))
    pending.clear()
