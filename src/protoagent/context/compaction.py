"""Compaction: the oldest turns of one agent's conversation replaced by a summary event.

When admission cannot fit a request's mandatory part (``ContextOverflow``), or when the person
asks (``/compact``), the oldest whole turns (a user message, the replies and tool exchanges
that followed it) are summarized and a ``context.compacted`` event records the range, the
summary, how it was made and the sizes. ``derive_messages`` then shows the summary in place of
the range; the log itself is never rewritten, so a reload shows exactly what the model saw.

The summary is written by the session's model with a bounded request (what was asked, decided,
changed, verified, what is open), or built deterministically from the log (``digest``) when no
model call is possible: the small profile, no provider, or a failed or empty summary call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from protoagent.context.digest import DigestTurn, clip, digest
from protoagent.context.tokens import TokenCounter, message_tokens
from protoagent.errors import ProviderError
from protoagent.events.catalog import ContextCompacted, UserMessage
from protoagent.events.log import SessionLog
from protoagent.events.messages import COMPACTED_EVENT, derive_with_origins, turn_span
from protoagent.events.queries import facts
from protoagent.events.types import Event
from protoagent.models.protocol import ModelProvider
from protoagent.models.types import Message, ModelRequest, ModelTurn

COMPACTION_AGENT = "compaction"
"""The ``agent_role`` of a summary request (it is nobody's conversation)."""
SUMMARY_SHARE = 0.1
"""Share of the window a summary may take."""
SUMMARY_MIN_TOKENS, SUMMARY_MAX_TOKENS = 256, 2000
MATERIAL_SHARE = 0.5
"""Share of the window the turns shown to the summarizing model may take."""
SUMMARY_SYSTEM = (
    "You summarize the earlier part of a coding session so that it can go on without it. "
    "Write plain text, at most {budget} tokens, in short lines under these headings: Asked (each "
    "request), Decided (each decision and its reason), Changed (files and what changed), Verified "
    "(checks and outcomes), Open (what is unfinished). Keep names, paths, numbers and call ids "
    "exactly; say recall(call_id=...) for a result worth seeing again. No preamble."
)

Method = Literal["model", "deterministic"]
Trigger = Literal["automatic", "user"]


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """The oldest turns chosen for one summary."""

    first_seq: int
    last_seq: int
    turns: tuple[DigestTurn, ...]
    numbers: tuple[int, ...]
    """Every turn the range covers (those an earlier summary stood for too)."""
    replaced_messages: int
    replaced_tokens: int


@dataclass(frozen=True, slots=True)
class _Summary:
    text: str
    method: Method
    fallback: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    called: bool = False
    """A model call was made (a failed one too)."""


def summary_budget(window: int | None) -> int:
    """Tokens one summary may take: a tenth of the window, within 256..2000."""
    if window is None:
        return SUMMARY_MAX_TOKENS
    return max(SUMMARY_MIN_TOKENS, min(SUMMARY_MAX_TOKENS, int(window * SUMMARY_SHARE)))


def _groups(events: Sequence[Event], agent: str) -> list[list[tuple[int, Message]]]:
    """The agent's derived messages, grouped into turns: each ``user.message`` starts one."""
    starts = [e.seq for e, _ in facts(events, UserMessage, agent=agent)]
    groups: list[list[tuple[int, Message]]] = [[]]
    index = 0
    for origin, message in derive_with_origins(events, agent):
        while index < len(starts) and origin >= starts[index]:
            index += 1
            groups.append([])
        groups[-1].append((origin, message))
    return [g for g in groups if g]


def plan_compaction(
    events: Sequence[Event],
    agent: str,
    counter: TokenCounter,
    *,
    reduce_by: int | None = None,
    keep_turns: int = 1,
    budget: int = SUMMARY_MAX_TOKENS,
) -> CompactionPlan | None:
    """The oldest turns whose user messages free at least ``reduce_by`` tokens once a summary of
    ``budget`` tokens stands for them (``None``: every turn but the newest ``keep_turns``).
    ``None`` when nothing new can be compacted (only the latest turns, or one summary, remain)."""
    groups = _groups(events, agent)
    candidates = groups[: len(groups) - keep_turns] if keep_turns else groups
    chosen: list[list[tuple[int, Message]]] = []
    freed = 0
    for group in candidates:
        chosen.append(group)
        freed += sum(message_tokens(m, counter) for _, m in group if m.role == "user")
        if reduce_by is not None and freed >= reduce_by + budget:
            break
    replaced = [item for group in chosen for item in group]
    if not replaced or (len(replaced) == 1 and _is_summary(events, replaced[0][0], agent)):
        return None
    first = replaced[0][0]
    following = [g[0][0] for g in groups[len(chosen) :]]
    last = following[0] - 1 if following else max(e.seq for e in events)
    users = {e.seq: e.turn for e, _ in facts(events, UserMessage, agent=agent)}
    turns = tuple(DigestTurn(users.get(g[0][0]), tuple(m for _, m in g)) for g in chosen)
    numbers = sorted({t for seq, t in users.items() if first <= seq <= last and t is not None})
    tokens = sum(message_tokens(m, counter) for _, m in replaced)
    return CompactionPlan(first, last, turns, tuple(numbers), len(replaced), tokens)


def _is_summary(events: Sequence[Event], origin: int, agent: str) -> bool:
    return any(c.first_seq == origin for _, c in facts(events, ContextCompacted, agent=agent))


class Compactor:
    """Makes and records summaries for one run's agents.

    ``provider`` writes the summary (``None``: the deterministic digest only, as for the small
    profile); ``window`` bounds the summary and the material shown to the summarizing model.
    """

    def __init__(self, counter: TokenCounter, window: int | None, provider: ModelProvider | None = None) -> None:
        self.counter = counter
        self.window = window
        self.provider = provider

    @property
    def budget(self) -> int:
        return summary_budget(self.window)

    async def compact(
        self,
        log: SessionLog,
        agent: str,
        *,
        reduce_by: int | None = None,
        keep_turns: int = 1,
        history_from: int = 0,
        trigger: Trigger = "automatic",
        focus: str = "",
        model_allowed: bool = True,
    ) -> Event | None:
        """Summarize ``agent``'s oldest turns (see ``plan_compaction``) and append the event;
        ``None`` when there is nothing to compact. A failed model summary falls back to the digest,
        and so does ``model_allowed=False`` (the run has no model call left)."""
        events = log.events[history_from:]
        plan = plan_compaction(
            events, agent, self.counter, reduce_by=reduce_by, keep_turns=keep_turns, budget=self.budget
        )
        if plan is None:
            return None
        made = await self._summary(plan, focus, model_allowed)
        payload: dict[str, Any] = {
            "first_seq": plan.first_seq,
            "last_seq": plan.last_seq,
            "turns": list(plan.numbers),
            "summary": made.text,
            "method": made.method,
            "trigger": trigger,
            "focus": focus,
            "replaced_messages": plan.replaced_messages,
            "replaced_tokens": plan.replaced_tokens,
            "summary_tokens": self.counter.count(made.text),
            "fallback": made.fallback,
            "model_call": made.called,
            **({"usage": made.usage} if made.usage else {}),
        }
        event = log.append(COMPACTED_EVENT, payload, agent=agent)
        log.flush()
        return event

    async def _summary(self, plan: CompactionPlan, focus: str, model_allowed: bool) -> _Summary:
        deterministic = digest(plan.turns, self.budget, self.counter, focus)
        if self.provider is None:
            return _Summary(deterministic, "deterministic")
        if not model_allowed:
            return _Summary(deterministic, "deterministic", "the run has no model call to spare for a summary")
        try:
            turn = await _final(self.provider, self.request(plan, focus))
        except ProviderError as exc:
            return _Summary(deterministic, "deterministic", clip(f"the summary call failed: {exc}", 300), called=True)
        text = turn.text.strip()
        if not text or turn.tool_calls:
            return _Summary(deterministic, "deterministic", "the summary call returned no summary text", called=True)
        if self.counter.count(text) > self.budget:
            text = clip(text, int(self.budget * 3.5))
        usage = {"input_tokens": turn.usage.input_tokens, "output_tokens": turn.usage.output_tokens}
        return _Summary(text, "model", usage=usage, called=True)

    def request(self, plan: CompactionPlan, focus: str) -> ModelRequest:
        """The bounded summary request: the turns as a digest within half the window."""
        material_budget = max(self.budget * 2, int((self.window or 32_000) * MATERIAL_SHARE) - self.budget)
        material = digest(plan.turns, material_budget, self.counter, focus)
        ask = f"Summarize these earlier turns{f', keeping in view: {clip(focus, 200)}' if focus else ''}."
        return ModelRequest(
            system=SUMMARY_SYSTEM.format(budget=self.budget),
            messages=(Message("user", f"{ask}\n\n{material}"),),
            action_mode="native",
            agent_role=COMPACTION_AGENT,
            max_output_tokens=self.budget,
        )


def describe_compaction(compacted: ContextCompacted) -> str:
    """One line for a person: what was compacted, how, and the sizes (and a fallback's reason)."""
    span = turn_span(compacted.turns)
    tokens = f"{compacted.replaced_tokens} → {compacted.summary_tokens} tokens"
    why = f"; {compacted.fallback}" if compacted.fallback else ""
    return f"compacted {span} into a {compacted.method} summary ({tokens}){why}"


async def _final(provider: ModelProvider, request: ModelRequest) -> ModelTurn:
    final: ModelTurn | None = None
    async for item in provider.stream(request):
        if isinstance(item, ModelTurn):
            final = item
    if final is None:
        raise ProviderError("the provider ended its stream without a final turn", provider=provider.name)
    return final


__all__ = [
    "COMPACTION_AGENT",
    "CompactionPlan",
    "Compactor",
    "describe_compaction",
    "plan_compaction",
    "summary_budget",
]
