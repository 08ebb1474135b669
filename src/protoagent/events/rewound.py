"""A conversation rewind in model history: the hidden turns' messages leave it, the log keeps them.

``session.rewound`` (``events.catalog.SessionRewound``) names the event ranges of the user turns
it hides. Folding it removes every message whose origin event lies in one of those ranges, and
any tool call still open from them, for every agent of the session; messages derived later are
unaffected. The log is never rewritten, so a reload derives exactly what the model was shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protoagent.events.types import Event
from protoagent.models.types import Message

REWOUND_EVENT = "session.rewound"


def hidden_ranges(payload: Mapping[str, Any]) -> list[tuple[int, int]]:
    """The ``(first_seq, last_seq)`` ranges a ``session.rewound`` payload hides."""
    return [(int(first), int(last)) for first, last in payload.get("hidden_ranges", ())]


def is_hidden(seq: int, ranges: list[tuple[int, int]]) -> bool:
    return any(first <= seq <= last for first, last in ranges)


def apply_rewind(
    messages: list[Message], origins: list[int], pending: dict[str, tuple[str, int]], payload: Mapping[str, Any]
) -> None:
    """Drop the messages (and open tool calls) whose origin lies in the payload's hidden ranges."""
    ranges = hidden_ranges(payload)
    if not ranges:
        return
    keep = [i for i, origin in enumerate(origins) if not is_hidden(origin, ranges)]
    messages[:] = [messages[i] for i in keep]
    origins[:] = [origins[i] for i in keep]
    for call_id in [c for c, (_, origin) in pending.items() if is_hidden(origin, ranges)]:
        del pending[call_id]


def visible_events(events: Sequence[Event]) -> list[Event]:
    """``events`` without those a later conversation rewind hid: what a reader that rebuilds the
    conversation's state (the task record, say) should go by."""
    ranges = [r for e in events if e.type == REWOUND_EVENT for r in hidden_ranges(e.payload)]
    return [e for e in events if not is_hidden(e.seq, ranges)] if ranges else list(events)
