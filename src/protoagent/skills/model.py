"""What a discovered skill is: one bundle variant, its metadata, and diagnostics about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from protoagent.json_form import json_form

AppMode = Literal["work", "coding"]
MODES: tuple[AppMode, ...] = ("work", "coding")
SourceKind = Literal["project", "user", "admin", "bundled"]
Severity = Literal["error", "warning"]

CONTROL_PLANE_DIRS = frozenset({"agents", "evals"})
"""Bundle folders that hold control-plane metadata and evaluation fixtures, never task resources."""
SIDECAR_FILE = ".protoagent.json"
"""Hidden file beside SKILL.md holding the portable bundle default (``{"modes": [...]}``)."""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found during discovery or validation, with the file it concerns."""

    path: str
    problem: str
    severity: Severity = "warning"

    def to_json(self) -> dict[str, str]:
        return json_form(self)


@dataclass(frozen=True, slots=True)
class SkillPolicy:
    """Bundle-declared behaviour from ``agents/protoagent.yaml`` (fallback ``agents/openai.yaml``)."""

    allow_implicit_invocation: bool = True
    """``False`` makes the skill manual-only: never in the catalog or the resolver, still ``$name``."""
    tool_dependencies: tuple[str, ...] = ()
    """Built-in tools the skill needs; activation validates and activates them all or fails."""


@dataclass(frozen=True, slots=True)
class Preferences:
    """The effective runtime preferences of one variant (bundle defaults overlaid by the user)."""

    modes: frozenset[AppMode] = frozenset(MODES)
    implicit: bool = True
    """Whether the skill takes part in the catalog and the implicit resolver."""
    manual: bool = True
    """Whether ``$name`` / ``/skill:name`` may activate it."""


@dataclass(frozen=True, slots=True)
class SkillBundle:
    """One discovered variant of a skill: a folder with SKILL.md under one root."""

    name: str
    description: str
    directory: Path
    """The folder as discovered (may be a symlink)."""
    source: SourceKind
    root: Path
    """The skills root the folder was found in."""
    identity: str
    """Opaque id of this exact variant; keys its runtime preferences."""
    body: str
    revision: str
    """Content hash of SKILL.md; an activation records the revision it loaded."""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    """Every frontmatter key as parsed, unknown keys included."""
    allowed_tools: tuple[str, ...] = ()
    interface: dict[str, Any] = field(default_factory=dict)
    policy: SkillPolicy = field(default_factory=SkillPolicy)
    defaults: Preferences = field(default_factory=Preferences)
    """Bundle defaults (from the sidecar; bundled skills say which mode they serve)."""
    preferences: Preferences = field(default_factory=Preferences)
    """Effective preferences after the user's overlay."""
    diagnostics: tuple[Diagnostic, ...] = ()
    editable: bool = True
    """False for bundled, administrator and symlinked bundles: readable, never changed through settings."""

    @property
    def valid(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def skill_file(self) -> Path:
        return self.directory / "SKILL.md"

    def available_in(self, mode: AppMode) -> bool:
        return mode in self.preferences.modes

    @property
    def implicit(self) -> bool:
        """Eligible for the catalog and the resolver: policy and preference both allow it."""
        return self.policy.allow_implicit_invocation and self.preferences.implicit
