"""Skill hooks: the Tier-1 catalog and pre-model activation pairs before the model call
(``skills``), and exact activation pairs kept through compaction afterwards (``durable-skills``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from protoagent.events.catalog import SkillActivated, ToolEnded
from protoagent.events.log import SessionLog
from protoagent.events.types import Event
from protoagent.hooks.order import HookOwner
from protoagent.hooks.pipeline import HookPipeline, HookRegistration
from protoagent.models.protocol import ModelProvider
from protoagent.models.types import Message, ModelRequest, ToolCall
from protoagent.skills.activation import SKILL_TOOL, Activation
from protoagent.skills.runtime import SkillRuntime
from protoagent.skills.session_skills import activate_for_request
from protoagent.tools.base import AnyTool

SKILLS_OWNER: HookOwner = "skills"
DURABLE_OWNER: HookOwner = "durable-skills"
"""After admission: evicted activation pairs come back within the durable-skill budget."""


@dataclass(frozen=True, slots=True)
class ActivationPair:
    """One activation as the model sees it: an assistant ``skill`` call and its exact result."""

    call_id: str
    activation: Activation
    after_text: str | None
    """The user message it follows (pre-model activations); ``None`` for the model's own calls."""

    def messages(self) -> tuple[Message, Message]:
        call = ToolCall(self.call_id, SKILL_TOOL, {"name": self.activation.name})
        return (
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", self.activation.render(), tool_call_id=self.call_id, name=SKILL_TOOL),
        )

    @property
    def size(self) -> int:
        return sum(len(m.content.encode("utf-8")) for m in self.messages())


def activation_pairs(events: Sequence[Event], agent: str) -> list[ActivationPair]:
    """Every activation of ``agent`` in log order: recorded pre-model ones and ``skill`` tool results."""
    pairs = []
    for event in events:
        if event.agent != agent:
            continue
        if (activated := event.fact(SkillActivated)) is not None:
            activation = Activation.from_json(activated.activation)
            pairs.append(ActivationPair(activated.call_id, activation, activated.request))
        elif (ended := event.fact(ToolEnded)) is not None and ended.tool == SKILL_TOOL:
            if isinstance(ended.data.get("activation"), dict):
                activation = Activation.from_json(ended.data["activation"])
                pairs.append(ActivationPair(ended.call_id, activation, None))
    return pairs


def _insert_after_user(messages: list[Message], text: str | None, block: Sequence[Message]) -> None:
    """Place ``block`` after the latest user message with ``text`` (else after the first one)."""
    index = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if messages[i].role == "user" and text is not None and messages[i].content == text
        ),
        None,
    )
    if index is None:
        index = next((i for i, m in enumerate(messages) if m.role == "user"), -1)
    messages[index + 1 : index + 1] = list(block)


class SkillCatalogHook:
    """Adds the bounded catalog to the system text of ``agents`` and every agent's own pre-model
    activation pairs (a member's assigned skills too) to its history."""

    def __init__(self, runtime: SkillRuntime, agents: frozenset[str]) -> None:
        self.runtime = runtime
        self.agents = agents

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        messages = list(request.messages)
        for pair in activation_pairs(events, request.agent_role):
            if pair.after_text is not None:
                _insert_after_user(messages, pair.after_text, pair.messages())
        if request.agent_role not in self.agents:
            return replace(request, messages=tuple(messages)) if len(messages) != len(request.messages) else request
        latest = next((m.content for m in reversed(messages) if m.role == "user"), "")
        catalog = self.runtime.catalog(latest).render()
        system = f"{request.system}\n\n{catalog}" if catalog else request.system
        return replace(request, system=system, messages=tuple(messages))

    def registration(self) -> HookRegistration:
        return HookRegistration(SKILLS_OWNER, self)


class DurableSkillsHook:
    """Brings back exact activation pairs that admission evicted, newest first, within the
    durable-skill budget; older ones lose their loaded marker so they can be loaded again. Every
    agent's own pairs are kept (the lead's and a member's preloaded skills alike); ``agents`` names
    the lead the hooks were mounted for."""

    def __init__(self, runtime: SkillRuntime, agents: frozenset[str]) -> None:
        self.runtime = runtime
        self.agents = agents

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        pairs = activation_pairs(events, request.agent_role)
        if not pairs:
            return request
        present = {m.tool_call_id for m in request.messages if m.role == "tool"}
        budget = self.runtime.durable_bytes - sum(p.size for p in pairs if p.call_id in present)
        restored: list[ActivationPair] = []
        dropped: list[str] = []
        for pair in reversed([p for p in pairs if p.call_id not in present]):
            if pair.size <= budget:
                restored.insert(0, pair)
                budget -= pair.size
            else:
                dropped.append(pair.activation.name)
        kept = {p.activation.name for p in pairs if p.call_id in present} | {p.activation.name for p in restored}
        self.runtime.forget([name for name in dropped if name not in kept], request.agent_role)
        if not restored:
            return request
        messages = list(request.messages)
        block = [m for pair in restored for m in pair.messages()]
        _insert_after_user(messages, None, block)
        return replace(request, messages=tuple(messages))

    def registration(self) -> HookRegistration:
        return HookRegistration(DURABLE_OWNER, self)


def rehydrate(runtime: SkillRuntime, events: Sequence[Event], agent: str) -> None:
    """Durable activations restore the same runtime contract: loaded markers and activated tools."""
    for pair in activation_pairs(events, agent):
        runtime.mark_loaded(pair.activation, agent)


async def start_skills(
    hooks: HookPipeline,
    log: SessionLog,
    runtime: SkillRuntime,
    objective: str,
    *,
    agent: str,
    tools: Sequence[AnyTool],
    role_tools: Collection[str],
    resolver: ModelProvider | None,
    assigned: Sequence[str] = (),
) -> None:
    """Mount both skill hooks for ``agent``, rehydrate earlier activations, then activate what the
    request names, what the agent is assigned, or what the implicit resolver selects. ``tools`` are
    the session's (their metadata bounds what a skill may activate) and ``role_tools`` the lead's."""
    runtime.tools = {t.name: t.metadata for t in tools}
    runtime.enrol(agent, role_tools)
    agents = frozenset({agent})
    hooks.register(SkillCatalogHook(runtime, agents).registration())
    hooks.register(DurableSkillsHook(runtime, agents).registration())
    rehydrate(runtime, log.events, agent)
    await activate_for_request(log, runtime, objective, agent, resolver, assigned)
