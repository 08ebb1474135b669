"""The agent loop: a turn is a sequence of steps; each step is one model call and its tools."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Literal

from protoagent.agents.session import AgentSession
from protoagent.errors import ProviderError
from protoagent.events.messages import derive_messages
from protoagent.models.types import ModelRequest, ModelTurn, TextDelta

MAX_RETRIES = 3
BASE_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0


@dataclass(frozen=True, slots=True)
class Continue:
    """The step ran tools; the model should see their results."""


@dataclass(frozen=True, slots=True)
class Finished:
    """The model answered without tool calls."""

    text: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The turn cannot go on (provider failure, exhausted script ...)."""

    reason: str


Step = Continue | Finished | Failed


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """How a turn ended."""

    status: Literal["completed", "failed", "limit"]
    text: str
    steps: int


class AgentLoop:
    """Drives one ``AgentSession``. Every model input is read back from the log."""

    def __init__(self, session: AgentSession, *, agent: str = "main", backoff_s: float = BASE_BACKOFF_S) -> None:
        self.session = session
        self.agent = agent
        self.backoff_s = backoff_s
        self.turn = 0

    async def run_turn(self, user_text: str) -> TurnOutcome:
        log = self.session.log
        self.turn = sum(1 for e in log.events if e.type == "turn.started" and e.agent == self.agent) + 1
        log.append("turn.started", {}, turn=self.turn, agent=self.agent)
        log.append("user.message", {"text": user_text}, turn=self.turn, agent=self.agent)
        outcome = await self._steps()
        log.append(
            "turn.ended",
            {"status": outcome.status, "reason": outcome.text if outcome.status != "completed" else ""},
            turn=self.turn,
            agent=self.agent,
        )
        return outcome

    async def _steps(self) -> TurnOutcome:
        limit = self.session.preset.max_steps
        for step in range(1, limit + 1):
            match await self.step(step):
                case Continue():
                    continue
                case Finished(text=text):
                    return TurnOutcome("completed", text, step)
                case Failed(reason=reason):
                    return TurnOutcome("failed", reason, step)
        return TurnOutcome("limit", f"the turn used all {limit} steps without a final answer", limit)

    async def step(self, step: int) -> Step:
        request = self.build_request()
        try:
            turn = await self._call_model(request, step)
        except ProviderError as exc:
            self.session.log.append(
                "model.failed",
                {"error": str(exc), "provider": exc.provider, "status": exc.status, "transient": exc.transient},
                turn=self.turn,
                step=step,
                agent=self.agent,
            )
            return Failed(str(exc))
        if not turn.tool_calls:
            return Finished(turn.text)
        for call in turn.tool_calls:
            await self.session.pipeline.run(call, agent=self.agent, turn=self.turn, step=step)
        return Continue()

    def build_request(self) -> ModelRequest:
        session = self.session
        preset = session.preset
        request = ModelRequest(
            system=preset.system_prompt,
            messages=tuple(derive_messages(session.log.events, self.agent)),
            tools=session.registry.schemas(),
            action_mode=preset.action_mode,
            agent_role=self.agent,
            max_output_tokens=session.spec.model_config.max_output_tokens,
        )
        return session.hooks.before_model(request, session.log.events)

    async def _call_model(self, request: ModelRequest, step: int) -> ModelTurn:
        provider = self.session.provider
        log = self.session.log
        for attempt in range(1, MAX_RETRIES + 2):
            log.append(
                "model.requested",
                {
                    "provider": provider.name,
                    "model": provider.model,
                    "attempt": attempt,
                    "message_count": len(request.messages),
                    "tool_names": [t.name for t in request.tools],
                },
                turn=self.turn,
                step=step,
                agent=self.agent,
            )
            try:
                return await self._stream_once(request, step)
            except ProviderError as exc:
                if not exc.transient or attempt > MAX_RETRIES:
                    raise
                delay = self._delay(attempt, exc.retry_after)
                log.append(
                    "model.retrying",
                    {"attempt": attempt, "delay_s": delay, "error": str(exc), "status": exc.status},
                    turn=self.turn,
                    step=step,
                    agent=self.agent,
                )
                await asyncio.sleep(delay)
        raise AssertionError("unreachable: the retry loop returns or raises")

    async def _stream_once(self, request: ModelRequest, step: int) -> ModelTurn:
        log = self.session.log
        final: ModelTurn | None = None
        async for item in self.session.provider.stream(request):
            if isinstance(item, TextDelta):
                log.append("model.delta", {"text": item.text}, turn=self.turn, step=step, agent=self.agent)
            else:
                final = item
        if final is None:
            raise ProviderError(
                "the provider ended its stream without a final turn", provider=self.session.provider.name
            )
        log.append(
            "model.completed",
            {
                "text": final.text,
                "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in final.tool_calls],
                "usage": {
                    "input_tokens": final.usage.input_tokens,
                    "output_tokens": final.usage.output_tokens,
                    "cached_input_tokens": final.usage.cached_input_tokens,
                },
                "stop_reason": final.stop_reason,
            },
            turn=self.turn,
            step=step,
            agent=self.agent,
        )
        return final

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), MAX_BACKOFF_S)
        base = self.backoff_s * (2 ** (attempt - 1))
        return float(min(base * (0.5 + random.random()), MAX_BACKOFF_S))
