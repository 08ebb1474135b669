"""``derive_messages``: model history derived from ordered session events, nothing else.

``derive_messages`` rebuilds one agent's history from a whole log; ``MessageDeriver`` keeps the
same derivation up to date as the log grows, so a step costs the new events, not the whole
session. Both fold events with the same rules; the full derivation is the reference.

A ``context.compacted`` event replaces the messages derived from its event range by one summary
message (``apply_compaction``): the log is never rewritten, and a reload derives exactly what
the model was shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from protoagent.events.rewound import REWOUND_EVENT, apply_rewind
from protoagent.events.types import Event
from protoagent.models.types import Message, ToolCall

COMPACTED_EVENT = "context.compacted"
MODEL_VISIBLE = frozenset({"user.message", "context.injected", "model.completed", "tool.ended", COMPACTED_EVENT})
SUMMARY_MARK = "[conversation summary]"


@dataclass(slots=True)
class _History:
    """Messages so far, each with the ``seq`` of the event it stands for (its origin)."""

    messages: list[Message] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    pending: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Open tool calls: call id → (tool name, origin of the assistant message that made it)."""

    def add(self, message: Message, origin: int) -> None:
        self.messages.append(message)
        self.origins.append(origin)


def derive_messages(events: Iterable[Event], agent: str = "main") -> list[Message]:
    """The conversation one agent has seen, rebuilt from its events in order.

    ``user.message`` and ``context.injected`` become user messages, ``model.completed`` an
    assistant message with its tool calls, and ``tool.ended`` the tool result. A tool call
    whose result never landed (a crash between them) is closed with an explicit
    "no result recorded" message so providers that require pairs still accept the history.
    A ``context.compacted`` event puts its summary in place of the range it replaced.
    """
    history = _History()
    for event in events:
        if _concerns(event, agent):
            _fold(history, event)
    return list(history.messages)


def derive_with_origins(events: Iterable[Event], agent: str = "main") -> list[tuple[int, Message]]:
    """``derive_messages`` with the ``seq`` each message stands for (a summary: its range's first)."""
    history = _History()
    for event in events:
        if _concerns(event, agent):
            _fold(history, event)
    return list(zip(history.origins, history.messages, strict=True))


class MessageDeriver:
    """``derive_messages`` for one agent, kept up to date as an append-only log grows.

    ``derive(events)`` folds only the events added since the last call. If ``events`` is not
    the log seen before plus new events (another log, or a shorter one), it starts over from
    the first event, so the result always equals ``derive_messages(events, agent)``.
    """

    def __init__(self, agent: str = "main") -> None:
        self.agent = agent
        self._history = _History()
        self._seen = 0
        self._last: Event | None = None
        """The last event folded (or skipped): how a later call knows it extends the same log."""

    def derive(self, events: Sequence[Event]) -> list[Message]:
        if not self._extends(events):
            self._history, self._seen, self._last = _History(), 0, None
        agent = self.agent
        for event in events[self._seen :]:
            if _concerns(event, agent):
                _fold(self._history, event)
        if len(events) > self._seen:
            self._seen = len(events)
            self._last = events[-1]
        return list(self._history.messages)

    def _extends(self, events: Sequence[Event]) -> bool:
        if self._last is None:
            return True
        if len(events) < self._seen:
            return False
        seen = events[self._seen - 1]
        return seen is self._last or (seen.session_id, seen.seq) == (self._last.session_id, self._last.seq)


def _concerns(event: Event, agent: str) -> bool:
    """Whether the event changes the agent's history: its own model-visible events, and a
    conversation rewind (recorded once for every agent of the session)."""
    return (event.agent == agent and event.type in MODEL_VISIBLE) or event.type == REWOUND_EVENT


def _fold(history: _History, event: Event) -> None:
    """Add one model-visible event of the agent to its history."""
    payload = event.payload
    if event.type == REWOUND_EVENT:
        apply_rewind(history.messages, history.origins, history.pending, payload)
    elif event.type == COMPACTED_EVENT:
        apply_compaction(history.messages, history.origins, history.pending, payload)
    elif event.type == "model.completed":
        _close_pending(history)
        calls = tuple(ToolCall(c["id"], c["name"], dict(c["arguments"])) for c in payload.get("tool_calls", ()))
        history.pending.update((c.id, (c.name, event.seq)) for c in calls)
        history.add(Message("assistant", payload["text"], tool_calls=calls), event.seq)
    elif event.type == "tool.ended":
        call_id = payload["call_id"]
        _, origin = history.pending.pop(call_id, ("", event.seq))
        history.add(Message("tool", payload["output"], tool_call_id=call_id, name=payload["tool"]), origin)
    else:
        _close_pending(history)
        history.add(Message("user", payload["text"]), event.seq)


def _close_pending(history: _History) -> None:
    # The closing message belongs with the call it answers, so a compaction never splits them.
    for call_id, (name, origin) in history.pending.items():
        history.add(Message("tool", "no result recorded for this call", tool_call_id=call_id, name=name), origin)
    history.pending.clear()


def turn_span(turns: Sequence[int]) -> str:
    """``turns 1-4``, ``turn 3`` or ``earlier turns``: what a compaction covers."""
    if len(turns) > 1:
        return f"turns {turns[0]}-{turns[-1]}"
    return f"turn {turns[0]}" if turns else "earlier turns"


def summary_message(payload: Mapping[str, Any]) -> Message:
    """The one user message that stands for a compacted range."""
    span = turn_span([int(t) for t in payload.get("turns", ())])
    head = (
        f"{SUMMARY_MARK} {span}, {payload.get('replaced_messages', 0)} messages, summarized "
        f"({payload['method']}); the session log keeps them whole. It records what happened and "
        "gives no instructions."
    )
    return Message("user", f"{head}\n{payload['summary']}")


def apply_compaction(
    messages: list[Message], origins: list[int], pending: dict[str, tuple[str, int]], payload: Mapping[str, Any]
) -> None:
    """Replace the messages whose origin lies in the payload's ``first_seq``..``last_seq`` by its
    summary, placed where the first of them stood (a range that replaced nothing adds nothing).
    A call of the range still open is dropped too: its result could no longer follow its call."""
    first, last = int(payload["first_seq"]), int(payload["last_seq"])
    for call_id in [c for c, (_, origin) in pending.items() if first <= origin <= last]:
        del pending[call_id]
    inside = [i for i, origin in enumerate(origins) if first <= origin <= last]
    if not inside:
        return
    at = inside[0]
    keep = [i for i in range(len(messages)) if not first <= origins[i] <= last]
    kept_messages = [messages[i] for i in keep]
    kept_origins = [origins[i] for i in keep]
    kept_messages.insert(at, summary_message(payload))
    kept_origins.insert(at, first)
    messages[:] = kept_messages
    origins[:] = kept_origins
