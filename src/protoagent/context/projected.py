"""Receipts that stand for projected tool results, and how the model gets the content back.

A receipt always names a call the receiving agent can make to see the content again:

- a read by a tool whose metadata declares it revision-aware, when the agent has that tool:
  re-run it over the same span; the revision the read saw is quoted, so a different revision
  on the re-read says the file changed;
- any other result, when the agent has ``recall``: ``recall(call_id=...)`` returns the
  recorded output (from its artifact when there is one);
- neither: the result is not projected, since nothing could bring it back.

    [projected result of <tool> (<status>, <n> chars): <head> … <tail> | to see it again: <call>]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass

from protoagent.context.staleness import SHOWN_REVISION_CHARS, read_facts
from protoagent.events.catalog import ToolEnded
from protoagent.events.types import Event

RECALL_TOOL = "recall"
HEAD_CHARS = 320
TAIL_CHARS = 160


@dataclass(frozen=True, slots=True)
class Recovery:
    """The call that brings a projected result back, as the receipt shows it."""

    call: str
    tool: str


def recovery_for(event: Event, offered: Collection[str], revision_aware: Callable[[str], bool]) -> Recovery | None:
    """How the agent offered ``offered`` tools can see this result again; ``None``: it cannot.
    A result of a tool whose metadata declares it revision-aware is got back by re-running that
    tool over the same span; any other through ``recall``."""
    ended = event.fact(ToolEnded)
    tool = ended.tool if ended is not None else None
    facts = read_facts(event) if tool is not None and revision_aware(tool) else None
    if facts is not None and tool in offered:
        args = [f"path={json.dumps(facts.path)}"]
        if facts.start_line is not None:
            args.append(f"start_line={facts.start_line}")
        if facts.end_line is not None:
            args.append(f"end_line={facts.end_line}")
        revision = facts.revision[:SHOWN_REVISION_CHARS]
        return Recovery(f"re-run {tool}({', '.join(args)}); revision {revision} at the time", str(tool))
    call_id = ended.call_id if ended is not None else None
    if RECALL_TOOL in offered and call_id is not None:
        return Recovery(f"recall(call_id={json.dumps(call_id)})", RECALL_TOOL)
    return None


def render_receipt(output: str, event: Event, recovery: Recovery, head_chars: int, tail_chars: int) -> str:
    """The deterministic receipt that stands for one projected result."""
    ended = event.fact(ToolEnded)
    tool, status = (ended.tool, ended.status) if ended is not None else ("?", "?")
    head = output[:head_chars]
    tail = output[-tail_chars:] if tail_chars else ""
    return (
        f"[projected result of {tool} ({status}, {len(output)} chars): "
        f"{head} … {tail} | to see it again: {recovery.call}]"
    )


__all__ = ["RECALL_TOOL", "Recovery", "recovery_for", "render_receipt"]
