"""Context admission: fit a request into the window by evicting old observations as whole messages.

Rules (``spec/task-workflow.txt``, "Small-model source editing and context"):

- the estimate covers system text, tool declarations, messages and reserved output space;
- only observations are evicted: assistant messages, each together with its tool results as
  one unit; user-role messages (the task, later instructions, injected context) always stay,
  and so does the most recent exchange;
- the task record, when given, is inserted right after the first user message and is mandatory,
  and so are its updates (``record_updates``), each placed before the incoming message it names
  (``protoagent.context.record_view`` keeps them append-only);
- the oldest units go first; eviction only moves forward (``boundary``) and, once needed, frees
  space down to a low-water mark so the next steps append to an unchanged prefix;
- if the mandatory input cannot fit, the request fails with ``ContextOverflow`` (a
  ``LimitExceeded(limit="context")``); the agent loop then compacts the oldest turns
  (``protoagent.context.compaction``) and builds the request again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from protoagent.context.record_view import TASK_RECORD_MARK, record_message, update_message
from protoagent.context.tokens import TokenCounter, estimate_request, message_tokens, output_reserve_for
from protoagent.errors import LimitExceeded
from protoagent.models.profile import PromptProfile
from protoagent.models.registry import ModelConfig
from protoagent.models.types import Message, ModelRequest

SMALL_PROFILE_WINDOW = 8192
"""Application admission cap for small profiles whose model window is unknown (not a measurement)."""
UNCAPPED_RESERVE_WINDOW = 1 << 20
"""Stands for "a large window" when choosing the default output reserve of an uncapped request."""
LOW_WATER = 0.75
"""After an eviction the estimate is brought down to this share of the window (when it can be)."""


class ContextOverflow(LimitExceeded):
    """The mandatory part of a request does not fit the window (compaction can make room)."""

    def __init__(self, needed: int, window: int, target: int, message: str) -> None:
        super().__init__(message, limit="context")
        self.needed = needed
        """Estimated tokens of the mandatory part, output reserve included."""
        self.window = window
        self.target = target
        """The low-water mark: what a compaction should bring the mandatory part down to."""

    @property
    def excess(self) -> int:
        """Tokens to free so the mandatory part comes down to the low-water mark."""
        return self.needed - self.target


@dataclass(frozen=True, slots=True)
class AdmissionReport:
    """What admission did to one request."""

    estimated_before: int
    """Tokens before eviction (task record included), output reserve included."""
    estimated_after: int
    """Tokens of the admitted request, output reserve included."""
    evicted_message_count: int
    window: int | None
    """``None``: no cap applied (the record was still inserted)."""
    boundary: int = 0
    """Index into the incoming messages: every evictable unit starting before it is evicted."""


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    """Exclusive end index into the incoming messages."""
    protected: bool
    cost: int

    @property
    def size(self) -> int:
        return self.end - self.start


def admission_window(context_window: int | None, profile: PromptProfile) -> int | None:
    """The configured window; 8192 for small profiles without one; ``None`` means no cap."""
    if context_window is not None:
        return context_window
    return SMALL_PROFILE_WINDOW if profile == "small" else None


def window_for(config: ModelConfig, profile: PromptProfile) -> int | None:
    return admission_window(config.context_window, profile)


def task_record_message(text: str) -> Message:
    return record_message(text)


def eviction_note(count: int) -> Message:
    return Message(
        "user",
        f"[context] {count} earlier messages were evicted to fit the context window; the session log keeps them.",
    )


def admit_request(
    request: ModelRequest,
    *,
    window: int | None,
    counter: TokenCounter,
    task_record: str | None = None,
    record_updates: Sequence[tuple[int, str]] = (),
    boundary: int = 0,
    low_water: float = LOW_WATER,
) -> tuple[ModelRequest, AdmissionReport]:
    """Fit ``request`` into ``window`` tokens. Pure and deterministic for equal inputs.

    ``record_updates`` are ``(index, text)`` task record updates shown before incoming message
    ``index``. ``boundary`` is the previous report's boundary: units evicted before stay evicted.
    A ``window`` of ``None`` evicts nothing and only inserts the task record and its updates.
    """
    record = task_record_message(task_record) if task_record is not None else None
    updates = tuple((index, update_message(text)) for index, text in record_updates)
    reserve = output_reserve_for(request, window if window is not None else UNCAPPED_RESERVE_WINDOW)
    estimate = estimate_request(request, counter, output_reserve=reserve)
    record_cost = message_tokens(record, counter) if record is not None else 0
    record_cost += sum(message_tokens(message, counter) for _, message in updates)
    fixed = estimate.system + estimate.tools + estimate.output_reserve + record_cost
    units = _units(request.messages, estimate.messages)
    if window is None:
        total = fixed + sum(u.cost for u in units)
        return _assemble(request, units, set(), record, updates), AdmissionReport(total, total, 0, None, boundary)
    mandatory = fixed + sum(u.cost for u in units if u.protected)
    mandatory += _note_cost(sum(u.size for u in units if not u.protected), counter)
    if mandatory > window:
        raise ContextOverflow(
            mandatory,
            window,
            int(window * low_water),
            f"mandatory context needs about {mandatory} tokens but the window is {window}: "
            f"system {estimate.system}, tools {estimate.tools}, user messages and latest exchange "
            f"{sum(u.cost for u in units if u.protected)}, task record {record_cost}, "
            f"output reserve {estimate.output_reserve}; configure a larger context_window, "
            "offer fewer tools or shorten the task",
        )
    # Once eviction is needed it frees space down to the low-water mark (or evicts all it may),
    # so the following steps append to an unchanged prefix instead of evicting again.
    evicted = _choose_evicted(units, boundary, fixed, window, int(window * low_water), counter)
    count = sum(u.size for u in units if u.start in evicted)
    after = fixed + sum(u.cost for u in units if u.start not in evicted) + _note_cost(count, counter)
    new_boundary = max([boundary, *(u.end for u in units if u.start in evicted)])
    report = AdmissionReport(fixed + sum(u.cost for u in units), after, count, window, new_boundary)
    return _assemble(request, units, evicted, record, updates), report


def _units(messages: tuple[Message, ...], costs: tuple[int, ...]) -> list[_Unit]:
    """Group messages into eviction units and mark the ones that must stay."""
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(messages):
        start, end = index, index + 1
        if messages[index].role == "assistant" and messages[index].tool_calls:
            while end < len(messages) and messages[end].role == "tool":
                end += 1
        elif messages[index].role == "tool" and spans:
            # A stray tool result belongs to the unit just before it.
            start, _ = spans.pop()
        spans.append((start, end))
        index = end
    last = spans[-1][0] if spans else -1
    return [_Unit(s, e, s == last or messages[s].role == "user", sum(costs[s:e])) for s, e in spans]


def _choose_evicted(
    units: list[_Unit],
    boundary: int,
    fixed: int,
    window: int,
    target: int,
    counter: TokenCounter,
) -> set[int]:
    """Start indexes of the evicted units: those before ``boundary``, then oldest first if needed."""
    evicted = {u.start for u in units if not u.protected and u.start < boundary}
    total = fixed + sum(u.cost for u in units if u.start not in evicted)
    count = sum(u.size for u in units if u.start in evicted)
    if total + _note_cost(count, counter) <= window:
        return evicted
    for unit in units:
        if unit.protected or unit.start in evicted:
            continue
        evicted.add(unit.start)
        total -= unit.cost
        count += unit.size
        if total + _note_cost(count, counter) <= target:
            break
    return evicted


def _note_cost(count: int, counter: TokenCounter) -> int:
    return message_tokens(eviction_note(count), counter) if count else 0


def _assemble(
    request: ModelRequest,
    units: list[_Unit],
    evicted: set[int],
    record: Message | None,
    updates: Sequence[tuple[int, Message]] = (),
) -> ModelRequest:
    """Kept messages in order; the record and the eviction note follow the first user message,
    each record update comes before the incoming message it names (or at the end)."""
    messages = request.messages
    inserts: list[Message] = [record] if record is not None else []
    count = sum(u.size for u in units if u.start in evicted)
    if count:
        inserts.append(eviction_note(count))
    before: dict[int, list[Message]] = {}
    for index, message in updates:
        before.setdefault(min(index, len(messages)), []).append(message)
    out: list[Message] = []
    placed = False
    for unit in units:
        kept = unit.start not in evicted
        for index in range(unit.start, unit.end):
            out.extend(before.pop(index, ()))
            if kept:
                out.append(messages[index])
        if kept and not placed and messages[unit.start].role == "user":
            out.extend(inserts)
            placed = True
    out.extend(before.pop(len(messages), ()))
    if not placed:
        out[:0] = inserts
    return replace(request, messages=tuple(out))


__all__ = [
    "LOW_WATER",
    "SMALL_PROFILE_WINDOW",
    "TASK_RECORD_MARK",
    "AdmissionReport",
    "ContextOverflow",
    "admission_window",
    "admit_request",
    "eviction_note",
    "task_record_message",
    "window_for",
]
