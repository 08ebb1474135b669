"""``SkillRuntime``: one session's view of skills — the index, the mode, and what is loaded."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from protoagent.skills.activation import Activation
from protoagent.skills.catalog import Catalog, build_catalog
from protoagent.skills.index import SkillIndex
from protoagent.skills.model import AppMode

DURABLE_SHARE = 0.08
"""Exact activation pairs kept through compaction may take 8 % of a known window."""
DURABLE_BYTES_UNKNOWN = 24_000
SKILLS_SERVICE = "skills"
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
    available_tools: Collection[str] | None = None
    """Tool names the session has; dependencies outside it make activation fail."""
    loaded: dict[str, str] = field(default_factory=dict)
    """Ephemeral loaded markers: skill name → identity of the activation in context."""
    active_tools: set[str] = field(default_factory=set)
    """Tool dependencies activated by loaded skills."""

    def catalog(self, request: str) -> Catalog:
        return build_catalog(self.index.implicit(self.mode), request, self.context_window, self.repos)

    def mark_loaded(self, activation: Activation) -> None:
        self.loaded[activation.name] = activation.identity
        self.active_tools.update(activation.tools)

    def forget(self, names: Sequence[str]) -> None:
        """Clear loaded markers of activations that fell outside the durable budget."""
        for name in names:
            self.loaded.pop(name, None)

    @property
    def durable_bytes(self) -> int:
        return durable_budget(self.context_window)
