"""The deterministic digest of compacted turns: what was asked, done, answered and left open,
built from the log alone (no model call) and bounded by a token budget.

Each turn reads as a few lines: the person's message, each tool call with its status and how to
get its result back (``recall(call_id=...)``), and the agent's answer; an earlier summary's lines
carry on. Texts are clipped to one shared length, the longest that keeps the whole digest inside
the budget; when even the shortest does not fit, lines from the middle are left out (the oldest
and the newest stay).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from protoagent.context.tokens import TokenCounter
from protoagent.events.messages import SUMMARY_MARK
from protoagent.models.types import Message

RECOVERY_LINE = "Results above can be seen again with recall(call_id=...) or by re-reading the file."
HEAD_ROOM = 24
"""Characters of a digest line's own head (``- turn 12 asked: ``) beyond the clipped text."""
CLIPS = (1200, 800, 500, 320, 200, 120, 80, 48)
"""Clip lengths tried, longest first."""


@dataclass(frozen=True, slots=True)
class DigestTurn:
    """One turn to digest: its number (when known) and its messages in order."""

    number: int | None
    messages: tuple[Message, ...]


def clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 1)].rstrip() + "…"


def _arguments(arguments: dict[str, object], limit: int) -> str:
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return clip(text, limit)


def _turn_lines(turn: DigestTurn, limit: int) -> list[str]:
    head = f"turn {turn.number}" if turn.number is not None else "turn"
    lines: list[str] = []
    results = {m.tool_call_id: m for m in turn.messages if m.role == "tool"}
    for message in turn.messages:
        if message.role == "user" and message.content.startswith(SUMMARY_MARK):
            # An earlier summary's own lines carry on, each clipped like the rest.
            body = message.content.split("\n", 1)[1] if "\n" in message.content else ""
            kept = [line for line in body.splitlines() if line.strip() and not _closing(line)]
            # Room for the line's own "- turn N asked: " head, so a carried line keeps its text.
            lines.extend(line[: len(line) - len(line.lstrip())] + clip(line, limit + HEAD_ROOM) for line in kept)
        elif message.role == "user":
            lines.append(f"- {head} asked: {clip(message.content, limit)}")
        elif message.role == "assistant":
            if message.content.strip():
                lines.append(f"  answered: {clip(message.content, limit)}")
            for call in message.tool_calls:
                result = results.get(call.id)
                outcome = clip(result.content, max(limit // 4, 24)) if result is not None else "no result"
                lines.append(
                    f"  did {call.name}({_arguments(call.arguments, max(limit // 3, 24))}) → {outcome} "
                    f"[recall(call_id={json.dumps(call.id)})]"
                )
    return lines


def _closing(line: str) -> bool:
    return line == RECOVERY_LINE or line.startswith("Focus: ")


def digest_lines(turns: Sequence[DigestTurn], limit: int, focus: str = "") -> list[str]:
    lines = [f"Focus: {clip(focus, 200)}"] if focus else []
    for turn in turns:
        lines.extend(_turn_lines(turn, limit))
    return [*lines, RECOVERY_LINE]


def digest(turns: Sequence[DigestTurn], budget: int, counter: TokenCounter, focus: str = "") -> str:
    """The longest-clipped digest of ``turns`` that fits ``budget`` tokens; at the shortest clip,
    lines from the middle are left out (the oldest and the newest stay)."""
    for limit in CLIPS:
        text = "\n".join(digest_lines(turns, limit, focus))
        if counter.count(text) <= budget:
            return text
    lines = digest_lines(turns, CLIPS[-1], focus)
    head, tail = lines[: len(lines) // 2], lines[len(lines) // 2 :]
    omitted = 0
    while head or tail:
        (head if len(head) >= len(tail) else tail).pop(-1 if len(head) >= len(tail) else 0)
        omitted += 1
        text = "\n".join([*head, f"({omitted} lines left out here; the session log keeps them)", *tail])
        if counter.count(text) <= budget:
            return text
    return ""


__all__ = ["DigestTurn", "clip", "digest", "digest_lines"]
