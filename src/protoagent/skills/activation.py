"""Tiers 2 and 3: an exact selection loads the body and lists task-resource paths, never contents.

Control-plane metadata (``agents/``) and evaluation fixtures (``evals/``) are never listed or
readable as task resources. A skill body that tells the model to read its ``agents/`` files gets
a correctable refusal from the ``skill`` tool naming the rule; the metadata it would find there
(interface, policy, tool dependencies) is already applied by the runtime.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from protoagent.errors import ToolRejected
from protoagent.json_form import json_form
from protoagent.skills.index import SkillIndex
from protoagent.skills.model import CONTROL_PLANE_DIRS, SIDECAR_FILE, AppMode, SkillBundle

Trigger = Literal["resolver", "model", "mention", "agent"]
MAX_RESOURCES = 200
SKILL_TOOL = "skill"
_MENTION = re.compile(r"(?:(?<![\w$])\$([a-z0-9][a-z0-9-]{0,63})|(?<!\S)/skill:([A-Za-z0-9][A-Za-z0-9_-]{0,63}))")


@dataclass(frozen=True, slots=True)
class Activation:
    """The canonical activation: what the assistant/tool pair carries and the log records."""

    name: str
    identity: str
    directory: str
    revision: str
    instructions: str
    resources: tuple[str, ...]
    tools: tuple[str, ...]
    """Built-in tool dependencies activated with the skill."""
    trigger: Trigger

    def to_json(self) -> dict[str, Any]:
        return json_form(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Activation:
        return cls(
            str(data["name"]),
            str(data["identity"]),
            str(data["directory"]),
            str(data["revision"]),
            str(data["instructions"]),
            tuple(data.get("resources", ())),
            tuple(data.get("tools", ())),
            data.get("trigger", "model"),
        )

    def render(self) -> str:
        """The model-visible tool result: exact instructions, then resource paths only."""
        lines = [
            f'<skill name="{self.name}" directory="{self.directory}" revision="{self.revision}">',
            self.instructions.strip(),
            "</skill>",
        ]
        if self.resources:
            lines.append(
                "Task resources (paths only; read one with the skill tool's `resource` argument only "
                "when the instructions' condition for it is observed):"
            )
            lines.extend(f"- {r}" for r in self.resources)
        if self.tools:
            lines.append(f"Tools activated for this skill: {', '.join(self.tools)}")
        return "\n".join(lines)


def is_control_plane(relative: str) -> bool:
    parts = PurePosixPath(relative).parts
    return bool(parts) and parts[0] in CONTROL_PLANE_DIRS


def task_resources(bundle: SkillBundle) -> tuple[str, ...]:
    """Bundle files a task may use, as relative paths; SKILL.md, hidden files and the
    control-plane folders are left out."""
    found: list[str] = []
    base = str(bundle.directory)
    for current, dirs, files in os.walk(base, followlinks=False):
        rel_dir = os.path.relpath(current, base)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (rel_dir == "." and d in CONTROL_PLANE_DIRS))
        for file in sorted(files):
            relative = file if rel_dir == "." else f"{rel_dir}/{file}".replace(os.sep, "/")
            if file.startswith(".") or relative in ("SKILL.md", SIDECAR_FILE):
                continue
            found.append(relative)
            if len(found) >= MAX_RESOURCES:
                return tuple(found)
    return tuple(found)


def activate(bundle: SkillBundle, trigger: Trigger, available_tools: Collection[str] | None = None) -> Activation:
    """Load the exact body. Every declared tool dependency must exist, or nothing activates."""
    missing = [t for t in bundle.policy.tool_dependencies if available_tools is not None and t not in available_tools]
    if missing:
        raise ToolRejected(
            f"skill {bundle.name!r} needs tool(s) {', '.join(map(repr, missing))} that this session does not "
            "have; nothing was activated. Continue without the skill or pick another one",
            kind="skill_dependency_missing",
            details={"missing": missing},
        )
    return Activation(
        bundle.name,
        bundle.identity,
        str(bundle.directory),
        bundle.revision,
        bundle.body,
        task_resources(bundle),
        bundle.policy.tool_dependencies,
        trigger,
    )


def mentioned_skills(text: str) -> list[str]:
    """Names the request gives as ``$skill-name`` or ``/skill:<name>``, in order, once each."""
    names = [(m.group(1) or m.group(2)).lower().replace("_", "-") for m in _MENTION.finditer(text)]
    return list(dict.fromkeys(names))


def explicit_bundles(text: str, index: SkillIndex, mode: AppMode) -> list[SkillBundle]:
    """The skills a request names exactly, to activate. Manual-only skills count; a skill whose
    manual invocation is off (see ``refused_mentions``), or that is unknown in this mode, is
    skipped (``$5`` stays prose)."""
    out = []
    for name in mentioned_skills(text):
        bundle = index.find(name, mode)
        if bundle is not None and bundle.preferences.manual:
            out.append(bundle)
    return out


def manual_off_message(name: str) -> str:
    """The one-line refusal for naming a skill whose manual invocation the user turned off."""
    return f"skill {name!r} has manual invocation turned off; turn it on with: protoagent skills set {name} --manual on"


def refused_mentions(text: str, index: SkillIndex, mode: AppMode) -> list[tuple[str, str]]:
    """``(name, message)`` for each skill the request names whose manual invocation is off."""
    refused = []
    for name in mentioned_skills(text):
        bundle = index.find(name, mode)
        if bundle is not None and not bundle.preferences.manual:
            refused.append((name, manual_off_message(name)))
    return refused


def assigned_bundles(names: Sequence[str], index: SkillIndex, mode: AppMode) -> tuple[list[SkillBundle], list[str]]:
    """The unconditional preload of an agent's assigned skills, and the names that are unknown."""
    found, unknown = [], []
    for name in dict.fromkeys(names):
        bundle = index.find(name, mode)
        if bundle is None:
            unknown.append(name)
        else:
            found.append(bundle)
    return found, unknown
