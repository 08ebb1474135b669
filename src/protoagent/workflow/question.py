"""The question surface's turn: a read-only investigation that answers, or says why it did not.

A window of steps that ends without an answer is not the end of a chain that keeps finding new
evidence: another window follows, within the run's shared model-call budget (no fixed quota
blocks it). A window that found nothing new, the repeated-call detector, or a spent budget end
the turn unanswered, and the run reports that instead of success.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from protoagent.agents.loop import AgentLoop, Budget, TurnOutcome
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession
from protoagent.events.catalog import ToolEnded
from protoagent.events.queries import facts
from protoagent.events.types import Event


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    outcome: TurnOutcome
    unanswered: str = ""
    """Why the turn ended without an answer; empty when it answered."""


async def answer_question(
    session: AgentSession, role: Preset, budget: Budget, objective: str, agent: str
) -> QuestionOutcome:
    """Run the question turn in windows of ``role.max_steps`` while each window finds new evidence."""
    log = session.log
    loop = AgentLoop(session, agent=agent, role=role, budget=budget)
    loop.start_turn(objective)
    seen: set[str] = set()
    window = 1
    while True:
        start = len(log)
        outcome = await loop.run_steps(role.max_steps)
        fresh = new_evidence(log.events, agent, start, seen)
        if outcome.status != "limit":
            break
        if not _window_used_up(outcome, role.max_steps):
            loop.end_turn(outcome)
            return QuestionOutcome(outcome, f"no answer: {outcome.text}")
        if not fresh:
            loop.end_turn(outcome)
            why = f"no answer after {window} window(s) of {role.max_steps} steps; the last one found no new evidence"
            return QuestionOutcome(outcome, why)
        if budget.used >= budget.max_model_calls:
            loop.end_turn(outcome)
            return QuestionOutcome(outcome, f"no answer before the run's {budget.max_model_calls} model calls ran out")
        window += 1
        log.append("workflow.continuing", {"surface": "question", "window": window, "new_evidence": fresh}, agent=agent)
    loop.end_turn(outcome)
    return QuestionOutcome(outcome)


def _window_used_up(outcome: TurnOutcome, steps: int) -> bool:
    """The window ran all its steps (rather than stopping on the repeated-call detector)."""
    return outcome.text == f"used all {steps} steps of this window without a final answer"


def new_evidence(events: Sequence[Event], agent: str, after_seq: int, seen: set[str]) -> int:
    """How many of ``agent``'s successful tool results after ``after_seq`` show something not seen
    before in this turn (the same output again is no new evidence); ``seen`` takes them in."""
    fresh = 0
    for _, ended in facts(events, ToolEnded, agent=agent, after=after_seq):
        if ended.status != "ok":
            continue
        key = hashlib.sha256(f"{ended.tool}\0{ended.output}".encode()).hexdigest()
        if key not in seen:
            seen.add(key)
            fresh += 1
    return fresh
