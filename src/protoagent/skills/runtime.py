"""``SkillRuntime``: one session's view of skills — the index, the mode, and what each agent loaded.

Loaded markers and activated tool dependencies belong to the agent that loaded the skill: a skill
the lead activates never changes what a member is offered. A dependency joins that agent's offer
only if its role may hold the tool (``skills.grants``); otherwise nothing activates.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.skills.activation import Activation, Trigger, activate
from protoagent.skills.catalog import Catalog, build_catalog
from protoagent.skills.grants import dependency_refusals
from protoagent.skills.index import SkillIndex
from protoagent.skills.model import AppMode, SkillBundle
from protoagent.tools.base import ToolMetadata

DURABLE_SHARE = 0.08
"""Exact activation pairs kept through compaction may take 8 % of a known window."""
DURABLE_BYTES_UNKNOWN = 24_000
"""The key under which tools find the session's ``SkillRuntime``."""


def durable_budget(context_window: int | None) -> int:
    """UTF-8 bytes of activation pairs that survive compaction exactly."""
    if context_window is None or context_window <= 0:
        return DURABLE_BYTES_UNKNOWN
    return int(context_window * DURABLE_SHARE * 3.5)


@dataclass(slots=True)
class SkillRuntime:
    """Mutable per-session skill state; the session log stays the record of every activation."""

    index: SkillIndex
    mode: AppMode
    repos: tuple[Path, ...] = ()
    context_window: int | None = None
    tools: Mapping[str, ToolMetadata] | None = None
    """Every tool of the session with its metadata; ``None`` before a session binds it (then
    dependencies are not checked, as in a catalog preview)."""
    roles: dict[str, frozenset[str]] = field(default_factory=dict)
    """Agent → the tools its role offers (set when the agent starts: the lead, each member)."""
    loaded: dict[str, dict[str, str]] = field(default_factory=dict)
    """Ephemeral loaded markers: agent → skill name → identity of the activation in its context."""
    active_tools: dict[str, set[str]] = field(default_factory=dict)
    """Agent → tool dependencies its loaded skills activated (only that agent is offered them)."""

    def catalog(self, request: str) -> Catalog:
        return build_catalog(self.index.implicit(self.mode), request, self.context_window, self.repos)

    def enrol(self, agent: str, role_tools: Collection[str]) -> None:
        """Record the tools ``agent``'s role offers, the ceiling of what its skills may activate."""
        self.roles[agent] = frozenset(role_tools)

    def activate(self, bundle: SkillBundle, trigger: Trigger, agent: str) -> Activation:
        """The exact activation for ``agent``, or ``ToolRejected`` naming each dependency its
        role may not have (nothing is activated then)."""
        activation = activate(bundle, trigger, None if self.tools is None else self.tools.keys())
        if self.tools is None or not activation.tools:
            return activation
        refused = dependency_refusals(activation.tools, agent, self.roles.get(agent, frozenset()), self.tools)
        if refused:
            raise ToolRejected(
                f"skill {bundle.name!r} was not activated for {agent}: {'; '.join(r for _, r in refused)}. "
                "Continue without the skill or pick another one",
                kind="skill_dependency_refused",
                details={"refused": [t for t, _ in refused], "agent": agent},
            )
        return activation

    def loaded_for(self, agent: str) -> dict[str, str]:
        return self.loaded.get(agent, {})

    def mark_loaded(self, activation: Activation, agent: str) -> None:
        """Mark the skill loaded for ``agent`` and give it the dependencies its role may hold (a
        rehydrated activation is held to the same bound as a new one)."""
        self.loaded.setdefault(agent, {})[activation.name] = activation.identity
        tools = activation.tools
        if self.tools is not None:
            refused = {t for t, _ in dependency_refusals(tools, agent, self.roles.get(agent, frozenset()), self.tools)}
            tools = tuple(t for t in tools if t not in refused)
        self.active_tools.setdefault(agent, set()).update(tools)

    def forget(self, names: Sequence[str], agent: str) -> None:
        """Clear ``agent``'s loaded markers of activations that fell outside the durable budget."""
        markers = self.loaded.get(agent, {})
        for name in names:
            markers.pop(name, None)

    @property
    def durable_bytes(self) -> int:
        return durable_budget(self.context_window)
