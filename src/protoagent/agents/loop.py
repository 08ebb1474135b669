"""The agent loop: a turn is a sequence of steps; each step is one model call and its tools."""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Literal

from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession
from protoagent.context.admission import ContextOverflow
from protoagent.errors import ConfigError, ControlSignal, LimitExceeded, ProviderError, YieldControl
from protoagent.events.catalog import ContextCompacted, TurnStarted
from protoagent.events.messages import MessageDeriver
from protoagent.events.queries import facts
from protoagent.models.types import ModelRequest, ModelTurn, TextDelta, ToolCall
from protoagent.tools.pipeline import ToolResult

MAX_RETRIES = 3
MAX_REPEATED_STEPS = 3
MAX_COMPACTIONS = 3
"""Summaries one request may trigger before an overflow that remains is reported."""
INVALID_ACTION_FEEDBACK = (
    "Your last reply was cut off or was not one JSON action. Reply with exactly one short action: "
    '{"type":"tool_call","tool":NAME,"args":{...}} or {"type":"final","text":"..."}.'
)
BASE_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
DEFAULT_MODEL_CALLS = 80
"""Model calls one run may make, shared by all its agents, unless the caller sets a budget."""


@dataclass(frozen=True, slots=True)
class Continue:
    """The step ran tools; the model should see their results."""


@dataclass(frozen=True, slots=True)
class Finished:
    """The model answered without tool calls."""

    text: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The turn cannot go on (provider failure, exhausted script, context that cannot fit)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Yielded:
    """A before-model hook handed control back to the application with a typed signal."""

    signal: ControlSignal


@dataclass(frozen=True, slots=True)
class Stuck:
    """The model keeps repeating a call that was rejected; the turn ends with a limit."""

    reason: str


Step = Continue | Finished | Failed | Yielded | Stuck


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """How a turn (or one window of it) ended."""

    status: Literal["completed", "failed", "limit", "yielded"]
    text: str
    steps: int
    signal: ControlSignal | None = None
    """Why a ``yielded`` turn handed control back (its ``reason`` is ``text``); ``None`` otherwise."""


@dataclass(slots=True)
class Budget:
    """Model calls shared by every agent of one run."""

    max_model_calls: int = DEFAULT_MODEL_CALLS
    used: int = field(default=0)
    deadline: float | None = None
    """``time.monotonic()`` after which no model call starts (``None``: no time limit)."""
    seconds: float = 0.0
    """The run's time limit the deadline was set from (named when it runs out)."""

    def __post_init__(self) -> None:
        if self.max_model_calls < 1:
            raise ConfigError(f"max_model_calls {self.max_model_calls!r} must be at least 1 model call")

    def start_clock(self, seconds: float | None, since: float | None = None) -> None:
        """No model call starts ``seconds`` after ``since`` (a ``time.monotonic()``; default
        now), or ever again once that has passed (``None``: no time limit)."""
        self.seconds = seconds or 0.0
        start = time.monotonic() if since is None else since
        self.deadline = None if seconds is None else start + seconds

    def charge(self) -> None:
        if self.used >= self.max_model_calls:
            raise LimitExceeded(f"the run used all {self.max_model_calls} model calls", limit="model_calls")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise LimitExceeded(f"the run spent its {self.seconds:g} s; no model call starts after it", limit="seconds")
        self.used += 1


class AgentLoop:
    """Drives one agent (a role) of an ``AgentSession``. Every model input is read back from the log."""

    def __init__(
        self,
        session: AgentSession,
        *,
        agent: str = "main",
        role: Preset | None = None,
        budget: Budget | None = None,
        backoff_s: float = BASE_BACKOFF_S,
        history_from: int = 0,
    ) -> None:
        self.session = session
        self.provider = session.provider_for(agent)
        """This agent's model: its own ``model`` when its definition names one, else the session's."""
        self.history_from = history_from
        """Log position this agent's conversation starts at: a worker's assignment starts fresh."""
        self.agent = agent
        self.role = role or session.preset
        self.budget = budget or Budget()
        self.backoff_s = backoff_s
        self.turn = 0
        self.steps_taken = 0
        self._repeats = 0
        self._last_step: tuple[str, ...] = ()
        self._history = MessageDeriver(agent)
        """This agent's messages, derived incrementally from the log (equal to ``derive_messages``)."""

    async def run_turn(self, user_text: str, max_steps: int | None = None, context: str | None = None) -> TurnOutcome:
        self.start_turn(user_text, context=context)
        outcome = await self.run_steps(max_steps or self.role.max_steps)
        self.end_turn(outcome)
        return outcome

    def start_turn(self, user_text: str, *, kind: str = "user.message", context: str | None = None) -> None:
        """Open a turn with the person's message (or injected workflow context), optionally
        followed by application context the model should see, e.g. a baseline result."""
        log = self.session.log
        self.turn = sum(1 for _ in facts(log.events, TurnStarted, agent=self.agent)) + 1
        self.steps_taken = 0
        log.append("turn.started", {}, turn=self.turn, agent=self.agent)
        payload = {"text": user_text} if kind == "user.message" else {"text": user_text, "source": "workflow"}
        log.append(kind, payload, turn=self.turn, agent=self.agent)
        if context:
            log.append("context.injected", {"text": context, "source": "workflow"}, turn=self.turn, agent=self.agent)
        self._repeats = 0
        self._last_step = ()

    def end_turn(self, outcome: TurnOutcome) -> None:
        status = "completed" if outcome.status in ("completed", "yielded") else outcome.status
        reason = "" if outcome.status == "completed" else outcome.text
        self.session.log.append("turn.ended", {"status": status, "reason": reason}, turn=self.turn, agent=self.agent)

    async def run_steps(self, limit: int) -> TurnOutcome:
        """Run up to ``limit`` more steps of the current turn (a window)."""
        with self.session.log.held():  # one write per wait, not per event: see SessionLog.held
            for _ in range(limit):
                self.steps_taken += 1
                match await self.step(self.steps_taken):
                    case Continue():
                        continue
                    case Finished(text=text):
                        return TurnOutcome("completed", text, self.steps_taken)
                    case Failed(reason=reason):
                        return TurnOutcome("failed", reason, self.steps_taken)
                    case Yielded(signal=signal):
                        return TurnOutcome("yielded", signal.reason, self.steps_taken, signal)
                    case Stuck(reason=reason):
                        return TurnOutcome("limit", reason, self.steps_taken)
        return TurnOutcome("limit", f"used all {limit} steps of this window without a final answer", self.steps_taken)

    async def step(self, step: int) -> Step:
        try:
            request = await self._admitted_request()
            self.budget.charge()
            turn = await self._call_model(request, step)
        except YieldControl as yielded:
            return Yielded(yielded.signal)
        except (ProviderError, LimitExceeded) as exc:
            self._record_failure(exc, step)
            return Failed(str(exc))
        if turn.stop_reason == "invalid_action":
            return self._invalid_action(step)
        if not turn.tool_calls:
            return Finished(turn.text)
        results: list[ToolResult] = []
        for call in turn.tool_calls:
            if results and results[-1].status == "denied":
                # Calls of one turn run in order; a denial stops the rest of the batch unrun.
                results.append(self._skip(call, results[-1], step))
                continue
            result = await self.session.pipeline.run(
                call,
                agent=self.agent,
                allowed=self.session.offered_tools(self.role.tools, self.agent),
                turn=self.turn,
                step=step,
                profile=self.role.profile,
            )
            results.append(result)
        return self._stuck(turn, results) or Continue()

    def _skip(self, call: ToolCall, denied: ToolResult, step: int) -> ToolResult:
        """Record a call left unrun because an earlier call of the same turn was denied."""
        text = f"not run: {denied.tool} ({denied.call_id}) earlier in this turn was denied, so the rest stopped."
        result = ToolResult(call.id, call.name, "rejected", text, {"kind": "batch_stopped"})
        ids = {"call_id": call.id, "tool": call.name}
        for kind, payload in (
            ("tool.started", {**ids, "arguments": call.arguments}),
            ("tool.ended", {**ids, "status": "rejected", "output": text, "data": result.data, "artifact": None}),
        ):
            self.session.log.append(kind, payload, turn=self.turn, step=step, agent=self.agent)
        return result

    def _invalid_action(self, step: int) -> Stuck | Continue:
        """A reply that is not one whole action gets explicit feedback; a model that keeps doing it
        is stuck."""
        self._repeats = self._repeats + 1 if self._last_step == ("invalid",) else 1
        self._last_step = ("invalid",)
        if self._repeats >= MAX_REPEATED_STEPS:
            return Stuck(f"the model sent {self._repeats} replies in a row that were not one whole action")
        self.session.log.append(
            "context.injected",
            {"text": INVALID_ACTION_FEEDBACK, "source": "action-format"},
            turn=self.turn,
            step=step,
            agent=self.agent,
        )
        return Continue()

    def _stuck(self, turn: ModelTurn, results: list[ToolResult]) -> Stuck | None:
        """A model that repeats the exact calls of its last step and gets the exact same results is
        not making progress; after ``MAX_REPEATED_STEPS`` identical steps the turn ends instead of
        burning the shared budget."""
        signature = tuple(
            json.dumps([c.name, c.arguments, r.status, r.output], sort_keys=True, default=str)
            for c, r in zip(turn.tool_calls, results, strict=True)
        )
        self._repeats = self._repeats + 1 if signature == self._last_step else 1
        self._last_step = signature
        if self._repeats >= MAX_REPEATED_STEPS:
            return Stuck(f"the model repeated the same call with the same result {self._repeats} times")
        return None

    async def _admitted_request(self) -> ModelRequest:
        """The next request; when its mandatory part cannot fit the window, the oldest turns are
        replaced by a summary (a ``context.compacted`` event) and it is built again."""
        compactor = self.session.services.compactor
        for _ in range(MAX_COMPACTIONS):
            try:
                return self.build_request()
            except ContextOverflow as overflow:
                if compactor is None:
                    raise
                budget = self.budget
                made = await compactor.compact(
                    self.session.log,
                    self.agent,
                    reduce_by=overflow.excess,
                    history_from=self.history_from,
                    model_allowed=budget.max_model_calls - budget.used >= 2,  # the summary, then this request
                )
                if made is None:
                    raise
                if ContextCompacted.model_validate(made.payload).model_call:
                    budget.charge()  # the summary was a model call of the run
        return self.build_request()

    def build_request(self) -> ModelRequest:
        session = self.session
        events = session.log.events
        request = ModelRequest(
            system=self.role.system_prompt,
            messages=tuple(self._history.derive(events[self.history_from :] if self.history_from else events)),
            tools=session.registry.schemas(session.offered_tools(self.role.tools, self.agent)),
            action_mode=self.role.action_mode,
            agent_role=self.agent,
            max_output_tokens=session.spec.model_config.max_output_tokens,
        )
        return session.hooks.before_model(request, events)

    def _record_failure(self, exc: ProviderError | LimitExceeded, step: int) -> None:
        payload: dict[str, object] = {"error": str(exc)}
        if isinstance(exc, ProviderError):
            payload.update(provider=exc.provider, status=exc.status, transient=exc.transient)
        else:
            payload.update(provider=self.provider.name, limit=exc.limit)
        self.session.log.append("model.failed", payload, turn=self.turn, step=step, agent=self.agent)

    async def _call_model(self, request: ModelRequest, step: int) -> ModelTurn:
        provider = self.provider
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
            log.flush()  # every event of the steps so far is on disk before the model is asked
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
                log.flush()
                await asyncio.sleep(delay)
        raise AssertionError("unreachable: the retry loop returns or raises")

    async def _stream_once(self, request: ModelRequest, step: int) -> ModelTurn:
        log = self.session.log
        final: ModelTurn | None = None
        async for item in self.provider.stream(request):
            if isinstance(item, TextDelta):
                log.append("model.delta", {"text": item.text}, turn=self.turn, step=step, agent=self.agent)
                log.flush()
            else:
                final = item
        if final is None:
            raise ProviderError("the provider ended its stream without a final turn", provider=self.provider.name)
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
