"""What one agent's conversation has been shown of the task record, kept append-only.

The whole record is shown once, right after the agent's first user message. When it changes
later (a worker's report, a frozen plan), the change is appended where the conversation
stands at that request, as a short ``[task record update]`` message, instead of rewriting the
record inside the prefix: consecutive requests of an agent then share a byte-identical prefix
(what hosted prompt caches and llama.cpp's slot cache reuse). When eviction changes the prefix
anyway, the view is consolidated: the current record is shown whole again and the updates go.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from protoagent.models.types import Message

TASK_RECORD_MARK = "[task record]"
UPDATE_MARK = "[task record update]"


@dataclass(frozen=True, slots=True)
class RecordView:
    """The record as placed in one agent's conversation."""

    anchor: str
    """Content of the conversation's first message: another conversation starts a new view."""
    length: int
    """Messages the conversation had at the latest request."""
    base: str
    """The record text shown after the first user message."""
    shown: str
    """The record text the agent is up to date with (base plus every update)."""
    updates: tuple[tuple[int, str], ...] = ()
    """``(index, text)``: an update shown before incoming message ``index`` (at the end when
    ``index`` equals the message count)."""

    def consolidated(self, record: str) -> RecordView:
        return replace(self, base=record, shown=record, updates=())


def record_message(text: str) -> Message:
    return Message("user", f"{TASK_RECORD_MARK}\n{text}")


def update_message(text: str) -> Message:
    return Message("user", f"{UPDATE_MARK}\n{text}")


def record_update(old: str, new: str) -> str:
    """The lines of ``new`` that ``old`` lacked, then ``removed:`` lines nothing replaced."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    added = [line for line in new_lines if line not in old_lines]
    replaced = {_key(line) for line in added}
    gone = [f"removed: {line}" for line in old_lines if line not in new_lines and _key(line) not in replaced]
    return "\n".join([*added, *gone])


def _key(line: str) -> str:
    """``selected_check_ids``, ``report from coder`` ...: what a record line is about."""
    return line.split(":", 1)[0]


def advance_view(view: RecordView | None, messages: Sequence[Message], record: str) -> RecordView:
    """The view for this request: a new one for a new conversation, else the old one plus an
    update appended at the end when the record changed since the latest request."""
    anchor = messages[0].content if messages else ""
    if view is None or view.anchor != anchor or len(messages) < view.length:
        return RecordView(anchor, len(messages), record, record)
    view = replace(view, length=len(messages))
    if record == view.shown:
        return view
    update = record_update(view.shown, record)
    if not update:
        return replace(view, shown=record)  # the same lines in another order
    return replace(view, shown=record, updates=(*view.updates, (len(messages), update)))


__all__ = [
    "TASK_RECORD_MARK",
    "UPDATE_MARK",
    "RecordView",
    "advance_view",
    "record_message",
    "record_update",
    "update_message",
]
