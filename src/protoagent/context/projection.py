"""Projection of old tool results into receipts by a token budget, at the provider boundary only.

Results stay exact while the request's history (its messages) fits ``budget_tokens``. When it
does not, results are projected oldest first until the history is down to the low-water
mark (so the following steps append to an unchanged prefix), or nothing projectable is left.

Reads of the agent's current turn (a worker's assignment, the Architect's current turn:
results of ``revision_aware`` tools since the agent's last ``turn.started`` event) stay exact,
so an agent never has to re-read mid-assignment; only when they alone keep the history over
``hard_factor`` times the budget (where admission would otherwise evict them whole) are they
projected too, oldest first, down to the budget.

Never projected:

- the latest tool-call batch (the model has not seen it yet);
- results of ``exact`` tools, skill results, results whose event data marks
  ``"multimodal": true``, results shorter than ``min_chars``;
- results the agent could not get back (see ``protoagent.context.projected``), and results
  without a recorded ``tool.ended`` event.

Old reads of a file that changed since get a one-line stale marker (``context.staleness``); a
re-read of lines an earlier exact result already shows, at the same revision, is one line
naming that call (``context.rereads``). All three are sticky per agent (``ProjectionState``):
once projected or marked, a result stays so in every later request, so a session's prefix
never changes back. The ``recall`` tool is declared to the model only once one of its receipts
(or calls) is in the request, so a request that projected nothing pays nothing for it. Events
are only read; the log is never changed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from protoagent.context.projected import HEAD_CHARS, RECALL_TOOL, TAIL_CHARS, recovery_for, render_receipt
from protoagent.context.rereads import ReadRange, covers, read_range, unchanged_receipt
from protoagent.context.staleness import latest_revisions, mark_stale, stale_marker
from protoagent.context.tokens import EstimatingCounter, TokenCounter, message_tokens
from protoagent.events.catalog import ToolEnded, TurnStarted
from protoagent.events.queries import facts, last_fact
from protoagent.events.types import Event
from protoagent.models.profile import PromptProfile
from protoagent.models.types import Message, ModelRequest
from protoagent.tools.base import Observation, ToolMetadata

SKILL_TOOLS = frozenset({"skill", "activate_skill"})
"""Skill results keep exact instructions through projection (spec: application-harness)."""
SMALL_HISTORY_BUDGET = 4000
"""History tokens a small-profile request keeps exact (about half of the 8192-token cap)."""
STANDARD_HISTORY_BUDGET = 12_000
"""History tokens a standard-profile request keeps exact before projecting old results."""
DEFAULT_MIN_CHARS = 1200
LOW_WATER = 0.75
HARD_FACTOR = 1.5

ObservationOf = Callable[[str], Observation | None]
"""Tool name -> its declared observation handling; ``None`` for a tool nobody declared."""


@dataclass(frozen=True, slots=True)
class ProjectionSettings:
    """How projection decides; one value per session so every request projects alike."""

    budget_tokens: int = STANDARD_HISTORY_BUDGET
    """Estimated tokens the messages of a request may take before old results are projected."""
    low_water: float = LOW_WATER
    """Once over budget, results are projected until the history is down to this share of it."""
    hard_factor: float = HARD_FACTOR
    """Past this multiple of the budget, the current turn's reads are projected too."""
    min_chars: int = DEFAULT_MIN_CHARS
    """Results of at most this many characters are never projected (a receipt saves little)."""
    head_chars: int = HEAD_CHARS
    tail_chars: int = TAIL_CHARS


DEFAULT_SETTINGS = ProjectionSettings()


def settings_for(profile: PromptProfile, context_window: int | None = None) -> ProjectionSettings:
    """The profile's history budget, never more than half of a known context window."""
    budget = SMALL_HISTORY_BUDGET if profile == "small" else STANDARD_HISTORY_BUDGET
    if context_window is not None:
        budget = min(budget, context_window // 2)
    return ProjectionSettings(budget_tokens=budget)


@dataclass(frozen=True, slots=True)
class ProjectionState:
    """What earlier requests of one agent projected and marked; it only grows."""

    projected: frozenset[str] = frozenset()
    """Call ids whose results are receipts."""
    stale: Mapping[str, str] = field(default_factory=dict)
    """Call id -> the stale marker it got first (kept verbatim)."""
    rereads: Mapping[str, str | None] = field(default_factory=dict)
    """Call id of a read -> the earlier call whose exact result covers it (``context.rereads``),
    or ``None``: it is shown as it is. Decided once per call."""


def observation_lookup(source: Mapping[str, ToolMetadata] | ObservationOf) -> ObservationOf:
    """Accept a ``tool name -> ToolMetadata`` mapping or a ready lookup function."""
    if callable(source):
        return source
    table = dict(source)

    def lookup(name: str) -> Observation | None:
        metadata = table.get(name)
        return metadata.observation if metadata is not None else None

    return lookup


@dataclass(slots=True)
class _Result:
    """One tool result of the request and what projection may do with it."""

    index: int
    call_id: str
    event: Event
    content: str
    """The exact output, stale marker included."""
    receipt: str | None
    """Its receipt, or ``None`` when it may never be projected."""
    recall: bool
    latest: bool
    """Part of the latest tool-call batch: never projected."""
    current_read: bool
    """A read of the agent's current turn: projected only past the hard limit."""
    reread: tuple[str, ReadRange] | None = None
    """For a re-read of an unchanged range: the earlier call that showed it and the range."""
    marker: str | None = None
    """Its stale marker, if any."""

    def unchanged(self, projected: Collection[str]) -> str:
        """The re-read's receipt, saying whether the earlier result is still exact."""
        if self.reread is None:
            return self.content
        source, span = self.reread
        body = unchanged_receipt(span, source, self.call_id, source_projected=source in projected)
        return mark_stale(body, self.marker) if self.marker is not None else body


def project_request(
    request: ModelRequest,
    events: Sequence[Event],
    observation_of: ObservationOf,
    settings: ProjectionSettings = DEFAULT_SETTINGS,
    *,
    state: ProjectionState | None = None,
    counter: TokenCounter | None = None,
) -> tuple[ModelRequest, ProjectionState]:
    """Mark stale reads and project old results by the budget. Pure for equal inputs."""
    state = state if state is not None else ProjectionState()
    counter = counter if counter is not None else EstimatingCounter()
    results, stale, rereads = _results(request, events, observation_of, settings, state)
    messages = list(request.messages)
    for result in results:
        messages[result.index] = replace(messages[result.index], content=result.content)
    projected = set(state.projected)
    for result in results:
        if result.call_id in projected and result.receipt is not None:
            messages[result.index] = replace(messages[result.index], content=result.receipt)
    history = sum(message_tokens(m, counter) for m in messages)
    budget = settings.budget_tokens
    if history > budget:
        older = [r for r in results if not r.latest and not r.current_read]
        history = _project(older, messages, projected, history, int(budget * settings.low_water), counter)
    if history > budget * settings.hard_factor:
        reads = [r for r in results if not r.latest and r.current_read]
        history = _project(reads, messages, projected, history, budget, counter)
    for result in results:
        if result.reread is not None:
            messages[result.index] = replace(messages[result.index], content=result.unchanged(projected))
    shown = {r.call_id for r in results if r.call_id in projected and r.receipt is not None}
    needs_recall = any(r.recall for r in results if r.call_id in shown) or _called(request.messages, RECALL_TOOL)
    needs_recall = needs_recall or any(r.reread is not None for r in results)
    tools = request.tools if needs_recall else tuple(t for t in request.tools if t.name != RECALL_TOOL)
    new_state = ProjectionState(frozenset(projected), stale, rereads)
    if tuple(messages) == request.messages and tools == request.tools:
        return request, new_state
    return replace(request, messages=tuple(messages), tools=tools), new_state


def _project(
    candidates: list[_Result],
    messages: list[Message],
    projected: set[str],
    history: int,
    target: int,
    counter: TokenCounter,
) -> int:
    """Project ``candidates`` in order until the history is at most ``target``; the new history."""
    for result in candidates:
        if history <= target:
            break
        if result.call_id in projected or result.receipt is None:
            continue
        before = message_tokens(messages[result.index], counter)
        messages[result.index] = replace(messages[result.index], content=result.receipt)
        history += message_tokens(messages[result.index], counter) - before
        projected.add(result.call_id)
    return history


def _results(
    request: ModelRequest,
    events: Sequence[Event],
    observation_of: ObservationOf,
    settings: ProjectionSettings,
    state: ProjectionState,
) -> tuple[list[_Result], dict[str, str], dict[str, str | None]]:
    """Every tool result with a recorded event, its stale marker applied or its re-read receipt
    shown, and the new markers and re-read decisions."""
    agent = request.agent_role
    ended = _tool_ended_by_call(events, agent)
    offered = frozenset(t.name for t in request.tools)
    revisions = latest_revisions(events)
    turn_start = _turn_start(events, agent)
    latest = _latest_batch(request.messages)
    stale = dict(state.stale)
    rereads = dict(state.rereads)
    exact_reads: list[tuple[str, ReadRange]] = []
    results: list[_Result] = []
    for index, message in enumerate(request.messages):
        call_id = message.tool_call_id
        event = ended.get(call_id) if call_id is not None else None
        if call_id is None or event is None:
            continue
        marker = stale.get(call_id) or stale_marker(event, revisions)
        content = message.content
        if marker is not None:
            stale[call_id] = marker
            content = mark_stale(content, marker)
        result_fact = event.fact(ToolEnded)
        tool = result_fact.tool if result_fact is not None else message.name or ""
        recovery = recovery_for(event, offered, lambda name: observation_of(name) == "revision_aware")
        receipt = None
        if recovery is not None and _may_project(message, event, tool, observation_of, settings.min_chars):
            body = render_receipt(message.content, event, recovery, settings.head_chars, settings.tail_chars)
            receipt = mark_stale(body, marker) if marker is not None else body
        current_read = event.seq > turn_start and observation_of(tool) == "revision_aware"
        recall = recovery is not None and recovery.tool == RECALL_TOOL
        result = _Result(index, call_id, event, content, receipt, recall, call_id in latest, current_read)
        span = read_range(event) if observation_of(tool) == "revision_aware" else None
        if span is not None:
            if call_id not in rereads:
                rereads[call_id] = _covering(span, exact_reads) if RECALL_TOOL in offered else None
            source = rereads[call_id]
            if source is not None:
                result.reread, result.marker, result.receipt = (source, span), marker, None
                result.content = result.unchanged(state.projected)
            elif marker is None and call_id not in state.projected:
                exact_reads.append((call_id, span))
        results.append(result)
    return results, stale, rereads


def _covering(span: ReadRange, exact_reads: Sequence[tuple[str, ReadRange]]) -> str | None:
    """The first earlier exact read that showed every line of ``span``, at its revision."""
    return next((call_id for call_id, earlier in exact_reads if covers(earlier, span)), None)


def _may_project(message: Message, event: Event, tool: str, observation_of: ObservationOf, min_chars: int) -> bool:
    if tool in SKILL_TOOLS or observation_of(tool) == "exact":
        return False
    ended = event.fact(ToolEnded)
    if ended is not None and ended.data.get("multimodal") is True:
        return False
    return len(message.content) > min_chars


def _latest_batch(messages: Sequence[Message]) -> frozenset[str]:
    """Call ids of the last assistant message that made tool calls."""
    for message in reversed(messages):
        if message.role == "assistant" and message.tool_calls:
            return frozenset(call.id for call in message.tool_calls)
    return frozenset()


def _called(messages: Sequence[Message], tool: str) -> bool:
    return any(call.name == tool for m in messages for call in m.tool_calls)


def _turn_start(events: Sequence[Event], agent: str) -> int:
    """Seq of the agent's latest ``turn.started`` event (0 without one: all of it is current)."""
    found = last_fact(events, TurnStarted, agent=agent)
    return found[0].seq if found is not None else 0


def _tool_ended_by_call(events: Sequence[Event], agent: str) -> dict[str, Event]:
    """The first ``tool.ended`` event of each call id, preferring the requesting agent's own."""
    own: dict[str, Event] = {}
    other: dict[str, Event] = {}
    for event, ended in facts(events, ToolEnded):
        (own if event.agent == agent else other).setdefault(ended.call_id, event)
    return {**other, **own}


__all__ = [
    "DEFAULT_SETTINGS",
    "SKILL_TOOLS",
    "ObservationOf",
    "ProjectionSettings",
    "ProjectionState",
    "observation_lookup",
    "project_request",
    "settings_for",
]
