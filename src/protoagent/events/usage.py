"""Token totals of a run, summed from the ``model.completed`` events of its session log."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypedDict

from protoagent.events.types import Event


class TokenTotals(TypedDict):
    """``input`` counts every prompt token (cached ones too); ``cached_input`` those the provider
    reported as read from its prompt cache (0 when it reports none)."""

    input: int
    output: int
    cached_input: int


def run_token_totals(events: Sequence[Event]) -> TokenTotals:
    """The tokens of the latest run of a session: the one its last ``run.ended`` closes (the
    one still going when none has ended since); earlier runs of a resumed session are not counted."""
    ends = [i + 1 for i, e in enumerate(events) if e.type == "run.ended"]
    if not ends or any(e.type == "model.completed" for e in events[ends[-1] :]):
        return token_totals(events[ends[-1] if ends else 0 :])
    return token_totals(events[ends[-2] if len(ends) >= 2 else 0 : ends[-1]])


def token_totals(events: Iterable[Event]) -> TokenTotals:
    """The input, output and cached-input tokens of every model call in ``events`` (a summary a
    ``context.compacted`` event records as written by the model counts too)."""
    totals = TokenTotals(input=0, output=0, cached_input=0)
    for event in events:
        if event.type not in ("model.completed", "context.compacted"):
            continue
        usage = event.payload.get("usage") or {}
        totals["input"] += int(usage.get("input_tokens", 0))
        totals["output"] += int(usage.get("output_tokens", 0))
        totals["cached_input"] += int(usage.get("cached_input_tokens", 0))
    return totals
