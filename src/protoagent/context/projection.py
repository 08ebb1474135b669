"""Projection of old tool results into deterministic receipts, at the provider boundary only.

The most recent ``keep_batches`` tool-call batches (one assistant message's calls and their
results) stay exact. Older text-only results longer than ``threshold`` characters become

    [projected result of <tool> (<status>, <n> chars): <head> … <tail> | full output: <locator>]

where the locator is the result's artifact or ``event seq N`` of its ``tool.ended`` event.
Never projected: results of tools whose observation is ``exact``, skill results, results whose
event data marks ``"multimodal": true``, and results without a recorded ``tool.ended`` event
(there would be nothing to point at). Events are only read; the log is never changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from protoagent.events.types import Event
from protoagent.models.types import Message, ModelRequest
from protoagent.tools.base import Observation, ToolMetadata

SKILL_TOOLS = frozenset({"skill", "activate_skill"})
"""Skill results keep exact instructions through projection (spec: application-harness)."""
DEFAULT_KEEP_BATCHES = 2
DEFAULT_THRESHOLD = 1200
HEAD_CHARS = 320
TAIL_CHARS = 160

ObservationOf = Callable[[str], Observation | None]
"""Tool name -> its declared observation handling; ``None`` for a tool nobody declared."""


@dataclass(frozen=True, slots=True)
class ProjectionSettings:
    """How projection decides; one value per session so every request projects alike."""

    keep_batches: int = DEFAULT_KEEP_BATCHES
    threshold: int = DEFAULT_THRESHOLD
    """Results longer than this many characters are projected once they are old."""
    head_chars: int = HEAD_CHARS
    tail_chars: int = TAIL_CHARS


DEFAULT_SETTINGS = ProjectionSettings()


def observation_lookup(source: Mapping[str, ToolMetadata] | ObservationOf) -> ObservationOf:
    """Accept a ``tool name -> ToolMetadata`` mapping or a ready lookup function."""
    if callable(source):
        return source
    table = dict(source)

    def lookup(name: str) -> Observation | None:
        metadata = table.get(name)
        return metadata.observation if metadata is not None else None

    return lookup


def project_request(
    request: ModelRequest,
    events: Sequence[Event],
    observation_of: ObservationOf,
    settings: ProjectionSettings = DEFAULT_SETTINGS,
    *,
    sticky: frozenset[str] = frozenset(),
) -> tuple[ModelRequest, frozenset[str]]:
    """Replace old oversized results by receipts; return the new request and the projected call ids.

    ``sticky`` holds call ids projected by earlier requests; they stay projected so a
    session's prefix never changes back.
    """
    recent = _recent_call_ids(request.messages, settings.keep_batches)
    ended = _tool_ended_by_call(events, request.agent_role)
    projected: set[str] = set()
    out: list[Message] = []
    for message in request.messages:
        call_id = message.tool_call_id
        event = ended.get(call_id) if call_id is not None else None
        if call_id is None or event is None:
            out.append(message)
            continue
        old = call_id in sticky or call_id not in recent
        if old and _may_project(message, event, observation_of, settings.threshold):
            out.append(replace(message, content=receipt(message.content, event, settings)))
            projected.add(call_id)
        else:
            out.append(message)
    if not projected:
        return request, frozenset()
    return replace(request, messages=tuple(out)), frozenset(projected)


def receipt(output: str, event: Event, settings: ProjectionSettings) -> str:
    """The deterministic receipt that stands for one projected result."""
    payload = event.payload
    artifact = payload.get("artifact")
    locator = artifact if isinstance(artifact, str) and artifact else f"event seq {event.seq}"
    head = output[: settings.head_chars]
    tail = output[-settings.tail_chars :] if settings.tail_chars else ""
    return (
        f"[projected result of {payload.get('tool', '?')} ({payload.get('status', '?')}, {len(output)} chars): "
        f"{head} … {tail} | full output: {locator}]"
    )


def _may_project(message: Message, event: Event, observation_of: ObservationOf, threshold: int) -> bool:
    tool = str(event.payload.get("tool", message.name or ""))
    if tool in SKILL_TOOLS or observation_of(tool) == "exact":
        return False
    data = event.payload.get("data")
    if isinstance(data, dict) and data.get("multimodal") is True:
        return False
    return len(message.content) > threshold


def _recent_call_ids(messages: Sequence[Message], keep_batches: int) -> frozenset[str]:
    """Call ids of the last ``keep_batches`` assistant messages that made tool calls."""
    batches = [m for m in messages if m.role == "assistant" and m.tool_calls]
    recent = batches[-keep_batches:] if keep_batches > 0 else []
    return frozenset(call.id for batch in recent for call in batch.tool_calls)


def _tool_ended_by_call(events: Sequence[Event], agent: str) -> dict[str, Event]:
    """The first ``tool.ended`` event of each call id, preferring the requesting agent's own."""
    own: dict[str, Event] = {}
    other: dict[str, Event] = {}
    for event in events:
        if event.type != "tool.ended":
            continue
        call_id = event.payload.get("call_id")
        if isinstance(call_id, str):
            (own if event.agent == agent else other).setdefault(call_id, event)
    return {**other, **own}
